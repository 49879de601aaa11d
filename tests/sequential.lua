-- UNTIL=decided: runs of a script added one at a time against BASELINE's
-- runs until every timed row is decided or MAX_RUNS is reached, each look
-- at its share of ALPHA; bad input (a missing or foreign baseline, MAX_RUNS=0,
-- a calibration that is truncated or another machine's) refused with exit 2
-- before anything runs or is written.
local t = require "tap"
local json = require "json"
local calibrations = require "calibrations"
local sequential = require "sequential"
local q = t.quote

-- The spending function: increments that add up to ALPHA, the first looks the stingiest.
local sum, last = 0, 0
for i = 1, 5 do
  local a = sequential.spend(0.05, i, 5)
  t.ok(a > last, ("look %d spends more than look %d"):format(i, i - 1), tostring(a))
  sum, last = sum + a, a
end
t.ok(math.abs(sum - 0.05) < 1e-6, "the five looks spend ALPHA = 0.05 in all", tostring(sum))

-- AB UNTIL=decided's looks: the Pocock-shaped spending adds up to ALPHA, and each
-- look's verdict from the within-pair log ratios.
local abuntil = require "abuntil"
t.ok(math.abs(abuntil.spent(0.05, 1) - 0.05) < 1e-12 and abuntil.spent(0.05, 0) == 0, "spending: 0 to ALPHA")
t.ok(abuntil.spent(0.05, 0.1) > 0.05 * 0.1, "Pocock's shape spends more early than a straight line")
do
  local function series(n, mean, wobble)
    local d = {}
    for i = 1, n do d[i] = mean + wobble * (i % 2 == 0 and 1 or -1) * (1 + i % 3) end
    return d
  end
  local v = abuntil.judge(series(20, math.log(1.03), 0.002), 0.001, 2)
  t.is(v.kind, "different", "a steady +3 % is different", abuntil.text(v, 2))
  t.like(abuntil.text(v, 2), "different by +3.0 % [", "said with its interval")
  v = abuntil.judge(series(40, 0, 0.002), 0.001, 2)
  t.is(v.kind, "same", "a steady 0 % within ±2 % is the same", abuntil.text(v, 2))
  t.ok(v.lo > 1 / 1.02 and v.hi < 1.02, "shown with the interval that lies inside ±2 %", abuntil.text(v, 2))
  v = abuntil.judge(series(8, 0.01, 0.05), 0.001, 2)
  t.is(v.kind, "undecided", "a wobbling +1 % at 8 pairs is undecided", abuntil.text(v, 2))
  t.ok(v.need and v.need > 0, "and says how many more pairs would decide", abuntil.text(v, 2))
  local d100 = {}
  for i = 1, 100 do d100[i] = i end
  local means, size = abuntil.batches(d100)
  t.ok(size == 10 and #means == 10 and means[1] == 5.5, "batch means: 100 pairs in 10 batches of 10", size)
  means, size = abuntil.batches({ 1, 2, 3, 4, 5, 6, 7, 8, 9 })
  t.ok(size == 2 and #means == 4, "batch size even, at least 3 batches", size)
  -- a drift lasting many pairs: the pairs' own t would call it, the batches leave it undecided
  local drift = {}
  for i = 1, 64 do drift[i] = (i <= 32 and 0.06 or -0.02) + 0.004 * (i % 2 == 0 and 1 or -1) end
  t.is(abuntil.judge(drift, 0.01, 2).kind, "undecided", "a drift of half the run is no change, undecided")
  v = abuntil.judge({ 0.5, 0.5, 0.5 }, 0.001, 2)
  t.is(v.kind, "different", "one ratio in every pair (a count): exact")
end

-- AB UNTIL=decided inside one run: pairs added, progress on stderr, the outcome noted and kept in the JSON.
do
  local d = t.tmpdir()
  local out_, code_ = t.ftrun_run(("cycles.lua CYCLES=A MIB=4 'AB=THP=never | THP=never' UNTIL=decided MAX_PAIRS=14 "
    .. "RESULTS=%s"):format(q(d)))
  t.is(code_, 0, "AB UNTIL=decided runs", out_)
  t.like(out_, "cycles.lua: pair 12, ", "progress after the first look, with the estimate")
  t.like(out_, "UNTIL=decided A pass1: ", "the decision row's outcome")
  t.like(out_, "alpha spending, Pocock shape over MAX_PAIRS=14", "and how the looks share ALPHA")
  local doc_ = json.decode(t.read(d .. "/cycles-A-ab-results.json") or "null") or { values = {} }
  local v
  for _, x in ipairs(doc_.values) do if x.value == "until_A_pass1" then v = x end end
  t.ok(v and v.pairs >= 12 and v.pairs <= 14 and (v.outcome == "same" or v.outcome == "different"
    or v.outcome == "undecided"), "the JSON keeps the outcome and the pairs, at most MAX_PAIRS", json.encode(v))
end

-- PLANT_NS: a real cost in side B's pass 1, at least the spin asked per page.
do
  local d = t.tmpdir()
  local out_, code_ = t.ftrun_run(("cycles.lua CYCLES=A MIB=4 REPS=6 'AB=PLANT_NS=0 | PLANT_NS=20000' RESULTS=%s")
    :format(q(d)))
  t.is(code_, 0, "AB with a planted cost runs", out_)
  local doc_ = json.decode(t.read(d .. "/cycles-A-ab-results.json") or "null") or { rows = {} }
  local a, b
  for _, r in ipairs(doc_.rows) do
    if r.column == "pass1" then if r.side == "A" then a = r.values elseif r.side == "B" then b = r.values end end
  end
  local planted = a and b and #a == #b and #a == 6
  for i = 1, planted and #a or 0 do planted = planted and b[i] - a[i] > 20000 - 0.5 * a[i] and b[i] >= 20000 end
  t.ok(planted, "side B's pass 1 costs at least the 20000 ns per page planted", out_)
end

-- A run that compares nothing loads none of the judging machinery.
do
  local d = t.tmpdir()
  t.write(d .. "/loaded.lua", [[
require "harness"
local heavy = {}
for _, m in ipairs { "verdicts", "calibrations", "covariates", "abuntil" } do
  if package.loaded[m] then heavy[#heavy + 1] = m end
end
print("heavy: " .. table.concat(heavy, " ") .. ".")
]])
  local out_ = t.ftrun_run(q(d .. "/loaded.lua"))
  t.like(out_, "heavy: .", "the harness alone loads no verdicts, calibrations, covariates or abuntil")
end

-- MAX_RUNS and every count take 1e9 as the integer it is, not 1e30 (no double holds it exactly)
local knobs = require "knobs"
t.is(knobs.parsers.count("1e9", {}), 1000000000, "a count of 1e9 is 1000000000")
t.is(knobs.parsers.count("1e30", {}), nil, "1e30 is refused")
t.is(knobs.parsers.count("1.5", {}), nil, "1.5 is refused")

local dir = t.tmpdir()
local KNOBS = "CYCLES=A MIB=8 REPS=4"
for i = 1, 2 do
  local _, code = t.ftrun_run(("cycles.lua %s RESULTS=%s"):format(KNOBS, q(dir .. "/base/r" .. i)))
  t.is(code, 0, "a baseline run")
end
local caldir = dir .. "/cal"
local env = "CALIBRATIONS=" .. q(caldir)

local out, code = t.ftrun_run(("cycles.lua %s UNTIL=decided BASELINE=%s MAX_RUNS=2 RESULTS=%s"):format(KNOBS,
  q(dir .. "/base"), q(dir .. "/until")), env)
t.is(code, 0, "UNTIL=decided runs", out)
t.like(out, "at most 2 runs", "says its cap")
t.like(out, "| case | column | unit | change % [interval] | p | q | verdict |", "ends in a verdict per row")
t.ok(out:find("decided after %d run") or out:find("undecided at MAX_RUNS after 2 run"), "and how many runs it took",
  out)
t.like(out, "Decision row(s): A pass1 (ROWS= picks others)", "follows the script's decision row")
t.like(out, "the host's drift since then is part of this comparison's uncertainty", "and says the baseline's age counts")
t.ok(out:find("the baseline's newest run is %d+ min old"), "naming the age", out)
local runs = t.run("ls " .. q(dir .. "/until"))
t.ok(runs:find("run-01", 1, true), "its runs kept, one directory each", runs)

-- FORMAT=csv: stdout is the verdict table alone, header first; QUIET=1 leaves stderr the outcome
out, code = t.ftrun_run(("cycles.lua %s UNTIL=decided BASELINE=%s MAX_RUNS=1 FORMAT=csv QUIET=1 RESULTS=%s "
  .. "2>%s"):format(KNOBS, q(dir .. "/base"), q(dir .. "/until-csv"), q(dir .. "/until-csv.err")), env)
t.is(code, 0, "UNTIL=decided FORMAT=csv runs", out)
local lines = {}
for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
t.is(lines[1], table.concat(sequential.FIELDS, ","), "FORMAT=csv: its first line is the header", out)
t.ok(#lines > 1 and not out:find("|", 1, true), "FORMAT=csv: a line per row and no markdown", out)
local err = t.read(dir .. "/until-csv.err") or ""
t.like(err, "after 1 run(s)", "FORMAT=csv: the outcome on stderr")
t.ok(not err:find("run 1 of at most", 1, true), "QUIET=1: no progress", err)

-- Bad input: exit 2, named, and nothing written.
local other = dir .. "/other"
t.ftrun_run(("first_touch.lua MIB=4 REPS=2 RESULTS=%s"):format(q(other)))
local foreign = dir .. "/foreign"
os.execute("mkdir -p " .. q(foreign) .. " && cp " .. q(dir .. "/base/r1/cycles-A-results.json") .. " " .. q(foreign))
do
  local path = foreign .. "/cycles-A-results.json"
  local doc = json.decode(t.read(path))
  doc.machine.cpu = "Intel Xeon"
  t.write(path, json.encode(doc))
end
local doc = json.decode(t.read(dir .. "/base/r1/cycles-A-results.json"))
local calpath = calibrations.path(doc, caldir)
for _, c in ipairs {
  { "UNTIL=decided", "UNTIL=decided needs AB=\"A knobs | B knobs\" (both settings in pairs inside this run) or "
    .. "BASELINE=DIR" },
  { "UNTIL=decided 'AB=THP=never | THP=never' MAX_PAIRS=0", "MAX_PAIRS=0: expected a positive integer" },
  { "UNTIL=decided 'AB=THP=never | THP=never' EQUIV=0", "EQUIV=0: expected a percent above 0 and below 100" },
  { "UNTIL=decided 'AB=THP=never | THP=never' EQUIV=-2", "EQUIV=-2: expected a percent above 0 and below 100" },
  { "UNTIL=decided 'AB=THP=never | THP=never' EQUIV=2%", "EQUIV=2%: expected a percent above 0 and below 100" },
  { "'AB=THP=never | THP=never' MAX_PAIRS=10", "MAX_PAIRS=10: only with AB=\"A knobs | B knobs\" UNTIL=decided" },
  { "EQUIV=2", "EQUIV=2: only with AB=\"A knobs | B knobs\" UNTIL=decided" },
  { "PLANT_NS=50", "PLANT_NS=50: a planted cost only as one side of AB" },
  { "'AB=PLANT_NS=0 | PLANT_NS=x' REPS=6", "PLANT_NS=x: expected whole ns per page, 0 to 100000" },
  { "UNTIL=decided 'AB=THP=never | THP=never' BASELINE=" .. q(dir .. "/base"), "an AB run compares its own pairs" },
  { "UNTIL=decided BASELINE=" .. q(dir .. "/nothing"), "no *results.json in it" },
  { "UNTIL=decided BASELINE=" .. q(other), "is a run of first_touch.lua, not cycles.lua" },
  { "UNTIL=decided BASELINE=" .. q(foreign), "was run on another machine (cpu Intel Xeon" },
  { "UNTIL=decided MAX_RUNS=0 BASELINE=" .. q(dir .. "/base"), "MAX_RUNS=0: expected a positive integer" },
  { "BASELINE=" .. q(dir .. "/base"), "only with UNTIL=decided" },
  { "UNTIL=sometimes", "UNTIL=sometimes: expected decided" },
  { "ROWS=A:pass1", "ROWS=: only with UNTIL=decided or AB" },
  { "UNTIL=decided ROWS=pass1 BASELINE=" .. q(dir .. "/base"), "ROWS=pass1: expected all, or case:column items" },
  { "UNTIL=decided BASELINE=" .. q(dir .. "/base/r1/cycles-A-results.json"),
    "expected a directory of a baseline's runs" },
  { "UNTIL=decided BASELINE=" .. q(dir .. "/base") .. " MIB=16", "was run with MIB=8, this run has MIB=16" },
  { "UNTIL=decided BASELINE=" .. q(dir .. "/base") .. " THP=never", "was run with THP=default, this run has THP=never" },
  { "UNTIL=decided BASELINE=" .. q(dir .. "/base"), "not a calibration file of ftrun", function()
    os.execute("mkdir -p " .. q(caldir))
    t.write(calpath, '{"kind": "ftrun calibration", "rows": [')
  end },
  { "UNTIL=decided BASELINE=" .. q(dir .. "/base"), "it was made on another machine", function()
    t.write(calpath, json.encode { kind = "ftrun calibration", script = "cycles.lua", fingerprint = { cpu = "x" },
      knobs = calibrations.knobs(doc), rows = {} })
  end },
  { "UNTIL=decided BASELINE=" .. q(dir .. "/mixed"), "mixed/r2/cycles-A-results.json has 6.1-other", function()
    -- the calibration fits the first baseline run, not the second
    t.write(calpath, json.encode { kind = "ftrun calibration", script = "cycles.lua",
      fingerprint = calibrations.fingerprint(doc), knobs = calibrations.knobs(doc), rows = {} })
    os.execute("mkdir -p " .. q(dir .. "/mixed/r2") .. " && cp -R " .. q(dir .. "/base/r1") .. " "
      .. q(dir .. "/mixed/"))
    local d2 = json.decode(t.read(dir .. "/base/r2/cycles-A-results.json"))
    d2.provenance.kernel = "6.1-other"
    t.write(dir .. "/mixed/r2/cycles-A-results.json", json.encode(d2))
  end },
} do
  if c[3] then c[3]() end
  local where = dir .. "/refused"
  local knobs_given = c[1]:find("MIB=", 1, true) and KNOBS:gsub("MIB=%d+ ", "") or KNOBS -- a knob is given once
  if c[1]:find("REPS=", 1, true) then knobs_given = knobs_given:gsub(" REPS=%d+", "") end
  out, code = t.ftrun_run(("cycles.lua %s %s RESULTS=%s"):format(knobs_given, c[1], q(where)), env)
  t.is(code, 2, c[1] .. ": exit 2")
  t.like(out, c[2], "names it")
  t.ok(not io.open(where), "and writes nothing", where)
end

-- A BASELINE that reads as an option is a path, never find's action.
do
  local cwd = dir .. "/cwd"
  os.execute("mkdir -p " .. q(cwd) .. " && touch " .. q(cwd .. "/a") .. " " .. q(cwd .. "/b"))
  out, code = t.run(("cd %s && QUICK=1 %s cycles.lua UNTIL=decided BASELINE=-delete"):format(q(cwd),
    q(t.run("realpath " .. q(t.ftrun)):match("[^\n]+"))))
  t.is(code, 2, "BASELINE=-delete: exit 2", out)
  t.ok(io.open(cwd .. "/a") and io.open(cwd .. "/b"), "and the files where it ran are still there")
end

os.execute("rm -rf " .. q(dir))
t.done()
