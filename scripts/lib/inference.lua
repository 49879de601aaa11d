-- Inference across levels of repetition: runs hold repetitions, and the
-- repetitions of one run share the machine's state of that moment, so a
-- difference between runs is judged with the run as the unit (Kalibera and
-- Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013). Plain Lua
-- arrays of numbers; every random draw comes from a seeded generator of
-- its own, so a result is the same on every machine for the same seed.
local stats = require "stats"

local inference = {}

-- xorshift64* (Vigna): 64-bit integer state, Lua 5.4's wrapping integers.
-- rng() -> a float in [0, 1); rng(n) -> an integer in 1..n. The second
-- function, shuffle(list, n), shuffles list[1..n] in place (Fisher-Yates)
-- with the same sequence, j = rng(i) for i = n down to 2, inlined: a
-- permutation test's 2000 shuffles spent most of their time in calls.
function inference.rng(seed)
  local x = math.tointeger(seed) or error(("rng seed %s: expected an integer"):format(tostring(seed)), 2)
  if x == 0 then x = 0x2545F4914F6CDD1D end
  local floor = math.floor
  local function rng(n)
    x = x ~ (x >> 12)
    x = x ~ (x << 25)
    x = x ~ (x >> 27)
    local u = ((x * 0x2545F4914F6CDD1D) >> 11) / 9007199254740992.0 -- 53 bits
    if n then return floor(u * n) + 1 end
    return u
  end
  local function shuffle(list, n)
    for i = n, 2, -1 do
      x = x ~ (x >> 12); x = x ~ (x << 25); x = x ~ (x >> 27)
      local j = floor(((x * 0x2545F4914F6CDD1D) >> 11) / 9007199254740992.0 * i) + 1
      list[i], list[j] = list[j], list[i]
    end
  end
  return rng, shuffle
end

local function sorted(xs)
  local c = table.move(xs, 1, #xs, 1, {})
  table.sort(c)
  return c
end

-- The value below which a share q of the sorted array c lies (linear
-- interpolation between order statistics, R's type 7).
local function quantile(c, q)
  local h = (#c - 1) * q + 1
  local lo = math.floor(h)
  if lo >= #c then return c[#c] end
  return c[lo] + (h - lo) * (c[lo + 1] - c[lo])
end
inference.quantile = function(xs, q) return quantile(sorted(xs), q) end

-- Every run's values in one list.
function inference.pooled(runs)
  local all = {}
  for _, r in ipairs(runs) do table.move(r, 1, #r, #all + 1, all) end
  return all
end

-- Appends to all one resample of runs: the runs drawn with replacement, then
-- within each drawn run its repetitions drawn with replacement.
function inference.resample_into(all, runs, rng)
  for _ = 1, #runs do
    local r = runs[rng(#runs)]
    for _ = 1, #r do all[#all + 1] = r[rng(#r)] end
  end
  return all
end

-- One resample of a side, and the median of it.
local function resample_median(runs, rng)
  return stats.median(inference.resample_into({}, runs, rng))
end

-- The hierarchical bootstrap of the ratio of medians new / old. old and new
-- are lists of runs, each run a list of its repetitions' values. The
-- estimate is the ratio of the pooled medians; the interval is the
-- percentile interval over B resamples (runs, then repetitions within
-- runs). opts: B (default 2000), seed (default 1), level (default 0.95).
-- Returns ratio, lo, hi. A side whose median is 0 gives nil (no ratio).
function inference.bootstrap_ratio(old, new, opts)
  opts = opts or {}
  local B, level = opts.B or 2000, opts.level or 0.95
  local rng = inference.rng(opts.seed or 1)
  local m_old, m_new = stats.median(inference.pooled(old)), stats.median(inference.pooled(new))
  if m_old == 0 then return nil end
  local ratios = {}
  for b = 1, B do
    local o = resample_median(old, rng)
    local n = resample_median(new, rng)
    ratios[b] = o ~= 0 and n / o or (n == 0 and 1 or math.huge)
  end
  table.sort(ratios)
  return m_new / m_old, quantile(ratios, (1 - level) / 2), quantile(ratios, 1 - (1 - level) / 2)
end

-- One side's median with its hierarchical percentile interval (runs, then
-- repetitions in runs). Returns median, lo, hi.
function inference.bootstrap_median(runs, opts)
  opts = opts or {}
  local B, level = opts.B or 2000, opts.level or 0.95
  local rng = inference.rng(opts.seed or 1)
  local meds = {}
  for b = 1, B do meds[b] = resample_median(runs, rng) end
  table.sort(meds)
  return stats.median(inference.pooled(runs)), quantile(meds, (1 - level) / 2), quantile(meds, 1 - (1 - level) / 2)
end

-- The median of per-pair ratios b / a (paired repetitions) with its
-- percentile bootstrap interval (pairs resampled). Returns ratio, lo, hi.
function inference.paired_ratio(a, b, opts)
  opts = opts or {}
  local B, level = opts.B or 2000, opts.level or 0.95
  local rng = inference.rng(opts.seed or 1)
  local r = {}
  for i = 1, #a do r[i] = b[i] / a[i] end
  local meds = {}
  for k = 1, B do
    local s = {}
    for i = 1, #r do s[i] = r[rng(#r)] end
    meds[k] = stats.median(s)
  end
  table.sort(meds)
  return stats.median(r), quantile(meds, (1 - level) / 2), quantile(meds, 1 - (1 - level) / 2)
end

local function binomial(n, k)
  local c = 1
  for i = 1, k do c = c * (n - k + i) / i end
  return c
end
inference.binomial = binomial

-- The two-sided sign test: k of n paired differences one way, p under "either way is as
-- likely" (exact: twice the smaller tail, at most 1).
function inference.sign_test(k, n)
  local tail = 0
  for i = 0, math.min(k, n - k) do tail = tail + binomial(n, i) end
  return math.min(1, 2 * tail / 2 ^ n)
end

-- The two-sided permutation test of two small samples (e.g. run medians,
-- or their logs): the statistic is the difference of the means, and p the
-- share of the C(n1 + n2, n1) relabellings whose difference is at least as
-- far from 0 as the observed one. Exact (every relabelling enumerated) up
-- to `exact_max` relabellings (default 100000), else `draws` (default
-- 20000) seeded random relabellings, p = (hits + 1) / (draws + 1).
-- Returns p, method, the smallest p these sizes can give.
function inference.permutation(xs, ys, opts)
  opts = opts or {}
  local n1, n2 = #xs, #ys
  local all = {}
  table.move(xs, 1, n1, 1, all)
  table.move(ys, 1, n2, n1 + 1, all)
  local n, total = n1 + n2, 0
  for _, v in ipairs(all) do total = total + v end
  local function diff(sum1) return (total - sum1) / n2 - sum1 / n1 end
  local s1 = 0
  for i = 1, n1 do s1 = s1 + all[i] end
  local observed = math.abs(diff(s1))
  local eps = 1e-9 * math.max(1, observed)
  local count = binomial(n, n1)
  -- at best only the observed split is as extreme (and its mirror, when the sizes are equal)
  local floor = (n1 == n2 and 2 or 1) / count
  if count <= (opts.exact_max or 100000) then
    local hits, seen = 0, 0
    local function walk(start, left, sum) -- choose `left` more of all[start..n] for the first group
      if left == 0 then
        seen = seen + 1
        if math.abs(diff(sum)) >= observed - eps then hits = hits + 1 end
        return
      end
      for i = start, n - left + 1 do walk(i + 1, left - 1, sum + all[i]) end
    end
    walk(1, n1, 0)
    return hits / seen, "exact", floor
  end
  local draws, rng = opts.draws or 20000, inference.rng(opts.seed or 1)
  local hits, idx = 0, {}
  for i = 1, n do idx[i] = i end
  for _ = 1, draws do
    local sum = 0
    for i = 1, n1 do -- a partial Fisher-Yates: the first n1 positions
      local j = i - 1 + rng(n - i + 1)
      idx[i], idx[j] = idx[j], idx[i]
      sum = sum + all[idx[i]]
    end
    if math.abs(diff(sum)) >= observed - eps then hits = hits + 1 end
  end
  return (hits + 1) / (draws + 1), "random", 1 / (draws + 1)
end

-- Midranks of xs (ties share the mean of their ranks).
local function midranks(xs)
  local idx = {}
  for i = 1, #xs do idx[i] = i end
  table.sort(idx, function(a, b) return xs[a] < xs[b] end)
  local ranks, i = {}, 1
  while i <= #idx do
    local j = i
    while j < #idx and xs[idx[j + 1]] == xs[idx[i]] do j = j + 1 end
    for k = i, j do ranks[idx[k]] = (i + j) / 2 end
    i = j + 1
  end
  return ranks
end
inference.midranks = midranks

-- The Wilcoxon signed-rank test of paired differences d (e.g. the logs of
-- per-repetition ratios B/A) against 0, two-sided. Zeros are dropped
-- (Wilcoxon's rule); ties share midranks. Exact, conditional on the ranks,
-- up to 60 non-zero differences (the distribution of W+ counted over the
-- doubled ranks, which are integers); above, the normal approximation with
-- the tie correction. Returns p, W+ (the sum of the positive
-- differences' ranks), the count used, method.
function inference.wilcoxon(d)
  local nz = {}
  for _, v in ipairs(d) do if v ~= 0 then nz[#nz + 1] = v end end
  local n = #nz
  if n == 0 then return 1, 0, 0, "exact" end
  local abs = {}
  for i, v in ipairs(nz) do abs[i] = math.abs(v) end
  local ranks = midranks(abs)
  local w = 0
  for i, v in ipairs(nz) do if v > 0 then w = w + ranks[i] end end
  if n <= 60 then
    local counts, top = { [0] = 1 }, 0 -- counts[s]: subsets whose doubled-rank sum is s
    for _, r in ipairs(ranks) do
      local r2 = math.tointeger(2 * r)
      for s = top, 0, -1 do
        if counts[s] then counts[s + r2] = (counts[s + r2] or 0) + counts[s] end
      end
      top = top + r2
    end
    local w2, below, above, total = math.tointeger(2 * w), 0, 0, 0
    for s = 0, top do
      local c = counts[s]
      if c then
        total = total + c
        if s <= w2 then below = below + c end
        if s >= w2 then above = above + c end
      end
    end
    return math.min(1, 2 * math.min(below, above) / total), w, n, "exact"
  end
  local ties = 0
  local seen = {}
  for _, r in ipairs(ranks) do seen[r] = (seen[r] or 0) + 1 end
  for _, t in pairs(seen) do ties = ties + t ^ 3 - t end
  local mean = n * (n + 1) / 4
  local var = n * (n + 1) * (2 * n + 1) / 24 - ties / 48
  local z = (math.abs(w - mean) - 0.5) / math.sqrt(var)
  return math.min(1, 2 * stats.upper_tail(math.max(z, 0))), w, n, "normal"
end

-- Benjamini-Hochberg: the adjusted p (q) of each p, in the input's order.
-- A row is called at false discovery rate alpha when its q <= alpha.
function inference.bh(ps)
  local m = #ps
  local idx = {}
  for i = 1, m do idx[i] = i end
  table.sort(idx, function(a, b) return ps[a] < ps[b] end)
  local q, running = {}, 1
  for k = m, 1, -1 do
    local i = idx[k]
    running = math.min(running, ps[i] * m / k)
    q[i] = running
  end
  return q
end

-- Pettitt's test for one change of level in a sequence, on ranks. With the
-- midranks r, U_t = sum over i <= t of (2 r_i - n - 1), which is
-- sum over i <= t, j > t of sign(x_i - x_j); K = max |U_t| at t = tau.
-- p is the share of orderings of the same ranks with a K at least as large:
-- exact (all n! orders) up to n = 8, else `draws` (default 4000) seeded
-- random orders, p = (hits + 1) / (draws + 1). Returns p, tau (the last
-- index before the change), K.
local function pettitt_k(ranks, n)
  local u, k, tau = 0, -1, 1
  for t = 1, n - 1 do
    u = u + 2 * ranks[t] - n - 1
    if math.abs(u) > k then k, tau = math.abs(u), t end
  end
  return k, tau
end

function inference.pettitt(xs, opts)
  opts = opts or {}
  local n = #xs
  if n < 3 then return 1, nil, 0 end
  local ranks = midranks(xs)
  local k, tau = pettitt_k(ranks, n)
  local eps = 1e-9
  local hits, total = 0, 0
  local perm = table.move(ranks, 1, n, 1, {})
  if n <= 8 then
    local function heap(m) -- every order of perm (Heap's algorithm)
      if m == 1 then
        total = total + 1
        if pettitt_k(perm, n) >= k - eps then hits = hits + 1 end
        return
      end
      for i = 1, m do
        heap(m - 1)
        local j = m % 2 == 0 and i or 1
        perm[j], perm[m] = perm[m], perm[j]
      end
    end
    heap(n)
    return hits / total, tau, k
  end
  local draws, _, shuffle = opts.draws or 4000, inference.rng(opts.seed or 1)
  for _ = 1, draws do
    shuffle(perm, n)
    if pettitt_k(perm, n) >= k - eps then hits = hits + 1 end
  end
  return (hits + 1) / (draws + 1), tau, k
end

-- The largest standardized rank sum of a block of consecutive values
-- against the rest (a Mann-Whitney statistic for every block of at least
-- min_len values that leaves at least min_len outside): a block touching an
-- edge is one change of level, a block inside is a change and a return.
-- A block of m values' expected rank sum and its standard deviation depend
-- on m and n alone: computed once per m (the same expressions, so the same
-- bits) rather than in each of the draws' n^2/2 blocks.
local function block_moments(n, min_len)
  local mean, sd = {}, {}
  for m = min_len, n - min_len do
    mean[m], sd[m] = m * (n + 1) / 2, math.sqrt(m * (n - m) * (n + 1) / 12)
  end
  return mean, sd
end

local function scan_z(ranks, n, min_len, prefix, mean, sd)
  prefix[0] = 0
  for i = 1, n do prefix[i] = prefix[i - 1] + ranks[i] end
  local best, ba, bb = -1, nil, nil
  for a = 1, n - min_len + 1 do -- blocks a..b of m values, min_len <= m <= n - min_len
    local base, m = prefix[a - 1], min_len - 1
    for b = a + min_len - 1, math.min(n, n - min_len + a - 1) do
      m = m + 1
      local d = prefix[b] - base - mean[m]
      if d < 0 then d = -d end
      local z = d / sd[m]
      if z > best then best, ba, bb = z, a, b end
    end
  end
  return best, ba, bb
end

-- Whether some block's z reaches target: scan_z(...) >= target, answered
-- block size by block size. A size's largest |rank sum - mean| is the
-- larger of (its largest sum - mean) and (mean - its smallest), exact on
-- these half-integers, and dividing by sd[m] keeps the order, so the answer
-- is scan_z's to the bit, with a division per size rather than per block
-- and a stop at the first size that reaches it. sizes: the block sizes to
-- look at (those that can reach target at all, possible_sizes).
local function scan_reaches(ranks, n, sizes, prefix, mean, sd, target)
  prefix[0] = 0
  for i = 1, n do prefix[i] = prefix[i - 1] + ranks[i] end
  for _, m in ipairs(sizes) do
    local hi, lo = -math.huge, math.huge
    for b = m, n do
      local s = prefix[b] - prefix[b - m]
      if s > hi then hi = s end
      if s < lo then lo = s end
    end
    local mu = mean[m]
    local d = hi - mu
    if mu - lo > d then d = mu - lo end
    if d / sd[m] >= target then return true end
  end
  return false
end

-- The block sizes whose z can reach target in some order of these ranks:
-- a block of m sums to at most its m largest ranks and at least its m
-- smallest, so a size whose bound falls short is never the one that
-- reaches it (the bound is exact on half-integers, the division keeps the
-- order). For a significant row (z near 3 in 15 values) half the sizes.
local function possible_sizes(ranks, n, min_len, mean, sd, target)
  local sorted_ranks = table.move(ranks, 1, n, 1, {})
  table.sort(sorted_ranks)
  local low, high, sizes = 0, 0, {}
  for m = 1, n - min_len do
    low, high = low + sorted_ranks[m], high + sorted_ranks[n - m + 1]
    if m >= min_len then
      local d = high - mean[m]
      if mean[m] - low > d then d = mean[m] - low end
      if d / sd[m] >= target then sizes[#sizes + 1] = m end
    end
  end
  return sizes
end

-- The rank scan test for a block of values whose level differs from the
-- rest's: p is the share of random orders of the same ranks (seeded;
-- `draws`, default 2000) whose largest standardized block statistic is at
-- least the observed, p = (hits + 1) / (draws + 1). opts.stop_above: stop
-- drawing once p must exceed it (p is then a lower bound above it).
-- Returns p, a, b (the block's first and last index), z.
-- The test depends on the ranks alone, and a run's rows often share them
-- (a pass in ns/page and in cycles/page, a time and its bandwidth): each
-- answer is kept, by its ranks and options, for the next row that asks.
local scan_memo = {}

local function rank_scan(ranks, n, min_len, opts)
  local prefix, mean, sd = {}, block_moments(n, min_len)
  local z, a, b = scan_z(ranks, n, min_len, prefix, mean, sd)
  if not a then return 1 end
  local draws, _, shuffle = opts.draws or 2000, inference.rng(opts.seed or 1)
  local perm, hits, target = table.move(ranks, 1, n, 1, {}), 0, z - 1e-9
  local sizes = possible_sizes(ranks, n, min_len, mean, sd, target)
  for _ = 1, draws do
    shuffle(perm, n)
    if scan_reaches(perm, n, sizes, prefix, mean, sd, target) then
      hits = hits + 1
      if opts.stop_above and (hits + 1) / (draws + 1) > opts.stop_above then break end
    end
  end
  return (hits + 1) / (draws + 1), a, b, z
end

function inference.rank_scan(xs, opts)
  opts = opts or {}
  local n, min_len = #xs, opts.min_len or 2
  if n < 2 * min_len then return 1 end
  local ranks = midranks(xs)
  local key = ("%d %s %s %s|%s"):format(min_len, tostring(opts.draws), tostring(opts.seed),
    tostring(opts.stop_above), table.concat(ranks, " "))
  local known = scan_memo[key]
  if not known then
    known = table.pack(rank_scan(ranks, n, min_len, opts))
    scan_memo[key] = known
  end
  return table.unpack(known, 1, known.n)
end

-- Regimes: binary segmentation with the rank scan test. A stretch of
-- values splits around the block the test finds when its p < level
-- (default 0.05; 15 values can give no p below about 0.016 for a block of
-- 5 inside, so a stricter level would never see one) and every part holds at least `min_len` (default 2)
-- values; each part is tested again. Returns the segments in order, each
-- {first, last, median, p} (p: of the change that begins it; nil for the
-- first).
function inference.segments(xs, opts)
  opts = opts or {}
  local level, min_len = opts.level or 0.05, opts.min_len or 2
  local cuts = {} -- index of the first value of a new segment -> p
  local function split(lo, hi)
    if hi - lo + 1 < 2 * min_len then return end
    local p, a, b = inference.rank_scan(table.move(xs, lo, hi, 1, {}),
      { min_len = min_len, draws = opts.draws, seed = opts.seed, stop_above = level })
    if not a or p >= level then return end
    a, b = lo + a - 1, lo + b - 1
    local parts = {}
    if a > lo then cuts[a] = p; parts[#parts + 1] = { lo, a - 1 } end
    parts[#parts + 1] = { a, b }
    if b < hi then cuts[b + 1] = p; parts[#parts + 1] = { b + 1, hi } end
    for _, part in ipairs(parts) do split(part[1], part[2]) end
  end
  split(1, #xs)
  local segs, first = {}, 1
  for i = 2, #xs + 1 do
    if i == #xs + 1 or cuts[i] then
      segs[#segs + 1] = { first = first, last = i - 1, median = stats.median(table.move(xs, first, i - 1, 1, {})),
        p = cuts[first] }
      first = i
    end
  end
  return segs
end

-- Regimes of a row: its segments (inference.segments), a segment joined to
-- an earlier regime (not the one just before it, from which it was split)
-- when a Mann-Whitney test finds no difference between them at the same
-- level, the nearest median first. Returns nil when the row has one
-- regime, else the regimes sorted by their first repetition, each
-- {median, reps = {{first, last}, ...}, n, p} (p: of the change that began
-- its first segment), and the segments.
function inference.regimes(xs, opts)
  opts = opts or {}
  local level = opts.level or 0.05
  local segs = inference.segments(xs, opts)
  if #segs < 2 then return nil end
  local regimes, last = {}, nil
  for _, s in ipairs(segs) do
    local vals = table.move(xs, s.first, s.last, 1, {})
    local home, best
    for _, r in ipairs(regimes) do
      if r ~= last and stats.mann_whitney(r.values, vals) >= level then
        local dist = math.abs(r.median - s.median)
        if not best or dist < best then home, best = r, dist end
      end
    end
    if home then
      home.reps[#home.reps + 1] = { s.first, s.last }
      table.move(vals, 1, #vals, #home.values + 1, home.values)
      home.median = stats.median(home.values)
    else
      home = { median = s.median, reps = { { s.first, s.last } }, values = vals, p = s.p }
      regimes[#regimes + 1] = home
    end
    last = home
  end
  if #regimes < 2 then return nil end
  for _, r in ipairs(regimes) do r.n, r.values = #r.values, nil end
  return regimes, segs
end

-- "1 and 11–15" from {{1, 1}, {11, 15}}.
function inference.spans(reps)
  local parts = {}
  for _, s in ipairs(reps) do
    parts[#parts + 1] = s[1] == s[2] and tostring(s[1]) or ("%d–%d"):format(s[1], s[2])
  end
  if #parts == 1 then return parts[1] end
  return table.concat(parts, ", ", 1, #parts - 1) .. " and " .. parts[#parts]
end

-- Student's t distribution's upper tail P(T > t) for df degrees of freedom
-- (df a positive integer), from the regularized incomplete beta function
-- by its continued fraction (Numerical Recipes' betacf).
local function betacf(a, b, x)
  local qab, qap, qam = a + b, a + 1, a - 1
  local c, d = 1, 1 - qab * x / qap
  if math.abs(d) < 1e-300 then d = 1e-300 end
  d = 1 / d
  local h = d
  for m = 1, 300 do
    local m2 = 2 * m
    local aa = m * (b - m) * x / ((qam + m2) * (a + m2))
    d = 1 + aa * d; if math.abs(d) < 1e-300 then d = 1e-300 end
    c = 1 + aa / c; if math.abs(c) < 1e-300 then c = 1e-300 end
    d = 1 / d; h = h * d * c
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
    d = 1 + aa * d; if math.abs(d) < 1e-300 then d = 1e-300 end
    c = 1 + aa / c; if math.abs(c) < 1e-300 then c = 1e-300 end
    d = 1 / d
    local del = d * c
    h = h * del
    if math.abs(del - 1) < 1e-12 then break end
  end
  return h
end

-- log Gamma by Lanczos (g = 7, 9 terms): enough for p-values.
local LANCZOS = { 0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7 }
local function lgamma(z)
  z = z - 1
  local x = LANCZOS[1]
  for i = 2, 9 do x = x + LANCZOS[i] / (z + i - 1) end
  local t = z + 7.5
  return 0.5 * math.log(2 * math.pi) + (z + 0.5) * math.log(t) - t + math.log(x)
end

local function ibeta(a, b, x)
  if x <= 0 then return 0 end
  if x >= 1 then return 1 end
  local bt = math.exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * math.log(x) + b * math.log(1 - x))
  if x < (a + 1) / (a + b + 2) then return bt * betacf(a, b, x) / a end
  return 1 - bt * betacf(b, a, 1 - x) / b
end

function inference.t_upper_tail(t, df)
  local p = 0.5 * ibeta(df / 2, 0.5, df / (df + t * t))
  return t >= 0 and p or 1 - p
end

-- Student's t quantile (upper tail share q) by bisection, remembered:
-- a simulation asks for the same few thousands of times.
local t_quantiles = {}
function inference.t_quantile(q, df)
  local key = q .. ":" .. df
  if t_quantiles[key] then return t_quantiles[key] end
  local lo, hi = 0, 1000
  for _ = 1, 200 do
    local mid = (lo + hi) / 2
    if inference.t_upper_tail(mid, df) > q then lo = mid else hi = mid end
  end
  t_quantiles[key] = (lo + hi) / 2
  return t_quantiles[key]
end

-- The Wilson score interval of a binomial share k / n at 95 %.
function inference.wilson(k, n, z)
  z = z or 1.959963984540054
  if n == 0 then return 0, 1 end
  local p = k / n
  local den = 1 + z * z / n
  local mid = (p + z * z / (2 * n)) / den
  local half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
  return math.max(0, mid - half), math.min(1, mid + half)
end

-- Variance components of a two-level design (Kalibera and Jones; a one-way
-- random-effects ANOVA): runs, each a list of repetitions. Returns the
-- between-run variance of a run's mean (sigma_b^2, floored at 0), the
-- within-run variance of one repetition (sigma_w^2), and the grand mean.
function inference.variance_components(runs)
  local k, N, grand = #runs, 0, 0
  local means = {}
  for i, r in ipairs(runs) do
    means[i] = stats.mean(r)
    N = N + #r
    grand = grand + stats.sum(r)
  end
  grand = grand / N
  local ssw, ssb = 0, 0
  for i, r in ipairs(runs) do
    for _, v in ipairs(r) do ssw = ssw + (v - means[i]) ^ 2 end
    ssb = ssb + #r * (means[i] - grand) ^ 2
  end
  local msw = N > k and ssw / (N - k) or 0
  local msb = k > 1 and ssb / (k - 1) or 0
  local n0 = N / k -- balanced designs; close enough for nearly balanced ones
  return math.max(0, (msb - msw) / n0), msw, grand
end

return inference
