-- API fuzz: random call sequences on the ft module; every call under pcall.
-- Usage: ftrun tests/fuzz/api.lua SEED SECONDS
-- An error is fine, a crash is not; ends with one summary line, exit 0.
local ft = require "ft"

local args = { ... }
local seed, seconds = tonumber(args[1]), tonumber(args[2])
if #args ~= 2 or math.type(seed) ~= "integer" or not seconds or seconds < 0 then
  io.stderr:write("usage: ftrun tests/fuzz/api.lua SEED SECONDS\n")
  os.exit(2)
end
math.randomseed(seed)

local MiB = 1 << 20
local stats = { sequences = 0, calls = 0, errors = 0, reached = { trace = 0, touch_timed_at = 0 } }
local buffers = {} -- live and released buffers of this sequence
local samples = {}
local memfds = {}
local handles = {} -- ft.start's task groups, waited for or not

local function pick(list) return list[math.random(#list)] end
local function chance(p) return math.random() < p end

local function size()
  if chance(0.05) then return pick { 0, -1, 1 << 62, -(1 << 62), 1.5, 0.0, "4096", math.huge } end
  if chance(0.7) then return math.random(1, 64 * 1024) end
  return math.random(1, 4 * MiB)
end

local junk = {
  nil, true, false, 0, -1, 1 << 62, math.mininteger, math.maxinteger, 0.5, -0.0,
  1e300, 0 / 0, "", "a\0b", "touch", "move", {}, { 1, 2 }, print, coroutine.create(print),
}
local function anything()
  local r = math.random(4)
  if r == 1 and #buffers > 0 then return pick(buffers) end
  if r == 2 and #samples > 0 then return pick(samples) end
  if r == 3 and #memfds > 0 and chance(0.5) then return pick(memfds) end
  return junk[math.random(#junk)]
end

local function integer_arg()
  if chance(0.2) then return anything() end
  return pick { 0, 1, 7, 255, 256, -1, 4096, 1 << 62, math.random(0, 1 << 20) }
end

local function buffer()
  if #buffers == 0 or chance(0.05) then return anything() end
  return pick(buffers)
end

local function call(fn, ...)
  stats.calls = stats.calls + 1
  local ok = pcall(fn, ...)
  if not ok then stats.errors = stats.errors + 1 end
end

-- Options for mmap: valid and invalid keys and values.
local function mmap_opts()
  if chance(0.1) then return anything() end
  local o = {}
  if chance(0.5) then o.thp = pick { "default", "always", "never", "never", true, 1, "madvise", "x\0" } end
  if chance(0.5) then o.populate = pick { true, false, 0, "yes" } end
  if chance(0.3) then o.shared = pick { true, false, 1 } end
  if chance(0.3) then o.memfd = #memfds > 0 and chance(0.8) and pick(memfds) or anything() end
  if chance(0.2) then o.hugetlb = pick { "2M", "1G", "4M", "2m", true, 2, "2M\0" } end
  if chance(0.1) then o[pick { "bogus", 1, "thp\0" }] = anything() or 1 end
  return o
end

local function new_buffer()
  local ok, b = pcall(chance(0.6) and ft.mmap or ft.malloc, size(), mmap_opts())
  stats.calls = stats.calls + 1
  if ok and type(b) == "userdata" then buffers[#buffers + 1] = b
  elseif not ok then stats.errors = stats.errors + 1 end
end

local madvice = { "normal", "random", "sequential", "willneed", "dontneed", "free",
  "hugepage", "nohugepage", "cold", "pageout", "populate_read", "populate_write", "bogus" }
local fields = { "addr", "bytes", "pages", "page_size", "kind", "map_ns", "released", "nope" }

local method_calls = {
  function(b) return b.touch, b, integer_arg() end,
  function(b) return b.fill, b, integer_arg() end,
  function(b) return b.touch_timed, b, integer_arg() end,
  function(b) return b.sum_bytes, b end,
  function(b) return b.sum_words, b, anything() end,
  function(b) return b.read_touch, b end,
  function(b) return b.nodes, b, pick { nil, 1, 2, 0, -1, 1 << 62, "x" } end,
  function(b) return b.mbind, b, pick { 0, 1, 63, 64, -1 }, pick { nil, "strict", "bogus", 3 } end,
  function(b) return b.mlock, b end,
  function(b) return b.munlock, b end,
  function(b) return b.peek, b, integer_arg() end,
  function(b) return b.poke, b, integer_arg(), integer_arg() end,
  function(b) return b.madvise, b, pick(madvice) end,
  function(b) return b.thp_bytes, b end,
  function(b)
    return b.frames, b, chance(0.5) and #samples > 0 and pick(samples) or pick { 1, "x" }
  end,
  function(b) return b.unmap, b end,
  function(b) return b.free, b end,
  function(b) return function() return b[pick(fields)] end end,
  function(b) return tostring, b end,
}

local function method_call()
  local b = buffer()
  local ok, fn, x, y, z = pcall(pick(method_calls), b)
  stats.calls = stats.calls + 1
  if not ok or type(fn) ~= "function" then stats.errors = stats.errors + 1; return end
  -- sizes stay within 4 MiB (size()), so mlock never pins much memory
  if chance(0.1) then call(fn, x, y, z, anything()) else call(fn, x, y, z) end
end

local function memfd_call()
  if #memfds == 0 or chance(0.3) then
    local ok, m = pcall(ft.memfd, chance(0.9) and math.random(1, 4 * MiB) or anything())
    stats.calls = stats.calls + 1
    if ok and type(m) == "userdata" then memfds[#memfds + 1] = m
    elseif not ok then stats.errors = stats.errors + 1 end
    return
  end
  local m = pick(memfds)
  local r = math.random(4)
  if r == 1 then call(m.close, m)
  elseif r == 2 then call(function() return m[pick { "bytes", "fd", "closed", "view", "nope" }] end)
  elseif r == 3 then call(tostring, m)
  else call(ft.mmap, chance(0.8) and math.random(1, m.bytes > 0 and m.bytes or 1) or size(),
    { memfd = m, shared = chance(0.5) }) end
end

-- Small task groups: chunks that end at once or fail, arguments of every
-- kind (buffers and memfds among them), handles used, dropped or closed.
local chunks = {
  "return function(i, ...) return i, ... end",
  "return function(i, b) if type(b) == 'userdata' then return pcall(b.touch, b, 1), pcall(b.unmap, b) end end",
  "return function(i, b) if type(b) == 'userdata' then pcall(b.close, b); pcall(b.free, b) end return 1 end",
  "return function(i) if i == 2 then error('task fails') end end",
  "return function() return print end",
  "return function() return ft.time_up end",
  "return function() local e = ft.now_ns() + 5000000 while not ft.task.time_up() and ft.now_ns() < e do ft.sleep(0.001) end end",
  "return 1", "error('set-up fails')", "return function(", "@no/such/chunk.lua", "a\0b",
}
local function tasks_call()
  if #handles > 0 and chance(0.5) then
    local i = math.random(#handles)
    local h = handles[i]
    local r = math.random(5)
    if r == 1 then call(h.wait, h)
    elseif r == 2 then call(h.counts, h)
    elseif r == 3 then call(h.stop, h)
    elseif r == 4 then call(getmetatable(h).__close, h)
    else table.remove(handles, i) end -- left to the collector
    return
  end
  local opts = chance(0.1) and anything() or {
    mode = pick { nil, "threads", "processes", "bogus", 1 },
    args = chance(0.7) and { anything(), anything() } or anything(),
    seconds = pick { nil, nil, 0.002, 0, -1, "x" },
    pin = pick { nil, true, false, 1 },
  }
  local n = pick { 1, 2, 2, 0, 300, 1.5 }
  local chunk = chance(0.9) and pick(chunks) or anything()
  if chance(0.5) then
    call(ft.tasks, n, chunk, opts)
  else
    local ok, h = pcall(ft.start, n, chunk, opts)
    stats.calls = stats.calls + 1
    if ok then handles[#handles + 1] = h else stats.errors = stats.errors + 1 end
  end
end

local function samples_call()
  if #samples == 0 or chance(0.2) then
    local ok, s = pcall(ft.samples, chance(0.9) and math.random(1, 1000) or anything())
    stats.calls = stats.calls + 1
    if ok then samples[#samples + 1] = s else stats.errors = stats.errors + 1 end
    return
  end
  local s = pick(samples)
  local r = math.random(10)
  if r <= 7 then
    local m = pick { "min", "max", "median", "percentile", "count_above", "mean_above", "runs_above" }
    call(function() return s[m](s, anything()) end)
  elseif r == 8 then call(function() s[integer_arg()] = integer_arg() end)
  elseif r == 9 then call(function() return s[integer_arg()] end)
  else call(function() return #s end) end
end

local function parallel_call()
  local kernel = pick { "touch", "fill", "read", "bogus", 1 }
  local target = chance(0.5) and buffer() or { buffer(), buffer() }
  local opts = { threads = pick { 1, 2, 0, -1, 3.5, "2" }, value = pick { nil, 0, 255, 256, -1 },
    k = pick { nil, 1, 0, -3 }, pin = pick { nil, true, false, 0, "x" } }
  if chance(0.1) then opts.bogus = 1 end
  if opts.threads == 1 or opts.threads == 2 or chance(0.5) then
    if type(target) == "table" and #target > 2 then return end
    call(ft.parallel, kernel, target, chance(0.1) and anything() or opts)
  end
end

local system_calls = {
  function() return ft.now_ns, anything() end,
  function() return ft.clock end,
  function() return ft.timed_ns, anything() end,
  function() return ft.faults, anything() end,
  function() return ft.rusage end,
  function() return ft.meminfo end,
  function() return ft.clock_estimate, pick { nil, "measured", "x", 1 } end,
  -- regular files, devices, directories, missing and bad paths, sizes right and wrong
  function() return ft.read_file, pick { "/proc/self/stat", "/dev/zero", "/dev/null", "/", "", "a\0b",
    "/proc/self/maps", "/nonexistent", anything() }, pick { 0, 1, 4096, -1, 1 << 62, math.maxinteger, 0.5, "x" } end,
  function() return ft.vmstat end,
  function() return ft.machine end,
  function() return ft.page_size, anything() end,
  function() return ft.sleep, pick { 0, 1e-4, 0.001, -1, 0 / 0, "x", math.huge, 1e300 } end,
  function() return ft.sink, anything(), anything() end,
  function() return ft.folio_sizes, anything() end,
  function() return ft.folio, pick { 16, 2048, 8, 4096, 12, 0, -16 }, anything() end,
  function() return ft.hugetlb_sizes, anything() end,
  function() return ft.hugetlb_pages, pick { 2048, 1 << 20, 4096, 3, 0 }, anything() end,
  function() return ft.sysfs_changes, anything() end,
  -- the setters only with arguments that are always wrong: the fuzz changes no setting
  function() return ft.set_folio, anything(), pick { "always", "bogus", "never\0", 1 } end,
  function() return ft.set_hugetlb_pages, anything(), pick { 1, -1, 1 << 62, "x" } end,
}

local function system_call()
  local fn, x, y = pick(system_calls)()
  if fn == ft.sleep and type(x) == "number" and x > 0.001 and x < 86400.5 then return end
  call(fn, x, y)
end

-- ft.counters and ft.profile: valid and invalid options, fns that fail or
-- yield, profiles inside profiles (two deep at most).
local counters = {}
local profile_depth = 0
local random_call
local function perf_call()
  local r = math.random(10)
  if r <= 2 or (r <= 5 and #counters == 0) then
    local ok, c = pcall(ft.counters, chance(0.1) and anything() or nil)
    stats.calls = stats.calls + 1
    if ok and c then counters[#counters + 1] = c elseif not ok then stats.errors = stats.errors + 1 end
  elseif r <= 5 then
    local c = pick(counters)
    local m = math.random(4)
    if m == 1 then call(c.close, c)
    elseif m == 2 then call(c.read, c, pick { nil, {}, { page_faults = "x" }, anything() })
    elseif m == 3 then call(function() return c[pick { "events", "absent", "kernel_excluded", "closed", "nope" }] end)
    else call(c.read, c, {}, anything()) end
  elseif profile_depth < 2 then
    local opts = { freq = pick { nil, 100, 1000, 5000, 0, -1, 1 << 40, 2.5, "x" },
      callchain = pick { nil, true, false, 1, 64, 65, 0, "x" }, kernel = pick { nil, true, false, 1 },
      ring_kib = pick { nil, nil, 64, 100, 4, -64 } }
    if chance(0.1) then opts[pick { "bogus", 1, "freq\0" }] = 1 end
    local fn = pick {
      function() profile_depth = profile_depth + 1; random_call(); profile_depth = profile_depth - 1 end,
      function() error("fn fails") end,
      coroutine.yield,
      function(...) return ... end,
    }
    if chance(0.1) then fn = anything() end
    if fn == print then fn = nil end -- a profiled print would clutter the output
    call(ft.profile, fn, chance(0.1) and anything() or opts, anything(), anything())
  end
end

-- ft.trace sessions (valid and invalid options, used in any order, closed
-- or not) and ft.touch_timed_at, whose samples are sometimes the right size.
local sessions = {}
local TRACE_EVENTS = { "exceptions:page_fault_user", "software:page-faults", "software:context-switches",
  "irq_vectors:local_timer_entry", "nosuch:event", "software:nosuch", "bad", "a:b\0", 1 }
local function trace_call()
  local r = math.random(10)
  if r >= 8 then
    local b = buffer()
    local s = type(b) == "userdata" and chance(0.5) and select(2, pcall(ft.samples, (select(2, pcall(function()
      return b.pages end))))) or (#samples > 0 and pick(samples)) or anything()
    stats.reached.touch_timed_at = stats.reached.touch_timed_at + 1
    if chance(0.5) then
      call(ft.touch_timed_at, b, integer_arg(), s)
    else -- the walk, with options right, wrong and missing
      call(ft.touch_timed_walk, b, integer_arg(), s, pick { nil, {}, { stride = integer_arg() },
        { backward = true, shift = pick { 0, 4, 63, 64, -1 } }, { index = s }, { index = anything() }, anything() })
    end
  elseif r <= 3 or #sessions == 0 then
    local events = {}
    for _ = 1, math.random(0, 3) do events[#events + 1] = pick(TRACE_EVENTS) end
    local opts = { events = chance(0.9) and events or anything(), switches = pick { nil, true, false, 1 },
      ring_kib = pick { nil, 4, 8, 64, 3, 0, -4, 1 << 21 } }
    if chance(0.2) then opts.cpu_events = { pick(TRACE_EVENTS) } end
    if chance(0.1) then opts[pick { "event", 1, "events\0" }] = 1 end
    stats.reached.trace = stats.reached.trace + 1
    local ok, tr = pcall(ft.trace, chance(0.05) and anything() or opts)
    stats.calls = stats.calls + 1
    if ok and tr then sessions[#sessions + 1] = tr elseif not ok then stats.errors = stats.errors + 1 end
  else
    local tr = pick(sessions)
    local m = pick { "start", "stop", "close", "start", "stop" }
    call(tr[m] or tostring, tr, chance(0.1) and anything() or nil)
    if chance(0.1) then call(tostring, tr) end
  end
end

function random_call()
  local r = math.random(100)
  if r <= 20 then new_buffer()
  elseif r <= 65 then method_call()
  elseif r <= 75 then samples_call()
  elseif r <= 80 then parallel_call()
  elseif r <= 85 then perf_call()
  elseif r <= 89 then memfd_call()
  elseif r <= 91 then tasks_call()
  elseif r <= 94 then trace_call()
  else system_call() end
  if chance(0.05) then collectgarbage(pick { "collect", "step", "incremental", "generational" }) end
end

-- Calls inside a coroutine that errors mid-way or is left unfinished.
local function coroutine_calls()
  local co = coroutine.create(function()
    for _ = 1, math.random(1, 5) do
      random_call()
      if chance(0.3) then coroutine.yield() end
      if chance(0.2) then error("abandoned mid-sequence") end
    end
  end)
  for _ = 1, math.random(0, 3) do
    local ok = coroutine.resume(co)
    stats.calls = stats.calls + 1
    if not ok then stats.errors = stats.errors + 1; break end
  end
  if chance(0.3) then call(coroutine.close, co) end
end

local function with_close()
  local ok, b = pcall(ft.mmap, math.random(1, 64 * 1024))
  stats.calls = stats.calls + 1
  if not ok then stats.errors = stats.errors + 1; return end
  local closer <close> = setmetatable({}, { __close = function() pcall(b.unmap, b) end }) -- luacheck: ignore 211
  buffers[#buffers + 1] = b
  random_call()
  if chance(0.3) then error("leaving a <close> scope by error") end
end

local function sequence()
  stats.sequences = stats.sequences + 1
  buffers, samples, counters, profile_depth, memfds, sessions = {}, {}, {}, 0, {}, {}
  if chance(0.5) then handles = {} end
  for _ = 1, math.random(1, 30) do
    local r = math.random(20)
    if r == 1 then coroutine_calls()
    elseif r == 2 then call(with_close)
    else random_call() end
  end
  if chance(0.5) then collectgarbage() end
end

local deadline = ft.now_ns() + math.floor(seconds * 1e9)
repeat sequence() until ft.now_ns() >= deadline
buffers, samples, counters, memfds, handles, sessions = {}, {}, {}, {}, {}, {}
collectgarbage()
if #ft.sysfs_changes() > 0 then
  print("fuzz: a system setting was changed: " .. ft.sysfs_changes()[1].path)
  os.exit(1)
end
print(("fuzz: reached ft.trace %d times, ft.touch_timed_at %d times"):format(stats.reached.trace,
  stats.reached.touch_timed_at))
print(("fuzz: seed %d, %d sequences, %d calls, %d errors raised, 0 crashes"):format(
  seed, stats.sequences, stats.calls, stats.errors))
os.exit(0)
