-- host.lua: the host's share of a first touch. Each case times one step
-- that faults every page and reads around it, outside the timed window,
-- the thread's time on the CPU and in the run queue (schedstat), the guest
-- kernel's part of it (getrusage system time) and the steal the host
-- reports on the CPU the step ran on (/proc/stat). What none of them holds
-- is time no guest accounting sees. Fresh memory against
-- memory freed with MADV_DONTNEED and touched again at once or after the
-- page reporting delay (with reporting as booted and held), MAP_POPULATE
-- (the faults inside mmap) against a plain first touch, 4 KiB against 2 MiB
-- pages, and one first touch sampled by ft.profile: what share of its wall
-- time any guest sample sees. Cases run shuffled in every repetition.
local ft = require "ft"
local harness = require "harness"
local reporting = require "reporting"

local h = harness.start({ script = "host", shuffle = true, mib = 256, reps = 5, quick = { MIB = 16, REPS = 2 },
  about = "the host's share of a first touch: fresh, reused, populated, 2 MiB; guest time against steal",
  limits = { "steal", "fault_cost", "profile" },
  knobs = { { name = "DELAY", kind = "count", default = 3, max = 60,
    desc = "seconds between MADV_DONTNEED and the retouch in the reporting-delay cases" } },
}, { ... })
local DELAY = h.cfg.DELAY
local PMD = ft.machine().thp_pmd_size
-- One CPU for the whole run, so that its /proc/stat line holds the steal of every step.
local CPU = tonumber(((io.open("/proc/self/stat"):read("a")):match("%) (.*)$") or ""):match(("%S+%s+"):rep(36)
  .. "(%d+)"))
assert(ft.affinity { CPU })
local TICK_NS = 10000000 -- /proc/stat counts USER_HZ ticks

local function steal_ns()
  local f = assert(io.open("/proc/stat"))
  local text = f:read("a")
  f:close()
  local l = assert(text:match("\ncpu" .. CPU .. " ([^\n]*)"), "no cpu line in /proc/stat")
  local v = {}
  for n in l:gmatch("%d+") do v[#v + 1] = tonumber(n) end
  return v[8] * TICK_NS
end

-- The thread's ns on a CPU and waiting in its run queue (other guest
-- processes on the loaded machine).
local function schedstat()
  local f = assert(io.open("/proc/thread-self/schedstat"))
  local on, wait = f:read("n", "n")
  f:close()
  return on, wait
end

-- step() timed in C returns ns; r gets the step's ns under key, its
-- faults, system time, time on the CPU and waiting for it, the steal and
-- the KiB page reporting handed to the host around it (key_sys, ...); for "step" also each as a share of the wall time.
local function measured(r, step, key)
  key = key or "step"
  local k0 = reporting.kib()
  local s0, u0, on0, wait0 = steal_ns(), ft.rusage(), schedstat()
  local f0 = ft.faults()
  local ns = step()
  local f1 = ft.faults()
  local on1, wait1 = schedstat()
  local u1, s1 = ft.rusage(), steal_ns()
  local k1 = reporting.kib()
  local on, sys = on1 - on0, u1.stime_ns - u0.stime_ns
  r[key], r[key .. "_faults"], r[key .. "_oncpu"], r[key .. "_sys"] = ns, f1 - f0, on, sys
  r[key .. "_reported_kib"] = k0 and k1 and k1 - k0 or nil
  r:work(ns)
  if key ~= "step" then return end
  r.waited, r.steal = wait1 - wait0, s1 - s0
  local pct = function(x) return 100 * x / ns end
  r.oncpu_pct, r.sys_pct, r.waited_pct, r.steal_pct = pct(on), pct(sys), pct(r.waited), pct(r.steal)
  r.unseen_pct = pct(ns - on - r.waited - r.steal) -- in no guest account
  -- Under shadow paging the host's part of a fault is charged to the faulting
  -- user instruction: on-CPU time that is not the guest kernel's.
  r.beside_pct = 100 * (on - sys) / on
end

-- A fresh 4 KiB-page mapping, touched once and freed with MADV_DONTNEED:
-- its pages go back to the guest's free lists, where reporting may hand
-- them to the host. wait: seconds before the retouch.
local function reused(r, wait, held)
  local b <close> = r:map(nil, { thp = "never" })
  b:touch(1)
  if held then assert(reporting.use("held")) end
  local k0 = ft.reported_kib and ft.reported_kib()
  b:madvise("dontneed")
  if wait > 0 then ft.sleep(wait) end
  local k1 = ft.reported_kib and ft.reported_kib()
  measured(r, function() return b:touch(2) end)
  if held then assert(reporting.use("as-booted")) end
  r.waited_kib = k0 and k1 and k1 - k0 or nil
  r:check_bytes(b, 2, "the retouch")
end

local CASES = {
  { "fresh, 4 KiB", { fresh = true, page = "4K" }, function(r)
    local b <close> = r:map(nil, { thp = "never" })
    measured(r, function() return b:touch(1) end)
    r:check_bytes(b, 1, "the first touch")
  end },
  { "fresh, 2 MiB (THP)", { fresh = true, page = "2M" }, function(r)
    if h.bytes < PMD then return false, ("MIB=%d holds no 2 MiB page"):format(h.cfg.MIB) end
    local b <close> = r:map(nil, { thp = "always" })
    measured(r, function() return b:touch(1) end)
    r.thp_bytes = assert(b:thp_bytes()) -- the report checks the pages were 2 MiB ones
    r:check_bytes(b, 1, "the first touch")
  end },
  { "MAP_POPULATE, 4 KiB", { fresh = true, page = "4K", populate = true }, function(r)
    local b
    measured(r, function() b = r:map(nil, { thp = "never", populate = true }); return b.map_ns end)
    -- the guest's page tables are filled; a first store still finds no host mapping
    measured(r, function() return b:touch(1) end, "after")
    r:check_bytes(b, 1, "the touch after MAP_POPULATE")
    b:unmap()
  end },
  { "DONTNEED, retouch at once", { fresh = false, wait = 0 }, function(r) reused(r, 0) end },
  { "DONTNEED, retouch after DELAY", { fresh = false, wait = DELAY }, function(r) reused(r, DELAY) end },
  { "DONTNEED, retouch after DELAY, reporting held", { fresh = false, wait = DELAY, held = true },
    function(r) reused(r, DELAY, true) end },
  { "fresh, 4 KiB, sampled", { fresh = true, page = "4K", sampled = true }, function(r)
    local b <close> = r:map(nil, { thp = "never" })
    local p, ns
    measured(r, function()
      local why
      p, why = ft.profile(b.touch, { freq = 1000, callchain = false }, b, 1)
      if not p then error(why, 0) end
      ns = p.wall_ns
      return ns
    end)
    r.kernel_pct = 100 * p.kernel / math.max(1, p.samples)
    r.sampled_pct = 100 * p.sampled_ns / p.wall_ns
    r:check_bytes(b, 1, "the sampled first touch")
  end },
}
local profiled = ft.profile(function() end, { freq = 1000, callchain = false })
local have_reporting = ft.page_reporting() ~= nil
for _, c in ipairs(CASES) do
  h:case(c[1], function(r)
    if c[2].sampled and not profiled then return false, "perf refuses ft.profile here" end
    if c[2].held and not have_reporting then return false, "no page reporting module" end
    return c[3](r)
  end, { params = c[2] })
end
h:columns {
  { "step", "the step (touch, or the mmap call)", "ns/page" }, { "step_faults", "its faults", "faults" },
  { "step_oncpu", "its time on the CPU", "ns/page" },
  { "step_sys", "guest system time", "ns/page" }, { "waited", "waiting for the CPU", "ns/page" },
  { "steal", "steal on its CPU", "ns/page" },
  { "oncpu_pct", "on the CPU (schedstat)", "%" }, { "sys_pct", "guest kernel share", "%" },
  { "waited_pct", "run-queue share", "%" }, { "steal_pct", "steal share", "%" },
  { "unseen_pct", "share no guest account holds", "%" },
  { "beside_pct", "of its CPU time, outside the guest kernel", "%" },
  { "after", "touch after MAP_POPULATE", "ns/page", optional = true },
  { "after_faults", "its faults", "faults", optional = true },
  { "after_oncpu", "its time on the CPU", "ns/page", optional = true },
  { "after_sys", "its system time", "ns/page", optional = true },
  { "step_reported_kib", "KiB reported during the step", "count", optional = true },
  { "waited_kib", "KiB reported before the retouch", "count", optional = true },
  { "thp_bytes", "in 2 MiB pages", "bytes", optional = true },
  { "kernel_pct", "kernel samples", "%", optional = true },
  { "sampled_pct", "wall time sampled", "%", optional = true },
}
h:note(("Pinned to CPU %d; steal is that CPU's /proc/stat count (10 ms ticks), system time getrusage's; "
  .. "DELAY %d s."):format(CPU, DELAY))
h:run()
h:ratio("fresh_over_reused", { "fresh, 4 KiB", "step" }, { "DONTNEED, retouch at once", "step" })
h:ratio("delayed_over_reused", { "DONTNEED, retouch after DELAY", "step" }, { "DONTNEED, retouch at once", "step" })
h:ratio("held_over_as_booted", { "DONTNEED, retouch after DELAY, reporting held", "step" },
  { "DONTNEED, retouch after DELAY", "step" })
h:ratio("populate_over_touch", { "MAP_POPULATE, 4 KiB", "step" }, { "fresh, 4 KiB", "step" })
h:ratio("4k_over_2m", { "fresh, 4 KiB", "step" }, { "fresh, 2 MiB (THP)", "step" })
-- on the CPU: the run queue's waits on a loaded machine left out
h:ratio("populate_over_touch_oncpu", { "MAP_POPULATE, 4 KiB", "step_oncpu" }, { "fresh, 4 KiB", "step_oncpu" })
h:ratio("populated_touch_over_touch_oncpu", { "MAP_POPULATE, 4 KiB", "after_oncpu" }, { "fresh, 4 KiB", "step_oncpu" })
h:ratio("reused_over_fresh_oncpu", { "DONTNEED, retouch at once", "step_oncpu" }, { "fresh, 4 KiB", "step_oncpu" })
h:ratio("held_over_as_booted_oncpu", { "DONTNEED, retouch after DELAY, reporting held", "step_oncpu" },
  { "DONTNEED, retouch after DELAY", "step_oncpu" })
h:finish()
