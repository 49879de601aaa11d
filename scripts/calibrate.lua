-- calibrate.lua: how far runs of one script and its knobs differ by chance
-- on this machine, the spread compare.lua judges runs against. It runs the
-- script RUNS times back to back (A/A: nothing changes), keeps each timed
-- row's spread of the run medians (logs) with its degrees of freedom, and
-- stores it under the machine's fingerprint, the script and its knobs in
-- $CALIBRATIONS, where compare.lua finds it for runs of the same. Then it
-- says what comparisons judged against it can decide, by simulating them.
--   ./ftrun calibrate.lua [RUNS=10] -- SCRIPT [KNOB=value ...]
local calibrations = require "calibrations"
local covariates = require "covariates"
local ft = require "ft"
local json = require "json"
local knobs = require "knobs"
local power = require "power"
local provenance = require "provenance"
local stats = require "stats"
local units = require "units"

local SCRIPT = "calibrate.lua"
local function fail(msg) knobs.fail(SCRIPT, msg) end

local SPEC = {
  { name = "RUNS", kind = "count", default = 10,
    desc = "A/A runs of the script (at least 3: the spread's degrees of freedom are RUNS - 1)" },
  { name = "SIMS", kind = "count", default = 400,
    desc = "simulated comparisons behind each power figure (more: finer figures, slower)" },
}
local ABOUT = [[
calibrate.lua measures how far runs of one script and knobs differ by chance
here, and stores it where compare.lua looks for it.

  ./ftrun calibrate.lua [RUNS=10] -- SCRIPT [KNOB=value ...]

The calibration is keyed by this machine's fingerprint (hypervisor, CPU,
kernel build, THP state), the script and its knobs, and written to
$CALIBRATIONS (default ~/.cache/ftrun/calibrations); compare.lua uses it
when every run of both sides matches it. Under the table: what 1-6 runs a
side judged against it detect with 80 % power, and how often A/A runs are
called different or the same, all by simulating compare.lua's own test.]]

local own, target, dashes = {}, {}, false
for _, a in ipairs { ... } do
  if not dashes and (a == "--help" or a == "-h") then
    knobs.help(SCRIPT, ABOUT, SPEC, "calibrate.lua [RUNS=N] -- SCRIPT [KNOB=value ...]")
  elseif not dashes and a == "--" then dashes = true
  elseif dashes then target[#target + 1] = a
  else own[#own + 1] = a end
end
local cfg = knobs.read(SCRIPT, SPEC, own)
if not dashes or #target == 0 then fail("expected -- SCRIPT [KNOB=value ...] (e.g. -- cycles.lua QUICK=1)") end
if cfg.RUNS < 3 then fail(("RUNS=%d: expected at least 3"):format(cfg.RUNS)) end
local script = table.remove(target, 1)
for _, word in ipairs(target) do
  local name = word:match("^([%u_][%u%d_]*)=")
  if not name then fail(("'%s': expected KNOB=value after the script"):format(word)) end
  if calibrations.WHERE[name] or name == "AB" then
    fail(("%s: set by calibrate.lua (runs go to a directory of their own; AB runs are compared alone)"):format(word))
  end
end

local FTRUN = os.getenv("FTRUN") or arg[-1]
if FTRUN:sub(1, 1) ~= "/" and FTRUN:find("/", 1, true) then FTRUN = os.getenv("PWD") .. "/" .. FTRUN end
local shell = require "shell"
local quote = shell.quote
local function say(fmt, ...) io.stderr:write(SCRIPT, ": ", fmt:format(...), "\n") end

local work, why_no_work = shell.mkdtemp("ftrun-calibrate")
if not work then fail(why_no_work) end
-- closed however the chunk ends: an interrupt (exit 130) or an error leaves no work directory
local _ <close> = setmetatable({}, { __close = function() os.execute("rm -rf " .. quote(work)) end })
local function stop(msg, code)
  os.execute("rm -rf " .. quote(work))
  io.stderr:write(SCRIPT, ": ", msg, "\n")
  os.exit(code or 1, true)
end

-- One run of the script: its results JSON.
local words = {}
for i, w in ipairs(target) do words[i] = quote(w) end
local function run(i)
  local dir = ("%s/aa-%02d"):format(work, i)
  local cmd = ("%s %s %s RESULTS=%s >%s/log 2>&1"):format(quote(FTRUN), quote(script), table.concat(words, " "),
    quote(dir), quote(work))
  local ok, _, code = os.execute(cmd)
  if not ok then
    local f = io.open(work .. "/log")
    local text = f and f:read("a") or ""
    if f then f:close() end
    -- a bad script or knob is the caller's: the script's own exit 2
    stop(("run %d of %s failed (exit %s): %s"):format(i, script, tostring(code), text:sub(-600)), code == 2 and 2 or 1)
  end
  local found = shell.list(dir, "results%.json$")[1]
  local path = found and dir .. "/" .. found
  local f = path and io.open(path)
  local doc = f and json.decode(f:read("a"))
  if f then f:close() end
  if type(doc) ~= "table" or type(doc.rows) ~= "table" then
    stop(("run %d of %s wrote no results JSON"):format(i, script))
  end
  if type(doc.ab) == "table" then stop("an AB run cannot be calibrated as runs of one setting", 2) end
  doc.path = path
  return doc
end

local started = ft.now_ns()
local docs = {}
for i = 1, cfg.RUNS do
  local t0 = ft.now_ns()
  docs[i] = run(i)
  say("A/A run %d/%d of %s: %.1f s", i, cfg.RUNS, script, (ft.now_ns() - t0) / 1e9)
  local why = i > 1 and calibrations.mismatch({ script = docs[1].script,
    fingerprint = calibrations.fingerprint(docs[1]), knobs = calibrations.knobs(docs[1]) }, docs[i])
  if why then stop(("run %d differs from run 1: %s; the machine changed under the calibration"):format(i, why)) end
end
local wall = (ft.now_ns() - started) / 1e9

-- Each timed row present in every run: the log median of each run.
local rows, by = {}, {}
for i, doc in ipairs(docs) do
  for _, r in ipairs(doc.rows) do
    if units.timed(r.unit) and type(r.values) == "table" then
      local v = {}
      for _, x in ipairs(r.values) do if type(x) == "number" and x > 0 then v[#v + 1] = x end end
      local key = r.case .. "\0" .. r.column
      if not by[key] and i == 1 then
        by[key] = { case = r.case, column = r.column, unit = r.unit, medians = {}, within = {} }
        rows[#rows + 1] = by[key]
      end
      if by[key] and #v > 0 then
        by[key].medians[i] = math.log(stats.median(v))
        if #v >= 2 then by[key].within[#by[key].within + 1] = stats.map(v, math.log) end
      end
    end
  end
end
local kept = {}
for _, row in ipairs(rows) do
  local complete = true
  for i = 1, cfg.RUNS do if not row.medians[i] then complete = false end end
  if complete then kept[#kept + 1] = row end
end
rows = kept
if #rows == 0 then stop(("%s has no timed row measured in every run: nothing to calibrate"):format(script)) end
for _, row in ipairs(rows) do
  local m, s = stats.mean(row.medians), 0
  for _, x in ipairs(row.medians) do s = s + (x - m) ^ 2 end
  row.between_run_sd_log, row.df = math.sqrt(s / (cfg.RUNS - 1)), cfg.RUNS - 1
  local ssw, dfw = 0, 0
  for _, logs in ipairs(row.within) do
    local mm = stats.mean(logs)
    for _, x in ipairs(logs) do ssw = ssw + (x - mm) ^ 2 end
    dfw = dfw + #logs - 1
  end
  row.within_sd_log = dfw > 0 and math.sqrt(ssw / dfw) or nil
end

-- How much of each row's run-to-run spread the machine's state explains (lib/covariates.lua).
local runs_cov = stats.map(docs, covariates.of_run)
for _, row in ipairs(rows) do
  local c = covariates.calibrate_row(row.medians, runs_cov, row.between_run_sd_log)
  row.explained, row.adjust = c.explained, c.adjust
end

-- What comparisons judged against this calibration decide (simulated).
local target_row = 1
for i, row in ipairs(rows) do
  if row.column == "pass1" then target_row = i; break end
end
local sim = { sims = cfg.SIMS, alpha = 0.05, seed = 29 }
local designs = {}
for _, k in ipairs { 1, 2, 3, 4, 6 } do
  local d = { k = k, smallest = power.smallest(rows, k, target_row, sim) }
  local called, same, calls = power.simulate(rows, k, nil, nil, sim)
  local _, same_target = power.simulate(rows, k, 0, target_row, sim)
  d.aa_any_called, d.aa_all_same, d.aa_target_same = called, same, same_target
  d.aa_rows_called = calls / #rows
  d.planted10 = power.simulate(rows, k, 0.10, target_row, sim)
  if rows[target_row].adjust then -- the same test on the rows' spreads after the adjustment
    local adjusted = stats.map(rows, function(r)
      return r.adjust and { between_run_sd_log = r.adjust.sd_log, df = r.adjust.df } or r
    end)
    d.adjusted_planted10 = power.simulate(adjusted, k, 0.10, target_row, sim)
    d.adjusted_smallest = power.smallest(adjusted, k, target_row, sim)
  end
  designs[#designs + 1] = d
end

-- UNTIL=decided against K0 baseline runs, capped at MAX runs: A/A and +5 %.
local K0, MAX = 4, 10
local seq_sim = { sims = math.max(20, cfg.SIMS // 4), alpha = 0.05 }
local seq_aa = { power.until_decided(rows, K0, MAX, nil, target_row, seq_sim) }
local seq_5 = { power.until_decided(rows, K0, MAX, 0.05, target_row, seq_sim) }
local seq = { baseline = K0, max = MAX, sims = seq_sim.sims,
  aa = { mean_runs = seq_aa[1], decided = seq_aa[2], any_called = seq_aa[3], all_same = seq_aa[4],
    target_same = seq_aa[5] },
  plus5 = { mean_runs = seq_5[1], decided = seq_5[2], called = seq_5[3] } }

local made_by = provenance.collect()
local cal = { kind = calibrations.KIND, script = docs[1].script, fingerprint = calibrations.fingerprint(docs[1]),
  machine = docs[1].machine, knobs = calibrations.knobs(docs[1]), command = table.concat(target, " "),
  runs = cfg.RUNS, date = os.date("!%Y-%m-%dT%H:%M:%SZ"), run_wall_s = wall / cfg.RUNS, rows = {}, designs = designs,
  simulated = { sims = cfg.SIMS, alpha = 0.05, target = rows[target_row].case .. " " .. rows[target_row].column },
  until_decided = seq, provenance = made_by }
for _, row in ipairs(rows) do
  -- the run medians' geometric mean, kept for the printed table (reports/calibrate.lua)
  cal.rows[#cal.rows + 1] = { case = row.case, column = row.column, unit = row.unit,
    median = math.exp(stats.mean(row.medians)), between_run_sd_log = row.between_run_sd_log, df = row.df,
    within_sd_log = row.within_sd_log, explained = row.explained, adjust = row.adjust }
end
local dir = calibrations.dir()
local path = calibrations.path(docs[1], dir)
cal.written_to = path -- what it prints, so a copy of that output elsewhere can be held to it
local ok, err = ft.mkdir(dir)
if ok then ok, err = ft.write_files { { path, json.encode(cal) .. "\n" } } end
os.execute("rm -rf " .. quote(work))
if not ok then
  io.stderr:write(("%s: cannot write the calibration %s: %s\n"):format(SCRIPT, path, tostring(err)))
  os.exit(1, true)
end

io.stdout:write(require("reports.calibrate").output(cal, path))
