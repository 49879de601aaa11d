-- scaling.lua's report: faults per second against threads.
local plots = require "plots"
local units = require "units"

local report = {}

-- Scaling: faults per second against threads, beside the ideal line.
function report.plots(list, doc, _, prefix)
  local by = { [true] = {}, [false] = {} } -- shared or not, then threads
  for _, c in ipairs(doc.reps) do
    local p = c.params or {}
    if p.threads then
      by[p.shared][p.threads] = { total = plots.row(doc, c.case, "total"),
        per = plots.row(doc, c.case, "per_thread") }
    end
  end
  local lines = {
    "# threads  ideal  total_shared lo hi  per_thread_shared  total_per_thread lo hi  per_thread_per_thread" }
  local one = by[true][1]
  for n = 1, 64 do
    local a, b = by[true][n], by[false][n]
    if a and b and one then
      lines[#lines + 1] = ("%d %s %s %s %s %s %s %s %s %s"):format(n, units.exact(one.total.median * n),
        units.exact(a.total.median), units.exact(a.total.lo), units.exact(a.total.hi), units.exact(a.per.median),
        units.exact(b.total.median), units.exact(b.total.lo), units.exact(b.total.hi), units.exact(b.per.median))
    end
  end
  plots.add(list, prefix .. "plot", "first-touch faults per second against threads (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", ([[
set xlabel "threads"
set ylabel "faults per second"
set xtics 1
set yrange [0:*]
set key top left
plot "%s.dat" using 1:2 with lines dt 2 lc rgb "#888888" title "ideal: 1 thread x n", \
  "" using 1:3:4:5 with yerrorlines pt 7 lc rgb "#1f4e99" title "total, one shared mapping", \
  "" using 1:6 with linespoints pt 6 lc rgb "#1f4e99" title "per thread, one shared mapping", \
  "" using 1:7:8:9 with yerrorlines pt 5 lc rgb "#cc5500" title "total, a mapping per thread", \
  "" using 1:10 with linespoints pt 4 lc rgb "#cc5500" title "per thread, a mapping per thread"]]):format(
    prefix .. "plot"))
end

return report
