-- faults.lua's report: will-it-scale's rate against tasks.
local plots = require "plots"
local units = require "units"

local report = {}

-- faults: will-it-scale's rate against tasks, a line per workload and mode,
-- beside each one's ideal (one task's rate times n); half a task of room
-- either side, so the end points' error bars are not drawn on the frame.
function report.plots(list, doc, _, prefix)
  local series, tasks = {}, {}
  for _, c in ipairs(doc.reps) do
    local p = c.params or {}
    local row = plots.row(doc, c.case, "total")
    if row and p.workload then
      local key = p.workload .. " " .. p.mode
      if not series[key] then series[key] = {}; tasks[#tasks + 1] = key end
      series[key][p.tasks] = row
    end
  end
  table.sort(tasks)
  local blocks, curves, most = {}, {}, 1
  for i, key in ipairs(tasks) do
    local lines, one = { "# " .. key .. ": tasks  ops_per_s lo hi  ideal" }, series[key][1]
    for n = 1, 64 do
      local r = series[key][n]
      if r then
        most = math.max(most, n)
        lines[#lines + 1] = ("%d %s %s %s %s"):format(n, units.exact(r.median), units.exact(r.lo), units.exact(r.hi),
          one and units.exact(one.median * n) or "NaN")
      end
    end
    blocks[#blocks + 1] = table.concat(lines, "\n")
    curves[#curves + 1] = ('"%s.dat" index %d using 1:2:3:4 with yerrorlines lc %d title %s'):format(prefix .. "plot",
      i - 1, i, plots.quoted(key))
    curves[#curves + 1] = ('"" index %d using 1:5 with lines dt 2 lc %d notitle'):format(i - 1, i)
  end
  plots.add(list, prefix .. "plot", "will-it-scale's rate against tasks; dashed: n x one task (" .. doc.run .. ")",
    table.concat(blocks, "\n\n\n") .. "\n", [[
set xlabel "tasks"
set ylabel "ops per second in total (pages; mmap1: map/unmap pairs)"
set xtics 1
set yrange [0:*]
set xrange [0.5:]] .. most .. [[ + 0.5]
set offsets 0, 0, graph 0.05, 0
set key outside right noenhanced
plot ]] .. table.concat(curves, ", \\\n  "), 1000, 520)
end

return report
