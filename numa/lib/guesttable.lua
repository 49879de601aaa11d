-- The NUMA guest's table (numa/check.lua writes it into guest.md): every
-- case's page counts per node, fault counts and counts, one column per
-- such row of placement.lua's JSON, the repetitions' values side by side
-- and no times (TCG's mean nothing). numa/check.lua makes it from the
-- published JSON, so a page count edited by hand in guest.md shows.
local guesttable = {}

function guesttable.lines(doc)
  local cols = {}
  for _, row in ipairs(doc.rows) do
    if row.unit == "pages" or row.unit == "faults" or row.unit == "count" then
      if not cols[row.column] then cols[#cols + 1], cols[row.column] = row.column, row.label end
    end
  end
  local labels = {}
  for _, c in ipairs(cols) do labels[#labels + 1] = cols[c] end
  local lines = { "| case | " .. table.concat(labels, " | ") .. " |", "|---" .. ("|---:"):rep(#cols) .. "|" }
  for _, case in ipairs(doc.reps) do
    local cells = { case.case }
    for _, c in ipairs(cols) do
      local v = {}
      for _, r in ipairs(case.records) do v[#v + 1] = r[c] ~= nil and tostring(r[c]) or nil end
      cells[#cells + 1] = #v > 0 and table.concat(v, ", ") or "–"
    end
    lines[#lines + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return lines
end

-- What numa/check.lua keeps beside the guest's run (provenance.json): the
-- guest's own record from its JSON (doc), and what only the host knew (host:
-- {commit, dirty} of the tree it built, qemu's version line, the kernel
-- image, the MiB of each node, and the date it checked).
function guesttable.provenance(doc, host)
  local m, p = doc.machine, doc.provenance
  local balancing = "not recorded"
  for _, v in ipairs(doc.values) do if v.value == "numa_balancing" then balancing = v.x end end
  return { kernel = p.kernel, kernel_image = host.kernel_image, qemu = host.qemu, accel = "tcg",
    node_mib = host.node_mib, numa_nodes = m.numa_nodes, cpus = m.cpus, cmdline = p.cmdline, thp = p.thp_enabled,
    numa_balancing = balancing, placement_knobs = doc.knobs, host_commit = host.host_commit,
    host_dirty = host.host_dirty, guest_commit = p.git_commit, guest_dirty = p.git_dirty, date = host.date,
    times = "meaningless: TCG emulation; only page counts and nodes mean anything" }
end

-- guest.md's head, from the guest's JSON and that record (g); a record from
-- before it kept the date gives none (claims holds that line to its hash).
function guesttable.head(doc, g)
  local m, p = doc.machine, doc.provenance
  return {
    ("## placement.lua in a qemu guest: %s MiB per node"):format(g.node_mib), "",
    ("- kernel: %s (%s), booted by qemu-system-x86_64 -accel tcg (%s) from %s"):format(p.kernel,
      m.kernel, g.qemu, g.kernel_image),
    ("- layout: %d nodes, %d CPUs (one per node), MiB per node %s; kernel command line: %s"):format(m.numa_nodes,
      m.cpus, g.node_mib, p.cmdline),
    ("- settings: THP %s, kernel.numa_balancing %s; %s"):format(p.thp_enabled, tostring(g.numa_balancing),
      ("placement.lua MIB=%s REPS=%s"):format(doc.knobs.MIB, doc.knobs.REPS)),
    ("- host: ftrun %s at %s"):format(g.host_commit:sub(1, 7) .. (g.host_dirty and " + uncommitted changes" or ""),
      g.date or "?"),
    "- times: meaningless (TCG emulation, many times slower than the host, another clocksource);"
      .. " only page counts and nodes are shown", "",
  }
end

return guesttable
