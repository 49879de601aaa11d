-- The machine's state beside each run, and how much of the run-to-run spread it explains.
-- Every repetition records a canary (measure.canary: stores into pages already present, meant
-- to be untouched by a kernel change, an assumption compare.lua shows the sides' difference in
-- the canary to check), the steal and the KiB page reporting handed to the host; each run
-- records its clock estimate. calibrate.lua fits each timed row's run medians (logs) on each of
-- these over its A/A runs and keeps a covariate only where leaving each run out and predicting
-- it from the others' fit lowers the spread (predicted residual sum of squares, against the
-- mean of the others); compare.lua then states the row adjusted for it beside the raw row.
local stats = require "stats"

local covariates = {}

covariates.NAMES = { "canary", "reported", "steal", "clock" }
covariates.ABOUT = {
  canary = "the canary's ns per page (log)",
  reported = "KiB page reporting handed to the host per case and repetition",
  steal = "the host's steal, % of each case's time",
  clock = "the run's clock estimate, GHz",
}
-- The share of the spread the left-out fit must remove (1 - PRESS/PRESS of the mean) before
-- a row is adjusted: below it the fit's own error eats what it gains.
covariates.MIN_EXPLAINED = 0.2
covariates.MIN_RUNS = 5 -- a fit on every run but one needs 3 runs or more, and a slope to spare
-- Runs a calibration needs before a row is adjusted: with 5 runs and four covariates to choose
-- from, pure noise passes the rule for about a fifth of the rows; with 20, for a few percent.
covariates.MIN_ADJUST_RUNS = 10
-- How far outside the calibration's covariate range a run may lie, as a share of that range,
-- before its adjustment would be an extrapolation and is refused.
covariates.RANGE_SLACK = 0.25

local function positive(x) return type(x) == "number" and x > 0 and x < math.huge end
local function finite(x) return type(x) == "number" and x == x and x > -math.huge and x < math.huge end
covariates.finite = finite

-- One run's covariates from its results JSON: each the median over its records (nil where it
-- has none); the canary as a log, since the rows are compared as logs.
function covariates.of_run(doc)
  local canary, reported, steal = {}, {}, {}
  for _, case in ipairs(type(doc.reps) == "table" and doc.reps or {}) do
    for _, r in ipairs(type(case.records) == "table" and case.records or {}) do
      local noise = type(r.noise) == "table" and r.noise or {}
      if positive(noise.canary_ns) then canary[#canary + 1] = math.log(noise.canary_ns) end
      if finite(noise.steal_pct) then steal[#steal + 1] = noise.steal_pct end
      local kib, any = 0, false
      for k, v in pairs(r) do
        if type(k) == "string" and k:match("_reported_kib$") and finite(v) then kib, any = kib + v, true end
      end
      if any then reported[#reported + 1] = kib end
    end
  end
  local function median(v) return #v > 0 and stats.median(v) or nil end
  return { canary = median(canary), reported = median(reported), steal = median(steal),
    clock = positive(doc.clock_ghz) and doc.clock_ghz or nil }
end

-- y = a + b x by least squares; nil when x does not vary.
local function line(xs, ys)
  local mx, my = stats.mean(xs), stats.mean(ys)
  local sxx, sxy = 0, 0
  for i = 1, #xs do
    sxx, sxy = sxx + (xs[i] - mx) ^ 2, sxy + (xs[i] - mx) * (ys[i] - my)
  end
  if sxx <= 0 then return nil end
  local b = sxy / sxx
  return my - b * mx, b
end

-- ys: a row's log run medians; xs: a covariate per run. Returns nil (and why) when it cannot
-- be fitted, else {slope, slope_se, x_mean, x_min, x_max, explained, sd_log, df}: explained
-- is 1 - PRESS of the fit over PRESS of the others' mean, each run left out in turn; sd_log
-- the residual spread of the fit over every run, with n - 2 degrees of freedom, and slope_se
-- the slope's standard error.
function covariates.fit(ys, xs)
  local n = #ys
  if n < covariates.MIN_RUNS then return nil, ("%d runs, a fit needs %d"):format(n, covariates.MIN_RUNS) end
  local press_fit, press_mean = 0, 0
  for i = 1, n do
    local ox, oy = {}, {}
    for j = 1, n do
      if j ~= i then ox[#ox + 1], oy[#oy + 1] = xs[j], ys[j] end
    end
    local a, b = line(ox, oy)
    if not a then return nil, "it does not vary between the runs" end
    press_fit = press_fit + (ys[i] - (a + b * xs[i])) ^ 2
    press_mean = press_mean + (ys[i] - stats.mean(oy)) ^ 2
  end
  local a, b = line(xs, ys)
  if not a then return nil, "it does not vary between the runs" end
  local ss, mx, sxx = 0, stats.mean(xs), 0
  for i = 1, n do
    ss, sxx = ss + (ys[i] - (a + b * xs[i])) ^ 2, sxx + (xs[i] - mx) ^ 2
  end
  local sd = math.sqrt(ss / (n - 2))
  return { slope = b, slope_se = sd / math.sqrt(sxx), x_mean = mx, x_min = stats.min(xs), x_max = stats.max(xs),
    explained = press_mean > 0 and 1 - press_fit / press_mean or 0, sd_log = sd, df = n - 2 }
end

-- For one calibrated row: its log run medians ys, and runs_cov[i] = covariates.of_run(run i).
-- Returns {explained = {name = share or why not}, adjust = the best fit that passes (with its
-- covariate's name) or nil}.
function covariates.calibrate_row(ys, runs_cov, raw_sd)
  local out = { explained = {} }
  for _, name in ipairs(covariates.NAMES) do
    local xs, complete = {}, true
    for i = 1, #ys do
      xs[i] = runs_cov[i] and runs_cov[i][name]
      if xs[i] == nil then complete = false end
    end
    local f, why
    if complete then f, why = covariates.fit(ys, xs) else why = "not recorded in every run" end
    out.explained[name] = f and f.explained or why
    if f and #ys >= covariates.MIN_ADJUST_RUNS and f.explained >= covariates.MIN_EXPLAINED and f.sd_log < raw_sd
      and (not out.adjust or f.explained > out.adjust.explained) then
      f.covariate = name
      out.adjust = f
    end
  end
  return out
end

-- The table calibrate.lua and make calibrate print: a row per timed row, the share each
-- covariate explains (or why it cannot), the covariate chosen and the spread before and after.
function covariates.table_head()
  return ("| row | %s | adjusted for | run median sd %% raw → adjusted |\n%s|"):format(
    table.concat(covariates.NAMES, " | "), ("|---"):rep(#covariates.NAMES + 3))
end

function covariates.table_row(name, explained, adjust, raw_sd)
  local cells = {}
  for i, n in ipairs(covariates.NAMES) do
    local e = explained[n]
    cells[i] = type(e) == "number" and ("%.0f %%"):format(100 * e) or "– (" .. tostring(e) .. ")"
  end
  return ("| %s | %s | %s | %.1f → %s |"):format(name, table.concat(cells, " | "),
    adjust and adjust.covariate or "none", 100 * raw_sd, adjust and ("%.1f"):format(100 * adjust.sd_log) or "–")
end

-- What each covariate is, in one line under the table.
function covariates.legend()
  local parts = {}
  for i, n in ipairs(covariates.NAMES) do parts[i] = n .. ": " .. covariates.ABOUT[n] end
  return table.concat(parts, "; ")
end

-- Why a calibration row's stored adjustment is unusable, or nil when it is sound.
function covariates.invalid(a)
  if type(a) ~= "table" then return "adjust is not an object" end
  local known = false
  for _, n in ipairs(covariates.NAMES) do known = known or a.covariate == n end
  if not known then return ("adjust.covariate %s is none of %s"):format(tostring(a.covariate),
    table.concat(covariates.NAMES, ", ")) end
  for _, k in ipairs { "slope", "slope_se", "x_mean", "x_min", "x_max", "explained", "sd_log" } do
    if not finite(a[k]) then return ("adjust.%s is %s, not a finite number"):format(k, tostring(a[k])) end
  end
  if a.sd_log <= 0 or a.slope_se < 0 then return "adjust.sd_log must be above 0 and adjust.slope_se not below" end
  if a.x_min > a.x_max then return "adjust.x_min is above adjust.x_max" end
  if math.type(a.df) ~= "integer" or a.df < 1 then return ("adjust.df is %s, not a whole number of at least 1")
    :format(tostring(a.df)) end
end

-- The sides' copies holding only the rows cal adjusts, each run's values scaled by its own
-- covariate (value * exp(-slope (x - x_mean))), and the calibration rows to judge them
-- against: the fit's spread, widened by the slope's standard error times the sides'
-- difference in the covariate (dx, kept for the table). nil and why when a run lacks a
-- covariate a row needs, or lies outside the calibration's range (an extrapolation).
function covariates.adjusted(old_docs, new_docs, cal)
  local rows = {}
  for _, r in ipairs(cal.rows or {}) do
    if type(r.adjust) == "table" then rows[r.case .. "\0" .. r.column] = r end
  end
  if next(rows) == nil then return nil, "the calibration adjusts no row" end
  local sides, xs = {}, { {}, {} }
  for side, docs in ipairs { old_docs, new_docs } do
    sides[side] = {}
    for _, d in ipairs(docs) do
      local cov, copy = covariates.of_run(d), { path = d.path, machine_label = d.machine_label, rows = {} }
      for _, r in ipairs(d.rows or {}) do
        local key = r.case .. "\0" .. r.column
        local c = rows[key]
        if c then
          local a = c.adjust
          local x = cov[a.covariate]
          if x == nil then
            return nil, ("%s does not record %s"):format(tostring(d.path), covariates.ABOUT[a.covariate])
          end
          local slack = covariates.RANGE_SLACK * (a.x_max - a.x_min)
          if x < a.x_min - slack or x > a.x_max + slack then
            return nil, ("%s: %s = %.4g lies outside the calibration's runs (%.4g to %.4g), so adjusting %s %s for it "
              .. "would extrapolate"):format(tostring(d.path), a.covariate, x, a.x_min, a.x_max, r.case, r.column)
          end
          local scale = math.exp(-a.slope * (x - a.x_mean))
          local values = {}
          for _, v in ipairs(r.finite or (type(r.values) == "table" and r.values) or {}) do
            if type(v) == "number" then values[#values + 1] = v * scale end
          end
          values.machine = d.machine_label
          copy.rows[#copy.rows + 1] = { case = r.case, column = r.column, unit = r.unit, finite = values }
          xs[side][key] = xs[side][key] or {}
          table.insert(xs[side][key], x)
        end
      end
      sides[side][#sides[side] + 1] = copy
    end
  end
  local cal_rows = {}
  for key, c in pairs(rows) do
    local xo, xn = xs[1][key], xs[2][key]
    if xo and xn then
      local a = c.adjust
      local dx = stats.mean(xn) - stats.mean(xo)
      cal_rows[key] = { between_run_sd_log = math.sqrt(a.sd_log ^ 2 + (dx * a.slope_se) ^ 2 / (1 / #xo + 1 / #xn)),
        df = a.df, covariate = a.covariate, explained = a.explained, raw_sd_log = c.between_run_sd_log, dx = dx }
    end
  end
  return sides[1], sides[2], cal_rows
end

return covariates
