-- The progress line of a run: "script: rep i/n: a; b; c (t s)", one name per case that ran,
-- with no separator left by a case that did not run in that repetition (unsupported from its
-- first run on, or run once). With and without AB.
local t = require "tap"
local q = t.quote

local dir = t.tmpdir()
local script = dir .. "/skips.lua"
t.write(script, [[
local h = require("harness").start({ script = "skips", about = "progress line", mib = 1, reps = 3,
  knobs = { { name = "LEVEL", kind = "count", default = 1, ab = true, desc = "a value the cases read" } } }, { ... })
h:case("gone", function() return false, "no such size" end)
h:case("setup", function(r) r.x = 1 end, { once = true })
h:case("b", function(r) r.x = h.cfg.LEVEL end)
h:case("c", function(r) r.x = 3 end)
h:columns { { "x", "x", "count" } }
h:run()
h:finish()
]])

-- The progress lines of a run: every "skips.lua: rep i/n:" line.
local function progress(out)
  local lines = {}
  for line in out:gmatch("[^\n]+") do
    -- " (noisy)" marks a case another process disturbed: not the subject here
    if line:find("^skips%.lua: rep ") then lines[#lines + 1] = (line:gsub(" %(noisy%)", "")) end
  end
  return lines
end
local function stray(lines)
  for _, line in ipairs(lines) do
    if line:find(":;") or line:find(";;") or line:find("; ;") or line:find(";%s*%(") then return line end
  end
end

local out, code = t.ftrun_run(q(script), "RESULTS=" .. q(dir .. "/plain"))
t.is(code, 0, "a run with an unsupported case and a case run once completes", out)
local lines = progress(out)
t.is(#lines, 3, "three repetitions")
t.like(lines[1], "skips.lua: rep 1/3: gone (not supported: no such size); setup; b; c (",
  "rep 1 names every case, the unsupported one with why")
t.like(lines[2], "skips.lua: rep 2/3: b; c (", "rep 2: no separator where the skipped cases were")
t.is(stray(lines), nil, "no stray ';' on any progress line")

out, code = t.ftrun_run(q(script) .. " 'AB=LEVEL=1 | LEVEL=2'", "RESULTS=" .. q(dir .. "/ab"))
t.is(code, 0, "the same under AB completes", out)
lines = progress(out)
t.is(#lines, 3, "AB: three repetitions")
t.like(lines[2], "A: b; c", "AB: side A without a stray separator")
t.like(lines[2], "B: b [B]; c [B]", "AB: side B without a stray separator")
t.is(stray(lines), nil, "AB: no stray ';' on any progress line")
-- the second side's label is set off from the first side's last case, never run into its name
t.ok(lines[2]:find("^skips%.lua: rep 2/3: [AB]: [^|]* | [AB]: ") ~= nil, "AB: the sides are set off by ' | '",
  lines[2])
t.ok(not lines[1]:find("[%w%])] [AB]:"), "AB: no side label runs into the case before it", lines[1])

-- A repetition in which no case runs (every case unsupported, or run once) says so, and no time.
local none = dir .. "/none.lua"
t.write(none, [[
local h = require("harness").start({ script = "none", about = "progress line", mib = 1, reps = 2,
  knobs = { { name = "LEVEL", kind = "count", default = 1, ab = true, desc = "a value the cases read" } } }, { ... })
h:case("gone", function() return false, "no such size" end)
h:case("setup", function(r) r.x = 1 end, { once = true })
h:columns { { "x", "x", "count" } }
h:finish()
]])
for _, args in ipairs { "", " 'AB=LEVEL=1 | LEVEL=2'" } do
  local name = args == "" and "" or "AB: "
  out, code = t.ftrun_run(q(none) .. args, "RESULTS=" .. q(dir .. "/none" .. #args))
  t.is(code, 0, name .. "a run whose second repetition has no case to run completes", out)
  local rep2 = out:match("none%.lua: rep 2/2:[^\n]*") or ""
  t.is(rep2, ("none.lua: rep 2/2: no case left to run (%d not supported, %d run in the first repetition only)")
    :format(#args > 0 and 2 or 1, #args > 0 and 2 or 1), name .. "rep 2 says no case was left to run, not a time")
  t.like(out, "CHECKSUMS NONE: no read-back was made", name .. "and the verdict says no read-back was made")
  t.ok(not out:find("CHECKSUMS OK", 1, true), name .. "not 'CHECKSUMS OK' with nothing read back", out)
end

-- A case that is not supported is not noisy either: only why it did not run is said. Another
-- process kept busy while it ran (two spinning shells, not waited for), so it would be flagged;
-- a case that runs beside it the same way shows the flag is really raised.
local busy = dir .. "/busy.lua"
t.write(busy, [[
local function spin()
  os.execute("(timeout 0.5 sh -c 'while :; do :; done' &); (timeout 0.5 sh -c 'while :; do :; done' &); sleep 0.5")
end
local h = require("harness").start({ script = "busy", about = "progress line", mib = 1, reps = 1 }, { ... })
h:case("disturbed", function(r) spin() r.x = 1 end)
h:case("gone", function() spin() return false, "no such size" end)
h:columns { { "x", "x", "count" } }
h:finish()
]])
out, code = t.ftrun_run(q(busy), "RESULTS=" .. q(dir .. "/busy"))
t.is(code, 0, "a run with cases beside busy processes completes", out)
local rep1 = out:match("busy%.lua: rep 1/1:[^\n]*") or ""
t.like(rep1, "disturbed (noisy); ", "a supported case beside the busy processes is flagged noisy")
t.like(rep1, "; gone (not supported: no such size) (", "the unsupported one says why it did not run")
t.ok(not rep1:find("gone (noisy)", 1, true), "and is not called noisy", rep1)

os.execute("rm -rf " .. q(dir))
t.done()
