-- The environment knobs of a script, declared once and checked before
-- anything is mapped: a bad value names the knob, the value and what is
-- allowed, and stops the run with exit status 2.
local knobs = {}

local function fail(script, msg)
  io.stderr:write(script, ": ", msg, "\n")
  os.exit(2, true)
end

local parsers = {}

function parsers.count(value)
  local n = math.tointeger(tonumber(value, 10))
  if not n or n < 1 or not value:match("^%d+$") then return nil, "a positive integer" end
  return n
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

function parsers.path(value)
  if value == "" then return nil, "a non-empty path" end
  return value
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

-- spec: list of {name, kind, default, desc, ...}; returns {name = value},
-- and for every knob whether it was set explicitly in .given.
function knobs.read(script, spec)
  local values, given = {}, {}
  for _, k in ipairs(spec) do
    local raw = os.getenv(k.name)
    if raw == nil then
      values[k.name] = k.default
    else
      local v, expected = parsers[k.kind](raw, k)
      if v == nil then
        fail(script, ("%s=%s: expected %s (%s)"):format(k.name, raw, expected, k.desc))
      end
      values[k.name], given[k.name] = v, true
    end
  end
  values.given = given
  return values
end

knobs.fail = fail

-- One line per knob, for --help and the head of a results file.
function knobs.describe(spec)
  local lines = {}
  for _, k in ipairs(spec) do
    lines[#lines + 1] = ("  %-10s %s (default %s)"):format(k.name, k.desc, tostring(k.default))
  end
  return table.concat(lines, "\n")
end

-- What every script starts with: --help from the spec, the knobs read,
-- and QUICK=1's sizes (quick = {MIB =, REPS =}) where not given explicitly.
function knobs.setup(script, about, spec, quick)
  if arg and (arg[1] == "--help" or arg[1] == "-h") then
    print(("usage: [KNOB=value ...] ./ftrun %s\n\n%s\n\nknobs (environment):\n%s\n\n"
      .. "CLOCK_GHZ overrides the measured clock estimate."):format(script, about, knobs.describe(spec)))
    os.exit(0, true)
  end
  local cfg = knobs.read(script, spec)
  if cfg.QUICK then
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
  if need_kb > available_kb then
    fail(script, ("MIB=%d: needs %d MiB with 256 MiB to spare, MemAvailable is %d MiB")
      :format(mib, need_kb >> 10, available_kb >> 10))
  end
end

-- The clock estimate, or CLOCK_GHZ; a bad CLOCK_GHZ is a knob error.
function knobs.clock_ghz(script)
  local ok, ghz, source = pcall(require("ft").clock_estimate)
  if not ok then fail(script, (tostring(ghz):gsub("^.-CLOCK_GHZ", "CLOCK_GHZ"))) end
  return ghz, source
end

return knobs
