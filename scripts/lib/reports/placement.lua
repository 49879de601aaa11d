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


-- The finding, prediction 5 (neither a free/malloc round trip nor a policy
-- set afterwards moves placed pages): from the multi-node guest's run
-- (guest true, make numa-publish), else from a run on this machine.
function report.finding(doc, _, guest)
  if not guest then
    local nodes = doc.machine and doc.machine.numa_nodes
    return ("%s (placement.lua ran on %s NUMA node%s)."):format(nodes == 1 and "not decidable here, every "
      .. "page is on the one node whoever touches it" or "see placement.lua's table", tostring(nodes),
      nodes == 1 and "" or "s")
  end
  local function find(pattern, column)
    for _, r in ipairs(doc.rows) do
      if r.case:find(pattern) and r.column == column then return r.median end
    end
    error(("publish: %s has no row matching '%s' %s"):format(doc.path, pattern, column), 0)
  end
  local pages = doc.pages
  local stay, moved = find("without move flags", "node_0"), find("with MPOL_MF_MOVE", "node_1")
  local kept, faults = find("^pool: a mapping", "node_0"), find("^pool: a mapping", "reuse_faults")
  local reset = find("^pool: a mapping", "after_node_1")
  local mkept, mfirst = find("malloc block", "node_0"), find("malloc block", "first_on_A")
  local mreset = find("malloc block", "after_node_1")
  local split0, split1 = find("split over", "node_0"), find("split over", "node_1")
  local decided = stay == pages and moved == pages and kept == pages and faults == 0 and mkept == mfirst
  local m = doc.machine or {}
  return ("%s in a %s-node qemu guest (TCG, kernel %s; results/numa/, %d pages of 4 KiB, one run): "
    .. "mbind to another node without move flags left %d of %d pages where the first touch put them, with "
    .. "MPOL_MF_MOVE it moved %d; a mapping reused from a CPU of the other node took %d faults and kept %d of %d "
    .. "pages on its first toucher's node, and after MADV_DONTNEED the reuser's node got %d; a malloc block glibc "
    .. "handed back kept %d of the %d its first toucher had placed (%d on the reuser's node after MADV_DONTNEED). "
    .. "Two pinned threads put %d and %d pages on their own nodes. `make numa` runs the same checks, adapted to "
    .. "each layout, in its other default layouts too (four nodes, two nodes of unequal memory, a node without "
    .. "memory); only this guest's run is committed.")
    :format(decided and "held" or "did not hold", tostring(m.numa_nodes), tostring(m.kernel), pages, stay, pages,
      moved, faults, kept, pages, reset, mkept, mfirst, mreset, split0, split1)
end

return report
