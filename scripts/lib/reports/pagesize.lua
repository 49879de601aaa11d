-- pagesize.lua's report: its finding, for the published pages and a user's own run.
local report = {}

-- The line through each size's cost per fault, over the minima and over the
-- medians. say: the published pages' wording (round, value), given by whoever prints it.
function report.finding(doc, say)
  local R = say.round
  local function fit(stat)
    local fixed, zero = say.value(doc, "fit_fixed", "stat", stat), say.value(doc, "fit_zeroing", "stat", stat)
    local worst, at = 0, "none"
    for _, x in ipairs(doc.values) do
      if x.value == "fit_residual" and x.stat == stat and x.in_fit and math.abs(x.pct) > math.abs(worst) then
        worst, at = x.pct, x.case
      end
    end
    return ("%s ns + bytes / %s GB/s (the largest residual of a size in the fit: %s %% at %s)"):format(R(fixed.x),
      R(zero.x), R(worst), at)
  end
  local k4 = say.value(doc, "fit_fixed", "stat", "min")
  local base = k4.x + doc.page_size * k4.per_byte_ns
  return ("Over the minima a fault cost %s; over the medians, %s. By the minima's line a %d KiB fault "
    .. "costs %s ns, %s %% of it the fixed part. One run, %s repetitions.")
    :format(fit("min"), fit("median"), doc.page_size // 1024, R(base), R(100 * k4.x / base),
      tostring(doc.knobs and doc.knobs.REPS or "?"))
end

return report
