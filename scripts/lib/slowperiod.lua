-- What pass 2's slow pages follow, decided by experiments with controls
-- (slowpages.lua EXPERIMENT=period). The same buffer is walked in several
-- orders, each a case: forward (the reference), forward with the samples
-- array 4 bytes off its cache lines, backward, by a stride, forward 50 ms
-- after pass 1, the null walk, which stores into page 0 at every step:
-- the same timed loop with one data page (its samples array written as in
-- every walk), and the small set, which walks the buffer's first few pages
-- (slowwalks.SMALL_PAGES) again and again: the same loop over a working
-- set whose translations the TLB and the shadow page tables keep. Every case runs pass 2 and then pass 3, the same walk
-- over the same written pages; the null walk and the small set store as
-- many times as the buffer has pages.
-- A slow page that no guest event explains (slowcause.lua) can follow, each
-- with the control that decides it:
--   the walk into a 2 MiB region: its first K stores there, wherever the
--     walk enters (the backward walk moves them from a 2 MiB's pages 0 to
--     K - 1 to its last K pages), or pages 0 to K - 1 of each 2 MiB by
--     index (they stay there backward; THP=always must remove them);
--   a period of the page index (it stays at the same residues backward;
--     THP=always must remove it), of the walk's order (it moves with the
--     order: said, not named), or of the samples array's cache lines (the
--     4-byte shift moves it as the line boundaries move);
--   the page's second touch: the excess of pass 2's rate over pass 3's, the
--     same walk over the same pages 2 ms later (pass 3 below pass 2 in
--     the pairs of every walk and repetition by a sign test, the median
--     ratio below 2/3), that a pass 2 50 ms after pass 1 keeps (else: the
--     time since the first touch);
--   time: the same rate per ms in pass 3 as in pass 2, whatever the order.
-- What is left is then split by rate, not page by page (4 and 5 below): the
-- timed loop's own gaps at the null walk's rate, and the working set's size
-- (beyond the TLB's reach, the host's shadow page tables evicting and
-- re-syncing entries, or the data caches', not told apart) as the forward
-- walk's rate above the small set's. These are shares of a count, not causes
-- of given pages.
-- A class is named only where its control removed it, moved it as
-- predicted, or, by rate, where a control walk showed its rate (the null
-- walk) or took it away (the small set), with the share of pass-2 slow
-- pages (forward) it covers.
-- The slow samples of the null walk and of the small set are not pages:
-- they take no part in the tests by page index, order, entry or frame.
-- The physical frames of the slow pages are compared with all pages'
-- frames, bit by bit.
local inference = require "inference"
local period = require "period"

local slowperiod = {}

slowperiod.ALPHA = 0.001   -- a test's level (Bonferroni where several are made)
slowperiod.REMOVED = 0.25  -- a control removes a class when it leaves at most this share of its excess
slowperiod.SAME = 1.5      -- rates within this factor of each other are the same (with no significant change)
slowperiod.MIN_PAGES = 20  -- slow pages a verdict on rates needs
-- The frame bits compared, 0 to this - 1: a page's place in its 2 MiB
-- physical block. Higher bits are shared by the pages of one block, so the
-- slow pages of a block would not count as independent.
slowperiod.FRAME_BITS = 9

-- The causes no guest event stands behind: the pages the experiments decide.
local UNEXPLAINED = { ["no guest event"] = true, ["host"] = true, ["unknown"] = true }
slowperiod.UNEXPLAINED = UNEXPLAINED

local function normal_upper(z) return inference.t_upper_tail(z, 1e9) end

-- P(X >= k) for X Poisson with mean lam.
local function poisson_upper(k, lam)
  if k <= 0 then return 1 end
  if lam <= 0 then return 0 end
  if lam > 300 then return normal_upper((k - 0.5 - lam) / math.sqrt(lam)) end
  local term, cdf = math.exp(-lam), 0
  for i = 0, k - 1 do
    cdf = cdf + term
    term = term * lam / (i + 1)
  end
  return math.max(0, 1 - cdf)
end
slowperiod.poisson_upper = poisson_upper

-- The slow pages of a pass that no guest event explains, with pred(page) true.
local function count(set, pred)
  local n = 0
  for _, p in ipairs(set.slow) do
    if UNEXPLAINED[p.cause] and (not pred or pred(p)) then n = n + 1 end
  end
  return n
end

-- The reaches tested for the walk's entry into a 2 MiB region: its first
-- K stores there, K a power of two below the pages in 2 MiB.
local function reaches(pages_2m)
  local out, k = {}, 1
  while k < pages_2m do out[#out + 1], k = k, k * 2 end
  return out
end

-- A pass's slow pages, as slowpages.lua keeps them: s (ft.samples in walk
-- order), ix (the page of each j, or nil: j itself), ends (slowcause.windows'
-- ends), matched (slowcause.match's slow), frames (page -> frame, or nil).
-- Returns {pages, ns, wall_ns, near = {[K] = stores among a 2 MiB's first K
-- since the walk entered it}, slow = {{j, page, t, ns, cause, d, frame}}}:
-- ns the samples' sum without the pages a guest event explains (a page
-- preempted for 8 ms holds no 8 ms of chances for a slow page), t the
-- page's end from the pass's start, d the stores since the walk entered
-- the page's 2 MiB region (0: the store that entered it).
function slowperiod.set(s, ix, ends, matched, pass_ns, pages_2m, frames)
  local n = #s
  local function page(j) return ix and ix[j] or j - 1 end
  local d, near, prev, since = {}, {}, nil, 0
  local ks = reaches(pages_2m)
  for _, k in ipairs(ks) do near[k] = 0 end
  for j = 1, n do
    local region = page(j) // pages_2m
    since = region ~= prev and 0 or since + 1
    prev, d[j] = region, since
    for _, k in ipairs(ks) do if since < k then near[k] = near[k] + 1 end end
  end
  local sum = 0
  for j = 1, n do sum = sum + s[j] end
  local out = { pages = n, ns = sum, wall_ns = pass_ns, near = near, slow = {} }
  for _, m in ipairs(matched) do
    local j = m.index + 1
    local p = page(j)
    if not UNEXPLAINED[m.cause] then out.ns = out.ns - m.ns end
    out.slow[#out.slow + 1] = { j = j - 1, page = p, t = ends[j] - ends[0], ns = m.ns, cause = m.cause, d = d[j],
      frame = frames and frames[p + 1] or nil }
  end
  return out
end

-- Sets of one case's repetitions taken together: pages, ns add
-- up (and the stores near an entry); each page's position is kept per repetition by an offset of whole
-- multiples of the pages (a multiple of every modulus tested).
local function pooled(sets)
  local out = { pages = 0, ns = 0, near = {}, slow = {}, reps = #sets }
  for _, s in ipairs(sets) do
    for k, v in pairs(s.near) do out.near[k] = (out.near[k] or 0) + v end
    for _, p in ipairs(s.slow) do
      local q = {}
      for k, v in pairs(p) do q[k] = v end
      q.j, q.page = p.j + out.pages, p.page + out.pages
      out.slow[#out.slow + 1] = q
    end
    out.pages, out.ns = out.pages + s.pages, out.ns + s.ns
  end
  return out
end
slowperiod.pooled = pooled

-- period.lua over a set's unexplained slow pages (those keep(p) allows), by
-- page index (key "page") or by walk order ("j").
local function period_of(set, key, pages_2m, keep)
  local slow = {}
  for _, p in ipairs(set.slow) do
    if UNEXPLAINED[p.cause] and (not keep or keep(p)) then slow[p[key] + 1] = true end
  end
  return period.of(function(i) return slow[i] and 1 or 0 end, set.pages, 0, pages_2m)
end

local function same_positions(a, b)
  local set, both = {}, 0
  for _, r in ipairs(a or {}) do set[r] = true end
  for _, r in ipairs(b or {}) do if set[r] then both = both + 1 end end
  return #(a or {}) > 0 and both * 2 >= math.max(#a, #b)
end

-- The residue of j whose sample first stores into a new 64-byte line of the
-- samples array `shift` bytes off a line: j with (shift + 8 j + 7) // 64 >
-- (shift + 8 j - 1) // 64, modulo 8.
function slowperiod.line_residue(shift)
  for j = 0, 7 do
    if (shift + 8 * j + 7) // 64 > (shift + 8 * j - 1) // 64 then return j end
  end
end

-- The rate of unexplained slow pages per ms of pass, and whether pass b's
-- differs from pass a's: {ratio, p (two-sided, pass b's share of the two
-- counts given their times), a, b}.
local function rates(a_count, a_ns, b_count, b_ns)
  local n = a_count + b_count
  local out = { a = a_count, b = b_count, a_ns = a_ns, b_ns = b_ns }
  if a_count > 0 and a_ns > 0 and b_ns > 0 then out.ratio = (b_count / b_ns) / (a_count / a_ns) end
  if n > 0 then
    local f = b_ns / (a_ns + b_ns)
    local z = (b_count - n * f) / math.sqrt(n * f * (1 - f))
    out.p = 2 * normal_upper(math.abs(z))
  end
  return out
end
slowperiod.rates = rates

-- The frames of a pass's unexplained slow pages (those keep(p) allows, or
-- all) against all present pages',
-- bit by bit: all = {present =, set = {[bit] = pages with it set}}. Returns
-- the bit that stands out most {bit, slow_share, all_share, p} (p with
-- Bonferroni over the bits), or nil without frames.
function slowperiod.frame_bits(set, all, keep)
  if not all or (all.present or 0) == 0 then return nil end
  local slow = {}
  for _, p in ipairs(set.slow) do
    if UNEXPLAINED[p.cause] and p.frame and p.frame >= 0 and (not keep or keep(p)) then slow[#slow + 1] = p.frame end
  end
  if #slow == 0 then return nil end
  local best
  for bit = 0, slowperiod.FRAME_BITS - 1 do
    local k = 0
    for _, f in ipairs(slow) do if (f >> bit) & 1 == 1 then k = k + 1 end end
    local q = all.set[bit] / all.present
    local sd = math.sqrt(#slow * q * (1 - q))
    local p = sd > 0 and math.min(1, slowperiod.FRAME_BITS * 2 * normal_upper(math.abs(k - #slow * q) / sd)) or 1
    if not best or p < best.p then best = { bit = bit, slow_share = k / #slow, all_share = q, p = p, pages = #slow } end
  end
  return best
end

-- The gaps in time between consecutive unexplained slow pages of each
-- repetition's pass: {n, median_ns, cv} (an interruption at random times
-- gives a cv near 1, a periodic one near 0).
function slowperiod.gaps(sets)
  local gaps = {}
  for _, s in ipairs(sets) do
    local prev
    for _, p in ipairs(s.slow) do
      if UNEXPLAINED[p.cause] then
        if prev then gaps[#gaps + 1] = p.t - prev end
        prev = p.t
      end
    end
  end
  if #gaps < 2 then return { n = #gaps } end
  table.sort(gaps)
  local mean, var = 0, 0
  for _, g in ipairs(gaps) do mean = mean + g / #gaps end
  for _, g in ipairs(gaps) do var = var + (g - mean) ^ 2 / (#gaps - 1) end
  return { n = #gaps, median_ns = gaps[(#gaps + 1) // 2], cv = mean > 0 and math.sqrt(var) / mean or nil }
end

-- A list's median, lowest and highest value ({median, lo, hi, n}), or nil.
local function spread(xs)
  if #xs == 0 then return nil end
  local s = table.move(xs, 1, #xs, 1, {})
  table.sort(s)
  return { median = s[(#s + 1) // 2], lo = s[1], hi = s[#s], n = #s }
end

local function within_same(q) return q ~= nil and q <= slowperiod.SAME and q >= 1 / slowperiod.SAME end

-- The state one decision carries from class to class: the forward walk's
-- pooled passes, the pages not yet covered (left), the predicates of the
-- pages decided (taken: free(p) leaves them out of the later tests), and
-- the result being built (out); name, say and follows write into it.
local function begin(x)
  local fwd2 = pooled(x.forward.p2)
  local st = { x = x, P2M = x.pages_2m or 512, fwd2 = fwd2, fwd3 = pooled(x.forward.p3), reps = #x.forward.p2,
    taken = {} }
  local out = { total = #fwd2.slow, guest = {}, classes = {}, verdicts = {}, reps = st.reps, kinds = {} }
  st.out = out
  for _, p in ipairs(fwd2.slow) do
    if not UNEXPLAINED[p.cause] then out.guest[p.cause] = (out.guest[p.cause] or 0) + 1 end
  end
  st.left = count(fwd2)
  function st.free(p) for _, t in ipairs(st.taken) do if t(p) then return false end end return true end
  function st.name(class) out.classes[#out.classes + 1] = class; st.left = st.left - class.pages end
  function st.say(fmt, ...) out.verdicts[#out.verdicts + 1] = fmt:format(...) end
  function st.follows(k)
    if not out.kinds[k] then out.kinds[#out.kinds + 1], out.kinds[k] = k, true end
  end
  return st
end

-- 1. The walk's entry into a 2 MiB region: its first K stores there, K
-- the end of the last band [K/2, K) of stores since the entry whose slow
-- pages stand out of an even spread (forward: pages 0 to K - 1 of each
-- 2 MiB). Backward, the walk enters at a 2 MiB's last page: its first K
-- stores there are pages 511 down; pages 0 to K - 1 come last.
local function entry_test(st)
  local fwd2, ks = st.fwd2, reaches(st.P2M)
  local f = { k = 1 }
  for i, k in ipairs(ks) do
    local lo = i > 1 and ks[i - 1] or 0
    local band = function(p) return p.d >= lo and p.d < k end
    local expected = st.left * (fwd2.near[k] - (i > 1 and fwd2.near[lo] or 0)) / fwd2.pages
    if poisson_upper(count(fwd2, band), expected) < slowperiod.ALPHA / #ks then f.k = k end
  end
  local K = f.k
  f.near = function(p) return p.d < K end
  f.low = function(p) return p.page % st.P2M < K end -- pages 0 to K - 1 of a 2 MiB, by index
  f.obs, f.expected = count(fwd2, f.near), st.left * fwd2.near[K] / fwd2.pages
  f.stands = f.obs >= 3 and poisson_upper(f.obs, f.expected) < slowperiod.ALPHA / #ks
  f.excess = f.obs - f.expected
  f.what = K == 1 and "the walk's first store in a 2 MiB region"
    or ("the walk's first %d stores in a 2 MiB region"):format(K)
  f.pages0 = K == 1 and "page 0" or ("pages 0 to %d"):format(K - 1)
  return f
end

-- The backward walk moves the entry's stores and keeps the index's; where
-- it keeps them, THP=always (no 4 KiB pages there) must remove them.
local function entry_control(st, f)
  local x, K = st.x, f.k
  if not (f.stands and x.backward) then return nil end
  local back = pooled(x.backward.p2)
  local all = count(back)
  local v = { b_low = count(back, f.low), b_near = count(back, f.near), e_low = all * K / st.P2M,
    e_near = all * back.near[K] / back.pages, agreed = 0, reps = #x.backward.p2 }
  v.moved = v.b_low <= v.e_low + slowperiod.REMOVED * f.excess
    and poisson_upper(v.b_near, v.e_near) < slowperiod.ALPHA
  v.stayed = poisson_upper(v.b_low, v.e_low) < slowperiod.ALPHA and v.b_near <= v.e_near + 2 * math.sqrt(v.e_near + 1)
  for _, b in ipairs(x.backward.p2) do
    if count(b, f.near) > count(b, f.low) then v.agreed = v.agreed + 1 end
  end
  local huge = not v.moved and v.stayed and x.huge and pooled(x.huge.forward.p2)
  if huge then
    v.h_obs, v.h_all = count(huge, f.low), count(huge)
    v.h_exp = v.h_all * K / st.P2M
    -- what the control would show were the class kept: the same share of its slow pages there
    v.kept = v.h_all * f.excess / math.max(count(st.fwd2), 1)
  end
  return v
end

local function entry_sentence(st, f, v)
  local K = f.k
  if not f.stands then
    st.say("the walk's entry into a 2 MiB region: nothing stands out (at most %d slow among its first %d stores "
      .. "where %.1f is even)", f.obs, K, f.expected)
  elseif not v then
    st.say("%s: %d slow where %.1f is even; no backward walk to decide it", f.what, f.obs, f.expected)
  elseif v.moved then
    st.name { name = f.what, pages = math.max(0, math.floor(f.excess + 0.5)),
      control = ("backward walk: %s of a 2 MiB %d slow (%.1f even), the walk's %s there %d (%.1f even)"):format(
        f.pages0, v.b_low, v.e_low, K == 1 and "first store" or ("first %d stores"):format(K), v.b_near, v.e_near),
      agreed = v.agreed, reps = v.reps }
    st.taken[#st.taken + 1] = f.near
    st.follows("entry")
  elseif v.stayed then
    st.follows("index")
    st.taken[#st.taken + 1] = f.low -- decided as the index's, named or not: out of the tests for time below
    st.say("%s of each 2 MiB %s slow whichever way it is walked (backward: %d where %.1f is even)", f.pages0,
      K == 1 and "is" or "are", v.b_low, v.e_low)
    if not v.h_all then return end
    if v.kept < period.MIN_EXPECTED then
      st.say("THP=always has too few slow pages (%d) to show whether it removes it: undecided", v.h_all)
    elseif v.h_obs <= v.h_exp + slowperiod.REMOVED * v.kept then
      st.name { name = ("%s of each 2 MiB by index (4 KiB pages only)"):format(f.pages0),
        pages = math.max(0, math.floor(f.excess + 0.5)),
        control = ("THP=always: %d slow there (%.1f even)"):format(v.h_obs, v.h_exp), reps = v.reps }
    else
      st.say("with THP=always too (%d where %.1f is even): no control removed it", v.h_obs, v.h_exp)
    end
  else
    st.say("%s: %d slow (%.1f even), neither kept nor moved clearly backward", f.what, f.obs, f.expected)
  end
end

-- 2. A period, by page index and by the walk's order.
local function period_test(st)
  local f = { by = period_of(st.fwd2, "page", st.P2M, st.free) }
  local by = f.by
  if by.period and #by.positions > 0 then
    local m, pos = by.period, by.positions
    f.m, f.pos = m, pos
    f.at = function(p) for _, r in ipairs(pos) do if p.page % m == r then return true end end return false end
    f.covered = math.floor(by.share * (by.slow - by.first_2m.slow) - #pos / m * (by.slow - by.first_2m.slow) + 0.5)
  end
  return f
end

-- By page index the backward walk keeps the period's positions (and
-- THP=always must remove it); by the samples array's lines the 4-byte
-- shift moves them as the line boundaries move; by the walk's order the
-- backward walk keeps them by order.
local function period_control(st, f)
  if not f.m then return nil end
  local x, P2M, m, pos = st.x, st.P2M, f.m, f.pos
  local back = x.backward and pooled(x.backward.p2)
  local shifted = x.shift and pooled(x.shift.p2)
  local huge = x.huge and pooled(x.huge.forward.p2)
  local v = { b_page = back and period_of(back, "page", P2M, st.free),
    s_order = shifted and period_of(shifted, "j", P2M, st.free), b_order = back and period_of(back, "j", P2M, st.free) }
  v.backward = v.b_page and v.b_page.period == m and same_positions(pos, v.b_page.positions)
  if v.backward then
    v.h = huge and period_of(huge, "page", P2M, st.free)
    -- removed only where THP=always could show the period: its modulus m tested, and none found
    v.tested = false
    for _, e in ipairs(v.h and v.h.moduli or {}) do if e.m == m and e.p then v.tested = true end end
  elseif v.s_order and m % 8 == 0 and #pos > 0 then
    -- the samples array's lines: the positions move by line1 - line0 with the shift
    local line0, line1 = slowperiod.line_residue(0), slowperiod.line_residue(x.shift.shift)
    local moved = {}
    for i, r in ipairs(pos) do moved[i] = (r + line1 - line0) % m end
    v.lines = v.s_order.period and same_positions(moved, v.s_order.positions)
      and not same_positions(pos, v.s_order.positions)
  end
  return v
end

local function period_sentence(st, f, v)
  local by, m = f.by, f.m
  if by.period and #by.positions == 0 then
    return st.say("a period %d by page index, with no residue above twice an even spread: nothing to decide", by.period)
  elseif not by.period then
    return st.say("no period by page index: %s", period.describe(by))
  end
  local list = table.concat(f.pos, ", ")
  if v.backward then
    st.follows("index")
    st.taken[#st.taken + 1] = f.at -- decided as the index's, named or not: out of the tests for time below
    if v.h and v.tested and not v.h.period then
      st.name { name = ("period %d of the page index (positions %s; 4 KiB pages only)"):format(m, list),
        pages = math.max(0, f.covered), control = "THP=always: no period by page index", agreed = nil, reps = st.reps }
    else
      st.say("period %d of the page index at %s, backward too; %s", m, list, v.h and not v.tested
        and "THP=always has too few slow pages to test it: undecided" or "THP=always did not remove it")
    end
  elseif v.lines then
    st.follows("samples")
    st.name { name = ("the samples array's cache lines (period %d)"):format(m), pages = math.max(0, f.covered),
      control = ("samples shifted %d bytes: the positions moved from %s to %s"):format(st.x.shift.shift, list,
        table.concat(v.s_order.positions, ", ")), reps = st.reps }
    st.taken[#st.taken + 1] = f.at
  end
  if st.out.kinds.index or st.out.kinds.samples then return end
  if v.b_order and v.b_order.period == m and same_positions(f.pos, v.b_order.positions) then
    st.follows("order")
    st.taken[#st.taken + 1] = f.at
    st.say("period %d at %s follows the walk's order, not the page index (backward: positions %s by order)", m,
      list, table.concat(v.b_order.positions, ", "))
  else
    st.say("period %d of the page index at %s: no control decided it", m, list)
  end
end

local REPEATED = { "forward", "shift", "backward", "stride", "pause" } -- the walks whose pass 3 repeats pass 2

-- 3. The page's second touch or time: pass 3 over the same pages, the
-- control inside every walk (2 ms after its pass 2: the drift of the
-- machine between cases cancels), pooled over the walks. Each walk's
-- repetition is a pair of passes 2 ms apart: pass 3's rate over pass 2's,
-- their median and a sign test over the pairs, so that one burst in one
-- pass cannot carry the verdict.
local function touch_test(st)
  local x, free = st.x, st.free
  st.c2, st.c3 = count(st.fwd2, free), count(st.fwd3, free)
  st.out.rates = rates(st.c2, st.fwd2.ns, st.c3, st.fwd3.ns)
  local sum, by_walk = { 0, 0, 0, 0 }, {}
  for _, case in ipairs(REPEATED) do
    if x[case] then
      local a, b = pooled(x[case].p2), pooled(x[case].p3)
      local one = rates(count(a, free), a.ns, count(b, free), b.ns)
      sum = { sum[1] + one.a, sum[2] + one.a_ns, sum[3] + one.b, sum[4] + one.b_ns }
      by_walk[#by_walk + 1] = ("%s %s"):format(case, one.ratio and ("%.2f"):format(one.ratio) or "–")
    end
  end
  local r = rates(sum[1], sum[2], sum[3], sum[4])
  local ratios = {}
  r.lower, r.pairs = 0, 0
  for _, case in ipairs(REPEATED) do
    for i, s2 in ipairs(x[case] and x[case].p2 or {}) do
      local s3 = x[case].p3[i]
      local a, b = count(s2, free), s3 and count(s3, free) or 0
      if s3 and a + b > 0 and s2.ns > 0 and s3.ns > 0 then
        local lo, hi = b / s3.ns < a / s2.ns, b / s3.ns > a / s2.ns
        if lo or hi then r.pairs = r.pairs + 1 end -- a tie says neither
        if lo then r.lower = r.lower + 1 end
        local q = a > 0 and (b / s3.ns) / (a / s2.ns)
        if q and q <= slowperiod.SAME and q >= 1 / slowperiod.SAME then r.same = (r.same or 0) + 1 end
        r.all = (r.all or 0) + 1
        ratios[#ratios + 1] = a > 0 and (b / s3.ns) / (a / s2.ns) or math.huge
      end
    end
  end
  table.sort(ratios)
  r.median = #ratios > 0 and ratios[(#ratios + 1) // 2] or nil
  r.sign_p = r.pairs > 0 and inference.sign_test(r.lower, r.pairs) or 1
  return { r = r, by_walk = by_walk }
end

local function pairs_said(f)
  local r = f.r
  return ("pass 3 below pass 2 in %d of %d pairs (walk, repetition; ties left out), sign test p = %.2g, "
    .. "median ratio %s; "
    .. "pooled %.2f slow pages per ms against %.2f; pooled ratio by walk: %s"):format(r.lower, r.pairs, r.sign_p,
      r.median and ("%.2f"):format(r.median) or "–", 1e6 * r.b / r.b_ns, 1e6 * r.a / r.a_ns,
      table.concat(f.by_walk, ", "))
end

-- A pass 2 50 ms after pass 1 keeps a second touch's excess and loses a
-- fading with time; the other walks' pass 2 keeps a cause in time's rate.
local function touch_control(st, f)
  local x, free, c2, fwd2 = st.x, st.free, st.c2, st.fwd2
  local r = f.r
  local v = { same = true, agreed = 0 }
  for _, case in ipairs { "backward", "stride", "shift" } do
    if x[case] then
      local s = pooled(x[case].p2)
      local q = rates(c2, fwd2.ns, count(s, free), s.ns)
      v.same = v.same and q.ratio and q.ratio <= slowperiod.SAME and q.ratio >= 1 / slowperiod.SAME
      v.others = true
    end
  end
  local later = x.pause and pooled(x.pause.p2)
  v.kept = later and rates(c2, fwd2.ns, count(later, free), later.ns)
  st.out.later = v.kept
  -- pass 3 significantly below pass 2: the excess is the second touch's; what pass 3 keeps stays not explained
  v.removed = c2 >= slowperiod.MIN_PAGES and r.median and r.median < 1 / slowperiod.SAME
    and r.sign_p < slowperiod.ALPHA
  v.faded = v.removed and v.kept and v.kept.ratio and v.kept.ratio < 1 / slowperiod.SAME
    and v.kept.p < slowperiod.ALPHA
  for i, s in ipairs(x.forward.p2) do
    local t = x.forward.p3[i]
    local a, b = count(s, free), t and count(t, free) or 0
    if t and a > 0 and (b / t.ns) < (a / s.ns) / slowperiod.SAME then v.agreed = v.agreed + 1 end
  end
  return v
end

-- What pass 3 keeps, walk by walk: one rate everywhere is what a cause in time would give.
local function kept_by_walk(st)
  local kept3 = { ("forward %.2f"):format(1e6 * st.c3 / st.fwd3.ns) }
  for _, case in ipairs { "backward", "stride", "shift", "pause" } do
    if st.x[case] then
      local s3 = pooled(st.x[case].p3)
      kept3[#kept3 + 1] = ("%s %.2f"):format(case, s3.ns > 0 and 1e6 * count(s3, st.free) / s3.ns or 0)
    end
  end
  return table.concat(kept3, ", ")
end

local function touch_sentence(st, f, v)
  local r, c2, kept = f.r, st.c2, v.kept
  if v.faded then
    st.say("pass 3 lowers them (%s), but so does a pause of 50 ms before pass 2 (%.2f per ms against %.2f): they "
      .. "fade with the time since the first touch, not with the touches", pairs_said(f), 1e6 * kept.b / kept.b_ns,
      1e6 * c2 / st.fwd2.ns)
  elseif v.removed then
    st.name { name = "the page's second touch (the excess over pass 3)",
      pages = math.max(0, math.floor(c2 * (1 - r.median) + 0.5)),
      control = ("pass 3 over the same pages, every walk: %s%s"):format(pairs_said(f),
        kept and ("; a pass 2 50 ms after pass 1: %.2f per ms against %.2f"):format(1e6 * kept.b / kept.b_ns,
          1e6 * c2 / st.fwd2.ns) or ""),
      agreed = v.agreed, reps = st.reps }
    st.follows("second touch")
    local g = slowperiod.gaps(st.x.forward.p3)
    st.say("what pass 3 keeps, slow pages per ms outside the classes: %s; their gaps in pass 3: %s", kept_by_walk(st),
      g.cv and ("median %d ns, cv %.2f over %d gaps"):format(g.median_ns, g.cv, g.n) or "too few")
  elseif c2 >= slowperiod.MIN_PAGES and within_same(r.median) and r.sign_p >= slowperiod.ALPHA then
    if v.same then
      st.follows("time")
      st.say("they follow time: pass 3 over the same pages keeps pass 2's rate (%s; within a factor %.1f in %d of %d "
        .. "pairs)%s; the null walk below says how much of it is the timed loop's own", pairs_said(f),
        slowperiod.SAME, r.same or 0, r.all or 0,
        v.others and (", and pass 2's rate is the same in every other walk") or "")
    else
      st.say("pass 3 keeps pass 2's rate (%s) but another walk changes pass 2's", pairs_said(f))
    end
  elseif r.ratio then
    st.say("pass 3 against pass 2, every walk: %s: neither lowered nor the same", pairs_said(f))
  end
  st.out.gaps = slowperiod.gaps(st.x.forward.p2)
end

local function per_ms(n, ns) return ns > 0 and 1e6 * n / ns or nil end
local function fmt(q) return q and q < math.huge and ("%.2f"):format(q) or "–" end
local function range(sp) return sp and ("median %.2f, %.2f to %.2f"):format(sp.median, sp.lo, sp.hi) or "–" end

-- A control walk's passes 2 and 3 of each repetition, taken together: its rate per ms, pooled and by repetition.
local function both(case)
  local n, ns, by_rep, seen = 0, 0, {}, 0
  for i, s2 in ipairs(case.p2 or {}) do
    local s3 = (case.p3 or {})[i]
    if s3 then
      local c, t = count(s2) + count(s3), s2.ns + s3.ns
      n, ns = n + c, ns + t
      by_rep[i] = per_ms(c, t)
      if c > 0 then seen = seen + 1 end
    end
  end
  return { count = n, ns = ns, per_ms = per_ms(n, ns) or 0, by_rep = by_rep, seen = seen }
end

-- The forward walk's pass 3 against a control's rate, repetition by repetition: ratios where the control saw
-- slow samples, how many are above (ties left out), a sign test.
local function against(st, ctl)
  local qs, above, pairs_n = {}, 0, 0
  for i, s3 in ipairs(st.x.forward.p3) do
    local r3, rc = s3.ns > 0 and 1e6 * count(s3, st.free) / s3.ns, ctl.by_rep[i]
    if r3 and rc and rc > 0 then
      qs[#qs + 1] = r3 / rc
      if r3 ~= rc then pairs_n = pairs_n + 1 end
      if r3 > rc then above = above + 1 end
    end
  end
  local sp = spread(qs)
  return { ratios = qs, median = sp and sp.median, above = above, pairs = pairs_n,
    sign_p = pairs_n > 0 and inference.sign_test(above, pairs_n) or 1 }
end

-- 4 and 5. What is left is split by rate, not page by page, as two
-- control walks split the forward walk's rate of slow stores outside the
-- classes (pass 2's and pass 3's, the lower of the two: the rate both
-- passes show). The null walk stores into page 0 at every step (the
-- samples array written as in every walk): its rate is the timed loop's
-- own, with one data page. The small set walks pages 0 to span - 1 again
-- and again: the same loop over a working set the TLB and the shadow
-- tables keep. Each walk's passes 2 and 3 are taken together; both store
-- as many times as the buffer has pages. Each covers at most its rate
-- times pass 2's time, and together no more than the slow pages the rates
-- counted (outside every class's pages, named or only decided): rate_left.
-- The forward walk's rates and the control walks', taken once for both.
local function rates_test(st)
  if st.rate then return st.rate end
  local x = st.x
  local p2_rate = st.fwd2.ns > 0 and 1e6 * st.c2 / st.fwd2.ns or 0
  local p3_rate = st.fwd3.ns > 0 and 1e6 * st.c3 / st.fwd3.ns or 0
  st.rate_left = math.min(st.left, st.c2)
  st.rate = { p2 = p2_rate, p3 = p3_rate, walked = math.min(p2_rate, p3_rate),
    nl = x.null and x.null.p2 and x.null.p3 and both(x.null),
    sm = x.small and x.small.p2 and x.small.p3 and both(x.small) }
  return st.rate
end

local function rate_class(st, class) st.name(class); st.rate_left = st.rate_left - class.pages end

-- 4. The timed loop's own gaps: the null rate, named where the forward
-- walk is not below it (pooled in both passes, and pass 3 by the median of
-- the repetitions' ratios and a sign test).
local function null_control(st, f)
  local nl, reps = f.nl, st.reps
  if not nl then return nil end
  local a = against(st, nl)
  local v = { count = nl.count, ns = nl.ns, per_ms = nl.per_ms, p2_per_ms = f.p2, p3_per_ms = f.p3,
    ratio = nl.per_ms > 0 and f.p3 / nl.per_ms or nil, p2_ratio = nl.per_ms > 0 and f.p2 / nl.per_ms or nil,
    median = a.median, above = a.above, pairs = a.pairs, sign_p = a.sign_p, seen = nl.seen }
  local by_rep, rates2, rates3 = {}, {}, {}
  for i, s2 in ipairs(st.x.forward.p2) do
    by_rep[#by_rep + 1] = nl.by_rep[i]
    rates2[#rates2 + 1] = per_ms(count(s2, st.free), s2.ns)
    local s3 = st.x.forward.p3[i]
    rates3[#rates3 + 1] = s3 and per_ms(count(s3, st.free), s3.ns) or nil
  end
  v.reps, v.p2, v.p3 = spread(by_rep), spread(rates2), spread(rates3)
  v.expected = nl.per_ms * st.fwd2.ns / 1e6 -- the null rate over pass 2's time
  local c = { v = v, agreed = 0, reps = #a.ratios }
  for _, q in ipairs(a.ratios) do if q >= 1 / slowperiod.SAME then c.agreed = c.agreed + 1 end end
  c.said = ("null walk (one page stored again and again, passes 2 and 3): %.2f slow samples per ms (%d in "
    .. "%.1f ms, in %d of %d repetitions; per repetition %s); the forward walk outside the classes: pass 3 %.2f per "
    .. "ms (per repetition %s), pass 2 %.2f (%s); over the null: pass 3 pooled %s, per repetition median %s, above "
    .. "it in %d of %d repetitions (ties left out), sign test p = %.2g; pass 2 pooled %s"):format(v.per_ms, v.count,
    v.ns / 1e6, nl.seen, reps, range(v.reps), f.p3, range(v.p3), f.p2, range(v.p2), fmt(v.ratio),
    fmt(v.median), a.above, a.pairs, a.sign_p, fmt(v.p2_ratio))
  local below = a.pairs > 0 and a.above * 2 < a.pairs and a.sign_p < slowperiod.ALPHA
  c.not_below = v.ratio and v.ratio >= 1 / slowperiod.SAME and v.p2_ratio >= 1 / slowperiod.SAME
    and v.median and v.median >= 1 / slowperiod.SAME and not below
  return c
end

local function null_sentence(st, f, c)
  local x, nl, c2, c3 = st.x, f.nl, st.c2, st.c3
  if (x.null or x.small) and not (nl and f.sm or nl and not x.small) then
    st.say("the rate classes: the %s walk is missing or has no passes 2 and 3: undecided",
      nl and "small set's" or "null")
  end
  if not c then return end
  local v = c.v
  st.out.null = v
  if nl.count < slowperiod.MIN_PAGES or nl.seen * 2 < st.reps then
    st.say("the timed loop's own gaps: the null walk has %d slow samples in %d of %d repetitions, too few to show "
      .. "them (%s); not named", nl.count, nl.seen, st.reps, c.said)
  elseif c2 < slowperiod.MIN_PAGES or c3 < slowperiod.MIN_PAGES then
    st.say("the timed loop's own gaps: %d and %d slow pages outside the classes in passes 2 and 3, too few to "
      .. "compare (%s)", c2, c3, c.said)
  elseif st.rate_left <= 0 then
    st.say("the timed loop's own gaps: no slow page is left outside the classes (%s)", c.said)
  elseif c.not_below then
    local pages = math.max(0, math.min(st.rate_left, math.floor(v.expected + 0.5)))
    rate_class(st, { name = "the timed loop's own gaps (the null walk's rate: one page stored again and again, "
        .. "the samples array written as in every walk; covered by rate, not page by page)",
      pages = pages,
      control = ("%s; they cover min(%d pages left, %.2f per ms × %.1f ms of pass 2 = %.0f) = %d"):format(c.said,
        st.rate_left, v.per_ms, st.fwd2.ns / 1e6, v.expected, pages),
      agreed = c.agreed, reps = c.reps })
  else
    st.say("the timed loop's own gaps: the forward walk is below the null walk (beyond a factor %.1f, or pass 3 "
      .. "by the sign test): %s; not named, what is left stays not explained", slowperiod.SAME, c.said)
  end
end

-- 5. The working set's size: the forward walk's rate above the small
-- set's, named where pass 3 stays above the small set beyond SAME (pooled
-- and by the median ratio, with a sign test) and pass 2 does too, pooled.
-- Its floor is the higher of the small set's rate and the null walk's:
-- what the small set keeps above the null walk stays not explained, and a
-- small set below the null walk is said.
local function small_control(st, f)
  local nl, sm = f.nl, f.sm
  if not (nl and sm) then return nil end
  local a = against(st, sm)
  local to_null, null_above, null_pairs = {}, 0, 0
  for i, rs in pairs(sm.by_rep) do
    local rn = nl.by_rep[i]
    if rn and (rs > 0 or rn > 0) then
      if rs ~= rn then null_pairs = null_pairs + 1 end -- a tie says neither
      if rs > rn then null_above = null_above + 1 end
      to_null[#to_null + 1] = rn > 0 and rs / rn or math.huge
    end
  end
  local small_rates = {}
  for _, rs in pairs(sm.by_rep) do small_rates[#small_rates + 1] = rs end
  local agreed = 0
  for _, q in ipairs(a.ratios) do if q > slowperiod.SAME then agreed = agreed + 1 end end
  local floor = math.max(sm.per_ms, nl.per_ms)
  local v = { span = st.x.small.span, count = sm.count, ns = sm.ns, per_ms = sm.per_ms, null_per_ms = nl.per_ms,
    p3_per_ms = f.p3, p2_per_ms = f.p2, reps = spread(small_rates),
    to_null = nl.per_ms > 0 and sm.per_ms / nl.per_ms or nil, rep_to_null = (spread(to_null) or {}).median,
    null_above = null_above, null_pairs = null_pairs,
    null_sign_p = null_pairs > 0 and inference.sign_test(null_above, null_pairs) or 1,
    p3_ratio = sm.per_ms > 0 and f.p3 / sm.per_ms or (f.p3 > 0 and math.huge or nil),
    p2_ratio = sm.per_ms > 0 and f.p2 / sm.per_ms or (f.p2 > 0 and math.huge or nil),
    rep_p3_ratio = a.median, p3_above = a.above, p3_pairs = a.pairs, p3_sign_p = a.sign_p, agreed = agreed,
    expected = math.max(0, (f.walked - floor) * st.fwd2.ns / 1e6) }
  local c = { v = v, floor = floor, reps = #a.ratios }
  c.quieter = v.to_null and v.to_null < 1 / slowperiod.SAME or (null_pairs > 0 and null_above * 2 < null_pairs
    and v.null_sign_p < slowperiod.ALPHA)
  c.said = ("the small set (pages 0 to %d again and again, passes 2 and 3): %.2f slow samples per ms (%d in "
    .. "%.1f ms; per repetition %s); over the null walk's %.2f: pooled %s, per repetition median %s, above it in "
    .. "%d of %d repetitions (ties left out), sign test p = %.2g; the forward walk outside the classes over it: "
    .. "pass 3 %.2f per ms, pooled %s, per repetition median %s, above it in %d of %d repetitions, sign test "
    .. "p = %.2g; pass 2 %.2f per ms, pooled %s"):format((v.span or 0) - 1, v.per_ms, sm.count, sm.ns / 1e6,
    range(v.reps), nl.per_ms, fmt(v.to_null), fmt(v.rep_to_null), null_above, null_pairs, v.null_sign_p, f.p3,
    fmt(v.p3_ratio), fmt(v.rep_p3_ratio), a.above, a.pairs, a.sign_p, f.p2, fmt(v.p2_ratio))
  c.above = v.p3_ratio and v.p3_ratio > slowperiod.SAME and v.rep_p3_ratio and v.rep_p3_ratio > slowperiod.SAME
    and a.above * 2 > a.pairs and a.sign_p < slowperiod.ALPHA and v.p2_ratio and v.p2_ratio > slowperiod.SAME
  return c
end

local function small_sentence(st, f, c)
  if not c then return end
  local v, nl, c2, c3 = c.v, f.nl, st.c2, st.c3
  st.out.small = v
  if nl.count < slowperiod.MIN_PAGES then
    st.say("the working set: the null walk has %d slow samples, too few to compare the small set with (%s); "
      .. "undecided", nl.count, c.said)
  elseif c2 < slowperiod.MIN_PAGES or c3 < slowperiod.MIN_PAGES then
    st.say("the working set: %d and %d slow pages outside the classes in passes 2 and 3, too few to decide it (%s)",
      c2, c3, c.said)
  elseif st.rate_left <= 0 then
    st.say("the working set: no slow page is left outside the classes (%s)", c.said)
  elseif c.above then
    local pages = math.max(0, math.min(st.rate_left, math.floor(v.expected + 0.5)))
    rate_class(st, { name = ("the working set's size (a %d-page set against the whole buffer: the TLB, the shadow "
        .. "tables and the data caches not told apart; covered by rate, not page by page)"):format(v.span or 0),
      pages = pages,
      control = ("%s; they cover min(%d pages left, (%.2f - %.2f) per ms × %.1f ms of pass 2 = %.0f) = %d; the "
        .. "forward walk's rate is the lower of passes 2 and 3, the floor the higher of the small set's and the "
        .. "null walk's%s"):format(c.said, st.rate_left, f.walked, c.floor, st.fwd2.ns / 1e6, v.expected, pages,
          c.quieter and "; the small set is quieter than the null walk, which runs the same loop: not explained"
          or v.per_ms > nl.per_ms and ("; the small set's %.2f per ms over the null walk's %.2f stays not "
            .. "explained"):format(v.per_ms, nl.per_ms) or ""),
      agreed = v.agreed, reps = c.reps })
  elseif within_same(v.p3_ratio) and within_same(v.rep_p3_ratio) then
    st.say("the working set did not decide them: the small set keeps pass 3's rate (within a factor %.1f): %s; not "
      .. "named", slowperiod.SAME, c.said)
  else
    st.say("the working set: the forward walk is not above the small set beyond a factor %.1f by every test: %s; "
      .. "not named, what is left stays not explained", slowperiod.SAME, c.said)
  end
end

-- 6. The physical frames: a bit that stands out, with no control to decide it.
local function frames_test(st)
  local all = { present = 0, set = {} }
  for bit = 0, slowperiod.FRAME_BITS - 1 do all.set[bit] = 0 end
  for _, f in ipairs(st.x.forward.frames or {}) do
    all.present = all.present + f.present
    for bit = 0, slowperiod.FRAME_BITS - 1 do all.set[bit] = all.set[bit] + f.set[bit] end
  end
  st.out.frames = slowperiod.frame_bits(st.fwd2, all, st.free)
  return st.out.frames
end

local function frames_sentence(st, f)
  if not f then return end
  st.say("frames: bit %d is set in %.1f %% of the %d slow pages outside the classes and in %.1f %% of all pages "
    .. "(p = %.2g over %d bits, optimistic: pages allocated in one run share bits)%s",
    f.bit, 100 * f.slow_share, f.pages, 100 * f.all_share, f.p, slowperiod.FRAME_BITS,
    f.p < slowperiod.ALPHA and ": it stands out, with no control to decide it" or ": no bit stands out")
end

-- The classes in the order decide tries them, each a test (what the forward
-- walk shows), the control that decides it (nil where there is none) and
-- the sentence (naming the class, or saying why not). A class takes the
-- pages it decided out of the tests after it (st.taken), so the order
-- matters: the walk's entry and the period by page before time, the rate
-- classes last, over what is left.
slowperiod.CLASSES = {
  { kind = "entry", test = entry_test, control = entry_control, sentence = entry_sentence },
  { kind = "period", test = period_test, control = period_control, sentence = period_sentence },
  { kind = "second touch or time", test = touch_test, control = touch_control, sentence = touch_sentence },
  { kind = "the timed loop's own gaps", test = rates_test, control = null_control, sentence = null_sentence },
  { kind = "the working set", test = rates_test, control = small_control, sentence = small_sentence },
  { kind = "frames", test = frames_test, sentence = frames_sentence },
}

-- decide(x): x = {pages_2m, forward = {p2 = {sets}, p3 = {sets}, frames =
-- {all per rep}}, backward = {p2, p3}, stride = {p2, p3}, shift = {p2, p3,
-- shift}, pause = {p2, p3}, null = {p2, p3}, small = {p2, p3, span}, huge =
-- the same x of THP=always or nil}. Any case but forward may be missing;
-- its class is then left undecided. Returns {total, guest = {[cause] =
-- pages}, classes = {{name, pages, share, control, agreed, reps}},
-- unexplained, unexplained_share, verdicts = {lines}, kinds = {"entry" |
-- "index" | "order" | "samples" | "second touch" | "time", ...; [kind] =
-- true}, follows = the kinds joined with
-- " and ", or nil, rates, null = the null walk's rates (below) or nil,
-- small = the small set's (below) or nil}.
function slowperiod.decide(x)
  local st = begin(x)
  for _, class in ipairs(slowperiod.CLASSES) do
    local found = class.test(st)
    class.sentence(st, found, class.control and class.control(st, found))
  end
  local out = st.out
  out.follows = #out.kinds > 0 and table.concat(out.kinds, " and ") or nil
  out.unexplained = st.left
  out.unexplained_share = out.total > 0 and st.left / out.total or 0
  for _, c in ipairs(out.classes) do c.share = out.total > 0 and c.pages / out.total or 0 end
  return out
end

-- The frame bits of every present page of a frames array (b:frames):
-- {present, set = {[bit] = count}}.
function slowperiod.all_frames(f)
  local out = { present = 0, set = {} }
  for bit = 0, slowperiod.FRAME_BITS - 1 do out.set[bit] = 0 end
  for i = 1, #f do
    local v = f[i]
    if v >= 0 then
      out.present = out.present + 1
      for bit = 0, slowperiod.FRAME_BITS - 1 do
        if (v >> bit) & 1 == 1 then out.set[bit] = out.set[bit] + 1 end
      end
    end
  end
  return out
end

return slowperiod
