-- Numbers as text, in one place. exact() is what RESULT lines and JSON
-- carry: integers as they are, floats in the fewest digits that read back
-- to the same double. cell() is what a table shows: the precision belongs
-- to the unit, so one column never mixes "928" and "922.9".
local units = {}

-- Each unit: how a raw repetition value becomes it (ns and bytes are the
-- raw quantities), the statistic a table shows (the median, with its
-- interval; a column may ask for another), the decimals, its kind (a
-- measured "time" or "rate", which drifts with the machine; a "count" or a
-- "share", which does not) and which way is better ("lower", "higher", or
-- none: a count or a share is no cost).
--   per_page: ns / pages    gbps: bytes / ns    scale: raw / scale
local UNITS = {
  ["ns/page"] = { convert = "per_page", shown = "median", decimals = 1, kind = "time", better = "lower" },
  ["ns"] = { shown = "median", decimals = 0, kind = "time", better = "lower" },
  ["us"] = { scale = 1e3, shown = "median", decimals = 1, kind = "time", better = "lower" },
  ["ms"] = { scale = 1e6, shown = "median", decimals = 1, kind = "time", better = "lower" },
  ["GB/s"] = { convert = "gbps", shown = "median", decimals = 2, kind = "rate", better = "higher" },
  ["faults"] = { shown = "median", decimals = "count", kind = "count" },
  ["pages"] = { shown = "median", decimals = "count", kind = "count" },
  ["count"] = { shown = "median", decimals = "count", kind = "count" },
  ["bytes"] = { shown = "median", decimals = "count", kind = "count" },
  ["faults/s"] = { shown = "median", decimals = 0, kind = "rate", better = "higher" },
  ["ops/s"] = { shown = "median", decimals = 0, kind = "rate", better = "higher" },
  ["%"] = { shown = "median", decimals = 2, kind = "share" },
  ["ratio"] = { shown = "median", decimals = 2, kind = "share" },
  ["GHz"] = { shown = "median", decimals = 3, kind = "rate" },
  ["cycles"] = { shown = "median", decimals = 0, kind = "time", better = "lower" },
}

function units.known(unit) return UNITS[unit] ~= nil end

local function spec(unit)
  return UNITS[unit] or error(("unknown unit '%s' (expected one of the units in scripts/lib/units.lua)")
    :format(tostring(unit)), 3)
end

-- A raw repetition value (ns, bytes, a count) in the unit, for a buffer of
-- `bytes` bytes in `pages` pages.
function units.convert(unit, raw, bytes, pages)
  local u = spec(unit)
  if u.convert == "per_page" then return raw / pages end
  if u.convert == "gbps" then return bytes / raw end
  if u.scale then return raw / u.scale end
  return raw
end

-- "time", "rate", "count" or "share" (nil for a unit not in the table).
function units.kind(unit) return UNITS[unit] and UNITS[unit].kind end

-- "lower" or "higher" for a cost or a throughput, nil when neither side is
-- better (or the unit is unknown).
function units.better(unit) return UNITS[unit] and UNITS[unit].better end

-- A measured time or rate: what drifts with the machine and what a
-- comparison gates on.
function units.timed(unit)
  return UNITS[unit] ~= nil and UNITS[unit].better ~= nil
end

-- The statistic a table shows for the unit: "min" or "median".
function units.shown(unit) return spec(unit).shown end

local function nonfinite(x)
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
end
units.nonfinite = nonfinite

-- The text that reads back as the same number: %d for integers, and for a
-- float the shortest of %.15g, %.16g, %.17g that round-trips; "inf", "-inf",
-- "nan" for what is not finite (units.parse reads them back).
function units.exact(x)
  if math.type(x) == "integer" then return ("%d"):format(x) end
  local nf = nonfinite(x)
  if nf then return nf end
  for digits = 15, 17 do
    local s = ("%." .. digits .. "g"):format(x)
    if tonumber(s) == x then
      if not s:find("[%.eEn]") then s = s .. ".0" end -- stays a float when read back
      return s
    end
  end
end

local SPECIAL = { inf = math.huge, ["-inf"] = -math.huge, nan = 0 / 0 }

-- The inverse of exact (nil for text that is no number).
function units.parse(s)
  if s:match("^%-?%d+$") then return math.tointeger(tonumber(s)) end
  return tonumber(s) or SPECIAL[s]
end

-- A table cell: the unit's decimals; counts as integers, or with one
-- decimal when a median of an even number of repetitions falls between two.
function units.cell(x, unit)
  if x == nil then return "–" end
  if type(x) ~= "number" then return tostring(x) end
  local nf = nonfinite(x)
  if nf then return nf end
  local d = spec(unit).decimals
  if d == "count" then
    if x == math.floor(x) then return ("%d"):format(x) end
    return ("%.1f"):format(x)
  end
  return ("%." .. d .. "f"):format(x)
end

return units
