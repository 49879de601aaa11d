-- The harness every script runs through: the collecting half. A script
-- declares its cases (a function that measures one repetition of one
-- condition into a record, with the parameters that condition stands for)
-- and its columns (what each record's fields mean, in which unit); the
-- harness reads the knobs, checks them before anything is mapped, runs the
-- repetitions (every case once per repetition, so drift over the run falls
-- on all of them alike) and keeps every record. results.lua computes each
-- row's statistics once and derives from that row the RESULT line, the
-- JSON, the table and the plots (the script's report module,
-- lib/reports/<script>.lua, where it has one) and, on PUBLISH=1, the
-- README paste.
--
--   local h = harness.start { script = "thp", about = "...", mib = 1024, reps = 5 }
--   h:case("THP=never", function(r) local b <close> = r:map(nil, {thp = "never"}) ... end,
--     { params = { thp = "never" } })
--   h:columns { { "pass1", "pass 1", "ns/page" }, ... }
--   h:run()
--   h:ratio("first_touch", { "THP=never", "pass1" }, { "THP=never", "retouch" })
--   h:finish()
local ab = require "ab"
local display = require "display"
local sequential = require "sequential"
local ft = require "ft"
local knobs = require "knobs"
local limits = require "limits"
local measure = require "measure"
local provenance = require "provenance"
local report = require "report"
local reporting = require "reporting"
local results = require "results"
local runfiles = require "runfiles"
local stats = require "stats"
local units = require "units"

local harness = {}
local H = {}
H.__index = H

-- A record: one repetition of one case. Its fields are plain numbers (the
-- JSON keeps them as they are); the methods time a step and keep its ns
-- under `key`, its faults under `key_faults` and the KiB the guest's page
-- reporting handed to the host meanwhile under `key_reported_kib` (no key:
-- not kept).
local Record = {}
Record.__index = Record
-- Every field a case sets, nil included, for the check of the columns
-- after the first repetition.
function Record.__newindex(r, k, v)
  local h = rawget(r, "_h")
  if h and h.first_keys then h.first_keys[k] = true end
  rawset(r, k, v)
end

local function keep(r, key, ns, faults, counted, kib)
  if key then
    r[key], r[key .. "_faults"], r[key .. "_reported_kib"] = ns, faults, kib
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
  local b, ns, faults, kib = self._h.meter:map(bytes or self._h.bytes, opts)
  keep(self, key, ns, faults, nil, kib)
  return b, ns, faults
end

function Record:malloc(key, bytes)
  local b, ns, faults, kib = self._h.meter:malloc(bytes or self._h.bytes)
  keep(self, key, ns, faults, nil, kib)
  return b, ns, faults
end

-- b:method(...) timed in C, its faults read around it.
function Record:pass(key, b, method, ...)
  if key then self._h.pass_keys[key] = true end -- a pass over pages: the stall warning looks at it
  return keep(self, key, self._h.meter:pass(b, method, ...))
end

-- munmap or free, timed alone.
function Record:release(key, b)
  return keep(self, key, self._h.meter:release(b))
end

-- Work the harness did not time itself (tasks in threads or processes, a
-- loop of passes): its ns count as measured work, its read-backs as checks
-- that passed.
function Record:work(ns, checks) self._h.meter:work(ns, checks) end

function Record:check_bytes(...) return self._h.meter:check_bytes(...) end
function Record:check_words(...) return self._h.meter:check_words(...) end
function Record:check_byte_sum(...) return self._h.meter:check_byte_sum(...) end

-- opts: script (the name without .lua), about (one line), mib, reps (the
-- defaults), quick ({MIB =, REPS =}, default 16 MiB and 2 reps), knobs
-- (more knob specs), warmup (repetitions run first and discarded, default
-- 0), run (cfg -> the run's name; default "exp-<script>", QUICK=1
-- "quick-<script>"), check (cfg, clock -> nil, or why the knobs cannot be run:
-- exit 2 before anything is made; or nil and a warning: said on stderr and
-- noted under the run's table, for a default the user did not give), memory (cfg,
-- bytes, pages -> bytes mapped at once; default one buffer). args: the
-- script's arguments (default the chunk's `arg`). decide: the rows a
-- comparison of its runs decides on ({{case, column}, ...}: what the script
-- is asked; UNTIL=decided and compare.lua's gate follow them, ROWS= picks others).
local START_OPTIONS = { script = 1, about = 1, mib = 1, reps = 1, quick = 1, knobs = 1, warmup = 1, run = 1,
  memory = 1, check = 1, shuffle = 1, limits = 1, decide = 1 }

local function decision_rows(list)
  if list == nil then return nil end
  local out = {}
  for i, n in ipairs(type(list) == "table" and list or {}) do
    if type(n) ~= "table" or type(n[1]) ~= "string" or type(n[2]) ~= "string" then
      error(("harness.start: decide[%d]: expected {case, column}, two names"):format(i), 3)
    end
    out[i] = { case = n[1], column = n[2] }
  end
  if #out == 0 then error("harness.start: decide: expected a list of {case, column}", 3) end
  return out
end

-- An AB run's decision rows: ROWS= over the script's own (all: none named).
local function ab_decision(cfg, decision)
  if not cfg.given.ROWS then return decision end
  if cfg.ROWS == "all" then return nil end
  return stats.map(cfg.ROWS, function(n) return { case = n[1], column = n[2] } end)
end

function harness.start(opts, args)
  for k in pairs(opts) do
    if not START_OPTIONS[k] then error(("harness.start: unknown option '%s'"):format(tostring(k)), 2) end
  end
  assert(type(opts.script) == "string" and math.type(opts.mib) == "integer" and math.type(opts.reps) == "integer",
    "harness.start: script (a string), mib and reps (integers) are needed")
  local script = opts.script .. ".lua"
  local quick = opts.quick or { MIB = 16, REPS = 2 }
  local meter = measure.meter()
  local spec = {
    { name = "MIB", kind = "count", default = opts.mib, max = knobs.MIB_MAX, desc = "buffer size in MiB" },
    { name = "REPS", kind = "count", default = opts.reps,
      desc = (opts.warmup or 0) > 0 and "timed repetitions after one warm-up" or "repetitions of every case" },
    { name = "QUICK", kind = "flag", default = false,
      desc = ("1: %d MiB and %d reps, never published"):format(quick.MIB, quick.REPS) },
  }
  for _, k in ipairs(opts.knobs or {}) do spec[#spec + 1] = k end
  spec[#spec + 1] = { name = "CLOCK_GHZ", kind = "ghz", default = "measured",
    desc = "the clock rate cycles per page are counted at; measured: estimated at the start" }
  spec[#spec + 1] = { name = "COUNTERS", kind = "flag", default = false,
    desc = "1: perf software counters around every pass, beside each row (an AB run of COUNTERS=0 "
      .. "against COUNTERS=1 measures what they change)",
    apply = function(on) -- AB alone applies knobs: opened for one side's half, closed for the other's
      local why = meter:set_counters(on)
      if why then knobs.fail(script, "AB: COUNTERS=1 is refused here: " .. why) end
    end }
  local reporting_knob = reporting.knob(function(why) knobs.fail(script, why) end)
  spec[#spec + 1] = reporting_knob
  if opts.shuffle then
    spec[#spec + 1] = { name = "SEED", kind = "count", default = "the start time in ns",
      desc = "seed of the order the cases run in, shuffled anew every repetition" }
  end
  spec[#spec + 1] = ab.knob()
  for _, k in ipairs(runfiles.spec()) do spec[#spec + 1] = k end
  for _, k in ipairs(sequential.knobs()) do spec[#spec + 1] = k end
  for _, k in ipairs(display.spec()) do spec[#spec + 1] = k end
  local cfg = knobs.setup(script, opts.about, spec, quick, args or _G.arg or {})
  sequential.drive(script, cfg, args or _G.arg or {}) -- UNTIL=decided: runs of this script, then exits
  local start_ns = ft.now_ns()
  local ab_plan = ab.plan(script, spec, cfg) -- AB's knobs checked before anything is mapped
  runfiles.check_knobs(script, cfg)
  -- Every experiment measures under the machine's THP settings (a default or MADV_HUGEPAGE
  -- mapping gets whatever folio sizes they allow, and the folio counters are machine-wide):
  -- the settings lock shared keeps another run from changing them meanwhile. Shared holders
  -- run together; a change of settings (THP=16K, AB) takes it alone when it comes.
  local locked, why, errno = ft.lock_settings("shared")
  if not locked and errno == 11 then knobs.fail(script, why) end -- EWOULDBLOCK: NOWAIT=1, said on stderr
  if not locked then io.stderr:write(("%s: measuring without the settings lock: %s\n"):format(script, why)) end
  -- the run's own REPORTING before the provenance records it (AB's sides set theirs in each repetition)
  if not (ab_plan and ab_plan.A.REPORTING) then reporting_knob.apply(cfg.REPORTING) end
  -- The core clock's estimate and the provenance first: the per-page timer's
  -- calibration (100 ms from the module's opening) ends in ft.clock(), which
  -- then waits only for what is left of it.
  local ghz, ghz_source = cfg.CLOCK_GHZ, "CLOCK_GHZ"
  if ghz == "measured" then ghz, ghz_source = knobs.clock_ghz(script) end
  local prov = provenance.collect()
  local clock = ft.clock() -- measured once: the check may need it
  local refused, warning
  if opts.check then refused, warning = opts.check(cfg, clock) end
  if not refused and opts.check and ab_plan then refused = ab.check(ab_plan, cfg, clock, opts.check) end
  if refused then knobs.fail(script, refused) end

  local h = setmetatable({ script = script, about = opts.about, cfg = cfg, spec = spec, meter = meter,
    warmup = opts.warmup or 0, cases = {}, cols = {}, values = {}, notes = {}, start_ns = start_ns,
    ab = ab_plan, ghz = ghz, ghz_source = ghz_source, provenance = prov, pass_keys = {},
    decision = decision_rows(opts.decide) }, H)
  if ab_plan then ab_plan.decision = ab_decision(cfg, h.decision) end
  -- The estimate's own spread at the start, to tell a moved clock at the end from noise.
  if ghz_source == "measured" then h.ghz_start = { ghz, (ft.clock_estimate()), (ft.clock_estimate()) } end
  if opts.shuffle then
    if not cfg.given.SEED then cfg.SEED = ft.now_ns() % (1 << 40) + 1 end
    h.seed = cfg.SEED
    math.randomseed(h.seed)
  end
  h.page = ft.page_size()
  h.bytes = cfg.MIB << 20
  h.pages = h.bytes // h.page
  knobs.check_memory(script, cfg.MIB, opts.memory and opts.memory(cfg, h.bytes, h.pages) or h.bytes)
  h.run_name = (opts.run and opts.run(cfg) or (cfg.QUICK and "quick-" or "exp-") .. opts.script)
    .. (ab_plan and "-ab" or "")
  h.prefix = h.run_name == "main" and "" or h.run_name .. "-"
  h.plan = runfiles.plan(script, h.run_name, cfg) -- made and checked before anything is mapped
  h.clock = clock
  -- An open page-fault event makes the kernel count every fault (___perf_sw_event):
  -- 2152 against 2038 ns per page at the median here, so only on request.
  if cfg.COUNTERS then
    h.counters, h.counters_refused = h.meter:use_counters()
  elseif ab_plan and ab_plan.B.COUNTERS ~= ab_plan.A.COUNTERS then
    h.counters_refused = "on one AB side only (COUNTERS=1): its rows carry them"
  else
    h.counters_refused = "off (COUNTERS=1 turns them on; what they change, an AB run of COUNTERS=0 "
      .. "against COUNTERS=1 measures)"
  end
  h.title = report.title(script, opts.about, h.run_name, cfg.MIB, cfg.REPS, h.warmup)
  h.header, h.machine, h.before = report.header(h.title, h.clock, h.ghz, h.ghz_source)
  -- opts.limits: the topics (lib/limits.lua) whose limits on this kind of machine the figures carry
  h.limits = limits.of(h.machine, h.clock, opts.limits or {})
  for _, l in ipairs(h.limits) do h:note(l.text) end
  if warning then
    io.stderr:write(script, ": warning: ", warning, "\n")
    h:note(warning)
  end
  h.header = h.header .. table.concat(provenance.lines(h.provenance), "\n") .. "\n"
  if not cfg.QUIET then io.stderr:write(h.title .. "\n") end
  h.meter.on_mismatch = function(msg) results.failed(h, msg) end
  return h
end

-- fn(r, rep) measures one repetition of the case into the record r. It may
-- return false, why: the case cannot run here (a refusal the script
-- expects), reported as such and not tried again. opts.once: only in the
-- first repetition (e.g. the first mapping of a fresh process).
-- opts.params: what the case stands for, as plain fields ({threads = 4,
-- shared = true}), saved with its records in the JSON: a report module
-- reads them there, never the case's name.
-- Text that goes into RESULT lines and tables: checked when declared, not
-- after the repetitions have run.
local function text_ok(what, s)
  if type(s) ~= "string" or s == "" or s:find('["\n|]') then
    error(("%s %q: expected a non-empty string without a double quote, a newline or a |"):format(what,
      tostring(s)), 3)
  end
end

local CASE_OPTIONS = { once = 1, params = 1 }
local PARAM_TYPES = { string = 1, number = 1, boolean = 1 }

function H:case(name, fn, opts)
  text_ok("case name", name)
  for _, c in ipairs(self.cases) do
    if c.name == name then error(("case name %q declared twice"):format(name), 2) end
  end
  opts = opts or {}
  for k in pairs(opts) do
    if not CASE_OPTIONS[k] then error(("case %q: unknown option '%s' (once, params)"):format(name, tostring(k)), 2) end
  end
  for k, v in pairs(opts.params or {}) do
    if type(k) ~= "string" or not PARAM_TYPES[type(v)] then
      error(("case %q: parameter %s = %s: expected a name and a string, number or boolean"):format(name,
        tostring(k), tostring(v)), 2)
    end
  end
  self.cases[#self.cases + 1] = { name = name, fn = fn, once = opts.once, params = opts.params, records = {} }
  if self.ab then -- side B's twin: the same case under B's knobs
    local a = self.cases[#self.cases]
    a.side, a.ab_case = "A", name
    self.cases[#self.cases + 1] = { name = name .. ab.B_SUFFIX, fn = fn, once = opts.once, params = opts.params,
      records = {}, side = "B", ab_case = name }
  end
end

-- Each column: {name, label, unit [, from] [, shown =] [, optional =]}. from is the record's field
-- (default: name) holding a raw value the unit converts (ns, bytes, a
-- count), or a function(record) returning the value already in the unit.
-- A case whose records lack the field has no row for the column. shown:
-- the statistic the table shows ("min", "median", "max"; default the unit's).
-- A field no case records is an error at the end of the run (a misspelt
-- name), unless the column is optional = true (recorded by some runs only).
local COLUMN_KEYS = { true, true, true, true, shown = true, optional = true }

function H:columns(list)
  local caller = debug.getinfo(2, "Sl")
  local at = caller and caller.currentline > 0 and ("%s:%d"):format(caller.short_src, caller.currentline) or self.script
  for _, c in ipairs(list) do
    text_ok("column name", c[1])
    text_ok("column label", c[2])
    for k in pairs(c) do
      if not COLUMN_KEYS[k] then
        error(("column %s: unknown key '%s' (expected {name, label, unit [, from]} and shown =, optional =)")
          :format(c[1], tostring(k)), 2)
      end
    end
    if not units.known(c[3]) then error(("column %s: unknown unit '%s'"):format(c[1], tostring(c[3])), 2) end
    if c.shown ~= nil and not ({ min = 1, median = 1, max = 1, mean = 1 })[c.shown] then
      error(("column %s: shown = %s, expected min, median, max or mean"):format(c[1], tostring(c.shown)), 2)
    end
    self.cols[#self.cols + 1] = { name = c[1], label = c[2], unit = c[3], from = c[4] or c[1],
      shown = c.shown or units.shown(c[3]), optional = c.optional, at = at }
  end
end

-- A file of the run's own beside its results (written with them, named
-- with the run's prefix), e.g. raw samples a plot is drawn from. about:
-- what the bytes are; a binary file has no room for it, so a text sidecar
-- (name.txt) says it with their hash and the commit that made it.
function H:attach(name, bytes, about)
  self.attached = self.attached or {}
  self.attached[#self.attached + 1] = { self.prefix .. name, bytes }
  -- kept in the results JSON too, where a file remade beside the bytes cannot move it
  self.attached_sha256 = self.attached_sha256 or {}
  self.attached_sha256[self.prefix .. name] = require("textfile").sha256(bytes)
  if about then
    self.attached[#self.attached + 1] = { self.prefix .. name .. ".txt",
      provenance.sidecar(self.prefix .. name, about, bytes, self.provenance) }
  end
end

-- A sentence under the table.
function H:note(text)
  if type(text) ~= "string" or text:find('["\n]') then
    error(("note %q: expected one line without a double quote"):format(tostring(text)), 2)
  end
  self.notes[#self.notes + 1] = text
end

function H:progress(fmt, ...)
  if not self.cfg.QUIET then io.stderr:write(self.script, ": ", fmt:format(...), "\n") end
end

-- The progress line's pieces, unless QUIET=1.
local function say(self, ...)
  if not self.cfg.QUIET then io.stderr:write(...) end
end

-- Whether a case runs in repetition rep: not once it was found unsupported, nor after its
-- first repetition when it runs once.
local function runs(case, rep)
  return not (case.unsupported or (case.once and rep > 1))
end

-- Returns whether the case ran; first: no case has run yet on this progress line (one
-- skipped as unsupported or run once writes nothing, so it leaves no separator either).
local function run_case(self, case, rep, timed, first)
  if not runs(case, rep) then return false end
  say(self, first and " " or "; ", case.name)
  io.stderr:flush()
  local r = setmetatable({ _h = self }, Record)
  local canary_ns = measure.canary() -- before the case's bracket: none of its time or faults
  local before = provenance.snapshot()
  collectgarbage("collect") -- no collector work is left for the case
  collectgarbage("stop")
  local ok, why = case.fn(r, rep)
  collectgarbage("restart")
  r.noise = provenance.noise(before, provenance.snapshot())
  r.noise.canary_ns = canary_ns
  r._h = nil
  if ok == false then -- what disturbed a case that did not run is no news
    case.unsupported = tostring(why)
    say(self, " (not supported: ", case.unsupported, ")")
  else
    if r.noise.flagged then say(self, " (noisy)") end
    if timed then case.records[#case.records + 1] = setmetatable(r, nil) end
  end
  return true
end

-- Why no case runs in a repetition: how many are unsupported and how many ran once.
local function none_left(self, rep)
  local unsupported, once = 0, 0
  for _, case in ipairs(self.cases) do
    if runs(case, rep) then return nil end
    if case.unsupported then unsupported = unsupported + 1 else once = once + 1 end
  end
  local why = {}
  if unsupported > 0 then why[#why + 1] = ("%d not supported"):format(unsupported) end
  if once > 0 then why[#why + 1] = ("%d run in the first repetition only"):format(once) end
  return "no case left to run" .. (#why > 0 and " (" .. table.concat(why, ", ") .. ")" or "")
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

-- One repetition's cases, named on the progress line as they run.
local function repetition(self, rep, timed)
  if self.ab then -- every case under one side, then under the other, ABBA
    local sides = 0
    ab.repetition(self.ab, self.cfg, rep, function(side)
      sides = sides + 1
      say(self, sides > 1 and " | " or " ", side, ":")
      local first = true
      local slot = ab.order(math.max(rep, 1))[1] == side and 1 or 2
      for _, case in ipairs(order(self)) do
        if case.side == side then
          local n = #case.records
          if run_case(self, case, rep, timed, first) then first = false end
          -- the JSON shows the order that ran: this repetition's side, first or second
          if case.records[n + 1] then case.records[n + 1].ab = { rep = rep, side = side, slot = slot } end
        end
      end
      if first then say(self, " no case left to run") end
    end)
  else
    local first = true
    for _, case in ipairs(order(self)) do
      if run_case(self, case, rep, timed, first) then first = false end
    end
  end
end

-- The warm-up, then REPS repetitions of every case. The columns declared
-- by then are checked against the fields the first repetition set (the
-- warm-up, where there is one): a misspelt name stops the run at once.
function H:run()
  self.ran = true
  local total = self.warmup + self.cfg.REPS
  -- AB UNTIL=decided: pairs added until the decision rows are decided (lib/abuntil.lua, loaded only then)
  local until_decided = self.ab and self.cfg.UNTIL == "decided" and require("abuntil").new(self) or nil
  self.first_keys = {}
  local i = 0
  local function more()
    if not until_decided then return i < total end
    return i <= self.warmup or until_decided.after(i - self.warmup)
  end
  while more() do
    i = i + 1
    if i == 2 then
      local keys = self.first_keys
      self.first_keys = nil
      results.check_first(self, keys)
    end
    local timed = i > self.warmup
    local t0 = ft.now_ns()
    local head = ("%s: %s:"):format(self.script, not timed and "warm-up" or until_decided
      and ("pair %d"):format(i - self.warmup) or ("rep %d/%d"):format(i - self.warmup, self.cfg.REPS))
    local rep = timed and i - self.warmup or 0
    local none = none_left(self, rep)
    local quiet = self.cfg.QUIET
    if none then -- said as it is, rather than an empty line timed at 0.0 s
      say(self, head .. " " .. none .. "\n") -- one write, a whole line
    else
      say(self, head)
      if not quiet then ft.stderr_line(true) end -- a signal or a message of the runner's ends it first
      repetition(self, rep, timed)
      say(self, (" (%.1f s)\n"):format((ft.now_ns() - t0) / 1e9))
      if not quiet then ft.stderr_line(false) end
    end
  end
  if until_decided then
    self.cfg.REPS = i - self.warmup -- the pairs that ran
    until_decided.finish()
  end
end

-- The records of one case, in run order.
function H:records(case_name)
  for _, c in ipairs(self.cases) do
    if c.name == case_name then return c.records end
  end
end

-- The row of one case and column, once h:run() has run.
function H:row(case_name, column)
  if not self.ran then error(("h:row %s %s: called before h:run(), so no repetition has run yet"):format(
    tostring(case_name), tostring(column)), 2) end
  self.rows = self.rows or results.rows(self)
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

-- Each repetition's value of a {case, column}; time = true: as ns (from a
-- time, a time per page or a bandwidth), and then a list of {case, column}
-- is their sum, repetition by repetition.
local TO_NS = {
  ns = function(v) return v end, us = function(v) return v * 1e3 end, ms = function(v) return v * 1e6 end,
  ["ns/page"] = function(v, h) return v * h.pages end, ["GB/s"] = function(v, h) return h.bytes / v end,
}

local function per_rep(self, at, time)
  if type(at[1]) == "table" then
    assert(time, "h:ratio: a sum of {case, column} needs time = true")
    local sum = {}
    for _, one in ipairs(at) do
      local v = per_rep(self, one, true)
      if not v then return nil end
      for i = 1, #v do sum[i] = (sum[i] or 0) + v[i] end
    end
    return sum
  end
  local row = self:row(at[1], at[2])
  if not row or not time then return row and row.values end
  local to = TO_NS[row.unit] or error(("h:ratio: %s %s is in %s, not a time"):format(at[1], at[2], row.unit), 3)
  return stats.map(row.values, function(v) return to(v, self) end)
end

-- A ratio taken within each repetition (its cases ran back to back, so a
-- drift over the run cancels), as a value: the median over the repetitions
-- and its interval. a, b: {case, column}. opts.time: each as ns (a and b
-- may then be lists, summed); opts.minima: the ratio of the two rows'
-- minima beside it. Nothing when a row is missing (a case that did not
-- run); an undeclared column is an error. Returns the description.
-- What is wrong with the names in at (a pair or a list of them): a column
-- no h:columns declared is misspelt (an error); a case this run did not
-- declare may be one its knobs skip (CYCLES=A has no B), so it is said.
local function check_names(self, at)
  if type(at) ~= "table" then return ("expected a {case, column} pair, got %s"):format(type(at)) end
  if type(at[1]) == "table" then
    for _, one in ipairs(at) do
      local why, missing = check_names(self, one)
      if why or missing then return why, missing end
    end
    return nil
  end
  local pair = #at == 2 and type(at[1]) == "string" and type(at[2]) == "string"
  for k in pairs(at) do pair = pair and (k == 1 or k == 2) end
  if not pair then return "expected {case, column}, two names and nothing else" end
  local case_known, column_known = false, false
  for _, c in ipairs(self.cases) do case_known = case_known or c.name == at[1] or c.ab_case == at[1] end
  for _, c in ipairs(self.cols) do column_known = column_known or c.name == at[2] end
  if not column_known then return ("no column is named '%s'"):format(tostring(at[2])) end
  if not case_known then return nil, tostring(at[1]) end
end

local RATIO_OPTIONS = { time = true, minima = true }

function H:ratio(name, a, b, opts)
  text_ok("ratio name", name)
  -- before the repetitions every row is empty: a ratio of nothing, not a figure
  if not self.ran then error(("h:ratio %s: called before h:run(); call h:run() first"):format(name), 2) end
  for _, v in ipairs(self.values) do
    if v[1][2] == name then error(("h:ratio %s: a value of that name was taken already"):format(name), 2) end
  end
  opts = opts or {}
  if type(opts) ~= "table" then error(("h:ratio %s: options %s: expected a table {time =, minima =}"):format(name,
    tostring(opts)), 2) end
  for k in pairs(opts) do
    if not RATIO_OPTIONS[k] then
      error(("h:ratio %s: unknown option '%s' (time, minima)"):format(name, tostring(k)), 2)
    end
  end
  local why_a, missing_a = check_names(self, a)
  local why_b, missing_b = check_names(self, b)
  if why_a or why_b then error(("h:ratio %s: %s"):format(tostring(name), why_a or why_b), 2) end
  if missing_a or missing_b then
    self:progress("h:ratio %s: no case named '%s' ran (skipped by a knob, or misspelt), so no ratio", name,
      missing_a or missing_b)
    return nil
  end
  local x, y = per_rep(self, a, opts.time), per_rep(self, b, opts.time)
  if not (x and y) then return nil end
  local per = {}
  for i = 1, math.min(#x, #y) do per[i] = x[i] / y[i] end
  local d = stats.describe(per)
  self:value(name, d.median, "ratio", { { "lo", d.lo }, { "hi", d.hi }, { "n", d.n },
    { "of_minima", opts.minima and stats.min(x) / stats.min(y) or nil } })
  return d
end

-- The results, the files and the README paste (running the repetitions
-- first if h:run() has not). render(raw) -> the markdown; by default the
-- script's report module's table, or one table, a line per case and a
-- column per column.
function H:finish(render)
  if not self.ran then self:run() end
  results.finish(self, render)
end

harness.VERDICT_OK = results.VERDICT_OK
return harness
