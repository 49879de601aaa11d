-- scripts/lib/slowcause.lua on synthetic passes and event lists: every
-- cause, the window's boundaries, precedence, `no guest event` only when it
-- can be told, the runs and the fault's split; then on a real trace.
local t = require "tap"
local ft = require "ft"
package.path = (os.getenv("PWD") or ".") .. "/scripts/lib/?.lua;" .. package.path
local sc = require "slowcause"

-- Ten pages of 100 ns from t = 1000, page 3 (index 2) 1000 ns: its window
-- is [1200, 2200), page 4's [2200, 2300).
local function pass(slow)
  local s = {}
  for i = 1, 10 do s[i] = 100 end
  for i, ns in pairs(slow or { [3] = 1000 }) do s[i] = ns end
  return s
end
local function events(list, lost)
  local e = { time = {}, name = {}, lost = lost or 0 }
  for i, p in ipairs(list) do e.time[i], e.name[i] = p[1], p[2] end
  return e
end
local function cause(list, opts)
  opts = opts or {}
  local r = sc.match { samples = opts.samples or pass(), timing = 1000, events = events(list, opts.lost),
    slow_ns = 200, resolution_ns = opts.resolution_ns or 20, steal_moved = opts.steal_moved }
  return r.slow[1] and r.slow[1].cause, r
end

t.is(cause { { 1300, "exceptions:page_fault_user" } }, "fault", "a user fault")
t.is(cause { { 1300, "exceptions:page_fault_kernel" } }, "fault", "a kernel fault")
t.is(cause { { 1300, "irq_vectors:local_timer_entry" } }, "timer interrupt", "the local timer")
t.is(cause { { 1300, "irq_vectors:call_function_entry" } }, "IPI / TLB shootdown", "a call-function IPI")
t.is(cause { { 1300, "tlb:tlb_flush" } }, "IPI / TLB shootdown", "a TLB flush")
t.is(cause { { 1300, "irq:irq_handler_entry" } }, "other interrupt", "a device interrupt")
t.is(cause { { 1300, "irq_vectors:irq_work_entry" } }, "other interrupt", "irq_work")
t.is(cause { { 1300, "switch:preempt" }, { 2000, "switch:in" } }, "preempted", "switched out, runnable")
t.is(cause { { 1300, "switch:out" } }, "preempted", "switched out")
t.is(cause { { 1300, "damon:damon_aggregated" } }, "DAMON / reclaim work", "DAMON on some CPU")
t.is(cause { { 1300, "vmscan:mm_vmscan_kswapd_wake" } }, "DAMON / reclaim work", "reclaim")
t.is(cause {}, "no guest event", "nothing in the window, nothing lost")
t.is(cause({}, { steal_moved = true }), "host", "nothing in the window while steal moved: host")
t.is(cause({}, { lost = 3 }), "unknown", "nothing seen but samples lost: unknown")
t.is(cause({}, { resolution_ns = 1000 }), "unknown", "a window no wider than the timer's resolution: unknown")
t.is(cause({}, { resolution_ns = 999 }), "no guest event", "one ns wider than the resolution: no guest event")
t.is(cause { { 1300, "irq_vectors:local_timer_exit" } }, "no guest event", "an exit stands for nothing")

-- boundaries: [1200, 2200) is page 3's
t.is(cause { { 1199, "exceptions:page_fault_user" } }, "no guest event", "1 ns before the window: not its")
t.is(cause { { 1200, "exceptions:page_fault_user" } }, "fault", "at the window's start: its")
t.is(cause { { 2199, "exceptions:page_fault_user" } }, "fault", "1 ns before its end: its")
t.is(cause { { 2200, "exceptions:page_fault_user" } }, "no guest event", "at its end: the next page's")

-- precedence
t.is(cause { { 1300, "irq_vectors:local_timer_entry" }, { 1400, "exceptions:page_fault_user" } }, "fault",
  "a fault before a timer")
t.is(cause { { 1300, "exceptions:page_fault_user" }, { 1400, "switch:preempt" } }, "preempted",
  "a switch before a fault")
t.is(cause { { 1300, "tlb:tlb_flush" }, { 1400, "irq_vectors:local_timer_entry" } }, "IPI / TLB shootdown",
  "an IPI before a timer")
t.is(cause { { 1300, "damon:damos_before_apply" }, { 1400, "irq:softirq_entry" } }, "other interrupt",
  "an interrupt on the thread before work on another CPU")

do -- the result's shape, the table, the runs
  local s = pass { [3] = 1000, [4] = 500, [5] = 700, [8] = 300 }
  local _, r = cause({ { 1300, "exceptions:page_fault_user" }, { 2250, "exceptions:page_fault_user" },
    { 2800, "exceptions:page_fault_user" }, { 3600, "irq_vectors:local_timer_entry" } }, { samples = s })
  t.is(#r.slow, 4, "four slow pages")
  t.is(r.slow[1].index, 2, "indexes are 0-based")
  t.is(r.slow[1].ns, 1000, "with their ns")
  t.is(r.slow[1].events[1], "exceptions:page_fault_user", "and their events")
  t.is(r.slow[4].cause, "timer interrupt", "page 8: [3500, 3800) holds the timer")
  local rows = sc.rows(r)
  t.is(#rows, 2, "two causes in the table")
  t.is(rows[1].cause, "fault", "in precedence order")
  t.is(rows[1].count, 3, "fault: 3 pages")
  t.is(rows[1].share, 0.75, "share of the slow pages")
  t.is(rows[1].median_ns, 700, "median cost")
  local runs = sc.runs(r)
  t.is(runs.runs, 2, "two runs of slow pages")
  t.is(runs.multi, 1, "one of more than one page")
  t.is(runs.single_cause, 1, "which has one cause")
  t.is(runs.by_cause.fault, 1, "fault")
  local before, after = sc.fault_split(s, 1000, events { { 1300, "exceptions:page_fault_user" },
    { 2250, "exceptions:page_fault_user" } })
  t.is(before[1], 100, "the fault entered 100 ns into its page")
  t.is(after[1], 900, "and the page ended 900 ns later")
  t.is(before[2], 50, "the second page's")
  local _, _, doubled = sc.fault_split(s, 1000, events { { 1300, "exceptions:page_fault_user" },
    { 1400, "exceptions:page_fault_user" }, { 2250, "exceptions:page_fault_user" } })
  t.is(doubled, 1, "a second fault in one page is counted: the windows and events no longer line up")
  local ends = sc.windows({ 100, 100 }, { start_ns = 1000, scale = 1.5 })
  t.is(ends[2], 1300, "windows: the running sum times the pass's scale, from the start")
  local starts
  ends, starts = sc.windows({ 100, 100, 100 }, { start_ns = 1000, chunks = { { first = 0, start_ns = 1000 },
    { first = 2, start_ns = 1500 } } })
  t.is(ends[2], 1200, "the first chunk's pages from its start")
  t.is(starts[3], 1500, "a chunk's first page opens at the chunk's own start, not at the last page's end")
  t.is(ends[3], 1600, "and ends from there")
  local _, r1 = cause({ { 1250, "exceptions:page_fault_user" } }, { samples = { 100, 100, 1000 } })
  t.is(#r1.slow, 1, "one slow page")
  local r2 = sc.match { samples = { 100, 100, 1000 }, timing = { start_ns = 1000, chunks = { { first = 0,
    start_ns = 1000 }, { first = 2, start_ns = 1300 } } }, events = events { { 1250, "tlb:tlb_flush" } },
    slow_ns = 200, resolution_ns = 20 }
  t.is(r2.slow[1].cause, "no guest event", "an event in the gap between two chunks belongs to no page")
end

t.errors(function() sc.match { samples = {} } end, "option timing is missing", "a missing option")
t.errors(function() sc.match { samples = {}, timing = 0, events = events {}, slow_ns = 1, resolution_ns = 1,
  slack = 1 } end, "unknown option slack", "an unknown option")

do -- the steal counter of a /proc/stat
  local dir = t.tmpdir()
  t.write(dir .. "/stat", "cpu  10 20 30 40 50 60 70 80 90 100\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
  t.is(sc.steal(dir .. "/stat"), 80, "steal is the eighth field of the cpu line")
  t.is(sc.steal(dir .. "/none"), nil, "no file: nil")
  os.execute("rm -rf " .. t.quote(dir))
  t.ok(math.type(sc.steal()) == "integer", "this machine's steal counter")
end

if t.run("id -u") == "0\n" then -- a real first touch: every slow page of pass 1 holds its fault
  local b <close> = assert(ft.mmap(16 << 20, { thp = "never" }))
  local tr <close> = assert(ft.trace { events = sc.THREAD_EVENTS })
  local s = ft.samples(b.pages)
  tr:start()
  local _, start, scale, chunks = ft.touch_timed_at(b, 1, s)
  local timing = { start_ns = start, scale = scale, chunks = chunks }
  t.is(#chunks, 1, "16 MiB: one chunk")
  t.ok(math.abs(scale - 1) < 1e-3, "the pass's clock rate is within 0.1 % of the calibrated one: " .. scale)
  local e = tr:stop()
  local list = {}
  for i = 1, #s do list[i] = s[i] end
  local r = sc.match { samples = list, timing = timing, events = e, slow_ns = 200,
    resolution_ns = 50 }
  local faults = r.by_cause.fault.count + r.by_cause.preempted.count
  t.ok(faults >= 0.99 * #r.slow, ("pass 1: %d of %d slow pages are fault or preempted"):format(faults, #r.slow))
  local before = sc.fault_split(list, timing, e)
  t.is(#before, b.pages, "every fault entry falls in some page's window")
else
  t.diag("skipped: the real trace needs root")
end

t.done()
