-- A script's presentation lives in one report module of its own,
-- lib/reports/<script>.lua, returning any of:
--   derive(h): figures derived from the rows (h:row, h:value), run once
--     the repetitions have, before the files are written;
--   table(raw) -> the markdown of a run, from its raw file alone;
--   plots(list, doc, dir, prefix): the plots of a run, from its JSON
--     (plots.add(list, ...) for each), reading its cases' params;
--   finding(doc, say, ...) and the like: the script's findings on a run, in
--     the published pages' words; say (round, interval, row, value, ...) is
--     given by the caller, so the reports need nothing of the publishing wing.
-- A script without one gets summary.table and plots.generic.
local reports = {}

local loaded = {}

-- The report module of a script ("<name>.lua" or "<name>"), or {} when it has none.
function reports.of(script)
  local name = tostring(script):gsub("%.lua$", "")
  if loaded[name] == nil then
    local found = name:match("^[%w_]+$") and package.searchpath("reports." .. name, package.path)
    loaded[name] = found and require("reports." .. name) or {}
  end
  return loaded[name]
end

return reports
