-- Results as stable, parseable lines, the head of every raw file, and JSON.
-- runfiles.lua writes them.
local ft = require "ft"

local report = {}

-- "RESULT k=v k=v ...": values are numbers or words without spaces.
local function format_value(v)
  if math.type(v) == "float" then
    if v ~= v or v == math.huge or v == -math.huge then return "nan" end
    if v == math.floor(v) and math.abs(v) < 2^53 then return ("%d"):format(v) end
    return math.abs(v) >= 1000 and ("%.1f"):format(v) or ("%.4g"):format(v)
  end
  return (tostring(v):gsub("%s", "_"))
end

-- fields: an array of {key, value} pairs, kept in order.
function report.line(fields)
  local parts = { "RESULT" }
  for _, kv in ipairs(fields) do
    parts[#parts + 1] = kv[1] .. "=" .. format_value(kv[2])
  end
  return table.concat(parts, " ")
end

-- The inverse: a table of key -> string (numbers converted), and the keys in order.
function report.parse(line)
  if not line:match("^RESULT ") then return nil end
  local t, keys = {}, {}
  for k, v in line:gmatch("([%w_]+)=(%S+)") do
    t[k] = tonumber(v) or v
    keys[#keys + 1] = k
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

function report.header(title, clock_info, ghz, ghz_source)
  local m = ft.machine()
  local lines = {
    "# " .. title,
    "date: " .. os.date("!%Y-%m-%dT%H:%M:%SZ"),
    "ftrun: " .. ft.version .. " (" .. _VERSION .. ")",
    "cpu: " .. m.cpu .. (" (%d online, /proc/cpuinfo cpu MHz %.0f)"):format(m.cpus, m.cpu_mhz),
    "kernel: " .. m.kernel,
    ("page size: %d bytes; THP enabled=%s defrag=%s, huge page %d bytes"):format(
      m.page_size, m.thp_enabled, m.thp_defrag, m.thp_pmd_size),
    "clocksource: " .. m.clocksource,
    "hypervisor: " .. m.hypervisor .. "; free page reporting: " .. m.free_page_reporting,
    ("numa nodes: %d"):format(m.numa_nodes),
    ("clock: %s, tick %d ns, read %.1f ns"):format(clock_info.source, clock_info.tick_ns, clock_info.read_ns),
    ("per-page timestamp (touch_timed): tick %d ns, store + read %.1f ns"):format(
      clock_info.timed.tick_ns, clock_info.timed.read_ns),
    ("clock estimate: %.3f GHz (%s)"):format(ghz, ghz_source),
  }
  local mi, vm = ft.meminfo(), ft.vmstat()
  local mparts, vparts = {}, {}
  for _, k in ipairs(MEMINFO) do
    if mi[k] then mparts[#mparts + 1] = ("%s=%d"):format(k, mi[k]) end
  end
  for _, k in ipairs(VMSTAT) do
    if vm[k] then vparts[#vparts + 1] = ("%s=%d"):format(k, vm[k]) end
  end
  lines[#lines + 1] = "meminfo (kB) before the run: " .. table.concat(mparts, " ")
  lines[#lines + 1] = "vmstat before the run: " .. table.concat(vparts, " ")
  return table.concat(lines, "\n") .. "\n", m
end

-- A small JSON encoder: objects with sorted keys, arrays, numbers, strings.
local function json(v, indent)
  indent = indent or ""
  local t = type(v)
  if t == "table" then
    local inner = indent .. "  "
    if #v > 0 or next(v) == nil then
      local parts = {}
      for _, x in ipairs(v) do parts[#parts + 1] = json(x, inner) end
      return "[" .. table.concat(parts, ", ") .. "]"
    end
    local keys = {}
    for k in pairs(v) do if k ~= "_keys" then keys[#keys + 1] = tostring(k) end end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do
      parts[#parts + 1] = inner .. json(k) .. ": " .. json(v[k], inner)
    end
    return "{\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "}"
  elseif t == "string" then
    return '"' .. v:gsub('[%c"\\]', function(c)
      return ({ ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t" })[c]
        or ("\\u%04x"):format(c:byte())
    end) .. '"'
  elseif t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    return math.type(v) == "integer" and tostring(v) or ("%.6g"):format(v)
  elseif t == "boolean" then
    return tostring(v)
  end
  return "null"
end
report.json = json

return report
