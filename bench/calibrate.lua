-- make calibrate: how far runs of one configuration differ by chance on
-- this machine, and what that means for comparisons (Kalibera and Jones,
-- "Rigorous Benchmarking in Reasonable Time", ISMM 2013). It runs one short
-- configuration RUNS times back to back (A/A: nothing changes), splits each
-- row's variance into its levels (between runs, between repetitions of a
-- run), and from the same runs measures:
--   - the share of rows a comparison calls different when nothing changed:
--     the U test on one run a side, the calibrated test on one run a side
--     (its spread taken from the other runs), 4 runs a side (permutation
--     test and Benjamini-Hochberg), and an AB run whose sides are the same;
--   - the power: +10 % planted into one side of 4 runs a side, and an AB run
--     of THP=never | THP=16K;
--   - the smallest change of pass 1 each design detects with 80 % power at
--     ALPHA = 0.05, and the wall time each costs.
-- It writes the calibration file compare.lua uses for one run a side
-- (calibration-<script>.json: the machine, the knobs, each row's
-- run-to-run spread) and the table (calibration.md) in RESULTS.
--   ./ftrun bench/calibrate.lua [RUNS=20] [CONFIG="CYCLES=A MIB=256 REPS=15"] [QUICK=1] [RESULTS=dir]
local calibrations = require "calibrations"
local calreport = require "calreport"
local covariates = require "covariates"
local ft = require "ft"
local inference = require "inference"
local json = require "json"
local knobs = require "knobs"
local provenance = require "provenance"
local stats = require "stats"
local units = require "units"
local verdicts = require "verdicts"

local NAME = "calibrate.lua"
local SPEC = {
  { name = "RUNS", kind = "count", default = 20, desc = "A/A runs of the configuration (at least 6)" },
  { name = "CONFIG", kind = "path", default = "CYCLES=A MIB=256 REPS=15",
    desc = "cycles.lua's knobs for every run (the calibration applies to runs with these knobs)" },
  { name = "QUICK", kind = "flag", default = false,
    desc = "1: 6 runs of CYCLES=A MIB=16 REPS=8, for the tests (figures too rough to use)" },
  { name = "AB_CHECK", kind = "flag", default = true,
    desc = "0: skip the two AB runs (same sides; THP=never | THP=16K)" },
  { name = "RESULTS", kind = "path", default = "results/ beside ftrun",
    desc = "directory for calibration-cycles.json and calibration.md" },
  { name = "KEEP", kind = "flag", default = false, desc = "1: keep the runs' directories" },
  { name = "REUSE", kind = "path", default = "none",
    desc = "a directory KEEP=1 kept: its runs are read instead of run again (the figures recomputed)" },
}
local cfg = knobs.setup(NAME, "A/A runs of one configuration: the variance of each level, false-positive rates, "
  .. "power, and\nthe calibration file compare.lua uses with one run a side.", SPEC,
  { RUNS = 6, CONFIG = "CYCLES=A MIB=16 REPS=8" }, { ... }, "bench/calibrate.lua [KNOB=value ...]")
if cfg.RUNS < 6 then knobs.fail(NAME, ("RUNS=%d: expected at least 6 (the calibrated test leaves two runs out "
  .. "and needs at least 4 to estimate the spread from)"):format(cfg.RUNS)) end
for word in cfg.CONFIG:gmatch("%S+") do
  if not word:match("^[%u_][%u%d_]*=[%w.,_-]*$") or word:match("^RESULTS=") or word:match("^AB=") then
    knobs.fail(NAME, ("CONFIG=%s: '%s' is not a plain KNOB=value of cycles.lua (RESULTS and AB are set here)")
      :format(cfg.CONFIG, word))
  end
end
local out_dir = cfg.given.RESULTS and cfg.RESULTS or ft.project_dir .. "/results"
local FTRUN = os.getenv("FTRUN") or arg[-1]
if FTRUN:sub(1, 1) ~= "/" then FTRUN = os.getenv("PWD") .. "/" .. FTRUN end
local ALPHA, POWER = 0.05, 0.80

local quote = require("shell").quote
local function say(fmt, ...) io.stderr:write(NAME, ": ", fmt:format(...), "\n") end

-- made by mktemp in TMPDIR (or /tmp), so that a test can look for it in a directory of its own
local work
if cfg.given.REUSE then
  work, cfg.KEEP = cfg.REUSE, true
  assert(os.execute("mkdir -p " .. quote(work)))
else
  local why
  work, why = require("shell").mkdtemp("ftrun-calibrate")
  if not work then knobs.fail(NAME, why) end
end
-- closed however the chunk ends: an interrupt (exit 130) or an error leaves no work directory
local _ <close> = setmetatable({}, { __close = function()
  if not cfg.KEEP then os.execute("rm -rf " .. quote(work)) end
end })

-- One run of cycles.lua; returns its JSON and its wall time in s.
local function run(label, extra)
  local dir = work .. "/" .. label
  local t0 = ft.now_ns()
  local cmd = ("%s cycles.lua %s %s RESULTS=%s >%s/stdout 2>&1"):format(quote(FTRUN), cfg.CONFIG, extra or "",
    quote(dir), quote(work))
  local ok = true
  if not cfg.given.REUSE then ok = os.execute("mkdir -p " .. quote(dir) .. " && " .. cmd) end
  local wall = (ft.now_ns() - t0) / 1e9
  local found = require("shell").list(dir, "results%.json$")[1]
  local path = found and dir .. "/" .. found
  local f = path and io.open(path)
  local doc = f and json.decode(f:read("a"))
  if f then f:close() end
  if cfg.given.REUSE and type(doc) == "table" then -- the wall time the run took, from its own record
    for _, v in ipairs(doc.values or {}) do
      if v.value == "own_time" and v.wall_ms then wall = v.wall_ms / 1000 end
    end
  end
  if not ok or type(doc) ~= "table" then
    local log = io.open(work .. "/stdout")
    local text = log and log:read("a") or ""
    if log then log:close() end
    return nil, ("run %s failed: %s"):format(label, text:sub(-600))
  end
  return doc, wall
end

local function stop(msg)
  io.stderr:write(NAME, ": ", msg, "\n")
  if not cfg.KEEP then os.execute("rm -rf " .. quote(work)) end
  os.exit(1, true)
end

-- Rows measured in time or rate (the ones a comparison judges).
local TIMED = setmetatable({}, { __index = function(_, unit) return units.timed(unit) end })

local function rows_of(doc)
  local out = {}
  for _, r in ipairs(doc.rows) do
    if TIMED[r.unit] and r.side ~= "B" then
      local v = {}
      for _, x in ipairs(r.values) do if type(x) == "number" and x > 0 then v[#v + 1] = x end end
      if #v >= 2 then out[#out + 1] = { key = r.case .. " " .. r.column, case = r.case, column = r.column,
        unit = r.unit, values = v } end
    end
  end
  return out
end

-- 1. The A/A runs.
local started = ft.now_ns()
local docs, walls = {}, {}
for i = 1, cfg.RUNS do
  local doc, wall = run(("aa-%02d"):format(i))
  if not doc then stop(wall) end
  docs[i], walls[i] = doc, wall
  say("A/A run %d/%d: %.1f s", i, cfg.RUNS, wall)
end
local run_wall = stats.median(walls)

-- Each row: its runs' values (logs), in run order.
local keys, by_key = {}, {}
for i, doc in ipairs(docs) do
  for _, r in ipairs(rows_of(doc)) do
    local row = by_key[r.key]
    if not row then
      row = { key = r.key, case = r.case, column = r.column, unit = r.unit, runs = {} }
      by_key[r.key] = row
      keys[#keys + 1] = r.key
    end
    row.runs[i] = r.values
  end
end
local rows = {}
for _, k in ipairs(keys) do
  local row = by_key[k]
  local complete = true
  for i = 1, cfg.RUNS do if not row.runs[i] then complete = false end end
  if complete then rows[#rows + 1] = row end
end
if #rows == 0 then stop("no timed row in every run") end

local function logs(values) return stats.map(values, math.log) end
local function log_median(values) return math.log(stats.median(values)) end
local function sd(xs)
  local m, s = stats.mean(xs), 0
  for _, x in ipairs(xs) do s = s + (x - m) ^ 2 end
  return math.sqrt(s / (#xs - 1))
end

for _, row in ipairs(rows) do
  local log_runs = {}
  for i, v in ipairs(row.runs) do log_runs[i] = logs(v) end
  row.var_between, row.var_within = inference.variance_components(log_runs)
  row.medians = stats.map(row.runs, log_median)
  row.sd_medians = sd(row.medians) -- what one run's median varies by from run to run (logs)
end

-- How much of each row's run-to-run spread the machine's state explains (lib/covariates.lua).
local runs_cov = stats.map(docs, covariates.of_run)
for _, row in ipairs(rows) do
  local c = covariates.calibrate_row(row.medians, runs_cov, row.sd_medians)
  row.explained, row.adjust = c.explained, c.adjust
end

-- 2. False positives, one run a side: every pair of runs, every timed row.
local pairs_n, u_calls, cal_calls, cal_called_bh, tests_n = 0, 0, 0, 0, 0
for i = 1, cfg.RUNS do
  for j = i + 1, cfg.RUNS do
    pairs_n = pairs_n + 1
    local ps = {}
    for _, row in ipairs(rows) do
      tests_n = tests_n + 1
      if stats.mann_whitney(row.runs[i], row.runs[j]) < ALPHA then u_calls = u_calls + 1 end
      -- the calibrated test, its spread from the other runs only
      local others = {}
      for k = 1, cfg.RUNS do if k ~= i and k ~= j then others[#others + 1] = row.medians[k] end end
      local s, df = sd(others), #others - 1
      local d = row.medians[j] - row.medians[i]
      local p = s > 0 and 2 * inference.t_upper_tail(math.abs(d) / (s * math.sqrt(2)), df) or (d == 0 and 1 or 0)
      if p < ALPHA then cal_calls = cal_calls + 1 end
      ps[#ps + 1] = p
    end
    for _, q in ipairs(inference.bh(ps)) do if q <= ALPHA then cal_called_bh = cal_called_bh + 1 end end
  end
end

-- 3. k runs a side: random splits of distinct runs, the permutation test
-- over run medians and BH over the rows; the same splits with +10 %
-- planted into the new side's values (all timed rows) for the power.
local K = math.min(4, cfg.RUNS // 2)
local SPLITS = 40

-- The same splits judged as compare.lua judges them with a calibration made of the other runs
-- (RUNS - 2K of them): pass 1 alone, raw and adjusted for the covariate those runs choose
-- (lib/covariates.lua), A/A and with +10 % planted into the new side.
local cov = { tries = 0, chosen = {}, raw_aa = 0, raw_plus10 = 0, adj_aa = 0, adj_plus10 = 0 }
local function adjusted_split(row, idx)
  local others, ys, xs_cov = {}, {}, {}
  for k = 2 * K + 1, cfg.RUNS do others[#others + 1] = idx[k] end
  for i, r in ipairs(others) do ys[i], xs_cov[i] = row.medians[r], runs_cov[r] end
  local raw_cal = { between_run_sd_log = sd(ys), df = #ys - 1 }
  local fit = covariates.calibrate_row(ys, xs_cov, raw_cal.between_run_sd_log).adjust
  local function side(from, factor, adjust)
    local out = {}
    for k = 1, K do
      local r = idx[from + k]
      local x = adjust and runs_cov[r][adjust.covariate]
      local scale = factor * (x and math.exp(-adjust.slope * (x - adjust.x_mean)) or 1)
      out[k] = stats.map(row.runs[r], function(v) return v * scale end)
    end
    return out
  end
  local function called(adjust, factor)
    local cal = adjust and { between_run_sd_log = adjust.sd_log, df = adjust.df } or raw_cal
    local v = verdicts.runs(side(0, 1, adjust), side(K, factor, adjust), cal, { ALPHA = ALPHA, SEED = 1 })
    return v.p and v.p < ALPHA and 1 or 0
  end
  cov.tries = cov.tries + 1
  cov.raw_aa, cov.raw_plus10 = cov.raw_aa + called(nil, 1), cov.raw_plus10 + called(nil, 1.10)
  local adjust = fit
  if adjust then cov.chosen[adjust.covariate] = (cov.chosen[adjust.covariate] or 0) + 1 end
  cov.adj_aa, cov.adj_plus10 = cov.adj_aa + called(adjust, 1), cov.adj_plus10 + called(adjust, 1.10)
end
local rng = inference.rng(20261203)
local split_calls, split_raw, split_tests = 0, 0, 0
local planted_hits, planted_tries = 0, 0
for _ = 1, SPLITS do
  local idx = {}
  for i = 1, cfg.RUNS do idx[i] = i end
  for i = cfg.RUNS, 2, -1 do
    local j = rng(i)
    idx[i], idx[j] = idx[j], idx[i]
  end
  local ps, ps_planted, pass1_at = {}, {}, nil
  for r, row in ipairs(rows) do
    local old, new = {}, {}
    for k = 1, K do old[k], new[k] = row.medians[idx[k]], row.medians[idx[K + k]] end
    ps[r] = inference.permutation(old, new)
    if ps[r] < ALPHA then split_raw = split_raw + 1 end
    local planted = {}
    local factor = row.unit == "GB/s" and 1 / 1.10 or 1.10 -- 10 % more time is 10 % less bandwidth
    for k = 1, K do planted[k] = new[k] + math.log(factor) end
    ps_planted[r] = inference.permutation(old, planted)
    if row.case == "A" and row.column == "pass1" then pass1_at = r end
  end
  split_tests = split_tests + #rows
  for _, q in ipairs(inference.bh(ps)) do if q <= ALPHA then split_calls = split_calls + 1 end end
  if pass1_at then
    planted_tries = planted_tries + 1
    -- called, and slower: the right sign
    if inference.bh(ps_planted)[pass1_at] <= ALPHA then planted_hits = planted_hits + 1 end
    if cfg.RUNS - 2 * K >= covariates.MIN_RUNS then adjusted_split(rows[pass1_at], idx) end
  end
end

-- 4. AB runs: the same knobs on both sides (A/A), and THP=never | THP=16K.
local ab_aa, ab_thp, ab_wall
local function paired(doc)
  local a, b = {}, {}
  for _, r in ipairs(doc.rows) do
    if TIMED[r.unit] then
      local key = (r.ab_case or r.case) .. " " .. r.column
      if r.side == "A" then a[key] = r elseif r.side == "B" then b[key] = r end
    end
  end
  local out = {}
  for key, ra in pairs(a) do
    local rb = b[key]
    if rb then
      local d = {}
      for i = 1, #ra.values do
        local x, y = ra.values[i], rb.values[i]
        if type(x) == "number" and type(y) == "number" and x > 0 and y > 0 then d[#d + 1] = math.log(y / x) end
      end
      if #d >= 2 then out[#out + 1] = { key = key, d = d, p = inference.wilcoxon(d) } end
    end
  end
  table.sort(out, function(x, y) return x.key < y.key end)
  local q = inference.bh(stats.map(out, "p"))
  for i, r in ipairs(out) do r.q = q[i] end
  return out
end
if cfg.AB_CHECK then
  local doc, wall = run("ab-aa", "'AB=SLOW_NS=200 | SLOW_NS=200'")
  if not doc then stop(wall) end
  ab_aa, ab_wall = paired(doc), wall
  say("AB A/A run: %.1f s", wall)
  doc, wall = run("ab-thp", "'AB=THP=never | THP=16K'")
  if doc then
    ab_thp = paired(doc)
    say("AB THP=never | THP=16K run: %.1f s", wall)
  else
    ab_thp = { refused = wall }
  end
end

-- 5. Dimensioning (Kalibera and Jones): the smallest change of pass 1 each
-- design detects with 80 % power at ALPHA, from the spreads measured.
local pass1 = by_key["A pass1"]
local designs = {}
if pass1 then
  local d = ab_aa and (function()
    for _, r in ipairs(ab_aa) do if r.key == "A pass1" then return r.d end end
  end)()
  designs = calreport.designs(pass1.sd_medians, cfg.RUNS, run_wall, ALPHA, POWER, d and { sd = sd(d),
    wall = ab_wall, reps = tonumber(cfg.CONFIG:match("REPS=(%d+)")) or 15 })
end

-- The report's figures, kept in the calibration file (lib/calreport.lua renders them).
local m = docs[1].machine
local made_by = provenance.collect()
local f = { script = docs[1].script, runs = cfg.RUNS, config = cfg.CONFIG, cpu = m.cpu, cpus = m.cpus,
  kernel = m.kernel, date = os.date("!%Y-%m-%d %H:%M"), minutes = (ft.now_ns() - started) / 60e9, alpha = ALPHA,
  power = POWER, rows = {}, pairs = pairs_n, tests = tests_n, u_calls = u_calls, cal_calls = cal_calls,
  cal_called_bh = cal_called_bh, k = K, splits = SPLITS, split_raw = split_raw, split_tests = split_tests,
  split_calls = split_calls, planted_hits = planted_hits, planted_tries = planted_tries,
  covariates = cov.tries > 0 and cov or nil, designs = {}, ab_for_3 = designs.ab_for_3,
  provenance_line = provenance.describe(made_by) }
for _, row in ipairs(rows) do
  local all = {}
  for _, v in ipairs(row.runs) do table.move(v, 1, #v, #all + 1, all) end
  f.rows[#f.rows + 1] = { key = row.key, median = stats.median(all), unit = row.unit,
    between = math.sqrt(row.var_between), within = math.sqrt(row.var_within), sd_medians = row.sd_medians,
    explained = row.explained, adjust = row.adjust }
end
if ab_aa then
  f.ab_aa = { n = #ab_aa, raw = 0, bh = 0 }
  for _, r in ipairs(ab_aa) do
    if r.p < ALPHA then f.ab_aa.raw = f.ab_aa.raw + 1 end
    if r.q <= ALPHA then f.ab_aa.bh = f.ab_aa.bh + 1 end
  end
end
if ab_thp and ab_thp.refused then
  f.ab_thp = { refused = ab_thp.refused }
elseif ab_thp then
  for _, r in ipairs(ab_thp) do
    if r.key == "A pass1" then f.ab_thp = { ratio = math.exp(stats.median(r.d)), n = #r.d, p = r.p, q = r.q } end
  end
end
for i, d in ipairs(designs) do f.designs[i] = { what = d.what, mde = d.mde, wall = d.wall } end
-- How busy the machine was: the runs' own marks of repetitions that another
-- process, steal time or an interrupt storm made noisy (results.lua's "noisy").
f.noisy, f.marked_of = 0, 0
for _, doc in ipairs(docs) do
  for _, v in ipairs(doc.values or {}) do
    if v.value == "noisy" and type(v.x) == "number" and type(v.of) == "number" then
      f.noisy, f.marked_of = f.noisy + v.x, f.marked_of + v.of
    end
  end
end
local md = calreport.render(f)
io.stdout:write(md)

-- The calibration file compare.lua reads.
local cal = { kind = calibrations.KIND, script = docs[1].script, machine = docs[1].machine,
  fingerprint = calibrations.fingerprint(docs[1]), knobs = calibrations.knobs(docs[1]),
  config = cfg.CONFIG, runs = cfg.RUNS, date = os.date("!%Y-%m-%dT%H:%M:%SZ"), run_wall_s = run_wall, rows = {},
  provenance = made_by, report = f }
for _, row in ipairs(rows) do
  cal.rows[#cal.rows + 1] = { case = row.case, column = row.column, unit = row.unit,
    between_run_sd_log = row.sd_medians, df = cfg.RUNS - 1, var_between_log = row.var_between,
    var_within_log = row.var_within, explained = row.explained, adjust = row.adjust }
end
local script_name = docs[1].script:gsub("%.lua$", "")
os.execute("mkdir -p " .. require("shell").path(out_dir))
local ok, err = ft.write_files { { out_dir .. "/calibration-" .. script_name .. ".json", json.encode(cal) .. "\n" },
  { out_dir .. "/calibration.md", md } }
if not cfg.KEEP then os.execute("rm -rf " .. quote(work)) else say("runs kept in %s", work) end
if not ok then stop(("cannot write the calibration in %s: %s"):format(out_dir, tostring(err))) end
say("wrote %s/calibration-%s.json and %s/calibration.md", out_dir, script_name, out_dir)
