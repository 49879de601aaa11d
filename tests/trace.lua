-- ft.trace: tracepoints and software events of the calling thread (and per
-- CPU), timestamped on CLOCK_MONOTONIC; the lost count a small ring forces;
-- refusals named by the setting that refuses.
local t = require "tap"
local ft = require "ft"

local function integer(v) return math.type(v) == "integer" end
local function count(r, name)
  local n = 0
  for i = 1, r.n do if r.name[i] == name then n = n + 1 end end
  return n
end

local FAULT = "exceptions:page_fault_user"
local root = t.run("id -u") == "0\n"

-- misuse is an error
t.errors(function() ft.trace() end, "bad argument #1", "no options: an error")
t.errors(function() ft.trace { event = { FAULT } } end, "unknown ft.trace option 'event'", "a misspelled option")
t.errors(function() ft.trace { events = FAULT } end, "option events must be a list", "events not a list")
t.errors(function() ft.trace { events = { 1 } } end, "events[1] must be a \"group:name\" string", "a number as event")
t.errors(function() ft.trace { events = { FAULT }, ring_kib = 3 } end, "ring_kib = 3: expected a power of two",
  "ring_kib not a power of two")
t.errors(function() ft.trace { switches = false } end, "nothing to trace", "nothing asked for")
t.errors(function() ft.trace { events = { FAULT }, switches = 1 } end, "switches must be a boolean", "switches not a boolean")

if not root then
  t.diag("skipped: tracepoints need root here")
  t.done()
end

do -- a first touch: one page_fault_user per page, on the clock of ft.now_ns
  local b <close> = assert(ft.mmap(8 << 20, { thp = "never" }))
  local tr <close> = assert(ft.trace { events = { FAULT, "software:page-faults", "irq_vectors:local_timer_entry" },
    cpu_events = { "damon:damon_aggregated" } })
  t.like(tostring(tr), "ft.trace (4 events", "tostring names the events")
  local s = ft.samples(b.pages)
  tr:start()
  t.errors(function() tr:start() end, "already started", "a second start is an error")
  local ns, start, _, _, stop = ft.touch_timed_at(b, 1, s)
  local r = tr:stop()
  t.errors(function() tr:stop() end, "not started", "a second stop is an error")
  t.ok(integer(ns) and integer(start) and integer(stop) and start >= r.start_ns and start + ns <= stop
    and stop <= r.stop_ns, "the pass lies inside the traced interval")
  t.is(r.lost, 0, "nothing lost")
  t.is(r.counts[FAULT], b.pages, "one page_fault_user per page (count)")
  t.is(count(r, FAULT), b.pages, "one page_fault_user sample per page")
  t.is(r.counts["software:page-faults"], b.pages, "software page-faults count every page too")
  t.ok(integer(r.rings) and r.rings >= 2, "a ring for the thread and one per CPU: " .. r.rings)
  local sorted, inside, mine = true, 0, 0
  local tid = r.tid[1]
  for i = 1, r.n do
    if i > 1 and r.time[i] < r.time[i - 1] then sorted = false end
    if r.name[i] == FAULT then
      -- up to the clock after the pass: a preemption between two pages is in no sample
      if r.time[i] >= start and r.time[i] <= stop then inside = inside + 1 end
      if r.tid[i] == tid then mine = mine + 1 end
    end
  end
  t.ok(sorted, "events in time order")
  t.is(inside, b.pages, "every fault's time falls inside the pass (one time line)")
  t.is(mine, b.pages, "every fault is the calling thread's")
  t.ok(integer(r.cpu[1]) and r.cpu[1] >= 0, "CPU reported")

  -- pass 2 on the resident buffer: the trace adds no fault to the window
  tr:start()
  local f0 = ft.faults()
  ft.touch_timed_at(b, 2, s)
  local f1 = ft.faults()
  r = tr:stop()
  t.is(f1 - f0, 0, "pass 2 with tracing on takes no fault (the rings were written before)")
  t.is(r.counts[FAULT], 0, "and the trace sees none")
  tr:close()
  t.errors(function() tr:start() end, "closed ft.trace session", "a closed session refuses use")
end

do -- a small ring: what does not fit is counted as lost, never dropped silently
  local b <close> = assert(ft.mmap(8 << 20, { thp = "never" }))
  local tr <close> = assert(ft.trace { events = { FAULT }, ring_kib = ft.page_size() // 1024, switches = false })
  tr:start()
  b:touch(1)
  local r = tr:stop()
  t.ok(r.lost > 0, "a one-page ring loses samples: " .. r.lost)
  t.is(r.n + r.lost, b.pages, "kept + lost = the pages' faults")
end

do -- a context switch of the traced thread is a switch:out / switch:in pair
  local tr <close> = assert(ft.trace { events = {} })
  tr:start()
  ft.sleep(0.002)
  local r = tr:stop()
  t.ok(count(r, "switch:out") >= 1 and count(r, "switch:in") >= 1, "a sleep shows switch:out and switch:in")
end

do -- the plants' helpers
  local b <close> = assert(ft.mmap(64 * ft.page_size()))
  b:touch(1)
  t.is(ft.plant_dontneed(b, 16), 4, "dontneed on pages 0, 16, 32, 48")
  t.is(b:sum_bytes(), 60, "those four read back as zero, the rest as written")
  t.errors(function() ft.plant_dontneed(b, 0) end, "stride must be a positive number of pages", "stride 0")
  local m <close> = assert(ft.malloc(1 << 20))
  local none, why, err = ft.plant_dontneed(m, 16)
  t.ok(none == nil and err == 22, "a malloc buffer is refused as a value")
  t.like(why, "madvise(dontneed) every 16 pages failed", "and says what failed")
  local before = ft.affinity()
  t.ok(#before >= 1 and math.type(before[1]) == "integer", "ft.affinity() lists the thread's CPUs")
  t.is(ft.affinity { before[1] }[1], before[1], "pinning returns the CPUs it had")
  t.is(#ft.affinity(before), 1, "the thread was on one CPU")
  t.is(#ft.affinity(), #before, "and is back on all of them")
  t.errors(function() ft.affinity { -1 } end, "cpus[1] must be a CPU number", "a negative CPU")
  t.errors(function() ft.affinity {} end, "non-empty list", "an empty list")
end

-- refusals are values that name the setting
local r, why, err = ft.trace { events = { "nosuch:event" } }
t.ok(r == nil and integer(err), "an unknown tracepoint: nil, message, errno")
t.like(why, "no tracepoint nosuch:event: /sys/kernel/tracing/events/nosuch/event/id does not exist",
  "it names the file that is missing")
local empty = t.tmpdir()
local out = t.run(("FTRUN_TRACEFS=%s %s -e %s"):format(t.quote(empty), t.quote(t.ftrun),
  t.quote("print(ft.trace{events = {'exceptions:page_fault_user'}})")))
t.like(out, "nil\tft.trace: tracefs is not mounted at " .. empty, "no tracefs: nil and where it is missing")
out = t.run(("FTRUN_TRACEFS=%s %s -e %s"):format(t.quote(empty), t.quote(t.ftrun),
  t.quote("print(ft.trace{events = {'software:page-faults'}} ~= nil)")))
t.is(out, "true\n", "software events need no tracefs")
os.execute("rm -rf " .. t.quote(empty))
if t.run("command -v setpriv") ~= "" then
  assert(require("sysfs").hold_lock()) -- the kernel decides, at the real perf_event_paranoid
  local dir = t.tmpdir()
  local nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups " .. t.quote(t.ftrun)
  -- At perf_event_paranoid 2 (the default: unchanged here, and the lock keeps it so) the kernel
  -- grants nobody its own user space only: the thread's events open user-space-only, as the
  -- counters do, and say so; a first touch's faults, taken in user code, are all there.
  local paranoid = tonumber(t.read("/proc/sys/kernel/perf_event_paranoid"):match("%-?%d+"))
  if paranoid == 2 then
    out = t.run(("%s -e %s"):format(nobody, t.quote([[
      local tr, why = ft.trace{events = {'software:page-faults'}}
      if not tr then print("refused", why) return end
      local b = ft.mmap(1 << 20, {thp = "never"})
      tr:start() b:touch(1) ft.sleep(0.001) local r = tr:stop()
      local switches = 0
      for i = 1, r.n do if r.name[i]:find("^switch:") then switches = switches + 1 end end
      print("open", tr.kernel_excluded, r.counts["software:page-faults"] == b.pages, switches > 0)]])))
    t.is(out, "open\ttrue\ttrue\ttrue\n",
      "nobody at paranoid 2: ft.trace opens user-space-only, says kernel_excluded, counts every fault and its switches")
    -- a tracepoint (in a stand-in tracefs, so that nobody can read its id) fires in the kernel: refused, and why
    os.execute("mkdir -p " .. t.quote(dir .. "/tracefs/events/exceptions/page_fault_user") .. " && echo 1 >"
      .. t.quote(dir .. "/tracefs/events/exceptions/page_fault_user/id") .. " && chmod -R a+rX " .. t.quote(dir))
    out = t.run(("FTRUN_TRACEFS=%s %s -e %s"):format(t.quote(dir .. "/tracefs"), nobody,
      t.quote("print(ft.trace{events = {'exceptions:page_fault_user'}})")))
    t.like(out, "nil\tft.trace: perf_event_open (exceptions:page_fault_user): only this thread's user space may "
      .. "be traced (/proc/sys/kernel/perf_event_paranoid 2), and a tracepoint fires in the kernel: it needs the "
      .. "setting at 1 or below", "nobody at paranoid 2: a tracepoint is refused, naming the setting")
  else
    t.diag("skipped: nobody's user-space-only trace needs perf_event_paranoid 2; it is " .. tostring(paranoid))
  end
  -- a tracefs there but closed to nobody (mode 0700, made here): not "not mounted", and EACCES
  os.execute("mkdir -p " .. t.quote(dir .. "/closed/events") .. " && chmod 0700 " .. t.quote(dir .. "/closed")
    .. " && chmod a+rx " .. t.quote(dir))
  out = t.run(("FTRUN_TRACEFS=%s %s -e %s"):format(t.quote(dir .. "/closed"), nobody,
    t.quote("print(ft.trace{events = {'exceptions:page_fault_user'}})")))
  t.is(out, ("nil\tft.trace: tracefs at %s/closed cannot be read by this user (Permission denied): tracepoints "
    .. "need root\t13\n"):format(dir), "a tracefs nobody cannot read: said so, with EACCES")
  t.write(dir .. "/perf_event_paranoid", "0\n")
  out = t.run(("FTRUN_PROC_SYS=%s %s -e %s"):format(
    t.quote(dir), nobody, t.quote("print(ft.trace{cpu_events = {'software:page-faults'}})")))
  t.like(out, "/perf_event_paranoid 0 (a seccomp filter or a security module may forbid",
    "unprivileged, refused where the fake setting allows it: the setting does not account for it")
  os.execute("rm -rf " .. t.quote(dir))
else
  t.diag("skipped: the unprivileged refusals need setpriv")
end

t.done()
