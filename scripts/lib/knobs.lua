-- The knobs of a script, declared once and checked before anything is
-- mapped. A knob comes from the environment or from an argument NAME=value
-- (the argument wins). A bad value names the knob, the value and what is
-- allowed, and stops the run with exit status 2; so do an argument that is
-- not one of the script's knobs and an environment knob that only other
-- scripts take.
local knobs = {}

local function fail(script, msg)
  io.stderr:write(script .. ": " .. tostring(msg) .. "\n")
  os.exit(2, true)
end
knobs.fail = fail

-- A value as a refusal echoes it: one line (control characters as \n or
-- \ddd), a long one cut with its length said, so a 100 KB AB stays short.
local SHOWN_MAX = 120
function knobs.shown(value)
  value = tostring(value)
  local n = #value
  if n > SHOWN_MAX then value = value:sub(1, SHOWN_MAX - 20) end
  value = value:gsub("%c", function(c) return c == "\n" and "\\n" or ("\\%d"):format(c:byte()) end)
  return n > SHOWN_MAX and ("%s... (%d bytes)"):format(value, n) or value
end
local shown = knobs.shown

-- The knobs only some scripts take, and which: a user who sets one for a
-- script that ignores it would otherwise get a run of something else.
-- Derived from the scripts beside this library, as they declare them: a
-- knob spec ({ name = "THP", kind = ... }) in the script's text, SEED
-- where its cases are shuffled (shuffle = true), PLANT_NS where it calls plant.knob. tests/results.lua checks
-- the map against every script's --help, tests/experiments.lua the other way.
local function script_knobs()
  local map = {}
  local lib = package.searchpath("knobs", package.path)
  local dir = lib and lib:match("^(.*)/lib/knobs%.lua$")
  for _, file in ipairs(dir and require("shell").list(dir, "%.lua$") or {}) do
    local f = io.open(dir .. "/" .. file)
    local text = f and f:read("a") or ""
    if f then f:close() end
    local function add(name) map[name] = map[name] or {}; table.insert(map[name], file) end
    for name in text:gmatch('{%s*name%s*=%s*"([%u_][%u%d_]*)"%s*,%s*kind%s*=') do add(name) end
    if text:find("shuffle%s*=%s*true") then add("SEED") end
    if text:find("plant%.knob%(") then add("PLANT_NS") end -- lib/plant.lua declares it for the script
  end
  return map
end
knobs.elsewhere = script_knobs()

-- MIB's largest value: MIB << 20 bytes must fit in a signed 64-bit integer.
knobs.MIB_MAX = (1 << 43) - 1

-- kind -> function(text, spec) returning the value, or nil and what is expected.
local parsers = {}
knobs.parsers = parsers

-- A positive integer up to spec.max (default 2^40): MIB << 20 must not wrap.
function parsers.count(value, spec)
  local max = spec.max or (1 << 40)
  -- 1e9 is an integer too; tointeger refuses what a double cannot hold exactly
  local n = (value:match("^%d+$") or value:match("^%d+[eE]%+?%d+$")) and math.tointeger(tonumber(value))
  if not n or n < 1 or n > max then return nil, ("a positive integer up to %d"):format(max) end
  return n
end

function parsers.count_or_auto(value, spec)
  if value == "auto" then return value end
  local n, expected = parsers.count(value, spec)
  return n, expected and (expected .. ", or auto")
end

function parsers.choice(value, spec)
  for _, c in ipairs(spec.choices) do
    if value == c then return value end
  end
  return nil, "one of " .. table.concat(spec.choices, ", ")
end

function parsers.flag(value)
  if value == "0" or value == "" then return false end
  if value == "1" then return true end
  return nil, "0 or 1"
end

-- seconds, comma-separated, each from 0 to 600: a list of numbers
function parsers.seconds(value)
  local list = {}
  for item in (value .. ","):gmatch("([^,]*),") do
    local s = tonumber(item)
    if not s or s < 0 or s > 600 or not item:match("^%s*[%d.]+%s*$") then
      return nil, "seconds from 0 to 600, comma-separated"
    end
    list[#list + 1] = s
  end
  return list
end

-- A given clock rate further than this factor from the estimate is said (SW-8): a core's
-- clock moves by less between idle and turbo, and cycles per page would move with it.
local GHZ_FACTOR = 1.5
local ghz_said = {}

-- a clock rate in GHz, above 0 and below 100; "measured" (or empty): the estimate
function parsers.ghz(value)
  if value == "" or value == "measured" then return "measured" end
  local ghz = value:match("^%d*%.?%d+$") and tonumber(value)
  if not ghz or ghz <= 0 or ghz >= 100 then return nil, "a clock rate in GHz, a number above 0 and below 100" end
  local ok, estimate = pcall(require("ft").clock_estimate, "measured")
  local factor = ok and estimate > 0 and math.max(ghz / estimate, estimate / ghz)
  if factor and factor > GHZ_FACTOR and not ghz_said[value] then
    ghz_said[value] = true
    io.stderr:write(("warning: CLOCK_GHZ=%s is %.3g times %s the clock estimate here (%.3f GHz): cycles per "
      .. "page are counted at the rate given\n"):format(value, factor, ghz > estimate and "above" or "below", estimate))
  end
  return ghz
end

-- one duration in seconds, above 0 and at most 600
function parsers.duration(value)
  local s = value:match("^%d*%.?%d+$") and tonumber(value)
  if not s or s <= 0 or s > 600 then return nil, "seconds above 0, at most 600" end
  return s
end

function parsers.path(value)
  if value == "" or value:find("\0", 1, true) then return nil, "a non-empty path" end
  return value
end

-- A planted cost: whole ns per page, 0 (none) to 100000.
function parsers.plant_ns(value)
  local n = value:match("^%d+$") and math.tointeger(tonumber(value))
  if not n or n > 100000 then return nil, "whole ns per page, 0 to 100000" end
  return n
end

-- A margin of "the same": a percent above 0 and below 100 (±100 % would
-- take in a halving and a doubling alike: no bound).
function parsers.equiv(value)
  local v = tonumber(value)
  if not v or v <= 0 or v ~= v or v >= 100 then return nil, "a percent above 0 and below 100" end
  return v
end

-- The rows a comparison decides on: "all", or "case:column" items separated
-- by ";" (a case's name may hold a comma; the column is after the last ":").
function parsers.rows(value)
  if value == "all" then return value end
  local list = {}
  for item in (value .. ";"):gmatch("([^;]*);") do
    local case, column = item:match("^%s*(.-):([^:]-)%s*$")
    if not case or case == "" or column == "" then
      return nil, "all, or case:column items separated by ; (e.g. A:pass1;A:pass2)"
    end
    list[#list + 1] = { case, column }
  end
  return list
end

-- letters from spec.letters, each at most once, at least one
function parsers.letters(value, spec)
  if value == "" then return nil, "a non-empty subset of " .. spec.letters end
  local seen = {}
  for ch in value:gmatch(".") do
    if not spec.letters:find(ch, 1, true) or seen[ch] then
      return nil, "a subset of the letters " .. spec.letters .. ", each once"
    end
    seen[ch] = true
  end
  return value
end

local function names(spec)
  local out = {}
  for _, k in ipairs(spec) do out[#out + 1] = k.name end
  return table.concat(out, ", ")
end

-- NAME=value arguments as a table; anything else is a usage error.
local function argument_knobs(script, spec, known, args)
  local given = {}
  for _, a in ipairs(args) do
    local name, value = a:match("^([%u_][%u%d_]*)=(.*)$")
    if not name or not known[name] then
      fail(script, ("argument '%s' is not one of this script's knobs (NAME=value with NAME one of %s)")
        :format(shown(a), names(spec)))
    end
    if given[name] then -- which one was meant cannot be told
      fail(script, ("%s is given twice (%s=%s and %s=%s); give it once")
        :format(name, name, shown(given[name]), name, shown(value)))
    end
    given[name] = value
  end
  return given
end

-- spec: list of {name, kind, default, desc, ...}; args: the script's
-- arguments. Returns {name = value}, and in .given the knobs set explicitly.
function knobs.read(script, spec, args)
  local takes = {}
  for _, k in ipairs(spec) do
    takes[k.name] = true
    if not parsers[k.kind] then error(("knob %s: unknown kind '%s'"):format(k.name, tostring(k.kind)), 2) end
  end
  local from_args = argument_knobs(script, spec, takes, args or {})
  for name, scripts in pairs(knobs.elsewhere) do
    local raw = os.getenv(name)
    if raw and not takes[name] then
      fail(script, ("%s=%s is set, but %s does not take %s (%s does); unset it to run %s")
        :format(name, shown(raw), script, name, table.concat(scripts, ", "), script))
    end
  end
  local values, given = {}, {}
  for _, k in ipairs(spec) do
    local raw = from_args[k.name] or os.getenv(k.name)
    if raw == nil then
      -- a list's default is written as its text; it is read the way a given value is
      values[k.name] = k.kind == "seconds" and assert(parsers.seconds(k.default)) or k.default
    else
      -- every value is recorded in the results' RESULT lines, which cannot hold these
      if raw:find('[%c"]') then
        fail(script, ("%s=%s: a knob's value may not hold a double quote, a newline or another control character")
          :format(k.name, shown(raw)))
      end
      local v, expected = parsers[k.kind](raw, k)
      if v == nil then
        fail(script, ("%s=%s: expected %s (%s)"):format(k.name, shown(raw), expected, k.desc))
      end
      values[k.name], given[k.name] = v, true
    end
  end
  values.given = given
  return values
end

-- One line per knob, for --help and the head of a results file.
function knobs.describe(spec)
  local lines = {}
  for _, k in ipairs(spec) do
    lines[#lines + 1] = ("  %-10s %s (default %s)"):format(k.name, k.desc, tostring(k.default))
  end
  return table.concat(lines, "\n")
end

-- --help: the usage line (synopsis: what follows ./ftrun, by default the
-- script and its knobs), about and the knobs; exits 0.
function knobs.help(script, about, spec, synopsis)
  print(("usage: ./ftrun %s   (or KNOB=value in the environment)\n\n%s\n\nknobs:\n%s"):format(
    synopsis or (script .. " [KNOB=value ...]"), about, knobs.describe(spec)))
  os.exit(0, true)
end

-- What every script starts with: --help from the spec, the knobs read, and
-- QUICK=1's sizes (quick = {MIB =, REPS =}) where not given explicitly.
function knobs.setup(script, about, spec, quick, args, synopsis)
  args = args or {}
  if args[1] == "--help" or args[1] == "-h" then knobs.help(script, about, spec, synopsis) end
  -- --check KNOB=value ...: the knobs read and refused as a run would, then
  -- exit 0 before anything runs (a caller checks them before sending them away)
  if args[1] == "--check" then
    knobs.read(script, spec, table.move(args, 2, #args, 1, {}))
    os.exit(0, true)
  end
  local cfg = knobs.read(script, spec, args)
  if cfg.QUICK then
    if cfg.PUBLISH then fail(script, "QUICK=1 PUBLISH=1: a QUICK run is never published") end
    for k, v in pairs(quick) do
      if not cfg.given[k] then cfg[k] = v end
    end
  end
  return cfg
end

-- Stops the run when what it maps would not leave 256 MiB of MemAvailable.
function knobs.check_memory(script, mib, need_bytes)
  local available_kb = require("ft").meminfo().MemAvailable
  local need_kb = need_bytes // 1024 + (256 << 10)
  -- MIB itself first: a script's need of several buffers of MIB wraps near MIB's maximum (WE-2)
  if mib > available_kb >> 10 or need_bytes < 0 or need_kb > available_kb then
    need_kb = math.max(need_kb, (mib << 10) + (256 << 10))
    fail(script, ("MIB=%d: needs %d MiB with 256 MiB to spare, MemAvailable is %d MiB")
      :format(mib, need_kb >> 10, available_kb >> 10))
  end
end

-- The clock estimate, or CLOCK_GHZ; a bad CLOCK_GHZ is a knob error.
function knobs.clock_ghz(script)
  local ft = require "ft"
  local ok, ghz, source = pcall(ft.clock_estimate)
  -- an interrupt during the estimate is no knob error: it goes on, to exit 130
  if not ok and ft.interrupted() then error(ghz, 0) end
  if not ok then fail(script, (tostring(ghz):gsub("^.-CLOCK_GHZ", "CLOCK_GHZ"))) end
  return ghz, source
end

return knobs
