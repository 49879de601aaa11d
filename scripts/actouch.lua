-- actouch.lua: why cycle C's first touch can be lower than cycle A's in the
-- same repetitions. A's pass is a plain store per page, C's reads the
-- per-page timer around every store; A runs first in a repetition, C after
-- B's munmap. Here both passes run on fresh mappings, plain or timed, fresh
-- or right after another buffer's munmap, shuffled in every repetition, and
-- each is also taken on the CPU (schedstat) so the run queue of a loaded
-- machine is left out.
local ft = require "ft"
local harness = require "harness"

local h = harness.start({ script = "actouch", shuffle = true, mib = 256, reps = 10,
  about = "cycle A against C's first touch: plain or timed, fresh or after a munmap",
  limits = { "timer", "fault_cost" } }, { ... })
local samples = ft.samples(h.pages)
local function oncpu()
  local f = assert(io.open("/proc/thread-self/schedstat"))
  local ns = f:read("n")
  f:close()
  return ns
end
for _, timed in ipairs { false, true } do
  for _, after in ipairs { false, true } do
    local name = (timed and "timed (C)" or "plain (A)") .. (after and ", after a munmap" or "")
    h:case(name, function(r)
      if after then
        local x <close> = ft.mmap(h.bytes, { thp = "never" })
        x:touch(9)
        x:unmap()
      end
      local b <close> = r:map(nil, { thp = "never" })
      local on0 = oncpu()
      if timed then r:pass("touch", b, "touch_timed", 1, samples) else r:pass("touch", b, "touch", 1) end
      r.oncpu = oncpu() - on0
      r:check_bytes(b, 1, name)
    end, { params = { timed = timed, after = after } })
  end
end
h:columns { { "touch", "first touch", "ns/page" }, { "touch_faults", "its faults", "faults" },
  { "oncpu", "its time on the CPU", "ns/page" } }
h:run()
h:ratio("timed_over_plain", { "timed (C)", "oncpu" }, { "plain (A)", "oncpu" })
h:ratio("after_munmap_over_fresh", { "plain (A), after a munmap", "oncpu" }, { "plain (A)", "oncpu" })
h:ratio("timed_after_munmap_over_plain", { "timed (C), after a munmap", "oncpu" }, { "plain (A)", "oncpu" })
h:finish()
