-- Runs the API fuzz (tests/fuzz/api.lua) in a child; FUZZ_SEED, FUZZ_SECONDS.
local t = require "tap"

local seed = tonumber(os.getenv("FUZZ_SEED") or "") or os.time()
local seconds = tonumber(os.getenv("FUZZ_SECONDS") or "") or 3
t.diag(("fuzz seed %d, %g s (replay: FUZZ_SEED=%d)"):format(seed, seconds, seed))

local dir = arg[0]:match("^(.*)/[^/]*$") or "."
local env = t.ftrun:find("ftrun%-san[^/]*$") and "ASAN_OPTIONS=allocator_may_return_null=1" or nil
local out, code = t.ftrun_run(("%s %d %s"):format(t.quote(dir .. "/fuzz/api.lua"), seed, seconds), env)

-- a shell reports death by signal N as exit code 128+N
t.ok(code < 128, ("fuzz child not killed by a signal (seed %d)"):format(seed),
  ("exit code %d\n%s"):format(code, out:sub(-3000)))
t.is(code, 0, ("fuzz exits 0 (seed %d)"):format(seed))
local s, n, m, e = out:match("fuzz: seed (%-?%d+), (%d+) sequences, (%d+) calls, (%d+) errors raised, 0 crashes")
t.ok(s == tostring(seed), "summary line names the seed", out:sub(-3000))
t.ok(tonumber(n or 0) >= 1, "at least one sequence ran")
t.ok(tonumber(m or 0) > 0 and tonumber(e or 0) > 0, "calls made and errors raised")
local tr, at = out:match("fuzz: reached ft.trace (%d+) times, ft.touch_timed_at (%d+) times")
t.ok(tonumber(tr or 0) > 0, "the fuzz reaches ft.trace", out:sub(-3000))
t.ok(tonumber(at or 0) > 0, "and ft.touch_timed_at")
t.done()
