-- compare.lua: did a change change the cost? Runs of one script, old
-- against new, benchstat's table with the run as the unit.
--   ./ftrun compare.lua OLD... -- NEW...   (results JSON files or directories of them)
--   ./ftrun compare.lua OLD.json NEW.json [MORE.json ...]   (the first against each other)
--   ./ftrun compare.lua AB.json            (one AB run: the paired table of its two sides)
-- Options come from the environment or as NAME=value arguments (the
-- argument wins); --help explains them.
--
-- The repetitions of one run share the machine's state of that moment (this
-- host drifts by tens of percent within minutes), so they are no sample of
-- the machine: with two or more runs a side, the change's interval comes from
-- a hierarchical bootstrap (runs, then repetitions within runs) and its p
-- from an exact permutation test over the runs' medians. A calibration of
-- this machine, script and knobs (calibrate.lua) says how far runs differ by
-- chance: with it any number of runs a side is judged by a t test; without
-- it one run a side is not judged. The
-- rows' p-values are corrected together (Benjamini-Hochberg), and the gate
-- fails only on rows the correction calls.
local ab = require "ab"
local display = require "display"
local inference = require "inference"
local json = require "json"
local knobs = require "knobs"
local machines = require "machines"
local provenance = require "provenance"
local report = require "report"
local stats = require "stats"
local resultsjson = require "resultsjson"
local textfile = require "textfile"
local units = require "units"
local calibrations = require "calibrations"
local covariates = require "covariates"
local verdicts = require "verdicts"

local SCRIPT = "compare.lua"
local function fail(msg) knobs.fail(SCRIPT, msg) end

local SPEC = {
  { name = "ALPHA", kind = "level", default = 0.05,
    desc = "false discovery rate of the rows called different (Benjamini-Hochberg over the table's rows); "
      .. "a row is called when its adjusted p (q) is at most ALPHA" },
  { name = "FAIL_ABOVE", kind = "percent", default = "off",
    desc = "exit 1 when a row the correction calls got worse by more than this many percent; exit 2 when "
      .. "the runs given cannot judge it (one run a side without a calibration, too few runs for ALPHA)" },
  { name = "FORCE", kind = "flag", default = false,
    desc = "1: compare runs of different scripts or page sizes and runs whose checksum verdict is not clean, "
      .. "and pool runs of other knobs on one side (the table then says FORCED)" },
  { name = "CALIBRATION", kind = "path", default = "$CALIBRATIONS/<script>-<key>.json",
    desc = "calibrate.lua's file: the run-to-run spread of this machine, script and knobs, used when every run "
      .. "of both sides matches it (default: the one calibrate.lua made for the runs' machine, script and knobs)" },
  { name = "EQUIV", kind = "equiv", default = "the smallest change the comparison detects",
    desc = "call a row 'same within ±EQUIV %' when the 90 % interval of its change lies inside (two one-sided "
      .. "tests)" },
  { name = "POOL", kind = "flag", default = false,
    desc = "1: pool runs of machines with different fingerprints on one side (host, hypervisor, kernel, CPU, THP), "
      .. "the machine then a level of the bootstrap (machine, run, repetition)" },
  { name = "SEED", kind = "count", default = 1,
    desc = "seed of the bootstrap's draws (the same seed, the same interval)" },
  { name = "ROWS", kind = "rows", default = "the runs' decision rows",
    desc = "the rows the gate (FAIL_ABOVE) and the exit status follow: case:column items separated by ; "
      .. "(e.g. A:pass1), or all; by default the rows the script names as what it is asked (cycles.lua: A pass1), "
      .. "every row where it names none. The other rows are reported as they stand" },
  { name = "FORMAT", kind = "choice", choices = display.FORMATS, default = "md",
    desc = "stdout: md (the tables and their notes), or every row of every table as one csv, tsv or json table "
      .. "(the notes then on stderr)" },
}
knobs.parsers.level = function(value)
  local v = tonumber(value)
  if not v or v <= 0 or v >= 1 then return nil, "a level between 0 and 1" end
  return v
end
knobs.parsers.percent = function(value)
  local v = tonumber(value)
  if not v or v <= 0 or v ~= v or v == math.huge then return nil, "a percent above 0" end
  return v
end

local ABOUT = [[
compare.lua tells whether runs of one script differ, row by row.

  ./ftrun compare.lua OLD... -- NEW...    several runs a side (files or directories of *results.json)
  ./ftrun compare.lua OLD.json NEW.json   one run a side (more files: the first against each)
  ./ftrun compare.lua AB.json             one AB run (AB="A knobs | B knobs"): its paired table

Each row: old and new median [95 % interval] (runs x repetitions), the change
new/old with its 95 % interval, the spread between runs beside the spread
between repetitions (sd of the logs, in %), p, q (p adjusted by
Benjamini-Hochberg over the rows) and the verdict: the change when q <= ALPHA,
"same within ±δ" when the 90 % interval lies inside ±δ (EQUIV, or the
smallest change the comparison detects, up to 20 %), "~ (n runs a side would
decide)" when neither, "?" when the runs given cannot judge the row.
  with a calibration (calibrate.lua) of this machine, script and knobs that
    every run matches: any number of runs a side, p from Student's t of the
    sides' mean log run medians against the calibrated between-run spread
    pooled with the runs' own. Where the calibration found that the
    machine's state (the canary, steal, page reporting, the clock estimate)
    explains a row's run-to-run spread, a second table shows that row with
    each run adjusted for it, beside the raw change; the raw rows decide the
    gate.
  2+ runs a side without one: interval from a hierarchical bootstrap (runs,
    then repetitions in runs), p from an exact permutation test over the run
    medians (4 runs a side are needed for p < 0.05: 2 of C(8,4) = 70 orders).
  1 run a side without one: "? one run a side", and the command that calibrates.
  AB run: the median of the per-repetition ratios B/A with a bootstrap
    interval, p from a Wilcoxon signed-rank test of their logs.
Runs of machines with different fingerprints (host, hypervisor, kernel, CPU,
THP) are not pooled on one side unless POOL=1 (then: machine, run, repetition);
sides on different machines are said to differ; sides on the same machines are
paired by machine.
Exit status: 0, 1 (FAIL_ABOVE: a called row worse by more), 2 (bad usage or
input, or a gate that cannot judge).]]

-- Arguments: NAME=value knobs, `--` between the sides, files and directories.
local knob_args, sides, dashes = {}, { {} }, 0
for _, a in ipairs { ... } do
  if a == "--help" or a == "-h" then knobs.help(SCRIPT, ABOUT, SPEC, "compare.lua OLD... -- NEW... [KNOB=value ...]")
  elseif a == "--" then
    dashes = dashes + 1
    if dashes > 1 then fail("'--' given twice: expected OLD... -- NEW...") end
    sides[2] = {}
  elseif a:match("^[%u_][%u%d_]*=") then knob_args[#knob_args + 1] = a
  else table.insert(sides[#sides], a) end
end
local opts = knobs.read(SCRIPT, SPEC, knob_args)
-- FORMAT=csv|tsv|json: stdout holds one table for another program, and
-- every line of prose goes to stderr; the rows are gathered as they are judged
local records = {}
local FIELDS = { "old", "new", "case", "column", "unit", "old_median", "new_median", "change_pct", "lo_pct", "hi_pct",
  "p", "q", "verdict", "decides" }
-- the prose: stdout with FORMAT=md, else stderr
local function say(text)
  (opts.FORMAT == "md" and io.stdout or io.stderr):write(text, "\n")
end
local function record(row, old, new, old_median, new_median)
  local pct_of = function(x) return x and 100 * (x - 1) or nil end
  records[#records + 1] = { old = old, new = new, case = row.case, column = row.column, unit = row.unit,
    old_median = old_median, new_median = new_median, change_pct = pct_of(row.ratio), lo_pct = pct_of(row.lo),
    hi_pct = pct_of(row.hi), p = row.p, q = row.q, verdict = row.verdict, decides = row.decides or false }
end

-- The decision rows: ROWS= (all: none, every row decides), else the ones the
-- first run names (its script's decide), as {case, column} pairs, and whence.
local function decision_of(doc)
  if opts.given.ROWS then
    if opts.ROWS == "all" then return nil, "ROWS=all" end
    return opts.ROWS, "ROWS="
  end
  return verdicts.decision_names(doc.decision_rows), ("named by %s"):format(tostring(doc.script))
end

-- A line under a table: the decision rows' verdicts, and the names no row has.
local function say_decision(judged, rows, doc)
  local names, whence = decision_of(doc)
  if not names then return end
  local parts = stats.map(judged.decision, function(r) return ("%s %s: %s"):format(r.case, r.column, r.verdict) end)
  say(("decision row(s) (%s; ROWS= picks others): %s; the gate and the exit status follow them, the other rows "
    .. "are reported as they stand."):format(whence, #parts > 0 and table.concat(parts, "; ") or "none of them here"))
  local missing = verdicts.mark_decision(rows, names)
  if #missing > 0 then say(("decision row(s) not in the runs: %s"):format(table.concat(missing, ", "))) end
end
if opts.FAIL_ABOVE == "off" then opts.FAIL_ABOVE = nil end
if not opts.given.EQUIV then opts.EQUIV = nil end
local CAL_RUNS = 10 -- calibrate.lua's default

-- A path: a file, or a directory whose *results.json files (at any depth) are runs.
local function expand(path, into)
  local regular, why, code = textfile.regular(path) -- a FIFO or a device is refused unopened
  if code == 21 then -- EISDIR
    local found = 0
    for _, line in ipairs(require("shell").find(path, "results%.json$")) do
      into[#into + 1] = line
      found = found + 1
    end
    if found == 0 then fail(("%s: a directory with no *results.json in it"):format(path)) end
  elseif not regular then fail(why)
  else
    into[#into + 1] = path
  end
end

-- The largest magnitude a value may have: beyond 2^53 no measurement of
-- ftrun is exact, and the table could not print it as a count.
local LARGEST = 2 ^ 53

-- A results JSON, checked whole before anything is printed: its verdict,
-- its page size, and every row's values (numbers or null).
local function load(path)
  local text, err = textfile.read(path)
  if not text then fail(err) end
  local doc, why = json.decode(text)
  if type(doc) ~= "table" or type(doc.script) ~= "string" then
    fail(("%s: not an ftrun results JSON (%s)"):format(path, why or "no script"))
  end
  local bad = resultsjson.invalid(doc)
  if bad then fail(("%s: %s"):format(path, bad)) end
  doc.path, doc.text = path, text
  if not report.clean_verdict(doc.verdict) then
    if not opts.FORCE then
      fail(("%s: its verdict is '%s', not a clean run (FORCE=1 compares it anyway, marked FORCED)")
        :format(path, tostring(doc.verdict)))
    end
    doc.forced = tostring(doc.verdict)
  end
  if type(doc.rows) ~= "table" then
    if doc.forced then doc.rows = {} else fail(("%s: not an ftrun results JSON (no rows)"):format(path)) end
  end
  if math.type(doc.page_size) ~= "integer" and not doc.forced then
    fail(("%s: has no page_size (not a results JSON of this ftrun)"):format(path))
  end
  local rows, seen = {}, {}
  for i, r in ipairs(doc.rows) do
    if type(r) ~= "table" or type(r.case) ~= "string" or type(r.column) ~= "string" or type(r.unit) ~= "string"
      or type(r.values) ~= "table" then
      fail(("%s: row %d has no case, column, unit or values"):format(path, i))
    end
    local finite, numeric = {}, 0
    for j, v in pairs(r.values) do
      if type(v) == "number" then
        if units.nonfinite(v) then fail(("%s: row %s %s: values[%s] is %s"):format(path, r.case, r.column, j, v)) end
        if math.abs(v) >= LARGEST then
          fail(("%s: row %s %s: values[%s] = %s is beyond 2^53, no measurement of ftrun"):format(path, r.case,
            r.column, j, v))
        end
        numeric = numeric + 1
      elseif v ~= json.null then
        fail(("%s: row %s %s: values[%s] is %s, expected a number or null"):format(path, r.case, r.column, j,
          type(v)))
      end
    end
    for j = 1, #r.values do
      if type(r.values[j]) == "number" then finite[#finite + 1] = r.values[j] end
    end
    if numeric == 0 then fail(("%s: row %s %s has no numeric values"):format(path, r.case, r.column)) end
    r.finite = finite
    -- a row twice would count as one more run of its side
    local key = r.case .. "\0" .. r.column .. "\0" .. tostring(r.side)
    if seen[key] then fail(("%s: row %s %s twice (rows %d and %d)"):format(path, r.case, r.column, seen[key], i)) end
    seen[key] = i
    rows[#rows + 1] = r
  end
  doc.rows = rows
  for _, k in ipairs { "knobs", "machine", "provenance" } do
    if type(doc[k]) ~= "table" then doc[k] = {} end
  end
  return doc
end

-- An AB run among plain runs: its rows hold two configurations, so only
-- its side A can stand for a run, and only when asked (FORCE=1).
local function plain_side(doc)
  if not ab.is_ab(doc) then return end
  local a = type(doc.ab.a) == "string" and doc.ab.a ~= "" and doc.ab.a or "the run's own knobs"
  if not opts.FORCE then
    fail(("%s is an AB run (AB=%s): its rows hold two settings; compare it alone (./ftrun compare.lua %s), or "
      .. "FORCE=1 compares its side A (%s) as a run"):format(doc.path, tostring(doc.ab.text or (doc.ab.a or "") .. " | "
      .. (doc.ab.b or "")), doc.path, a))
  end
  local rows = {}
  for _, r in ipairs(doc.rows) do if r.side ~= "B" then rows[#rows + 1] = r end end
  doc.rows, doc.side_a = rows, a
end

local function describe(doc)
  local p = doc.provenance or {}
  return ("%s%s (%s %s, %s, commit %s%s)%s"):format(doc.side_a and ("side A (%s) of an AB run "):format(doc.side_a)
    or "", doc.path, doc.script, doc.run or "", doc.date or "?",
    tostring(p.git_commit):sub(1, 12),
    p.git_dirty and ", dirty" .. (p.git_diff_sha256 and ", diff " .. p.git_diff_sha256:sub(1, 16) or "") or "",
    doc.forced and ("  FORCED: verdict '%s'"):format(doc.forced) or "")
end

-- What differs between two runs' knobs and machines, as lines; where the
-- files went and the shuffling seed are no difference in what ran.
local WHERE = calibrations.WHERE
local function differences(old, new)
  local out = {}
  local function diff(what, a, b)
    local keys, seen = {}, {}
    for k in pairs(a or {}) do keys[#keys + 1] = k; seen[k] = true end
    for k in pairs(b or {}) do if not seen[k] then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local x, y = (a or {})[k], (b or {})[k]
      if type(x) ~= "table" and type(y) ~= "table" and x ~= y and not (what == "knob" and WHERE[k])
        and k ~= "cpu_mhz" and k ~= "loadavg" then -- the moment's clock and load, no setting
        out[#out + 1] = ("%s %s: %s -> %s"):format(what, k, tostring(x), tostring(y))
      end
    end
  end
  diff("knob", old.knobs, new.knobs)
  diff("machine", old.machine, new.machine)
  diff("provenance", old.provenance, new.provenance)
  return out
end

-- The runs of one side are repetitions of one configuration: a run given
-- twice (the same file, a copy, a directory and a file in it) would count
-- as two runs and its spread as none, and runs with other knobs would be
-- pooled as if they were the same measurement.
local pooled_knobs = {} -- with FORCE=1: the knobs the runs of a side differ in
local function replicates(docs, side)
  local mixed = machines.check_side(docs, side, opts.POOL)
  if mixed then fail(mixed) end
  local seen = {}
  for _, d in ipairs(docs) do
    if seen[d.text] then
      fail(("%s and %s are the same run (identical files): each run of a side counts once"):format(seen[d.text],
        d.path))
    end
    seen[d.text] = d.path
    for _, l in ipairs(differences(docs[1], d)) do
      if l:match("^knob ") then
        local why = ("%s side: %s and %s differ in %s"):format(side, docs[1].path, d.path, l)
        if not opts.FORCE then
          fail(why .. ": the runs of a side must share their knobs (FORCE=1 pools them anyway)")
        end
        pooled_knobs[#pooled_knobs + 1] = why
      end
    end
  end
end

local function same_measurement(a, b)
  if (a.script ~= b.script or a.page_size ~= b.page_size) and not opts.FORCE then
    fail(("%s is %s with %s-byte pages, %s is %s with %s-byte pages: not the same measurement "
      .. "(FORCE=1 compares them anyway)"):format(a.path, a.script, tostring(a.page_size), b.path,
      b.script, tostring(b.page_size)))
  end
end

-- The calibrate.lua command that makes a calibration for a run's script
-- and knobs (symbolic values such as 'auto' or 'default' are the script's
-- own defaults, so left out).
local SYMBOLIC = { [""] = true, auto = true, default = true, measured = true, off = true, none = true }
local function calibrate_command(doc, runs)
  local words, mine = {}, calibrations.knobs(doc)
  local names = {}
  for k in pairs(mine) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    local v = mine[k]
    if v == true then words[#words + 1] = k .. "=1"
    elseif type(v) == "number" then
      words[#words + 1] = k .. "=" .. tostring(v)
    elseif type(v) == "string" and not SYMBOLIC[v] then
      words[#words + 1] = k .. "=" .. (v:match("^[%w.,_/+-]*$") and v or require("shell").quote(v))
    end
  end
  return ("./ftrun calibrate.lua RUNS=%d -- %s %s"):format(runs, doc.script, table.concat(words, " "))
end

-- The calibration of this machine, script and knobs that every run of
-- both sides matches (a calibration of one side's machine says nothing of
-- the other's); else nil and why not, with the command that makes one.
local function calibration(docs)
  -- any run's calibration, so the answer does not depend on the order of the arguments
  local path = opts.given.CALIBRATION and opts.CALIBRATION
  if not path then
    for _, d in ipairs(docs) do
      path = path or calibrations.find(d)
    end
  end
  local found = path ~= nil
  path = path or calibrations.path(docs[1])
  local cal, bad = calibrations.load(path)
  if not cal then
    if opts.given.CALIBRATION then fail(("CALIBRATION=%s: %s"):format(path, bad)) end
    if found then fail(("the calibration %s: %s (calibrate.lua makes it again)"):format(path, bad)) end
    local per = calibrations.run_seconds(docs[1])
    return nil, ("no calibration of this machine, script and knobs in %s (`%s` makes one%s)"):format(
      calibrations.dir(), calibrate_command(docs[1], CAL_RUNS),
      per and (", about %.0f min here"):format(CAL_RUNS * per / 60 + 0.5) or "")
  end
  for _, d in ipairs(docs) do
    local why = calibrations.mismatch(cal, d)
    if why then return nil, ("%s does not apply: %s"):format(path, why) end
  end
  return cal
end

local function pct(x) return x and ("%.1f"):format(x) or "–" end
local function signed(r) return ("%+.1f"):format(100 * (r - 1)) end

-- The rows the calibration adjusts for the machine's state (lib/covariates.lua), judged
-- again with each run's values scaled by its own covariate and against the fit's spread,
-- beside the raw change. The raw rows alone decide the gate.
local function adjusted_block(old_docs, new_docs, cal, raw_rows)
  local old, new, cal_rows = covariates.adjusted(old_docs, new_docs, cal)
  if not old then
    if new ~= "the calibration adjusts no row" then
      say(("\nnot adjusted for the machine's state: %s."):format(new))
    end
    return
  end
  local raw = {}
  for _, r in ipairs(raw_rows) do raw[r.case .. "\0" .. r.column] = r end
  local rows = verdicts.rows(old, new)
  for i, row in ipairs(rows) do
    for k, v in pairs(verdicts.runs(row.old, row.new, cal_rows[row.case .. "\0" .. row.column],
      { ALPHA = opts.ALPHA, SEED = opts.SEED, i = i, EQUIV = opts.EQUIV })) do row[k] = v end
  end
  verdicts.judge(rows, { ALPHA = opts.ALPHA, what = "runs a side" })
  say("")
  say("Adjusted for the machine's state: each run's values scaled by its own covariate as the calibration's fit "
    .. "over its A/A runs says, judged against the fit's spread widened by its slope's uncertainty (Benjamini-"
    .. "Hochberg over these rows). The raw rows above decide any gate. A change that itself moves the covariate "
    .. "(its new - old column) is partly taken away by the adjustment: read the two side by side.")
  say("")
  say("| case | column | adjusted for | its new - old | calibration's runs sd % raw → fit | change % raw "
    .. "| change % adjusted [95 %] | p | q | verdict |")
  say("|---|---|---|---|---|---|---|---|---|---|")
  for _, row in ipairs(rows) do
    local key = row.case .. "\0" .. row.column
    local c, r = cal_rows[key], raw[key]
    local dx = c.covariate == "canary" and ("%+.1f %%"):format(100 * (math.exp(c.dx) - 1)) or ("%+.3g"):format(c.dx)
    say(("| %s | %s | %s (explains %.0f %%) | %s | %.1f → %.1f | %s | %s [%s, %s] | %s | %s | %s |"):format(row.case,
      row.column, c.covariate, 100 * c.explained, dx, 100 * c.raw_sd_log, 100 * c.between_run_sd_log,
      r and r.ratio and signed(r.ratio) or "–", row.ratio and signed(row.ratio) or "–",
      row.lo and signed(row.lo) or "–", row.hi and signed(row.hi) or "–",
      row.p and ("%.3g"):format(row.p) or "–", row.q and ("%.3g"):format(row.q) or "–", row.verdict))
  end
  local legend = verdicts.legend(rows)
  if legend then say(legend) end
end

-- One side's cell: the pooled median with its interval and the sizes.
local function side_cell(runs, unit, seed)
  local pooled, reps = {}, 0
  for _, r in ipairs(runs) do
    table.move(r, 1, #r, #pooled + 1, pooled)
    reps = reps + #r
  end
  local med, lo, hi
  if #runs == 1 then
    local d = stats.describe(pooled)
    med, lo, hi = d.median, d.lo, d.hi
  else
    med, lo, hi = inference.bootstrap_median(runs, { seed = seed, B = 1000 })
  end
  return ("%s [%s, %s] (%s)"):format(units.cell(med, unit), units.cell(lo, unit), units.cell(hi, unit),
    #runs == 1 and ("n=%d"):format(reps) or ("%d×%s"):format(#runs, reps % #runs == 0 and reps // #runs or "~")), med
end

local gate_failures, cannot_gate = {}, {}

-- The method under the table: how the rows were judged, and why not better.
local function method_note(old_docs, new_docs, rows, cal, bound, floors, why_no_cal)
  local ko, kn = #old_docs, #new_docs
  if cal then
    say(("%d run(s) against %d, calibrated: p from Student's t of the difference of the sides' mean log run "
      .. "medians, the run-to-run spread pooled from %s (%d runs of %s, %s) and the runs' own (marked cal.); "
      .. "change and interval from the same t."):format(ko, kn, cal.path, cal.runs or 0, cal.script,
      tostring(cal.date)))
    adjusted_block(old_docs, new_docs, cal, rows)
  elseif ko >= 2 and kn >= 2 then
    say(("%d runs against %d. change: ratio of the pooled medians, 95 %% interval from a hierarchical bootstrap "
      .. "(runs, then repetitions in runs; seed %d); p: exact permutation test over the runs' medians (logs)."):format(
      ko, kn, opts.SEED))
    local floor = stats.max(floors)
    if floor and floor > opts.ALPHA then
      say(("warning: with %d against %d runs the permutation test cannot reach p < %g (its smallest p is %.3g): "
        .. "no row can be called; compare at least 4 runs a side, or calibrate."):format(ko, kn, opts.ALPHA, floor))
    end
    say(("no calibration used: %s."):format(why_no_cal))
  elseif bound then
    say(("one run a side, no calibration: each timed row judged by Student's t against %s, marked bound; a change "
      .. "called this way is beyond what runs differ by on such a machine, and a smaller one says how many runs a "
      .. "side would decide it. %s."):format(bound.text, why_no_cal))
  else
    say(("one run a side: its repetitions share one state of the machine, so they cannot tell a change from "
      .. "drift between runs; %s. Compare several runs a side (OLD... -- NEW...), or interleave the two settings "
      .. "in one run (AB=\"A knobs | B knobs\")."):format(why_no_cal))
  end
end

-- Each row's cells and figures (verdicts.runs): against the calibration, or
-- the bound, or the runs' own spread. Returns the permutation tests' floors.
local function judge_rows(rows, cal, bound, n_machines)
  local floors = {}
  for i, row in ipairs(rows) do
    row.old_cell, row.old_median = side_cell(row.old, row.unit, opts.SEED)
    row.new_cell, row.new_median = side_cell(row.new, row.unit, opts.SEED + 1)
    local c = cal and cal.by_row[row.case .. "\0" .. row.column]
    local sd = bound and (bound.by_row[row.case .. "\0" .. row.column] or bound.default[units.kind(row.unit)])
    if sd then
      c = type(sd) == "table" and sd or { between_run_sd_log = sd, df = calibrations.DEFAULT_DF }
      row.bound = true
    end
    for k, v in pairs(verdicts.runs(row.old, row.new, c, { ALPHA = opts.ALPHA, SEED = opts.SEED, i = i,
      EQUIV = opts.EQUIV, unit = row.unit })) do row[k] = v end
    if row.floor and not row.calibrated then floors[#floors + 1] = row.floor end
    -- several machines: the interval from machine, run and repetition
    if n_machines > 1 and row.ratio and verdicts.positive(row.old) and verdicts.positive(row.new) then
      row.ratio, row.lo, row.hi = machines.bootstrap_ratio(row.old, row.new, { seed = opts.SEED + i })
    end
  end
  return floors
end

-- The table of OLD runs against NEW runs.
local function compare(old_docs, new_docs)
  for _, d in ipairs(old_docs) do plain_side(d) end
  for _, d in ipairs(new_docs) do plain_side(d) end
  for _, d in ipairs(old_docs) do say("old: " .. describe(d)) end
  for _, d in ipairs(new_docs) do say("new: " .. describe(d)) end
  for _, o in ipairs(old_docs) do
    for _, n in ipairs(new_docs) do
      if o.text == n.text then
        say(("%s and %s are the same run (identical files): a run compared with itself, so every change is 0 by "
          .. "construction and says nothing of the machine"):format(o.path, n.path))
      end
    end
  end
  local first = old_docs[1]
  for _, d in ipairs(old_docs) do same_measurement(first, d) end
  for _, d in ipairs(new_docs) do same_measurement(first, d) end
  for _, l in ipairs(differences(old_docs[#old_docs], new_docs[1])) do say("  " .. l) end
  local _, machine_lines, n_machines = machines.relation(old_docs, new_docs)
  for _, l in ipairs(machine_lines) do say(l) end
  -- each run's values carry their machine, for the machine-level bootstrap
  for _, docs in ipairs { old_docs, new_docs } do
    for _, d in ipairs(docs) do
      for _, r in ipairs(d.rows) do if r.finite then r.finite.machine = d.machine_label end end
    end
  end
  local rows, lonely = verdicts.rows(old_docs, new_docs)
  if #rows == 0 then fail(("%s and %s have no row in common"):format(first.path, new_docs[1].path)) end

  local all = table.move(new_docs, 1, #new_docs, #old_docs + 1, table.move(old_docs, 1, #old_docs, 1, {}))
  local cal, why_no_cal = calibration(all)
  -- one run a side and no calibration: judged against a stated conservative spread
  local bound = not cal and (#old_docs == 1 or #new_docs == 1) and calibrations.bound(first) or nil
  local floors = judge_rows(rows, cal, bound, n_machines)
  verdicts.mark_decision(rows, (decision_of(first)))
  local judged = verdicts.judge(rows, { ALPHA = opts.ALPHA, FAIL_ABOVE = opts.FAIL_ABOVE, what = "runs a side" })
  if opts.FORCE then
    for _, d in ipairs(old_docs) do if d.forced then say(("FORCED: %s: %s"):format(d.path, d.forced)) end end
    for _, d in ipairs(new_docs) do if d.forced then say(("FORCED: %s: %s"):format(d.path, d.forced)) end end
    for _, l in ipairs(pooled_knobs) do say("FORCED: " .. l) end
  end
  say("")
  say("| case | column | unit | old median [95 %] (runs×reps) | new median [95 %] | change % [95 %] "
    .. "| runs sd % | reps sd % | p | q | verdict |")
  say("|---|---|---|---|---|---|---|---|---|---|---|")
  local logs = {}
  for _, row in ipairs(rows) do
    local change = row.ratio and ("%s [%s, %s]"):format(signed(row.ratio), signed(row.lo), signed(row.hi))
      or (row.old_median ~= 0 and ("%+.1f"):format(100 * (row.new_median - row.old_median) / math.abs(row.old_median))
        or "–")
    if units.better(row.unit) and row.ratio then logs[#logs + 1] = math.log(row.ratio) end
    say(("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(row.case, row.column, row.unit,
      row.old_cell, row.new_cell, change, pct(row.between) .. (row.bound and " (bound)" or row.calibrated and " (cal.)"
        or ""), pct(row.within),
      row.p and ("%.3g"):format(row.p) or "–", row.q and ("%.3g"):format(row.q) or "–", row.verdict))
    record(row, table.concat(stats.map(old_docs, function(d) return d.path end), " "),
      table.concat(stats.map(new_docs, function(d) return d.path end), " "), row.old_median, row.new_median)
  end
  local legend = verdicts.legend(rows)
  if legend then say(legend) end
  say_decision(judged, rows, first)
  for _, w in ipairs(judged.failures) do gate_failures[#gate_failures + 1] = w end
  for _, w in ipairs(judged.unjudged) do cannot_gate[#cannot_gate + 1] = w end
  if #logs > 0 then
    local g = math.exp(stats.mean(logs))
    say(("\ngeomean of new / old over the %d timed and throughput rows: %.4f (%+.1f %%)"):format(#logs, g,
      100 * (g - 1)))
  end
  say("")
  method_note(old_docs, new_docs, rows, cal, bound, floors, why_no_cal)
  if judged.judged > 0 then
    say(("%d rows judged: if nothing changed about %.1f of them would have p < %g by chance; q is p adjusted by "
      .. "Benjamini-Hochberg, and %d row(s) have q <= %g (at most a share %g of such calls expected false)."):format(
      judged.judged, judged.judged * opts.ALPHA, opts.ALPHA, judged.called, opts.ALPHA, opts.ALPHA))
  end
  if judged.same > 0 then
    say(("%d row(s) the same within ±δ: the 90 %% interval of the change inside ±δ (two one-sided tests at %g); "
      .. "δ %s."):format(judged.same, opts.ALPHA, opts.EQUIV and ("= EQUIV = %g %%"):format(opts.EQUIV)
      or ("= the smallest change this comparison detects with 80 %% power (stated up to %d %%)"):format(
        verdicts.SAME_MAX)))
  end
  -- a row one side lacks is no row that held: a timed row gone from the new runs cannot pass a gate
  for _, side in ipairs { "old", "new" } do
    if #lonely[side] > 0 then
      local names = stats.map(lonely[side], function(r) return r.case .. " " .. r.column end)
      say(("%d row(s) only in the %s runs, not compared: %s"):format(#names, side, table.concat(names, ", ")))
      local asked = decision_of(first)
      for _, r in ipairs(side == "old" and lonely.old or {}) do
        local decides = not asked
        for _, n in ipairs(asked or {}) do decides = decides or n[1] == r.case and n[2] == r.column end
        if units.better(r.unit) and decides then
          cannot_gate[#cannot_gate + 1] = r.case .. " " .. r.column .. " (not in the new runs)"
        end
      end
    end
  end
  say("runs sd, reps sd: the spread of the logs between the runs' medians and between repetitions within a run.\n")
end

local function load_all(paths)
  local docs = {}
  for _, p in ipairs(paths) do
    local expanded = {}
    expand(p, expanded)
    for _, e in ipairs(expanded) do docs[#docs + 1] = load(e) end
  end
  return docs
end

-- The tree and machine the comparison itself ran on, once every file is read.
local function stamp() say("compared by " .. provenance.describe(provenance.collect()) .. "\n") end

if dashes == 1 then
  if #sides[1] == 0 or #sides[2] == 0 then fail("OLD... -- NEW...: both sides need at least one results JSON") end
  local old, new = load_all(sides[1]), load_all(sides[2])
  replicates(old, "old")
  replicates(new, "new")
  stamp()
  compare(old, new)
else
  local docs = load_all(sides[1])
  if #docs == 1 and ab.is_ab(docs[1]) then
    stamp()
    local doc = docs[1]
    say(("AB run: %s (%s %s, %s)"):format(doc.path, doc.script, doc.run or "", doc.date or "?"))
    opts.decision = decision_of(doc)
    local lines, failures, unjudged, rows = ab.report(doc, opts)
    if not lines then fail(("%s: an AB run with no row measured on both sides"):format(doc.path)) end
    for _, row in ipairs(rows) do
      record(row, "A: " .. tostring(doc.ab.a), "B: " .. tostring(doc.ab.b), row.a.median, row.b.median)
    end
    say(table.concat(lines, "\n") .. "\n")
    for _, w in ipairs(failures) do gate_failures[#gate_failures + 1] = w end
    for _, w in ipairs(unjudged) do cannot_gate[#cannot_gate + 1] = w end
  elseif #docs < 2 then
    fail("needs OLD... -- NEW..., two results JSON files, or one AB run\nusage: ./ftrun compare.lua OLD... -- NEW... "
      .. "(--help explains)")
  else
    stamp()
    for i = 2, #docs do compare({ docs[1] }, { docs[i] }) end
  end
end

if opts.FORMAT ~= "md" then io.stdout:write(display.table(FIELDS, records, opts.FORMAT)) end
if opts.FAIL_ABOVE and #cannot_gate > 0 then
  fail(("FAIL_ABOVE cannot gate: %d row(s) cannot be judged with the runs given (%s); give several runs a side "
    .. "or a calibration (make calibrate)"):format(#cannot_gate, table.concat(cannot_gate, ", ", 1,
    math.min(#cannot_gate, 5)) .. (#cannot_gate > 5 and ", ..." or "")))
end
if #gate_failures > 0 then
  io.stderr:write(("compare.lua: %d row(s) called worse by more than FAIL_ABOVE=%g %%:\n  %s\n"):format(
    #gate_failures, opts.FAIL_ABOVE, table.concat(gate_failures, "\n  ")))
  os.exit(1, true)
end
