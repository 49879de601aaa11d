-- placement.lua: who decides where pages live. move_pages(2) reports every page's node after a
-- first touch from one CPU or split over pinned threads, after an mbind(2) to another node with
-- and without moving, and in a pool: memory first touched on one CPU and reused from another, as
-- a mapping the script keeps and as a block glibc hands back, then again after MADV_DONTNEED.
-- Each record carries what the claim predicts (expect_<field>), so a checker compares without
-- knowing the case names. On a one-node machine every prediction is node 0.
local ft = require "ft"
local harness = require "harness"
local stats = require "stats"
local h = harness.start({ script = "placement", shuffle = true, mib = 256, reps = 1,
  limits = { "zero_page", "fault_cost" },
  about = "who decides where pages live (move_pages, mbind)" }, { ... })
local STEP = math.max(1, h.pages // 65536) -- move_pages asks at most 65536 pages

-- The machine's NUMA layout, from /sys and /proc as text.
local NODE = "/sys/devices/system/node"
local read = require("textfile").value
local list = require("cpulist").parse -- "0-2,5" -> {0, 1, 2, 5}, {[0] = true, ...}
local top = { pid = tonumber(read("/proc/self/stat"):match("^(%d+)")),
  allowed = read("/proc/self/status"):match("Cpus_allowed_list:%s*(%S+)"),
  online = read(NODE .. "/online") or "0", node_of = {},
  numa_balancing = tonumber(read("/proc/sys/kernel/numa_balancing") or "0") }
top.cpus = list(top.allowed)
top.nodes = list(top.online)
top.has_memory_list = read(NODE .. "/has_memory") or top.online
top.with_memory, top.has_memory = list(top.has_memory_list)
top.memoryless = {}
for _, n in ipairs(top.nodes) do
  if not top.has_memory[n] then top.memoryless[#top.memoryless + 1] = n end
  for _, c in ipairs(list(read(("%s/node%d/cpulist"):format(NODE, n)))) do top.node_of[c] = n end
end
for _, c in ipairs(top.cpus) do top.node_of[c] = top.node_of[c] or 0 end -- no node directories: one node
function top.cpus_of(node)
  local out = {}
  for _, c in ipairs(top.cpus) do if top.node_of[c] == node then out[#out + 1] = c end end
  return out
end
-- the node a memoryless node's CPUs allocate from: the nearest with memory, the lowest on a tie
function top.nearest(node)
  if top.has_memory[node] then return node end
  local dist, best, i = {}, nil, 0 -- the distances to node 0, 1, ...
  for d in (read(("%s/node%d/distance"):format(NODE, node)) or ""):gmatch("%d+") do dist[i], i = tonumber(d), i + 1 end
  for _, n in ipairs(top.with_memory) do
    if not best or (dist[n] or math.huge) < (dist[best] or math.huge) then best = n end
  end
  return best
end
function top.other_node(node) -- another node with memory, the lowest
  for _, n in ipairs(top.with_memory) do if n ~= node then return n end end
end
function top.other_cpu(cpu) -- an allowed CPU whose pages land elsewhere, else any other, else itself
  for _, c in ipairs(top.cpus) do
    if top.nearest(top.node_of[c]) ~= top.nearest(top.node_of[cpu]) then return c end
  end
  for _, c in ipairs(top.cpus) do if c ~= cpu then return c end end
  return cpu
end
function top.free_bytes(node)
  local kib = (read(("%s/node%d/meminfo"):format(NODE, node)) or ""):match("MemFree:%s+(%d+) kB")
  return (tonumber(kib) or 0) * 1024
end
-- numa_maps' N<node>= counts of the mapping [addr, addr + bytes), when it is one of its own
function top.numa_maps(addr, bytes)
  local maps = read("/proc/self/maps") or ""
  local lo, hi = ("%x"):format(addr), ("%x"):format(addr + bytes)
  local range = lo .. "%-" .. hi .. " "
  if not (("\n" .. maps):find("\n" .. range)) then return nil end
  for line in (read("/proc/self/numa_maps") or ""):gmatch("[^\n]+") do
    if line:match("^(%x+) ") == lo then
      local counts = {}
      for n, pages in line:gmatch(" N(%d+)=(%d+)") do counts[tonumber(n)] = tonumber(pages) end
      return counts
    end
  end
end
-- glibc reuses a freed block only below its mmap threshold, which a free of an mmapped block
-- raises to that block's size up to 32 MiB: the pool's malloc block stays under it.
local POOL_BYTES = math.min(h.bytes, 16 << 20)
-- Base pages only (MADV_NOHUGEPAGE): a split falls on the threads' page boundaries whatever the
-- THP setting, and the flag keeps each mapping out of its neighbours' VMA, so numa_maps shows
-- it alone.
local BASE = { thp = "never" }

-- Where the claims put pages: a CPU's node, or (memoryless) the nearest node with memory.
local C0 = top.cpus[1] -- the main thread's CPU for the whole run
local A, B = C0, top.other_cpu(C0) -- a pool is first touched on A and reused on B
local function home(cpu) return top.nearest(top.node_of[cpu]) end

local function pin(cpu) -- the main thread (this process's pid is its id) onto one CPU, or back to all
  local cpus = cpu and tostring(cpu) or top.allowed
  local ok = os.execute(("taskset -pc %s %d >/dev/null"):format(cpus, top.pid))
  if not ok then error(("placement.lua: taskset -pc %s %d failed (is util-linux's taskset installed?)")
    :format(cpus, top.pid)) end
end
local function on(cpu, fn, ...)
  pin(cpu)
  local out = table.pack(fn(...))
  pin(C0)
  return table.unpack(out, 1, out.n)
end

-- Per node, the pages of b; an older kernel's -EFAULT for a page never touched counts as absent
-- (the script never reads before it writes, so no zero page is mapped).
local function place(r, b, step)
  local n = assert(b:nodes(step or STEP))
  for _, node in ipairs(top.nodes) do r["node_" .. node] = n[node] or 0 end
  r.absent = n.absent + n.zero_page + n.error
  return n
end
local function expect_all(r, node, pages, slack)
  for _, n in ipairs(top.nodes) do r["expect_node_" .. n] = n == node and pages or 0 end
  r.slack = slack
end
-- numa_maps' per-node counts of b's mapping, page for page against move_pages (pages off)
local function cross_check(r, b)
  local counts = top.numa_maps(b.addr, b.bytes)
  if not counts then return end -- merged with a neighbour, or not a mapping of its own
  local n, off = b:nodes(), 0
  for _, node in ipairs(top.nodes) do off = off + math.abs((counts[node] or 0) - (n[node] or 0)) end
  r.numa_maps_off, r.expect_numa_maps_off = off, 0
end

pin(C0)
local sampled = (h.pages + STEP - 1) // STEP
h:case(("first touch on CPU %d"):format(C0), function(r)
  local b <close> = r:map(nil, BASE)
  r.touch_ns, r.touch_faults = r:pass(nil, b, "touch", 1)
  place(r, b)
  expect_all(r, home(C0), sampled, 0)
  cross_check(r, b)
  r:check_bytes(b, 1, "first touch")
end, { params = { kind = "first touch", cpu = C0 } })

h:case(("first touch split over %d threads pinned to CPUs %s"):format(#top.cpus, top.allowed), function(r)
  local b <close> = r:map(nil, BASE)
  pin(nil) -- ft.parallel pins its threads to the CPUs the caller may run on
  local p = ft.parallel("touch", b, { threads = #top.cpus, pin = true, value = 2 })
  pin(C0)
  r.touch_faults = stats.sum(stats.map(p.threads, "faults"))
  place(r, b, 1)
  for _, n in ipairs(top.nodes) do r["expect_node_" .. n] = 0 end
  for _, th in ipairs(p.threads) do -- each thread's slice on its CPU's node
    local k = "expect_node_" .. home(th.cpu)
    r[k] = r[k] + th.pages
  end
  r.slack = 0
  cross_check(r, b)
  r:check_bytes(b, 2, "split touch")
end, { params = { kind = "split", threads = #top.cpus } })

local FIRST = home(C0)
local TARGET = top.other_node(FIRST) or FIRST -- one node: mbind to the node the pages are on
for _, move in ipairs { false, true } do
  h:case(("first touch on CPU %d, then mbind to node %d %s"):format(C0, TARGET,
    move and "with MPOL_MF_MOVE" or "without move flags"), function(r)
    local b <close> = r:map(nil, BASE)
    r:pass(nil, b, "touch", 3)
    local first, target = FIRST, TARGET
    if move then assert(b:mbind(target, "move")) else assert(b:mbind(target)) end
    place(r, b)
    -- a move into a node too small for the buffer moves what fits: no prediction then
    if not move then expect_all(r, first, sampled, 0)
    elseif top.free_bytes(target) > 2 * h.bytes then expect_all(r, target, sampled, 0) end
    cross_check(r, b)
    r:check_bytes(b, 3, "mbind")
  end, { params = { kind = "mbind", cpu = C0, node = TARGET, move = move } })
end

-- A pool: touched on A, touched again on B (reuse: no fault, no page moves), then given back
-- with MADV_DONTNEED and touched on B, which now decides. A fresh mapping's pages all go to A's
-- node; a malloc block's may have been placed before A touched it (heap pages freed to glibc and
-- handed out again keep their node), so its prediction is the placement A's touch left.
local function pool(r, b, value, fresh)
  on(A, b.touch, b, value)
  local first = {}
  place(first, b)
  r.reuse_ns, r.reuse_faults = on(B, r.pass, r, nil, b, "touch", value + 1)
  r.expect_reuse_faults = 0
  place(r, b)
  if fresh then
    expect_all(r, home(A), b.pages, 0)
  else
    for _, n in ipairs(top.nodes) do r["expect_node_" .. n] = first["node_" .. n] end
    r.slack = 0
  end
  r.first_on_A = first["node_" .. home(A)]
  b:madvise("dontneed")
  r.after_ns, r.after_faults = on(B, r.pass, r, nil, b, "touch", value + 2)
  local after = {}
  place(after, b)
  for _, n in ipairs(top.nodes) do r["after_node_" .. n] = after["node_" .. n] end
  r.after_absent = after.absent
  for _, n in ipairs(top.nodes) do r["expect_after_node_" .. n] = n == home(B) and b.pages or 0 end
  -- a malloc block's first and last pages hold glibc's headers and neighbours: not whole
  -- pages for MADV_DONTNEED, they stay where they were
  r.after_slack = fresh and 0 or 2
  r:check_bytes(b, value + 2, "pool")
end

h:case(("pool: a mapping touched on CPU %d, reused on CPU %d; then MADV_DONTNEED"):format(A, B), function(r)
  local b <close> = r:map(nil, BASE)
  pool(r, b, 4, true)
  cross_check(r, b)
end, { params = { kind = "pool", backing = "mmap", cpu = A, reuse_cpu = B } })

h:case(("pool: a %d MiB malloc block touched on CPU %d, freed, handed back, reused on CPU %d; then "
  .. "MADV_DONTNEED"):format(POOL_BYTES >> 20, A, B), function(r)
  do -- a free of an mmapped block raises glibc's threshold above this size
    assert(ft.malloc(POOL_BYTES)):free()
  end
  local first, b <close> = on(A, function() -- nothing of Lua's between the free and the malloc
    local m = assert(ft.malloc(POOL_BYTES))
    m:touch(6)
    local addr = m.addr
    m:free()
    return addr, assert(ft.malloc(POOL_BYTES))
  end)
  r.same_block, r.expect_same_block = b.addr == first and 1 or 0, 1
  pool(r, b, 7, false)
end, { params = { kind = "pool", backing = "malloc", cpu = A, reuse_cpu = B } })

-- A node without memory: its CPUs' first touches go to the nearest node with memory, and a
-- policy binding it is refused. What happened is said under the table.
local seen = {}
for _, node in ipairs(top.memoryless) do
  local cpu = top.cpus_of(node)[1]
  if cpu then
    h:case(("first touch on CPU %d of memoryless node %d"):format(cpu, node), function(r)
      local b <close> = r:map(nil, BASE)
      r.touch_ns, r.touch_faults = on(cpu, r.pass, r, nil, b, "touch", 8)
      place(r, b)
      expect_all(r, home(cpu), sampled, 0)
      local most = top.with_memory[1]
      for _, n in ipairs(top.with_memory) do if r["node_" .. n] > r["node_" .. most] then most = n end end
      seen["touch " .. node] = ("A first touch on CPU %d of memoryless node %d put %d of %d pages on node %d."):format(
        cpu, node, r["node_" .. most], sampled, most)
      r:check_bytes(b, 8, "memoryless")
    end, { params = { kind = "first touch", cpu = cpu, memoryless = node } })
  end
  h:case(("mbind to memoryless node %d"):format(node), function(r)
    local b <close> = r:map(nil, BASE)
    local ok, msg, errno = b:mbind(node)
    r.refused_errno, r.expect_refused_errno = ok and 0 or errno, 22 -- EINVAL
    seen["mbind " .. node] = ok and ("mbind to memoryless node %d was accepted."):format(node)
      or ("mbind to memoryless node %d was refused: %s."):format(node, msg)
  end, { params = { kind = "mbind", node = node, memoryless = node } })
end

local cols = { { "touch_faults", "first-touch faults", "faults" }, { "reuse_faults", "faults of the reuse", "faults" } }
for _, n in ipairs(top.nodes) do
  cols[#cols + 1] = { "node_" .. n, ("on node %d%s"):format(n, top.has_memory[n] and "" or " (no memory)"), "pages" }
end
cols[#cols + 1] = { "absent", "not present", "pages" }
cols[#cols + 1] = { "first_on_A", ("on CPU %d's node before the reuse"):format(A), "pages" }
for _, n in ipairs(top.nodes) do
  if top.has_memory[n] then
    cols[#cols + 1] = { "after_node_" .. n, ("after DONTNEED on node %d"):format(n), "pages" }
  end
end
cols[#cols + 1] = { "numa_maps_off", "numa_maps disagrees", "pages" }
cols[#cols + 1] = { "refused_errno", "mbind's errno", "count", optional = true } -- memoryless nodes only
h:columns(cols)
h:note(("Nodes %s; with memory %s; this process may run on CPUs %s (main thread on CPU %d). Pages "
  .. "counted by move_pages(2), %s; a never-touched page's -EFAULT (older kernels: 6.1) "
  .. "counts as not present."):format(top.online, top.has_memory_list, top.allowed, C0,
  STEP == 1 and "every page" or ("every %d-th page"):format(STEP)))
if top.numa_balancing ~= 0 then
  local w = ("kernel.numa_balancing is %d: its scanner unmaps pages to sample them, and move_pages then "
    .. "reports present pages as absent; boot with numa_balancing=disable to count them"):format(top.numa_balancing)
  io.stderr:write("placement.lua: warning: ", w, "\n")
  h:note("Warning: " .. w .. ".")
else
  h:note("kernel.numa_balancing is 0 (off).")
end
if tostring(h.machine.cpuid_hypervisor):find("TCG") then -- the kernel names no TCG: CPUID does
  h:note("Run under qemu's TCG emulation: its times mean nothing; its page counts and nodes are real.")
end
h:value("numa_balancing", top.numa_balancing, "count")
h:run()
pin(nil)
for _, node in ipairs(top.memoryless) do -- as the last repetition saw it
  for _, what in ipairs { "touch ", "mbind " } do
    if seen[what .. node] then h:note(seen[what .. node]) end
  end
end
h:finish()
