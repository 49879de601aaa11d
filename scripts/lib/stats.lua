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

-- The middle value of a list already sorted; the mean of the two middle ones for an even count.
function stats.median_sorted(c)
  local n = #c
  if n % 2 == 1 then return c[(n + 1) // 2] end
  return (c[n // 2] + c[n // 2 + 1]) / 2
end

function stats.median(xs)
  return stats.median_sorted(sorted(xs))
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

-- P(B <= k) for B ~ Binomial(n, 1/2), exactly (n up to ~1000).
local function binomial_cdf_half(n, k)
  local term, sum = 0.5 ^ n, 0 -- C(n, 0) / 2^n, then C(n, i+1) = C(n, i) (n-i) / (i+1)
  for i = 0, k do
    sum = sum + term
    term = term * (n - i) / (i + 1)
  end
  return sum
end

-- A distribution-free confidence interval of the median from order
-- statistics: the sorted values x(l) and x(u) with u = n + 1 - l, l the
-- largest rank whose coverage 1 - 2 P(B <= l - 1) is still at least `level`
-- (0.95). Below 6 values no pair reaches 95 %: the interval is then
-- [min, max] and `coverage` says what it covers. Returns lo, hi, l, u, coverage.
function stats.median_ci(xs, level)
  level = level or 0.95
  local c, n = sorted(xs), #xs
  local l = 1
  while l + 1 <= (n + 1) // 2 and 1 - 2 * binomial_cdf_half(n, l) >= level do l = l + 1 end
  local u = n + 1 - l
  return c[l], c[u], l, u, 1 - 2 * binomial_cdf_half(n, l - 1)
end

-- What every row carries: n, min, median with its 95 % interval (and the
-- ranks it takes, and what it covers), max, mean and cv of its values.
function stats.describe(xs)
  local lo, hi, l, u, coverage = stats.median_ci(xs)
  return { n = #xs, min = stats.min(xs), median = stats.median(xs), lo = lo, hi = hi,
    ci_ranks = l .. "," .. u, ci_coverage = coverage, max = stats.max(xs), mean = stats.mean(xs), cv = stats.cv(xs) }
end

-- The normal distribution's upper tail, 1 - Phi(z), from erfc (Numerical
-- Recipes' erfcc: fractional error below 1.2e-7 everywhere).
local function upper_tail(z)
  local x = math.abs(z) / math.sqrt(2)
  local t = 1 / (1 + 0.5 * x)
  local erfc = t * math.exp(-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
    + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
    + t * (-0.82215223 + t * 0.17087277)))))))))
  return z >= 0 and erfc / 2 or 1 - erfc / 2
end
stats.upper_tail = upper_tail

-- How many ways n1 of the ranks 1..n1+n2 have each U = rank sum - n1(n1+1)/2:
-- counts[u + 1], by the recurrence over the largest rank.
local function u_counts(n1, n2)
  local memo = {}
  local function f(a, b) -- a ranks chosen among a + b: counts of U as a list
    local key = a * 1000 + b
    if memo[key] then return memo[key] end
    local out
    if a == 0 or b == 0 then
      out = { 1 }
    else
      out = {}
      local with, without = f(a - 1, b), f(a, b - 1) -- the largest rank taken (U + b) or not
      for u = 0, a * b do
        out[u + 1] = (without[u + 1] or 0) + (u >= b and with[u - b + 1] or 0)
      end
    end
    memo[key] = out
    return out
  end
  return f(n1, n2)
end

-- The Mann-Whitney U test of two samples, two-sided. Exact when there are
-- no ties and n1 * n2 <= 2500; otherwise the normal approximation with the
-- tie correction and a continuity correction. Returns p, U (of xs), method.
function stats.mann_whitney(xs, ys)
  local n1, n2 = #xs, #ys
  local all = {}
  for _, x in ipairs(xs) do all[#all + 1] = { x, 1 } end
  for _, y in ipairs(ys) do all[#all + 1] = { y, 2 } end
  table.sort(all, function(a, b) return a[1] < b[1] end)
  local n, r1, ties, i = n1 + n2, 0, 0, 1
  while i <= n do -- midranks over each run of equal values
    local j = i
    while j < n and all[j + 1][1] == all[i][1] do j = j + 1 end
    local t = j - i + 1
    if t > 1 then ties = ties + t ^ 3 - t end
    for k = i, j do
      if all[k][2] == 1 then r1 = r1 + (i + j) / 2 end
    end
    i = j + 1
  end
  local u = r1 - n1 * (n1 + 1) / 2
  if ties == 0 and n1 * n2 <= 2500 then
    local counts, total, below, above = u_counts(n1, n2), 0, 0, 0
    for k, c in ipairs(counts) do
      total = total + c
      if k - 1 <= u then below = below + c end
      if k - 1 >= u then above = above + c end
    end
    return math.min(1, 2 * math.min(below, above) / total), u, "exact"
  end
  local mean = n1 * n2 / 2
  local var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
  if var <= 0 then return 1.0, u, "normal" end -- every value the same
  local z = (math.abs(u - mean) - 0.5) / math.sqrt(var)
  return math.min(1, 2 * upper_tail(math.max(z, 0))), u, "normal"
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

-- The weighted least-squares line y = a + b x through the points (xs[i],
-- ys[i]) with weights ws[i] (default 1): a, b; nil when the points do not
-- fix a line (fewer than two distinct x).
function stats.fit_line(xs, ys, ws)
  local s, sx, sy, sxx, sxy = 0, 0, 0, 0, 0
  for i = 1, #xs do
    local w, x, y = ws and ws[i] or 1, xs[i], ys[i]
    s, sx, sy, sxx, sxy = s + w, sx + w * x, sy + w * y, sxx + w * x * x, sxy + w * x * y
  end
  local det = s * sxx - sx * sx
  if det <= 1e-9 * s * sxx then return nil end
  local b = (s * sxy - sx * sy) / det
  return (sy - b * sx) / s, b
end

return stats
