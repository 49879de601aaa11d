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
  local P2M = x.pages_2m or 512
  local fwd2, fwd3 = pooled(x.forward.p2), pooled(x.forward.p3)
  local reps = #x.forward.p2
  local out = { total = #fwd2.slow, guest = {}, classes = {}, verdicts = {}, reps = reps }
  for _, p in ipairs(fwd2.slow) do
    if not UNEXPLAINED[p.cause] then out.guest[p.cause] = (out.guest[p.cause] or 0) + 1 end
  end
  local left = count(fwd2) -- unexplained pages not yet covered by a class
  local taken = {}         -- predicates of the pages decided, to leave out of the later tests
  local function free(p) for _, t in ipairs(taken) do if t(p) then return false end end return true end
  local function name(class) out.classes[#out.classes + 1] = class; left = left - class.pages end
  local function say(fmt, ...) out.verdicts[#out.verdicts + 1] = fmt:format(...) end
  -- what they follow, in the order found: kinds = {"entry", "index", "order", "samples", "second touch", "time"}
  out.kinds = {}
  local function follows(k)
    if not out.kinds[k] then out.kinds[#out.kinds + 1], out.kinds[k] = k, true end
  end

  -- 1. The walk's entry into a 2 MiB region: its first K stores there, K
  -- the end of the last band [K/2, K) of stores since the entry whose slow
  -- pages stand out of an even spread (forward: pages 0 to K - 1 of each
  -- 2 MiB). Backward, the walk enters at a 2 MiB's last page: its first K
  -- stores there are pages 511 down; pages 0 to K - 1 come last.
  local ks = reaches(P2M)
  local best = { k = 1 }
  for i, k in ipairs(ks) do
    local lo = i > 1 and ks[i - 1] or 0
    local band = function(p) return p.d >= lo and p.d < k end
    local expected = left * (fwd2.near[k] - (i > 1 and fwd2.near[lo] or 0)) / fwd2.pages
    if poisson_upper(count(fwd2, band), expected) < slowperiod.ALPHA / #ks then best.k = k end
  end
  best.near = function(p) return p.d < best.k end
  best.obs, best.expected = count(fwd2, best.near), left * fwd2.near[best.k] / fwd2.pages
  local K = best.k
  local what = K == 1 and "the walk's first store in a 2 MiB region"
    or ("the walk's first %d stores in a 2 MiB region"):format(K)
  local function low(p) return p.page % P2M < K end -- pages 0 to K - 1 of a 2 MiB, by index
  if best.obs >= 3 and poisson_upper(best.obs, best.expected) < slowperiod.ALPHA / #ks then
    local back = x.backward and pooled(x.backward.p2)
    local excess = best.obs - best.expected
    if back then
      local all = count(back)
      local b_low, b_near = count(back, low), count(back, best.near)
      local e_low, e_near = all * K / P2M, all * back.near[K] / back.pages
      local moved = b_low <= e_low + slowperiod.REMOVED * excess and poisson_upper(b_near, e_near) < slowperiod.ALPHA
      local stayed = poisson_upper(b_low, e_low) < slowperiod.ALPHA and b_near <= e_near + 2 * math.sqrt(e_near + 1)
      local agreed = 0
      for _, b in ipairs(x.backward.p2) do
        if count(b, best.near) > count(b, low) then agreed = agreed + 1 end
      end
      if moved then
        name { name = what, pages = math.max(0, math.floor(excess + 0.5)),
          control = ("backward walk: %s of a 2 MiB %d slow (%.1f even), the walk's %s there %d (%.1f even)"):format(
            K == 1 and "page 0" or ("pages 0 to %d"):format(K - 1), b_low, e_low,
            K == 1 and "first store" or ("first %d stores"):format(K), b_near, e_near), agreed = agreed,
          reps = #x.backward.p2 }
        taken[#taken + 1] = best.near
        follows("entry")
      elseif stayed then
        follows("index")
        taken[#taken + 1] = low -- decided as the index's, named or not: out of the tests for time below
        say("%s of each 2 MiB %s slow whichever way it is walked (backward: %d where %.1f is even)",
          K == 1 and "page 0" or ("pages 0 to %d"):format(K - 1), K == 1 and "is" or "are", b_low, e_low)
        local huge = x.huge and pooled(x.huge.forward.p2)
        if huge then
          local h_obs, h_all = count(huge, low), count(huge)
          local h_exp = h_all * K / P2M
          -- what the control would show were the class kept: the same share of its slow pages there
          local kept = h_all * excess / math.max(count(fwd2), 1)
          if kept < period.MIN_EXPECTED then
            say("THP=always has too few slow pages (%d) to show whether it removes it: undecided", h_all)
          elseif h_obs <= h_exp + slowperiod.REMOVED * kept then
            name { name = ("%s of each 2 MiB by index (4 KiB pages only)"):format(K == 1 and "page 0"
              or ("pages 0 to %d"):format(K - 1)),
              pages = math.max(0, math.floor(excess + 0.5)),
              control = ("THP=always: %d slow there (%.1f even)"):format(h_obs, h_exp), reps = #x.backward.p2 }
          else
            say("with THP=always too (%d where %.1f is even): no control removed it", h_obs, h_exp)
          end
        end
      else
        say("%s: %d slow (%.1f even), neither kept nor moved clearly backward", what, best.obs, best.expected)
      end
    else
      say("%s: %d slow where %.1f is even; no backward walk to decide it", what, best.obs, best.expected)
    end
  else
    say("the walk's entry into a 2 MiB region: nothing stands out (at most %d slow among its first %d stores where "
      .. "%.1f is even)", best.obs, K, best.expected)
  end

  -- 2. A period, by page index and by the walk's order.
  local by_page = period_of(fwd2, "page", P2M, free)
  if by_page.period and #by_page.positions == 0 then
    say("a period %d by page index, with no residue above twice an even spread: nothing to decide", by_page.period)
  elseif by_page.period then
    local m, pos = by_page.period, by_page.positions
    local function at(p) for _, r in ipairs(pos) do if p.page % m == r then return true end end return false end
    local covered = math.floor(by_page.share * (by_page.slow - by_page.first_2m.slow)
      - #pos / m * (by_page.slow - by_page.first_2m.slow) + 0.5)
    local back = x.backward and pooled(x.backward.p2)
    local shifted = x.shift and pooled(x.shift.p2)
    local huge = x.huge and pooled(x.huge.forward.p2)
    local b_page = back and period_of(back, "page", P2M, free)
    local s_order = shifted and period_of(shifted, "j", P2M, free)
    local line0, line1 = slowperiod.line_residue(0), x.shift and slowperiod.line_residue(x.shift.shift)
    if b_page and b_page.period == m and same_positions(pos, b_page.positions) then
      follows("index")
      local h = huge and period_of(huge, "page", P2M, free)
      taken[#taken + 1] = at -- decided as the index's, named or not: out of the tests for time below
      -- removed only where THP=always could show the period: its modulus m tested, and none found
      local tested = false
      for _, e in ipairs(h and h.moduli or {}) do if e.m == m and e.p then tested = true end end
      if h and tested and not h.period then
        name { name = ("period %d of the page index (positions %s; 4 KiB pages only)"):format(m,
            table.concat(pos, ", ")),
          pages = math.max(0, covered), control = "THP=always: no period by page index", agreed = nil, reps = reps }
      else
        say("period %d of the page index at %s, backward too; %s", m, table.concat(pos, ", "), h and not tested
          and "THP=always has too few slow pages to test it: undecided" or "THP=always did not remove it")
      end
    elseif s_order and m % 8 == 0 and #pos > 0 then
      -- the samples array's lines: the positions move by line1 - line0 with the shift
      local moved = {}
      for i, r in ipairs(pos) do moved[i] = (r + line1 - line0) % m end
      if s_order.period and same_positions(moved, s_order.positions) and not same_positions(pos, s_order.positions) then
        follows("samples")
        name { name = ("the samples array's cache lines (period %d)"):format(m), pages = math.max(0, covered),
          control = ("samples shifted %d bytes: the positions moved from %s to %s"):format(x.shift.shift,
            table.concat(pos, ", "), table.concat(s_order.positions, ", ")), reps = reps }
        taken[#taken + 1] = at
      end
    end
    if not (out.kinds.index or out.kinds.samples) then
      local b_order = back and period_of(back, "j", P2M, free)
      if b_order and b_order.period == m and same_positions(pos, b_order.positions) then
        follows("order")
        taken[#taken + 1] = at
        say("period %d at %s follows the walk's order, not the page index (backward: positions %s by order)", m,
          table.concat(pos, ", "), table.concat(b_order.positions, ", "))
      else
        say("period %d of the page index at %s: no control decided it", m, table.concat(pos, ", "))
      end
    end
  else
    say("no period by page index: %s", period.describe(by_page))
  end

  -- 3. The page's second touch or time: pass 3 over the same pages, the
  -- control inside every walk (2 ms after its pass 2: the drift of the
  -- machine between cases cancels), pooled over the walks.
  local c2, c3 = count(fwd2, free), count(fwd3, free)
  out.rates = rates(c2, fwd2.ns, c3, fwd3.ns)
  local sum, by_walk = { 0, 0, 0, 0 }, {}
  for _, case in ipairs { "forward", "shift", "backward", "stride", "pause" } do
    if x[case] then
      local a, b = pooled(x[case].p2), pooled(x[case].p3)
      local one = rates(count(a, free), a.ns, count(b, free), b.ns)
      sum = { sum[1] + one.a, sum[2] + one.a_ns, sum[3] + one.b, sum[4] + one.b_ns }
      by_walk[#by_walk + 1] = ("%s %s"):format(case, one.ratio and ("%.2f"):format(one.ratio) or "–")
    end
  end
  local r = rates(sum[1], sum[2], sum[3], sum[4])
  -- each walk's repetition is a pair of passes 2 ms apart: pass 3's rate over pass 2's, their median and a
  -- sign test over the pairs, so that one burst in one pass cannot carry the verdict
  local ratios = {}
  r.lower, r.pairs = 0, 0
  for _, case in ipairs { "forward", "shift", "backward", "stride", "pause" } do
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
  local function pairs_said()
    return ("pass 3 below pass 2 in %d of %d pairs (walk, repetition; ties left out), sign test p = %.2g, "
      .. "median ratio %s; "
      .. "pooled %.2f slow pages per ms against %.2f; pooled ratio by walk: %s"):format(r.lower, r.pairs, r.sign_p,
        r.median and ("%.2f"):format(r.median) or "–", 1e6 * r.b / r.b_ns, 1e6 * r.a / r.a_ns,
        table.concat(by_walk, ", "))
  end
  local others = {}
  for _, case in ipairs { "backward", "stride", "shift" } do
    if x[case] then
      local s = pooled(x[case].p2)
      others[#others + 1] = { case = case, r = rates(c2, fwd2.ns, count(s, free), s.ns) }
    end
  end
  -- pass 2 later after the first touch: a second touch stays, a fading with time goes
  local later = x.pause and pooled(x.pause.p2)
  local kept = later and rates(c2, fwd2.ns, count(later, free), later.ns)
  out.later = kept
  -- pass 3 significantly below pass 2: the excess is the second touch's; what pass 3 keeps stays not explained
  local removed = c2 >= slowperiod.MIN_PAGES and r.median and r.median < 1 / slowperiod.SAME
    and r.sign_p < slowperiod.ALPHA
  if removed and kept and kept.ratio and kept.ratio < 1 / slowperiod.SAME and kept.p < slowperiod.ALPHA then
    say("pass 3 lowers them (%s), but so does a pause of 50 ms before pass 2 (%.2f per ms against %.2f): they fade "
      .. "with the time since the first touch, not with the touches", pairs_said(), 1e6 * kept.b / kept.b_ns,
      1e6 * c2 / fwd2.ns)
  elseif removed then
    local agreed = 0
    for i, s in ipairs(x.forward.p2) do
      local t = x.forward.p3[i]
      local a, b = count(s, free), t and count(t, free) or 0
      if t and a > 0 and (b / t.ns) < (a / s.ns) / slowperiod.SAME then agreed = agreed + 1 end
    end
    name { name = "the page's second touch (the excess over pass 3)",
      pages = math.max(0, math.floor(c2 * (1 - r.median) + 0.5)),
      control = ("pass 3 over the same pages, every walk: %s%s"):format(pairs_said(),
        kept and ("; a pass 2 50 ms after pass 1: %.2f per ms against %.2f"):format(1e6 * kept.b / kept.b_ns,
          1e6 * c2 / fwd2.ns) or ""),
      agreed = agreed, reps = reps }
    follows("second touch")
    -- what pass 3 keeps, walk by walk: one rate everywhere is what a cause in time would give
    local kept3 = { ("forward %.2f"):format(1e6 * c3 / fwd3.ns) }
    for _, case in ipairs { "backward", "stride", "shift", "pause" } do
      if x[case] then
        local s3 = pooled(x[case].p3)
        kept3[#kept3 + 1] = ("%s %.2f"):format(case, s3.ns > 0 and 1e6 * count(s3, free) / s3.ns or 0)
      end
    end
    say("what pass 3 keeps, slow pages per ms outside the classes: %s; their gaps in pass 3: %s",
      table.concat(kept3, ", "), (function(g)
        return g.cv and ("median %d ns, cv %.2f over %d gaps"):format(g.median_ns, g.cv, g.n) or "too few"
      end)(slowperiod.gaps(x.forward.p3)))
  elseif c2 >= slowperiod.MIN_PAGES and r.median and r.median <= slowperiod.SAME and r.median >= 1 / slowperiod.SAME
    and r.sign_p >= slowperiod.ALPHA then
    local same = true
    for _, o in ipairs(others) do
      same = same and o.r.ratio and o.r.ratio <= slowperiod.SAME and o.r.ratio >= 1 / slowperiod.SAME
    end
    if same then
      follows("time")
      say("they follow time: pass 3 over the same pages keeps pass 2's rate (%s; within a factor %.1f in %d of %d "
        .. "pairs)%s; the null walk below says how much of it is the timed loop's own", pairs_said(),
        slowperiod.SAME, r.same or 0, r.all or 0,
        #others > 0 and (", and pass 2's rate is the same in every other walk") or "")
    else
      say("pass 3 keeps pass 2's rate (%s) but another walk changes pass 2's", pairs_said())
    end
  elseif r.ratio then
    say("pass 3 against pass 2, every walk: %s: neither lowered nor the same", pairs_said())
  end
  out.gaps = slowperiod.gaps(x.forward.p2)

  -- 4 and 5. What is left is split by rate, not page by page, as two
  -- control walks split the forward walk's rate of slow stores outside the
  -- classes (pass 2's and pass 3's, the lower of the two: the rate both
  -- passes show). The null walk stores into page 0 at every step (the
  -- samples array written as in every walk): its rate is the timed loop's
  -- own, with one data page. The small set walks pages 0 to span - 1 again
  -- and again: the same loop over a working set the TLB and the shadow
  -- tables keep. Each walk's passes 2 and 3 are taken together; both store
  -- as many times as the buffer has pages.
  --   4. The timed loop's own gaps: the null rate, named where the forward
  --      walk is not below it (pooled in both passes, and pass 3 by the
  --      median of the repetitions' ratios and a sign test).
  --   5. The working set's size: the forward walk's rate above the small
  --      set's, named where pass 3 stays above the small set beyond SAME
  --      (pooled and by the median ratio, with a sign test) and pass 2 does
  --      too, pooled. Its floor is the higher of the small set's rate and the
  --      null walk's: what the small set keeps above the null walk stays not
  --      explained, and a small set below the null walk is said.
  -- Each covers at most its rate times pass 2's time, and together no more
  -- than the slow pages the rates counted (outside every class's pages,
  -- named or only decided).
  local p2_rate = fwd2.ns > 0 and 1e6 * c2 / fwd2.ns or 0
  local p3_rate = fwd3.ns > 0 and 1e6 * c3 / fwd3.ns or 0
  local walked = math.min(p2_rate, p3_rate)
  local rate_left = math.min(left, c2)
  local function per_ms(n, ns) return ns > 0 and 1e6 * n / ns or nil end
  local function fmt(q) return q and q < math.huge and ("%.2f"):format(q) or "–" end
  local function range(sp) return sp and ("median %.2f, %.2f to %.2f"):format(sp.median, sp.lo, sp.hi) or "–" end
  -- a control walk's passes 2 and 3 of each repetition, taken together: its rate per ms, pooled and by repetition
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
  -- the forward walk's pass 3 against a control's rate, repetition by repetition: ratios where the control saw
  -- slow samples, how many are above (ties left out), a sign test
  local function against(ctl)
    local qs, above, pairs_n = {}, 0, 0
    for i, s3 in ipairs(x.forward.p3) do
      local r3, rc = s3.ns > 0 and 1e6 * count(s3, free) / s3.ns, ctl.by_rep[i]
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
  local function rate_class(class) name(class); rate_left = rate_left - class.pages end
  local nl = x.null and x.null.p2 and x.null.p3 and both(x.null)
  local sm = x.small and x.small.p2 and x.small.p3 and both(x.small)
  if (x.null or x.small) and not (nl and sm or nl and not x.small) then
    say("the rate classes: the %s walk is missing or has no passes 2 and 3: undecided", nl and "small set's" or "null")
  end

  if nl then
    local a = against(nl)
    local below = a.pairs > 0 and a.above * 2 < a.pairs and a.sign_p < slowperiod.ALPHA
    local v = { count = nl.count, ns = nl.ns, per_ms = nl.per_ms, p2_per_ms = p2_rate, p3_per_ms = p3_rate,
      ratio = nl.per_ms > 0 and p3_rate / nl.per_ms or nil, p2_ratio = nl.per_ms > 0 and p2_rate / nl.per_ms or nil,
      median = a.median, above = a.above, pairs = a.pairs, sign_p = a.sign_p, seen = nl.seen }
    local by_rep, rates2, rates3 = {}, {}, {}
    for i, s2 in ipairs(x.forward.p2) do
      by_rep[#by_rep + 1] = nl.by_rep[i]
      rates2[#rates2 + 1] = per_ms(count(s2, free), s2.ns)
      local s3 = x.forward.p3[i]
      rates3[#rates3 + 1] = s3 and per_ms(count(s3, free), s3.ns) or nil
    end
    v.reps, v.p2, v.p3 = spread(by_rep), spread(rates2), spread(rates3)
    v.expected = nl.per_ms * fwd2.ns / 1e6 -- the null rate over pass 2's time
    local agreed = 0
    for _, q in ipairs(a.ratios) do if q >= 1 / slowperiod.SAME then agreed = agreed + 1 end end
    out.null = v
    local said = ("null walk (one page stored again and again, passes 2 and 3): %.2f slow samples per ms (%d in "
      .. "%.1f ms, in %d of %d repetitions; per repetition %s); the forward walk outside the classes: pass 3 %.2f per "
      .. "ms (per repetition %s), pass 2 %.2f (%s); over the null: pass 3 pooled %s, per repetition median %s, above "
      .. "it in %d of %d repetitions (ties left out), sign test p = %.2g; pass 2 pooled %s"):format(v.per_ms, v.count,
      v.ns / 1e6, nl.seen, reps, range(v.reps), p3_rate, range(v.p3), p2_rate, range(v.p2), fmt(v.ratio),
      fmt(v.median), a.above, a.pairs, a.sign_p, fmt(v.p2_ratio))
    local not_below = v.ratio and v.ratio >= 1 / slowperiod.SAME and v.p2_ratio >= 1 / slowperiod.SAME
      and v.median and v.median >= 1 / slowperiod.SAME and not below
    if nl.count < slowperiod.MIN_PAGES or nl.seen * 2 < reps then
      say("the timed loop's own gaps: the null walk has %d slow samples in %d of %d repetitions, too few to show "
        .. "them (%s); not named", nl.count, nl.seen, reps, said)
    elseif c2 < slowperiod.MIN_PAGES or c3 < slowperiod.MIN_PAGES then
      say("the timed loop's own gaps: %d and %d slow pages outside the classes in passes 2 and 3, too few to compare "
        .. "(%s)", c2, c3, said)
    elseif rate_left <= 0 then
      say("the timed loop's own gaps: no slow page is left outside the classes (%s)", said)
    elseif not_below then
      local pages = math.max(0, math.min(rate_left, math.floor(v.expected + 0.5)))
      rate_class { name = "the timed loop's own gaps (the null walk's rate: one page stored again and again, the "
          .. "samples array written as in every walk; covered by rate, not page by page)",
        pages = pages,
        control = ("%s; they cover min(%d pages left, %.2f per ms × %.1f ms of pass 2 = %.0f) = %d"):format(said,
          rate_left, v.per_ms, fwd2.ns / 1e6, v.expected, pages),
        agreed = agreed, reps = #a.ratios }
    else
      say("the timed loop's own gaps: the forward walk is below the null walk (beyond a factor %.1f, or pass 3 by "
        .. "the sign test): %s; not named, what is left stays not explained", slowperiod.SAME, said)
    end
  end

  if nl and sm then
    local a = against(sm)
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
    local v = { span = x.small.span, count = sm.count, ns = sm.ns, per_ms = sm.per_ms, null_per_ms = nl.per_ms,
      p3_per_ms = p3_rate, p2_per_ms = p2_rate, reps = spread(small_rates),
      to_null = nl.per_ms > 0 and sm.per_ms / nl.per_ms or nil, rep_to_null = (spread(to_null) or {}).median,
      null_above = null_above, null_pairs = null_pairs,
      null_sign_p = null_pairs > 0 and inference.sign_test(null_above, null_pairs) or 1,
      p3_ratio = sm.per_ms > 0 and p3_rate / sm.per_ms or (p3_rate > 0 and math.huge or nil),
      p2_ratio = sm.per_ms > 0 and p2_rate / sm.per_ms or (p2_rate > 0 and math.huge or nil),
      rep_p3_ratio = a.median, p3_above = a.above, p3_pairs = a.pairs, p3_sign_p = a.sign_p, agreed = agreed,
      expected = math.max(0, (walked - floor) * fwd2.ns / 1e6) }
    out.small = v
    local quieter = v.to_null and v.to_null < 1 / slowperiod.SAME or (null_pairs > 0 and null_above * 2 < null_pairs
      and v.null_sign_p < slowperiod.ALPHA)
    local said = ("the small set (pages 0 to %d again and again, passes 2 and 3): %.2f slow samples per ms (%d in "
      .. "%.1f ms; per repetition %s); over the null walk's %.2f: pooled %s, per repetition median %s, above it in "
      .. "%d of %d repetitions (ties left out), sign test p = %.2g; the forward walk outside the classes over it: "
      .. "pass 3 %.2f per ms, pooled %s, per repetition median %s, above it in %d of %d repetitions, sign test "
      .. "p = %.2g; pass 2 %.2f per ms, pooled %s"):format((v.span or 0) - 1, v.per_ms, sm.count, sm.ns / 1e6,
      range(v.reps), nl.per_ms, fmt(v.to_null), fmt(v.rep_to_null), null_above, null_pairs, v.null_sign_p, p3_rate,
      fmt(v.p3_ratio), fmt(v.rep_p3_ratio), a.above, a.pairs, a.sign_p, p2_rate, fmt(v.p2_ratio))
    local above = v.p3_ratio and v.p3_ratio > slowperiod.SAME and v.rep_p3_ratio and v.rep_p3_ratio > slowperiod.SAME
      and a.above * 2 > a.pairs and a.sign_p < slowperiod.ALPHA and v.p2_ratio and v.p2_ratio > slowperiod.SAME
    if nl.count < slowperiod.MIN_PAGES then
      say("the working set: the null walk has %d slow samples, too few to compare the small set with (%s); "
        .. "undecided", nl.count, said)
    elseif c2 < slowperiod.MIN_PAGES or c3 < slowperiod.MIN_PAGES then
      say("the working set: %d and %d slow pages outside the classes in passes 2 and 3, too few to decide it (%s)",
        c2, c3, said)
    elseif rate_left <= 0 then
      say("the working set: no slow page is left outside the classes (%s)", said)
    elseif above then
      local pages = math.max(0, math.min(rate_left, math.floor(v.expected + 0.5)))
      rate_class { name = ("the working set's size (a %d-page set against the whole buffer: the TLB, the shadow "
          .. "tables and the data caches not told apart; covered by rate, not page by page)"):format(v.span or 0),
        pages = pages,
        control = ("%s; they cover min(%d pages left, (%.2f - %.2f) per ms × %.1f ms of pass 2 = %.0f) = %d; the "
          .. "forward walk's rate is the lower of passes 2 and 3, the floor the higher of the small set's and the "
          .. "null walk's%s"):format(said, rate_left, walked, floor, fwd2.ns / 1e6, v.expected, pages,
            quieter and "; the small set is quieter than the null walk, which runs the same loop: not explained"
            or v.per_ms > nl.per_ms and ("; the small set's %.2f per ms over the null walk's %.2f stays not "
              .. "explained"):format(v.per_ms, nl.per_ms) or ""),
        agreed = agreed, reps = #a.ratios }
    elseif within_same(v.p3_ratio) and within_same(v.rep_p3_ratio) then
      say("the working set did not decide them: the small set keeps pass 3's rate (within a factor %.1f): %s; not "
        .. "named", slowperiod.SAME, said)
    else
      say("the working set: the forward walk is not above the small set beyond a factor %.1f by every test: %s; not "
        .. "named, what is left stays not explained", slowperiod.SAME, said)
    end
  end

  -- 6. The physical frames.
  local all = { present = 0, set = {} }
  for bit = 0, slowperiod.FRAME_BITS - 1 do all.set[bit] = 0 end
  for _, f in ipairs(x.forward.frames or {}) do
    all.present = all.present + f.present
    for bit = 0, slowperiod.FRAME_BITS - 1 do all.set[bit] = all.set[bit] + f.set[bit] end
  end
  out.frames = slowperiod.frame_bits(fwd2, all, free)
  if out.frames then
    local f = out.frames
    say("frames: bit %d is set in %.1f %% of the %d slow pages outside the classes and in %.1f %% of all pages "
      .. "(p = %.2g over %d bits, optimistic: pages allocated in one run share bits)%s",
      f.bit, 100 * f.slow_share, f.pages, 100 * f.all_share, f.p, slowperiod.FRAME_BITS,
      f.p < slowperiod.ALPHA and ": it stands out, with no control to decide it" or ": no bit stands out")
  end

  out.follows = #out.kinds > 0 and table.concat(out.kinds, " and ") or nil
  out.unexplained = left
  out.unexplained_share = out.total > 0 and left / out.total or 0
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
