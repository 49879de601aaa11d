-- What every experiment script shares: its knobs (MIB, REPS, QUICK and
-- where results go), progress on stderr, result lines, a markdown table,
-- and the files at the end: <name>.txt and <name>.json in the run's
-- directory (runfiles.lua), and on PUBLISH=1 the table pasted into the
-- README between the experiment's markers.
local ft = require "ft"
local knobs = require "knobs"
local measure = require "measure"
local report = require "report"
local runfiles = require "runfiles"
local stats = require "stats"

local experiment = {}
experiment.__index = experiment

-- name: "thp" for scripts/thp.lua; defaults: {MIB =, REPS =}; extra: more knob specs.
-- args: the script's arguments (KNOB=value, or --help).
function experiment.start(name, title, defaults, extra, args)
  local spec = {
    { name = "MIB", kind = "count", default = defaults.MIB, max = knobs.MIB_MAX, desc = "buffer size in MiB" },
    { name = "REPS", kind = "count", default = defaults.REPS, desc = "repetitions of each case" },
    { name = "QUICK", kind = "flag", default = false, desc = "1: 16 MiB and 2 reps, never published" },
  }
  for _, k in ipairs(runfiles.spec()) do spec[#spec + 1] = k end
  for _, k in ipairs(extra or {}) do spec[#spec + 1] = k end
  local script = name .. ".lua"
  local cfg = knobs.setup(script, title, spec, { MIB = 16, REPS = 2 }, args or arg or {})
  local self = setmetatable({
    name = name, script = script, title = title, cfg = cfg,
    bytes = cfg.MIB << 20, page = ft.page_size(), lines = {}, md = {}, series = {},
  }, experiment)
  self.pages = self.bytes // self.page
  knobs.check_memory(script, cfg.MIB, self.bytes * (defaults.buffers or 1))
  self.ghz, self.ghz_source = knobs.clock_ghz(script)
  self.plan = runfiles.plan(script, "exp-" .. name, cfg)
  self.clock = ft.clock()
  self.header_text, self.machine = report.header(
    ("ftrun %s: %s; %d MiB, %d reps"):format(script, title, cfg.MIB, cfg.REPS),
    self.clock, self.ghz, self.ghz_source)
  io.stderr:write(("%s: %s, %d MiB, %d reps\n"):format(script, title, cfg.MIB, cfg.REPS))
  return self
end

function experiment:progress(fmt, ...)
  io.stderr:write(self.script, ": ", fmt:format(...), "\n")
end

-- Runs fn(rep) REPS times; returns what each rep returned, as a list.
function experiment:repeat_(label, fn)
  local out = {}
  for rep = 1, self.cfg.REPS do
    self:progress("%s, rep %d/%d", label, rep, self.cfg.REPS)
    collectgarbage("collect")
    out[rep] = fn(rep)
  end
  return out
end

-- A RESULT line from {key, value} pairs, also kept for the JSON.
function experiment:result(fields)
  table.insert(fields, 1, { "experiment", self.name })
  self.lines[#self.lines + 1] = report.line(fields)
end

-- Keep one series of raw values (ns, faults) for the JSON.
function experiment:keep(key, values)
  self.series[key] = values
end

function experiment:text(s)
  self.md[#self.md + 1] = s
end

-- A markdown table: header is a list of column names, rows lists of cells.
function experiment:table(header, rows)
  self:text("| " .. table.concat(header, " | ") .. " |")
  self:text("|" .. ("---|"):rep(#header))
  for _, r in ipairs(rows) do self:text("| " .. table.concat(r, " | ") .. " |") end
  self:text("")
end

-- ns / pages as min and median over reps, and faults as median / max.
function experiment.per_page(ns_list, pages)
  local pp = stats.map(ns_list, function(ns) return ns / pages end)
  return stats.min(pp), stats.median(pp), stats.cv(pp)
end

-- Over the reps of one case (a list of tables): col(k) is field k of every
-- rep, pp(k) its min ns per page.
function experiment:columns(runs)
  local function col(k) return stats.map(runs, function(r) return r[k] end) end
  local function pp(k) return (experiment.per_page(col(k), self.pages)) end
  return col, pp
end

-- Numbers for tables: integers plainly, others to a sensible precision.
function experiment.fmt(x)
  if type(x) ~= "number" then return tostring(x) end
  if x == math.floor(x) and math.abs(x) < 2^53 then return ("%d"):format(x) end
  local a = math.abs(x)
  if a >= 100 then return ("%.0f"):format(x) end
  if a >= 1 then return ("%.2f"):format(x) end
  return ("%.3g"):format(x)
end

function experiment:finish()
  local verdict = ("CHECKSUMS OK: %d read-backs matched the values written"):format(measure.checks)
  local md = ("**ftrun %s**: %s; %d MiB, %d reps; %s, kernel %s, THP %s, hypervisor %s, "
    .. "free page reporting %s, %d NUMA node(s); %s UTC.\n\n"):format(
    self.script, self.title, self.cfg.MIB, self.cfg.REPS, self.machine.cpu, self.machine.kernel,
    self.machine.thp_enabled, self.machine.hypervisor, self.machine.free_page_reporting,
    self.machine.numa_nodes, os.date("!%Y-%m-%d %H:%M")) .. table.concat(self.md, "\n") .. "\n" .. verdict .. ".\n"
  local rows = {}
  for _, l in ipairs(self.lines) do rows[#rows + 1] = report.parse(l) end
  local json = report.json {
    script = self.script, title = self.title, date = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    knobs = { MIB = self.cfg.MIB, REPS = self.cfg.REPS }, machine = self.machine,
    clock = self.clock, clock_ghz = self.ghz, results = rows, series = self.series,
    checks = measure.checks,
  } .. "\n"
  io.stdout:write(md)
  runfiles.write(self.plan, {
    { self.name .. ".txt", self.header_text .. "\n" .. table.concat(self.lines, "\n") .. "\n" .. verdict .. "\n\n" .. md },
    { self.name .. ".json", json },
  }, { ["exp-" .. self.name] = md })
end

return experiment
