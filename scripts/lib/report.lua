-- RESULT lines, written at full precision and read back exactly, and the
-- head of every raw file. runfiles.lua writes them.
local ft = require "ft"
local units = require "units"

local report = {}

-- A run that read nothing back (every case unsupported, or none that reads) has no
-- checksum to show; it is still a clean run: nothing read back was wrong.
report.VERDICT_NONE = "CHECKSUMS NONE: no read-back was made, so no value written was checked"

-- Whether a verdict is a clean run's (no read-back found a wrong value).
function report.clean_verdict(verdict)
  return type(verdict) == "string" and (verdict:match("^CHECKSUMS OK") ~= nil or verdict == report.VERDICT_NONE)
end

-- "RESULT k=v k=v ...": a number in units.exact's text, a word as it is,
-- text with spaces or quotes in double quotes (a " inside one is an error).
local function format_value(v)
  if type(v) == "number" then return units.exact(v) end
  if type(v) == "table" then -- a list knob's values, as the knob was written
    local parts = {}
    for i, x in ipairs(v) do parts[i] = type(x) == "number" and units.exact(x) or tostring(x) end
    v = table.concat(parts, ",")
  end
  if type(v) == "boolean" then return tostring(v) end
  v = tostring(v)
  if v:find('"', 1, true) or v:find("\n", 1, true) then
    error(("a RESULT value may not hold a double quote or a newline: %q"):format(v), 3)
  end
  if v == "" or v:find("%s") or units.parse(v) or v == "true" or v == "false" then return '"' .. v .. '"' end
  return v
end

-- fields: an array of {key, value} pairs, kept in order; a nil value is left out.
function report.line(fields)
  local parts = { "RESULT" }
  for _, kv in ipairs(fields) do
    if kv[2] ~= nil then parts[#parts + 1] = kv[1] .. "=" .. format_value(kv[2]) end
  end
  return table.concat(parts, " ")
end

-- The inverse: key -> value (numbers and booleans back as they were
-- written), and in ._keys the keys in order.
function report.parse(line)
  if not line:match("^RESULT ") then return nil end
  local t, keys = {}, {}
  local pos = #"RESULT " + 1
  while pos <= #line do
    local k, rest = line:match("^([%w_]+)=()", pos)
    if not k then error(("not a RESULT field at column %d: %s"):format(pos, line), 2) end
    local v, after
    if line:sub(rest, rest) == '"' then
      v, after = line:match('^"([^"]*)"()', rest)
      if not v then error("unterminated quote in: " .. line, 2) end
    else
      v, after = line:match("^(%S+)()", rest)
      if v == "true" or v == "false" then v = v == "true" else v = units.parse(v) or v end
    end
    t[k] = v
    keys[#keys + 1] = k
    pos = after + 1
  end
  t._keys = keys
  return t
end

function report.parse_all(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    local r = report.parse(line)
    if r then out[#out + 1] = r end
  end
  return out
end

-- The head of every raw file: what ran, on what, with which clock, and the
-- memory state just before the run.
local MEMINFO = { "MemTotal", "MemFree", "MemAvailable", "Cached", "AnonPages",
  "Active(anon)", "Inactive(anon)", "Active(file)", "Inactive(file)", "AnonHugePages",
  "Mlocked", "CommitLimit", "Committed_AS" }
local VMSTAT = { "nr_free_pages", "nr_anon_pages", "nr_anon_transparent_hugepages",
  "pgfault", "pgmajfault", "thp_fault_alloc", "thp_fault_fallback", "compact_stall",
  "pgscan_kswapd", "pgsteal_kswapd", "numa_hit", "numa_miss" }

-- The guest's kind beyond its name: page tables and zero page, as ft.machine() states them.
function report.kind(m)
  local tables = m.shadow_page_tables == true and "shadow page tables"
    or m.shadow_page_tables == false and "no shadow page tables" or "page tables not known to be shadowed"
  local zero = m.zero_page and "read faults map the zero page" or "no zero page (" .. m.zero_page_why .. ")"
  return tables .. ", " .. zero
end

-- A run's title, from what its JSON keeps: script, about, run, knobs MIB and REPS, warmup.
function report.title(script, about, run, mib, reps, warmup)
  return ("ftrun %s: %s; %s, %d MiB, %d reps%s"):format(script, about, run, mib, reps,
    warmup > 0 and " after " .. warmup .. " warm-up" or "")
end

-- The head's lines, each made from what a run's JSON records (r: its
-- fields title, machine = ft.machine(), clock = ft.clock(), clock_ghz,
-- clock_ghz_source, and before = the start's date and the memory state
-- then) and version, the ftrun that ran it. A JSON made before it kept
-- `before` makes no date, meminfo or vmstat line. report.header writes a
-- run's head with them, and claims makes the head again from the JSON
-- beside a raw file (partial: a line whose fields an older JSON lacks is
-- left out, not an error).
local function mem_line(head, names, values)
  local parts = {}
  for _, k in ipairs(names) do
    if values[k] then parts[#parts + 1] = ("%s=%d"):format(k, values[k]) end
  end
  return head .. table.concat(parts, " ")
end
local HEAD = {
  function(r) return "# " .. r.title end,
  function(r) return r.before.date and "date: " .. r.before.date end,
  function(_, version) return "ftrun: " .. version end,
  function(r) return "cpu: " .. r.machine.cpu .. (" (%d online, /proc/cpuinfo cpu MHz %.0f)"):format(r.machine.cpus,
    r.machine.cpu_mhz) end,
  function(r) return "kernel: " .. r.machine.kernel end,
  function(r)
    local m = r.machine
    return ("page size: %d bytes; THP enabled=%s defrag=%s, huge page %d bytes"):format(m.page_size, m.thp_enabled,
      m.thp_defrag, m.thp_pmd_size)
  end,
  function(r) return "clocksource: " .. r.machine.clocksource end,
  function(r)
    local m = r.machine
    return ("hypervisor: %s (%s; CPUID %s); %s; free page reporting: %s"):format(m.hypervisor, m.hypervisor_source,
      m.cpuid_hypervisor, report.kind(m), m.free_page_reporting)
  end,
  function(r)
    local m = r.machine
    return "per-page timer: " .. m.timer .. (m.timer_why and " (" .. m.timer_why .. ")" or "")
  end,
  function(r) return ("numa nodes: %d"):format(r.machine.numa_nodes) end,
  function(r)
    local c = r.clock
    return ("clock: %s, tick %d ns, read %.1f ns"):format(c.source, c.tick_ns, c.read_ns)
  end,
  function(r)
    return ("per-page timestamp (touch_timed): tick %d ns, store + read %.1f ns"):format(r.clock.timed.tick_ns,
      r.clock.timed.read_ns)
  end,
  function(r) return ("clock estimate: %.3f GHz (%s)"):format(r.clock_ghz, r.clock_ghz_source) end,
  function(r) return r.before.meminfo and mem_line("meminfo (kB) before the run: ", MEMINFO, r.before.meminfo) end,
  function(r) return r.before.vmstat and mem_line("vmstat before the run: ", VMSTAT, r.before.vmstat) end,
}

function report.head(r, version, partial)
  r = setmetatable({ before = type(r.before) == "table" and r.before or {} }, { __index = r })
  local lines = {}
  for _, line in ipairs(HEAD) do
    local ok, l
    if partial then ok, l = pcall(line, r, version) else ok, l = true, line(r, version) end
    if ok and l then lines[#lines + 1] = l end
  end
  return lines
end

-- The head of a run's raw file, read from the machine now; the machine, and
-- what the head read before the run (for the JSON's `before`).
function report.header(title, clock_info, ghz, ghz_source)
  local m = ft.machine()
  local mi, vm = ft.meminfo(), ft.vmstat()
  local before = { date = os.date("!%Y-%m-%dT%H:%M:%SZ"), meminfo = {}, vmstat = {} }
  for _, k in ipairs(MEMINFO) do before.meminfo[k] = mi[k] end
  for _, k in ipairs(VMSTAT) do before.vmstat[k] = vm[k] end
  local r = { title = title, machine = m, clock = clock_info, clock_ghz = ghz, clock_ghz_source = ghz_source,
    before = before }
  return table.concat(report.head(r, ft.version .. " (" .. _VERSION .. ")"), "\n") .. "\n", m, before
end

return report
