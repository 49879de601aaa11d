-- The markdown made from a raw file alone, its RESULT lines read back
-- (report.parse_all): summary.table for any script (a line per case, a
-- column per column), and the pieces a script's own report module builds
-- its table from (summary.head, .shown, .noisy, .tail).
-- Every cell goes through units.cell, so a unit has one precision wherever
-- it appears.
local report = require "report"
local units = require "units"

local summary = {}

-- Rows by case and column, values by name, cases in the order they came.
function summary.index(raw)
  local by, rows, values, cases, seen, unsupported = {}, {}, {}, {}, {}, {}
  local meta, in_order = { note = {}, column = {}, warning = {} }, {}
  for _, r in ipairs(report.parse_all(raw)) do
    if meta[r.meta] and type(meta[r.meta]) == "table" then
      table.insert(meta[r.meta], r)
    elseif r.meta then
      meta[r.meta] = r.text
    elseif r.value then
      values[r.value] = values[r.value] or {}
      table.insert(values[r.value], r)
      table.insert(in_order, r)
    elseif r.case then
      if not seen[r.case] then seen[r.case] = true; cases[#cases + 1] = r.case end
      if r.unsupported then unsupported[r.case] = r.unsupported end
      if r.column then by[r.case .. "\0" .. r.column] = r; rows[#rows + 1] = r end
    end
  end
  return {
    cases = cases, unsupported = unsupported, values = values, meta = meta, rows = rows, in_order = in_order,
    verdict = raw:match("\n(CHECKSUMS [^\n]*)"),
    row = function(case, column) return by[case .. "\0" .. column] end,
    value = function(name) return values[name] and values[name][1] end,
  }
end

-- The row's median with its interval, "median [lo, hi]" (the median alone
-- when the interval is a point), or another statistic when asked.
local function shown(row, stat)
  if not row then return "–" end
  if row.n == 0 then return "no finite value" end
  local u = row.unit
  if stat and stat ~= "median" then return units.cell(row[stat], u) end
  if row.lo == row.hi then return units.cell(row.median, u) end
  return ("%s [%s, %s]"):format(units.cell(row.median, u), units.cell(row.lo, u), units.cell(row.hi, u))
end
summary.shown = shown

-- What the intervals are, from the rows of the count of repetitions most
-- rows have (a row of one value, where a count is taken once, has none).
local function interval_note(rows)
  local by_n, best = {}, nil
  for _, r in ipairs(rows) do
    if r.ci_ranks and r.n then
      by_n[r.n] = by_n[r.n] or { row = r, k = 0 }
      by_n[r.n].k = by_n[r.n].k + 1
      local b = by_n[best or r.n]
      if not best or by_n[r.n].k > b.k or (by_n[r.n].k == b.k and r.n > best) then best = r.n end
    end
  end
  if not best then return nil end
  local r, others = by_n[best].row, 0
  for n in pairs(by_n) do if n ~= best then others = others + 1 end end
  local l, u = r.ci_ranks:match("(%d+),(%d+)")
  return ("Intervals: [lo, hi] is a distribution-free confidence interval of the median: the values of "
    .. "ranks %s and %s of the %d sorted repetitions, which cover the median with probability %s %% "
    .. "(95 %% needs at least 6 repetitions)%s."):format(l, u, r.n, units.cell(100 * r.ci_coverage, "%"),
      others > 0 and "; rows of another count of repetitions have their own ranks, in the raw file" or "")
end

local function own_time(ix)
  local v = ix.value("own_time")
  if not v then return nil end
  return ("Wall time %s s: %s s in the timed windows, the map and release calls and the read-backs; "
    .. "%s %% in the runner itself."):format(units.cell(v.wall_ms / 1000, "ratio"),
    units.cell(v.work_ms / 1000, "ratio"), units.cell(v.x, "%"))
end

function summary.head(ix)
  return { ("**%s**, finished %s UTC  "):format(ix.meta.title, ix.meta.date), ix.meta.machine .. ".", "" }
end

-- "k of n" repetitions flagged as disturbed, for a case.
function summary.noisy(ix, case)
  for _, v in ipairs(ix.values.noisy or {}) do
    if v.case == case then return ("%s of %s"):format(units.cell(v.x, "count"), units.cell(v.of, "count")) end
  end
  return "–"
end

function summary.tail(ix, out)
  for _, n in ipairs(ix.meta.note) do out[#out + 1] = n.text; out[#out + 1] = "" end
  local note = interval_note(ix.rows)
  if note then out[#out + 1] = note; out[#out + 1] = "" end
  for _, w in ipairs(ix.meta.warning) do out[#out + 1] = "**Warning:** " .. w.text; out[#out + 1] = "" end
  out[#out + 1] = own_time(ix)
  out[#out + 1] = ""
  out[#out + 1] = ix.verdict .. "."
  return table.concat(out, "\n") .. "\n"
end

-- The ratios the script took (h:ratio: values in the unit ratio with an
-- interval), one line each, under the table.
function summary.ratios(ix, out)
  local any = false
  for _, v in ipairs(ix.in_order) do
    if v.unit == "ratio" and v.lo and v.hi then
      if not any then
        out[#out + 1] = "Ratios, each taken within every repetition (median [lo, hi] over the repetitions):"
        out[#out + 1] = ""
        any = true
      end
      local minima = v.of_minima and (" (of the minima: %s)"):format(units.cell(v.of_minima, "ratio")) or ""
      out[#out + 1] = ("- %s: **%s [%s, %s]**%s"):format(v.value, units.cell(v.x, "ratio"), units.cell(v.lo, "ratio"),
        units.cell(v.hi, "ratio"), minima)
    end
  end
  if any then out[#out + 1] = "" end
end

-- Any script: a line per case, a column per column, then the notes.
function summary.table(raw)
  local ix = summary.index(raw)
  local out = summary.head(ix)
  local names, rule = { "case" }, { "---" }
  for _, c in ipairs(ix.meta.column) do
    local unit = (c.unit == "count" or c.label:find(c.unit, 1, true)) and "" or " " .. c.unit
    names[#names + 1] = ("%s%s (%s)"):format(c.label, unit, c.shown == "median" and "median [lo, hi]" or c.shown)
    rule[#rule + 1] = "---"
  end
  names[#names + 1], rule[#rule + 1] = "noisy reps", "---"
  out[#out + 1] = "| " .. table.concat(names, " | ") .. " |"
  out[#out + 1] = "|" .. table.concat(rule, "|") .. "|"
  for _, case in ipairs(ix.cases) do
    local cells = { case }
    for i, c in ipairs(ix.meta.column) do
      cells[i + 1] = ix.unsupported[case] and (i == 1 and "not supported: " .. ix.unsupported[case] or "")
        or shown(ix.row(case, c.name), c.shown)
    end
    cells[#cells + 1] = summary.noisy(ix, case)
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  out[#out + 1] = ""
  summary.ratios(ix, out)
  return summary.tail(ix, out)
end

return summary
