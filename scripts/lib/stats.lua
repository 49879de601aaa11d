-- Statistics over the repetitions of one row: plain Lua arrays of numbers.
local stats = {}

local function sorted(xs)
  local c = table.move(xs, 1, #xs, 1, {})
  table.sort(c)
  return c
end

function stats.min(xs)
  local m = math.huge
  for _, x in ipairs(xs) do if x < m then m = x end end
  return m
end

function stats.max(xs)
  local m = -math.huge
  for _, x in ipairs(xs) do if x > m then m = x end end
  return m
end

-- The middle value; the mean of the two middle ones for an even count.
function stats.median(xs)
  local c, n = sorted(xs), #xs
  if n % 2 == 1 then return c[(n + 1) // 2] end
  return (c[n // 2] + c[n // 2 + 1]) / 2
end

function stats.mean(xs)
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  return s / #xs
end

-- Coefficient of variation in percent (sample standard deviation / mean).
function stats.cv(xs)
  local n = #xs
  if n < 2 then return 0 end
  local m = stats.mean(xs)
  if m == 0 then return 0 end
  local ss = 0
  for _, x in ipairs(xs) do ss = ss + (x - m) ^ 2 end
  return 100 * math.sqrt(ss / (n - 1)) / math.abs(m)
end

-- Apply f to every element.
function stats.map(xs, f)
  local out = {}
  for i, x in ipairs(xs) do out[i] = f(x) end
  return out
end

return stats
