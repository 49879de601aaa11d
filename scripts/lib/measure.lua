-- The bracket around a timed pass, and the read-back checks. The fault
-- counter is read just outside the C window the pass times itself; nothing
-- between the two reads allocates, so the count is the pass's own.
local ft = require "ft"

local measure = {}

-- The C work a run cannot do without, in ns: the timed windows, the map and
-- release calls and the read-backs. The rest of a run's wall time is the
-- runner's own (Lua, statistics, reports).
measure.work_ns = 0

-- The perf software counters read around every pass (ft.counters), set by
-- measure.use_counters(); nil where perf refuses them. The two tables are
-- filled once here, so reading into them allocates nothing in the bracket.
local counters, before, after

function measure.use_counters()
  local c, why = ft.counters()
  if not c then return nil, why end
  counters, before, after = c, c:read(), c:read()
  return c
end

local function counted()
  local d = {}
  for k, v in pairs(after) do d[k] = v - before[k] end
  return d
end

-- b:method(...) timed in C; returns ns, the faults the pass took (getrusage)
-- and, with counters in use, what they counted over the same bracket.
function measure.pass(b, method, ...)
  local f0 = ft.faults()
  if counters then counters:read(before) end
  local ns = b[method](b, ...)
  if counters then counters:read(after) end
  local f1 = ft.faults()
  measure.work_ns = measure.work_ns + ns
  return ns, f1 - f0, counters and counted()
end

-- A fresh buffer from ft.mmap or ft.malloc; returns it, the call's ns and
-- faults. A refusal by the kernel (nil, message, errno) fails the run here.
function measure.map(bytes, options)
  local f0 = ft.faults()
  local b = assert(ft.mmap(bytes, options))
  local f1 = ft.faults()
  measure.work_ns = measure.work_ns + b.map_ns
  return b, b.map_ns, f1 - f0
end

function measure.malloc(bytes)
  local f0 = ft.faults()
  local b = assert(ft.malloc(bytes))
  local f1 = ft.faults()
  measure.work_ns = measure.work_ns + b.map_ns
  return b, b.map_ns, f1 - f0
end

-- munmap or free, whichever the buffer needs; returns ns, faults, counters.
function measure.release(b)
  return measure.pass(b, b.kind == "malloc" and "free" or "unmap")
end

-- k * n(n-1)/2 mod 2^64, the sum of p[i] = i*k over n words: Lua integers
-- wrap, and halving the even factor first keeps the product exact mod 2^64.
function measure.fill_sum(words, k)
  local n = words
  local half = n % 2 == 0 and (n // 2) * (n - 1) or n * ((n - 1) // 2)
  return half * k
end

-- Checks run and passed, for the verdict line.
measure.checks = 0

-- Called with the message before a mismatch is raised, so a script can put
-- the failed verdict on record.
measure.on_mismatch = function(_) end

local function check(what, got, want, t0)
  ft.sink(got)
  measure.work_ns = measure.work_ns + (ft.now_ns() - t0)
  if got ~= want then
    local msg = ("checksum mismatch in %s: read back %d, expected %d"):format(what, got, want)
    measure.on_mismatch(msg)
    error(msg, 3)
  end
  measure.checks = measure.checks + 1
end

-- After the last touch of a buffer: one byte per page, each equal to value.
function measure.check_bytes(b, value, what)
  local t0 = ft.now_ns()
  check(what, b:sum_bytes(), value * b.pages, t0)
end

-- After a fill: every word, against the closed form.
function measure.check_words(b, k, what)
  local t0 = ft.now_ns()
  check(what, b:sum_words(), measure.fill_sum(b.bytes // 8, k), t0)
end

return measure
