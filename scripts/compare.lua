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
-- from an exact permutation test over the runs' medians. With one run a
-- side, only a calibration of this machine and script (make calibrate) says
-- how far two runs differ by chance; without one the row is not judged. The
-- rows' p-values are corrected together (Benjamini-Hochberg), and the gate
-- fails only on rows the correction calls.
local ab = require "ab"
local ft = require "ft"
local inference = require "inference"
local json = require "json"
local knobs = require "knobs"
local provenance = require "provenance"
local report = require "report"
local stats = require "stats"
local units = require "units"

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
  { name = "CALIBRATION", kind = "path", default = "results/calibration-<script>.json beside ftrun",
    desc = "make calibrate's file: the run-to-run spread of this machine and script, used with one run a side "
      .. "when its machine, script and knobs match the runs compared" },
  { name = "SEED", kind = "count", default = 1,
    desc = "seed of the bootstrap's draws (the same seed, the same interval)" },
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
~ when not, ? when the runs given cannot judge the row.
  2+ runs a side: interval from a hierarchical bootstrap (runs, then
    repetitions in runs), p from an exact permutation test over the run medians
    (4 runs a side are needed for p < 0.05: 2 of C(8,4) = 70 orders).
  1 run a side: judged only against the run-to-run spread of a calibration
    file of this machine and script (make calibrate), else "? one run a side".
  AB run: the median of the per-repetition ratios B/A with a bootstrap
    interval, p from a Wilcoxon signed-rank test of their logs.
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
if opts.FAIL_ABOVE == "off" then opts.FAIL_ABOVE = nil end

-- A path: a file, or a directory whose *results.json files (at any depth) are runs.
local function expand(path, into)
  local f = io.open(path)
  if not f then fail(("cannot read %s: no such file or directory"):format(path)) end
  local _, _, code = f:read(0)
  f:close()
  if code == 21 then -- EISDIR
    local p = assert(io.popen("find " .. require("shell").quote(path)
      .. " -name '*results.json' -type f 2>/dev/null | LC_ALL=C sort"))
    local found = 0
    for line in p:lines() do
      into[#into + 1] = line
      found = found + 1
    end
    p:close()
    if found == 0 then fail(("%s: a directory with no *results.json in it"):format(path)) end
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
  local f, err = io.open(path)
  local text = f and f:read("a")
  if f then f:close() end
  if not text then fail(("cannot read %s: %s"):format(path, err or "not a file")) end
  local doc, why = json.decode(text)
  if type(doc) ~= "table" or type(doc.script) ~= "string" then
    fail(("%s: not an ftrun results JSON (%s)"):format(path, why or "no script"))
  end
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
  local rows = {}
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
    rows[#rows + 1] = r
  end
  doc.rows = rows
  for _, k in ipairs { "knobs", "machine", "provenance" } do
    if type(doc[k]) ~= "table" then doc[k] = {} end
  end
  return doc
end

-- Which way is worse, by unit; counts and shares have no better side.
local LOWER_BETTER = { ["ns/page"] = true, ns = true, us = true, ms = true, cycles = true }
local HIGHER_BETTER = { ["GB/s"] = true, ["faults/s"] = true }

local function describe(doc)
  local p = doc.provenance or {}
  return ("%s (%s %s, %s, commit %s%s)%s"):format(doc.path, doc.script, doc.run or "", doc.date or "?",
    tostring(p.git_commit):sub(1, 12),
    p.git_dirty and ", dirty" .. (p.git_diff_sha256 and ", diff " .. p.git_diff_sha256:sub(1, 16) or "") or "",
    doc.forced and ("  FORCED: verdict '%s'"):format(doc.forced) or "")
end

-- What differs between two runs' knobs and machines, as lines; where the
-- files went and the shuffling seed are no difference in what ran.
local WHERE = { RESULTS = true, README = true, PUBLISH = true, SEED = true }
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
        and k ~= "cpu_mhz" then
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

-- The calibration of this machine and script, when its file matches the
-- runs compared; else nil and why not.
local MACHINE_KEYS = { "cpu", "cpus", "kernel", "page_size", "hypervisor" }
local function calibration(doc)
  local path = opts.given.CALIBRATION and opts.CALIBRATION
    or ("%s/results/calibration-%s.json"):format(ft.project_dir, (doc.script:gsub("%.lua$", "")))
  local f = io.open(path)
  if not f then
    return nil, ("no calibration file %s (make calibrate writes one)"):format(path)
  end
  local cal = json.decode(f:read("a") or "")
  f:close()
  if type(cal) ~= "table" or cal.kind ~= "ftrun calibration" or type(cal.rows) ~= "table" then
    fail(("CALIBRATION=%s: not a calibration file of ftrun"):format(path))
  end
  if cal.script ~= doc.script then
    return nil, ("%s calibrates %s, not %s"):format(path, tostring(cal.script), doc.script)
  end
  for _, k in ipairs(MACHINE_KEYS) do
    if (cal.machine or {})[k] ~= doc.machine[k] then
      return nil, ("%s was made on another machine (%s %s, here %s)"):format(path, k, tostring((cal.machine or {})[k]),
        tostring(doc.machine[k]))
    end
  end
  for k, v in pairs(cal.knobs or {}) do
    if not WHERE[k] and doc.knobs[k] ~= v then
      return nil, ("%s was made with %s=%s, these runs have %s"):format(path, k, tostring(v), tostring(doc.knobs[k]))
    end
  end
  local rows = {}
  for _, r in ipairs(cal.rows) do rows[r.case .. "\0" .. r.column] = r end
  cal.by_row, cal.path = rows, path
  return cal
end

local function positive(runs)
  for _, r in ipairs(runs) do
    for _, v in ipairs(r) do if v <= 0 then return false end end
  end
  return true
end

-- Every value of both sides the same (a count that cannot vary).
local function constant(a, b)
  local v = a[1][1]
  for _, side in ipairs { a, b } do
    for _, r in ipairs(side) do
      for _, x in ipairs(r) do if x ~= v then return false end end
    end
  end
  return true
end

-- sd of the logs between the runs' medians, and pooled within runs, in %.
local function spreads(runs_a, runs_b)
  local between, within, dfb, dfw = 0, 0, 0, 0
  for _, side in ipairs { runs_a, runs_b } do
    if #side >= 2 then
      local meds = {}
      for i, r in ipairs(side) do meds[i] = math.log(stats.median(r)) end
      local m = stats.mean(meds)
      for _, v in ipairs(meds) do between = between + (v - m) ^ 2 end
      dfb = dfb + #side - 1
    end
    for _, r in ipairs(side) do
      if #r >= 2 then
        local logs = stats.map(r, math.log)
        local m = stats.mean(logs)
        for _, v in ipairs(logs) do within = within + (v - m) ^ 2 end
        dfw = dfw + #r - 1
      end
    end
  end
  return dfb > 0 and 100 * math.sqrt(between / dfb) or nil, dfw > 0 and 100 * math.sqrt(within / dfw) or nil
end

local function pct(x) return x and ("%.1f"):format(x) or "–" end
local function signed(r) return ("%+.1f"):format(100 * (r - 1)) end

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

-- The rows both sides have, as lists of runs (each run its finite values).
local function common_rows(old_docs, new_docs)
  local order, by = {}, {}
  local function add(docs, side)
    for _, d in ipairs(docs) do
      for _, r in ipairs(d.rows) do
        local key = r.case .. "\0" .. r.column
        local row = by[key]
        if not row then
          row = { case = r.case, column = r.column, unit = r.unit, old = {}, new = {} }
          by[key] = row
          order[#order + 1] = row
        end
        if #r.finite > 0 then table.insert(row[side], r.finite) end
      end
    end
  end
  add(old_docs, "old")
  add(new_docs, "new")
  -- each side's runs in the order of their values, not of the command line:
  -- the bootstrap's seeded draws then give one interval for one set of runs
  local function before(a, b)
    for i = 1, math.min(#a, #b) do
      if a[i] ~= b[i] then return a[i] < b[i] end
    end
    return #a < #b
  end
  for _, row in ipairs(order) do
    table.sort(row.old, before)
    table.sort(row.new, before)
  end
  local out, lonely = {}, { old = {}, new = {} }
  for _, row in ipairs(order) do
    if #row.old > 0 and #row.new > 0 then out[#out + 1] = row
    elseif #row.old > 0 then table.insert(lonely.old, row)
    elseif #row.new > 0 then table.insert(lonely.new, row) end
  end
  return out, lonely
end

local gate_failures, cannot_gate = {}, {}

-- The table of OLD runs against NEW runs.
local function compare(old_docs, new_docs)
  for _, d in ipairs(old_docs) do print("old: " .. describe(d)) end
  for _, d in ipairs(new_docs) do print("new: " .. describe(d)) end
  local first = old_docs[1]
  for _, d in ipairs(old_docs) do same_measurement(first, d) end
  for _, d in ipairs(new_docs) do same_measurement(first, d) end
  for _, l in ipairs(differences(old_docs[#old_docs], new_docs[1])) do print("  " .. l) end
  local rows, lonely = common_rows(old_docs, new_docs)
  if #rows == 0 then fail(("%s and %s have no row in common"):format(first.path, new_docs[1].path)) end

  local cal, why_no_cal
  local one_side = #old_docs == 1 or #new_docs == 1
  if one_side then cal, why_no_cal = calibration(first) end
  local ps, floors = {}, {}
  for i, row in ipairs(rows) do
    local ko, kn = #row.old, #row.new
    local pos = positive(row.old) and positive(row.new)
    if pos then row.between, row.within = spreads(row.old, row.new) end
    row.old_cell, row.old_median = side_cell(row.old, row.unit, opts.SEED)
    row.new_cell, row.new_median = side_cell(row.new, row.unit, opts.SEED + 1)
    if pos then
      row.ratio, row.lo, row.hi = inference.bootstrap_ratio(row.old, row.new, { seed = opts.SEED + i })
    end
    if constant(row.old, row.new) then
      row.same = true -- one value on both sides: nothing to test, and no place in the family of tests
    elseif ko >= 2 and kn >= 2 then
      local mo, mn = {}, {}
      for j, r in ipairs(row.old) do mo[j] = pos and math.log(stats.median(r)) or stats.median(r) end
      for j, r in ipairs(row.new) do mn[j] = pos and math.log(stats.median(r)) or stats.median(r) end
      local p, _, floor = inference.permutation(mo, mn, { seed = opts.SEED + i })
      row.p, floors[#floors + 1] = p, floor
      if floor > opts.ALPHA then row.unjudged = ("? %d+%d runs cannot reach %g"):format(ko, kn, opts.ALPHA) end
    else
      local c = cal and cal.by_row[row.case .. "\0" .. row.column]
      if c and pos and c.between_run_sd_log and c.df and c.df >= 1 then
        -- the difference of the sides' mean log run medians against the calibrated spread of one run's median
        local mo = stats.mean(stats.map(row.old, function(r) return math.log(stats.median(r)) end))
        local mn = stats.mean(stats.map(row.new, function(r) return math.log(stats.median(r)) end))
        local se = c.between_run_sd_log * math.sqrt(1 / ko + 1 / kn)
        local tq = inference.t_quantile(0.025, c.df)
        row.ratio, row.lo, row.hi = math.exp(mn - mo), math.exp(mn - mo - tq * se), math.exp(mn - mo + tq * se)
        row.p = se > 0 and 2 * inference.t_upper_tail(math.abs(mn - mo) / se, c.df) or (mn == mo and 1 or 0)
        row.between = 100 * c.between_run_sd_log
        row.calibrated = true
      else
        row.unjudged = "? one run a side"
      end
    end
    if row.p then ps[#ps + 1] = row.p end
  end
  -- Benjamini-Hochberg over the rows judged
  local q = inference.bh(ps)
  local k, called, worse_rows = 0, 0, {}
  for _, row in ipairs(rows) do
    if row.p then
      k = k + 1
      row.q = q[k]
    end
  end
  if opts.FORCE then
    for _, d in ipairs(old_docs) do if d.forced then print(("FORCED: %s: %s"):format(d.path, d.forced)) end end
    for _, d in ipairs(new_docs) do if d.forced then print(("FORCED: %s: %s"):format(d.path, d.forced)) end end
    for _, l in ipairs(pooled_knobs) do print("FORCED: " .. l) end
  end
  print("")
  print("| case | column | unit | old median [95 %] (runs×reps) | new median [95 %] | change % [95 %] "
    .. "| runs sd % | reps sd % | p | q | verdict |")
  print("|---|---|---|---|---|---|---|---|---|---|---|")
  local logs = {}
  for _, row in ipairs(rows) do
    local change = row.ratio and ("%s [%s, %s]"):format(signed(row.ratio), signed(row.lo), signed(row.hi))
      or (row.old_median ~= 0 and ("%+.1f"):format(100 * (row.new_median - row.old_median) / math.abs(row.old_median))
        or "–")
    local better_lower = LOWER_BETTER[row.unit] and true or (HIGHER_BETTER[row.unit] and false)
    local verdict = row.same and "= (one value)" or row.unjudged or "~"
    if row.q and row.q <= opts.ALPHA and not row.unjudged then
      called = called + 1
      local r = row.ratio or (row.new_median / row.old_median)
      verdict = row.old_median ~= 0 and ("%+.1f %%"):format(100 * (r - 1)) -- from 0 no percent: the difference
        or ("new - old %+g"):format(row.new_median - row.old_median)
      if better_lower ~= nil and r ~= 1 then
        local worse = (r > 1) == better_lower
        verdict = verdict .. (worse and " (worse)" or " (better)")
        if worse and opts.FAIL_ABOVE and math.abs(100 * (r - 1)) > opts.FAIL_ABOVE then
          worse_rows[#worse_rows + 1] = ("%s %s: %s (p=%.3g, q=%.3g)"):format(row.case, row.column,
            verdict:gsub(" %(worse%)$", ""), row.p, row.q)
        end
      end
    end
    if row.unjudged and better_lower ~= nil then cannot_gate[#cannot_gate + 1] = row.case .. " " .. row.column end
    if better_lower ~= nil and row.ratio then logs[#logs + 1] = math.log(row.ratio) end
    print(("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(row.case, row.column, row.unit,
      row.old_cell, row.new_cell, change, pct(row.between) .. (row.calibrated and " (cal.)" or ""), pct(row.within),
      row.p and ("%.3g"):format(row.p) or "–", row.q and ("%.3g"):format(row.q) or "–", verdict))
  end
  for _, w in ipairs(worse_rows) do gate_failures[#gate_failures + 1] = w end
  if #logs > 0 then
    local g = math.exp(stats.mean(logs))
    print(("\ngeomean of new / old over the %d timed and throughput rows: %.4f (%+.1f %%)"):format(#logs, g,
      100 * (g - 1)))
  end
  print("")
  local ko, kn = #old_docs, #new_docs
  if ko >= 2 and kn >= 2 then
    print(("%d runs against %d. change: ratio of the pooled medians, 95 %% interval from a hierarchical bootstrap "
      .. "(runs, then repetitions in runs; seed %d); p: exact permutation test over the runs' medians (logs)."):format(
      ko, kn, opts.SEED))
    local floor = stats.max(floors)
    if floor > opts.ALPHA then
      print(("warning: with %d against %d runs the permutation test cannot reach p < %g (its smallest p is %.3g): "
        .. "no row can be called; compare at least 4 runs a side."):format(ko, kn, opts.ALPHA, floor))
    end
  elseif cal then
    print(("one run a side: p from Student's t of the log ratio against the run-to-run spread in %s (%d runs, %s)")
      :format(cal.path, cal.runs or 0, tostring(cal.date)))
  else
    print(("one run a side: its repetitions share one state of the machine, so they cannot tell a change from "
      .. "drift between runs; %s. Compare several runs a side (OLD... -- NEW...), or interleave the two settings "
      .. "in one run (AB=\"A knobs | B knobs\")."):format(why_no_cal))
  end
  if #ps > 0 then
    print(("%d rows judged: if nothing changed about %.1f of them would have p < %g by chance; q is p adjusted by "
      .. "Benjamini-Hochberg, and %d row(s) have q <= %g (at most a share %g of such calls expected false)."):format(
      #ps, #ps * opts.ALPHA, opts.ALPHA, called, opts.ALPHA, opts.ALPHA))
  end
  -- a row one side lacks is no row that held: a timed row gone from the new runs cannot pass a gate
  for _, side in ipairs { "old", "new" } do
    if #lonely[side] > 0 then
      local names = stats.map(lonely[side], function(r) return r.case .. " " .. r.column end)
      print(("%d row(s) only in the %s runs, not compared: %s"):format(#names, side, table.concat(names, ", ")))
      for _, r in ipairs(side == "old" and lonely.old or {}) do
        if LOWER_BETTER[r.unit] or HIGHER_BETTER[r.unit] then
          cannot_gate[#cannot_gate + 1] = r.case .. " " .. r.column .. " (not in the new runs)"
        end
      end
    end
  end
  print("runs sd, reps sd: the spread of the logs between the runs' medians and between repetitions within a run.\n")
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
local function stamp() print("compared by " .. provenance.describe(provenance.collect()) .. "\n") end

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
    print(("AB run: %s (%s %s, %s)"):format(doc.path, doc.script, doc.run or "", doc.date or "?"))
    local lines, failures, unjudged = ab.report(doc, opts)
    if not lines then fail(("%s: an AB run with no row measured on both sides"):format(doc.path)) end
    print(table.concat(lines, "\n") .. "\n")
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
