-- Run until decided: BASELINE=DIR UNTIL=decided MAX_RUNS=N ./ftrun SCRIPT
-- adds runs of SCRIPT, one at a time, and after each compares all of them
-- with the baseline's runs, until every timed row is "different" or "same
-- within ±δ", or MAX_RUNS is reached ("undecided"). Looking after every run
-- would spend ALPHA again at each look, so each look tests at its share of
-- it: an O'Brien-Fleming-shaped spending function (Lan and DeMets) gives
-- look i of N the increment a(i/N) - a((i-1)/N), a(t) = 2 - 2 Phi(z/sqrt t),
-- and the increments add up to ALPHA (Chromium Pinpoint's same / different
-- / more, with a cap).
-- The judging machinery (verdicts, calibrations and what they load) is
-- fetched on first use: a run that compares nothing never loads it.
local function lazy(name)
  return setmetatable({}, { __index = function(_, k) return require(name)[k] end })
end
local calibrations = lazy "calibrations"
local display = require "display"
local ft = require "ft"
local json = require "json"
local knobs = require "knobs"
local report = require "report"
local shell = require "shell"
local stats = require "stats"
local units = require "units"
local verdicts = lazy "verdicts"

local sequential = {}

-- The verdict table's columns with FORMAT=csv, tsv or json (changes in %).
sequential.FIELDS = { "case", "column", "unit", "change_pct", "lo_pct", "hi_pct", "p", "q", "verdict" }

sequential.ALPHA = 0.05

knobs.parsers["until"] = function(value)
  if value == "off" or value == "decided" then return value end
  return nil, "decided (or off)"
end

function sequential.knobs()
  return {
    { name = "UNTIL", kind = "until", default = "off",
      desc = "decided: with AB=\"A knobs | B knobs\", add ABBA pairs inside this run until the decision rows are "
        .. "different or the same within ±EQUIV (a t interval over batch means of the pairs' log ratios B/A; "
        .. "looks at 12 pairs and then a quarter more each time; alpha "
        .. "spending, Pocock shape: each look tests at its share and the shares add up to 0.05, so the error rates "
        .. "hold over the looks), at most MAX_PAIRS pairs or MAX_MIN minutes; with "
        .. "BASELINE=DIR, add runs until the decision rows differ from the baseline's runs or are the same "
        .. "(alpha spending, O'Brien-Fleming shape), at most MAX_RUNS runs" },
    { name = "BASELINE", kind = "path", default = "none",
      desc = "with UNTIL=decided: a directory of this script's runs (its *results.json) to compare against" },
    { name = "MAX_RUNS", kind = "count", default = 10, desc = "with UNTIL=decided: the most runs it adds" },
    { name = "MAX_PAIRS", kind = "count", default = 400,
      desc = "with AB and UNTIL=decided: the most pairs it adds (the spending of alpha is planned over them)" },
    { name = "MAX_MIN", kind = "count", default = 10,
      desc = "with AB and UNTIL=decided: the most minutes it adds pairs for" },
    { name = "EQUIV", kind = "equiv", default = 2,
      desc = "with AB and UNTIL=decided: the margin of \"the same\" in percent (above 0, below 100)" },
    { name = "ROWS", kind = "rows", default = "the script's decision rows",
      desc = "with UNTIL=decided or AB: the rows to decide, case:column items separated by ; (e.g. A:pass1), or "
        .. "all; by default the rows the script names as what it is asked (the first touch of cycle A, say). "
        .. "The others are reported as they stand" },
  }
end

local quote = shell.quote

-- Φ^-1(1 - p) by bisection on the normal upper tail.
local function z_upper(p)
  local lo, hi = -10, 10
  for _ = 1, 100 do
    local mid = (lo + hi) / 2
    if stats.upper_tail(mid) > p then lo = mid else hi = mid end
  end
  return (lo + hi) / 2
end

-- The share of alpha look i of n may spend.
function sequential.spend(alpha, i, n)
  local z = z_upper(alpha / 2)
  local function a(t) return t <= 0 and 0 or 2 * stats.upper_tail(z / math.sqrt(t)) end
  return a(i / n) - a((i - 1) / n)
end

-- A results JSON's rows, each its finite values; nil and why when it is none.
local function load(path)
  local f = io.open(path)
  local doc = f and json.decode(f:read("a") or "")
  if f then f:close() end
  if type(doc) ~= "table" or type(doc.script) ~= "string" or type(doc.rows) ~= "table" then
    return nil, ("%s: not an ftrun results JSON"):format(path)
  end
  if not report.clean_verdict(doc.verdict) then
    return nil, ("%s: its verdict is '%s', not a clean run"):format(path, tostring(doc.verdict))
  end
  if type(doc.ab) == "table" then return nil, ("%s is an AB run, not a run of one setting"):format(path) end
  for _, r in ipairs(doc.rows) do
    r.finite = {}
    for _, v in ipairs(type(r.values) == "table" and r.values or {}) do
      if type(v) == "number" then r.finite[#r.finite + 1] = v end
    end
  end
  doc.path = path
  return doc
end

local function results_in(dir)
  return (shell.find(dir, "results%.json$"))
end

-- What must match between the baseline's machine and this one: a kernel
-- comparison changes the kernel, not the CPU or the hypervisor.
local SAME_MACHINE = { "cpu", "cpus", "page_size" }

-- The baseline's runs, checked (exit 2 naming what is wrong, before anything runs).
local function baseline(script, cfg)
  local fail = function(msg) knobs.fail(script, msg) end
  if not cfg.given.BASELINE then
    fail("UNTIL=decided needs AB=\"A knobs | B knobs\" (both settings in pairs inside this run) or BASELINE=DIR "
      .. "(a directory of this script's runs to add runs against)")
  end
  if not ft.list_dir(cfg.BASELINE) and io.open(cfg.BASELINE) then
    fail(("BASELINE=%s: expected a directory of a baseline's runs"):format(cfg.BASELINE))
  end
  local paths = results_in(cfg.BASELINE)
  if #paths == 0 then fail(("BASELINE=%s: no *results.json in it (missing, or no runs)"):format(cfg.BASELINE)) end
  local here = ft.machine()
  local docs = {}
  for i, p in ipairs(paths) do
    local doc, why = load(p)
    if not doc then fail(("BASELINE=%s: %s"):format(cfg.BASELINE, why)) end
    if doc.script ~= script then
      fail(("BASELINE=%s: %s is a run of %s, not %s"):format(cfg.BASELINE, p, doc.script, script))
    end
    local m = doc.machine or {}
    for _, k in ipairs(SAME_MACHINE) do
      if m[k] ~= here[k] then
        fail(("BASELINE=%s: %s was run on another machine (%s %s, here %s)"):format(cfg.BASELINE, p, k,
          tostring(m[k]), tostring(here[k])))
      end
    end
    for k, v in pairs(m) do
      if k:match("^hypervisor") and type(v) ~= "table" and here[k] ~= nil and v ~= here[k] then
        fail(("BASELINE=%s: %s was run on another machine (%s %s, here %s)"):format(cfg.BASELINE, p, k,
          tostring(v), tostring(here[k])))
      end
    end
    -- the knobs that define the measurement, as compare.lua requires of two sides
    local theirs, keys = calibrations.knobs(doc), {}
    for k in pairs(theirs) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local mine = cfg[k]
      if not calibrations.WHERE[k] and type(mine) ~= "table" and theirs[k] ~= mine then
        fail(("BASELINE=%s: %s was run with %s=%s, this run has %s=%s: not the same measurement"):format(
          cfg.BASELINE, p, k, tostring(theirs[k]), k, tostring(mine)))
      end
    end
    docs[i] = doc
  end
  return docs
end

-- The calibration of the baseline's machine, script and knobs, if any; a
-- file there that is no calibration or another machine's stops the run.
local function calibration(script, docs)
  local path = calibrations.find(docs[1])
  if not path then return nil end
  local cal, bad = calibrations.load(path)
  if not cal then knobs.fail(script, ("the calibration %s: %s"):format(path, bad)) end
  for _, d in ipairs(docs) do
    local why = calibrations.mismatch(cal, d)
    if why then knobs.fail(script, ("the calibration %s: %s"):format(path, why)) end
  end
  return cal
end

-- A row still worth more runs: neither called nor the same within ±δ,
-- and decidable within the cap (the runs a side its spread needs, when
-- known, at most `left` more than it has): a row that no run within
-- MAX_RUNS can decide stops nobody (futility, as Pinpoint's cap).
function sequential.open(row, have, cap)
  if row.called or row.eq or row.same then return false end
  if row.need and row.need > cap and row.need > have then return false end
  return true
end

-- One look: every row both sides have, judged at alpha. Returns the rows
-- and whether every decision row (every timed row where none is named) is decided.
local function look(old_docs, new_docs, cal, alpha, equiv, cap, decision)
  local order, by = {}, {}
  for side, docs in pairs { old = old_docs, new = new_docs } do
    for _, d in ipairs(docs) do
      for _, r in ipairs(d.rows) do
        if units.timed(r.unit) and #r.finite > 0 then
          local key = r.case .. "\0" .. r.column
          if not by[key] then
            by[key] = { case = r.case, column = r.column, unit = r.unit, old = {}, new = {} }
            order[#order + 1] = key
          end
          table.insert(by[key][side], r.finite)
        end
      end
    end
  end
  table.sort(order)
  local rows = {}
  for i, key in ipairs(order) do
    local row = by[key]
    if #row.old > 0 and #row.new > 0 then
      local c = cal and cal.by_row[key]
      for k, v in pairs(verdicts.runs(row.old, row.new, c, { ALPHA = alpha, SEED = 1, i = i, EQUIV = equiv,
        NEED_ALPHA = sequential.ALPHA })) do
        row[k] = v
      end
      rows[#rows + 1] = row
    end
  end
  verdicts.mark_decision(rows, decision)
  local judged = verdicts.judge(rows, { ALPHA = alpha, what = "runs a side" })
  local open, deciding = 0, 0
  for _, row in ipairs(rows) do
    if row.decides or not decision then
      deciding = deciding + 1
      if sequential.open(row, #new_docs, cap) then open = open + 1 end
    end
  end
  return rows, open == 0 and deciding > 0, judged
end

-- The decision rows ({case, column} pairs) from ROWS= or the runs' own
-- decision_rows; nil: every timed row decides.
function sequential.decision(cfg, named)
  if cfg.given.ROWS then
    if cfg.ROWS == "all" then return nil end
    return cfg.ROWS
  end
  return verdicts.decision_names(named)
end

-- A results JSON's date ("2026-12-07T19:32:11Z") as seconds since the epoch (UTC), or nil.
local function epoch(date)
  local y, mo, d, h, mi, s = tostring(date):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)Z$")
  if not y then return nil end
  local t = { year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi),
    sec = tonumber(s), isdst = false }
  -- os.time reads the table as local time: the offset of the epoch's own reading corrects it
  local here = os.time(t)
  local utc = os.time(os.date("!*t", here))
  return here + (here - utc)
end

-- What the baseline's age means for the comparison, as one sentence.
function sequential.age(old)
  local newest
  for _, d in ipairs(old) do
    local t = epoch(d.date)
    if t and (not newest or t > newest) then newest = t end
  end
  local what = "the baseline's runs were made before these"
  if newest then
    local s = math.max(0, os.time() - newest)
    what = ("the baseline's newest run is %s old"):format(s < 5400 and ("%.0f min"):format(s / 60)
      or s < 172800 and ("%.1f h"):format(s / 3600) or ("%.0f days"):format(s / 86400))
  end
  return what .. (": the host's drift since then is part of this comparison's uncertainty, and nothing here measures "
    .. "it; two settings that can share a run are compared without it by AB=\"A knobs | B knobs\" UNTIL=decided.")
end

-- The knobs of the two ways to decide, checked (exit 2 naming a knob given
-- without its way); true when no runs are to be added here (UNTIL off, or
-- AB's pairs, which the harness adds inside the run).
local function not_runs(script, cfg)
  local with_ab = cfg.AB and cfg.AB ~= ""
  if cfg.UNTIL ~= "decided" or with_ab then
    for _, k in ipairs { "MAX_PAIRS", "MAX_MIN", "EQUIV" } do
      if cfg.given[k] and not (with_ab and cfg.UNTIL == "decided") then
        knobs.fail(script, ("%s=%s: only with AB=\"A knobs | B knobs\" UNTIL=decided"):format(k, tostring(cfg[k])))
      end
    end
  end
  if cfg.UNTIL == "decided" and with_ab then -- pairs inside this run: the harness adds them (lib/abuntil.lua)
    for _, k in ipairs { "BASELINE", "MAX_RUNS" } do
      if cfg.given[k] then
        knobs.fail(script, ("%s=%s with AB: an AB run compares its own pairs, not runs against a baseline")
          :format(k, tostring(cfg[k])))
      end
    end
    if cfg.PUBLISH then knobs.fail(script, "UNTIL=decided PUBLISH=1: runs until decided are never published") end
    return true
  end
  if cfg.UNTIL ~= "decided" then
    for _, k in ipairs { "BASELINE", "MAX_RUNS" } do
      if cfg.given[k] then knobs.fail(script, ("%s=%s: only with UNTIL=decided"):format(k, tostring(cfg[k]))) end
    end
    if cfg.given.ROWS and (not cfg.AB or cfg.AB == "") then
      knobs.fail(script, "ROWS=: only with UNTIL=decided or AB (the rows a comparison decides on)")
    end
    return true
  end
end

-- Runs the script until decided, then exits; returns when UNTIL is off.
-- args: the script's own arguments (UNTIL, BASELINE and MAX_RUNS are left
-- out of each run's, and out of its environment).
function sequential.drive(script, cfg, args)
  if not_runs(script, cfg) then return end
  if cfg.PUBLISH then knobs.fail(script, "UNTIL=decided PUBLISH=1: runs until decided are never published") end
  local old = baseline(script, cfg)
  local cal = calibration(script, old)
  local ftrun = os.getenv("FTRUN") or arg[-1]
  if ftrun:sub(1, 1) ~= "/" and ftrun:find("/", 1, true) then ftrun = os.getenv("PWD") .. "/" .. ftrun end
  local words = {}
  for _, a in ipairs(args) do
    local name = a:match("^([%u_][%u%d_]*)=")
    if name ~= "UNTIL" and name ~= "BASELINE" and name ~= "MAX_RUNS" and name ~= "RESULTS" and name ~= "ROWS" then
      words[#words + 1] = quote(a)
    end
  end
  local dir = cfg.given.RESULTS and cfg.RESULTS
    or ("%s/results/runs/%s-until"):format(ft.project_dir, os.date("!%Y%m%dT%H%M%SZ"))
  local say = function(fmt, ...)
    if not cfg.QUIET then io.stderr:write(script, ": ", fmt:format(...), "\n") end
  end
  say("until decided against %d baseline run(s) in %s, at most %d runs, %s", #old, cfg.BASELINE, cfg.MAX_RUNS,
    cal and "judged with the calibration " .. cal.path or "no calibration of the baseline (permutation test)")
  local decision = sequential.decision(cfg, old[1].decision_rows)
  local new, spent = {}, 0
  local rows, decided, judged
  for i = 1, cfg.MAX_RUNS do
    local out = ("%s/run-%02d"):format(dir, i)
    local cmd = ("env -u UNTIL -u BASELINE -u MAX_RUNS -u ROWS %s %s %s RESULTS=%s >%s.log 2>&1"):format(quote(ftrun),
      quote(script), table.concat(words, " "), quote(out), quote(out))
    assert(ft.mkdir(dir))
    local ok, _, code = os.execute(cmd)
    if not ok then
      io.stderr:write(("%s: run %d failed (exit %s); its output is in %s.log\n"):format(script, i, tostring(code),
        out))
      os.exit(code == 130 and 130 or 1, true)
    end
    local paths = results_in(out)
    local doc, why = nil, "no results JSON"
    if paths[1] then doc, why = load(paths[1]) end
    if not doc then
      io.stderr:write(("%s: run %d: %s\n"):format(script, i, why))
      os.exit(1, true)
    end
    new[#new + 1] = doc
    local off = cal and calibrations.mismatch(cal, doc)
    if off then -- a calibration applies only when every run of both sides matches it
      say("the calibration %s does not apply to run %d (%s): permutation tests from here on", cal.path, i, off)
      cal = nil
    end
    local alpha = sequential.spend(sequential.ALPHA, i, cfg.MAX_RUNS)
    spent = spent + alpha
    rows, decided, judged = look(old, new, cal, alpha, nil, cfg.MAX_RUNS, decision)
    say("run %d of at most %d: %d row(s) different, %d the same, %d undecided (this look at alpha %.4g)", i,
      cfg.MAX_RUNS, judged.called, judged.same, #rows - judged.called - judged.same, alpha)
    if decided then break end
  end
  local verdict = function(row)
    return (row.called or row.eq or row.same) and row.verdict or "undecided: " .. row.verdict
  end
  local outcome = ("%s against %d baseline run(s) (%s): %s after %d run(s)%s; each look at its share of ALPHA = %g "
    .. "(alpha spending, O'Brien-Fleming shape over %d looks; %.4g spent)."):format(script, #old, cfg.BASELINE,
    decided and "decided" or "undecided at MAX_RUNS", #new,
    decided and (" (every %s different, the same, or beyond what MAX_RUNS runs could decide)"):format(
      decision and "decision row" or "timed row") or "",
    sequential.ALPHA, cfg.MAX_RUNS, spent)
  if decision then
    outcome = outcome .. (" Decision row(s): %s (ROWS= picks others); the other rows are reported as they stand.")
      :format(table.concat(stats.map(decision, function(n) return n[1] .. " " .. n[2] end), ", "))
  end
  outcome = outcome .. " " .. sequential.age(old)
  if cfg.FORMAT ~= "md" then -- stdout holds the table alone, for another program; the outcome goes to stderr
    local recs = {}
    for _, row in ipairs(rows) do
      local pct = function(x) return x and 100 * (x - 1) end
      recs[#recs + 1] = { case = row.case, column = row.column, unit = row.unit, change_pct = pct(row.ratio),
        lo_pct = pct(row.ratio and row.lo), hi_pct = pct(row.ratio and row.hi), p = row.p, q = row.q,
        verdict = verdict(row) }
    end
    io.stdout:write(display.table(sequential.FIELDS, recs, cfg.FORMAT))
    io.stderr:write(outcome, "\n", ("the runs are in %s\n"):format(dir))
    os.exit(0, true)
  end
  print(outcome)
  print("")
  print("| case | column | unit | change % [interval] | p | q | verdict |")
  print("|---|---|---|---|---|---|---|")
  for _, row in ipairs(rows) do
    local change = row.ratio and ("%+.1f [%+.1f, %+.1f]"):format(100 * (row.ratio - 1), 100 * (row.lo - 1),
      100 * (row.hi - 1)) or "–"
    print(("| %s | %s | %s | %s | %s | %s | %s |"):format(row.case, row.column, row.unit, change,
      row.p and ("%.3g"):format(row.p) or "–", row.q and ("%.3g"):format(row.q) or "–", verdict(row)))
  end
  local legend = verdicts.legend(rows)
  if legend then print(legend) end
  print("")
  print(("the runs are in %s"):format(dir))
  os.exit(0, true)
end

return sequential
