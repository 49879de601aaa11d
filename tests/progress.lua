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
t.like(lines[2], "A: b; c ", "AB: side A without a stray separator")
t.like(lines[2], "B: b [B]; c [B] ", "AB: side B without a stray separator")
t.is(stray(lines), nil, "AB: no stray ';' on any progress line")

os.execute("rm -rf " .. q(dir))
t.done()
