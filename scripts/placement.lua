-- placement.lua: who decides where pages live. move_pages(2) reports every page's node after a
-- first touch by the main thread or by pinned threads, after a malloc/free/malloc round trip, and
-- after an mbind(2) to another node (node 0 itself on a one-node machine) with and without moving.
local ft = require "ft"
local harness = require "harness"
local stats = require "stats"
local h = harness.start({ script = "placement", shuffle = true, mib = 256, reps = 1,
  about = "who decides where pages live (move_pages, mbind)" }, { ... })
local STEP = math.max(1, h.pages // 65536) -- move_pages asks at most 65536 pages
local OTHER, CPUS = h.machine.numa_nodes > 1 and 1 or 0, h.machine.cpus
local CASES = { -- each stores 1 in every page of its buffer
  { "first touch by the main thread" },
  { ("first touch split over %d pinned threads"):format(CPUS), threads = true },
  { "malloc, touch, free; malloc again, first touch", malloc = true },
  { ("first touch, then mbind to node %d without move flags"):format(OTHER), mbind = {} },
  { ("first touch, then mbind to node %d with MPOL_MF_MOVE"):format(OTHER), mbind = { "move" } },
}
for _, c in ipairs(CASES) do
  h:case(c[1], function(r)
    if c.malloc then -- a block touched and freed: is the next one placed anew?
      local m <close> = assert(ft.malloc(h.bytes))
      m:touch(2)
    end
    local b <close> = c.malloc and r:malloc() or r:map()
    if c.threads then
      local p = ft.parallel("touch", b, { threads = CPUS, pin = true, value = 1 })
      r.touch_faults = stats.sum(stats.map(p.threads, "faults"))
    else
      r:pass("touch", b, "touch", 1)
    end
    if c.mbind then assert(b:mbind(OTHER, table.unpack(c.mbind))) end
    local n = assert(b:nodes(STEP))
    r.node0, r.node1, r.elsewhere = n[0] or 0, n[1] or 0, n.sampled - (n[0] or 0) - (n[1] or 0)
    r:check_bytes(b, 1, c[1])
  end)
end
h:columns { { "touch_faults", "first-touch faults", "faults" }, { "node0", "on node 0", "pages" },
  { "node1", "on node 1", "pages" }, { "elsewhere", "elsewhere or not present", "pages" } }
h:finish()
