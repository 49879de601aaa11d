-- populate.lua's report: where each method's faults go, its time split
-- into the call, the populate step and the first pass.
local plots = require "plots"
local units = require "units"

local report = {}

function report.plots(list, doc, _, prefix)
  local lines = { "# method  mapping_call  populate_step  first_pass  (ns per page, medians)" }
  for _, c in ipairs(doc.reps) do
    if not c.unsupported then
      local function m(col) local r = plots.row(doc, c.case, col); return r and units.exact(r.median) or "0" end
      lines[#lines + 1] = ("%s %s %s %s"):format(plots.quoted(c.case), m("map"), m("step"), m("pass"))
    end
  end
  plots.add(list, prefix .. "plot", "where the faults go: ns per page, medians (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", ([[
set style data histogram
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel "ns per page"
set xtics rotate by -20 noenhanced
set key top right
plot "%s.dat" using 2:xtic(1) title "mapping call", "" using 3 title "populate step", "" using 4 title "first pass"]])
    :format(prefix .. "plot"), 900, 500)
end

return report
