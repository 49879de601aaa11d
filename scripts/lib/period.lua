-- Where slow pages sit by page index: at the first page of every 2 MiB
-- (where a first touch also allocates a page-table page), and apart from
-- those, by index modulo each power of two from 2 to the pages in 2 MiB,
-- against an even spread. A period is named when one stands
-- out: the smallest modulus whose spread differs from an even one beyond
-- chance (a chi-square test, Bonferroni over the moduli) and that holds
-- nearly as much of the slow pages off even as any larger modulus does,
-- since a pattern of period 8 is also one of period 16 and 32.
local inference = require "inference"

local period = {}

period.ALPHA = 0.001     -- over all the moduli tested together
period.MIN_EXPECTED = 5  -- slow pages per residue an even spread must give, for the test to hold
period.MIN_EXCESS = 0.1  -- the share of slow pages off an even spread a named period must explain
period.NEAR = 0.9        -- of the largest excess, for the smallest modulus to be the period

-- The chi-square upper tail (Wilson and Hilferty's cube root, good to a few
-- per cent of p at the degrees of freedom here).
local function chi2_upper(x, df)
  local z = ((x / df) ^ (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
  return inference.t_upper_tail(z, 1e9)
end

-- get(i) -> page i's ns (i from 1 to n); slow_ns: the threshold; pages_2m:
-- base pages per 2 MiB. Returns {slow, moduli = {{m, counts, p, excess,
-- positions}}, period, positions, share, first_2m = {slow, expected, ratio}}.
function period.of(get, n, slow_ns, pages_2m)
  pages_2m = pages_2m or 512
  local slow, at = {}, 0
  for i = 1, n do
    if get(i) > slow_ns then
      if (i - 1) % pages_2m == 0 then at = at + 1 else slow[#slow + 1] = i - 1 end
    end
  end
  local out = { slow = #slow + at, pages = n, moduli = {} }
  local candidates = n - (n + pages_2m - 1) // pages_2m -- the pages that are not a 2 MiB's first
  local tested = 0
  for k = 1, 20 do
    local m = 1 << k
    if m > pages_2m or m > n then break end
    local counts, chi2, excess, positions, least = {}, 0, 0, {}, math.huge
    for r = 0, m - 1 do counts[r] = 0 end
    for _, i in ipairs(slow) do counts[i % m] = counts[i % m] + 1 end
    for r = 0, m - 1 do
      -- residue r's share of the candidates (residue 0 lost the 2 MiB firsts)
      local pages = (n - r + m - 1) // m - (r == 0 and (n + pages_2m - 1) // pages_2m or 0)
      local expected = #slow * pages / candidates
      least = math.min(least, expected)
      chi2 = chi2 + (counts[r] - expected) ^ 2 / math.max(expected, 1e-9)
      excess = excess + math.max(0, counts[r] - expected)
      if counts[r] > 2 * expected then positions[#positions + 1] = r end
    end
    local expected = least
    if expected >= period.MIN_EXPECTED then tested = tested + 1 end
    out.moduli[#out.moduli + 1] = { m = m, counts = counts, excess = #slow > 0 and excess / #slow or 0,
      p = expected >= period.MIN_EXPECTED and chi2_upper(chi2, m - 1) or nil, positions = positions }
  end
  local best = 0
  for _, e in ipairs(out.moduli) do
    if e.p and e.p < period.ALPHA / math.max(tested, 1) then best = math.max(best, e.excess) end
  end
  if best >= period.MIN_EXCESS then
    for _, e in ipairs(out.moduli) do
      if e.p and e.p < period.ALPHA / tested and e.excess >= period.NEAR * best then
        out.period, out.positions = e.m, e.positions
        local held = 0
        for _, r in ipairs(e.positions) do held = held + e.counts[r] end
        out.share = held / #slow
        break
      end
    end
  end
  local expected = out.slow * ((n + pages_2m - 1) // pages_2m) / n
  out.first_2m = { slow = at, expected = expected, ratio = expected > 0 and at / expected or nil }
  return out
end

-- The same over an ft.samples array; slow_ns nil: twice its median (a
-- first touch, where every page faults).
function period.of_samples(s, slow_ns, pages_2m)
  return period.of(function(i) return s[i] end, #s, slow_ns or 2 * s:median(), pages_2m)
end

-- One line: the period and where, or that none stands out; the 2 MiB boundary.
function period.describe(res)
  local head
  if res.slow == 0 then return "no slow pages" end
  if res.period then
    head = ("period %d: positions %s of every %d hold %.0f %% of the %d slow pages off the 2 MiB firsts "
      .. "(an even spread: %.0f %%)"):format(res.period, table.concat(res.positions, ", "), res.period,
        100 * res.share, res.slow - res.first_2m.slow, 100 * #res.positions / res.period)
  else
    local testable = 0
    for _, e in ipairs(res.moduli) do if e.p then testable = math.max(testable, e.m) end end
    head = testable > 0 and ("no period among the moduli 2 to %d (%d slow pages off the 2 MiB firsts)")
      :format(testable, res.slow - res.first_2m.slow)
      or ("too few slow pages (%d) to test a period"):format(res.slow - res.first_2m.slow)
  end
  local b = res.first_2m
  return ("%s; the first page of a 2 MiB: %d slow where an even spread gives %.1f%s"):format(head, b.slow, b.expected,
    b.ratio and (" (%.1f×)"):format(b.ratio) or "")
end

-- A note under h's table per pass: passes = {{number, samples [, slow_ns]}}
-- (no slow_ns: above twice the median, for a first touch).
function period.note(h, what, passes)
  for _, p in ipairs(passes) do
    local res = period.of_samples(p[2], p[3], (2 << 20) // h.page)
    h:note(("%s pass %d, last repetition, pages above %s by index: %s"):format(what, p[1],
      p[3] and p[3] .. " ns" or "twice the median", period.describe(res)))
  end
end

return period
