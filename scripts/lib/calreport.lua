-- make calibrate's page (calibration.md), rendered from the figures bench/calibrate.lua keeps
-- in its calibration file (`report`), so that make docs can render it again from that file
-- and find any hand edit of the page. f holds plain numbers and strings only.
local covariates = require "covariates"
local inference = require "inference"

local calreport = {}

local function rate(k, n)
  local lo, hi = inference.wilson(k, n)
  return ("%d of %d = %.1f %% [%.1f, %.1f]"):format(k, n, n > 0 and 100 * k / n or 0, 100 * lo, 100 * hi)
end

function calreport.render(f)
  local lines = {}
  local function add(fmt, ...) lines[#lines + 1] = select("#", ...) > 0 and fmt:format(...) or fmt end
  add("**make calibrate**: %d A/A runs of `%s %s` on %s (%d CPUs), kernel %s, %s UTC; %.1f min in all.",
    f.runs, f.script, f.config, f.cpu, f.cpus, f.kernel, f.date, f.minutes)
  add("")
  add("Variance of each level, as sd of the logs (≈ % of the value): between runs (of a run's mean), between "
    .. "repetitions of one run, and of a run's median from run to run.")
  add("")
  add("| row | median | between runs % | between repetitions % | run median sd % |")
  add("|---|---|---|---|---|")
  for _, row in ipairs(f.rows) do
    add("| %s | %.1f %s | %.1f | %.1f | %.1f |", row.key, row.median, row.unit, 100 * row.between,
      100 * row.within, 100 * row.sd_medians)
  end
  add("")
  local a, nrows = f.alpha, #f.rows
  add("False calls when nothing changed (A/A), ALPHA = %g, 95 %% Wilson intervals:", a)
  add("")
  add("| comparison | tests | called |")
  add("|---|---|---|")
  add("| one run a side, U test on the repetitions (as comparisons were judged before calibrations) "
    .. "| %d pairs × %d rows | %s |", f.pairs, nrows, rate(f.u_calls, f.tests))
  add("| one run a side, t against the spread of the other %d runs, p < ALPHA | %d pairs × %d rows | %s |",
    f.runs - 2, f.pairs, nrows, rate(f.cal_calls, f.tests))
  add("| the same with Benjamini-Hochberg over the rows (as comparisons judge) | %d pairs × %d rows | %s |", f.pairs,
    nrows, rate(f.cal_called_bh, f.tests))
  add("| %d runs a side, permutation test, p < ALPHA (random splits, not independent) | %d splits × %d rows | %s |",
    f.k, f.splits, nrows, rate(f.split_raw, f.split_tests))
  add("| the same with Benjamini-Hochberg (as comparisons judge) | %d splits × %d rows | %s |", f.splits, nrows,
    rate(f.split_calls, f.split_tests))
  if f.ab_aa then
    add("| an AB run, the same knobs both sides (Wilcoxon, p < ALPHA) | 1 run × %d rows | %s |", f.ab_aa.n,
      rate(f.ab_aa.raw, f.ab_aa.n))
    add("| the same with Benjamini-Hochberg | 1 run × %d rows | %s |", f.ab_aa.n, rate(f.ab_aa.bh, f.ab_aa.n))
  end
  add("")
  add("Power:")
  add("")
  if f.planted_tries > 0 then
    add("- +10 %% planted into the new side of %d runs a side (every timed row): pass 1 called in %s of the splits.",
      f.k, rate(f.planted_hits, f.planted_tries))
  end
  local t = f.ab_thp
  if t and t.refused then
    add("- the AB run of THP=never | THP=16K could not run here: %s", (t.refused:gsub("\n", " ")))
  elseif t then
    add("- an AB run of THP=never | THP=16K: pass 1 B/A = %+.1f %% (median of %d per-repetition ratios), "
      .. "p = %.3g, q = %.3g: %s.", 100 * (t.ratio - 1), t.n, t.p, t.q,
      t.q <= a and (t.ratio < 1 and "called, 16 KiB folios cheaper" or "called, 16 KiB folios dearer") or "not called")
  end
  add("")
  add("The machine's state as covariates: the share of each row's run-to-run spread a fit on it removes, each run "
    .. "left out and predicted from the others' fit, against their mean (%s); a row is adjusted for its best "
    .. "covariate where that share is at least %.0f %% and the fit's spread is below the raw one.",
    covariates.legend(), 100 * covariates.MIN_EXPLAINED)
  add("")
  add("%s", covariates.table_head())
  for _, row in ipairs(f.rows) do
    add("%s", covariates.table_row(row.key, row.explained or {}, row.adjust, row.sd_medians))
  end
  local c = f.covariates
  if c and c.tries > 0 then
    local chosen = {}
    for _, n in ipairs(covariates.NAMES) do
      if (c.chosen or {})[n] then chosen[#chosen + 1] = ("%s in %d"):format(n, c.chosen[n]) end
    end
    add("")
    add("Pass 1 over the same %d splits of %d runs a side, judged as a comparison with a calibration made of "
      .. "the other %d runs (Student's t, p < ALPHA, this row alone): raw, A/A called in %s and +10 %% called in %s; "
      .. "adjusted for the covariate the other runs chose (%s), A/A called in %s and +10 %% called in %s.",
      c.tries, f.k, f.runs - 2 * f.k, rate(c.raw_aa, c.tries), rate(c.raw_plus10, c.tries),
      #chosen > 0 and table.concat(chosen, ", ") .. " of the splits; none in the others" or "none in any split",
      rate(c.adj_aa, c.tries), rate(c.adj_plus10, c.tries))
  end
  add("")
  if #f.designs > 0 then
    add("The smallest change of pass 1 detected with %d %% power at ALPHA = %g (normal approximation from the "
      .. "spreads above; a single row, before any correction over rows), and its wall time:", 100 * f.power, a)
    add("")
    add("| design | smallest change | wall time |")
    add("|---|---|---|")
    for _, d in ipairs(f.designs) do
      add("| %s | %.1f %% | %.1f min |", d.what, 100 * (math.exp(d.mde) - 1), d.wall / 60)
    end
    local a3 = f.ab_for_3
    if a3 then
      add("")
      add("A 3 %% change of pass 1 needs an AB run of about %d pairs (%.1f min; per-pair sd of the log ratio "
        .. "%.1f %%)%s",
        a3.pairs, a3.wall / 60, 100 * a3.sd, a3.wall <= 300 and "." or ": more than the goal of 5 minutes, because "
        .. "the ratio of two neighbouring repetitions already varies by that much here.")
    end
  end
  add("")
  add("Noise on the record: %d of %d repetitions of the A/A runs (every case) were marked noisy; the spreads above "
    .. "include them.", f.noisy, f.marked_of)
  add("")
  add("%s", f.provenance_line)
  return table.concat(lines, "\n") .. "\n"
end

-- The smallest change of pass 1 each design detects with `power` at `alpha`
-- (Kalibera and Jones; normal approximation), and its wall time: s, the run
-- medians' sd (logs) of `runs` runs of run_wall s each; ab = {sd, wall,
-- reps}, the per-pair sd of an AB run's log ratios, its wall time and
-- repetitions, or nil. A list of {what, mde, wall}, and ab_for_3: the pairs
-- an AB run needs for a 3 % change.
function calreport.designs(s, runs, run_wall, alpha, power, ab)
  local function tq(df, share) return inference.t_quantile(share, df) end
  local df = runs - 1
  local designs = { { what = "one run a side, judged against this calibration",
    mde = (tq(df, alpha / 2) + tq(df, 1 - power)) * s * math.sqrt(2), wall = 2 * run_wall } }
  for _, k in ipairs { 4, 6, 8, 12 } do
    local dfk = 2 * k - 2
    designs[#designs + 1] = { what = ("%d runs a side (permutation test)"):format(k),
      mde = (tq(dfk, alpha / 2) + tq(dfk, 1 - power)) * s * math.sqrt(2 / k), wall = 2 * k * run_wall }
  end
  if ab then
    -- the normal quantiles of ALPHA = 0.05 two-sided and 80 % power; Wilcoxon's efficiency against the t
    -- test on normal data is 3/pi
    local z = 1.959963984540054 + 0.8416212335729143
    local per_pair = ab.wall / (ab.reps + 1) -- the warm-up repetition runs both sides too
    local function ab_mde(n) return z * ab.sd / math.sqrt(n * 3 / math.pi) end
    designs[#designs + 1] = { what = ("an AB run of %d repetitions (pairs)"):format(ab.reps), mde = ab_mde(ab.reps),
      wall = ab.wall }
    local n5 = math.floor((300 - (ab.wall - per_pair * (ab.reps + 1))) / per_pair) - 1
    if n5 >= 6 then
      designs[#designs + 1] = { what = ("an AB run of 5 minutes (%d pairs)"):format(n5), mde = ab_mde(n5),
        wall = 300 }
    end
    local need = math.ceil((z * ab.sd / math.log(1.03)) ^ 2 * math.pi / 3)
    designs.ab_for_3 = { pairs = need, wall = per_pair * (need + 1) + (ab.wall - per_pair * (ab.reps + 1)),
      sd = ab.sd }
  end
  return designs
end

return calreport
