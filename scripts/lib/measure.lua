-- The bracket around a timed pass, and the read-back checks. The fault
-- counter is read just outside the C window the pass times itself; nothing
-- between the two reads allocates, so the count is the pass's own.
--
-- measure.pass(b, method, ...) is the bracket alone, for any script. A run
-- keeps its own tally in a meter (measure.meter(), held by the harness's
-- run object): the work it timed, the checks that passed, the perf
-- counters it reads around every pass, and what to do on a mismatch.
local ft = require "ft"

local measure = {}

-- The KiB the guest's page reporting handed to the host so far, or nil
-- where the module is absent (then never read again); read outside the
-- fault bracket, since it reads a sysfs file.
local reporting = ft.reported_kib ~= nil and ft.reported_kib() ~= nil -- a task's ft has no such binding
local function reported()
  return reporting and ft.reported_kib() or nil
end

local function delta(k0, k1)
  return k0 and k1 and k1 - k0 or nil
end

-- b:method(...) timed in C; returns ns, the faults the pass took
-- (getrusage) and the KiB reported to the host around it. counters: nil,
-- or a meter's counter set read around it.
local function bracket(counters, b, method, ...)
  local k0 = reported()
  local f0 = ft.faults()
  if counters then counters.c:read(counters.before) end
  local ns = b[method](b, ...)
  if counters then counters.c:read(counters.after) end
  local f1 = ft.faults()
  return ns, f1 - f0, delta(k0, reported())
end

function measure.pass(b, method, ...)
  local ns, faults = bracket(nil, b, method, ...)
  return ns, faults
end

-- A fresh buffer from ft.mmap or ft.malloc (make); returns it, the call's
-- ns, faults and KiB reported. A refusal by the kernel (nil, message, errno) fails the run here.
local function made(make, ...)
  local k0 = reported()
  local f0 = ft.faults()
  local b = assert(make(...))
  local f1 = ft.faults()
  return b, b.map_ns, f1 - f0, delta(k0, reported())
end

-- The canary: one store into each of 512 pages already present (4 KiB pages, so every store
-- walks the TLB), no fault in it, so a kernel change should leave it alone (assumed, not
-- shown: compare.lua prints the sides' difference in it); the median of 5 passes in ns per page. It
-- tracks the machine's own speed from repetition to repetition, for calibrate.lua's
-- covariates. Its buffer is mapped and faulted in once, at the first call.
measure.CANARY_PAGES, measure.CANARY_PASSES = 512, 5
local canary
function measure.canary()
  if not canary then
    canary = assert(ft.mmap(measure.CANARY_PAGES * ft.page_size(), { thp = "never" }))
    canary:touch(1)
  end
  local ns = {}
  for i = 1, measure.CANARY_PASSES do ns[i] = canary:touch(i % 255 + 1) / canary.pages end
  table.sort(ns)
  return ns[(measure.CANARY_PASSES + 1) // 2]
end

-- k * n(n-1)/2 mod 2^64, the sum of p[i] = i*k over n words: Lua integers
-- wrap, and halving the even factor first keeps the product exact mod 2^64.
function measure.fill_sum(words, k)
  local n = words
  local half = n % 2 == 0 and (n // 2) * (n - 1) or n * ((n - 1) // 2)
  return half * k
end

-- A run's meter. work_ns: the C work a run cannot do without, in ns (the
-- timed windows, the map and release calls and the read-backs); the rest of
-- a run's wall time is the runner's own (Lua, statistics, reports).
-- checks: read-backs that passed, for the verdict line. on_mismatch(msg) is
-- called before a mismatch is raised, so the run can put the failed
-- verdict on record.
local Meter = {}
Meter.__index = Meter

function measure.meter()
  return setmetatable({ work_ns = 0, checks = 0, on_mismatch = function(_) end }, Meter)
end

-- The perf software counters read around every pass (ft.counters); nil and
-- why where perf refuses them. The two tables are filled once here, so
-- reading into them allocates nothing in the bracket.
function Meter:use_counters()
  local c, why = ft.counters()
  if not c then return nil, why end
  self.counters = { c = c, before = c:read(), after = c:read() }
  return c
end

-- Counters on or off between passes (AB's COUNTERS side); nil, or why perf refused them.
function Meter:set_counters(on)
  if on and not self.counters then
    local _, why = self:use_counters()
    return why
  elseif not on and self.counters then
    self.counters.c:close()
    self.counters = nil
  end
end

-- As measure.pass, and with counters in use what they counted over the
-- same bracket (else nil), and the KiB reported to the host around it.
function Meter:pass(b, method, ...)
  local counters = self.counters
  local ns, faults, kib = bracket(counters, b, method, ...)
  self.work_ns = self.work_ns + ns
  if not counters then return ns, faults, nil, kib end
  local d = {}
  for k, v in pairs(counters.after) do d[k] = v - counters.before[k] end
  return ns, faults, d, kib
end

function Meter:map(bytes, options)
  local b, ns, faults, kib = made(ft.mmap, bytes, options)
  self.work_ns = self.work_ns + ns
  return b, ns, faults, kib
end

function Meter:malloc(bytes)
  local b, ns, faults, kib = made(ft.malloc, bytes)
  self.work_ns = self.work_ns + ns
  return b, ns, faults, kib
end

-- munmap or free, whichever the buffer needs; returns ns, faults, counters.
function Meter:release(b)
  return self:pass(b, b.kind == "malloc" and "free" or "unmap")
end

-- Work timed elsewhere (tasks, a loop of passes): its ns count as measured
-- work, its read-backs as checks that passed.
function Meter:work(ns, checks)
  self.work_ns = self.work_ns + ns
  self.checks = self.checks + (checks or 0)
end

local function check(self, what, got, want, t0)
  ft.sink(got)
  self.work_ns = self.work_ns + (ft.now_ns() - t0)
  if got ~= want then
    local msg = ("checksum mismatch in %s: read back %d, expected %d"):format(what, got, want)
    self.on_mismatch(msg)
    error(msg, 3)
  end
  self.checks = self.checks + 1
end

-- After the last touch of a buffer: one byte per page, each equal to value.
function Meter:check_bytes(b, value, what)
  local t0 = ft.now_ns()
  check(self, what, b:sum_bytes(), value * b.pages, t0)
end

-- After a walk that stored into some pages only: one byte per page, the
-- bytes summing to sum.
function Meter:check_byte_sum(b, sum, what)
  local t0 = ft.now_ns()
  check(self, what, b:sum_bytes(), sum, t0)
end

-- After a fill: every word, against the closed form.
function Meter:check_words(b, k, what)
  local t0 = ft.now_ns()
  check(self, what, b:sum_words(), measure.fill_sum(b.bytes // 8, k), t0)
end

return measure
