-- ft.profile: cpu-clock sampling of a pass, kernel and user, named by
-- /proc/kallsyms; refusals named by the setting that refuses.
local t = require "tap"
local ft = require "ft"
local kind = require "kind"

local function integer(v) return math.type(v) == "integer" end
local function top(p, n)
  local names = {}
  for i = 1, math.min(n, #p.symbols) do names[i] = p.symbols[i].name end
  return table.concat(names, ", ")
end
local function share(p, i)
  local s = p.symbols[i]
  return s and ("%s %.0f%%"):format(s.name, 100 * s.samples / p.samples) or "-"
end

do -- a first touch of 32 MiB: the kernel's, and clear_page among the top three
  local b <close> = assert(ft.mmap(32 << 20, { thp = "never" }))
  local p, ns = ft.profile(b.touch, { freq = 20000 }, b, 1)
  t.ok(p ~= nil, "ft.profile of b:touch runs as root", ns)
  if not p then t.done() end
  t.diag(("32 MiB first touch: %d samples in %d ns (kernel %d, user %d, lost %d), top: %s, %s, %s")
    :format(p.samples, p.wall_ns, p.kernel, p.user, p.lost, share(p, 1), share(p, 2), share(p, 3)))
  t.ok(integer(ns) and ns > 0, "fn's results follow the profile (the pass's ns)")
  t.is(b:sum_bytes(), b.pages, "the pass ran")
  t.ok(p.samples > 50, "samples taken: " .. p.samples)
  local function among_top3(pattern)
    local found = false
    for i = 1, 3 do found = found or (p.symbols[i] and p.symbols[i].name:match(pattern) ~= nil) end
    return found
  end
  if kind.PROFILE_SKIP then
    t.skip("a clear_page* symbol among the top three: " .. top(p, 3), kind.PROFILE_SKIP)
    if kind.pvm then t.ok(among_top3("^pvm_irq_enable$"), "PVM: pvm_irq_enable among the top three: " .. top(p, 3)) end
    t.skip(("kernel samples above user ones: %d > %d"):format(p.kernel, p.user), kind.PROFILE_SKIP)
  else
    t.ok(among_top3("^clear_page"), "a clear_page* symbol among the top three: " .. top(p, 3))
    t.ok(p.kernel > p.user, ("kernel samples above user ones: %d > %d"):format(p.kernel, p.user))
  end
  t.is(p.kernel + p.user, p.samples, "kernel + user = samples")
  local sum = 0
  for _, s in ipairs(p.symbols) do
    sum = sum + s.samples
    t.ok(integer(s.samples) and type(s.name) == "string" and type(s.kernel) == "boolean", "symbol " .. s.name)
  end
  t.is(sum + p.dropped, p.samples, "the symbols hold every sample")
  t.is(p.lost, 0, "no sample lost")
  t.is(p.freq, 20000, "freq reported")
  t.ok(integer(p.wall_ns) and integer(p.cpu_ns) and integer(p.sampled_ns), "times are integers")
  t.ok(p.cpu_ns > 0 and p.cpu_ns <= p.wall_ns + 1000000, "cpu_ns within the wall time")
  -- below 1 when samples come late (interrupts off) or the thread waits
  t.ok(p.share > 0 and p.share <= 1.1, ("sampled share of the wall time: %.3f"):format(p.share))
  t.ok(math.abs(p.share - p.sampled_ns / p.wall_ns) < 1e-9, "share = sampled_ns / wall_ns")
  t.is(p.sampled_ns, p.samples * 50000, "every sample is one 50 us period at 20 kHz")
  -- call chains: the faulting store in user space at the root, the fault under it
  local user = p.prefixes["ft_touch"]
  t.ok(user and user >= p.kernel * 9 // 10, ("ft_touch is the root of the chains: %s samples"):format(user))
  local fault = p.prefixes["ft_touch;asm_exc_page_fault"]
  local heaviest = (p.chains[1] or {}).stack or ""
  if kind.PROFILE_SKIP then -- on PVM the fault's time outside the guest kernel is sampled on the store
    t.skip("the page fault entry under it, above the user samples: " .. tostring(fault), kind.PROFILE_SKIP)
    t.skip("heaviest chain under the store: " .. heaviest, kind.PROFILE_SKIP)
    if kind.pvm then
      t.ok(fault and fault >= p.kernel * 9 // 10, ("PVM: the kernel's samples are the fault's: %s of %d")
        :format(fault, p.kernel))
      t.ok(heaviest == "ft_touch" or heaviest:match("^ft_touch;") ~= nil, "PVM: heaviest chain from the store: " .. heaviest)
    end
  else
    t.ok(fault and fault > p.user, "the page fault entry under it: " .. tostring(fault))
    t.ok(heaviest:match("^ft_touch;") ~= nil, "heaviest chain: " .. heaviest)
  end
  local csum = 0
  for i, c in ipairs(p.chains) do
    csum = csum + c.samples
    if i > 1 then t.ok(c.samples <= p.chains[i - 1].samples, "chains sorted, most first") end
  end
  t.is(csum, p.samples, "every sample has a chain")
end

do -- a pure user loop: user space dominates
  local p, x = ft.profile(function()
    local x = 0
    for i = 1, 3e7 do x = x + i % 7 end
    return x
  end, { freq = 5000 })
  t.diag(("Lua loop: %d samples, user %d, kernel %d, top: %s"):format(p.samples, p.user, p.kernel, top(p, 3)))
  t.ok(p.user > p.kernel, "a Lua loop is mostly user time", ("user %d, kernel %d"):format(p.user, p.kernel))
  t.ok(not p.symbols[1].kernel, "the top symbol is user space: " .. p.symbols[1].name)
  t.is(math.type(x), "integer", "the loop's result is returned")
  local q = ft.profile(ft.clock_estimate, { freq = 5000 })
  t.diag("C loop (ft.clock_estimate): " .. top(q, 3))
  t.is(q.symbols[1].name, "ft_clock_estimate_ghz", "a C loop in ftrun is named through dladdr")
  -- a majority, not more: beside another suite on two CPUs the kernel's share
  -- (interrupts, the switches away) grew past a fifth (1 of 3 runs)
  t.ok(q.user > q.kernel, "and it is mostly user time",
    ("user %d, kernel %d of %d samples"):format(q.user, q.kernel, q.samples))
end

do -- options
  local b <close> = assert(ft.mmap(8 << 20, { thp = "never" }))
  local p = ft.profile(b.touch, { freq = 10000, callchain = false }, b, 2)
  t.is(p.chains, nil, "callchain = false: no chains")
  t.is(p.depth, 0, "depth 0")
  b:madvise("dontneed")
  p = ft.profile(b.touch, { freq = 20000, callchain = 4 }, b, 3)
  t.ok(p.longest_chain <= 4, "callchain = 4 keeps 4 frames: " .. p.longest_chain)
  local truncated = false
  for _, c in ipairs(p.chains) do truncated = truncated or c.stack:match("^%[truncated%]") ~= nil end
  t.ok(truncated, "deeper chains are marked truncated")
  b:madvise("dontneed")
  p = ft.profile(b.touch, { kernel = false, freq = 20000 }, b, 4)
  t.is(p.kernel, 0, "kernel = false: no kernel samples")
  t.ok(p.symbols[1] and not p.symbols[1].kernel, "only user symbols")
  b:madvise("dontneed")
  local f0
  p = ft.profile(function()
    f0 = ft.faults()
    b:touch(5)
    f0 = ft.faults() - f0
  end, { freq = 20000, ring_kib = 64 })
  t.is(f0, b.pages, "sampling adds no page fault to the pass (a 64 KiB ring drained by the reader)")
  t.is(p.lost, 0, "and loses no sample")
  t.is(p.ring_bytes, 65536, "ring_kib")
  p = ft.profile(function() end)
  t.is(p.freq, 10000, "default freq 10 kHz")
  t.is(p.depth, 32, "default depth 32")
end

do -- misuse is an error; the event is closed on every way out
  local function fds() -- ftrun's perf and eventfd descriptors
    return t.open_fds("%[perf_event%]") + t.open_fds("%[eventfd%]")
  end
  t.errors(function() ft.profile() end, "function expected", "no function")
  t.errors(function() ft.profile(1) end, "function expected", "a number")
  t.errors(function() ft.profile(print, 1) end, "table expected", "options not a table")
  t.errors(function() ft.profile(print, { freq = 0 }) end, "freq = 0: expected 1 to 1000000", "freq 0")
  t.errors(function() ft.profile(print, { freq = 2.5 }) end, "freq must be an integer", "freq 2.5")
  t.errors(function() ft.profile(print, { freq = "x" }) end, "freq must be an integer", "freq a string")
  t.errors(function() ft.profile(print, { callchain = "yes" }) end, "callchain must be a boolean or a number",
    "callchain a string")
  t.errors(function() ft.profile(print, { callchain = 0 }) end, "callchain = 0: expected a boolean or 1 to 64",
    "callchain 0")
  t.errors(function() ft.profile(print, { callchain = 65 }) end, "expected a boolean or 1 to 64", "callchain 65")
  t.errors(function() ft.profile(print, { kernel = 1 }) end, "kernel must be a boolean", "kernel 1")
  t.errors(function() ft.profile(print, { ring_kib = 100 }) end, "ring_kib = 100: expected a power of two",
    "ring_kib not a power of two")
  t.errors(function() ft.profile(print, { frequency = 1 }) end, "unknown ft.profile option 'frequency'", "unknown option")
  t.errors(function() ft.profile(print, { [1] = 1 }) end, "unknown ft.profile option", "positional option")
  local p, a, b = ft.profile(function(x, y) return x + y, "two" end, nil, 2, 3)
  t.is(a, 5, "arguments after the options reach fn")
  t.is(b, "two", "every result comes back")
  local before = fds()
  t.is(before, 0, "no perf descriptor open outside ft.profile")
  t.errors(function() ft.profile(function() error("boom") end) end, "boom", "an error in fn propagates")
  t.errors(function() ft.profile(function() ft.profile(error, nil, "inner") end) end, "inner", "nested profiles")
  local co = coroutine.create(function() ft.profile(coroutine.yield) end)
  local ok, msg = coroutine.resume(co)
  t.like(not ok and msg, "attempt to yield across a C-call boundary", "a yield inside fn is an error")
  t.is(fds(), before, "the profile ended with the call, although its coroutine is dead and not closed")
  ft.profile(function() t.is(fds(), before + 3, "inside: the event and two eventfds") end)
  t.is(fds(), before, "no perf or eventfd descriptor left open")
  p = ft.profile(function() end)
  t.ok(p and p.lost == 0, "profiling still works afterwards")
  local out, code = t.run("{ " .. t.quote(t.ftrun) .. " -e 'ft.profile(function() while true do end end)' & pid=$!; sleep 0.5; kill -INT $pid; wait $pid; }")
  t.is(code, 130, "SIGINT inside a profiled loop exits 130", out)
  t.like(out, "interrupted", "and says interrupted")
end

-- Refusals: fake sysctl values in FTRUN_PROC_SYS, as root and unprivileged.
-- The kernel decides, at the real perf_event_paranoid: the lock keeps tests/paranoid.lua
-- from changing it meanwhile.
assert(require("sysfs").hold_lock())
local function run_with(values, code, user)
  local dir = t.tmpdir()
  for name, v in pairs(values) do t.write(dir .. "/" .. name, v .. "\n") end
  local out, status = t.run(("FTRUN_PROC_SYS=%s %s -e %s"):format(t.quote(dir),
    user and t.nobody() or t.quote(t.ftrun), t.quote(code)))
  os.execute("rm -rf " .. t.quote(dir))
  return out, status
end
local real = { perf_event_paranoid = 2, kptr_restrict = 0, perf_event_max_sample_rate = 100000 }
local function with(k, v) local r = {} for a, b in pairs(real) do r[a] = b end r[k] = v return r end
if t.run("id -u") == "0\n" then
  local out = run_with(with("kptr_restrict", 2), "print(ft.profile(print))")
  t.like(out, "nil\tft.profile: /proc/kallsyms hides kernel addresses: ", "kptr_restrict 2: nil and why")
  t.like(out, "/kptr_restrict is 2; it must be 1 or below", "kptr_restrict 2: the setting, its value, what it must be")
  t.like(out, "\t13\n", "and EACCES")
  out = run_with(with("kptr_restrict", 2), "local p = ft.profile(function() end, {kernel = false}) print(p.samples >= 0)")
  t.is(out, "true\n", "kernel = false needs no kernel symbols")
  out = run_with(with("perf_event_max_sample_rate", 1000), "print(ft.profile(print, {freq = 5000}))")
  t.like(out, "nil\tft.profile: freq 5000 is above ", "freq above the kernel's maximum: nil")
  t.like(out, "/perf_event_max_sample_rate (1000)\t22", "and the setting named, EINVAL")
  if t.run("command -v setpriv") ~= "" then
    out = run_with(with("perf_event_paranoid", 2), "print(ft.profile(print))", true)
    t.like(out, "/perf_event_paranoid is 2: sampling the kernel needs it at 1 or below (or CAP_PERFMON)",
      "unprivileged, paranoid 2: the setting, its value, what it must be")
    -- the settings explain a refusal, never predict one (tests/paranoid.lua sets them for real)
    out = run_with(with("perf_event_paranoid", 3), "print(ft.profile(function() end, {kernel = false}) ~= nil)", true)
    t.is(out, "true\n", "unprivileged, a fake paranoid 3 where the kernel grants user space: it works")
    out = run_with(with("perf_event_paranoid", 1), "print(ft.profile(print))", true)
    t.like(out, "Permission denied, with ", "unprivileged, refused where the fake setting allows it: errno")
    t.like(out, "/perf_event_paranoid 1 (a seccomp filter or a security module may forbid perf_event_open)",
      "and the setting, which does not account for it")
    out = run_with(real, [[
      local b = ft.mmap(4 << 20)
      local p = assert(ft.profile(b.touch, {kernel = false, freq = 20000}, b, 1))
      print(p.kernel, p.samples == p.user)]], true)
    t.is(out, "0\ttrue\n", "unprivileged, paranoid 2: user-space sampling works")
  else
    t.diag("skipped: the unprivileged refusals need setpriv")
  end
else
  t.diag("skipped: the refusal tests need root")
end

t.done()
