-- Regimes of a run's rows: where a row's repetitions fall into stretches at
-- different levels (a shift of the median that persists for several
-- repetitions), found on ranks (inference.regimes: binary segmentation
-- with a rank scan test, a permutation p per change). Named in the JSON
-- (row.regimes) and under the table, e.g. "A pass1: repetitions 1 and
-- 11–15 at 4427.4 ns/page, 2–10 at 2126.9 ns/page".
local inference = require "inference"
local units = require "units"

local regimes = {}

-- The level each change is tested at.
regimes.LEVEL = 0.05


-- The regimes of one row's values (its repetitions in order; a value that
-- is no number is skipped and its repetition left out of every span), or
-- nil. Each: {median, reps = {{first, last}, ...}, n, p}.
function regimes.of(unit, values)
  if not units.timed(unit) then return nil end
  local finite, rep = {}, {}
  for i, v in ipairs(values) do
    if type(v) == "number" then
      finite[#finite + 1] = v
      rep[#finite] = i
    end
  end
  if #finite < 6 then return nil end
  local found = inference.regimes(finite, { level = regimes.LEVEL })
  if not found then return nil end
  for _, r in ipairs(found) do
    for _, span in ipairs(r.reps) do span[1], span[2] = rep[span[1]], rep[span[2]] end
    table.sort(r.reps, function(a, b) return a[1] < b[1] end)
  end
  return found
end

-- Whether a row could be tested (for the count of rows tested).
function regimes.testable(row)
  return units.timed(row.unit) and (row.n or 0) >= 6
end

-- One sentence per row with regimes, then how many such rows chance alone
-- would give: rows = the run's rows, each with .regimes (or nil).
function regimes.sentences(rows)
  local out, tested = {}, 0
  for _, row in ipairs(rows) do
    if regimes.testable(row) then tested = tested + 1 end
    if row.regimes then
      local parts, ps = {}, {}
      for _, r in ipairs(row.regimes) do
        parts[#parts + 1] = ("%s at %s %s"):format(inference.spans(r.reps), units.cell(r.median, row.unit), row.unit)
        if r.p then ps[#ps + 1] = ("%.2g"):format(r.p) end
      end
      out[#out + 1] = ("Regimes: %s %s: repetitions %s (rank scan p = %s)"):format(row.case, row.column,
        table.concat(parts, ", "), table.concat(ps, ", "))
    end
  end
  if #out > 0 then
    out[#out + 1] = ("Regimes were looked for in %d rows at p < %g each: about %.1f of them would show a shift by "
      .. "chance. A shift that persists means the machine changed state during the run: compare runs, or "
      .. "interleave settings in one run (AB), rather than reading one run's median."):format(tested,
      regimes.LEVEL, tested * regimes.LEVEL)
  end
  return out
end

return regimes
