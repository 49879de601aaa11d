-- scaling.lua's report: faults per second against threads.
local plots = require "plots"
local units = require "units"

local report = {}

-- Scaling: faults per second against threads, beside the ideal line; every
-- median with its interval, the two mappings a little apart, the x range
-- half a thread wider than the threads run so no error bar falls on the
-- frame, and the key beside it.
function report.plots(list, doc, _, prefix)
  local by = { [true] = {}, [false] = {} } -- shared or not, then threads
  for _, c in ipairs(doc.reps) do
    local p = c.params or {}
    if p.threads then
      by[p.shared][p.threads] = { total = plots.row(doc, c.case, "total"),
        per = plots.row(doc, c.case, "per_thread") }
    end
  end
  local lines = { "# threads  ideal  total_shared lo hi  per_thread_shared lo hi  total_per_thread lo hi  "
    .. "per_thread_per_thread lo hi" }
  local one = by[true][1]
  local function cells(r) return ("%s %s %s"):format(units.exact(r.median), units.exact(r.lo), units.exact(r.hi)) end
  local most = 0
  for n = 1, 64 do
    local a, b = by[true][n], by[false][n]
    if a and b and one then
      lines[#lines + 1] = ("%d %s %s %s %s %s"):format(n, units.exact(one.total.median * n), cells(a.total),
        cells(a.per), cells(b.total), cells(b.per))
      most = n
    end
  end
  plots.add(list, prefix .. "plot", "first-touch faults per second against threads (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", ([[
set xlabel "threads"
set ylabel "faults per second (median and interval)"
set xtics 1
set xrange [0.5:%d + 0.5]
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set format y "%%.0f"
set key outside right top vertical
plot "%s.dat" using 1:2 with lines dt 2 lc rgb "#888888" title "ideal: 1 thread x n", \
  "" using ($1 - 0.03):3:4:5 with yerrorlines pt 7 lc rgb "#1f4e99" title "total, one shared mapping", \
  "" using ($1 - 0.03):6:7:8 with yerrorlines pt 6 lc rgb "#1f4e99" title "per thread, one shared mapping", \
  "" using ($1 + 0.03):9:10:11 with yerrorlines pt 5 lc rgb "#cc5500" title "total, a mapping per thread", \
  "" using ($1 + 0.03):12:13:14 with yerrorlines pt 4 lc rgb "#cc5500" \
    title "per thread, a mapping per thread"]]):format(
    most, prefix .. "plot"), 1000, 480)
end

return report
