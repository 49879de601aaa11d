-- placement.lua's report: where each case's pages ended up, a stacked bar per case, a colour
-- per node (and one for pages not present), each part's interval at its top; the pool cases' pages after
-- MADV_DONTNEED beside.
local plots = require "plots"
local units = require "units"

local report = {}

function report.plots(list, doc, _, prefix)
  local nodes = {} -- the node_<n> columns, in the rows' order
  for _, col in ipairs(plots.columns_in(doc, "pages")) do
    if col:match("^node_%d+$") then nodes[#nodes + 1] = col end
  end
  if #nodes == 0 then return end
  local header = { "# case" }
  for _, col in ipairs(nodes) do header[#header + 1] = col end
  local lines = { table.concat(header, " lo hi  ") .. " lo hi  absent lo hi  (pages: median, interval)" }
  local function cell(r)
    return r and ("%s %s %s"):format(units.exact(r.median), units.exact(r.lo), units.exact(r.hi)) or "0 0 0"
  end
  local function add(name, case, prefix_col)
    local cells = { plots.quoted(name) }
    for _, col in ipairs(nodes) do cells[#cells + 1] = cell(plots.row(doc, case, prefix_col .. col)) end
    cells[#cells + 1] = cell(plots.row(doc, case, prefix_col == "" and "absent" or "after_absent"))
    lines[#lines + 1] = table.concat(cells, " ")
  end
  for _, c in ipairs(doc.reps) do
    if not c.unsupported and plots.row(doc, c.case, nodes[1]) then
      local p = c.params or {}
      if p.kind == "pool" then -- the reuse, then the reset: shorter names than the case's
        add(("pool (%s), reused on CPU %s"):format(p.backing, p.reuse_cpu), c.case, "")
        add(("pool (%s), MADV_DONTNEED, touched on CPU %s"):format(p.backing, p.reuse_cpu), c.case, "after_")
      else
        add(c.case, c.case, "")
      end
    end
  end
  -- the parts stacked by hand: part k's box reaches the sum of the medians up to k (drawn from the
  -- tallest down), its interval drawn at its own top
  local titles = {}
  for _, col in ipairs(nodes) do titles[#titles + 1] = "on node " .. col:match("%d+$") end
  titles[#titles + 1] = "not present"
  local function upto(k) -- the sum of parts 1 to k's medians, as a gnuplot expression
    local terms = { "0" }
    for i = 1, k do terms[#terms + 1] = ("$%d"):format(3 * i - 1) end
    return table.concat(terms, " + ")
  end
  local using = {}
  for k = #titles, 1, -1 do
    using[#using + 1] = ('%s using 0:(%s)%s with boxes lc %d title "%s"'):format(#using == 0
      and ('"%s.dat"'):format(prefix .. "plot") or '""', upto(k), k == #titles and ":xtic(1)" or "", k, titles[k])
  end
  for k = 1, #titles do
    using[#using + 1] = ('"" using ($0 + %g):(%s):(%s + $%d):(%s + $%d) with yerrorbars pt 7 ps 0.3 '
      .. 'lc rgb "#000000" %s'):format(0.12 * (k - (#titles + 1) / 2), upto(k), upto(k - 1), 3 * k, upto(k - 1),
        3 * k + 1,
        k == 1 and 'title "interval of each part (at its top)"' or "notitle")
  end
  plots.add(list, prefix .. "plot", ("where the pages are: pages per node, medians and intervals (%s)"):format(
    doc.run), table.concat(lines, "\n") .. "\n", ([[
set style fill solid 0.8 border -1
set boxwidth 0.6
set xrange [-0.5:%d - 0.5]
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set ylabel "pages (median and interval of each part)"
set xtics rotate by -25 noenhanced font ",8"
set key outside right top
plot ]]):format(#lines - 1) .. table.concat(using, ", \\\n  "), 1100, 600)
end

return report
