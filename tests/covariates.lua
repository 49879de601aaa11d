-- The machine's state as covariates (lib/covariates.lua): every repetition records the
-- canary; a fit left-one-out finds a planted relation and none where there is none;
-- calibrate.lua stores what each covariate explains; compare.lua shows a row adjusted for
-- its covariate beside the raw one, and says why when a run cannot be adjusted.
local t = require "tap"
local json = require "json"
local covariates = require "covariates"
local calibrations = require "calibrations"
local q = t.quote

-- A seeded generator: the fits below see the same numbers in every run of the test.
local seed = 12345
local function uniform()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
end

-- runs whose only covariate is the canary
local function canary_runs(xs)
  local out = {}
  for i, x in ipairs(xs) do out[i] = { canary = x } end
  return out
end

do -- the fit
  local xs, ys, zs = {}, {}, {}
  for i = 1, 12 do
    xs[i] = math.log(10 + 3 * uniform())
    ys[i] = 2 + 1.5 * xs[i] + 0.002 * (uniform() - 0.5) -- the row follows the covariate
    zs[i] = 2 + 0.05 * (uniform() - 0.5)                -- this one does not
  end
  local f = covariates.fit(ys, xs)
  t.ok(f and f.explained > 0.9, "a planted relation: the left-out fit explains most of the spread",
    f and tostring(f.explained))
  t.ok(f and math.abs(f.slope - 1.5) < 0.05, "and finds its slope", f and tostring(f.slope))
  t.is(f and f.df, 10, "the fit's spread has n - 2 degrees of freedom")
  local g = covariates.fit(zs, xs)
  t.ok(g and g.explained < covariates.MIN_EXPLAINED, "no relation: below the share a row is adjusted at",
    g and tostring(g.explained))
  local c = covariates.calibrate_row(zs, canary_runs(xs), 0.02)
  t.is(c.adjust, nil, "so calibrate_row adjusts nothing")
  local five_y, five_x = { table.unpack(ys, 1, 5) }, { table.unpack(xs, 1, 5) }
  t.is(covariates.calibrate_row(five_y, canary_runs(five_x), 1).adjust, nil,
    ("five runs are too few to adjust for even a planted relation (at least %d)"):format(covariates.MIN_ADJUST_RUNS))
  t.ok(covariates.calibrate_row(ys, canary_runs(xs), 1).adjust, "twelve are enough")
  t.ok(f and f.slope_se > 0 and f.x_min <= f.x_mean and f.x_mean <= f.x_max, "the fit keeps its slope's error and range")
  local flat = {}
  for i = 1, 12 do flat[i] = 0 end
  local none, why = covariates.fit(ys, flat)
  t.is(none, nil, "a covariate that does not vary is no fit")
  t.like(why, "does not vary", "and says so")
  local few, why_few = covariates.fit({ 1, 2, 3, 4 }, { 1, 2, 3, 5 })
  t.is(few, nil, "four runs are too few")
  t.like(why_few, "4 runs, a fit needs 5", "saying how many a fit needs")
end

-- the covariates of a run from its JSON
local r = covariates.of_run { clock_ghz = 2.5, reps = { { records = {
  { noise = { canary_ns = 20, steal_pct = 1 }, pass1_reported_kib = 4, pass2_reported_kib = 2 },
  { noise = { canary_ns = 40, steal_pct = 3 }, pass1_reported_kib = 0, pass2_reported_kib = 0 },
  { noise = { canary_ns = 30, steal_pct = 2 }, pass1_reported_kib = 8, pass2_reported_kib = 0 } } } } }
t.ok(math.abs(r.canary - math.log(30)) < 1e-12, "of_run: the canary's median, as a log")
t.is(r.steal, 2, "the steal's median")
t.is(r.reported, 6, "the KiB reported per record (all its passes), its median")
t.is(r.clock, 2.5, "the run's clock estimate")
t.is(covariates.of_run({}).canary, nil, "a run from before the canary has none")

local dir = t.tmpdir()
local out, code = t.ftrun_run("cycles.lua QUICK=1 MIB=8 REPS=3 CYCLES=A RESULTS=" .. q(dir))
t.is(code, 0, "a small cycles run", out)
local text = t.read(dir .. "/quick-results.json")
local doc = json.decode(text or "null") or { reps = {}, rows = {} }
local all, with = 0, 0
for _, case in ipairs(doc.reps) do
  for _, rec in ipairs(case.records) do
    all = all + 1
    if type(rec.noise.canary_ns) == "number" and rec.noise.canary_ns > 0 then with = with + 1 end
  end
end
t.ok(all > 0 and with == all, ("every record has the canary's ns per page (%d of %d)"):format(with, all))

-- compare.lua: runs whose pass 1 drifts with their canary, a side 10 % slower. The drift is
-- far beyond the calibrated raw spread's power to see 10 % with two runs a side; adjusted,
-- the change is the planted one.
local function fixture(name, drift, scale, canary)
  local d = json.decode(text)
  for _, case in ipairs(d.reps) do
    for _, rec in ipairs(case.records) do rec.noise.canary_ns = canary ~= false and 10 * drift or nil end
  end
  for _, row in ipairs(d.rows) do
    if row.case == "A" and row.column == "pass1" then
      for i, v in ipairs(row.values) do row.values[i] = v * drift * scale end
    end
  end
  local path = dir .. "/" .. name .. "-results.json"
  t.write(path, json.encode(d))
  return q(path)
end
local cal = { kind = calibrations.KIND, script = doc.script, fingerprint = calibrations.fingerprint(doc),
  knobs = calibrations.knobs(doc), runs = 10, date = "test", rows = {} }
for _, row in ipairs(doc.rows) do
  local c = { case = row.case, column = row.column, unit = row.unit, between_run_sd_log = 0.2, df = 9 }
  if row.case == "A" and row.column == "pass1" then
    c.adjust = { covariate = "canary", slope = 1, slope_se = 0, x_mean = math.log(10), x_min = math.log(7),
      x_max = math.log(14), sd_log = 0.005, df = 8, explained = 0.95 }
  end
  cal.rows[#cal.rows + 1] = c
end
local cal_path = dir .. "/cal.json"
t.write(cal_path, json.encode(cal))
local sides = ("%s %s -- %s %s CALIBRATION=%s"):format(fixture("o1", 0.8, 1), fixture("o2", 1.3, 1),
  fixture("n1", 1.25, 1.1), fixture("n2", 0.85, 1.1), q(cal_path))
out, code = t.ftrun_run("compare.lua " .. sides)
t.is(code, 0, "compare.lua with a calibration that adjusts pass 1", out)
t.like(out, "Adjusted for the machine's state", "an adjusted block under the table")
local line = out:match("\n| A | pass1 | canary[^\n]*") or ""
t.like(line, "canary (explains 95 %) | +1.1 % | 20.0 → 0.5 |",
  "naming the covariate, its share, the sides' difference in it and both spreads", out)
t.like(line, "| +10.0 [", "the adjusted change is the planted one", out)
t.like(line, "+10.0 % (worse)", "and is called", out)
local raw = out:match("\n| A | pass1 | ns/page[^\n]*") or ""
t.ok(raw ~= "" and not raw:find("worse", 1, true), "while the raw row, under the drift, is not", raw)
out, code = t.ftrun_run("compare.lua " .. ("%s %s -- %s %s CALIBRATION=%s"):format(fixture("o3", 0.8, 1, false),
  fixture("o4", 1.3, 1), fixture("n3", 1.25, 1.1), fixture("n4", 0.85, 1.1), q(cal_path)))
t.is(code, 0, "a run without the canary", out)
t.like(out, "o3-results.json does not record the canary's ns per page",
  "is named, and nothing is adjusted")
-- a run whose canary lies far outside the calibration's runs: no extrapolation
out = t.ftrun_run("compare.lua " .. ("%s %s -- %s %s CALIBRATION=%s"):format(fixture("o5", 0.8, 1),
  fixture("o6", 1.3, 1), fixture("n5", 5, 1.1), fixture("n6", 0.85, 1.1), q(cal_path)))
t.like(out, "would extrapolate", "a covariate beyond the calibration's range is not adjusted for", out)
-- the slope's own uncertainty widens the adjusted test when the sides differ in the covariate
local wide = json.decode(json.encode(cal))
for _, c in ipairs(wide.rows) do if c.adjust then c.adjust.slope_se = 0.5 end end
t.write(dir .. "/cal-wide.json", json.encode(wide))
out = t.ftrun_run("compare.lua " .. ("%s %s -- %s %s CALIBRATION=%s"):format(fixture("o7", 1, 1), fixture("o8", 1.02, 1),
  fixture("n7", 1.3, 1.1), fixture("n8", 1.32, 1.1), q(dir .. "/cal-wide.json")))
local wide_line = out:match("\n| A | pass1 | canary[^\n]*") or ""
t.like(wide_line, "| +29.7 % | 20.0 → ", "the sides' canary differs by 30 % (geometric means)", out)
t.ok(not wide_line:find("20.0 → 0.5 |", 1, true), "so the fit's spread is widened by the slope's error", wide_line)
-- a damaged adjustment in a calibration file: exit 2, naming the row and the field
for _, bad in ipairs { { "slope", "x" }, { "sd_log", -1 }, { "df", 0 }, { "covariate", "bogus" }, { "x_mean", nil } } do
  local c = json.decode(json.encode(cal))
  for _, row in ipairs(c.rows) do if row.adjust then row.adjust[bad[1]] = bad[2] end end
  t.write(dir .. "/cal-bad.json", json.encode(c))
  out, code = t.ftrun_run("compare.lua " .. sides:gsub("CALIBRATION=%S+", "CALIBRATION=" .. q(dir .. "/cal-bad.json")))
  t.is(code, 2, ("adjust.%s = %s: exit 2"):format(bad[1], tostring(bad[2])), out)
  t.like(out, "(A pass1): adjust.", "naming the row and the field")
end

-- calibrate.lua stores what each covariate explains for every row.
local caldir = dir .. "/calibrations"
os.execute("mkdir -p " .. q(caldir))
out, code = t.ftrun_run("calibrate.lua RUNS=5 SIMS=20 -- cycles.lua CYCLES=A MIB=4 REPS=3",
  "CALIBRATIONS=" .. q(caldir))
t.is(code, 0, "calibrate.lua with five runs", out)
t.like(out, "| row | canary | reported | steal | clock | adjusted for | run median sd % raw → adjusted |", "its table of covariates")
local name = (t.run("ls " .. q(caldir)) or ""):match("[^\n]+")
local stored = json.decode(name and t.read(caldir .. "/" .. name) or "null") or { rows = {} }
local every = #stored.rows > 0
for _, row in ipairs(stored.rows) do
  if type(row.explained) ~= "table" or row.explained.canary == nil or row.explained.steal == nil then every = false end
end
t.ok(every, "every stored row says what each covariate explains, or why not")

os.execute("rm -rf " .. q(dir))
t.done()
