-- One judge for every comparison ftrun prints (runs against runs, one AB
-- run): each row's test, Benjamini-Hochberg over the rows, and a verdict a
-- reader can act on: "different by x %" (called), "same within ±δ %" (two
-- one-sided tests on the interval of the log ratio), or "~" with what
-- would decide it, "?" with why it cannot be judged.
local inference = require "inference"
local stats = require "stats"
local units = require "units"

local verdicts = {}

local Z80 = 0.8416212335729143 -- the normal quantile of 80 % power

-- The largest margin (%) "same within ±δ" states without EQUIV, and the
-- change (%) "n would decide" sizes for when the observed one is smaller.
verdicts.SAME_MAX = 20
local DECIDE = 10

local function log_medians(runs)
  return stats.map(runs, function(r) return math.log(stats.median(r)) end)
end

function verdicts.positive(runs)
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

-- The one value every repetition of every run of a side has, with at least
-- two repetitions seen; nil when the side varies (or showed one value only).
local function one_value(runs)
  local v, n = runs[1] and runs[1][1], 0
  for _, r in ipairs(runs) do
    for _, x in ipairs(r) do
      if x ~= v then return nil end
      n = n + 1
    end
  end
  return n >= 2 and v or nil
end

-- A count (faults, pages, thp_fault_alloc) the same in every repetition of
-- each side and different between them: no chance spread to test against,
-- the difference is exact at one run a side. Counts only: a time that
-- repeats is a timer's step, not an exact value.
local function exact(row, va, vb, unit)
  if not (va and vb and va ~= vb and units.kind(unit) == "count") then return false end
  row.exact, row.diff = true, vb - va
  if va > 0 and vb > 0 then row.ratio, row.lo, row.hi = vb / va, vb / va, vb / va end
  return true
end
verdicts.one_value = one_value

-- Sum of squares of xs about their mean.
local function ss(xs)
  local m, s = stats.mean(xs), 0
  for _, v in ipairs(xs) do s = s + (v - m) ^ 2 end
  return s
end

-- sd of the logs between the runs' medians and pooled within runs, in %.
function verdicts.spreads(runs_a, runs_b)
  local between, within, dfb, dfw = 0, 0, 0, 0
  for _, side in ipairs { runs_a, runs_b } do
    if #side >= 2 then
      between = between + ss(log_medians(side))
      dfb = dfb + #side - 1
    end
    for _, r in ipairs(side) do
      if #r >= 2 then
        within = within + ss(stats.map(r, math.log))
        dfw = dfw + #r - 1
      end
    end
  end
  return dfb > 0 and 100 * math.sqrt(between / dfb) or nil, dfw > 0 and 100 * math.sqrt(within / dfw) or nil
end

-- The smallest change (a ratio - 1, in %) a t test of se on df degrees of
-- freedom calls with 80 % power at alpha, two-sided.
function verdicts.smallest_change(se, df, alpha)
  return 100 * (math.exp((inference.t_quantile(alpha / 2, df) + inference.t_quantile(0.2, df)) * se) - 1)
end

-- Runs a side that would decide a change of `change` % (or one within
-- ±delta %) against a spread s (sd of one run's log median): the t test's
-- size at 80 % power, by the normal approximation and two runs for its df.
local function runs_needed(s, change, alpha)
  if not s or s <= 0 or not change or change <= 0 then return nil end
  local z = inference.t_quantile(alpha / 2, 1e6) + Z80
  return math.max(2, math.ceil(2 * (z * s / math.log(1 + change / 100)) ^ 2) + 2)
end

-- The rows both sides have, as lists of runs (each run its finite values:
-- a doc's row.finite, or its values that are numbers), and the rows only
-- one side has ({old = {...}, new = {...}}).
function verdicts.rows(old_docs, new_docs)
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
        local finite = r.finite
        if not finite then
          finite = {}
          for _, v in ipairs(type(r.values) == "table" and r.values or {}) do
            if type(v) == "number" then finite[#finite + 1] = v end
          end
        end
        if #finite > 0 then table.insert(row[side], finite) end
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

-- One row of runs against runs. old, new: lists of runs, each its values.
-- cal: the calibration's row ({between_run_sd_log, df}) or nil. opts: ALPHA,
-- SEED (and i, the row's index, for its own seed), EQUIV (a percent or nil),
-- NEED_ALPHA (the level `need` is sized for; default ALPHA), unit (the
-- row's: a count the same in every repetition of each side is exact).
-- Returns the row's figures: ratio, lo, hi (95 %), p, floor (the smallest
-- p these sizes can give), between, within (sd %), calibrated, same,
-- unjudged, delta (the margin of "same", %), eq (true when the 90 %
-- interval lies inside ±delta), need (runs a side that would decide it).
function verdicts.runs(old, new, cal, opts)
  local ko, kn, alpha, i = #old, #new, opts.ALPHA, opts.i or 1
  local row = {}
  local pos = verdicts.positive(old) and verdicts.positive(new)
  local calibrated = cal and pos and cal.between_run_sd_log and (cal.df or 0) >= 1
  if pos then
    row.between, row.within = verdicts.spreads(old, new)
    -- with a calibration the interval is the t test's own
    if not calibrated then row.ratio, row.lo, row.hi = inference.bootstrap_ratio(old, new, { seed = opts.SEED + i }) end
  end
  if constant(old, new) then
    row.same = true -- one value on both sides: nothing to test, and no place in the family of tests
    return row
  end
  if exact(row, one_value(old), one_value(new), opts.unit) then return row end
  if not pos then -- a value 0 or below (a count one side never sees): no ratio, the difference is shown
    local function pooled(runs)
      local all = {}
      for _, r in ipairs(runs) do table.move(r, 1, #r, #all + 1, all) end
      return all
    end
    row.diff = stats.median(pooled(new)) - stats.median(pooled(old))
  end
  local mo, mn = pos and log_medians(old) or nil, pos and log_medians(new) or nil
  local own_ss, own_df = 0, 0
  if pos then
    for _, side in ipairs { mo, mn } do
      if #side >= 2 then own_ss, own_df = own_ss + ss(side), own_df + #side - 1 end
    end
  end
  local s, df
  if calibrated then
    -- the calibration's between-run variance pooled with these runs' own:
    -- a t test with both their degrees of freedom, so 3-4 runs a side reach alpha
    s = math.sqrt((cal.df * cal.between_run_sd_log ^ 2 + own_ss) / (cal.df + own_df))
    df = cal.df + own_df
    row.calibrated = true
    row.between = 100 * s
  elseif own_df >= 1 then
    s, df = math.sqrt(own_ss / own_df), own_df
  end
  local d = pos and (stats.mean(mn) - stats.mean(mo)) or nil
  if row.calibrated then
    local se = s * math.sqrt(1 / ko + 1 / kn)
    local tq = inference.t_quantile(alpha / 2, df)
    row.ratio, row.lo, row.hi = math.exp(d), math.exp(d - tq * se), math.exp(d + tq * se)
    row.floor = 0
    if se > 0 then
      row.p = 2 * inference.t_upper_tail(math.abs(d) / se, df)
      row.delta_design = verdicts.smallest_change(se, df, alpha)
    else -- every calibration run gave one value (a median at the timer's step): no spread, no p
      row.unjudged = "? no run-to-run spread to judge against (one value in every run)"
    end
  elseif ko >= 2 and kn >= 2 then
    local xo = mo or stats.map(old, stats.median)
    local xn = mn or stats.map(new, stats.median)
    local p, _, floor = inference.permutation(xo, xn, { seed = opts.SEED + i })
    row.p, row.floor = p, floor
    if floor > alpha then row.unjudged = ("? %d+%d runs cannot reach %g"):format(ko, kn, alpha) end
  else
    row.unjudged = "? one run a side"
  end
  -- same within ±delta: both one-sided tests at alpha, i.e. the 1 - 2 alpha
  -- t interval of the log ratio inside ±log(1 + delta)
  -- a design's own smallest change is a margin worth stating only up to
  -- SAME_MAX; beyond, "same within ±300 %" would say nothing
  row.delta = opts.EQUIV or (row.delta_design and row.delta_design <= verdicts.SAME_MAX and row.delta_design)
  if s and d and row.delta and s > 0 then
    local se = s * math.sqrt(1 / ko + 1 / kn)
    local half = inference.t_quantile(alpha, df) * se
    local bound = math.log(1 + row.delta / 100)
    row.eq = math.abs(d) + half < bound
  end
  if s and d then
    row.need = runs_needed(s, math.max(math.abs(100 * (math.exp(d) - 1)), opts.EQUIV or DECIDE),
      opts.NEED_ALPHA or alpha)
  end
  return row
end

-- One row of an AB run: a and b the paired values (repetition by
-- repetition). Returns ratio, lo, hi (the median of the per-pair ratios,
-- bootstrap), or diff (B - A, where a value is 0 or below), p (Wilcoxon),
-- unjudged, same, delta, eq, need (pairs that would decide it).
function verdicts.pairs(a, b, opts)
  local row, n, alpha = {}, #a, opts.ALPHA
  local pos, same = true, true
  for k = 1, n do
    if a[k] <= 0 or b[k] <= 0 then pos = false end
    if a[k] ~= b[k] or a[k] ~= a[1] then same = false end
  end
  if same then
    row.same = true
    return row
  end
  if n >= 2 and exact(row, one_value { a }, one_value { b }, opts.unit) then return row end
  local d = {}
  if pos then
    row.ratio, row.lo, row.hi = inference.paired_ratio(a, b, { seed = opts.SEED + (opts.i or 1) })
    for k = 1, n do d[k] = math.log(b[k] / a[k]) end
  else -- a zero (a count that one side never sees): no ratio, the differences B - A are tested
    for k = 1, n do d[k] = b[k] - a[k] end
    row.diff = stats.median(d)
  end
  row.p = inference.wilcoxon(d)
  -- the smallest p a signed-rank test of n pairs can give: 2 / 2^n
  row.floor = 2 / 2 ^ n
  if row.floor > alpha then
    row.unjudged = ("? %d pairs cannot reach %g (%d can)"):format(n, alpha, verdicts.pairs_needed(alpha))
  end
  if pos and n >= 2 then
    local s = math.sqrt(ss(d) / (n - 1))
    local m = stats.mean(d)
    local se = s / math.sqrt(n)
    local design = se > 0 and verdicts.smallest_change(se, n - 1, alpha) or nil
    row.delta = opts.EQUIV or (design and design <= verdicts.SAME_MAX and design or nil)
    if row.delta and se > 0 then
      row.eq = math.abs(m) + inference.t_quantile(alpha, n - 1) * se < math.log(1 + row.delta / 100)
    end
    -- Wilcoxon's efficiency against the t test on normal data is 3/pi
    local need = runs_needed(s * math.sqrt(0.5), math.max(math.abs(100 * (math.exp(m) - 1)), opts.EQUIV or DECIDE),
      alpha)
    row.need = need and math.max(verdicts.pairs_needed(alpha), math.ceil(need * math.pi / 3))
  end
  return row
end

-- The fewest pairs whose signed-rank test can reach alpha: 2 / 2^n <= alpha.
function verdicts.pairs_needed(alpha)
  return math.ceil(math.log(2 / alpha, 2))
end

-- A difference in its unit, with its sign.
function verdicts.signed(x, unit)
  return (x >= 0 and "+" or "-") .. units.cell(math.abs(x), unit)
end

local function pct(r) return ("%+.1f %%"):format(100 * (r - 1)) end

-- The verdicts of a table's rows (each from verdicts.runs or
-- verdicts.pairs, with case, column, unit): q by Benjamini-Hochberg over
-- the rows with a p, then row.q, row.called, row.worse and row.verdict.
-- Where some rows decide (row.decides), Benjamini-Hochberg runs over them
-- alone and over the others alone.
-- opts: ALPHA, FAIL_ABOVE (percent or nil), what ("runs a side" or
-- "pairs"), prefix (of a gate line, e.g. "B/A "). Returns a summary:
-- judged, called, same (rows same within ±delta), failures (rows called
-- worse beyond FAIL_ABOVE, as lines), unjudged (timed rows that cannot be
-- judged, as "case column").
function verdicts.judge(rows, opts)
  -- where decision rows are named, they alone make the gate and the exit
  -- status, and they are their own family of tests: the rows asked about
  -- are not diluted by the rows reported beside them
  local any_decides = false
  for _, row in ipairs(rows) do any_decides = any_decides or row.decides == true end
  local judged = 0
  for _, family in ipairs { true, false } do
    -- an exact difference is a discovery with p = 0: it takes its rank in the
    -- family, so calling it exactly costs the other rows nothing
    local ps, members = {}, {}
    for _, row in ipairs(rows) do
      if (row.p or row.exact) and (not any_decides or (row.decides == true) == family) then
        ps[#ps + 1], members[#members + 1] = row.p or 0, row
      end
    end
    local q = inference.bh(ps)
    for k, row in ipairs(members) do if row.p then row.q = q[k] end end
    judged = judged + #ps
    if not any_decides then break end
  end
  local out = { judged = judged, called = 0, same = 0, failures = {}, unjudged = {}, decision = {} }
  for _, row in ipairs(rows) do
    local better = units.better(row.unit)
    local r = row.ratio
    if row.same then
      row.verdict = "= (one value): same (exact)"
    elseif row.exact then
      row.called = true
      out.called = out.called + 1
      out.exact = (out.exact or 0) + 1
      row.verdict = "different (exact): " .. (r and pct(r) or (opts.prefix == "B/A " and "B - A " or "new - old ")
        .. verdicts.signed(row.diff, row.unit))
    elseif row.q and row.q <= opts.ALPHA and not row.unjudged then
      row.called = true
      out.called = out.called + 1
      if not r then
        row.verdict = row.diff and (opts.prefix == "B/A " and "B - A " or "new - old ") .. verdicts.signed(row.diff,
          row.unit)
          or "different"
      else
        row.verdict = pct(r)
        if better and r ~= 1 then
          row.worse = (r > 1) == (better == "lower")
          row.verdict = row.verdict .. (row.worse and " (worse)" or " (better)")
          if row.worse and opts.FAIL_ABOVE and math.abs(100 * (r - 1)) > opts.FAIL_ABOVE
            and (row.decides or not any_decides) then
            out.failures[#out.failures + 1] = ("%s %s: %s%s (p=%.3g, q=%.3g)"):format(row.case, row.column,
              opts.prefix or "", pct(r), row.p, row.q)
          end
        end
      end
    elseif row.eq then
      row.verdict = ("same within ±%.1f %%"):format(row.delta)
      out.same = out.same + 1
    elseif row.unjudged then
      row.verdict = row.unjudged
    else
      row.verdict = row.need and ("~ (%d %s would decide)"):format(row.need, opts.what or "runs a side") or "~"
    end
    -- a row judged against a stated bound and left undecided has not held: no gate passes over it
    local open_bound = row.bound and not row.called and not row.eq
    if (row.unjudged or open_bound) and better and (row.decides or not any_decides) then
      out.unjudged[#out.unjudged + 1] = row.case .. " " .. row.column
    end
    if row.decides then out.decision[#out.decision + 1] = row end
  end
  return out
end

-- Marks the decision rows among rows (row.decides): names, a list of
-- {case, column} (nil: none named, every row decides). Returns the names no
-- row has, as "case column" texts.
function verdicts.mark_decision(rows, names)
  local missing = {}
  for _, n in ipairs(names or {}) do
    local found = false
    for _, row in ipairs(rows) do
      if row.case == n[1] and row.column == n[2] then row.decides, found = true, true end
    end
    if not found then missing[#missing + 1] = n[1] .. " " .. n[2] end
  end
  return missing
end

-- The decision rows' names as text, from a results JSON's decision_rows
-- ({{case =, column =}, ...}) or a ROWS list ({{case, column}, ...}).
function verdicts.decision_names(list)
  if type(list) ~= "table" then return nil end
  local out = {}
  for _, n in ipairs(list) do
    local case, column = n.case or n[1], n.column or n[2]
    if type(case) == "string" and type(column) == "string" then out[#out + 1] = { case, column } end
  end
  return #out > 0 and out or nil
end

-- What the verdict column's symbols mean, for the symbols these rows use:
-- one line under the table, or nil when it uses none.
local SYMBOLS = {
  { "^~", "~ undecided: not called different, nor shown the same within its margin (in brackets: what would "
    .. "decide it)" },
  { "^%?", "? not judged: what was given cannot judge the row (the cell says why)" },
  { "^=", "= one value on both sides, nothing to test (the same, exactly)" },
  { "%(exact%)", "(exact) a count the same in every repetition of each side: no spread, so the difference is exact" },
}
function verdicts.legend(rows)
  local out = {}
  for _, sym in ipairs(SYMBOLS) do
    for _, row in ipairs(rows) do
      if type(row.verdict) == "string" and row.verdict:find(sym[1]) then
        out[#out + 1] = sym[2]
        break
      end
    end
  end
  if #out == 0 then return nil end
  return "verdicts: " .. table.concat(out, "; ") .. "."
end

-- The verdict's kind: "different", "same", "undecided" or "unjudged".
function verdicts.kind(text)
  if text:match("^= ") or text:match("^same within") then return "same" end
  if text:match("^~") then return "undecided" end
  if text:match("^%?") or text == "–" then return "unjudged" end
  return "different"
end

return verdicts
