-- AB: two settings interleaved in one run, the way to compare settings that
-- can change inside a run. AB="A knobs | B knobs" (an empty side: the run's
-- own knobs) runs both sides in every repetition, every case of the
-- repetition under one side and then under the other, in ABBA order
-- (repetition 1: A then B, repetition 2: B then A, ...), so a drift over the
-- run falls on both sides alike; each side's knobs are set before its half
-- and the run's own restored after. The rows keep both sides' values by repetition index, and the
-- paired change is the median of the per-repetition ratios B/A, with a
-- bootstrap interval and the p of a Wilcoxon signed-rank test of their logs.
local inference = require "inference"
local stats = require "stats"
local units = require "units"

local ab = {}

-- Knobs that cannot change inside a run: its size, its length, where its
-- files go, its order, and what it measures around every pass.
ab.FIXED = { MIB = true, REPS = true, QUICK = true, RESULTS = true, README = true, PUBLISH = true, SEED = true,
  COUNTERS = true, AB = true, CYCLES = true }

-- "THP=never | THP=16K" -> {{name, text}, ...} per side, or nil and why.
function ab.parse(text)
  local a, b = text:match("^([^|]*)|([^|]*)$")
  if not a then return nil, "expected 'A knobs | B knobs' (one |)" end
  local sides = {}
  for i, part in ipairs { a, b } do
    local list = {}
    for word in part:gmatch("%S+") do
      local name, value = word:match("^([%u_][%u%d_]*)=(.*)$")
      if not name then return nil, ("'%s': expected NAME=value"):format(word) end
      list[#list + 1] = { name, value }
    end
    sides[i] = list
  end
  if #sides[1] == 0 and #sides[2] == 0 then return nil, "both sides are empty: nothing to compare" end
  return sides
end

-- The sides' order in repetition i (1-based): A B, B A, A B, ...
function ab.order(i)
  if i % 2 == 1 then return { "A", "B" } end
  return { "B", "A" }
end

-- An AB run's JSON: its rows carry a side.
function ab.is_ab(doc)
  return type(doc.ab) == "table"
end

local LOWER_BETTER = { ["ns/page"] = true, ns = true, us = true, ms = true, cycles = true }
local HIGHER_BETTER = { ["GB/s"] = true, ["faults/s"] = true }

-- The paired table of one AB run. Returns the rows that fail FAIL_ABOVE and
-- the rows that cannot be judged.
function ab.compare(doc, opts)
  print(("AB run: %s (%s %s, %s)\n  A: %s\n  B: %s\n  order: %s"):format(doc.path, doc.script, doc.run or "",
    doc.date or "?", doc.ab.a ~= "" and doc.ab.a or "(the run's own knobs)",
    doc.ab.b ~= "" and doc.ab.b or "(the run's own knobs)", tostring(doc.ab.order)))
  local pairs_, order = {}, {}
  for _, r in ipairs(doc.rows) do
    local key = r.case .. "\0" .. r.column
    if not pairs_[key] then
      pairs_[key] = { case = r.case, column = r.column, unit = r.unit }
      order[#order + 1] = pairs_[key]
    end
    if r.side == "A" or r.side == "B" then pairs_[key][r.side] = r end
  end
  local rows, ps = {}, {}
  for i, p in ipairs(order) do
    if p.A and p.B then
      local a, b = {}, {}
      for rep, v in pairs(p.A.values) do
        local w = p.B.values[rep]
        if math.type(rep) == "integer" and type(v) == "number" and type(w) == "number" then
          a[#a + 1], b[#b + 1] = v, w
        end
      end
      if #a > 0 then
        local row = { case = p.case, column = p.column, unit = p.unit, n = #a, a = stats.describe(p.A.finite),
          b = stats.describe(p.B.finite) }
        local positive = true
        for k = 1, #a do if a[k] <= 0 or b[k] <= 0 then positive = false end end
        if positive then
          row.ratio, row.lo, row.hi = inference.paired_ratio(a, b, { seed = opts.SEED + i })
          local d = {}
          for k = 1, #a do d[k] = math.log(b[k] / a[k]) end
          row.p = inference.wilcoxon(d)
          ps[#ps + 1] = row.p
          -- the smallest p a signed-rank test of n pairs can give: 2 / 2^n
          if 2 / 2 ^ #a > opts.ALPHA then row.unjudged = ("? %d pairs cannot reach %g"):format(#a, opts.ALPHA) end
        end
        rows[#rows + 1] = row
      end
    end
  end
  if #rows == 0 then
    io.stderr:write(("compare.lua: %s: an AB run with no row measured on both sides\n"):format(doc.path))
    os.exit(2, true)
  end
  local q, k = inference.bh(ps), 0
  local failures, unjudged, called = {}, {}, 0
  print("\n| case | column | unit | A median [95 %] | B median [95 %] | B/A % [95 %] (pairs) | p | q | verdict |")
  print("|---|---|---|---|---|---|---|---|---|")
  local function cell(d, unit)
    return ("%s [%s, %s]"):format(units.cell(d.median, unit), units.cell(d.lo, unit), units.cell(d.hi, unit))
  end
  for _, row in ipairs(rows) do
    local verdict = row.unjudged or "~"
    if row.p then
      k = k + 1
      row.q = q[k]
    end
    if row.q and row.q <= opts.ALPHA and not row.unjudged then
      called = called + 1
      verdict = ("%+.1f %%"):format(100 * (row.ratio - 1))
      local lower = LOWER_BETTER[row.unit] and true or (HIGHER_BETTER[row.unit] and false)
      if lower ~= nil and row.ratio ~= 1 then
        local worse = (row.ratio > 1) == lower
        verdict = verdict .. (worse and " (worse)" or " (better)")
        if worse and opts.FAIL_ABOVE and math.abs(100 * (row.ratio - 1)) > opts.FAIL_ABOVE then
          failures[#failures + 1] = ("%s %s: B/A %+.1f %% (p=%.3g, q=%.3g)"):format(row.case, row.column,
            100 * (row.ratio - 1), row.p, row.q)
        end
      end
    end
    local judged_side = LOWER_BETTER[row.unit] or HIGHER_BETTER[row.unit]
    if row.unjudged and judged_side then unjudged[#unjudged + 1] = row.case .. " " .. row.column end
    local change = row.ratio and ("%+.1f [%+.1f, %+.1f] (%d)"):format(100 * (row.ratio - 1), 100 * (row.lo - 1),
      100 * (row.hi - 1), row.n) or "–"
    print(("| %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(row.case, row.column, row.unit,
      cell(row.a, row.unit), cell(row.b, row.unit), change, row.p and ("%.3g"):format(row.p) or "–",
      row.q and ("%.3g"):format(row.q) or "–", verdict))
  end
  print(("\nB/A: the median of the per-repetition ratios (A and B of the same repetition paired), 95 %% "
    .. "interval by bootstrap of the pairs; p: Wilcoxon signed-rank test of the log ratios (exact); "
    .. "q: Benjamini-Hochberg over the %d rows judged. If nothing changed about %.1f rows would have p < %g by "
    .. "chance; %d row(s) have q <= %g.\n"):format(#ps, #ps * opts.ALPHA, opts.ALPHA, called, opts.ALPHA))
  return failures, unjudged
end

return ab
