-- AB: two settings interleaved in one run, the way to compare settings that
-- can change inside a run. AB="A knobs | B knobs" (an empty side: the run's
-- own knobs) runs both sides in every repetition, every case of the
-- repetition under one side and then under the other, in ABBA order
-- (repetition 1: A then B, repetition 2: B then A, ...), so a drift over the
-- run falls on both sides alike; each side's knobs are set before its half
-- and the run's own restored after. The rows keep both sides' values by repetition index, and the
-- paired change is the median of the per-repetition ratios B/A, with a
-- bootstrap interval and the p of a Wilcoxon signed-rank test of their logs.
local knobs = require "knobs"
local stats = require "stats"
local units = require "units"
-- The judging machinery (verdicts, calibrations and what they load) is
-- fetched on first use: a run that compares nothing never loads it.
local function lazy(name)
  return setmetatable({}, { __index = function(_, k) return require(name)[k] end })
end
local verdicts = lazy "verdicts"

local ab = {}

-- Knobs that cannot change inside a run: its size, its length, where its
-- files go and its order.
ab.FIXED = { MIB = true, REPS = true, QUICK = true, RESULTS = true, README = true, PUBLISH = true, SEED = true,
  AB = true, CYCLES = true }

-- The level an AB run's own table judges at, and the pairs a QUICK AB run
-- takes: at 10 pairs the smallest p is 2/1024, so one changed row among 20
-- keeps q = 20 * 2/1024 < 0.05 under Benjamini-Hochberg.
ab.ALPHA, ab.QUICK_PAIRS = 0.05, 10

-- "THP=never | THP=16K" -> {{name, text}, ...} per side, or nil and why.
function ab.parse(text)
  local a, b = text:match("^([^|]*)|([^|]*)$")
  if not a then return nil, "'A knobs | B knobs' (one |)" end
  local sides = {}
  for i, part in ipairs { a, b } do
    local list = {}
    for word in part:gmatch("%S+") do
      local name, value = word:match("^([%u_][%u%d_]*)=(.*)$")
      if not name then return nil, ("NAME=value words, not '%s'"):format(word) end
      list[#list + 1] = { name, value }
    end
    sides[i] = list
  end
  if #sides[1] == 0 and #sides[2] == 0 then return nil, "at least one knob on one side (both are empty)" end
  return sides
end

-- The sides' order in repetition i (1-based): A B, B A, A B, ...
function ab.order(i)
  if i % 2 == 1 then return { "A", "B" } end
  return { "B", "A" }
end

-- The AB knob every script takes through the harness.
knobs.parsers.ab = function(value)
  if value == "" then return value end
  local sides, why = ab.parse(value)
  if not sides then return nil, why end
  return value
end

function ab.knob()
  return { name = "AB", kind = "ab", default = "",
    desc = "\"A knobs | B knobs\": both settings in every repetition, ABBA order, and their paired change "
      .. "(an empty side: the run's own knobs; only knobs that can change inside a run)" }
end

-- The AB plan of a run, or nil when AB is not given: every knob either side
-- names, its value on each side (the run's own where a side is silent).
-- Refuses (exit 2, before anything is mapped) a knob the script does not
-- take, one that cannot change inside a run, and a bad value.
function ab.plan(script, spec, cfg)
  if not cfg.AB or cfg.AB == "" then return nil end
  local sides = assert(ab.parse(cfg.AB))
  -- enough pairs for a verdict: QUICK's few repetitions are raised to
  -- ab.QUICK_PAIRS, and fewer than a signed-rank test needs are refused
  if math.type(cfg.REPS) == "integer" then
    local need = verdicts.pairs_needed(ab.ALPHA)
    if cfg.QUICK and not cfg.given.REPS and cfg.REPS < ab.QUICK_PAIRS then
      cfg.REPS = ab.QUICK_PAIRS
    elseif cfg.given.REPS and cfg.REPS < need then
      knobs.fail(script, ("AB=%s with REPS=%d: %d pairs cannot reach p < %g (a signed-rank test of n pairs gives "
        .. "p >= 2/2^n); give REPS=%d or more (REPS=%d lets one changed row through the correction over 20)")
        :format(cfg.AB, cfg.REPS, cfg.REPS, ab.ALPHA, need, ab.QUICK_PAIRS))
    end
  end
  local by_name, changeable = {}, {}
  for _, k in ipairs(spec) do
    by_name[k.name] = k
    if (k.apply or k.ab) and not ab.FIXED[k.name] then changeable[#changeable + 1] = k.name end
  end
  local plan = { text = cfg.AB, knobs = {}, A = {}, B = {} }
  local text = knobs.shown(cfg.AB)
  local seen = {}
  for i, side in ipairs { "A", "B" } do
    for _, kv in ipairs(sides[i]) do
      local name, raw = kv[1], kv[2]
      local k = by_name[name]
      if not k then
        knobs.fail(script, ("AB=%s: %s is not a knob of %s"):format(text, name, script))
      end
      if ab.FIXED[name] or not (k.apply or k.ab) then
        knobs.fail(script, ("AB=%s: %s cannot change inside a run of %s (in AB: %s)"):format(text, name, script,
          #changeable > 0 and table.concat(changeable, ", ") or "none of its knobs"))
      end
      if plan[side][name] ~= nil then knobs.fail(script, ("AB=%s: %s twice on side %s"):format(text, name, side)) end
      local v, expected = knobs.parsers[k.kind](raw, k)
      if v == nil then
        knobs.fail(script, ("AB=%s: %s=%s: expected %s"):format(text, name, knobs.shown(raw), expected))
      end
      plan[side][name] = v
      if not seen[name] then
        seen[name] = true
        plan.knobs[#plan.knobs + 1] = k
      end
    end
  end
  plan.own = {}
  for _, k in ipairs(plan.knobs) do
    plan.own[k.name] = cfg[k.name]
    if plan.A[k.name] == nil then plan.A[k.name] = cfg[k.name] end
    if plan.B[k.name] == nil then plan.B[k.name] = cfg[k.name] end
  end
  local function words(side)
    local out = {}
    for _, k in ipairs(plan.knobs) do out[#out + 1] = k.name .. "=" .. tostring(plan[side][k.name]) end
    return table.concat(out, " ")
  end
  plan.a, plan.b = words("A"), words("B")
  -- each side set once and undone, so a setting the system refuses stops
  -- the run here, before anything is mapped
  ab.apply(plan, cfg, "A")
  ab.apply(plan, cfg, "B")
  ab.apply(plan, cfg, nil)
  return plan
end

-- The script's check (cfg, clock -> nil or why) on each side's values, as
-- on the run's own: a side may not run what the script refuses alone.
-- Returns why, naming the side, or nil.
function ab.check(plan, cfg, clock, check)
  for _, side in ipairs { "A", "B" } do
    local values = setmetatable({ given = setmetatable({}, { __index = cfg.given }) }, { __index = cfg })
    for _, k in ipairs(plan.knobs) do values[k.name], values.given[k.name] = plan[side][k.name], true end
    local why = check(values, clock)
    if why then return ("AB side %s (%s): %s"):format(side, plan[side:lower()], why) end
  end
end

-- Sets one side's knobs (side "A", "B", or nil: the run's own), calling
-- each knob's apply(value, cfg) where it has one.
function ab.apply(plan, cfg, side)
  for _, k in ipairs(plan.knobs) do
    local v = side and plan[side][k.name] or plan.own[k.name]
    cfg[k.name] = v
    if k.apply then k.apply(v, cfg) end
  end
end

-- The suffix of side B's twin of a case.
ab.B_SUFFIX = " [B]"

-- One repetition: each side in ab.order(rep), its knobs set, run(side),
-- then the run's own knobs back. rep 0 (a warm-up) runs as repetition 1.
function ab.repetition(plan, cfg, rep, run)
  for _, side in ipairs(ab.order(math.max(rep, 1))) do
    ab.apply(plan, cfg, side)
    local ok, err = pcall(run, side)
    ab.apply(plan, cfg, nil)
    if not ok then error(err, 0) end
  end
end

-- An AB run's JSON: its rows carry a side.
function ab.is_ab(doc)
  return type(doc.ab) == "table"
end

-- The paired table of an AB run's rows (each with .side "A" or "B" and
-- .ab_case, the case's own name, and .values by repetition). Returns its
-- lines, the rows that fail FAIL_ABOVE, the rows that cannot be judged and
-- the judged rows (each with a, b: the sides' descriptions).
function ab.report(doc, opts)
  local pairs_, order = {}, {}
  for _, r in ipairs(doc.rows) do
    if r.side == "A" or r.side == "B" then
      local name = type(r.ab_case) == "string" and r.ab_case or r.case
      local key = name .. "\0" .. r.column
      if not pairs_[key] then
        pairs_[key] = { case = name, column = r.column, unit = r.unit }
        order[#order + 1] = pairs_[key]
      end
      pairs_[key][r.side] = r
    end
  end
  local rows = {}
  for i, p in ipairs(order) do
    if p.A and p.B then
      local a, b, fa, fb = {}, {}, {}, {}
      for rep = 1, math.max(#p.A.values, #p.B.values) do
        local v, w = p.A.values[rep], p.B.values[rep]
        if type(v) == "number" then fa[#fa + 1] = v end
        if type(w) == "number" then fb[#fb + 1] = w end
        if type(v) == "number" and type(w) == "number" then a[#a + 1], b[#b + 1] = v, w end
      end
      if #a > 0 then
        local row = verdicts.pairs(a, b, { ALPHA = opts.ALPHA, SEED = opts.SEED, i = i, EQUIV = opts.EQUIV,
          unit = p.unit })
        row.case, row.column, row.unit, row.n = p.case, p.column, p.unit, #a
        row.a, row.b = stats.describe(fa), stats.describe(fb)
        rows[#rows + 1] = row
      end
    end
  end
  if #rows == 0 then return nil end
  verdicts.mark_decision(rows, opts.decision)
  local judged = verdicts.judge(rows, { ALPHA = opts.ALPHA, FAIL_ABOVE = opts.FAIL_ABOVE, what = "pairs",
    prefix = "B/A " })
  -- each side named by its knobs, so that "A" in the case column is a case (a cycle), never a side
  local name_a = doc.ab.a ~= "" and doc.ab.a or "the run's own knobs"
  local name_b = doc.ab.b ~= "" and doc.ab.b or "the run's own knobs"
  local lines = { "",
    ("| case | column | unit | side A: %s, median [95 %%] | side B: %s, median [95 %%] | B/A %% [95 %%] (pairs) | p "
      .. "| q | verdict |"):format(name_a, name_b),
    "|---|---|---|---|---|---|---|---|---|" }
  local function cell(d, unit)
    return ("%s [%s, %s]"):format(units.cell(d.median, unit), units.cell(d.lo, unit), units.cell(d.hi, unit))
  end
  for _, row in ipairs(rows) do
    local change = row.ratio and ("%+.1f [%+.1f, %+.1f] (%d)"):format(100 * (row.ratio - 1), 100 * (row.lo - 1),
      100 * (row.hi - 1), row.n) or row.diff and ("B - A %s (%d)"):format(verdicts.signed(row.diff, row.unit), row.n)
      or "–"
    lines[#lines + 1] = ("| %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(row.case, row.column, row.unit,
      cell(row.a, row.unit), cell(row.b, row.unit), change, row.p and ("%.3g"):format(row.p) or "–",
      row.q and ("%.3g"):format(row.q) or "–", row.verdict)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = ("side A: %s; side B: %s; both in every repetition, A first in odd ones, B first in even ones "
    .. "(ABBA). B/A: the median of the per-repetition ratios, 95 %% interval by bootstrap of the pairs; p: Wilcoxon "
    .. "signed-rank test of the log ratios (of B - A where a value is 0 or below: `B - A`); q: "
    .. "Benjamini-Hochberg over the %d rows judged. If nothing changed about %.1f rows would have p < %g by "
    .. "chance; %d row(s) have q <= %g."):format(
    name_a, name_b,
    judged.judged, judged.judged * opts.ALPHA, opts.ALPHA, judged.called, opts.ALPHA)
  if judged.same > 0 then
    lines[#lines] = lines[#lines] .. (" %d row(s) the same within ±δ: the 90 %% t interval of the mean log ratio "
      .. "inside ±δ (two one-sided tests), δ %s."):format(judged.same, opts.EQUIV and ("= EQUIV = %g %%"):format(
      opts.EQUIV) or ("= the smallest change these pairs detect with 80 %% power (stated up to %d %%)"):format(
      verdicts.SAME_MAX))
  end
  local legend = verdicts.legend(rows)
  if legend then lines[#lines + 1] = legend end
  if #judged.decision > 0 then
    lines[#lines + 1] = "decision row(s): " .. table.concat(stats.map(judged.decision, function(r)
      return ("%s %s: %s"):format(r.case, r.column, r.verdict) end), "; ")
      .. "; the gate and the exit status follow them, the other rows are reported as they stand."
  end
  return lines, judged.failures, judged.unjudged, rows
end

-- The paired table under a run's own table (markdown).
function ab.markdown(plan, rows)
  local lines = ab.report({ ab = { a = plan.a, b = plan.b }, rows = rows }, { ALPHA = ab.ALPHA, SEED = 1,
    decision = verdicts.decision_names(plan.decision) })
  if not lines then return "" end
  return "\n**AB: the paired change B/A**\n" .. table.concat(lines, "\n") .. "\n"
end

return ab
