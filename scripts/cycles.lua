-- cycles.lua: the benchmark. Each repetition runs four cycles, each on a
-- fresh buffer of MIB MiB; one warm-up repetition is discarded, REPS follow.
--
--   A  mmap | pass 1 (first touch) | pass 2 | pass 2 repeated | fill | munmap
--   B  mmap | fill straight away (the faults inside the bandwidth)
--   C  mmap | pass 1 and pass 2 with a timestamp around every store
--   D  malloc | touch | touch | free (does the allocator hand the block back?)
--
-- Around every pass, outside its timed window, the fault counter is read. Every pass
-- writes its own value, read back after the last touch of every buffer and every fill.
local ft = require "ft"
local harness = require "harness"
local knobs = require "knobs"
local pagesizes = require "pagesizes"
local period = require "period"
local plant = require "plant"
local report = require "reports.cycles"
local slowrun = require "slowrun"

-- THP=16K (any multi-size THP size offered below the PMD size): that folio size alone.
local SIZES, FOLIO = pagesizes.multi_size()
local THP_CHOICES = table.move(SIZES, 1, #SIZES, 4, { "default", "never", "always" })

-- THP's setting for the mappings that follow: a folio size is set machine-wide
-- (restored at the run's end), never/always/default are advice on each mapping.
-- AB changes it between its sides (the THP knob's apply).
local folio, map_options
local function use_thp(value)
  if folio then assert(ft.sysfs_restore()) end -- the previous side's folio sizes
  folio = FOLIO[value]
  if folio then
    local ok, err = pagesizes.only(folio.kb)
    if not ok then knobs.fail("cycles.lua", ("THP=%s: %s"):format(value, err)) end
  end
  map_options = { thp = folio and "always" or value }
end

local h = harness.start({ script = "cycles", about = "the benchmark's cycles A-D on fresh buffers",
  mib = 1024, reps = 15, warmup = 1, quick = { MIB = 64, REPS = 5 }, limits = { "timer", "fault_cost" },
  decide = { { "A", "pass1" } }, -- the first touch: what the benchmark is asked
  knobs = {
    { name = "THP", kind = "choice", choices = THP_CHOICES, default = "default", apply = use_thp,
      desc = "default: no advice; never/always: MADV_NOHUGEPAGE/MADV_HUGEPAGE on every mapping; "
        .. "a size (16K): MADV_HUGEPAGE with only that folio size enabled (madvise, every other never)" },
    { name = "CYCLES", kind = "letters", letters = "ABCD", default = "ABCD", desc = "the cycles to run" },
    { name = "SLOW_NS", kind = "count", default = 200, ab = true, desc = "cycle C: a page slower than this counts" },
    { name = "CAUSES", kind = "flag", default = false,
      desc = "1: cycle C's passes traced (ft.trace) and each slow page given its cause; off by default, "
        .. "tracing changes what a first touch costs; slowpages.lua measures by how much" },
    plant.knob("cycle A's pass 1"),
    { name = "STALL_NS", kind = "count_or_auto", default = "auto",
      desc = "a fault-free pass averaging more ns per page than this is a stall; "
        .. "auto: pass 2 repeated's min + 2.5 % of pass 1's min" },
  },
  run = function(cfg) -- the run's name: its files' prefix and its README block
    if cfg.QUICK then return "quick" end
    local parts = { cfg.THP ~= "default" and "thp-" .. cfg.THP or nil }
    if cfg.CYCLES ~= "ABCD" then parts[#parts + 1] = "cycles-" .. cfg.CYCLES end
    return #parts > 0 and table.concat(parts, "-") or "main"
  end,
  memory = function(_, bytes, pages) return bytes + 2 * pages * 8 end, -- cycle C's samples too
  -- cycle C's slow page must cost more than the timer: a SLOW_NS given below twice it is refused,
  check = function(cfg, clock) -- the default warned of (a dear timer never stops an untuned run)
    if plant.refused(cfg) then return plant.refused(cfg) end
    local cost = clock.timed.read_ns
    if cfg.CYCLES:find("C", 1, true) and cfg.SLOW_NS < 2 * cost then
      local why = ("SLOW_NS=%d: expected at least twice the per-page timer's cost (%.1f ns), or a plain store "
        .. "could count as slow"):format(cfg.SLOW_NS, cost)
      if cfg.given.SLOW_NS then return why end
      return nil, why .. " (the default, kept: cycle C's slow-page share may count plain stores)"
    end
  end,
}, { ... })
local cfg = h.cfg
use_thp(cfg.THP) -- for the whole run; a refusal stops it before anything is mapped

-- Distinct values: a pass that did not run cannot leave the expected sum.
local V = { pass1 = 0x11, pass2 = 0x22, pass2r = 0x33, d1 = 0x44, d2 = 0x55, c1 = 0x66, c2 = 0x77 }
local K = { A = 0x9E3779B97F4A7C15, B = 0xC2B2AE3D27D4EB4F }

local CYCLE = {}

function CYCLE.A(r)
  local thp0 = ft.vmstat().thp_fault_alloc or 0
  local folio0 = folio and ft.folio(folio.kb).anon_fault_alloc
  local b <close> = r:map("mmap", map_options)
  r:pass("pass1", b, "touch", V.pass1, plant.spin(cfg))
  r.thp_bytes = assert(b:thp_bytes())
  r.thp_fault_alloc = (ft.vmstat().thp_fault_alloc or 0) - thp0
  r.folio_alloc = folio and ft.folio(folio.kb).anon_fault_alloc - folio0 -- its own size's counter
  r:pass("pass2", b, "touch", V.pass2)
  r:pass("pass2r", b, "touch", V.pass2r)
  r:check_bytes(b, V.pass2r, "A, pass 2 repeated")
  r:pass("fill", b, "fill", K.A)
  r:check_words(b, K.A, "A, pass 3 (fill)")
  r:release("munmap", b)
end

function CYCLE.B(r)
  local b <close> = r:map(nil, map_options)
  r:pass("fill", b, "fill", K.B)
  r:check_words(b, K.B, "B, fresh fill")
  r:release(nil, b) -- timed: a 1 GiB munmap is 0.1-0.3 s, the run's work, not the runner's
end

-- Made before the first repetition: written once, so no faults of their own.
local samples = cfg.CYCLES:find("C") and { pass1 = ft.samples(h.pages), pass2 = ft.samples(h.pages) }

-- CAUSES=1: the passes under ft.trace, each slow page matched to the
-- events in its window (slowrun.lua, slowcause.lua).
local function traced_c(r, rep, b)
  local tr <close>, why = slowrun.open(h.pages)
  if not tr then return false, why end
  local timer = h.clock.timed
  local opts = { slow_ns = cfg.SLOW_NS, resolution_ns = math.max(timer.tick_ns or 0, timer.step_ns or 0) }
  local p1 = slowrun.pass(tr, b, samples.pass1, V.c1)
  local p2 = slowrun.pass(tr, b, samples.pass2, V.c2)
  r:work(p1.ns + p2.ns)
  slowrun.keep(r, rep, 1, p1, opts)
  slowrun.keep(r, rep, 2, p2, opts)
  return true
end

function CYCLE.C(r, rep)
  local b <close> = r:map(nil, map_options)
  if cfg.CAUSES then
    local ok, why = traced_c(r, rep, b)
    if not ok then return false, why end
  else
    r:pass("pass1", b, "touch_timed", V.c1, samples.pass1)
    r:pass("pass2", b, "touch_timed", V.c2, samples.pass2)
  end
  r:check_bytes(b, V.c2, "C, timed pass 2")
  r:release(nil, b)
  for pass, s in pairs(samples) do -- the histogram log-spaced, for the distribution's plot
    for k, v in pairs(report.sample_figures(s, cfg.SLOW_NS)) do r[pass .. "_" .. k] = v end
  end
end

local last_freed -- the address the previous cycle D freed

function CYCLE.D(r)
  local m <close> = r:malloc("malloc")
  r.same_block = m.addr == last_freed and 1 or 0
  r:pass("touch1", m, "touch", V.d1)
  r:pass("touch2", m, "touch", V.d2)
  r:check_bytes(m, V.d2, "D, touch 2")
  last_freed = m.addr
  r:release("free", m)
end

for letter in ("ABCD"):gmatch(".") do
  if cfg.CYCLES:find(letter, 1, true) then h:case(letter, CYCLE[letter], { params = { cycle = letter } }) end
end

-- every column is recorded only when its cycle runs (CYCLES) or, folio_alloc, with THP=<size>
for _, c in ipairs(report.COLUMNS) do c.optional = true end
h:columns(report.COLUMNS)
h:run()
-- the last repetition's per-page samples, for the page map, and where its slow pages sit by index
for pass, s in pairs(samples or {}) do h:attach(("C-%s-samples.i32"):format(pass), report.pack_samples(s, pass)) end
if samples then period.note(h, "Cycle C", { { 1, samples.pass1 }, { 2, samples.pass2, cfg.SLOW_NS } }) end
-- The headline ratios, each within every repetition (the other figures: reports/cycles.lua).
local pass1 = { "A", "pass1" }
h:ratio("first_touch", pass1, { "A", "pass2r" }, { minima = true })
h:ratio("fill_bandwidth", { "A", "fill" }, { "B", "fill" })
h:ratio("fresh_fill_time", { "B", "fill" }, { pass1, { "A", "fill" } }, { time = true })
h:ratio("malloc_first_touch", { "D", "touch1" }, pass1, { minima = true })
h:ratio("munmap_share", { "A", "munmap" }, pass1, { minima = true })
h:finish()
