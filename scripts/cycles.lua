-- cycles.lua: the benchmark. Each repetition runs four cycles, each on a
-- fresh buffer of MIB MiB; one warm-up repetition is discarded, REPS follow.
--
--   A  mmap | pass 1 (first touch) | pass 2 | pass 2 repeated | fill | munmap
--   B  mmap | fill straight away (the faults inside the bandwidth)
--   C  mmap | pass 1 and pass 2 with a timestamp around every store
--   D  malloc | touch | touch | free (does the allocator hand the block back?)
--
-- Around every pass, outside its timed window, the fault counter is read.
-- Every pass writes its own value, and the value is read back after the
-- last touch of every buffer and after every fill.
local ft = require "ft"
local knobs = require "knobs"
local measure = require "measure"
local report = require "report"
local runfiles = require "runfiles"
local stats = require "stats"
local summary = require "summary"

local START_NS = ft.now_ns()
local SCRIPT = "cycles.lua"

local SPEC = {
  { name = "MIB", kind = "count", default = 1024, max = knobs.MIB_MAX, desc = "buffer size in MiB" },
  { name = "REPS", kind = "count", default = 15, desc = "timed repetitions after one warm-up" },
  { name = "QUICK", kind = "flag", default = false,
    desc = "1: 64 MiB and 5 reps, never published" },
  { name = "THP", kind = "choice", choices = { "default", "never", "always" }, default = "default",
    desc = "default: no advice; never/always: MADV_NOHUGEPAGE/MADV_HUGEPAGE on every mapping" },
  { name = "CYCLES", kind = "letters", letters = "ABCD", default = "ABCD", desc = "the cycles to run" },
  { name = "SLOW_NS", kind = "count", default = 200, desc = "cycle C: a page slower than this is counted" },
  { name = "STALL_NS", kind = "count_or_auto", default = "auto",
    desc = "a fault-free pass averaging more ns per page than this is a stall; "
      .. "auto: pass 2 repeated's min + 2.5 % of pass 1's min" },
}
for _, k in ipairs(runfiles.spec()) do SPEC[#SPEC + 1] = k end

-- Knobs, all checked before anything is mapped. --------------------------

local cfg = knobs.setup(SCRIPT, "The benchmark's cycles A-D on fresh buffers (see README.md).", SPEC,
  { MIB = 64, REPS = 5 }, { ... })
local bytes = cfg.MIB << 20
local page = ft.page_size()
local pages = bytes // page
knobs.check_memory(SCRIPT, cfg.MIB, bytes + 2 * pages * 8) -- the buffer and cycle C's samples

local ghz, ghz_source = knobs.clock_ghz(SCRIPT)

-- What this run is called and where it writes.
local variant = {}
if cfg.THP ~= "default" then variant[#variant + 1] = "thp-" .. cfg.THP end
if cfg.CYCLES ~= "ABCD" then variant[#variant + 1] = "cycles-" .. cfg.CYCLES end
local name = cfg.QUICK and "quick" or (#variant > 0 and table.concat(variant, "-") or "main")
local prefix = name == "main" and "" or name .. "-"
local plan = runfiles.plan(SCRIPT, name, cfg) -- made and checked before anything is mapped

local run_cycle = {}
for letter in cfg.CYCLES:gmatch(".") do run_cycle[letter] = true end

local map_options = { thp = cfg.THP }

-- Distinct values: a pass that did not run cannot leave the expected sum.
local V = { pass1 = 0x11, pass2 = 0x22, pass2r = 0x33, d1 = 0x44, d2 = 0x55, c1 = 0x66, c2 = 0x77 }
local K = { A = 0x9E3779B97F4A7C15, B = 0xC2B2AE3D27D4EB4F }

-- What the repetitions record. ------------------------------------------

local series = {}   -- "A.pass1" -> {ns = {}, faults = {}}
local details = {}  -- per-rep extras: thp bytes, cycle C page stats, malloc reuse
local timed = false -- false during the warm-up

local function put(key, ns, faults)
  if not timed then return end
  local s = series[key]
  if not s then s = { ns = {}, faults = {} }; series[key] = s end
  s.ns[#s.ns + 1] = ns
  s.faults[#s.faults + 1] = faults
end

local function note(key, value)
  if not timed then return end
  local d = details[key]
  if not d then d = {}; details[key] = d end
  d[#d + 1] = value
end

-- The cycles. ------------------------------------------------------------

local function cycle_A()
  local thp0 = ft.vmstat().thp_fault_alloc or 0
  local b <close>, map_ns, map_faults = measure.map(bytes, map_options)
  put("A.mmap", map_ns, map_faults)
  put("A.pass1", measure.pass(b, "touch", V.pass1))
  note("A.thp_bytes", assert(b:thp_bytes()))
  note("A.thp_fault_alloc", (ft.vmstat().thp_fault_alloc or 0) - thp0)
  put("A.pass2", measure.pass(b, "touch", V.pass2))
  put("A.pass2r", measure.pass(b, "touch", V.pass2r))
  measure.check_bytes(b, V.pass2r, "A, pass 2 repeated")
  put("A.fill", measure.pass(b, "fill", K.A))
  measure.check_words(b, K.A, "A, pass 3 (fill)")
  put("A.munmap", measure.release(b))
end

local function cycle_B()
  local b <close> = measure.map(bytes, map_options)
  put("B.fill", measure.pass(b, "fill", K.B))
  measure.check_words(b, K.B, "B, fresh fill")
  measure.release(b)
end

local samples1, samples2 -- made before the first rep: written, so no faults of their own

local function page_stats(s, key)
  local runs, longest = s:runs_above(cfg.SLOW_NS)
  note(key .. ".median", s:median())
  note(key .. ".slow_pct", 100 * s:count_above(cfg.SLOW_NS) / #s)
  note(key .. ".slow_mean", s:mean_above(cfg.SLOW_NS))
  note(key .. ".runs", runs)
  note(key .. ".longest", longest)
end

local function cycle_C()
  local b <close> = measure.map(bytes, map_options)
  put("C.pass1", measure.pass(b, "touch_timed", V.c1, samples1))
  put("C.pass2", measure.pass(b, "touch_timed", V.c2, samples2))
  measure.check_bytes(b, V.c2, "C, timed pass 2")
  measure.release(b)
  page_stats(samples1, "C.pass1")
  page_stats(samples2, "C.pass2")
end

local last_freed -- the address the previous cycle D freed

local function cycle_D()
  local m <close>, malloc_ns, malloc_faults = measure.malloc(bytes)
  put("D.malloc", malloc_ns, malloc_faults)
  note("D.same_block", m.addr == last_freed)
  put("D.touch1", measure.pass(m, "touch", V.d1))
  put("D.touch2", measure.pass(m, "touch", V.d2))
  measure.check_bytes(m, V.d2, "D, touch 2")
  last_freed = m.addr
  put("D.free", measure.release(m))
end

local CYCLES = { { "A", cycle_A }, { "B", cycle_B }, { "C", cycle_C }, { "D", cycle_D } }

local function repetition(label)
  local t0 = ft.now_ns()
  io.stderr:write(("%s: %s:"):format(SCRIPT, label))
  for _, c in ipairs(CYCLES) do
    if run_cycle[c[1]] then
      io.stderr:write(" ", c[1])
      io.stderr:flush()
      collectgarbage("collect") -- no collector work is left for the cycle
      collectgarbage("stop")
      c[2]()
      collectgarbage("restart")
    end
  end
  io.stderr:write((" (%.1f s)\n"):format((ft.now_ns() - t0) / 1e9))
end

-- Statistics and result lines. -------------------------------------------

local function per_page(ns) return ns / pages end
local function gbps(ns) return bytes / ns end

local function faults_of(s)
  return stats.median(s.faults), stats.max(s.faults)
end

-- auto: pass 2 repeated's floor plus 2.5 % of the pages at pass 1's cost
local function stall_threshold()
  if cfg.STALL_NS ~= "auto" then return cfg.STALL_NS, "STALL_NS" end
  local p1, p2r = series["A.pass1"], series["A.pass2r"]
  if not (p1 and p2r) then p1, p2r = series["D.touch1"], series["D.touch2"] end
  if not (p1 and p2r) then return nil end
  local floor = stats.min(stats.map(p2r.ns, per_page))
  return floor + 0.025 * stats.min(stats.map(p1.ns, per_page)), "auto"
end

local ROWS = {
  { "A.mmap", "page" }, { "A.pass1", "touch" }, { "A.pass2", "touch" }, { "A.pass2r", "touch" },
  { "A.fill", "fill" }, { "A.munmap", "page" }, { "B.fill", "fill" },
  { "C.pass1", "page" }, { "C.pass2", "page" },
  { "D.malloc", "page" }, { "D.touch1", "touch" }, { "D.touch2", "touch" }, { "D.free", "page" },
}

local function result_lines()
  local lines = {}
  local function add(fields) lines[#lines + 1] = report.line(fields) end
  local threshold, threshold_source = stall_threshold()

  for _, r in ipairs(ROWS) do
    local key, kind = r[1], r[2]
    local s = series[key]
    if s then
      local cycle, pass = key:match("^(%a)%.(.+)$")
      local fmed, fmax = faults_of(s)
      if kind == "fill" then
        local bw = stats.map(s.ns, gbps)
        add { { "type", "bandwidth" }, { "cycle", cycle }, { "pass", pass }, { "unit", "GB/s" },
          { "median", stats.median(bw) }, { "cv", stats.cv(bw) }, { "max", stats.max(bw) },
          { "ms_median", stats.median(s.ns) / 1e6 },
          { "faults_med", fmed }, { "faults_max", fmax } }
      else
        local pp = stats.map(s.ns, per_page)
        local fields = { { "type", "row" }, { "cycle", cycle }, { "pass", pass }, { "unit", "ns/page" },
          { "min", stats.min(pp) }, { "median", stats.median(pp) }, { "cv", stats.cv(pp) },
          { "us_median", stats.median(s.ns) / 1e3 },
          { "faults_med", fmed }, { "faults_max", fmax }, { "cycles", stats.min(pp) * ghz } }
        if kind == "touch" and fmed == 0 and threshold then
          local above, worst = 0, 0
          for _, x in ipairs(pp) do
            if x > threshold then above = above + 1 end
            if x > worst then worst = x end
          end
          fields[#fields + 1] = { "stalls", above }
          fields[#fields + 1] = { "of", #pp }
          fields[#fields + 1] = { "worst", worst }
          fields[#fields + 1] = { "threshold", threshold }
          fields[#fields + 1] = { "threshold_from", threshold_source }
        end
        add(fields)
      end
    end
  end

  if details["A.thp_bytes"] then
    local huge = stats.median(details["A.thp_bytes"])
    local pmd = ft.machine().thp_pmd_size -- 0 on a kernel without THP
    local small = (bytes - huge) // page
    local obtained = huge == 0 and page or (huge == bytes and pmd or "mixed")
    local huge_faults = pmd > 0 and huge // pmd or 0
    add { { "type", "thp" }, { "cycle", "A" }, { "asked", cfg.THP }, { "bytes", bytes },
      { "thp_bytes_med", huge }, { "thp_bytes_min", stats.min(details["A.thp_bytes"]) },
      { "page_obtained", obtained },
      { "faults_expected", math.tointeger(huge_faults + small) or huge_faults + small },
      { "thp_fault_alloc_med", stats.median(details["A.thp_fault_alloc"]) } }
  end

  for _, pass in ipairs { "pass1", "pass2" } do
    local key = "C." .. pass
    if details[key .. ".median"] then
      local slow = details[key .. ".slow_pct"]
      add { { "type", "pages" }, { "cycle", "C" }, { "pass", pass },
        { "median_page_ns", stats.median(details[key .. ".median"]) },
        { "slow_ns", cfg.SLOW_NS }, { "slow_pct_min", stats.min(slow) }, { "slow_pct_med", stats.median(slow) },
        { "slow_pct_max", stats.max(slow) }, { "slow_mean_ns", stats.median(details[key .. ".slow_mean"]) },
        { "runs_med", stats.median(details[key .. ".runs"]) },
        { "longest_med", stats.median(details[key .. ".longest"]) },
        { "longest_max", stats.max(details[key .. ".longest"]) } }
    end
  end

  if details["D.same_block"] then
    local same = 0
    for _, v in ipairs(details["D.same_block"]) do if v then same = same + 1 end end
    add { { "type", "malloc" }, { "cycle", "D" }, { "same_address", same }, { "of", #details["D.same_block"] },
      { "malloc_us_med", stats.median(series["D.malloc"].ns) / 1e3 },
      { "free_us_med", stats.median(series["D.free"].ns) / 1e3 } }
  end

  -- The headline ratios.
  local function min_pp(key) return series[key] and stats.min(stats.map(series[key].ns, per_page)) end
  local function med_ns(key) return series[key] and stats.median(series[key].ns) end
  local function med_bw(key) return series[key] and stats.median(stats.map(series[key].ns, gbps)) end
  local function ratio(name, a, b, what)
    if a and b then
      add { { "type", "ratio" }, { "name", name }, { "value", a / b }, { "a", a }, { "b", b }, { "what", what } }
    end
  end
  ratio("first_touch", min_pp("A.pass1"), min_pp("A.pass2r"), "pass_1_over_pass_2_repeated_(min_ns/page)")
  ratio("fill_bandwidth", med_bw("A.fill"), med_bw("B.fill"), "touched_fill_over_fresh_fill_(median_GB/s)")
  local p1, tf = med_ns("A.pass1"), med_ns("A.fill")
  ratio("fresh_fill_time", med_ns("B.fill") and med_ns("B.fill") / 1e6, p1 and tf and (p1 + tf) / 1e6,
    "fresh_fill_ms_over_(pass_1_+_touched_fill)_ms_(medians)")
  ratio("malloc_first_touch", min_pp("D.touch1"), min_pp("A.pass1"), "malloc_touch_1_over_mmap_pass_1_(min_ns/page)")
  ratio("munmap_share", min_pp("A.munmap"), min_pp("A.pass1"), "munmap_over_pass_1_(min_ns/page)")

  -- Where the wall time went, so far: the C work against everything else.
  local wall = ft.now_ns() - START_NS
  add { { "type", "accounting" }, { "wall_ms", wall / 1e6 }, { "work_ms", measure.work_ns / 1e6 },
    { "own_ms", (wall - measure.work_ns) / 1e6 }, { "own_pct", 100 * (wall - measure.work_ns) / wall } }
  return lines
end

local function to_json(lines, header_machine, clock_info)
  local rows = {}
  for _, line in ipairs(lines) do rows[#rows + 1] = report.parse(line) end
  return report.json {
    script = SCRIPT, name = name, date = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    knobs = { MIB = cfg.MIB, REPS = cfg.REPS, THP = cfg.THP, CYCLES = cfg.CYCLES,
      SLOW_NS = cfg.SLOW_NS, STALL_NS = tostring(cfg.STALL_NS) },
    machine = header_machine, clock = clock_info, clock_ghz = ghz, clock_ghz_source = ghz_source,
    results = rows, series = series, checks = measure.checks,
  } .. "\n"
end

-- The run. ---------------------------------------------------------------

local clock_info = ft.clock()
local title = ("ftrun cycles.lua: %s, %d MiB, %d reps after 1 warm-up, THP=%s, CYCLES=%s"):format(
  name, cfg.MIB, cfg.REPS, cfg.THP, cfg.CYCLES)
local header, machine = report.header(title, clock_info, ghz, ghz_source)
io.stderr:write(title, "\n")
local function out(file) return prefix .. file end

if run_cycle.C then
  samples1, samples2 = ft.samples(pages), ft.samples(pages)
end

measure.on_mismatch = function(msg)
  io.stderr:write("\n", SCRIPT, ": ", msg, "; no summary written, README left alone\n")
  if not plan.publish then -- a run directory of its own: the failed verdict goes on record
    runfiles.write(plan, { { out("raw.txt"), header .. "\nCHECKSUMS FAILED: " .. msg .. "\n" } })
  end
end

repetition("warm-up")
timed = true
for rep = 1, cfg.REPS do repetition(("rep %d/%d"):format(rep, cfg.REPS)) end

local lines = result_lines()
local verdict = ("CHECKSUMS OK: %d read-backs matched the values written"):format(measure.checks)
local raw = header .. "\n" .. table.concat(lines, "\n") .. "\n" .. verdict .. "\n"
local md = summary.cycles(report.parse_all(raw), title, machine, clock_info, ghz, ghz_source, verdict)

io.stdout:write(md)
runfiles.write(plan, { { out("raw.txt"), raw }, { out("summary.md"), md },
  { out("results.json"), to_json(lines, machine, clock_info) } }, { [name] = md })
