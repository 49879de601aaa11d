-- The markdown made from a raw file alone, its RESULT lines read back
-- (report.parse_all): summary.table for any script (a line per case, a
-- column per column) and summary.cycles for the benchmark's own layout.
-- Every cell goes through units.cell, so a unit has one precision wherever
-- it appears.
local report = require "report"
local units = require "units"

local summary = {}

-- Rows by case and column, values by name, cases in the order they came.
function summary.index(raw)
  local by, rows, values, cases, seen, unsupported = {}, {}, {}, {}, {}, {}
  local meta = { note = {}, column = {}, warning = {} }
  for _, r in ipairs(report.parse_all(raw)) do
    if meta[r.meta] and type(meta[r.meta]) == "table" then
      table.insert(meta[r.meta], r)
    elseif r.meta then
      meta[r.meta] = r.text
    elseif r.value then
      values[r.value] = values[r.value] or {}
      table.insert(values[r.value], r)
    elseif r.case then
      if not seen[r.case] then seen[r.case] = true; cases[#cases + 1] = r.case end
      if r.unsupported then unsupported[r.case] = r.unsupported end
      if r.column then by[r.case .. "\0" .. r.column] = r; rows[#rows + 1] = r end
    end
  end
  return {
    cases = cases, unsupported = unsupported, values = values, meta = meta, rows = rows,
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

-- What the intervals are, from the first row that has one.
local function interval_note(rows)
  for _, r in ipairs(rows) do
    if r.ci_ranks then
      local l, u = r.ci_ranks:match("(%d+),(%d+)")
      return ("Intervals: [lo, hi] is a distribution-free confidence interval of the median: the values of "
        .. "ranks %s and %s of the %d sorted repetitions, which cover the median with probability %s %% "
        .. "(95 %% needs at least 6 repetitions)."):format(l, u, r.n, units.cell(100 * r.ci_coverage, "%"))
    end
  end
end

local function own_time(ix)
  local v = ix.value("own_time")
  if not v then return nil end
  return ("Wall time %s s: %s s in the timed windows, the map and release calls and the read-backs; "
    .. "%s %% in the runner itself."):format(units.cell(v.wall_ms / 1000, "ratio"),
    units.cell(v.work_ms / 1000, "ratio"), units.cell(v.x, "%"))
end

local function head(ix)
  return { ("**%s**, finished %s UTC  "):format(ix.meta.title, ix.meta.date), ix.meta.machine .. ".", "" }
end

-- "k of n" repetitions flagged as disturbed, for a case.
local function noisy(ix, case)
  for _, v in ipairs(ix.values.noisy or {}) do
    if v.case == case then return ("%s of %s"):format(units.cell(v.x, "count"), units.cell(v.of, "count")) end
  end
  return "–"
end

local function tail(ix, out)
  for _, n in ipairs(ix.meta.note) do out[#out + 1] = n.text; out[#out + 1] = "" end
  local note = interval_note(ix.rows)
  if note then out[#out + 1] = note; out[#out + 1] = "" end
  for _, w in ipairs(ix.meta.warning) do out[#out + 1] = "**Warning:** " .. w.text; out[#out + 1] = "" end
  out[#out + 1] = own_time(ix)
  out[#out + 1] = ""
  out[#out + 1] = ix.verdict .. "."
  return table.concat(out, "\n") .. "\n"
end

-- Any script: a line per case, a column per column, then the notes.
function summary.table(raw)
  local ix = summary.index(raw)
  local out = head(ix)
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
    cells[#cells + 1] = noisy(ix, case)
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  out[#out + 1] = ""
  return tail(ix, out)
end

-- cycles.lua ---------------------------------------------------------------

local CYCLE_ROWS = { -- cycle, column, and a label where the column's own would not tell
  { "A", "mmap" }, { "A", "pass1" }, { "A", "pass2" }, { "A", "pass2r" },
  { "A", "fill", "pass 3: fill of touched pages" }, { "A", "munmap" }, { "B", "fill", "fill of a fresh mapping" },
  { "D", "malloc" }, { "D", "touch1" }, { "D", "touch2" }, { "D", "free" },
}

local RATIOS = {
  { "first_touch", "pass 1 / pass 2 repeated, ns per page" },
  { "fill_bandwidth", "touched fill / fresh fill, GB/s" },
  { "fresh_fill_time", "fresh fill / (pass 1 + touched fill), time" },
  { "malloc_first_touch", "first touch after malloc / first touch after mmap, ns per page" },
  { "munmap_share", "munmap / pass 1, ns per page" },
}

local function faults(ix, case, column)
  local f = ix.row(case, column .. "_faults")
  if not f then return "–" end
  return ("%s / %s"):format(units.cell(f.median, "faults"), units.cell(f.max, "faults"))
end

local function stalls_of(ix, case, column)
  for _, v in ipairs(ix.values.stalls or {}) do
    if v.case == case and v.column == column then
      return ("%s of %s (worst %s ns/page)"):format(units.cell(v.x, "count"), units.cell(v.of, "count"),
        units.cell(v.worst, "ns/page"))
    end
  end
  return "–"
end

function summary.cycles(raw)
  local ix = summary.index(raw)
  local out = head(ix)
  local function put(s) out[#out + 1] = s end
  local ghz = ix.value("clock_ghz")
  out[2] = ("%s; clock estimate %s GHz (%s); %s."):format(ix.meta.machine, units.cell(ghz.x, "GHz"), ghz.source,
    ix.meta.clock)
  put("| cycle | pass | unit | median [lo, hi] | min | cv % | faults (median / max) | cycles/page (of the min) "
    .. "| reps above stall threshold (worst) | noisy reps |")
  put("|---|---|---|---|---|---|---|---|---|---|")
  for _, cr in ipairs(CYCLE_ROWS) do
    local r = ix.row(cr[1], cr[2])
    if r then
      put(("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(cr[1], cr[3] or r.label, r.unit, shown(r),
        units.cell(r.min, r.unit), units.cell(r.cv, "%"), faults(ix, cr[1], cr[2]),
        r.unit == "ns/page" and units.cell(r.min * ghz.x, "cycles") or "–", stalls_of(ix, cr[1], cr[2]),
        noisy(ix, cr[1])))
    end
  end
  put("")
  local t = ix.value("stall_threshold")
  if t then
    put(("Stall threshold: %s ns/page (%s), for the passes that take no counted faults."):format(
      units.cell(t.x, "ns/page"), t.from == "auto" and "pass 2 repeated's min plus 2.5 % of pass 1's min"
      or "STALL_NS"))
    put("")
  end
  local thp = ix.value("thp_page")
  if thp then
    put(("Pages obtained (cycle A, THP=%s): %s of %s bytes in huge pages at the median, so the page is %s; "
      .. "the faults this predicts for pass 1: %s; thp_fault_alloc per rep (median): %s."):format(thp.asked,
      units.cell(thp.thp_bytes, "bytes"), units.cell(thp.bytes, "bytes"),
      thp.mixed and "mixed" or units.cell(thp.x, "bytes") .. " bytes", units.cell(thp.faults_expected, "faults"),
      units.cell(thp.thp_fault_alloc, "count")))
    put("")
  end
  if ix.row("C", "pass1") then
    put("Cycle C, one timestamp per page (each sample is the store plus one clock reading):")
    put("")
    put(("| pass | whole pass ns/page | faults (median / max) | median page ns | p90 page ns | p99 page ns "
      .. "| pages above %s ns, %% (min – max over reps) | of them, more than the pass's faults | their mean ns "
      .. "| runs they form | longest run, pages (median / worst) |"):format(units.cell(ix.value("slow_ns").x, "ns")))
    put("|---|---|---|---|---|---|---|---|---|---|---|")
    for _, p in ipairs { "pass1", "pass2" } do
      local function row(k) return ix.row("C", p .. "_" .. k) end
      -- A slow page beyond the pass's fault count cannot have been a fault: it is labelled as such.
      local pages = ix.row("C", p .. "_longest") and ix.value("slow_ns").pages
      local slow_pages = pages and row("slow_pct").median * pages / 100
      local unexplained = slow_pages and math.max(0, slow_pages - ix.row("C", p .. "_faults").median)
      put(("| %s | %s | %s | %s | %s | %s | %s – %s | %s | %s | %s | %s / %s |"):format(ix.row("C", p).label,
        shown(ix.row("C", p)), faults(ix, "C", p), shown(row("median_page")), shown(row("p90")), shown(row("p99")),
        units.cell(row("slow_pct").min, "%"), units.cell(row("slow_pct").max, "%"),
        unexplained and (unexplained == 0 and "none" or ("%s pages (median): not faults"):format(
          units.cell(unexplained, "pages"))) or "–",
        shown(row("slow_mean")),
        units.cell(row("runs").median, "count"), units.cell(row("longest").median, "pages"),
        units.cell(row("longest").max, "pages")))
    end
    put("")
  end
  local same = ix.value("same_block")
  if same then
    put(("Cycle D: malloc returned the address just freed in %s of %s reps; malloc %s us, free %s us (medians).")
      :format(units.cell(same.x, "count"), units.cell(same.of, "count"),
      units.cell(ix.row("D", "malloc").median, "us"), units.cell(ix.row("D", "free").median, "us")))
    put("")
  end
  local lines = {}
  for _, r in ipairs(RATIOS) do
    local v = ix.value(r[1])
    if v then
      lines[#lines + 1] = ("- %s: **%s [%s, %s]**%s"):format(r[2], units.cell(v.x, "ratio"),
        units.cell(v.lo, "ratio"), units.cell(v.hi, "ratio"),
        v.of_minima and (" (of the minima: %s)"):format(units.cell(v.of_minima, "ratio")) or "")
    end
  end
  if #lines > 0 then
    put("Headline, each ratio taken within every repetition (median [lo, hi] over the repetitions):")
    put("")
    for _, l in ipairs(lines) do put(l) end
    put("")
  end
  return tail(ix, out)
end

return summary
