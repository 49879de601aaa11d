-- The per-page timer of touch_timed: the TSC by rdtscp where it is
-- invariant, calibrated against CLOCK_MONOTONIC, else clock_gettime.
local t = require "tap"
local ft = require "ft"

local function integer(v) return math.type(v) == "integer" end

local c = ft.clock()
t.diag(("touch_timed timer: %s, cost %.1f ns per sample, step %d ns, smallest sample %d ns"):format(
  c.timed.source, c.timed.read_ns, c.timed.step_ns, c.timed.tick_ns))
t.diag(("window clock: cost %.1f ns, tick %d ns"):format(c.read_ns, c.tick_ns))
t.ok(type(c.tsc.invariant) == "boolean" and type(c.tsc.rdtscp) == "boolean", "tsc flags reported")
if c.tsc.invariant and c.tsc.rdtscp then
  t.is(c.timed.source, "rdtscp", "an invariant TSC with rdtscp is the per-page timer")
  t.is(c.tsc.used, true, "tsc.used")
  t.ok(integer(c.tsc.hz) and c.tsc.hz > 1e8, "tsc.hz is an integer: " .. tostring(c.tsc.hz))
  t.ok(math.abs(c.tsc.ghz - c.tsc.hz / 1e9) < 1e-9, "tsc.ghz is hz in GHz")
  t.ok(integer(c.tsc.calibrated_over_ns) and c.tsc.calibrated_over_ns >= 100000000,
    "calibrated over at least 100 ms: " .. tostring(c.tsc.calibrated_over_ns))
  t.is(c.timed.fallback, nil, "no fallback reason when the TSC is used")
  t.diag(("TSC %.6f GHz, calibrated over %d ns"):format(c.tsc.ghz, c.tsc.calibrated_over_ns))
else
  t.like(c.timed.source, "clock_gettime", "no invariant TSC: clock_gettime")
  t.ok(#c.timed.fallback > 0, "and the reason: " .. tostring(c.timed.fallback))
end
t.ok(integer(c.timed.step_ns) and c.timed.step_ns >= 1, "step_ns is a positive integer")
t.ok(integer(c.timed.tick_ns) and c.timed.tick_ns >= 1, "tick_ns is a positive integer")
t.ok(c.timed.read_ns > 0 and c.timed.read_ns < 1000, "per-sample cost measured")
t.ok(c.timed.step_ns <= c.timed.tick_ns, "the step is no larger than the smallest sample")

do -- the calibration against CLOCK_MONOTONIC, over one second
  local m0, t0 = ft.now_ns(), ft.timed_ns()
  ft.sleep(1)
  local m1, t1 = ft.now_ns(), ft.timed_ns()
  local err = ((t1 - t0) - (m1 - m0)) / (m1 - m0)
  t.diag(("over %d ns of CLOCK_MONOTONIC the timer counted %d ns: %+.1f ppm"):format(
    m1 - m0, t1 - t0, err * 1e6))
  t.ok(integer(t0) and integer(t1), "timed_ns is an integer")
  t.ok(math.abs(err) < 0.001, "the timer agrees with CLOCK_MONOTONIC within 0.1 % over 1 s")
end

do -- the samples of a first touch: every fault inside its own page's sample
  local b <close> = assert(ft.mmap(8 << 20, { thp = "never" }))
  local s = ft.samples(b.pages)
  local ns = b:touch_timed(1, s)
  local sum = 0
  for i = 1, #s do sum = sum + s[i] end
  t.ok(math.abs(ns - sum) <= ns // 100 + 2000,
    ("the samples add up to the pass: %d ns of samples, %d ns window"):format(sum, ns))
  local slow = s:count_above(250)
  t.ok(slow >= b.pages * 9 // 10, ("pass 1: %d of %d samples hold a fault (> 250 ns)"):format(slow, b.pages))
  local first = s:median()
  b:touch_timed(2, s)
  t.diag(("pass 1 median %d ns, pass 2 median %d ns"):format(first, s:median()))
  t.ok(s:median() < 250, "pass 2: a store, not a fault")
  t.is(b:sum_bytes(), 2 * b.pages, "the timed pass stored its value")
end

do -- the fallback, asked for
  local out, code = t.ftrun_run("-e " .. t.quote(
    "local c = ft.clock() print(c.timed.source, c.timed.fallback, c.tsc.used, c.timed.read_ns > 0)"),
    "FTRUN_TIMER=clock_gettime")
  t.is(code, 0, "FTRUN_TIMER=clock_gettime runs")
  t.like(out, "clock_gettime(CLOCK_MONOTONIC)\tasked for (FTRUN_TIMER=clock_gettime)\tfalse\ttrue",
    "FTRUN_TIMER=clock_gettime: the fallback, and why")
  out, code = t.ftrun_run("-e " .. t.quote(
    "local b = ft.mmap(1 << 20) local s = ft.samples(b.pages) b:touch_timed(1, s) print(s:min() > 0)"),
    "FTRUN_TIMER=clock_gettime")
  t.is(out, "true\n", "touch_timed with the fallback timer")
  out, code = t.ftrun_run("-e 'ft.clock()'", "FTRUN_TIMER=rdtsc")
  t.like(out, "FTRUN_TIMER=rdtsc: expected clock_gettime or tsc", "a bad FTRUN_TIMER is named")
  t.is(code, 1, "and exits 1")
end

t.errors(function() ft.timed_ns(1) end, "got 1, expected at most 0", "timed_ns takes no argument")

t.done()
