-- compare.lua against runs made here: the same run compared with itself, a
-- copy with one row 20 % slower, another script, and bad arguments.
local t = require "tap"
local json = require "json"
local q = t.quote

local dir = t.tmpdir()
local _, code = t.ftrun_run("cycles.lua", "QUICK=1 MIB=8 REPS=6 CYCLES=AB RESULTS=" .. q(dir))
t.is(code, 0, "a small cycles run to compare")
local doc = assert(json.decode(t.read(dir .. "/quick-results.json") or "null"), "its JSON")

-- Two fixtures from it: cycle A's pass 1 set to six known values, and a
-- copy with each of them 20 % slower (then every new value is above every
-- old one, so U = 0 and the exact p is 2 / C(12, 6) = 2/924).
local function with_pass1(values, path)
  for _, r in ipairs(doc.rows) do
    if r.case == "A" and r.column == "pass1" then r.values = values end
  end
  t.write(path, json.encode(doc))
end
local base, slower = dir .. "/base.json", dir .. "/slower.json"
with_pass1({ 1000, 1010, 1020, 1030, 1040, 1050 }, base)
with_pass1({ 1200, 1212, 1224, 1236, 1248, 1260 }, slower)

local out
out, code = t.ftrun_run(("compare.lua %s %s"):format(q(base), q(base)))
t.is(code, 0, "a run compared with itself exits 0")
t.like(out, "| A | pass1 | ns/page | ", "one line per row")
t.ok(not out:find("%(worse%)") and not out:find("%(better%)"), "and no row differs")
t.like(out, "geomean of new / old over the", "a geometric mean closes the table")
t.like(out, "(+0.0 %)", "which is no change")

out, code = t.ftrun_run(("compare.lua %s %s"):format(q(base), q(slower)))
t.is(code, 0, "without FAIL_ABOVE a slower row still exits 0")
t.like(out, "+20.0 % (worse) | 0.00216", "the slowed row is marked, p exact for 6 against 6 (2/924)")
out, code = t.ftrun_run(("compare.lua %s %s FAIL_ABOVE=5"):format(q(base), q(slower)))
t.is(code, 1, "FAIL_ABOVE=5 exits 1 on a row 20 % worse")
t.like(out, "1 row(s) significantly worse by more than FAIL_ABOVE=5 %", "and says which")
t.like(out, "A pass1: +20.0 %", "naming the row")
_, code = t.ftrun_run(("compare.lua %s %s FAIL_ABOVE=25"):format(q(base), q(slower)))
t.is(code, 0, "FAIL_ABOVE=25 lets a 20 % change through")

_, code = t.ftrun_run("first_touch.lua", "MIB=4 REPS=2 RESULTS=" .. q(dir))
out, code = t.ftrun_run(("compare.lua %s %s"):format(q(base), q(dir .. "/exp-first_touch-results.json")))
t.is(code, 2, "runs of different scripts are refused")
t.like(out, "not the same measurement (FORCE=1 compares them anyway)", "and it says how to force it")
out, code = t.ftrun_run(("compare.lua %s %s FORCE=1"):format(q(base), q(dir .. "/exp-first_touch-results.json")))
t.is(code, 2, "FORCE=1 compares them, and with no row in common exits 2")
t.like(out, "have no row in common", "saying so")
out, code = t.ftrun_run(("compare.lua %s %s FAIL_ABOVE=5"):format(q(dir .. "/exp-first_touch-results.json"),
  q(dir .. "/exp-first_touch-results.json")))
t.is(code, 2, "FAIL_ABOVE with two repetitions a side cannot gate: exit 2")
t.like(out, "the U test cannot reach p < 0.05", "and it says why")

for _, c in ipairs {
  { base, "needs at least two results JSON files" },
  { base .. " /no/such.json", "cannot read /no/such.json" },
  { base .. " " .. q(dir .. "/quick-raw.txt"), "not an ftrun results JSON" },
  { base .. " " .. base .. " ALPHA=2", "ALPHA=2: expected a level between 0 and 1" },
  { base .. " " .. base .. " FAIL_ABOVE=-1", "FAIL_ABOVE=-1: expected a percent above 0" },
  { base .. " " .. base .. " MIB=4", "MIB=4: not a knob of compare.lua" },
} do
  out, code = t.ftrun_run("compare.lua " .. c[1])
  t.is(code, 2, c[2] .. ": exit 2")
  t.like(out, c[2], "names it: " .. c[2])
end

os.execute("rm -rf " .. q(dir))
t.done()
