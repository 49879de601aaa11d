-- thp.lua's report: faults per GiB and ns per 4 KiB against the page the
-- kernel gave.
local plots = require "plots"
local units = require "units"

local report = {}

-- One position per case on the x axis (THP=never and THP=default both get
-- 4 KiB pages: on a bytes axis they fell on one point), the page obtained
-- in its label, pass 1 and the re-touch a little apart so neither hides the
-- other's interval, and the key below the frame, where it covers no point.
local function size(bytes)
  return bytes >= 1 << 20 and ("%d MiB"):format(bytes >> 20) or ("%d KiB"):format(bytes >> 10)
end

function report.plots(list, doc, _, prefix)
  local lines = { "# case  page_bytes  faults_per_GiB  pass1_ns_per_page lo hi  retouch_ns_per_page lo hi  label" }
  for _, c in ipairs(doc.reps) do
    local huge, faults = plots.row(doc, c.case, "huge_bytes"), plots.row(doc, c.case, "pass1_faults")
    local p1, p2 = plots.row(doc, c.case, "pass1"), plots.row(doc, c.case, "retouch")
    if huge and faults and p1 and p2 then
      local page = huge.median >= doc.bytes and doc.machine.thp_pmd_size or doc.page_size
      lines[#lines + 1] = ("%s %d %s %s %s %s %s %s %s %s"):format(plots.quoted(c.case), page,
        units.exact(faults.median * (1 << 30) / doc.bytes), units.exact(p1.median), units.exact(p1.lo),
        units.exact(p1.hi), units.exact(p2.median), units.exact(p2.lo), units.exact(p2.hi),
        plots.quoted(("%s: %s pages"):format(c.case, size(page))))
    end
  end
  plots.add(list, prefix .. "plot", "faults and ns per 4 KiB against the page obtained (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", ([[
set logscale y
set ylabel "ns per 4 KiB (median and interval)"
set y2label "pass-1 faults per GiB"
set logscale y2
set y2tics
set ytics nomirror
set format y "%%g"
set format y2 "%%.0f"
set xrange [-0.5:%d - 0.5]
set xtics noenhanced
set offsets 0, 0, graph 0.05, graph 0.05
set key below horizontal
plot "%s.dat" using ($0 - 0.1):4:5:6 with yerrorbars pt 7 lc rgb "#1f4e99" title "pass 1", \
  "" using ($0 + 0.1):7:8:9 with yerrorbars pt 5 lc rgb "#cc5500" title "re-touch", \
  "" using 0:3:xtic(10) axes x1y2 with points pt 4 ps 1.5 lc rgb "#228822" \
    title "pass-1 faults per GiB (right)"]]):format(
    #lines - 1, prefix .. "plot"))
end

return report
