-- actouch.lua's report: its finding, for the published pages and a user's own run.
local report = {}

-- The cycles' two differences taken apart on fresh mappings. say: the
-- published pages' wording (vinterval, row, value), given by whoever prints it.
function report.finding(doc, say)
  local function effect(name, what)
    local v = say.value(doc, name)
    return ("%s changed it by a factor of %s (%s)"):format(what, say.vinterval(v), (v.lo <= 1 and v.hi >= 1)
      and "an interval holding 1: no effect shown" or "an interval without 1")
  end
  return ("`actouch.lua` takes the cycles' two differences apart on fresh mappings, shuffled in every "
    .. "repetition (%d repetitions of one run, time on the CPU): %s; %s.")
    :format(say.row(doc, "plain (A)", "oncpu").n, effect("timed_over_plain", "timing every page as cycle C does"),
      effect("after_munmap_over_fresh", "a munmap of another buffer just before (as cycle C has)"))
end

return report
