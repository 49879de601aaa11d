-- The harness every script runs through. A script declares its cases (a
-- function that measures one repetition of one condition into a record) and
-- its columns (what each record's fields mean, in which unit); the harness
-- reads the knobs, checks them before anything is mapped, runs the
-- repetitions (every case once per repetition, so drift over the run falls
-- on all of them alike), keeps every record, computes each row's statistics
-- once, and derives from that row the RESULT line, the table, the JSON and,
-- on PUBLISH=1, the README paste.
--
--   local h = harness.start { script = "thp", about = "...", mib = 1024, reps = 5 }
--   h:case("THP=never", function(r) local b <close> = r:map(nil, {thp = "never"}) ... end)
--   h:columns { { "pass1", "pass 1", "ns/page" }, ... }
--   h:run()
--   h:finish()
local ft = require "ft"
local json = require "json"
local knobs = require "knobs"
local measure = require "measure"
local plots = require "plots"
local provenance = require "provenance"
local report = require "report"
local runfiles = require "runfiles"
local stats = require "stats"
local summary = require "summary"
local units = require "units"

local harness = {}
local H = {}
H.__index = H

local VERDICT_OK = "CHECKSUMS OK: %d read-backs matched the values written"

-- A record: one repetition of one case. Its fields are plain numbers (the
-- JSON keeps them as they are); the methods time a step and keep its ns
-- under `key` and its faults under `key_faults` (no key: not kept).
local Record = {}
Record.__index = Record

local function keep(r, key, ns, faults, counted)
  if key then
    r[key], r[key .. "_faults"] = ns, faults
    if counted then
      r[key .. "_counters"] = counted
      -- perf's count and getrusage's must agree, or one of them is wrong
      if counted.page_faults ~= faults then r._h.counter_mismatches = (r._h.counter_mismatches or 0) + 1 end
    end
  end
  return ns, faults
end

-- A fresh MIB-sized mapping (opts as ft.mmap's; bytes overrides the size).
function Record:map(key, opts, bytes)
  local b, ns, faults = measure.map(bytes or self._h.bytes, opts)
  keep(self, key, ns, faults)
  return b, ns, faults
end

function Record:malloc(key, bytes)
  local b, ns, faults = measure.malloc(bytes or self._h.bytes)
  keep(self, key, ns, faults)
  return b, ns, faults
end

-- b:method(...) timed in C, its faults read around it.
function Record:pass(key, b, method, ...)
  return keep(self, key, measure.pass(b, method, ...))
end

-- munmap or free, timed alone.
function Record:release(key, b)
  return keep(self, key, measure.release(b))
end

-- Work the harness did not time itself (tasks in threads or processes):
-- its ns count as measured work, its read-backs as checks that passed.
function Record.work(_, ns, checks)
  measure.work_ns = measure.work_ns + ns
  measure.checks = measure.checks + (checks or 0)
end

Record.check_bytes = function(_, ...) return measure.check_bytes(...) end
Record.check_words = function(_, ...) return measure.check_words(...) end

-- opts: script (the name without .lua), about (one line), mib, reps (the
-- defaults), quick ({MIB =, REPS =}, default 16 MiB and 2 reps), knobs
-- (more knob specs), warmup (repetitions run first and discarded, default
-- 0), run (cfg -> the run's name; default "exp-<script>", QUICK=1
-- "quick-<script>"), check (cfg -> nil, or why the knobs cannot be run:
-- exit 2 before anything is made), memory (cfg,
-- bytes, pages -> bytes mapped at once; default one buffer). args: the
-- script's arguments (default the chunk's `arg`).
local START_OPTIONS = { script = 1, about = 1, mib = 1, reps = 1, quick = 1, knobs = 1, warmup = 1, run = 1,
  memory = 1, check = 1, shuffle = 1 }

function harness.start(opts, args)
  for k in pairs(opts) do
    if not START_OPTIONS[k] then error(("harness.start: unknown option '%s'"):format(tostring(k)), 2) end
  end
  assert(type(opts.script) == "string" and math.type(opts.mib) == "integer" and math.type(opts.reps) == "integer",
    "harness.start: script (a string), mib and reps (integers) are needed")
  local script = opts.script .. ".lua"
  local quick = opts.quick or { MIB = 16, REPS = 2 }
  local spec = {
    { name = "MIB", kind = "count", default = opts.mib, max = knobs.MIB_MAX, desc = "buffer size in MiB" },
    { name = "REPS", kind = "count", default = opts.reps,
      desc = (opts.warmup or 0) > 0 and "timed repetitions after one warm-up" or "repetitions of every case" },
    { name = "QUICK", kind = "flag", default = false,
      desc = ("1: %d MiB and %d reps, never published"):format(quick.MIB, quick.REPS) },
  }
  for _, k in ipairs(opts.knobs or {}) do spec[#spec + 1] = k end
  spec[#spec + 1] = { name = "COUNTERS", kind = "flag", default = false,
    desc = "1: perf software counters around every pass, beside each row (they add about 5 % to a fault)" }
  if opts.shuffle then
    spec[#spec + 1] = { name = "SEED", kind = "count", default = "the start time in ns",
      desc = "seed of the order the cases run in, shuffled anew every repetition" }
  end
  for _, k in ipairs(runfiles.spec()) do spec[#spec + 1] = k end
  local cfg = knobs.setup(script, opts.about, spec, quick, args or _G.arg or {})
  local refused = opts.check and opts.check(cfg)
  if refused then knobs.fail(script, refused) end

  local h = setmetatable({ script = script, about = opts.about, cfg = cfg, spec = spec,
    warmup = opts.warmup or 0, cases = {}, cols = {}, values = {}, notes = {}, start_ns = ft.now_ns() }, H)
  if opts.shuffle then
    if not cfg.given.SEED then cfg.SEED = ft.now_ns() % (1 << 40) + 1 end
    h.seed = cfg.SEED
    math.randomseed(h.seed)
  end
  h.page = ft.page_size()
  h.bytes = cfg.MIB << 20
  h.pages = h.bytes // h.page
  knobs.check_memory(script, cfg.MIB, opts.memory and opts.memory(cfg, h.bytes, h.pages) or h.bytes)
  h.ghz, h.ghz_source = knobs.clock_ghz(script)
  h.run_name = opts.run and opts.run(cfg) or (cfg.QUICK and "quick-" or "exp-") .. opts.script
  h.prefix = h.run_name == "main" and "" or h.run_name .. "-"
  h.plan = runfiles.plan(script, h.run_name, cfg) -- made and checked before anything is mapped
  h.clock = ft.clock()
  h.provenance = provenance.collect()
  -- An open page-fault event makes the kernel count every fault (___perf_sw_event):
  -- 2152 against 2038 ns per page at the median here, so only on request.
  if cfg.COUNTERS then
    h.counters, h.counters_refused = measure.use_counters()
  else
    h.counters_refused = "off (COUNTERS=1 turns them on; they make every fault about 5 % dearer)"
  end
  h.title = ("ftrun %s: %s; %s, %d MiB, %d reps%s"):format(script, opts.about, h.run_name, cfg.MIB, cfg.REPS,
    h.warmup > 0 and " after " .. h.warmup .. " warm-up" or "")
  h.header, h.machine = report.header(h.title, h.clock, h.ghz, h.ghz_source)
  for _, k in ipairs(provenance.ORDER) do h.header = h.header .. k .. ": " .. tostring(h.provenance[k]) .. "\n" end
  io.stderr:write(h.title, "\n")
  measure.on_mismatch = function(msg)
    io.stderr:write("\n", script, ": ", msg, "; no results written, README left alone\n")
    if not h.plan.publish then -- the failed verdict goes on record, in all three files alike
      local verdict = "CHECKSUMS FAILED: " .. msg
      runfiles.write(h.plan, { { h.prefix .. "raw.txt", h.header .. "\n" .. verdict .. "\n" },
        { h.prefix .. "summary.md", ("**%s**\n\n%s. No results.\n"):format(h.title, verdict) },
        { h.prefix .. "results.json", json.encode { script = script, run = h.run_name, verdict = verdict } .. "\n" } })
    end
  end
  return h
end

-- fn(r, rep) measures one repetition of the case into the record r. It may
-- return false, why: the case cannot run here (a refusal the script
-- expects), reported as such and not tried again. opts.once: only in the
-- first repetition (e.g. the first mapping of a fresh process).
-- Text that goes into RESULT lines and tables: checked when declared, not
-- after the repetitions have run.
local function text_ok(what, s)
  if type(s) ~= "string" or s == "" or s:find('["\n|]') then
    error(("%s %q: expected a non-empty string without a double quote, a newline or a |"):format(what,
      tostring(s)), 3)
  end
end

function H:case(name, fn, opts)
  text_ok("case name", name)
  for _, c in ipairs(self.cases) do
    if c.name == name then error(("case name %q declared twice"):format(name), 2) end
  end
  self.cases[#self.cases + 1] = { name = name, fn = fn, once = opts and opts.once, records = {} }
end

-- Each column: {name, label, unit [, from] [, shown =]}. from is the record's field
-- (default: name) holding a raw value the unit converts (ns, bytes, a
-- count), or a function(record) returning the value already in the unit.
-- A case whose records lack the field has no row for the column. shown:
-- the statistic the table shows ("min", "median", "max"; default the unit's).
function H:columns(list)
  for _, c in ipairs(list) do
    text_ok("column name", c[1])
    text_ok("column label", c[2])
    assert(units.known(c[3]), ("column %s: unknown unit '%s'"):format(c[1], tostring(c[3])))
    assert(c.shown == nil or ({ min = 1, median = 1, max = 1, mean = 1 })[c.shown],
      ("column %s: shown = %s, expected min, median, max or mean"):format(c[1], tostring(c.shown)))
    self.cols[#self.cols + 1] = { name = c[1], label = c[2], unit = c[3], from = c[4] or c[1],
      shown = c.shown or units.shown(c[3]) }
  end
end

-- A file of the run's own beside its results (written with them, named
-- with the run's prefix), e.g. raw samples a plot is drawn from.
function H:attach(name, bytes)
  self.attached = self.attached or {}
  self.attached[#self.attached + 1] = { self.prefix .. name, bytes }
end

-- A sentence under the table.
function H:note(text)
  if type(text) ~= "string" or text:find('["\n]') then
    error(("note %q: expected one line without a double quote"):format(tostring(text)), 2)
  end
  self.notes[#self.notes + 1] = text
end

function H:progress(fmt, ...)
  io.stderr:write(self.script, ": ", fmt:format(...), "\n")
end

local function run_case(self, case, rep, timed, first)
  if case.unsupported or (case.once and rep > 1) then return end
  io.stderr:write(first and " " or "; ", case.name)
  io.stderr:flush()
  local r = setmetatable({ _h = self }, Record)
  local before = provenance.snapshot()
  collectgarbage("collect") -- no collector work is left for the case
  collectgarbage("stop")
  local ok, why = case.fn(r, rep)
  collectgarbage("restart")
  r.noise = provenance.noise(before, provenance.snapshot())
  if r.noise.flagged then io.stderr:write(" (noisy)") end
  r._h = nil
  if ok == false then
    case.unsupported = tostring(why)
    io.stderr:write(" (not supported: ", case.unsupported, ")")
  elseif timed then
    case.records[#case.records + 1] = setmetatable(r, nil)
  end
end

-- The order of one repetition: as declared, or (shuffle) the cases that
-- run once first and the rest shuffled with the run's seed.
local function order(self)
  if not self.seed then return self.cases end
  local once, rest = {}, {}
  for _, c in ipairs(self.cases) do table.insert(c.once and once or rest, c) end
  for i = #rest, 2, -1 do -- Fisher-Yates
    local j = math.random(i)
    rest[i], rest[j] = rest[j], rest[i]
  end
  return table.move(rest, 1, #rest, #once + 1, once)
end

-- The warm-up, then REPS repetitions of every case.
function H:run()
  self.ran = true
  local total = self.warmup + self.cfg.REPS
  for i = 1, total do
    local timed = i > self.warmup
    local t0 = ft.now_ns()
    io.stderr:write(("%s: %s:"):format(self.script,
      timed and ("rep %d/%d"):format(i - self.warmup, self.cfg.REPS) or "warm-up"))
    for k, case in ipairs(order(self)) do run_case(self, case, timed and i - self.warmup or 0, timed, k == 1) end
    io.stderr:write((" (%.1f s)\n"):format((ft.now_ns() - t0) / 1e9))
  end
end

-- The records of one case, in run order.
function H:records(case_name)
  for _, c in ipairs(self.cases) do
    if c.name == case_name then return c.records end
  end
end

local function column_values(self, col, records)
  local values, any = {}, false
  for i, r in ipairs(records) do
    local v
    if type(col.from) == "function" then v = col.from(r)
    elseif r[col.from] ~= nil then v = units.convert(col.unit, r[col.from], self.bytes, self.pages) end
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

-- The rows: a case's column over the repetitions, with its statistics.
-- Values that are not finite stay in .values (JSON: null with the reason)
-- and out of the statistics.
local function compute_rows(self)
  local rows = {}
  for _, case in ipairs(self.cases) do
    local done = {} -- a column named twice shows another statistic of the same row
    for _, col in ipairs(self.cols) do
      local values = not done[col.name] and #case.records > 0 and column_values(self, col, case.records)
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
        row.counters = counter_medians(case.records, col.from)
        rows[#rows + 1] = row
      end
    end
  end
  return rows
end

-- The row of one case and column, once h:run() has run.
function H:row(case_name, column)
  self.rows = self.rows or compute_rows(self)
  for _, r in ipairs(self.rows) do
    if r.case == case_name and r.column == column then return r end
  end
end

-- A figure derived from rows (a ratio, a threshold, a verdict on pages):
-- a RESULT line of its own. fields: more {key, value} pairs.
function H:value(name, value, unit, fields)
  assert(units.known(unit), ("value %s: unknown unit '%s'"):format(name, tostring(unit)))
  local line = { { "value", name }, { "unit", unit }, { "x", value } }
  for _, kv in ipairs(fields or {}) do line[#line + 1] = kv end
  self.values[#self.values + 1] = line
end

local ROW_FIELDS = { "n", "min", "median", "lo", "hi", "ci_ranks", "ci_coverage", "max", "mean", "cv" }

local function row_line(row)
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
local VARYING = { ["ns/page"] = true, ns = true, us = true, ms = true, ["GB/s"] = true, ["faults/s"] = true }

local function warnings(self)
  local out, varying = {}, {}
  for _, row in ipairs(self.rows) do
    if VARYING[row.unit] and row.n > 1 and row.cv > CV_WARN then
      varying[#varying + 1] = ("%s %s (%s %%)"):format(row.case, row.column, units.cell(row.cv, "%"))
    end
  end
  if #varying > 0 then
    out[#out + 1] = ("%d row(s) vary by more than %d %% (cv) over the repetitions: %s. Their minima and "
      .. "medians may be far apart: look at the per-repetition values in the JSON, rerun on a quieter "
      .. "machine, or with more REPS."):format(#varying, CV_WARN, table.concat(varying, ", "))
  end
  for _, case in ipairs(self.cases) do
    local k, n = noisy(case), #case.records
    if n > 0 and k / n > NOISY_WARN then
      out[#out + 1] = ("%s: %d of %d repetitions ran while the host stole more than %d %% of the time or "
        .. "other processes kept more than %d %% of a CPU busy; the figures may not be this machine's "
        .. "alone."):format(case.name, k, n, provenance.STEAL_PCT, provenance.FOREIGN_PCT)
    end
  end
  return out
end

-- The knobs as the run used them, in order; RESULTS and README only when given.
local function knob_values(self)
  local out = {}
  for _, k in ipairs(self.spec) do
    if k.kind ~= "path" or self.cfg.given[k.name] then out[#out + 1] = { k.name, self.cfg[k.name] } end
  end
  return out
end

-- The results, the files and the README paste (running the repetitions
-- first if h:run() has not). render(parsed, h) -> the
-- markdown; by default one table, a line per case and a column per column.
function H:finish(render)
  if not self.ran then self:run() end
  self.rows = self.rows or compute_rows(self)
  local m, c = self.machine, self.clock
  local lines = {
    report.line { { "meta", "title" }, { "text", self.title } },
    report.line { { "meta", "date" }, { "text", os.date("!%Y-%m-%d %H:%M") } },
    report.line { { "meta", "machine" }, { "text", ("%s (%d CPUs), kernel %s, %d-byte pages, THP %s, "
      .. "clocksource %s, hypervisor %s, free page reporting %s, %d NUMA node(s)"):format(m.cpu, m.cpus,
      m.kernel, m.page_size, m.thp_enabled, m.clocksource, m.hypervisor, m.free_page_reporting, m.numa_nodes) } },
    report.line { { "meta", "clock" }, { "text", ("window clock tick %d ns, read %s ns; per-page timestamp "
      .. "tick %d ns, store + read %s ns"):format(c.tick_ns, units.cell(c.read_ns, "ns/page"), c.timed.tick_ns,
      units.cell(c.timed.read_ns, "ns/page")) } },
  }
  for _, col in ipairs(self.cols) do
    lines[#lines + 1] = report.line { { "meta", "column" }, { "name", col.name }, { "label", col.label },
      { "unit", col.unit }, { "shown", col.shown } }
  end
  for _, n in ipairs(self.notes) do lines[#lines + 1] = report.line { { "meta", "note" }, { "text", n } } end
  for _, case in ipairs(self.cases) do
    if case.unsupported then
      lines[#lines + 1] = report.line { { "case", case.name }, { "unsupported", case.unsupported } }
    end
  end
  for _, row in ipairs(self.rows) do lines[#lines + 1] = row_line(row) end
  for _, w in ipairs(warnings(self)) do
    io.stderr:write(self.script, ": warning: ", w, "\n")
    lines[#lines + 1] = report.line { { "meta", "warning" }, { "text", w } }
  end
  self:value("clock_ghz", self.ghz, "GHz", { { "source", self.ghz_source } })
  for _, case in ipairs(self.cases) do
    if #case.records > 0 then
      self:value("noisy", noisy(case), "count", { { "case", case.name }, { "of", #case.records } })
    end
  end
  if self.counters then
    self:value("counter_mismatches", self.counter_mismatches or 0, "count",
      { { "what", "passes whose perf page-fault count differs from getrusage's" } })
  else
    lines[#lines + 1] = report.line { { "meta", "note" }, { "text", "No perf counters around the passes: "
      .. tostring(self.counters_refused) } }
  end
  local wall = ft.now_ns() - self.start_ns
  self:value("own_time", 100 * (wall - measure.work_ns) / wall, "%",
    { { "wall_ms", wall / 1e6 }, { "work_ms", measure.work_ns / 1e6 } })
  for _, v in ipairs(self.values) do lines[#lines + 1] = report.line(v) end
  local verdict = VERDICT_OK:format(measure.checks)
  local knob_list, knob_map = knob_values(self), {}
  for _, kv in ipairs(knob_list) do knob_map[kv[1]] = kv[2] end
  local raw = self.header .. "knobs: " .. report.line(knob_list):sub(#"RESULT " + 1) .. "\n\n"
    .. table.concat(lines, "\n") .. "\n" .. verdict .. "\n"

  -- The table is made from the raw file alone, as a reader's tools would;
  -- its numbers are the rows' own, to the last bit.
  local md = (render or summary.table)(raw)

  local reps = {}
  for _, case in ipairs(self.cases) do
    reps[#reps + 1] = { case = case.name, unsupported = case.unsupported, records = case.records }
  end
  local values = {}
  for _, v in ipairs(self.values) do
    local t = {}
    for _, kv in ipairs(v) do t[kv[1]] = kv[2] end
    values[#values + 1] = t
  end
  local doc = json.encode {
    script = self.script, run = self.run_name, title = self.title, about = self.about,
    date = os.date("!%Y-%m-%dT%H:%M:%SZ"), knobs = knob_map, warmup = self.warmup,
    machine = self.machine, clock = self.clock, clock_ghz = self.ghz, clock_ghz_source = self.ghz_source,
    bytes = self.bytes, pages = self.pages, page_size = self.page, provenance = self.provenance, seed = self.seed,
    noise_thresholds = { steal_pct = provenance.STEAL_PCT, foreign_pct = provenance.FOREIGN_PCT },
    rows = self.rows, values = values, reps = reps, checks = measure.checks, verdict = verdict,
  } .. "\n"

  io.stdout:write(md)
  io.stdout:flush() -- before anything more goes to stderr, so the two never interleave mid-line
  local files = { { self.prefix .. "raw.txt", raw }, { self.prefix .. "summary.md", md },
    { self.prefix .. "results.json", doc } }
  for _, f in ipairs(self.attached or {}) do files[#files + 1] = f end
  runfiles.write(self.plan, files, { [self.run_name] = md }, function(dir) -- drawn first, published with the rest
    local attached = {}
    for _, f in ipairs(self.attached or {}) do attached[dir .. "/" .. f[1]] = f[2] end
    return plots.render(json.decode(doc), dir, self.prefix, attached)
  end)
end

harness.VERDICT_OK = VERDICT_OK
return harness
