-- scaling.lua: first-touch faults under concurrency, will-it-scale's
-- page_fault1 in this harness: 1..N threads on one shared mapping and on a
-- mapping per thread, faults per second per thread and in total, and the
-- munmap cost per page.
local ft = require "ft"
local harness = require "harness"
local stats = require "stats"

local h = harness.start({ script = "scaling", shuffle = true, mib = 512, reps = 3,
  about = "first-touch faults with 1..N threads" }, { ... })
for threads = 1, h.machine.cpus do
  for _, shared in ipairs { true, false } do
    local shape = shared and "one shared mapping" or "a mapping per thread"
    h:case(("%d thread(s), %s"):format(threads, shape), function(r)
      local bufs, n = {}, shared and 1 or threads -- one buffer cut into slices, or one per thread
      for i = 1, n do bufs[i] = r:map(nil, nil, h.bytes // n) end
      local p = ft.parallel("touch", shared and bufs[1] or bufs,
        { pin = true, value = 6, threads = shared and threads or nil })
      local per_thread = {}
      r.wall, r.faults, r.munmap = p.wall_ns, 0, 0
      for i, th in ipairs(p.threads) do
        r.faults = r.faults + th.faults
        per_thread[i] = th.faults / (th.ns / 1e9)
      end
      r.per_thread, r.total = stats.median(per_thread), r.faults / (r.wall / 1e9)
      for _, b in ipairs(bufs) do
        r:check_bytes(b, 6, "scaling")
        r.munmap = r.munmap + r:release(nil, b)
      end
    end, { params = { threads = threads, shared = shared } })
  end
end
h:columns {
  { "faults", "faults", "faults" },
  { "total", "in total", "faults/s" },
  { "per_thread", "per thread", "faults/s" },
  { "wall", "wall", "ns/page" }, { "munmap", "munmap", "ns/page" },
}
h:finish()
