-- compare.lua against fixtures made from one run here: runs a side as the
-- unit (exact permutation p), one run a side (not judged without a
-- calibration, judged with one), Benjamini-Hochberg in the gate, options
-- from the environment, and bad input.
local t = require "tap"
local json = require "json"
local q = t.quote

local dir = t.tmpdir()
local _, code = t.ftrun_run("cycles.lua", "QUICK=1 MIB=8 REPS=6 CYCLES=AB RESULTS=" .. q(dir))
t.is(code, 0, "a small cycles run to compare")
local text = t.read(dir .. "/quick-results.json")
-- The run's machine-wide counts (vmstat's thp_* rows) move with whatever
-- else runs here; zeroed, every fixture has the same rows to test, so the
-- BH counts below do not depend on another process's THP faults.
local function fresh()
  local doc = assert(json.decode(text or "null"), "its JSON")
  for _, r in ipairs(doc.rows) do
    if r.unit == "count" then
      for i in ipairs(r.values) do r.values[i] = 0 end
    end
  end
  return doc
end

-- A copy of the run: every value of the timed rows (ns/page, us) times
-- `scale` (only `only`'s row when given), and every row times 1 + jitter,
-- so runs differ a little, as runs do.
local TIMED = { ["ns/page"] = true, us = true }
local function fixture(path, scale, jitter, only, edit)
  local doc = fresh()
  for _, r in ipairs(doc.rows) do
    local s = (TIMED[r.unit] and (not only or r.case .. " " .. r.column == only)) and scale or 1
    for i, v in ipairs(r.values) do
      if type(v) == "number" and v ~= 0 and r.unit ~= "faults" then r.values[i] = v * s * (1 + jitter) end
    end
  end
  if edit then edit(doc) end
  t.write(path, json.encode(doc))
  return path
end

local function runs(name, n, scale, only, shift)
  local list = {}
  os.execute("mkdir -p " .. q(dir .. "/" .. name))
  for i = 1, n do
    list[i] = fixture(("%s/%s/r%d-results.json"):format(dir, name, i), scale, (i - (n + 1) / 2) * 0.002 + (shift or 0),
      only)
  end
  return list
end

local function cmp(args, env)
  return t.ftrun_run("compare.lua " .. args, env)
end

-- One run a side, the two-file form, no calibration: judged against the stated
-- conservative spread of the machine's kind, so +20 % is not called and -74 % is.
local base = fixture(dir .. "/base.json", 1, 0)
local slower = fixture(dir .. "/slower.json", 1.2, 0)
local nocal = "CALIBRATIONS=" .. q(dir .. "/no-calibrations")
local out
out, code = cmp(q(base) .. " " .. q(slower), nocal)
t.is(code, 0, "one run a side exits 0")
t.like(out, "| A | pass1 | ns/page | ", "one line per row")
t.ok(out:match("| A | pass1 | ns/page | [^\n]*| 25%.0 %(bound%) | [^\n]*| ~ %(%d+ runs a side would decide%) |"),
  "the verdict: judged against the default bound, undecided, with what would decide it", out)
t.like(out, "the stated default between-run spread for a virtual machine: 25 %", "the bound named under the table")
t.like(out, "+20.0 [", "the change is still shown")
t.ok(not out:find("(worse)", 1, true), "and no row is called")
do
  local faster = fixture(dir .. "/faster74.json", 0.26, 0)
  local out74 = cmp(q(base) .. " " .. q(faster), nocal)
  t.ok(out74:match("| A | pass1 | ns/page | [^\n]*| %-74%.0 %% %(better%) |"),
    "a -74 % change one run a side, no calibration: called against the bound", out74)
end
out, code = cmp(q(base) .. " " .. q(slower), "FAIL_ABOVE=5")
t.is(code, 2, "FAIL_ABOVE from the environment with one run a side: exit 2, not a silent pass")
t.like(out, "FAIL_ABOVE cannot gate", "saying it cannot gate")

-- Four runs a side, every timed row 20 % slower: exact permutation p = 2/70.
local old4, new4 = runs("old4", 4, 1), runs("new4", 4, 1.2)
local function join(list)
  local out_ = {}
  for i, p in ipairs(list) do out_[i] = q(p) end
  return table.concat(out_, " ")
end
-- ROWS=all: every row decides, one family of tests (the decision rows alone are tested below)
out, code = cmp(join(old4) .. " -- " .. join(new4) .. " ROWS=all")
t.is(code, 0, "4 runs against 4 without FAIL_ABOVE exits 0")
t.like(out, "| A | pass1 | ns/page | ", "the row")
t.like(out, "(4×6)", "sizes as runs × repetitions")
t.like(out, "| 0.0286 | 0.04 | +20.0 % (worse) |", "p = 2/70, exact; q = p * 7/5 (five of seven rows moved)")
t.like(out, "| A | pass1_faults | faults | ", "a count row")
t.like(out, "= (one value)", "one value on both sides is not tested")
out, code = cmp(join(old4) .. " -- " .. join(new4), "FAIL_ABOVE=5")
t.is(code, 1, "FAIL_ABOVE=5 in the environment gates: exit 1")
t.like(out, "called worse by more than FAIL_ABOVE=5 %", "and says why")
t.like(out, "A pass1: +20.0 %", "naming the row")
_, code = cmp(join(old4) .. " -- " .. join(new4) .. " FAIL_ABOVE=25", "FAIL_ABOVE=5")
t.is(code, 0, "the argument wins over the environment: FAIL_ABOVE=25 lets 20 % through")
out, code = cmp(q(dir .. "/old4") .. " -- " .. q(dir .. "/new4") .. " ROWS=all")
t.like(out, "| 0.0286 | 0.04 | +20.0 % (worse) |", "directories of runs read as their files")
t.is(code, 0, "and exit 0")

-- A count that was 0 in every old run: its change is no percent.
local from_zero = {}
os.execute("mkdir -p " .. q(dir .. "/zero4"))
for i = 1, 4 do
  from_zero[i] = fixture(("%s/zero4/r%d-results.json"):format(dir, i), 1.2, (i - 2.5) * 0.002, nil, function(d)
    for _, r in ipairs(d.rows) do
      if r.case == "A" and r.column == "thp_fault_alloc" then
        for j in ipairs(r.values) do r.values[j] = 10 + j end
      end
    end
  end)
end
out = cmp(join(old4) .. " -- " .. join(from_zero))
t.like(out, "| A | thp_fault_alloc | count | 0 [0, 0] (4×6) | ", "a count 0 in every old run")
t.like(out, " | new - old +13.5 |", "called by its difference from 0", out)
t.ok(not out:find("%f[%a]inf%f[%A]"), "not as an infinite percent")

-- A count the same in every repetition of each run and different between
-- the sides (THP on against off: faults 262144 -> 512) is exact at one run a
-- side; equal counts are the same, exactly; a count that varies is not exact.
local function faults_fixture(path, value, vary)
  return fixture(path, 1, 0, nil, function(d)
    for _, r in ipairs(d.rows) do
      if r.case == "A" and r.column == "pass1_faults" then
        for j in ipairs(r.values) do r.values[j] = value + (vary and j or 0) end
      end
    end
  end)
end
out, code = cmp(q(faults_fixture(dir .. "/f262144.json", 262144)) .. " " .. q(faults_fixture(dir .. "/f512.json", 512)))
t.is(code, 0, "one run a side with a changed count exits 0")
t.ok(out:match("| A | pass1_faults | faults | [^\n]*| different %(exact%): %-99%.8 %% |"), "the count called exactly",
  out)
t.ok(out:match("| A | pass1 | ns/page | [^\n]*%(bound%)"), "the times judged against the bound")
out = cmp(q(faults_fixture(dir .. "/f512b.json", 512)) .. " " .. q(faults_fixture(dir .. "/f512.json", 512)))
t.ok(out:match("| A | pass1_faults | faults | [^\n]*| = %(one value%): same %(exact%) |"),
  "equal counts: same, exactly")
out = cmp(q(faults_fixture(dir .. "/fv.json", 512, true)) .. " " .. q(faults_fixture(dir .. "/f262144.json", 262144)))
t.ok(not out:match("pass1_faults[^\n]*exact"), "a count that varies within a run is not exact")
do
  local verdicts = require "verdicts"
  local row = verdicts.pairs({ 512, 512, 512 }, { 262144, 262144, 262144 }, { ALPHA = 0.05, SEED = 1, unit = "faults" })
  t.ok(row.exact and row.ratio == 512, "AB: a count constant on each side and different is exact at 3 pairs")
  row = verdicts.pairs({ 100, 100 }, { 200, 200 }, { ALPHA = 0.05, SEED = 1, unit = "ns/page" })
  t.ok(not row.exact, "a time that repeats is a timer's step, not exact")
  row = verdicts.runs({ { 7 } }, { { 9 } }, nil, { ALPHA = 0.05, SEED = 1, unit = "faults" })
  t.ok(not row.exact, "one repetition a side shows no constancy: not exact")
end

-- The symbols explained under the table; FORMAT=csv|tsv|json: the rows alone on stdout.
out = cmp(q(base) .. " " .. q(slower))
t.like(out, "verdicts: ", "the symbols the table uses explained under it")
t.like(out, "~ undecided", "~ among them")
local only_stdout = function(args) return t.run(t.quote(t.ftrun) .. " compare.lua " .. args .. " 2>/dev/null") end
local csv_out, csv_code = only_stdout(q(base) .. " " .. q(slower) .. " FORMAT=csv")
t.is(csv_code, 0, "FORMAT=csv exits 0")
t.ok(csv_out:match("^old,new,case,column,unit,old_median,new_median,change_pct"), "FORMAT=csv: a header first", csv_out)
t.ok(not csv_out:find("| case |", 1, true), "and no markdown on stdout", csv_out)
local json_out = only_stdout(q(base) .. " " .. q(slower) .. " FORMAT=json")
local list = json.decode(json_out) or {}
t.ok(#list > 0 and list[1].verdict ~= nil and list[1].case ~= nil, "FORMAT=json: a list of rows with verdicts",
  json_out)
out, code = cmp(q(base) .. " " .. q(slower) .. " FORMAT=xml")
t.is(code, 2, "FORMAT=xml: exit 2")
t.like(out, "FORMAT", "naming the knob")
out, code = cmp(q(base) .. " " .. q(base))
t.is(code, 0, "a run compared with itself exits 0")
t.like(out, "a run compared with itself", "and says so")

-- The decision rows (cycles.lua names A pass1) make the gate; ROWS= picks others.
do
  local pass2 = runs("pass2slow", 4, 1.2, "A pass2")
  out, code = cmp(join(old4) .. " -- " .. join(pass2), "FAIL_ABOVE=5")
  t.is(code, 0, "a row worse beyond FAIL_ABOVE that is no decision row does not fail the gate", out)
  t.like(out, "decision row(s) (named by cycles.lua; ROWS= picks others): A pass1: ", "the decision row named")
  t.like(out, "| A | pass2 | ns/page | ", "the other rows reported as they stand")
  out, code = cmp(join(old4) .. " -- " .. join(pass2) .. " ROWS=A:pass2", "FAIL_ABOVE=5")
  t.is(code, 1, "ROWS=A:pass2 gates on pass 2", out)
  out, code = cmp(join(old4) .. " -- " .. join(pass2) .. " ROWS=all", "FAIL_ABOVE=5")
  t.is(code, 0, "ROWS=all: every row in one family of tests, where one moved row of seven is not called", out)
  t.ok(not out:find("decision row(s)", 1, true), "and no decision row named")
  out, code = cmp(join(old4) .. " -- " .. join(pass2) .. " ROWS=pass2")
  t.is(code, 2, "ROWS=pass2 (no case): exit 2")
  t.like(out, "ROWS=pass2: expected all, or case:column items", "naming what it takes")
end

-- A timed row the new runs lack: named, and no gate passes over it.
local lacking = {}
os.execute("mkdir -p " .. q(dir .. "/lack4"))
for i = 1, 4 do
  lacking[i] = fixture(("%s/lack4/r%d-results.json"):format(dir, i), 1, (i - 2.5) * 0.002 + 0.001, nil, function(d)
    for k = #d.rows, 1, -1 do
      if d.rows[k].case == "A" and d.rows[k].column == "pass2" then table.remove(d.rows, k) end
    end
  end)
end
out, code = cmp(join(old4) .. " -- " .. join(lacking))
t.is(code, 0, "new runs without a row compare")
t.like(out, "1 row(s) only in the old runs, not compared: A pass2", "and name the row they lack")
out, code = cmp(join(old4) .. " -- " .. join(lacking) .. " ROWS=all", "FAIL_ABOVE=5")
t.is(code, 2, "FAIL_ABOVE cannot pass a timed row the new runs lack: exit 2")
t.like(out, "A pass2 (not in the new runs)", "naming it")

-- The runs' order on the command line changes nothing: one set of runs, one table.
-- (the file lines and the provenance named, the first file's: the fixtures are runs made
-- beside other suites, whose THP settings may differ from one to the next; and the runner's
-- own lines, "ftrun: warning: ... as at boot", which another process changing a setting between
-- the two comparisons adds to one of them)
local table_of = function(o)
  return (o:gsub("[^\n]*%.json[^\n]*\n", ""):gsub("compared by provenance[^\n]*\n", ""):gsub("ftrun: [^\n]*\n", ""))
end
local forward = cmp(join(old4) .. " -- " .. join(new4))
local backward = cmp(join { old4[4], old4[2], old4[3], old4[1] } .. " -- " .. join { new4[3], new4[1], new4[4], new4[2] })
t.is(table_of(backward), table_of(forward), "the same runs in another order give the same intervals")

-- Runs alike (only the jitter, their own): nothing is called.
local same4 = runs("same4", 4, 1, nil, 0.001)
out, code = cmp(join(old4) .. " -- " .. join(same4), "FAIL_ABOVE=5")
t.is(code, 0, "4 runs against 4 alike pass the gate")
t.ok(not out:find("(worse)", 1, true) and not out:find("(better)", 1, true), "and no row is called")

-- Benjamini-Hochberg: one row alone 20 % slower has p = 0.0286 < 0.05, but
-- among the timed rows the correction does not call it, so the gate holds.
local one4 = runs("one4", 4, 1.2, "A pass1")
out, code = cmp(join(old4) .. " -- " .. join(one4) .. " ROWS=all", "FAIL_ABOVE=5")
t.is(code, 0, "a row whose q is above ALPHA does not fail the gate")
t.like(out, "| 0.0286 | ", "its p is below 0.05")
t.like(out, "would have p < 0.05 by chance", "the expected count of chance calls is printed")
local six_old, six_new = runs("old6", 6, 1), runs("one6", 6, 1.2, "A pass1")
out, code = cmp(join(six_old) .. " -- " .. join(six_new), "FAIL_ABOVE=5")
t.is(code, 1, "6 runs a side (p = 2/924) call that row through the correction")
t.like(out, "A pass1: +20.0 %", "and name it")
out, code = cmp(join(old4) .. " -- " .. join(one4), "FAIL_ABOVE=5")
t.is(code, 1, "the decision row alone (cycles.lua's A pass1) is its own family: 4 runs a side call it")
t.like(out, "| 0.0286 | 0.0286 | +20.0 % (worse) |", "q = p, one test")

-- Three runs a side cannot reach 0.05: said, and FAIL_ABOVE exits 2.
local three = { old4[1], old4[2], old4[3] }
out, code = cmp(join(three) .. " -- " .. join({ new4[1], new4[2], new4[3] }))
t.is(code, 0, "3 against 3 exits 0")
t.like(out, "cannot reach p < 0.05 (its smallest p is 0.1)", "saying the counts cannot reach ALPHA")
_, code = cmp(join(three) .. " -- " .. join({ new4[1], new4[2], new4[3] }), "FAIL_ABOVE=5")
t.is(code, 2, "and FAIL_ABOVE cannot gate them: exit 2")

-- A calibration of this machine: one run a side judged against its spread.
local calibrations = require "calibrations"
local doc = fresh()
local function calibration(sd, edit)
  local cal = { kind = "ftrun calibration", script = doc.script, fingerprint = calibrations.fingerprint(doc),
    knobs = calibrations.knobs(doc), runs = 11, date = "test", rows = {} }
  for _, r in ipairs(doc.rows) do
    cal.rows[#cal.rows + 1] = { case = r.case, column = r.column, unit = r.unit, between_run_sd_log = sd, df = 10 }
  end
  if edit then edit(cal) end
  return cal
end
local cal_path = dir .. "/cal.json"
t.write(cal_path, json.encode(calibration(0.02)))
out, code = cmp(q(base) .. " " .. q(slower) .. " CALIBRATION=" .. q(cal_path), "FAIL_ABOVE=5")
t.is(code, 1, "with a calibration one run a side is judged, and 20 % against a 2 % spread fails the gate")
t.like(out, "2.0 (cal.)", "the calibrated run-to-run spread beside the row")
t.like(out, "p from Student's t of the difference of the sides' mean log run medians", "and the method")
t.like(out, "spread pooled from " .. cal_path, "saying which calibration")
t.write(cal_path, json.encode(calibration(0.02, function(c) c.fingerprint["machine.cpu"] = "another" end)))
out, code = cmp(q(base) .. " " .. q(slower) .. " CALIBRATION=" .. q(cal_path))
t.like(out, "was made on another machine (machine.cpu another", "a calibration of another machine is not used, and said so")
t.like(out, "(bound)", "so the rows are judged against the bound instead")

-- Found in $CALIBRATIONS by the runs' machine, script and knobs; else the command that makes one.
local caldir = dir .. "/calibrations"
os.execute("mkdir -p " .. q(caldir))
local env = "CALIBRATIONS=" .. q(caldir)
out = cmp(q(base) .. " " .. q(slower), env)
t.like(out, "./ftrun calibrate.lua RUNS=10 -- cycles.lua ", "no calibration: the command that makes one")
t.like(out, "makes one, about ", "and how long it takes here")
t.write(calibrations.path(doc, caldir), json.encode(calibration(0.02)))
out, code = cmp(q(base) .. " " .. q(slower), env .. " FAIL_ABOVE=5")
t.is(code, 1, "the calibration in $CALIBRATIONS is found and used")
t.like(out, "calibrated: p from Student's t", "and named")
-- a run whose hypervisor is unknown (no CAP_SYSLOG) is this machine still;
-- a calibration made before the fingerprint dropped hypervisor_source still applies
local function unknown(d) d.machine.hypervisor, d.machine.hypervisor_source = "unknown", "the kernel log is unreadable" end
local base_u = fixture(dir .. "/base_u.json", 1, 0, nil, unknown)
local slower_u = fixture(dir .. "/slower_u.json", 1.2, 0, nil, unknown)
out, code = cmp(q(base_u) .. " " .. q(slower_u), env .. " FAIL_ABOVE=5")
t.is(code, 1, "runs with hypervisor unknown find and use this machine's calibration", out)
os.rename(calibrations.path(doc, caldir), dir .. "/cal-new.json")
local old_path = caldir .. "/cycles-0123456789abcdef.json"
t.write(old_path, json.encode(calibration(0.02, function(c)
  c.fingerprint["machine.hypervisor_source"] = "kernel log: Hypervisor detected: KVM"
end)))
out, code = cmp(q(base) .. " " .. q(slower), env .. " FAIL_ABOVE=5")
t.is(code, 1, "a calibration that kept hypervisor_source in its fingerprint still applies", out)
t.like(out, old_path, "and is named")
os.remove(old_path)
os.rename(dir .. "/cal-new.json", calibrations.path(doc, caldir))
-- both sides must match it, in either order (reliability review W5)
local elsewhere = fixture(dir .. "/elsewhere.json", 1.2, 0, nil, function(d) d.machine.cpu = "Intel Xeon" end)
for _, args in ipairs { q(base) .. " " .. q(elsewhere), q(elsewhere) .. " " .. q(base) } do
  out = cmp(args .. " FORCE=1", env)
  t.like(out, "does not apply: it was made on another machine (machine.cpu", "one side of another machine: not used")
  out = cmp(args .. " FORCE=1 CALIBRATION=" .. q(calibrations.path(doc, caldir)))
  t.like(out, "does not apply: it was made on another machine (machine.cpu", "one side of another machine: not used")
  t.like(out, "(bound)", "and the rows judged against the bound instead")
end
-- four runs a side against the calibrated spread: p is continuous, 3 a side reach ALPHA, A/A is 'same'
local function line(s, row) return s:match("\n(| " .. row:gsub(" ", " | ") .. " |[^\n]*)") or "" end
out, code = cmp(join { old4[1], old4[2], old4[3] } .. " -- " .. join { one4[1], one4[2], one4[3] }, env)
t.like(line(out, "A pass1"), "| +20.0 % (worse) |", "3 runs a side called through the calibration", out)
out = cmp(join(old4) .. " -- " .. join(same4), env)
t.like(line(out, "A pass1"), "| same within ±", "A/A with a calibration: same within ±δ", out)
t.like(out, "the same within ±δ", "δ explained under the table")
out, code = cmp(join(old4) .. " -- " .. join(same4), env .. " EQUIV=1000")
t.is(code, 2, "EQUIV=1000 (every row the same) is refused", out)
t.like(out, "EQUIV=1000: expected a percent above 0 and below 100", "saying what it takes")
out = cmp(join(old4) .. " -- " .. join(same4), env .. " EQUIV=0.01")
t.ok(not out:find("same within ±", 1, true), "EQUIV smaller than the spread: no row the same")
t.ok(line(out, "A pass1"):match("| ~ %(%d+ runs a side would decide%) |$"), "but how many runs would decide it", out)
-- a row every calibration run gave one value for (a median at the timer's step): no spread, not judged
do
  local verdicts = require "verdicts"
  local row = verdicts.runs({ { 30, 30, 30 } }, { { 31, 31, 31 } }, { between_run_sd_log = 0, df = 5 },
    { ALPHA = 0.05, SEED = 1 })
  t.is(row.p, nil, "a calibrated spread of 0: no p (it would call a change of one timer step)")
  t.like(row.unjudged or "", "no run-to-run spread to judge against", "and the row says why it is not judged")
end
-- a spread that is no finite number (the JSON reader takes 1e999; NaN is no JSON): refused, not a crash
for _, bad in ipairs { "1e999", "NaN" } do
  t.write(cal_path, (json.encode(calibration(0.02)):gsub('"between_run_sd_log":[^,}]+', '"between_run_sd_log":' .. bad,
    1)))
  local cal, why = calibrations.load(cal_path)
  t.is(cal, nil, "a calibration with a spread of " .. bad .. " is refused")
  t.like(why or "", bad == "NaN" and "not a calibration file of ftrun" or "finite between_run_sd_log",
    "saying what a spread must be")
end
-- a calibration that is no calibration: exit 2 naming it
t.write(cal_path, json.encode(calibration(0.02)):sub(1, 200))
out, code = cmp(q(base) .. " " .. q(slower) .. " CALIBRATION=" .. q(cal_path))
t.is(code, 2, "a truncated CALIBRATION: exit 2")
t.like(out, "CALIBRATION=" .. cal_path .. ": not a calibration file of ftrun", "naming it")

-- the same, found in $CALIBRATIONS
t.write(calibrations.path(doc, caldir), json.encode(calibration(0.02)):sub(1, 200))
out, code = cmp(q(base) .. " " .. q(slower), env)
t.is(code, 2, "a truncated calibration in $CALIBRATIONS: exit 2")
t.like(out, "the calibration " .. calibrations.path(doc, caldir) .. ": not a calibration file of ftrun", "naming it")

-- A row twice in one JSON would count as one more run (reliability review W6).
local twice = fixture(dir .. "/twice.json", 1, 0, nil, function(d) table.insert(d.rows, d.rows[5]) end)
out, code = cmp(q(base) .. " " .. q(twice))
t.is(code, 2, "a JSON with a row twice: exit 2")
t.like(out, "twice.json: row A pass1 twice", "naming the row")
-- An AB run's JSON among plain runs (reliability review U7).
local abrun = fixture(dir .. "/abrun.json", 1, 0, nil, function(d)
  d.ab = { a = "THP=never", b = "THP=always", text = "THP=never | THP=always" }
end)
out, code = cmp(q(base) .. " " .. q(abrun))
t.is(code, 2, "an AB run compared as a plain run: refused")
t.like(out, "abrun.json is an AB run (AB=THP=never | THP=always)", "saying so")
out, code = cmp(q(base) .. " " .. q(abrun) .. " FORCE=1")
t.like(out, "new: side A (THP=never) of an AB run " .. dir .. "/abrun.json", "FORCE=1: its side A, named so")
-- The load of the moment is no difference in what ran (reliability review U9).
local loaded = fixture(dir .. "/loaded.json", 1, 0, nil, function(d) d.provenance.loadavg = "9.99 9.99 9.99 1" end)
out = cmp(q(base) .. " " .. q(loaded))
t.ok(not out:find("loadavg", 1, true), "loadavg is not listed as a difference")

-- A run whose verdict is not clean.
local failed = fixture(dir .. "/failed.json", 1, 0, nil, function(d) d.verdict = "CHECKSUMS FAILED: pass 1 read 7" end)
out, code = cmp(q(base) .. " " .. q(failed))
t.is(code, 2, "a failed run's JSON is refused: exit 2")
t.like(out, "failed.json: its verdict is 'CHECKSUMS FAILED: pass 1 read 7', not a clean run", "naming file and verdict")
out, code = cmp(q(base) .. " " .. q(failed) .. " FORCE=1")
t.is(code, 0, "FORCE=1 compares it")
t.like(out, "FORCED: " .. dir .. "/failed.json: CHECKSUMS FAILED", "and marks the table")
-- A run that read nothing back failed no check: compared as a clean run.
local unchecked = fixture(dir .. "/unchecked.json", 1, 0, nil, function(d)
  d.verdict = require("report").VERDICT_NONE
end)
out, code = cmp(q(base) .. " " .. q(unchecked))
t.is(code, 0, "a run that read nothing back (CHECKSUMS NONE) is compared without FORCE", out)
t.ok(not out:find("FORCED", 1, true), "and not marked FORCED", out)

-- Malformed input (reliability review U7, U8): exit 2 naming file, row and field.
local nops = fixture(dir .. "/nops.json", 1, 0, nil, function(d) d.page_size = nil end)
local strs = fixture(dir .. "/strs.json", 1, 0, nil, function(d) d.rows[3].values = { "a", "b" } end)
local huge = fixture(dir .. "/huge.json", 1, 0, nil, function(d)
  for _, r in ipairs(d.rows) do for i in ipairs(r.values) do r.values[i] = 1e308 end end
end)
_, code = t.ftrun_run("first_touch.lua", "MIB=4 REPS=2 RESULTS=" .. q(dir))
local other = dir .. "/exp-first_touch-results.json"
for _, c in ipairs {
  { q(base), "needs OLD... -- NEW..., two results JSON files, or one AB run" },
  { q(base) .. " /no/such.json", "cannot read /no/such.json" },
  { q(base) .. " " .. q(dir .. "/quick-raw.txt"), "not an ftrun results JSON" },
  { q(base) .. " " .. q(nops), "nops.json: has no page_size" },
  { q(base) .. " " .. q(strs), "strs.json: row A mmap: values[1] is string, expected a number or null" },
  { q(base) .. " " .. q(huge), "huge.json: row A thp_bytes: values[1] = 1e+308 is beyond 2^53" },
  { q(base) .. " " .. q(other), "not the same measurement (FORCE=1 compares them anyway)" },
  { q(base) .. " " .. q(other) .. " FORCE=1", "have no row in common" },
  { q(base) .. " -- ", "both sides need at least one results JSON" },
  -- a run given twice would count as two runs of a side (and pass a gate on one pair of runs)
  { join { old4[1], old4[1], old4[1], old4[1] } .. " -- " .. join(new4), "are the same run (identical files)" },
  { q(dir .. "/old4") .. " " .. q(old4[2]) .. " -- " .. join(new4), "are the same run (identical files)" },
  -- runs of other knobs on one side would be pooled as one configuration
  { join { old4[1], old4[2], old4[3], fixture(dir .. "/mib.json", 1, 0.01, nil, function(d) d.knobs.MIB = 4 end) }
    .. " -- " .. join(new4), "old side: " .. old4[1] .. " and " .. dir .. "/mib.json differ in knob MIB: " },
  { q(base) .. " -- " .. q(base) .. " -- " .. q(base), "'--' given twice" },
  { q(dir .. "/old4/nothing"), "cannot read" },
  { q(base) .. " " .. q(base) .. " ALPHA=2", "ALPHA=2: expected a level between 0 and 1" },
  { q(base) .. " " .. q(base) .. " FAIL_ABOVE=-1", "FAIL_ABOVE=-1: expected a percent above 0" },
  { q(base) .. " " .. q(base) .. " MIB=4", "argument 'MIB=4' is not one of this script's knobs" },
} do
  out, code = cmp(c[1])
  t.is(code, 2, c[2] .. ": exit 2")
  t.like(out, c[2], "names it: " .. c[2])
end
out, code = cmp(join { old4[1], old4[2], old4[3], dir .. "/mib.json" } .. " -- " .. join(new4) .. " FORCE=1")
t.is(code, 0, "FORCE=1 pools runs of other knobs on one side")
t.like(out, "FORCED: old side: " .. old4[1] .. " and " .. dir .. "/mib.json differ in knob MIB: ", "and says so")
out, code = cmp(q(base) .. " " .. q(base), "ALPHA=7")
t.is(code, 2, "a bad ALPHA in the environment is refused too")
t.like(out, "ALPHA=7: expected a level between 0 and 1", "naming it")

-- The table on a full disk is no table (reliability review W4): exit 1, saying why.
out, code = cmp(join(old4) .. " -- " .. join(new4) .. " >/dev/full")
t.is(code, 1, "the table written to a full disk: exit 1")
t.like(out, "ftrun: write error: No space left on device", "saying so")

-- Machines: a run of a KVM guest and one of a PVM guest on one side are no
-- replicates (W3 of the 2026-12-03b reliability review); on opposite sides
-- they are compared and said to differ; both sides on the same two machines
-- are paired by machine.
local function on(kind, host)
  return function(d)
    d.machine.hypervisor = kind
    d.provenance.hostname = host
  end
end
local kvm, pvm = {}, {}
os.execute("mkdir -p " .. q(dir .. "/kvm") .. " " .. q(dir .. "/pvm"))
for i = 1, 4 do
  kvm[i] = fixture(("%s/kvm/r%d-results.json"):format(dir, i), 1, (i - 2.5) * 0.002, nil, on("KVMKVMKVM", "hostk"))
  pvm[i] = fixture(("%s/pvm/r%d-results.json"):format(dir, i), 7, (i - 2.5) * 0.002, nil, on("PVM", "hostp"))
end
out, code = cmp(join { kvm[1], kvm[2], pvm[3], pvm[4] } .. " -- " .. join(new4))
t.is(code, 2, "a KVM run and a PVM run on one side: exit 2")
t.like(out, "old side: " .. kvm[1] .. " ran on [host hostk; hypervisor KVMKVMKVM;", "naming the first fingerprint")
t.like(out, pvm[3] .. " on [host hostp; hypervisor PVM;", "and the second")
t.like(out, "they differ in host, hypervisor", "and what differs")
out, code = cmp(join { kvm[1], kvm[2], pvm[3], pvm[4] } .. " -- " .. join { kvm[3], kvm[4], pvm[1], pvm[2] }
  .. " POOL=1")
t.is(code, 0, "POOL=1 pools them")
t.like(out, "machine hostk: 2 old run(s), 2 new run(s)", "each machine's runs named")
t.like(out, "both sides on the same machines: the change is paired by machine", "and paired by machine")
out, code = cmp(join(kvm) .. " -- " .. join(pvm))
t.is(code, 0, "KVM runs against PVM runs: compared")
t.ok(out:find("the machines differ: old on %[host hostk; hypervisor KVMKVMKVM;.-%], new on %[host hostp; "
  .. "hypervisor PVM;") ~= nil, "and the machines said to differ", out)
t.ok(out:find("| A | pass1 | ns/page |[^\n]*| %+600%.0 %[") ~= nil, "the change is the machines' (x7)", out)
local nohost = fixture(dir .. "/nohost.json", 1, 0.003, nil, function(d) d.provenance.hostname = nil end)
out, code = cmp(join { old4[1], old4[2], old4[3], nohost } .. " -- " .. join(new4))
t.is(code, 0, "a run that recorded no hostname joins the others (a missing field matches)")

out, code = cmp("--help")
t.is(code, 0, "--help exits 0")
for _, k in ipairs { "ALPHA", "FAIL_ABOVE", "FORCE", "CALIBRATION", "POOL", "SEED", "OLD... -- NEW...", "AB=" } do
  t.like(out, k, "--help explains " .. k)
end

os.execute("rm -rf " .. q(dir))
t.done()
