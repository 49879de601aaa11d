-- The reporting half of the harness: from a run's records, the rows and
-- their statistics (computed once), the warnings a reader needs, the raw
-- file of RESULT lines, the table made from it, the JSON with every
-- repetition's record and its case's parameters, and the plots.
local ft = require "ft"
local json = require "json"
local plots = require "plots"
local ab = require "ab"
local display = require "display"
local provenance = require "provenance"
local regimes = require "regimes"
local report = require "report"
local reports = require "reports"
local runfiles = require "runfiles"
local stats = require "stats"
local summary = require "summary"
local units = require "units"

local results = {}

results.VERDICT_OK = "CHECKSUMS OK: %d read-backs matched the values written"
local VERDICT_OK = results.VERDICT_OK
results.VERDICT_NONE = report.VERDICT_NONE

-- A checksum mismatch: said on stderr and, unless publishing, the failed
-- verdict put on record in all three files alike.
function results.failed(h, msg)
  io.stderr:write("\n" .. h.script .. ": " .. tostring(msg) .. "; no results written, README left alone\n")
  if h.plan.publish then return end
  local verdict = "CHECKSUMS FAILED: " .. msg
  runfiles.write(h.plan, { { h.prefix .. "raw.txt", h.header .. "\n" .. verdict .. "\n" },
    { h.prefix .. "summary.md", ("**%s**\n\n%s. No results.\n\n%s\n"):format(h.title, verdict,
      provenance.describe(h.provenance)) },
    { h.prefix .. "results.json", json.encode { script = h.script, run = h.run_name, verdict = verdict,
      provenance = h.provenance } .. "\n" } })
end

local function column_values(h, col, records)
  local values, any = {}, false
  for i, r in ipairs(records) do
    local v
    if type(col.from) == "function" then v = col.from(r)
    elseif r[col.from] ~= nil then v = units.convert(col.unit, r[col.from], h.bytes, h.pages) end
    if v ~= nil then any = true end
    values[i] = v
  end
  return any and values or nil
end

-- The medians over the repetitions of what perf counted around a timed step.
local COUNTERS = { "page_faults", "context_switches", "cpu_migrations", "task_clock_ns" }

local function counter_medians(records, key)
  if type(key) ~= "string" or not (records[1] and records[1][key .. "_counters"]) then return nil end
  local out = {}
  for _, name in ipairs(COUNTERS) do
    out[name] = stats.median(stats.map(records, function(r) return r[key .. "_counters"][name] end))
  end
  return out
end

-- A column whose field no case that ran records is a misspelt name, not a
-- silent '–' in every line of the table: an error naming what was recorded.
-- Checked when every case ran (one not supported may be the column's); a
-- column declared optional (recorded only by some runs) is exempt.
local function misspelt(h, recorded, has_row, when)
  for _, col in ipairs(h.cols) do
    if type(col.from) == "string" and not col.optional and not has_row[col.name] and not recorded[col.from] then
      local names = {}
      for k in pairs(recorded) do names[#names + 1] = k end
      table.sort(names)
      error(("%s: column %s names the field '%s', which no case records (they record: %s)%s")
        :format(col.at or h.script, col.name, col.from, table.concat(names, ", "), when), 0)
    end
  end
end

local function check_columns(h, rows)
  local ran, recorded = false, {}
  for _, case in ipairs(h.cases) do
    if case.unsupported or #case.records == 0 then return end -- the column may be the missing case's
    for _, r in ipairs(case.records) do
      ran = true
      for k in pairs(r) do recorded[k] = true end
    end
  end
  if not ran then return end
  local has_row = {}
  for _, row in ipairs(rows) do has_row[row.column] = true end
  misspelt(h, recorded, has_row, "")
end

-- The same check after the first repetition, before the others run: the
-- fields its cases set (nil included). Not when a case did not run in it.
function results.check_first(h, keys)
  for _, case in ipairs(h.cases) do
    if case.unsupported then return end
  end
  local recorded = {}
  for k in pairs(keys) do
    if type(k) == "string" and k ~= "_h" then recorded[k] = true end
  end
  recorded.noise = true
  if next(keys) then
    misspelt(h, recorded, {}, h.warmup > 0 and " after the warm-up" or " after the first repetition")
  end
end

-- The rows: a case's column over the repetitions, with its statistics.
-- Values that are not finite stay in .values (JSON: null with the reason)
-- and out of the statistics.
function results.rows(h)
  local rows = {}
  for _, case in ipairs(h.cases) do
    local done = {} -- a column named twice shows another statistic of the same row
    for _, col in ipairs(h.cols) do
      local values = not done[col.name] and #case.records > 0 and column_values(h, col, case.records)
      done[col.name] = true
      if values then
        local finite, nonfinite = {}, {}
        for i = 1, #case.records do
          local v = values[i]
          local nf = type(v) == "number" and units.nonfinite(v)
          if nf then -- kept in the JSON as null, the repetition and the value beside it
            values[i] = json.null
            nonfinite[#nonfinite + 1] = { rep = i, value = nf }
          elseif type(v) == "number" then
            finite[#finite + 1] = v
          end
        end
        local row = #finite > 0 and stats.describe(finite) or { n = 0 }
        row.nonfinite = #nonfinite > 0 and nonfinite or nil
        row.case, row.column, row.label, row.unit = case.name, col.name, col.label, col.unit
        row.shown = col.shown
        row.values = values
        row.regimes = regimes.of(col.unit, values)
        row.side, row.ab_case = case.side, case.ab_case
        row.counters = counter_medians(case.records, col.from)
        rows[#rows + 1] = row
      end
    end
  end
  check_columns(h, rows)
  return rows
end


local ROW_FIELDS = { "n", "min", "median", "lo", "hi", "ci_ranks", "ci_coverage", "max", "mean", "cv" }

function results.row_line(row)
  local fields = { { "case", row.case }, { "column", row.column }, { "label", row.label }, { "unit", row.unit } }
  for _, k in ipairs(ROW_FIELDS) do fields[#fields + 1] = { k, row[k] } end
  for _, k in ipairs(COUNTERS) do fields[#fields + 1] = { "perf_" .. k, row.counters and row.counters[k] } end
  return report.line(fields)
end

-- How many of a case's repetitions were disturbed (provenance.noise).
local function noisy(case)
  local k = 0
  for _, r in ipairs(case.records) do
    if r.noise.flagged then k = k + 1 end
  end
  return k
end

-- What a reader must know before trusting the table, in words, as
-- hyperfine says it: rows that vary a lot, cases often disturbed.
local CV_WARN, NOISY_WARN = 10, 0.2

-- The stall threshold: the script's own (a value stall_threshold), or the
-- seed's rule over the run's passes: the fastest pass without faults plus
-- 2.5 % of the fastest pass with them, per page.
local STALL_SHARE = 0.025

local function fault_free_passes(h)
  local free, base, cost = {}, nil, nil
  for _, case in ipairs(h.cases) do
    for _, col in ipairs(h.cols) do
      local row = col.unit == "ns/page" and type(col.from) == "string" and h.pass_keys[col.from]
        and h:row(case.name, col.name)
      local faults = {}
      for _, r in ipairs(row and case.records or {}) do faults[#faults + 1] = r[col.from .. "_faults"] end
      if row and row.n > 0 and #faults == #case.records then
        if stats.median(faults) == 0 then
          free[#free + 1] = row
          base = math.min(base or math.huge, row.min)
        else
          cost = math.min(cost or math.huge, row.min)
        end
      end
    end
  end
  return free, base and cost and base + STALL_SHARE * cost
end

local function stall_warnings(h)
  local free, threshold = fault_free_passes(h)
  local from = "the fastest pass without faults plus 2.5 % of the fastest with them"
  for _, v in ipairs(h.values) do
    if v[1][2] == "stall_threshold" then threshold, from = v[3][2], "the script's" end
  end
  local out = {}
  for _, row in ipairs(threshold and free or {}) do
    if row.median > threshold then
      out[#out + 1] = ("%s %s took no faults yet cost %s ns/page (median), above the stall threshold of %s ns/page "
        .. "(%s): something other than a page fault is in it (a hypervisor's page tables, a stall, a page "
        .. "mapped without a fault counted)."):format(row.case, row.column, units.cell(row.median, "ns/page"),
        units.cell(threshold, "ns/page"), from)
    end
  end
  return out
end

-- The clock estimate again at the end: moved by more than its spread at the
-- start, the run's cycles per page rest on a clock that changed under it.
local function clock_warning(h)
  if not h.ghz_start then return nil end
  local now = { (ft.clock_estimate()), (ft.clock_estimate()), (ft.clock_estimate()) }
  local start = h.ghz_start
  local spread = math.max(stats.max(start) - stats.min(start), stats.max(now) - stats.min(now))
  local moved = stats.median(now) - stats.median(start)
  if math.abs(moved) <= spread then return nil end
  return ("the clock estimate moved from %s GHz at the start to %s GHz at the end, more than its own spread "
    .. "(%s GHz): cycles per page use the start's; the host changed the guest's speed during the run, so "
    .. "compare runs with care or give CLOCK_GHZ."):format(units.cell(stats.median(start), "GHz"),
    units.cell(stats.median(now), "GHz"), units.cell(spread, "GHz"))
end

local function warnings(h)
  local out, varying = {}, {}
  for _, row in ipairs(h.rows) do
    if units.timed(row.unit) and row.n > 1 and row.cv > CV_WARN then
      varying[#varying + 1] = ("%s %s (%s %%)"):format(row.case, row.column, units.cell(row.cv, "%"))
    end
  end
  if #varying > 0 then
    out[#out + 1] = ("%d row(s) vary by more than %d %% (cv) over the repetitions: %s. Their minima and "
      .. "medians may be far apart: look at the per-repetition values in the JSON, rerun on a quieter "
      .. "machine, or with more REPS."):format(#varying, CV_WARN, table.concat(varying, ", "))
  end
  for _, sentence in ipairs(regimes.sentences(h.rows)) do out[#out + 1] = sentence end
  for _, sentence in ipairs(stall_warnings(h)) do out[#out + 1] = sentence end
  out[#out + 1] = clock_warning(h)
  for _, case in ipairs(h.cases) do
    local k, n = noisy(case), #case.records
    if n > 0 and k / n > NOISY_WARN then
      out[#out + 1] = ("%s: %d of %d repetitions ran while the host stole more than %d %% of the time or "
        .. "other processes kept more than %d %% of a CPU busy; the figures may not be this machine's "
        .. "alone."):format(case.name, k, n, provenance.STEAL_PCT, provenance.FOREIGN_PCT)
    end
  end
  return out
end

-- The knobs as the run used them, in order; RESULTS and README only when
-- given; not FORMAT and QUIET, which change what is printed, not measured.
local function knob_values(h)
  local out = {}
  for _, k in ipairs(h.spec) do
    if (k.kind ~= "path" or h.cfg.given[k.name]) and not k.shown_only then out[#out + 1] = { k.name, h.cfg[k.name] } end
  end
  return out
end

-- The raw file's knobs line from {name, value} pairs.
function results.knobs_line(list)
  return "knobs: " .. report.line(list):sub(#"RESULT " + 1)
end

-- The raw file's lines on the machine and the clock, from ft.machine() and
-- ft.clock() as the JSON keeps them (claims makes them again from it).
function results.meta_lines(m, c)
  return {
    report.line { { "meta", "machine" }, { "text", ("%s (%d CPUs), kernel %s, %d-byte pages, THP %s, "
      .. "clocksource %s, hypervisor %s (CPUID %s), %s, free page reporting %s, %d NUMA node(s)"):format(m.cpu,
      m.cpus, m.kernel, m.page_size, m.thp_enabled, m.clocksource, m.hypervisor, m.cpuid_hypervisor,
      report.kind(m), m.free_page_reporting, m.numa_nodes) } },
    report.line { { "meta", "clock" }, { "text", ("window clock tick %d ns, read %s ns; per-page timestamp "
      .. "tick %d ns, store + read %s ns"):format(c.tick_ns, units.cell(c.read_ns, "ns/page"), c.timed.tick_ns,
      units.cell(c.timed.read_ns, "ns/page")) } },
  }
end

-- The raw file, the table, the JSON, the README paste and the plots.
-- render(raw) -> the markdown; by default the script's report module's
-- table, or summary.table.
function results.finish(h, render)
  h.rows = h.rows or results.rows(h)
  local derive = reports.of(h.script).derive
  if derive then derive(h) end
  local lines = {
    report.line { { "meta", "title" }, { "text", h.title } },
    report.line { { "meta", "date" }, { "text", os.date("!%Y-%m-%d %H:%M") } },
  }
  for _, l in ipairs(results.meta_lines(h.machine, h.clock)) do lines[#lines + 1] = l end
  for _, col in ipairs(h.cols) do
    lines[#lines + 1] = report.line { { "meta", "column" }, { "name", col.name }, { "label", col.label },
      { "unit", col.unit }, { "shown", col.shown } }
  end
  for _, n in ipairs(h.notes) do lines[#lines + 1] = report.line { { "meta", "note" }, { "text", n } } end
  for _, case in ipairs(h.cases) do
    if case.unsupported then
      lines[#lines + 1] = report.line { { "case", case.name }, { "unsupported", case.unsupported } }
    end
  end
  for _, row in ipairs(h.rows) do lines[#lines + 1] = results.row_line(row) end
  for _, w in ipairs(warnings(h)) do
    io.stderr:write(h.script .. ": warning: " .. w .. "\n")
    lines[#lines + 1] = report.line { { "meta", "warning" }, { "text", w } }
  end
  h:value("clock_ghz", h.ghz, "GHz", { { "source", h.ghz_source } })
  for _, case in ipairs(h.cases) do
    if #case.records > 0 then
      h:value("noisy", noisy(case), "count", { { "case", case.name }, { "of", #case.records } })
    end
  end
  if h.counters then
    h:value("counter_mismatches", h.counter_mismatches or 0, "count",
      { { "what", "passes whose perf page-fault count differs from getrusage's" } })
  else
    lines[#lines + 1] = report.line { { "meta", "note" }, { "text", "No perf counters around the passes: "
      .. tostring(h.counters_refused) } }
  end
  local wall = ft.now_ns() - h.start_ns
  h:value("own_time", 100 * (wall - h.meter.work_ns) / wall, "%",
    { { "wall_ms", wall / 1e6 }, { "work_ms", h.meter.work_ns / 1e6 } })
  for _, v in ipairs(h.values) do lines[#lines + 1] = report.line(v) end
  local verdict = h.meter.checks > 0 and VERDICT_OK:format(h.meter.checks) or report.VERDICT_NONE
  local knob_list, knob_map = knob_values(h), {}
  for _, kv in ipairs(knob_list) do knob_map[kv[1]] = kv[2] end
  local raw = h.header .. results.knobs_line(knob_list) .. "\n\n"
    .. table.concat(lines, "\n") .. "\n" .. verdict .. "\n"

  -- The table is made from the raw file alone, as a reader's tools would;
  -- its numbers are the rows' own, to the last bit.
  local md = (render or reports.of(h.script).table or summary.table)(raw)
  if h.ab then md = md .. ab.markdown(h.ab, h.rows) end
  md = md .. "\n" .. provenance.describe(h.provenance) .. "\n"

  local reps = {}
  for _, case in ipairs(h.cases) do
    reps[#reps + 1] = { case = case.name, params = case.params, unsupported = case.unsupported, records = case.records }
  end
  local values = {}
  for _, v in ipairs(h.values) do
    local t = {}
    for _, kv in ipairs(v) do t[kv[1]] = kv[2] end
    values[#values + 1] = t
  end
  local doc = json.encode {
    script = h.script, run = h.run_name, title = h.title, about = h.about,
    date = os.date("!%Y-%m-%dT%H:%M:%SZ"), before = h.before, knobs = knob_map, warmup = h.warmup,
    machine = h.machine, clock = h.clock, clock_ghz = h.ghz, clock_ghz_source = h.ghz_source,
    bytes = h.bytes, pages = h.pages, page_size = h.page, provenance = h.provenance, seed = h.seed,
    noise_thresholds = { steal_pct = provenance.STEAL_PCT, foreign_pct = provenance.FOREIGN_PCT },
    rows = h.rows, values = values, reps = reps, checks = h.meter.checks, verdict = verdict,
    limits = h.limits, -- what this kind of machine cannot show (lib/limits.lua)
    attached = h.attached_sha256, -- each file attached beside the run, by name: its bytes' sha256
    decision_rows = h.decision, -- the rows a comparison of this script's runs decides on
    ab = h.ab and { a = h.ab.a, b = h.ab.b, text = h.ab.text, order = "A B in odd repetitions, B A in even ones" },
  } .. "\n"

  local format = h.cfg.FORMAT or "md"
  io.stdout:write(format == "md" and display.narrow(md) or display.rows(h.rows, h.values, format))
  io.stdout:flush() -- before anything more goes to stderr, so the two never interleave mid-line
  local files = { { h.prefix .. "raw.txt", raw }, { h.prefix .. "summary.md", md },
    { h.prefix .. "results.json", doc } }
  for _, f in ipairs(h.attached or {}) do files[#files + 1] = f end
  runfiles.write(h.plan, files, { [h.run_name] = md }, function(dir) -- drawn first, published with the rest
    local attached = {}
    for _, f in ipairs(h.attached or {}) do attached[dir .. "/" .. f[1]] = f[2] end
    return plots.render(json.decode(doc), dir, h.prefix, attached)
  end)
end

return results
