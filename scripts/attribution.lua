-- attribution.lua: where a fault's time goes. Each case profiles one step
-- with ft.profile (perf's cpu-clock sampling of this thread, kernel and
-- user, with call chains): pass 1 with 4 KiB pages and with THP=always,
-- MAP_POPULATE (the faults inside mmap), a read fault onto the zero page,
-- pass 2 and munmap. The samples are counted by kernel symbol and grouped
-- into named stages by the rules below; what no rule names is shown as
-- ungrouped.
local ft = require "ft"
local harness = require "harness"
local stages = require "stages"

local h = harness.start({ script = "attribution", shuffle = true, mib = 256, reps = 3,
  limits = { "profile", "zero_page" },
  quick = { MIB = 64, REPS = 2 },
  about = "where a fault's time goes: kernel symbols and stages (ft.profile, cpu-clock samples)",
  knobs = { { name = "FREQ", kind = "count", default = 10000, max = 1000000,
    desc = "samples per second of CPU time (ft.profile's freq)" } },
  check = function(cfg) -- a rate above the kernel's limit is the user's value: refused, not "not supported"
    local _, why = ft.profile(function() end, { freq = cfg.FREQ })
    if why and why:find("perf_event_max_sample_rate", 1, true) then return ("FREQ=%d: %s"):format(cfg.FREQ, why) end
  end }, { ... })

-- Whether perf lets this process profile at all (perf_event_paranoid,
-- kptr_restrict, perf_event_max_sample_rate): asked once, before any case
-- maps memory; a refusal makes every case "not supported" with its reason.
local _, refused = ft.profile(function() end, { freq = h.cfg.FREQ })

-- fn() under the profiler, its samples tallied into r by stage; its
-- results after the profile. A refusal comes back as nil and why.
local function profiled(r, fn)
  local res = table.pack(ft.profile(fn, { freq = h.cfg.FREQ }))
  if not res[1] then return nil, res[2] end
  stages.tally(r, res[1])
  return table.unpack(res, 1, res.n)
end

-- Pass 2 is fast (about 20 ns a page): enough passes that about 2^21 pages
-- are touched inside the one profile, so it holds a few hundred samples.
-- The passes are called straight, the faults read once around them all.
local RETOUCHES = math.max(1, (1 << 21) // h.pages)
local function retouch(r, b)
  local f0, ns = ft.faults(), 0
  for i = 1, RETOUCHES do ns = ns + b:touch(2 + i % 200) end
  r.ns, r.ns_faults, r.passes = ns, ft.faults() - f0, RETOUCHES
  r:work(ns)
  return true
end

local CASES = {
  { "pass 1, 4 KiB pages", function(r)
    local b <close> = r:map(nil, { thp = "never" })
    local p, why = profiled(r, function() return r:pass("ns", b, "touch", 1) end)
    if not p then return false, why end
    r:check_bytes(b, 1, "pass 1, 4 KiB pages")
  end },
  { "pass 1, THP=always", function(r)
    local b <close> = r:map(nil, { thp = "always" })
    local p, why = profiled(r, function() return r:pass("ns", b, "touch", 1) end)
    if not p then return false, why end
    r.huge_bytes = assert(b:thp_bytes())
    r:check_bytes(b, 1, "pass 1, THP=always")
  end },
  { "MAP_POPULATE (inside mmap)", function(r)
    local p, b = profiled(r, function() return r:map("ns", { thp = "never", populate = true }) end)
    if not p then return false, b end
    r:check_bytes(b, 0, "MAP_POPULATE")
    r:release(nil, b)
  end },
  { "read fault onto the zero page", function(r)
    local b <close> = r:map(nil, { thp = "never" })
    local p, why = profiled(r, function() return r:pass("ns", b, "read_touch") end)
    if not p then return false, why end
    r:check_bytes(b, 0, "read fault")
  end },
  { "pass 2 (re-touch)", function(r)
    local b <close> = r:map(nil, { thp = "never" })
    r:pass(nil, b, "touch", 1)
    local p, why = profiled(r, function() return retouch(r, b) end)
    if not p then return false, why end
    r:check_bytes(b, 2 + RETOUCHES % 200, "pass 2")
  end },
  { "munmap", function(r)
    local b <close> = r:map(nil, { thp = "never" })
    r:pass(nil, b, "touch", 1)
    r:check_bytes(b, 1, "before munmap")
    local p, why = profiled(r, function() return r:release("ns", b) end)
    if not p then return false, why end
  end },
}
for _, c in ipairs(CASES) do
  h:case(c[1], function(r)
    if refused then return false, refused end
    return c[2](r)
  end)
end

local cols = { { "samples", "samples", "count" }, { "lost", "lost samples", "count" },
  { "sampled", "sampled share of the wall time", "%" } }
for _, key in ipairs(stages.KEYS) do cols[#cols + 1] = { "st_" .. key, stages.NAMES[key], "%" } end
cols[#cols + 1] = { "ns_per_page", "ns/page, sampled", "ns/page", function(r)
  return r.ns / (r.passes or 1) / h.pages end }
cols[#cols + 1] = { "ns_faults", "faults", "faults" }
h:columns(cols)
h:run()

h:note(("Each case is one step profiled with ft.profile at %d samples per second of CPU time (cpu-clock, "
  .. "this thread, kernel and user, call chains): pass 1 of a fresh %d MiB mapping with 4 KiB pages "
  .. "(MADV_NOHUGEPAGE) and with MADV_HUGEPAGE, an mmap with MAP_POPULATE, one read per page of a fresh "
  .. "mapping, %d re-touch passes over touched pages, and the munmap of touched pages. Shares are of all the "
  .. "case's samples over the repetitions; a sample counts toward the stage whose rule (scripts/lib/stages.lua) "
  .. "names the kernel function it interrupted, user samples toward user. The run's own counting is the "
  .. "harness's: its perf software counters around every timed step (each fault feeds their page-fault event, "
  .. "___perf_sw_event), their reads and getrusage."):format(h.cfg.FREQ, h.cfg.MIB, RETOUCHES))
h:note("No PMU in this guest: the cpu-clock timer cannot interrupt code that runs with interrupts off, so "
  .. "that time lands on the instruction that turns them back on. exc_page_fault holds the trap's entry "
  .. "(counted as entry/trap), and _raw_spin_unlock_irqrestore the work done under an irq-saving lock: "
  .. "its samples count toward its caller's stage (the LRU batch, the free lists), the locking stage only "
  .. "where its caller matches no rule.")
h:note("The sampled share is the samples' periods over the step's wall time: below 100 % the profile saw "
  .. "less time than passed (samples delayed with interrupts off, the sample's own cost, time in the host, "
  .. "the thread waiting for a CPU). "
  .. "The ns/page are with sampling on; what sampling changes in a first touch this run does not measure.")

h:finish()
