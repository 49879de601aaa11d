-- coldness.lua's report: the first touch against the wait before it.
local plots = require "plots"
local units = require "units"

local report = {}

-- Coldness: every repetition's first touch against the wait before it, with
-- room round the points (the longest wait fell on the frame) and the key
-- above the frame (inside, it hid the first mapping's point).
function report.plots(list, doc, _, prefix)
  local lines = { "# wait_s  pass1_ns_per_page  (one line per repetition; wait -1: the first mapping of the process)" }
  for _, c in ipairs(doc.reps) do
    local p = c.params or {}
    local wait = p.wait and ("%g"):format(p.wait) or (p.fresh and "-1")
    local row = plots.row(doc, c.case, "pass1")
    if wait and row then
      for _, v in ipairs(row.values) do lines[#lines + 1] = ("%s %s"):format(wait, units.exact(v)) end
    end
  end
  plots.add(list, prefix .. "plot", "first touch after a wait (" .. doc.run .. ")", table.concat(lines, "\n") .. "\n",
    ([[
set xlabel "seconds waited after the previous release (-1: the process's first mapping)"
set ylabel "pass 1, ns per page"
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set key above horizontal
plot "%s.dat" using 1:($1 >= 0 ? $2 : 1/0) with points pt 7 lc rgb "#1f4e99" title "a repetition", \
  "" using 1:($1 < 0 ? $2 : 1/0) with points pt 9 ps 1.5 lc rgb "#cc0000" title "first mapping of the process"]])
    :format(prefix .. "plot"))
end

return report
