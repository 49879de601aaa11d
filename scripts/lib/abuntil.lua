-- Interleaved until decided: AB="A knobs | B knobs" UNTIL=decided adds ABBA
-- pairs inside one run until every decision row is "different by x %
-- [lo, hi]", "the same within ±EQUIV %" or the cap (MAX_PAIRS, MAX_MIN) is
-- reached ("undecided, n more pairs would decide"). Both sides share the
-- run, so the host's drift falls on both alike (duet benchmarking, RMIT).
--
-- The statistic is the mean of the within-pair log ratios log(B/A) with its
-- t interval over batch means: consecutive pairs in batches of an even
-- size near sqrt(n) (whole ABBA blocks), so a drift of the host that lasts
-- several pairs widens the interval instead of passing as a change (on this
-- KVM guest, busy, a t interval over single pairs called a +3 % plant
-- -4.6 % [-8.7, -0.3] in one try of four). The looks come on a geometric schedule (12 pairs, then a
-- quarter more each time, in whole ABBA blocks, and at the cap): few looks,
-- so each gets a larger share. Looking again would spend ALPHA again at each
-- look, so the looks share it by alpha spending: a Pocock-shaped spending
-- function (Lan and DeMets), a(t) = ALPHA ln(1 + (e - 1) t), t = pairs /
-- MAX_PAIRS, gives each look the increment a(t_k) - a(t_k-1), and that
-- look tests at its increment alone: "different" when the 1 - a_k interval
-- excludes 0, "same" when the 1 - 2 a_k interval lies inside ±EQUIV (two
-- one-sided tests). The increments add up to at most ALPHA, so by the union
-- bound the chance of any false "different" over all the looks (and of any
-- false "same" where the change is EQUIV or more) is at most ALPHA, however
-- the looks are correlated and wherever the run stops. A look the time cap
-- cuts off leaves its share unspent: conservative.
local inference = require "inference"
local stats = require "stats"
local units = require "units"

local abuntil = {}

abuntil.ALPHA = 0.05
abuntil.MIN_PAIRS = 12 -- the first look: 6 batches of 2; at 6 pairs (3 batches, 2 df) an A/A try was called +0.4 %
abuntil.LOOK_EVERY = 2 -- looks at whole ABBA blocks (A B, then B A)
abuntil.LOOK_GROWTH = 1.25 -- each look a quarter more pairs than the last

-- The share of ALPHA spent by information fraction t (Pocock-shaped).
function abuntil.spent(alpha, t)
  t = math.max(0, math.min(1, t))
  return alpha * math.log(1 + (math.exp(1) - 1) * t)
end

-- One row's verdict from its log ratios d at level a (this look's share):
-- {kind = "different" | "same" | "undecided", ratio, lo, hi (1 - a), need
-- (more pairs that would decide it at this level)}.
-- The batch means of d: batches of an even size near sqrt(#d), at least 2,
-- and at least 3 batches; the pairs past the last whole batch left out.
function abuntil.batches(d)
  local size = math.max(2, 2 * math.floor(math.sqrt(#d) / 2))
  while size > 2 and #d // size < 3 do size = size - 2 end
  local means = {}
  for b = 1, #d // size do
    local sum = 0
    for i = (b - 1) * size + 1, b * size do sum = sum + d[i] end
    means[b] = sum / size
  end
  return means, size
end

function abuntil.judge(d, a, equiv)
  local means, size = abuntil.batches(d)
  if #means < 2 then means, size = d, 1 end
  local n = #means
  local m = stats.mean(means)
  local out = { n = #d, ratio = math.exp(m) }
  local bound = math.log(1 + equiv / 100)
  local s = 0
  for _, v in ipairs(means) do s = s + (v - m) ^ 2 end
  s = n > 1 and math.sqrt(s / (n - 1)) or 0
  if s == 0 then -- every pair one ratio (a count): exact
    out.lo, out.hi = out.ratio, out.ratio
    out.kind = m ~= 0 and "different" or "same"
    return out
  end
  local se = s / math.sqrt(n)
  local t2, t1 = inference.t_quantile(a / 2, n - 1), inference.t_quantile(a, n - 1)
  out.lo, out.hi = math.exp(m - t2 * se), math.exp(m + t2 * se)
  if m - t2 * se > 0 or m + t2 * se < 0 then
    out.kind = "different"
  elseif math.abs(m) + t1 * se < bound then
    out.kind = "same" -- shown with the interval of the two one-sided tests, the one inside ±EQUIV
    out.lo, out.hi = math.exp(m - t1 * se), math.exp(m + t1 * se)
  else
    out.kind = "undecided"
    -- the pairs whose interval would clear 0 at this spread and change, or fit inside ±EQUIV
    -- (batches wanted, times the batch size)
    local want = math.abs(m) > 0 and (t2 * s / math.abs(m)) ^ 2 or math.huge
    if math.abs(m) < bound then want = math.min(want, (t1 * s / (bound - math.abs(m))) ^ 2) end
    out.need = want < math.huge and math.max(1, math.ceil(want * size) - #d) or nil
  end
  return out
end

-- The text of a verdict.
function abuntil.text(v, equiv)
  local pct = function(r) return ("%+.1f"):format(100 * (r - 1)) end
  local interval = ("B/A %s %% [%s, %s]"):format(pct(v.ratio), pct(v.lo), pct(v.hi))
  if v.kind == "different" then
    return ("different by %s %% [%s, %s]"):format(pct(v.ratio), pct(v.lo), pct(v.hi))
  elseif v.kind == "same" then
    return ("the same within ±%g %% (%s)"):format(equiv, interval)
  end
  return ("undecided (%s), %s"):format(interval, v.need and ("%d more pairs would decide"):format(v.need)
    or "no number of pairs would decide at this spread")
end

-- A case's value of a column in one record, as the table shows it.
local function value(h, col, r)
  if type(col.from) == "function" then return col.from(r) end
  if r[col.from] ~= nil then return units.convert(col.unit, r[col.from], h.bytes, h.pages) end
end

-- The rows to decide: {name, col, a (case of side A), b (its twin)} for
-- each decision row (every timed row where the script names none).
local function targets(h)
  local names = {}
  for _, n in ipairs(h.ab.decision or {}) do names[#names + 1] = { n.case, n.column } end
  local out = {}
  for _, case in ipairs(h.cases) do
    if case.side == "A" then
      local twin
      for _, c in ipairs(h.cases) do if c.side == "B" and c.ab_case == case.ab_case then twin = c end end
      for _, col in ipairs(h.cols) do
        local wanted = #names == 0 and units.timed(col.unit)
        for _, n in ipairs(names) do wanted = wanted or (n[1] == case.ab_case and n[2] == col.name) end
        if wanted then out[#out + 1] = { name = case.ab_case .. " " .. col.name, col = col, a = case, b = twin } end
      end
    end
  end
  return out
end

-- The log ratios log(B/A) of a target, pair by pair (pairs with a value of
-- 0 or below on either side left out).
local function log_ratios(h, t)
  local d = {}
  for i = 1, math.min(#t.a.records, #t.b.records) do
    local x, y = value(h, t.col, t.a.records[i]), value(h, t.col, t.b.records[i])
    if type(x) == "number" and type(y) == "number" and x > 0 and y > 0 then d[#d + 1] = math.log(y / x) end
  end
  return d
end

-- The driver of one run: after(rep) says whether to add another pair.
function abuntil.new(h)
  local cfg = h.cfg
  local self = { h = h, equiv = cfg.EQUIV, max_pairs = cfg.MAX_PAIRS, max_s = cfg.MAX_MIN * 60, t0 = nil,
    spent = 0, looks = 0, last_t = 0, next_look = abuntil.MIN_PAIRS }
  function self.after(rep)
    self.t0 = self.t0 or h.start_ns
    local elapsed = (require("ft").now_ns() - self.t0) / 1e9
    local capped = rep >= self.max_pairs or elapsed >= self.max_s
    if rep < self.next_look and not capped then return true end
    local grown = math.ceil(rep * abuntil.LOOK_GROWTH)
    self.next_look = grown + grown % abuntil.LOOK_EVERY
    self.targets = self.targets or targets(h)
    local t = rep / self.max_pairs
    local a = abuntil.spent(abuntil.ALPHA, t) - abuntil.spent(abuntil.ALPHA, self.last_t)
    self.last_t, self.spent, self.looks = t, self.spent + a, self.looks + 1
    local open = 0
    for _, tg in ipairs(self.targets) do
      local d = log_ratios(h, tg)
      if #d >= 2 then
        tg.verdict = abuntil.judge(d, a, self.equiv)
        tg.verdict.alpha = a
      end
      if not tg.verdict or tg.verdict.kind == "undecided" then open = open + 1 end
      if not cfg.QUIET then
        io.stderr:write(("%s: pair %d, %.1f min: %s: %s (this look at alpha %.2g)\n"):format(h.script, rep,
          elapsed / 60, tg.name, tg.verdict and abuntil.text(tg.verdict, self.equiv) or "no pairs yet", a))
      end
    end
    self.pairs, self.elapsed = rep, elapsed
    self.decided = open == 0 and #self.targets > 0
    if capped and not self.decided then
      self.cap = rep >= self.max_pairs and ("MAX_PAIRS=%d"):format(self.max_pairs)
        or ("MAX_MIN=%d"):format(cfg.MAX_MIN)
    end
    return not (self.decided or capped)
  end
  -- The outcome, once the pairs have run: a note and a value per decision row.
  function self.finish()
    local how = ("interleaved until decided: %s after %d pairs (%.1f min)%s; alpha spending, Pocock shape over "
      .. "MAX_PAIRS=%d, %d looks, %.3g of ALPHA = %g spent; same within ±%g %% (EQUIV)"):format(
      self.decided and "decided" or "undecided", self.pairs or 0, (self.elapsed or 0) / 60,
      self.cap and (" (cap: %s)"):format(self.cap) or "", self.max_pairs, self.looks, self.spent, abuntil.ALPHA,
      self.equiv)
    h:note(how)
    if not cfg.QUIET then io.stderr:write(h.script, ": ", how, "\n") end
    for _, tg in ipairs(self.targets or {}) do
      local v = tg.verdict
      if v then
        local line = ("UNTIL=decided %s: %s"):format(tg.name, abuntil.text(v, self.equiv))
        h:note(line)
        io.stderr:write(h.script, ": ", line, "\n")
        h:value("until_" .. tg.name:gsub("%W+", "_"), v.ratio, "ratio", { { "lo", v.lo }, { "hi", v.hi },
          { "outcome", v.kind }, { "pairs", v.n }, { "need", v.need }, { "seconds", self.elapsed },
          { "case", tg.a.ab_case }, { "column", tg.col.name } })
      end
    end
  end
  return self
end

return abuntil
