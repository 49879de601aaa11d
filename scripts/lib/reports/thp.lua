-- thp.lua's report: faults per GiB and ns per 4 KiB against the page the
-- kernel gave.
local plots = require "plots"
local units = require "units"

local report = {}

function report.plots(list, doc, _, prefix)
  local lines = { "# case  page_bytes  faults_per_GiB  pass1_ns_per_page lo hi  retouch_ns_per_page lo hi" }
  for _, c in ipairs(doc.reps) do
    local huge, faults = plots.row(doc, c.case, "huge_bytes"), plots.row(doc, c.case, "pass1_faults")
    local p1, p2 = plots.row(doc, c.case, "pass1"), plots.row(doc, c.case, "retouch")
    if huge and faults and p1 and p2 then
      local page = huge.median >= doc.bytes and doc.machine.thp_pmd_size or doc.page_size
      lines[#lines + 1] = ("%s %d %s %s %s %s %s %s %s"):format(plots.quoted(c.case), page,
        units.exact(faults.median * (1 << 30) / doc.bytes), units.exact(p1.median), units.exact(p1.lo),
        units.exact(p1.hi), units.exact(p2.median), units.exact(p2.lo), units.exact(p2.hi))
    end
  end
  plots.add(list, prefix .. "plot", "faults and ns per 4 KiB against the page obtained (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", ([[
set logscale xy
set xlabel "bytes per page obtained (4096: base pages, 2097152: THP)"
set ylabel "ns per 4 KiB (median and interval)"
set y2label "pass-1 faults per GiB"
set logscale y2
set y2tics
set ytics nomirror
set offsets graph 0.1, graph 0.1, 0, 0
set key top right
plot "%s.dat" using 2:4:5:6 with yerrorbars pt 7 lc rgb "#1f4e99" title "pass 1", \
  "" using 2:7:8:9 with yerrorbars pt 5 lc rgb "#cc5500" title "re-touch", \
  "" using 2:3 axes x1y2 with points pt 4 ps 1.5 lc rgb "#228822" title "faults per GiB (right)"]]):format(
    prefix .. "plot"))
end

return report
