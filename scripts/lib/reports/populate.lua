-- populate.lua's report: where each method's faults go, its time split
-- into the call, the populate step and the first pass.
local plots = require "plots"
local units = require "units"

local report = {}

-- Each method's bar stacks its medians (the mapping call, the populate step,
-- the first pass), each part's interval drawn at the top of its own part,
-- with headroom above the tallest bar and the key below the frame.
function report.plots(list, doc, _, prefix)
  local lines = { "# method  mapping_call lo hi  populate_step lo hi  first_pass lo hi  (ns per page: median, "
    .. "interval)" }
  for _, c in ipairs(doc.reps) do
    if not c.unsupported then
      local cells = { plots.quoted(c.case) }
      for _, col in ipairs { "map", "step", "pass" } do
        local r = plots.row(doc, c.case, col)
        cells[#cells + 1] = r and ("%s %s %s"):format(units.exact(r.median), units.exact(r.lo), units.exact(r.hi))
          or "0 0 0"
      end
      lines[#lines + 1] = table.concat(cells, " ")
    end
  end
  plots.add(list, prefix .. "plot", "where the faults go: ns per page, medians and intervals (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", ([[
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel "ns per page (median and interval of each part)"
set xrange [-0.5:%d - 0.5]
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set xtics rotate by -20 noenhanced
set key below horizontal
plot "%s.dat" using 0:($2 + $5 + $8):xtic(1) with boxes lc rgb "#56b4e9" title "first pass", \
  "" using 0:($2 + $5) with boxes lc rgb "#009e73" title "populate step", \
  "" using 0:2 with boxes lc rgb "#9400d3" title "mapping call", \
  "" using ($0 - 0.15):2:3:4 with yerrorbars pt 7 ps 0.3 lc rgb "#000000" notitle, \
  "" using 0:($2 + $5):($2 + $6):($2 + $7) with yerrorbars pt 7 ps 0.3 lc rgb "#000000" notitle, \
  "" using ($0 + 0.15):($2 + $5 + $8):($2 + $5 + $9):($2 + $5 + $10) with yerrorbars pt 7 ps 0.3 lc rgb "#000000" \
    title "interval of each part (at its top)"]])
    :format(#lines - 1, prefix .. "plot"), 900, 520)
end

return report
