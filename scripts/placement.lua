-- placement.lua: who decides where pages live. move_pages(2) with no target
-- nodes reports each page's node after a first touch by the main thread, a
-- first touch split over pinned threads, a malloc/free/malloc round trip,
-- and an mbind(2) to another node without and with MPOL_MF_MOVE.
local ft = require "ft"
local experiment = require "experiment"
local measure = require "measure"

local exp = experiment.start("placement", "who decides where pages live (move_pages, mbind)", { MIB = 256, REPS = 1 })
local nodes_online = exp.machine.numa_nodes
local step = math.max(1, exp.pages // 65536) -- at most 65536 pages asked
local other = nodes_online > 1 and 1 or 0

local function where(b)
  local n = assert(b:nodes(step))
  local parts = {}
  for node = 0, 63 do
    if n[node] then parts[#parts + 1] = ("node %d: %d"):format(node, n[node]) end
  end
  if n.absent > 0 then parts[#parts + 1] = ("not present: %d"):format(n.absent) end
  if n.zero_page > 0 then parts[#parts + 1] = ("zero page: %d"):format(n.zero_page) end
  if n.error > 0 then parts[#parts + 1] = ("refused: %d"):format(n.error) end
  return table.concat(parts, ", "), n
end

local rows = {}
local function record(case, b, faults)
  local text, n = where(b)
  exp:result { { "case", case }, { "sampled", n.sampled }, { "node0", n[0] or 0 }, { "node1", n[1] or 0 },
    { "absent", n.absent }, { "faults", faults or -1 } }
  rows[#rows + 1] = { case, faults and experiment.fmt(faults) or "–", ("%s (of %d sampled)"):format(text, n.sampled) }
end

exp:progress("main thread")
do
  local b <close> = measure.map(exp.bytes)
  record("mapped, not touched", b)
  local _, faults = measure.pass(b, "touch", 1)
  record("first touch by the main thread", b, faults)
  measure.check_bytes(b, 1, "main thread")
end

exp:progress("threads")
do
  local b <close> = measure.map(exp.bytes)
  local r = ft.parallel("touch", b, { threads = exp.machine.cpus, pin = true, value = 2 })
  local faults = 0
  for _, th in ipairs(r.threads) do faults = faults + th.faults end
  record(("first touch split over %d threads, each pinned to its CPU"):format(#r.threads), b, faults)
  measure.check_bytes(b, 2, "threads")
end

exp:progress("malloc round trip")
do
  local m1 = assert(ft.malloc(exp.bytes))
  m1:touch(3)
  local addr = m1.addr
  record("malloc, first touch", m1)
  m1:free()
  local m2 <close> = assert(ft.malloc(exp.bytes))
  local _, faults = measure.pass(m2, "touch", 4)
  record(("free, malloc again (%s address), touch"):format(m2.addr == addr and "same" or "another"), m2, faults)
  measure.check_bytes(m2, 4, "malloc round trip")
end

exp:progress("mbind")
do
  local b <close> = measure.map(exp.bytes)
  b:touch(5)
  assert(b:mbind(other))
  record(("mbind to node %d without move flags"):format(other), b)
  assert(b:mbind(other, "move"))
  record(("mbind to node %d with MPOL_MF_MOVE"):format(other), b)
  measure.check_bytes(b, 5, "after mbind")
end

if nodes_online == 1 then
  exp:text(("This machine has one NUMA node, so every page is on node 0 whoever touched it, and the mbind "
    .. "cases bind to node 0 itself; the same script on a machine with more nodes binds to node 1."))
  exp:text("")
end
exp:table({ "case", "faults", "where the pages are (move_pages)" }, rows)
exp:finish()
