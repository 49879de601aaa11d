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

function stats.sum(xs)
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  return s
end

function stats.mean(xs)
  return stats.sum(xs) / #xs
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

-- Nearest rank, as ft.samples' percentile: the smallest value with at
-- least p % of the values at or below it (p in 0..100).
function stats.percentile(xs, p)
  local c = sorted(xs)
  local rank = math.max(1, math.ceil(p / 100 * #c))
  return c[rank]
end

-- What every row carries: n, min, median, max, mean and cv of its values.
function stats.describe(xs)
  return { n = #xs, min = stats.min(xs), median = stats.median(xs), max = stats.max(xs),
    mean = stats.mean(xs), cv = stats.cv(xs) }
end

-- Apply f to every element; a string f takes that field of every element.
function stats.map(xs, f)
  local out = {}
  if type(f) == "string" then
    local key = f
    f = function(x) return x[key] end
  end
  for i, x in ipairs(xs) do out[i] = f(x) end
  return out
end

return stats
