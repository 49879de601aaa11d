-- Slow pages matched to the kernel events inside their windows. A timed
-- pass gives each page's store-plus-reading in ns and the pass's start on
-- CLOCK_MONOTONIC (ft.touch_timed_at); ft.trace gives events on the same
-- clock. ft.touch_timed_at returns the pass's timing: each 64 MiB chunk's
-- start on CLOCK_MONOTONIC (the time between two chunks is in no sample)
-- and a scale, the TSC's rate over the pass against the rate the timer was
-- calibrated at (CLOCK_MONOTONIC is slewed by NTP). Page i's window is
-- [its chunk's start + scale * c(i-1), its chunk's start + scale * c(i)), c
-- the running sum of the chunk's samples. Each page slower than slow_ns
-- gets the events in its window and one cause, the first of CAUSES
-- whose events it holds.
local slowcause = {}

-- In order of precedence: a page that was switched out was slow for that
-- before anything else; a fault is the page's own work; an interrupt on
-- the thread comes before work seen on another CPU.
slowcause.CAUSES = {
  "preempted", "fault", "IPI / TLB shootdown", "timer interrupt", "other interrupt",
  "DAMON / reclaim work", "host", "no guest event", "unknown",
}

-- The events a pass is traced with: the thread's own, and those that run
-- in other threads (kdamond, kswapd) on every CPU.
slowcause.THREAD_EVENTS = {
  "exceptions:page_fault_user", "exceptions:page_fault_kernel",
  "irq_vectors:local_timer_entry", "irq_vectors:call_function_entry",
  "irq_vectors:call_function_single_entry", "irq_vectors:reschedule_entry",
  "irq_vectors:irq_work_entry", "tlb:tlb_flush", "irq:irq_handler_entry", "irq:softirq_entry",
}
slowcause.CPU_EVENTS = {
  "damon:damon_aggregated", "damon:damos_before_apply", "vmscan:mm_vmscan_kswapd_wake",
  "vmscan:mm_vmscan_direct_reclaim_begin",
}

local exact = {
  ["switch:out"] = "preempted", ["switch:preempt"] = "preempted", ["switch:in"] = "preempted",
  ["sched:sched_switch"] = "preempted",
  ["irq_vectors:local_timer_entry"] = "timer interrupt",
  ["irq_vectors:call_function_entry"] = "IPI / TLB shootdown",
  ["irq_vectors:call_function_single_entry"] = "IPI / TLB shootdown",
  ["irq_vectors:reschedule_entry"] = "IPI / TLB shootdown",
  ["tlb:tlb_flush"] = "IPI / TLB shootdown",
  ["software:page-faults"] = "fault", ["software:minor-faults"] = "fault", ["software:major-faults"] = "fault",
}

-- The cause an event stands for, or nil (an exit, a switch back in).
function slowcause.class(name)
  local c = exact[name]
  if c then return c end
  local group = name:match("^([^:]+):")
  if group == "exceptions" then return "fault" end
  if group == "ipi" then return "IPI / TLB shootdown" end
  if group == "damon" or group == "vmscan" then return "DAMON / reclaim work" end
  if (group == "irq_vectors" or group == "irq") and name:match("_entry$") then return "other interrupt" end
  return nil
end

local rank = {}
for i, c in ipairs(slowcause.CAUSES) do rank[c] = i end

-- The steal time of every CPU in /proc/stat (USER_HZ ticks): the host ran
-- something else while a vCPU wanted to run.
function slowcause.steal(path)
  local f = io.open(path or "/proc/stat")
  if not f then return nil end
  local line = f:read("l")
  f:close()
  local fields = {}
  for v in (line or ""):gmatch("%d+") do fields[#fields + 1] = math.tointeger(tonumber(v)) end
  return fields[8] -- user nice system idle iowait irq softirq steal
end

local function check(opts)
  assert(type(opts) == "table", "slowcause.match needs an options table")
  for _, k in ipairs { "samples", "timing", "events", "slow_ns", "resolution_ns" } do
    assert(opts[k] ~= nil, "slowcause.match: option " .. k .. " is missing")
  end
  local known = { samples = 1, timing = 1, events = 1, slow_ns = 1, resolution_ns = 1,
    steal_moved = 1, slack_ns = 1 }
  for k in pairs(opts) do assert(known[k], "slowcause.match: unknown option " .. tostring(k)) end
end

-- The window of every page: ends[i] (absolute ns), ends[0] the start;
-- starts[i] where page i's window opens (ends[i - 1] inside a chunk).
-- timing: {start_ns =, scale =, chunks = {{first =, start_ns =}, ...}}
-- (ft.touch_timed_at's), or a plain start in ns.
function slowcause.windows(samples, timing)
  if type(timing) ~= "table" then timing = { start_ns = timing } end
  local scale = timing.scale or 1
  local chunks = timing.chunks or { { first = 0, start_ns = timing.start_ns } }
  local ends, starts = { [0] = chunks[1].start_ns }, {}
  local k, base, c = 1, chunks[1].start_ns, 0
  for i = 1, #samples do
    local nxt = chunks[k + 1]
    if nxt and i - 1 == nxt.first then k, base, c = k + 1, nxt.start_ns, 0 end
    starts[i] = c == 0 and base or ends[i - 1]
    c = c + samples[i]
    ends[i] = base + math.floor(c * scale + 0.5)
  end
  return ends, starts
end

-- match{samples =, timing =, events =, slow_ns =, resolution_ns =,
-- steal_moved =, slack_ns =} -> {slow = {{index, ns, cause, events}}, by_cause
-- = {cause = {count, ns = {...}}}, pages, lost}. events: ft.trace's columns
-- (time, name in time order; lost). A page with no event is `no guest
-- event` (or `host` when the steal counter moved) only when its window is
-- wider than the timer's resolution and no sample was lost; else `unknown`.
function slowcause.match(opts)
  check(opts)
  local s, ev = opts.samples, opts.events
  local slack, lost = opts.slack_ns or 0, ev.lost or 0
  local ends, starts = slowcause.windows(s, opts.timing)
  local out = { slow = {}, by_cause = {}, pages = #s, lost = lost }
  for _, c in ipairs(slowcause.CAUSES) do out.by_cause[c] = { count = 0, ns = {} } end
  local times, names, j = ev.time, ev.name, 1
  for i = 1, #s do
    if s[i] > opts.slow_ns then
      local lo, hi = starts[i] - slack, ends[i] + slack
      while j > 1 and times[j - 1] >= lo do j = j - 1 end
      while j <= #times and times[j] < lo do j = j + 1 end
      local seen, best = {}, nil
      local k = j
      while k <= #times and times[k] < hi do
        local name = names[k]
        seen[#seen + 1] = name
        local c = slowcause.class(name)
        if c and (not best or rank[c] < rank[best]) then best = c end
        k = k + 1
      end
      if not best then
        if s[i] > opts.resolution_ns and lost == 0 then
          best = opts.steal_moved and "host" or "no guest event"
        else
          best = "unknown"
        end
      end
      out.slow[#out.slow + 1] = { index = i - 1, ns = s[i], cause = best, events = seen }
      local b = out.by_cause[best]
      b.count = b.count + 1
      b.ns[#b.ns + 1] = s[i]
    end
  end
  return out
end

local function median(v)
  if #v == 0 then return nil end
  local c = table.move(v, 1, #v, 1, {})
  table.sort(c)
  return c[(#c + 1) // 2]
end
slowcause.median = median

-- Rows of the table per pass: {cause, count, share, median_ns}, the causes
-- that occur, in CAUSES order; share of the slow pages.
function slowcause.rows(result)
  local rows, total = {}, #result.slow
  for _, c in ipairs(slowcause.CAUSES) do
    local b = result.by_cause[c]
    if b.count > 0 then
      rows[#rows + 1] = { cause = c, count = b.count, share = b.count / total, median_ns = median(b.ns) }
    end
  end
  return rows
end

-- Contiguous runs of slow pages and whether each has one cause:
-- {runs, multi (runs of 2 or more pages), single_cause (of those), by_cause
-- = {cause = runs of 2+ pages all of that cause}}.
function slowcause.runs(result)
  local out = { runs = 0, multi = 0, single_cause = 0, by_cause = {} }
  local slow = result.slow
  local i = 1
  while i <= #slow do
    local k = i
    while k < #slow and slow[k + 1].index == slow[k].index + 1 do k = k + 1 end
    out.runs = out.runs + 1
    if k > i then
      out.multi = out.multi + 1
      local one = true
      for m = i + 1, k do one = one and slow[m].cause == slow[i].cause end
      if one then
        out.single_cause = out.single_cause + 1
        out.by_cause[slow[i].cause] = (out.by_cause[slow[i].cause] or 0) + 1
      end
    end
    i = k + 1
  end
  return out
end

-- For every page whose window holds a user fault's entry: the time from
-- the page's start to the entry (the store reaching the trap) and from the
-- entry to the page's end (the fault's handling and return, and the
-- reading that closes the sample). Two lists of ns, and how many fault
-- entries fell in a page that already held one: where every page faults
-- once (a first touch of 4 KiB pages), a check that the windows and the
-- events line up.
function slowcause.fault_split(samples, timing, events, name)
  name = name or "exceptions:page_fault_user"
  local ends, starts = slowcause.windows(samples, timing)
  local before, after, seen, doubled = {}, {}, {}, 0
  local i = 1
  for k = 1, #events.time do
    if events.name[k] == name then
      local tk = events.time[k]
      while i <= #samples and ends[i] <= tk do i = i + 1 end
      if i > #samples then break end
      if tk >= starts[i] then
        before[#before + 1] = tk - starts[i]
        after[#after + 1] = ends[i] - tk
        if seen[i] then doubled = doubled + 1 end
        seen[i] = true
      end
    end
  end
  return before, after, doubled
end

return slowcause
