-- compare.lua's report: what it found on a published run against its
-- repeats, worded for the published pages. v: compare.lua's verdicts, as the
-- publishing wing gathers them (rows, pairs, cal, text, and each "case
-- column" pair by pair); say: the pages' wording (count, round), given by
-- whoever prints them.
local verdicts = require "verdicts"

local report = {}

-- A markdown table line's cells, trimmed; nil for a line that is not one.
local function cells_of(l)
  if not l:match("^|.*|$") then return nil end
  local out = {}
  for c in l:sub(2, -2):gmatch("([^|]*)|?") do out[#out + 1] = c:match("^%s*(.-)%s*$") end
  if out[#out] == "" then out[#out] = nil end
  return out
end

local function significant(verdict)
  return verdicts.kind(verdict) == "different"
end

-- One row's verdicts, pair by pair, as "compare.lua, the published run
-- against each repeat: no significant difference (p 0.137; p 0.0613)".
function report.verdict(v, key, say)
  local rows = v[key]
  if v.pairs == 0 then return "one run: nothing to compare" end
  if not rows then error("publish: compare.lua has no row " .. key, 0) end
  local same = say.count(rows, function(r)
    local kind = verdicts.kind(r.verdict)
    return kind == "same" or kind == "undecided"
  end)
  local unjudged = say.count(rows, function(r) return verdicts.kind(r.verdict) == "unjudged" end)
  local details = {}
  for _, r in ipairs(rows) do
    local p = r.p and "p " .. say.round(r.p) or "no p"
    details[#details + 1] = significant(r.verdict)
      and ("%s, %s"):format(r.verdict:gsub("(%d+%.?%d*)", function(n) return say.round(tonumber(n)) end), p)
      or r.verdict:match("^%?") and r.verdict or p
  end
  local phrase = unjudged == #rows and "not judged"
    or same == #rows and "no significant difference"
    or same + unjudged == 0 and "a significant difference"
    or ("no significant difference in %d of %d"):format(same, #rows)
  return ("compare.lua, the published run against each repeat: %s (%s)"):format(phrase, table.concat(details, "; "))
end

-- compare.lua's table cut to what it found: every row significant in any
-- comparison, and pass 1's; command: how it was run, whole: where its whole
-- output is kept.
function report.cut_finding(v, say, command, whole)
  local keep, shown = {}, 0
  for _, r in ipairs(v.rows) do
    if significant(r.verdict) then shown = shown + 1 end
    if significant(r.verdict) or (r.case == "A" and r.column == "pass1") then
      keep[r.case .. " " .. r.column] = true
    end
  end
  local lines = {}
  for l in v.text:gmatch("[^\n]+") do
    local cells = cells_of(l)
    if l:match("^old: ") or l:match("^new: ") or l:match("^geomean")
      or (cells and keep[cells[1] .. " " .. tostring(cells[2])])
      or (cells_of(l) or {})[1] == "case" then
      lines[#lines + 1] = l
    end
  end
  local unjudged = say.count(v.rows, function(r) return verdicts.kind(r.verdict) == "unjudged" end)
  local constant = say.count(v.rows, function(r) return r.verdict:match("^= %(one value%)") ~= nil end)
  local found = ("%d with a significant change; of the %d rows over the comparisons, %d could not be judged (%s), "
    .. "so they say nothing on whether the runs differ, and %d held one value"):format(shown, #v.rows, unjudged,
      v.cal and "the calibration has no spread for them" or "one run a side, and no calibration applies", constant)
  return ("%s, cut to pass 1's rows and every row with a significant change: %s (the whole output: `%s`):\n\n"
    .. "```\n%s\n```"):format(command, found, whole, table.concat(lines, "\n"))
end

-- The published run against each of its repeats, every row judged against
-- the calibration kept beside them (cal_file, shown; none: not judged); dir:
-- where the runs are.
function report.repeats_finding(v, say, dir, cal_file)
  if not v.cal then
    return ("The %d repeats are not judged against the published run: `%s/calibrations/` holds no calibration of "
      .. "the published configuration that every run matches (`make publish-kind` makes one)."):format(v.pairs, dir)
  end
  local judged, called, seen = {}, {}, {}
  for _, r in ipairs(v.rows) do if r.p then judged[#judged + 1] = r end end
  for _, r in ipairs(judged) do
    local k = r.case .. " " .. r.column
    if verdicts.kind(r.verdict) == "different" and not seen[k] then
      seen[k] = true
      called[#called + 1] = ("%s in %d of %d"):format(k, say.count(v[k], function(x)
        return verdicts.kind(x.verdict) == "different" end), v.pairs)
    end
  end
  local function n(kind) return say.count(judged, function(r) return verdicts.kind(r.verdict) == kind end) end
  return ("The published run against each of its %d repeats, one run a side judged against the published "
    .. "configuration's calibration (`%s`, %d A/A runs of `%s` made %s; a t test per row with the calibration's "
    .. "run-to-run spread, Benjamini-Hochberg over each comparison's rows): of %d judged rows, %d called different, "
    .. "%d the same within ±δ, %d undecided; pass 1: %s. Every one of these runs is of one tree and one "
    .. "configuration, so a row called different is a false call: %s.")
    :format(v.pairs, cal_file, v.cal.runs or 0, tostring(v.cal.script), tostring(v.cal.date),
      #judged, n("different"), n("same"), n("undecided"),
      (report.verdict(v, "A pass1", say):gsub("^compare%.lua, the published run against each repeat: ", "")),
      #called == 0 and "none was made" or table.concat(called, ", ")
        .. "; the calibration's runs, made at another time, spread less than these did")
end

return report
