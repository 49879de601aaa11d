-- numa/layout.lua MEMS: run inside the guest; checks the NUMA layout the
-- guest sees against the one it was booted with (MEMS: MiB per node,
-- comma-separated, 0 for a memoryless node; one CPU per node), as TAP.
local ft = require "ft"
package.path = ft.project_dir .. "/tests/lib/?.lua;" .. package.path
local t = require "tap"

local read = require("textfile").value
local list = require("cpulist").parse

local mems = {}
for m in (... or ""):gmatch("%d+") do mems[#mems + 1] = tonumber(m) end
assert(#mems > 0, "numa/layout.lua: expected the MiB per node, e.g. 3072,0")
local m = ft.machine()
local NODE = "/sys/devices/system/node"
print(("# booted with %s MiB per node; kernel %s; ft.machine(): numa_nodes %d, cpus %d, thp %s")
  :format(table.concat(mems, ","), m.kernel, m.numa_nodes, m.cpus, m.thp_enabled))
t.is(m.numa_nodes, #mems, "ft.machine().numa_nodes is the number of nodes booted")
t.is(m.cpus, #mems, "ft.machine().cpus: one CPU per node")
local _, with_memory = list(read(NODE .. "/has_memory"))
for node, mib in ipairs(mems) do
  node = node - 1
  local meminfo = read(("%s/node%d/meminfo"):format(NODE, node)) or ""
  local kib = tonumber(meminfo:match("MemTotal:%s+(%d+) kB")) or 0
  local cpus = read(("%s/node%d/cpulist"):format(NODE, node))
  print(("# node %d: cpus %s, MemTotal %d MiB, has_memory %s"):format(node, cpus, kib // 1024,
    tostring(with_memory[node] or false)))
  t.is(cpus, tostring(node), ("node %d holds CPU %d alone"):format(node, node))
  if mib == 0 then
    t.ok(not with_memory[node] and kib == 0, ("node %d is memoryless (not in has_memory, MemTotal 0)"):format(node))
  else
    -- the kernel keeps some of every node for itself (its image, struct pages)
    t.ok(with_memory[node] and kib <= mib * 1024 and kib >= mib * 1024 * 3 // 4,
      ("node %d has memory: MemTotal %d MiB of the %d booted"):format(node, kib // 1024, mib))
  end
end
t.done()
