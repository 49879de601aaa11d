-- calibrate.lua's report: its printed output, rendered from the calibration
-- file it writes, so that claims can render it again from the file kept
-- beside a kind's runs and find any hand edit of it.
local covariates = require "covariates"
local provenance = require "provenance"
local units = require "units"

local report = {}

-- calibrate.lua's printed output for its calibration file cal, written to
-- path: the rows' spreads, what the machine's state explains, and what
-- compare.lua decides with it (the simulations the file keeps). median(row):
-- a row's median cell; by default from the row's median, which a file made
-- before calibrate.lua kept it lacks.
function report.output(cal, path, median)
  median = median or function(row) return ("%s %s"):format(units.cell(row.median, row.unit), row.unit) end
  local lines = {}
  local function add(fmt, ...) lines[#lines + 1] = select("#", ...) > 0 and fmt:format(...) or fmt end
  local rows, runs, wall = cal.rows, cal.runs, cal.run_wall_s * cal.runs
  add("calibration of %s %s: %d A/A runs, %.1f min, written to %s", cal.script, cal.command, runs, wall / 60, path)
  add("")
  add("| row | median | between runs (run median) sd % | within a run sd % |")
  add("|---|---|---|---|")
  for _, row in ipairs(rows) do
    add("| %s %s | %s | %.1f | %s |", row.case, row.column, median(row), 100 * row.between_run_sd_log,
      row.within_sd_log and ("%.1f"):format(100 * row.within_sd_log) or "–")
  end
  add("")
  add("How much of each row's run-to-run spread the machine's state explains: 1 - the squared error of predicting "
    .. "each run's median from a fit on the other runs, over that of predicting it by their mean (" .. runs
    .. " runs; a covariate that does not vary says why). compare.lua adjusts a row for its best covariate where that "
    .. ("share is at least %.0f %% and the fit's spread is below the raw one."):format(100 * covariates.MIN_EXPLAINED))
  add("")
  add("%s", covariates.table_head())
  for _, row in ipairs(rows) do
    add("%s", covariates.table_row(row.case .. " " .. row.column, row.explained, row.adjust, row.between_run_sd_log))
  end
  add("covariates: " .. covariates.legend() .. ".")
  add("")
  local sim = cal.simulated
  local target = rows[1]
  for _, row in ipairs(rows) do
    if row.case .. " " .. row.column == sim.target then target = row; break end
  end
  add("What compare.lua decides with this calibration (%d simulated comparisons each, normal logs, BH over the %d "
    .. "rows, ALPHA = 0.05; the change planted into %s alone):", sim.sims, #rows, sim.target)
  add("")
  add("| runs a side | smallest change called in 80 % | +10 % called | A/A: rows called | A/A: any row called "
    .. "| A/A: that row 'same within ±δ' | about |")
  add("|---|---|---|---|---|---|---|")
  for _, d in ipairs(cal.designs) do
    add("| %d | %s | %.0f %% | %.1f %% | %.1f %% | %.0f %% | %.1f min |", d.k,
      d.smallest and ("%.1f %%"):format(100 * d.smallest) or "> 400 %", 100 * d.planted10, 100 * d.aa_rows_called,
      100 * d.aa_any_called, 100 * d.aa_target_same, 2 * d.k * wall / runs / 60)
  end
  if target.adjust then
    add("")
    local per_design = {}
    for i, d in ipairs(cal.designs) do
      per_design[i] = ("%d a side: +10 %% called in %.0f %%, 80 %% power at %s"):format(d.k,
        100 * d.adjusted_planted10, d.adjusted_smallest and ("%.1f %%"):format(100 * d.adjusted_smallest) or "> 400 %")
    end
    add("%s adjusted for %s (the run sd %.1f %% → %.1f %%), the same simulation: %s.", sim.target,
      target.adjust.covariate, 100 * target.between_run_sd_log, 100 * target.adjust.sd_log,
      table.concat(per_design, "; "))
  end
  add("")
  local u = cal.until_decided
  add("UNTIL=decided against %d baseline runs, at most %d more (%d simulated each; it stops when every row is "
    .. "decided or beyond what the cap can decide): A/A: %.1f runs on average, stopped before the cap in %.0f %%, "
    .. "any row called different in %.1f %%, every row 'same' in %.0f %%, %s 'same' in %.0f %%; +5 %% planted into "
    .. "%s: %.1f runs on average, stopped before the cap in %.0f %%, called in %.0f %%.", u.baseline, u.max,
    u.sims, u.aa.mean_runs, 100 * u.aa.decided, 100 * u.aa.any_called, 100 * u.aa.all_same,
    sim.target, 100 * u.aa.target_same, sim.target, u.plus5.mean_runs, 100 * u.plus5.decided,
    100 * u.plus5.called)
  add("")
  add("the machine while calibrating: " .. provenance.describe(cal.provenance))
  return table.concat(lines, "\n") .. "\n"
end


-- The finding from a calibration file cal (kept as calibration.md beside
-- it): how much pass 1's run median varied and what the canary explains, or
-- nil. say: the published pages' wording (round), given by whoever prints it.
function report.finding(cal, say)
  local R = say.round
  for _, r in ipairs(cal.rows) do
    if r.case == "A" and r.column == "pass1" and type(r.explained) == "table" then
      local a = r.adjust
      local e = type(r.explained.canary) == "number" and r.explained.canary or nil
      return ("`make calibrate` ([calibration.md](calibration.md), %d A/A runs of `cycles.lua %s`): pass 1's "
        .. "run median varied by %s %% (sd of the logs) from run to run; %s, %s.")
        :format(cal.runs, tostring(cal.config), R(100 * r.between_run_sd_log),
          e and ("the canary explains %s %% of that spread (each run left out and predicted from the others)")
            :format(R(100 * e)) or ("the canary explains none of it (%s)"):format(tostring(r.explained.canary)),
          a and ("adjusted for the %s, %s %% remains, and compare.lua shows pass 1 adjusted beside the raw change")
            :format(a.covariate, R(100 * a.sd_log)) or "too little for compare.lua to adjust pass 1")
    end
  end
end

return report
