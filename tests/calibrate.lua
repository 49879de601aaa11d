-- make calibrate's script in its QUICK form: its table and calibration
-- file, and compare.lua judging one run a side with that file.
local t = require "tap"
local json = require "json"
local q = t.quote

local dir = t.tmpdir()
local out, code = t.ftrun_run("bench/calibrate.lua QUICK=1 AB_CHECK=0 RESULTS=" .. q(dir))
t.is(code, 0, "a QUICK calibration", out)
t.like(out, "| A pass1 | ", "the table has pass 1's levels")
t.like(out, "one run a side, U test on the repetitions", "the U test's false calls")
t.like(out, "the same with Benjamini-Hochberg over the rows (as comparisons judge)", "the calibrated test's")
t.like(out, "+10 % planted into the new side", "the planted power")
t.like(out, "| one run a side, judged against this calibration | ", "the smallest change per design")
t.ok(out:find("Noise on the record: %d+ of %d+ repetitions of the A/A runs"), "and how many repetitions were marked noisy")
t.like(out, "provenance: commit ", "and what made it")
local cal = json.decode(t.read(dir .. "/calibration-cycles.json") or "null")
t.ok(cal and cal.kind == "ftrun calibration" and cal.runs == 6, "the calibration file")
local row
for _, r in ipairs(cal and cal.rows or {}) do if r.case == "A" and r.column == "pass1" then row = r end end
t.ok(row and row.between_run_sd_log > 0 and row.df == 5, "with pass 1's run-to-run spread and its df")
t.like(t.read(dir .. "/calibration.md") or "", "| A pass1 | ", "and the table beside it")
-- the page is rendered from the figures the file keeps (make docs-check makes it again)
local calreport = require "calreport"
t.is(cal and cal.report and calreport.render(cal.report), t.read(dir .. "/calibration.md"),
  "calibration.md is what the file's figures render")
t.like(out, "| row | canary | reported | steal | clock | adjusted for |", "what the machine's state explains")
t.ok(row and type(row.explained) == "table" and row.explained.canary ~= nil,
  "and the file keeps each covariate's share, or why it has none", row and json.encode(row.explained or {}))

-- Two runs of the calibrated configuration: one run a side is judged.
for i = 1, 2 do
  t.ftrun_run(("cycles.lua CYCLES=A MIB=16 REPS=8 RESULTS=%s"):format(q(dir .. "/r" .. i)))
end
out, code = t.ftrun_run(("compare.lua %s %s CALIBRATION=%s"):format(q(dir .. "/r1/cycles-A-results.json"),
  q(dir .. "/r2/cycles-A-results.json"), q(dir .. "/calibration-cycles.json")))
t.is(code, 0, "compare.lua with the calibration")
t.like(out, "calibrated: p from Student's t", "judges one run a side with it")
local line = out:match("\n(| A | pass1 | [^\n]*)") or ""
t.ok(line ~= "" and not line:find("?", 1, true), "pass 1 is judged", line)
out, code = t.ftrun_run(("compare.lua %s %s CALIBRATION=%s"):format(q(dir .. "/r1/cycles-A-results.json"),
  q(dir .. "/r2/cycles-A-results.json"), q(dir .. "/calibration.md")))
t.is(code, 2, "a CALIBRATION that is no calibration file: exit 2")
t.like(out, "not a calibration file of ftrun", "saying so")

for _, c in ipairs {
  { "RUNS=3", "RUNS=3: expected at least 6" },
  { "CONFIG='RESULTS=/tmp'", "is not a plain KNOB=value of cycles.lua" },
  { "NOPE=1", "argument 'NOPE=1' is not one of this script's knobs" },
} do
  out, code = t.ftrun_run("bench/calibrate.lua " .. c[1] .. " RESULTS=" .. q(dir .. "/no"))
  t.is(code, 2, c[1] .. ": exit 2")
  t.like(out, c[2], "names it")
end
out, code = t.ftrun_run("bench/calibrate.lua --help")
t.is(code, 0, "--help")
t.like(out, "RUNS", "lists the knobs")

-- calibrate.lua: A/A runs of any script and knobs, stored by machine, script and knobs in
-- $CALIBRATIONS, found there by compare.lua for runs of the same.
local caldir = dir .. "/calibrations"
local env = "CALIBRATIONS=" .. q(caldir)
out, code = t.ftrun_run("calibrate.lua RUNS=3 SIMS=40 -- cycles.lua CYCLES=A MIB=8 REPS=4", env)
t.is(code, 0, "calibrate.lua -- cycles.lua KNOBS", out)
t.like(out, "3 A/A runs", "says how many runs")
t.like(out, "| A pass1 | ", "the spread of each timed row")
t.like(out, "| runs a side | smallest change called in 80 % |", "what comparisons against it decide, simulated")
local files = t.run("ls " .. q(caldir))
t.ok(files:match("^cycles%-%x+%.json\n$"), "one calibration file, named by script and key", files)
local calfile = caldir .. "/" .. (files:match("[^\n]+") or "")
local stored = json.decode(t.read(calfile) or "null") or {}
t.ok(stored.fingerprint and stored.knobs and stored.knobs.MIB == 8 and #(stored.rows or {}) > 0,
  "with the machine's fingerprint, the knobs and the rows")
t.is(stored.written_to, calfile, "and where it was written, as its output says")
t.like(out, "written to " .. calfile .. "\n", "which the output's first line names")
for i = 1, 2 do
  t.ftrun_run(("cycles.lua CYCLES=A MIB=8 REPS=4 RESULTS=%s"):format(q(dir .. "/s" .. i)))
end
out, code = t.ftrun_run(("compare.lua %s %s"):format(q(dir .. "/s1/cycles-A-results.json"),
  q(dir .. "/s2/cycles-A-results.json")), env)
t.is(code, 0, "compare.lua finds it")
t.like(out, "spread pooled from " .. calfile, "and names it")
out = t.ftrun_run(("compare.lua %s %s"):format(q(dir .. "/s1/cycles-A-results.json"),
  q(dir .. "/s2/cycles-A-results.json")), "CALIBRATIONS=" .. q(dir .. "/none"))
t.like(out, "`./ftrun calibrate.lua RUNS=10 -- cycles.lua ", "without one: the command that makes it")
t.like(out, "MIB=8", "with the runs' knobs")
for _, c in ipairs {
  { "calibrate.lua RUNS=2 -- cycles.lua", "RUNS=2: expected at least 3" },
  { "calibrate.lua", "expected -- SCRIPT" },
  { "calibrate.lua -- cycles.lua RESULTS=/tmp", "RESULTS=/tmp: set by calibrate.lua" },
  { "calibrate.lua RUNS=3 -- cycles.lua MIB=nope", "MIB=nope" },
} do
  out, code = t.ftrun_run(c[1], env)
  t.is(code, 2, c[1] .. ": exit 2")
  t.like(out, c[2], "names it")
end

os.execute("rm -rf " .. q(dir))
t.done()
