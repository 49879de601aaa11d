-- The clock, the counters and the machine description.
local t = require "tap"
local ft = require "ft"

local function integer(v) return math.type(v) == "integer" end

do
  local a = ft.now_ns()
  local b = ft.now_ns()
  t.ok(integer(a) and b >= a, "now_ns is a monotonic integer")
end

do
  local c = ft.clock()
  t.diag(("clock: tick %d ns, read %.1f ns; touch_timed: tick %d ns, read %.1f ns"):format(
    c.tick_ns, c.read_ns, c.timed.tick_ns, c.timed.read_ns))
  t.ok(integer(c.tick_ns) and c.tick_ns > 0, "clock tick measured")
  t.ok(c.read_ns > 0 and c.read_ns < 10000, "clock read cost measured")
  t.ok(c.timed.tick_ns > 0 and c.timed.read_ns > 0, "touch_timed timestamp measured")
  t.like(c.source, "CLOCK_MONOTONIC", "clock source named")
  t.ok(#c.clocksource > 0, "kernel clocksource named")
end

do
  local ghz, source = ft.clock_estimate()
  t.diag(("clock estimate %.3f GHz (%s)"):format(ghz, source))
  t.ok(ghz > 0.2 and ghz < 10, "clock estimate in a sane range")
  t.is(source, "measured", "clock estimate source")
  local out, code = t.ftrun_run("-e 'print(ft.clock_estimate())'", "CLOCK_GHZ=3.25")
  t.like(out, "3.25\tCLOCK_GHZ", "CLOCK_GHZ overrides the estimate")
  t.is(code, 0, "CLOCK_GHZ override exits 0")
  out, code = t.ftrun_run("-e 'print(ft.clock_estimate())'", "CLOCK_GHZ=fast")
  t.like(out, "CLOCK_GHZ=fast: expected a clock rate in GHz", "bad CLOCK_GHZ named")
  t.is(code, 1, "bad CLOCK_GHZ exits 1")
end

do
  local ru = ft.rusage()
  for _, k in ipairs { "minflt", "majflt", "utime_ns", "stime_ns", "maxrss_kb" } do
    t.ok(integer(ru[k]) and ru[k] >= 0, "rusage." .. k .. " is an integer")
  end
  t.ok(ft.faults() >= ru.minflt + ru.majflt, "faults = minor + major")
  -- faults() allocates nothing: a bracket around nothing counts nothing
  local f0 = ft.faults()
  local f1 = ft.faults()
  t.is(f1 - f0, 0, "an empty bracket counts 0 faults")
end

do
  local m = ft.meminfo()
  t.ok(integer(m.MemTotal) and m.MemTotal > 0, "meminfo MemTotal")
  t.ok(integer(m.MemAvailable), "meminfo MemAvailable")
  t.ok(integer(m.AnonHugePages), "meminfo AnonHugePages")
  local v = ft.vmstat()
  t.ok(integer(v.pgfault) and v.pgfault > 0, "vmstat pgfault")
  t.ok(integer(v.thp_fault_alloc), "vmstat thp_fault_alloc")
end

do
  local m = ft.machine()
  t.is(m.page_size, ft.page_size(), "machine page size is sysconf's")
  t.ok(#m.kernel > 0, "kernel release")
  t.ok(#m.cpu > 0, "cpu model")
  t.ok(m.thp_enabled == "always" or m.thp_enabled == "madvise" or m.thp_enabled == "never",
    "THP enabled setting: " .. m.thp_enabled)
  t.ok(integer(m.numa_nodes) and m.numa_nodes >= 1, "numa nodes counted")
  t.ok(integer(m.cpus) and m.cpus >= 1, "cpus counted")
  t.ok(type(m.hypervisor) == "string", "hypervisor: " .. m.hypervisor)
  t.ok(m.free_page_reporting == "on" or m.free_page_reporting == "off"
    or m.free_page_reporting == "no balloon", "free page reporting: " .. m.free_page_reporting)
end

do
  t.is(ft.sink(42), 42, "sink returns its argument")
  local b <close> = ft.mmap(1 << 20)
  t.is(ft.sink(b), b, "sink takes a buffer")
  t.errors(function() ft.sink() end, "value expected", "sink needs an argument")
  t.errors(function() ft.clock(1) end, "too many arguments", "clock takes no argument")
  t.errors(function() ft.now_ns(1) end, "got 1, expected at most 0", "now_ns takes no argument")
  t.errors(function() ft.faults(1) end, "got 1, expected at most 0", "faults takes no argument")
  t.errors(function() ft.page_size(1) end, "got 1, expected at most 0", "page_size takes no argument")
  t.errors(function() ft.sink(1, 2) end, "got 2, expected at most 1", "sink takes one argument")
  t.is(require("ft"), ft, "require 'ft' returns the preloaded module")
  t.ok(type(ft.version) == "string", "ft.version")
end

t.done()
