-- The statistics of comparisons across runs, against values computed by
-- hand (each case's working is in its comment).
local t = require "tap"
local inf = require "inference"

local function near(got, want, tol, name)
  return t.ok(type(got) == "number" and math.abs(got - want) <= tol, name,
    ("got:  %s\nwant: %s (within %g)"):format(tostring(got), tostring(want), tol))
end

-- xorshift64* from seed 1: its first three draws, computed independently
-- (Python, 64-bit masked): 0.28083505005035947, 0.6711372530266764, 0.7258461452833668.
local rng = inf.rng(1)
near(rng(), 0.28083505005035947, 1e-15, "rng(seed 1) first draw")
near(rng(), 0.6711372530266764, 1e-15, "second draw")
near(rng(), 0.7258461452833668, 1e-15, "third draw")
t.errors(function() inf.rng(0.5) end, "expected an integer", "a seed that is no integer is refused")

-- Bootstrap: two runs a side, each run constant at 10 or 20. A resample's
-- median is 10 (both draws run 1, p 1/4), 20 (1/4) or 15 (1/2), so the
-- ratio new/old is 0.5 with p 1/16 and 2 with p 1/16: both beyond the
-- 2.5 % tails, so the 95 % interval is exactly [0.5, 2]; the estimate is 15/15.
local two = { { 10, 10, 10 }, { 20, 20, 20 } }
local r, lo, hi = inf.bootstrap_ratio(two, two, { seed = 7, B = 2000 })
t.is(r, 1.0, "bootstrap: the ratio of pooled medians")
t.is(lo, 0.5, "its 2.5 % quantile is 10/20")
t.is(hi, 2.0, "its 97.5 % quantile is 20/10")
local a1, a2, a3 = inf.bootstrap_ratio({ { 1, 2, 3 }, { 2, 3, 4 } }, { { 2, 3, 5 }, { 3, 4, 6 } }, { seed = 42 })
local b1, b2, b3 = inf.bootstrap_ratio({ { 1, 2, 3 }, { 2, 3, 4 } }, { { 2, 3, 5 }, { 3, 4, 6 } }, { seed = 42 })
t.ok(a1 == b1 and a2 == b2 and a3 == b3, "the same seed gives the same interval, to the bit")
near(a1, 3.5 / 2.5, 1e-12, "pooled medians 3.5 and 2.5")
t.ok(a2 <= a1 and a1 <= a3, "the interval holds the estimate")
-- Every run identical: the interval collapses on the ratio.
r, lo, hi = inf.bootstrap_ratio({ { 4, 4 }, { 4, 4 } }, { { 5, 5 }, { 5, 5 } })
t.ok(r == 1.25 and lo == 1.25 and hi == 1.25, "constant runs: ratio and interval 1.25")
t.is(inf.bootstrap_ratio({ { 0, 0 } }, { { 1, 1 } }), nil, "a median of 0 on the old side gives no ratio")

-- Permutation, exact. {1,2,3} against {4,5,6}: of the C(6,3) = 20 splits
-- only the observed one and its mirror have |mean difference| >= 3: p = 0.1.
local p, method, floor = inf.permutation({ 1, 2, 3 }, { 4, 5, 6 })
near(p, 0.1, 1e-12, "permutation {1,2,3} vs {4,5,6}: p = 2/20")
t.is(method, "exact", "enumerated")
near(floor, 0.1, 1e-12, "and 0.1 is the smallest p of 3 against 3")
-- {1,3} against {2,4}: differences over the 6 splits are 2, 1, 0, 0, -1, -2;
-- four have |d| >= 1: p = 4/6.
near(inf.permutation({ 1, 3 }, { 2, 4 }), 4 / 6, 1e-12, "permutation {1,3} vs {2,4}: p = 4/6")
near(select(3, inf.permutation({ 1, 2 }, { 3, 4 })), 1 / 3, 1e-12, "2 against 2 can never go below 1/3")
near(select(3, inf.permutation({ 1, 2, 3, 4 }, { 5, 6, 7, 8 })), 2 / 70, 1e-12, "4 against 4: 2/70")
-- Too many splits to enumerate: seeded draws, (hits + 1) / (draws + 1).
local big_a, big_b = {}, {}
for i = 1, 12 do big_a[i], big_b[i] = i, i + 0.5 end
local pr, mr = inf.permutation(big_a, big_b, { exact_max = 10, draws = 2000, seed = 3 })
t.is(mr, "random", "beyond exact_max the splits are drawn")
t.ok(pr > 0.5, "a shift of half a step among 12 is no difference", pr)

-- Wilcoxon signed-rank. d = 1.5, -0.5, 2, 3, 2.5: ranks of |d| are 2, 1, 3,
-- 5, 4, so W+ = 14. Of the 2^5 = 32 sign patterns, W+ >= 14 for 2 (15 and
-- 14), so p = 2 * 2/32 = 0.125.
local pw, w, n = inf.wilcoxon { 1.5, -0.5, 2.0, 3.0, 2.5 }
t.is(w, 14.0, "Wilcoxon W+ = 14")
t.is(n, 5, "five non-zero differences")
near(pw, 0.125, 1e-12, "exact two-sided p = 4/32")
-- With a tie and a zero: d = 1, -1, 2, 3, 0. The zero is dropped; midranks
-- 1.5, 1.5, 3, 4, doubled 3, 3, 6, 8 (sum 20); W+ doubled = 3 + 6 + 8 = 17.
-- Subset sums >= 17: 17, 17, 20 (3 of 16); p = 2 * 3/16 = 0.375.
pw, w, n = inf.wilcoxon { 1, -1, 2, 3, 0 }
t.is(w, 8.5, "W+ with a tie: 1.5 + 3 + 4")
t.is(n, 4, "the zero dropped")
near(pw, 0.375, 1e-12, "p = 6/16, exact over the doubled midranks")
t.is(inf.wilcoxon { 0, 0 }, 1, "no non-zero difference: p = 1")
local many = {}
for i = 1, 80 do many[i] = i % 2 == 0 and i or -i end
local _, _, _, mm = inf.wilcoxon(many)
t.is(mm, "normal", "above 60 differences the normal approximation")

-- Benjamini-Hochberg. p = .01, .04, .03, .5 (m = 4): sorted p*m/k are
-- .04, .06, .0533, .5; their running minimum from the top gives
-- q = .04, .0533, .0533, .5 in the input order.
local q = inf.bh { 0.01, 0.04, 0.03, 0.5 }
near(q[1], 0.04, 1e-12, "BH q of 0.01")
near(q[2], 0.16 / 3, 1e-12, "BH q of 0.04 takes the smaller one above it")
near(q[3], 0.16 / 3, 1e-12, "BH q of 0.03")
near(q[4], 0.5, 1e-12, "BH q of 0.5")

-- Pettitt on 1, 2, 3, 10, 11, 12: U_t = sum (2 r_i - 7) = -5, -8, -9, -8,
-- -5, so K = 9 at t = 3. Only orders whose first three are {1,2,3} or
-- {4,5,6} reach |U_3| = 9 (no other t can: |U_t| <= 8): 2 * 3! * 3! = 72 of
-- 720, p = 0.1.
local pp, tau, k = inf.pettitt { 1, 2, 3, 10, 11, 12 }
t.is(tau, 3, "Pettitt: the change after the third")
t.is(k, 9.0, "K = 9")
near(pp, 0.1, 1e-12, "exact p = 72/720")

-- Regimes: seven values near 2.1 then eight near 4.6 (repetition 8 starts
-- the second); and 1 high, 2-10 low, 11-15 high.
local seq = { 2.1, 2.0, 2.2, 2.15, 2.05, 2.12, 2.08, 4.6, 4.5, 4.7, 4.65, 4.55, 4.62, 4.58, 4.61 }
local regimes = inf.regimes(seq)
t.ok(regimes and #regimes == 2, "two regimes found", regimes and #regimes)
t.is(regimes and regimes[2].reps[1][1], 8, "the second starts at repetition 8")
near(regimes and regimes[1].median or 0, 2.1, 1e-9, "the first regime's median")
near(regimes and regimes[2].median or 0, 4.605, 1e-9, "the second's")
local flat = { 5, 3, 4, 6, 2, 5, 4, 3, 6, 4, 5, 3, 4, 6, 5 }
t.is(inf.regimes(flat), nil, "a sequence without a shift has one regime")
local abab = { 2.1, 2.0, 2.2, 2.1, 2.05, 4.6, 4.5, 4.7, 4.65, 4.55, 2.12, 2.08, 2.1, 2.15, 2.02 }
regimes = inf.regimes(abab)
t.is(regimes and #regimes, 2, "low, high, low: two regimes")
t.is(regimes and inf.spans(regimes[1].reps), "1–5 and 11–15", "the low one named by its spans")
t.is(regimes and inf.spans(regimes[2].reps), "6–10", "the high one")

-- Student's t: t(10) = 2.228139 leaves 2.5 % above (tables).
near(inf.t_upper_tail(2.228139, 10), 0.025, 1e-6, "t upper tail, 10 df")
near(inf.t_quantile(0.025, 4), 2.776445, 1e-5, "t quantile 97.5 %, 4 df")
-- Wilson 95 % for 0 of 20: upper bound z^2/(n + z^2) = 0.16113.
local wl, wh = inf.wilson(0, 20)
t.ok(wl == 0 and math.abs(wh - 0.16113) < 1e-4, "Wilson interval of 0/20", wh)

-- Variance components of {1,3},{5,7}: MSW = 4/2 = 2, MSB = 16/1, n0 = 2:
-- sigma_b^2 = (16 - 2)/2 = 7.
local vb, vw, g = inf.variance_components { { 1, 3 }, { 5, 7 } }
t.ok(vb == 7 and vw == 2 and g == 4, "variance components 7, 2, mean 4", ("%s %s %s"):format(vb, vw, g))

-- The rank scan and Pettitt's test as the direct computations gave them (a
-- block z per block, a call per random index), pinned to the last bit.
for _, c in ipairs {
  { { 5, 3, 4, 6, 5, 12, 14, 11, 13, 12, 4, 5, 6, 3, 5 }, "0.014992503748125937 6 10 3.0618621784789726" },
  { { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, "0.014992503748125937 1 6 2.8823067684915684" },
  { { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7 }, "0.31234382808595701 1 4 2.3334523779156067" },
} do
  t.is(("%.17g %s %s %.17g"):format(inf.rank_scan(c[1])), c[2], "rank scan: " .. c[2])
  t.is(("%.17g %s %s %.17g"):format(inf.rank_scan(c[1])), c[2], "rank scan, asked again (the memo): " .. c[2])
end
t.is(("%.17g %.17g %.17g"):format(inf.pettitt { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3 }),
  "0.14346413396650837 4 38", "Pettitt: p, tau, k")
do -- rng's shuffle is Fisher-Yates with rng(i), i = n down to 2, on the same state
  local next_of, shuffle = inf.rng(42)
  local direct = inf.rng(42)
  local a, c = {}, {}
  for i = 1, 20 do a[i], c[i] = i, i end
  shuffle(a, 20)
  for i = 20, 2, -1 do
    local j = direct(i)
    c[i], c[j] = c[j], c[i]
  end
  t.is(table.concat(a, " "), table.concat(c, " "), "shuffle: the order rng(i) calls give")
  t.is(next_of(), direct(), "shuffle: rng continues from the state the shuffle left")
end

t.done()
