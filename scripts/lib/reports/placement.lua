-- placement.lua's report: where each case's pages ended up, a stacked bar per case, a colour
-- per node (and one for pages not present); the pool cases' pages after MADV_DONTNEED beside.
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
  local lines = { table.concat(header, "  ") .. "  absent  (pages, medians)" }
  local function add(name, case, prefix_col)
    local cells = { plots.quoted(name) }
    for _, col in ipairs(nodes) do
      local r = plots.row(doc, case, prefix_col .. col)
      cells[#cells + 1] = r and units.exact(r.median) or "0"
    end
    local r = plots.row(doc, case, prefix_col == "" and "absent" or "after_absent")
    cells[#cells + 1] = r and units.exact(r.median) or "0"
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
  local using = {}
  for i, col in ipairs(nodes) do
    using[#using + 1] = ('"%s.dat" using %d%s title "on node %s"'):format(prefix .. "plot", i + 1,
      i == 1 and ":xtic(1)" or "", col:match("%d+$"))
  end
  using[#using + 1] = ('"%s.dat" using %d title "not present"'):format(prefix .. "plot", #nodes + 2)
  plots.add(list, prefix .. "plot", "where the pages are: pages per node, medians (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", [[
set style data histogram
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel "pages"
set xtics rotate by -25 noenhanced font ",8"
set key outside right top
plot ]] .. table.concat(using, ", \\\n  "), 1100, 600)
end

return report
