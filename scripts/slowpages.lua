-- slowpages.lua: every slow page named by the kernel events inside its
-- window. Each case maps a fresh buffer and runs pass 1 (the first touch)
-- and pass 2 with a timestamp around every store (ft.touch_timed_at) while
-- ft.trace records the thread's faults, interrupts, IPIs and context
-- switches and, on every CPU, DAMON and reclaim; scripts/lib/slowcause.lua
-- gives each page slower than SLOW_NS its events and a cause.
--
-- PLANT puts one known cause in, so that the matching can be checked
-- against what was done: dontneed (MADV_DONTNEED on pages 0, 16, 32, ...
-- between pass 1 and pass 2: those pages fault again in pass 2), tlb (a
-- thread of this process maps, touches and unmaps a page in a loop on the
-- other CPU during pass 2: every munmap shoots down the pass's TLB),
-- preempt (a busy thread pinned to the pass's CPU during both passes). The
-- planted cause is scored in pass 2, and for preempt in pass 1 as well
-- (pass 2 is often shorter than a scheduler slice; in pass 1 every page
-- faults, and the fault takes precedence over an IPI in the same page). The
-- cases "no events" run the same passes untraced: tracing's cost, measured
-- in the same run.
local ft = require "ft"
local harness = require "harness"
local period = require "period"
local slowcause = require "slowcause"
local slowrun = require "slowrun"
local stats = require "stats"

local h = harness.start({ script = "slowpages", shuffle = true, mib = 256, reps = 5,
  quick = { MIB = 64, REPS = 3 },
  -- the period experiment's files sit beside the plain run's (exp-slowperiod-*), not in their place
  run = function(c)
    return (c.QUICK and "quick-" or "exp-") .. (c.EXPERIMENT == "period" and "slowperiod" or "slowpages")
  end,
  about = "every slow page named by the kernel events in its window (ft.trace)",
  knobs = {
    { name = "PLANT", kind = "choice", choices = { "none", "dontneed", "tlb", "preempt" }, default = "none",
      desc = "a known cause planted: none, dontneed (pages 0, 16, 32, ... before pass 2), tlb (munmaps of "
        .. "another thread), preempt (a busy thread on the same CPU)" },
    { name = "SLOW_NS", kind = "count", default = 200, desc = "a page slower than this (ns) is slow" },
    { name = "EXPERIMENT", kind = "choice", choices = { "none", "period" }, default = "none",
      desc = "period: the walks that decide what pass 2's slow pages follow (forward, samples shifted 4 bytes, "
        .. "backward, stride 7, forward 50 ms after pass 1, one page stored again and again, the first 32 pages "
        .. "again and again, each with pass 3 over the same pages as control; scripts/lib/slowwalks.lua)" },
    { name = "THP_CASES", kind = "choice", choices = { "both", "never", "always" }, default = "both",
      desc = "THP of the buffers: never, always, or both as separate cases (with a PLANT: never unless given)" },
  },
  -- a plant that cannot run here is a bad knob, refused before anything is mapped
  check = function(c)
    -- the walks' 2 MiB regions are counted from the buffer's start, which is 2 MiB aligned only then
    if c.EXPERIMENT == "period" and c.MIB % 2 ~= 0 then
      return ("EXPERIMENT=period with MIB=%d: expected an even number of MiB (whole 2 MiB regions)"):format(c.MIB)
    end
    if c.EXPERIMENT ~= "none" and c.PLANT ~= "none" then
      return ("EXPERIMENT=%s with PLANT=%s: the experiment plants nothing; give one of them"):format(c.EXPERIMENT,
        c.PLANT)
    end
    if c.PLANT == "tlb" and #ft.affinity() < 2 then
      return ("PLANT=tlb: needs two CPUs to run on (this process may use %d: %s)"):format(#ft.affinity(),
        table.concat(ft.affinity(), ","))
    end
  end,
  memory = function(_, bytes) return 2 * bytes end }, { ... })

local cfg = h.cfg
local PLANT, SLOW_NS = cfg.PLANT, cfg.SLOW_NS
local STRIDE = 16 -- dontneed: one page in STRIDE
local GAP_NS = 20000 -- preempt: a busy loop's readings further apart than this: it was not running
local clock = h.clock.timed
local RESOLUTION_NS = math.max(clock.tick_ns or 0, clock.step_ns or 0)

local modes
if cfg.THP_CASES == "both" and (PLANT == "none" or cfg.given.THP_CASES) then modes = { "never", "always" }
elseif cfg.THP_CASES == "both" then modes = { "never" }
else modes = { cfg.THP_CASES } end

if cfg.EXPERIMENT == "period" then
  return require("slowwalks").run(h, modes, SLOW_NS, RESOLUTION_NS)
end

-- The helper threads of the plants. Each returns its own times: tlb the
-- [start, end] of every munmap, preempt the [start, end] of every stretch
-- it ran without a gap.
local HELPER = [[
local _, plant, gap, ready = ...
local page = ft.page_size()
return function()
  local spans, n = {}, 0
  ready:poke(0, 1) -- the starter waits for this before its pass
  if plant == "tlb" then
    while not ft.task.time_up() do
      local m = assert(ft.mmap(page))
      m:touch(1)
      local a = ft.now_ns()
      m:unmap()
      spans[n + 1], spans[n + 2], n = a, ft.now_ns(), n + 2
      ready:poke(1, n // 2 % 255 + 1) -- a heartbeat: the loop is running now
    end
  else
    local first = ft.now_ns()
    local prev, k = first, 0
    while true do
      local now = ft.now_ns()
      if now - prev > gap then
        spans[n + 1], spans[n + 2], n = first, prev, n + 2
        first = now
      end
      prev, k = now, k + 1
      if k % 1024 == 0 and ft.task.time_up() then break end
    end
    spans[n + 1], spans[n + 2] = first, prev
  end
  return spans
end]]

-- The CPUs the helper and the pass run on: the same for preempt, two
-- different ones for tlb (the task takes the first allowed CPU).
local allowed = ft.affinity()
local function start_helper(pass_no)
  if PLANT ~= "preempt" and (PLANT ~= "tlb" or pass_no ~= 2) then return nil end
  local cpu = PLANT == "preempt" and allowed[1] or allowed[2]
  if not cpu then return nil, "PLANT=tlb needs two CPUs" end
  local ready = assert(ft.mmap(ft.page_size()))
  ready:poke(0, 0)
  local task = ft.start(1, HELPER, { mode = "threads", pin = true, args = { PLANT, GAP_NS, ready } })
  ft.affinity { cpu }
  local deadline = ft.now_ns() + 5000000000
  while ready:peek(0) == 0 and ft.now_ns() < deadline do ft.sleep(0.0005) end
  assert(ready:peek(0) == 1, "the plant's helper thread did not start within 5 s")
  if PLANT == "tlb" then -- two heartbeats: it is unmapping now, not waiting for a CPU
    for _ = 1, 2 do
      local beat = ready:peek(1)
      while ready:peek(1) == beat and ft.now_ns() < deadline do end
    end
  else
    ft.sleep(0.002)
  end
  return { task = task, ready = ready }
end
local function stop_helper(helper)
  if not helper then return {} end
  helper.task:stop()
  local report = helper.task:wait()
  helper.ready:unmap()
  ft.affinity(allowed)
  return report.tasks[1].values[1]
end

-- Whether [lo, hi) overlaps one of the spans {a1, b1, a2, b2, ...} (sorted).
local function overlaps(spans, lo, hi)
  for k = 1, #spans, 2 do
    if spans[k] < hi and spans[k + 1] >= lo then return true end
    if spans[k] >= hi then return false end
  end
  return false
end

-- The planted cause's truth for one pass: {planted, found, classified,
-- right} counted over the slow pages (see the note under the table).
local PLANTED_CAUSE = { dontneed = "fault", tlb = "IPI / TLB shootdown", preempt = "preempted" }
local function score(pass_no, m, p, spans)
  local cause = PLANTED_CAUSE[PLANT]
  local out = { planted = 0, found = 0, classified = 0, right = 0, spans = #spans // 2 }
  if not cause or (PLANT ~= "preempt" and pass_no ~= 2) then return out end
  local ends = slowcause.windows(p.samples, p.timing)
  for _, page in ipairs(m.slow) do
    local truth
    if PLANT == "dontneed" then truth = page.index % STRIDE == 0
    else truth = overlaps(spans, ends[page.index], ends[page.index + 1]) end
    if truth then out.planted = out.planted + 1 end
    if page.cause == cause then
      out.classified = out.classified + 1
      if truth then out.right = out.right + 1 end
    end
    if truth and page.cause == cause then out.found = out.found + 1 end
  end
  if PLANT == "tlb" then -- each munmap while the pass ran on its CPU is one shootdown sent to it
    local off, e, out_at = {}, p.events, nil -- the pass's thread off its CPU: {from, to, ...}
    for k = 1, e.n do
      if e.name[k] == "switch:out" or e.name[k] == "switch:preempt" then out_at = e.time[k]
      elseif e.name[k] == "switch:in" and out_at then off[#off + 1], off[#off + 2], out_at = out_at, e.time[k], nil end
    end
    out.planted = 0
    for k = 1, #spans, 2 do
      if spans[k] >= p.start and spans[k + 1] <= p.start + p.ns and not overlaps(off, spans[k], spans[k + 1] + 1) then
        out.planted = out.planted + 1
      end
    end
    out.found = math.min(out.right, out.planted)
  end
  return out
end

-- A pass's matching kept in the record, with the planted cause's score.
local function keep_pass(r, rep, pass_no, p, spans)
  local m = slowrun.keep(r, rep, pass_no, p, { slow_ns = SLOW_NS, resolution_ns = RESOLUTION_NS })
  r["pass" .. pass_no .. "_score"] = score(pass_no, m, p, spans)
end

local function case_name(mode, traced)
  local plant = PLANT ~= "none" and (", PLANT=" .. PLANT) or ""
  return ("THP=%s%s%s"):format(mode, plant, traced and "" or ", no events")
end

-- Where each case's slow pages sat by page index in its last repetition (period.lua).
local where = {}
local function keep_period(name, pass_no, s)
  where[name .. ": pass " .. pass_no] = period.describe(period.of_samples(s, pass_no == 2 and SLOW_NS or nil,
    (2 << 20) // ft.page_size()))
end

local function traced_case(mode)
  return function(r, rep)
    local tr <close>, why = slowrun.open(h.pages)
    if not tr then return false, why end
    local b <close> = r:map(nil, { thp = mode })
    local s = ft.samples(b.pages)
    local task, refused = start_helper(1)
    if refused then return false, refused end
    local p1 = slowrun.pass(tr, b, s, 1)
    keep_period(case_name(mode, true), 1, s)
    local spans1 = stop_helper(task)
    if PLANT == "dontneed" then assert(ft.plant_dontneed(b, STRIDE)) end
    task, refused = start_helper(2)
    if refused then return false, refused end
    local p2 = slowrun.pass(tr, b, s, 2)
    keep_period(case_name(mode, true), 2, s)
    local spans2 = stop_helper(task)
    r:work(p1.ns + p2.ns)
    r:check_bytes(b, 2, "pass 2")
    keep_pass(r, rep, 1, p1, spans1)
    keep_pass(r, rep, 2, p2, spans2)
  end
end

local function untraced_case(mode)
  return function(r)
    local b <close> = r:map(nil, { thp = mode })
    local s = ft.samples(b.pages)
    local f0 = ft.faults()
    r.pass1 = ft.touch_timed_at(b, 1, s)
    local f1 = ft.faults()
    keep_period(case_name(mode, false), 1, s)
    r.pass2 = ft.touch_timed_at(b, 2, s)
    keep_period(case_name(mode, false), 2, s)
    r.pass1_faults, r.pass2_faults = f1 - f0, ft.faults() - f1
    r:work(r.pass1 + r.pass2)
    r:check_bytes(b, 2, "pass 2")
  end
end

for _, mode in ipairs(modes) do
  h:case(case_name(mode, true), traced_case(mode))
  if PLANT == "none" then h:case(case_name(mode, false), untraced_case(mode)) end
end
h:columns {
  { "pass1", "pass 1", "ns/page" }, { "pass2", "pass 2", "ns/page" },
  { "pass1_faults", "pass 1 faults", "faults" }, { "pass2_faults", "pass 2 faults", "faults" },
  { "pass1_slow", "pass 1 slow pages", "pages" }, { "pass2_slow", "pass 2 slow pages", "pages" },
  { "pass1_lost", "pass 1 events lost", "count" }, { "pass2_lost", "pass 2 events lost", "count" },
  { "pass1_fault_entry_ns", "pass 1: page start to fault entry", "ns" },
  { "pass1_fault_rest_ns", "pass 1: fault entry to the page's end", "ns" },
}
h:run()
do
  local names = {}
  for name in pairs(where) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    h:note(("Slow pages by index, %s, last repetition (%s): %s"):format(name,
      name:find("pass 1$") and "above twice its median" or "above SLOW_NS", where[name]))
  end
end

-- Per pass, over every repetition of a case: slow pages by cause (count,
-- share, median cost), their runs, the planted cause's recall and
-- precision, as RESULT values; reports/slowpages.lua makes the tables.
local function pass_values(case, pass_no)
  local recs, key = case.records, "pass" .. pass_no
  slowrun.values(h, case, pass_no, SLOW_NS)
  if PLANT ~= "none" and (PLANT == "preempt" or pass_no == 2) then
    local sc = { planted = 0, found = 0, classified = 0, right = 0 }
    for _, r in ipairs(recs) do
      for k in pairs(sc) do sc[k] = sc[k] + r[key .. "_score"][k] end
    end
    local fields = { { "case", case.name }, { "pass", pass_no }, { "plant", PLANT },
      { "cause", PLANTED_CAUSE[PLANT] } }
    if sc.planted > 0 then
      h:value("recall", 100 * sc.found / sc.planted, "%", { fields[1], fields[2], fields[3], fields[4],
        { "found", sc.found }, { "planted", sc.planted } })
    end
    if sc.classified > 0 then
      h:value("precision", 100 * sc.right / sc.classified, "%", { fields[1], fields[2], fields[3], fields[4],
        { "right", sc.right }, { "classified", sc.classified } })
    end
  end
end

-- The fault in time: from the page's start to page_fault_user's entry
-- (the store reaching the trap), and from the entry to the page's end (the
-- handling, the return and the timestamp): percentiles per repetition,
-- their medians over the repetitions.
local function fault_values(case)
  local splits = {}
  for _, r in ipairs(case.records) do
    if r.pass1_fault_split then splits[#splits + 1] = r.pass1_fault_split end
  end
  if #splits == 0 then return end
  for _, part in ipairs { "entry", "rest" } do
    for _, pc in ipairs { 10, 50, 90, 99 } do
      h:value("fault_" .. part, stats.median(stats.map(splits, function(x) return x[part .. "_p" .. pc] end)), "ns",
        { { "case", case.name }, { "percentile", pc }, { "reps", #splits },
          { "pages", stats.median(stats.map(splits, function(x) return x.pages end)) } })
    end
  end
end

-- Pass 1 repetition by repetition: its cost beside the fault's split and
-- everything the guest saw, so that a slow regime shows whether any guest
-- event goes with it.
local function regime_values(case)
  for rep, r in ipairs(case.records) do
    local split, ev = r.pass1_fault_split or {}, r.pass1_event_causes or {}
    h:value("pass1_rep", r.pass1 / h.pages, "ns/page", { { "case", case.name }, { "rep", rep },
      { "entry_p50", split.entry_p50 }, { "rest_p50", split.rest_p50 }, { "not_fault", r.pass1_slow_not_fault },
      { "preempted", ev.preempted or 0 }, { "timer", ev["timer interrupt"] or 0 },
      { "ipi", ev["IPI / TLB shootdown"] or 0 }, { "other_irq", ev["other interrupt"] or 0 },
      { "damon", ev["DAMON / reclaim work"] or 0 }, { "steal_moved", r.pass1_steal_moved },
      { "misaligned", r.pass1_misaligned },
      { "lost", r.pass1_lost } })
  end
end

for _, case in ipairs(h.cases) do
  if #case.records > 0 and case.records[1].pass1_causes then
    pass_values(case, 1)
    pass_values(case, 2)
    fault_values(case)
    regime_values(case)
  end
end

-- Tracing's cost: each repetition's traced pass over its untraced one.
for _, mode in ipairs(PLANT == "none" and modes or {}) do
  local on, off = h:records(case_name(mode, true)), h:records(case_name(mode, false))
  for pass_no = 1, 2 do
    local key, ratios = "pass" .. pass_no, {}
    for i = 1, math.min(#on, #off) do ratios[i] = on[i][key] / off[i][key] end
    if #ratios > 0 then
      h:value("trace_cost", 100 * (stats.median(ratios) - 1), "%", { { "thp", mode }, { "pass", pass_no },
        { "reps", #ratios } })
    end
  end
end

h:note(("A page is slow above SLOW_NS = %d ns; its window is the span between its two timestamps, put on the "
  .. "events' clock (CLOCK_MONOTONIC) from the pass's start. Causes in precedence: %s. `no guest event` only "
  .. "where the window is wider than the timer's resolution (%d ns) and no event was lost; `host` when it "
  .. "was and the steal counter of /proc/stat moved during the pass."):format(SLOW_NS,
    table.concat(slowcause.CAUSES, ", "), RESOLUTION_NS))
if PLANT == "dontneed" then
  h:note(("Recall: the planted pages (every %dth) that were slow in pass 2 and classified fault, of those "
    .. "planted pages that were slow; precision: the slow pages classified fault that were planted."):format(STRIDE))
elseif PLANT == "tlb" then
  h:note("Recall: slow pages classified IPI / TLB shootdown whose window overlaps a munmap, of the helper's "
    .. "munmaps that fell inside pass 2 while its thread was on its CPU (each shoots down the pass's TLB once); "
    .. "precision: those pages, of all classified IPI / TLB shootdown.")
elseif PLANT == "preempt" then
  h:note(("Recall: slow pages whose window overlaps a stretch the busy thread ran (no gap above %d ns in its "
    .. "own readings) classified preempted, of all such slow pages; precision: pages classified preempted "
    .. "that overlap such a stretch."):format(GAP_NS))
end
h:finish()
