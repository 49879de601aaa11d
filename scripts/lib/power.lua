-- What a comparison can decide, by simulating it: run medians drawn with
-- each row's calibrated between-run spread, the calibration itself drawn
-- from its sampling distribution (its sd is an estimate on df degrees of
-- freedom), then judged by verdicts.runs and verdicts.judge, BH over every
-- row included, exactly as a comparison of runs is judged. Normal logs are an
-- assumption; the figures say so.
local inference = require "inference"
local sequential = require "sequential"
local verdicts = require "verdicts"

local power = {}

local function normal(rng)
  local u1, u2 = rng(), rng()
  if u1 < 1e-300 then u1 = 1e-300 end
  return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
end

-- A share of `sims` comparisons of k runs a side (rows: the calibration's
-- rows, {between_run_sd_log, df}) with the change `change` (a ratio - 1)
-- planted into row `target` (nil: none). Returns the shares called (the
-- target row, or any row when target is nil), same within ±delta (target
-- row, or all rows same when nil), and the mean number of rows called.
function power.simulate(rows, k, change, target, opts)
  local rng = inference.rng(opts.seed or 29)
  local sims, alpha = opts.sims or 400, opts.alpha or 0.05
  local called, same, calls = 0, 0, 0
  for _ = 1, sims do
    local table_rows = {}
    for r, row in ipairs(rows) do
      local s, df = row.between_run_sd_log, row.df
      local chi = 0
      for _ = 1, df do chi = chi + normal(rng) ^ 2 end
      local cal = { between_run_sd_log = s * math.sqrt(chi / df), df = df }
      local shift = (r == target and change) and math.log(1 + change) or 0
      local old, new = {}, {}
      for j = 1, k do
        old[j] = { math.exp(s * normal(rng)) }
        new[j] = { math.exp(s * normal(rng) + shift) }
      end
      local v = verdicts.runs(old, new, cal, { ALPHA = alpha, SEED = 1, i = r, EQUIV = opts.equiv })
      v.case, v.column, v.unit = row.case, row.column, row.unit
      table_rows[r] = v
    end
    local j = verdicts.judge(table_rows, { ALPHA = alpha })
    calls = calls + j.called
    if target then
      if table_rows[target].called then called = called + 1 end
      if table_rows[target].eq and not table_rows[target].called then same = same + 1 end
    else
      if j.called > 0 then called = called + 1 end
      if j.same == #rows then same = same + 1 end
    end
  end
  return called / sims, same / sims, calls / sims
end

-- The smallest change (ratio - 1) planted into row `target` that k runs a
-- side call in at least `want` (default 0.8) of the simulations, by
-- bisection on the log scale between 0.1 % and 400 %; nil when even 400 %
-- is not called that often.
function power.smallest(rows, k, target, opts)
  local want = opts.want or 0.8
  local lo, hi = math.log(1.001), math.log(5)
  if power.simulate(rows, k, math.exp(hi) - 1, target, opts) < want then return nil end
  for _ = 1, opts.steps or 9 do
    local mid = (lo + hi) / 2
    if power.simulate(rows, k, math.exp(mid) - 1, target, opts) >= want then hi = mid else lo = mid end
  end
  return math.exp(hi) - 1
end

-- UNTIL=decided simulated: k0 baseline runs, then up to max runs added one
-- at a time, each look judged as sequential.drive judges it (the spent
-- share of alpha, BH over the rows, decided when every row is called or
-- the same within ±δ). change planted into row target (nil: A/A). Returns
-- the mean runs added, the share decided before the cap, the share with
-- the target row called (change nil: any row called), the share with
-- every row "same", and the share with the target row "same" at the end.
function power.until_decided(rows, k0, max, change, target, opts)
  local rng = inference.rng(opts.seed or 31)
  local sims, alpha = opts.sims or 200, opts.alpha or 0.05
  local added, decided_n, called_n, same_n, target_same = 0, 0, 0, 0, 0
  for _ = 1, sims do
    local cals, old, new = {}, {}, {}
    for r, row in ipairs(rows) do
      local chi = 0
      for _ = 1, row.df do chi = chi + normal(rng) ^ 2 end
      cals[r] = { between_run_sd_log = row.between_run_sd_log * math.sqrt(chi / row.df), df = row.df }
      old[r], new[r] = {}, {}
      for j = 1, k0 do old[r][j] = { math.exp(row.between_run_sd_log * normal(rng)) } end
    end
    local runs, decided, any_called, all_same, t_same = 0, false, false, false, false
    for i = 1, max do
      runs = i
      for r, row in ipairs(rows) do
        local shift = (r == target and change) and math.log(1 + change) or 0
        new[r][i] = { math.exp(row.between_run_sd_log * normal(rng) + shift) }
      end
      local a = sequential.spend(alpha, i, max)
      local table_rows = {}
      for r, row in ipairs(rows) do
        local v = verdicts.runs(old[r], new[r], cals[r], { ALPHA = a, SEED = 1, i = r, NEED_ALPHA = alpha })
        v.case, v.column, v.unit = row.case, row.column, row.unit
        table_rows[r] = v
      end
      local j = verdicts.judge(table_rows, { ALPHA = a })
      local open = 0
      for _, v in ipairs(table_rows) do if sequential.open(v, i, max) then open = open + 1 end end
      if change then any_called = any_called or table_rows[target].called
      else any_called = any_called or j.called > 0 end
      t_same = target and table_rows[target].eq and not table_rows[target].called
      if open == 0 then
        decided, all_same = true, j.same == #rows
        break
      end
    end
    added = added + runs
    if decided then decided_n = decided_n + 1 end
    if any_called then called_n = called_n + 1 end
    if all_same then same_n = same_n + 1 end
    if t_same then target_same = target_same + 1 end
  end
  return added / sims, decided_n / sims, called_n / sims, same_n / sims, target_same / sims
end

return power
