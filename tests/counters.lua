-- ft.counters: perf's software counters of the calling thread, read
-- around a pass; hardware ones attempted and reported absent with a reason.
local t = require "tap"
local ft = require "ft"

local software = { "page_faults", "minor_faults", "major_faults", "context_switches",
  "cpu_migrations", "task_clock_ns" }
local hardware = { "cycles", "instructions", "dtlb_load_misses" }

local c, msg = ft.counters()
t.ok(c ~= nil, "ft.counters opens as root", msg)
if not c then t.done() end

t.is(#c.events >= #software, true, "the software group opened: " .. table.concat(c.events, " "))
for i, name in ipairs(software) do t.is(c.events[i], name, "event " .. name) end
local has_pmu = io.open("/sys/bus/event_source/devices/cpu") ~= nil
for _, name in ipairs(hardware) do
  if c.absent[name] then
    t.like(c.absent[name], name .. ": ", "absent " .. name .. " is named")
    if not has_pmu then t.like(c.absent[name], "no hardware PMU", name .. ": the reason is the missing PMU") end
    t.diag(c.absent[name])
  else
    t.ok(has_pmu, name .. " counts where there is a PMU")
  end
end
t.is(c.kernel_excluded, false, "as root the kernel side is counted")

do -- the page-fault count around a first touch equals getrusage's and the page count
  local b <close> = assert(ft.mmap(16 << 20, { thp = "never" }))
  local before, after = c:read(), c:read() -- filled once, so the bracket allocates nothing
  local f0 = ft.faults()
  c:read(before)
  local ns = b:touch(1)
  c:read(after)
  local f1 = ft.faults()
  local d = {}
  for _, name in ipairs(c.events) do d[name] = after[name] - before[name] end
  t.diag(("touch of %d pages in %d ns: page_faults %d, minor %d, major %d, switches %d, migrations %d, task clock %d ns")
    :format(b.pages, ns, d.page_faults, d.minor_faults, d.major_faults, d.context_switches,
      d.cpu_migrations, d.task_clock_ns))
  t.is(d.page_faults, f1 - f0, "perf page faults = getrusage faults")
  t.is(d.page_faults, b.pages, "perf page faults = the page count")
  t.is(d.minor_faults, b.pages, "all of them minor")
  t.is(d.major_faults, 0, "none major")
  t.ok(d.task_clock_ns > 0 and d.task_clock_ns <= ns + 1000000, "task clock within the pass's wall time")
  for _, name in ipairs(c.events) do
    t.is(math.type(after[name]), "integer", name .. " is an integer")
  end
  local f2 = ft.faults()
  c:read(before)
  b:touch(2)
  c:read(after)
  local f3 = ft.faults() -- before the checks: a sanitizer build's allocator faults in them
  t.is(after.page_faults - before.page_faults, 0, "a second touch: no perf page faults")
  t.is(f3 - f2, 0, "and none in getrusage")
end

do -- what a read costs
  local r = c:read()
  local n = 10000
  local t0 = ft.now_ns()
  for _ = 1, n do c:read(r) end
  t.diag(("c:read(t): %.0f ns per read"):format((ft.now_ns() - t0) / n))
end

do -- misuse is an error
  t.errors(function() ft.counters(1) end, "got 1, expected at most 0", "ft.counters takes no argument")
  t.errors(function() c:read(1) end, "table expected", "read needs a table")
  t.errors(function() c:read({}, 1) end, "got 2, expected 1", "read takes one argument")
  t.errors(function() return c.bogus end, "no field or method 'bogus'", "unknown field")
  t.errors(function() c.read(1) end, "ft.counters expected", "read on a number")
  local r = c:read({ page_faults = "x" })
  t.is(math.type(r.page_faults), "integer", "read overwrites what the table held")
  local d <close> = assert(ft.counters())
  d:close()
  t.is(d.closed, true, "closed")
  t.errors(function() d:read() end, "counters are closed", "read after close")
  d:close() -- twice is harmless
end

-- Refusals, as an unprivileged user with fake sysctl values.
-- The kernel decides, at the real perf_event_paranoid: the lock keeps tests/paranoid.lua
-- from changing it meanwhile.
assert(require("sysfs").hold_lock())
local function unprivileged(code, values)
  local dir = t.tmpdir()
  for name, v in pairs(values) do t.write(dir .. "/" .. name, v .. "\n") end
  local out, status = t.run(("FTRUN_PROC_SYS=%s %s -e %s"):format(t.quote(dir), t.nobody(), t.quote(code)))
  os.execute("rm -rf " .. t.quote(dir))
  return out, status
end
local root = t.run("id -u") == "0\n" and t.run("command -v setpriv") ~= ""
-- the fakes below need a kernel that grants nobody user-space events at its
-- real setting (a stock Debian kernel at its default paranoid 3 does not)
local granted = root and t.run(t.nobody() .. " -e 'print(ft.counters() ~= nil)'") == "true\n"
if granted then
  -- the settings explain a refusal, never predict one (tests/paranoid.lua sets them for real)
  local out = unprivileged("print(ft.counters() ~= nil)", { perf_event_paranoid = 3, kptr_restrict = 0 })
  t.is(out, "true\n", "a fake paranoid 3 where the kernel grants user space: the counters open")
  out = unprivileged([[
    local c = assert(ft.counters())
    local b = ft.mmap(1 << 20)
    local x, y = c:read(), c:read()
    c:read(x) b:touch(1) c:read(y)
    print(c.kernel_excluded, y.page_faults - x.page_faults == b.pages)]],
    { perf_event_paranoid = 2, kptr_restrict = 0 })
  t.is(out, "true\ttrue\n", "paranoid 2, unprivileged: user-space counting, faults still counted")
elseif root then
  t.diag("skipped: this kernel refuses nobody user-space events at perf_event_paranoid "
    .. t.read("/proc/sys/kernel/perf_event_paranoid"):gsub("\n", ""))
else
  t.diag("skipped: the refusal tests need root and setpriv")
end

c:close()
t.done()
