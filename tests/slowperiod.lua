-- slowperiod.lua on made-up passes whose answer is known: slow pages planted
-- at a period in time follow time, and the null walk (page 0 stored again
-- and again) at about their rate names the vCPU's own gaps, by rate; a quiet
-- null walk names nothing, one above what is left covers no more than it;
-- planted at residues of the page index they follow the index; gone in
-- pass 3 they are the second touch; at page 0 of each 2 MiB and moving to
-- the last page when walked backward they are the walk's entry into a
-- 2 MiB; moving with the samples array's shift they are its cache lines;
-- none planted: nothing is named.
local t = require "tap"
local slowperiod = require "slowperiod"

local N, P2M, NS = 1 << 14, 512, 30

-- The walk's order (page of each j, from 1), as ft.touch_timed_walk walks it.
local walkorder = require "walkorder"
local function order(stride, backward) return walkorder(N, stride, backward) end

-- One pass: slow(j, page, t_ns, entry) -> true for a slow page (cause: no
-- guest event). The pass costs NS per page, a slow page 600.
local function pass(walk, slow)
  local ix = order(walk.stride or 1, walk.backward)
  local s, ends, matched = {}, { [0] = 1000 }, {}
  local prev
  for j = 1, N do
    local page = ix[j]
    local entry = page // P2M ~= prev
    prev = page // P2M
    local is = slow(j - 1, page, ends[j - 1] - ends[0], entry)
    s[j] = is and 600 or NS
    ends[j] = ends[j - 1] + s[j]
    if is then matched[#matched + 1] = { index = j - 1, ns = s[j], cause = "no guest event" } end
  end
  return slowperiod.set(s, ix, ends, matched, ends[N] - ends[0], P2M, nil)
end

local WALKS = { forward = {}, backward = { backward = true }, stride = { stride = 7 }, shift = { shift = 4 },
  pause = {}, null = { stride = 0 } }

-- x for slowperiod.decide: rule(case, pass_no, rep) -> slow(j, page, t, entry).
local function experiment(rule, reps)
  local x = { pages_2m = P2M }
  for key, walk in pairs(WALKS) do
    local c = { p2 = {}, p3 = {}, frames = {}, shift = walk.shift }
    for rep = 1, reps or 3 do
      c.p2[rep] = pass(walk, rule(key, 2, rep))
      c.p3[rep] = pass(walk, rule(key, 3, rep))
    end
    x[key] = c
  end
  return x
end

local function names(d)
  local out = {}
  for _, c in ipairs(d.classes) do out[#out + 1] = c.name end
  return table.concat(out, "; ")
end

-- A slow page every `every` ns of pass time, whatever the page or the pass;
-- the null walk's every `null_every` ns (nil: none).
local function in_time(every, null_every)
  return function(case)
    local period_ns = every
    if case == "null" then period_ns = null_every end
    return function(_, _, tn) return period_ns ~= nil and (tn + 7000) % period_ns < NS end
  end
end

-- The share the vCPU's own gaps should cover: min(the pages left, the null
-- walk's rate times the forward walk's pass-2 time) over all pass-2 pages.
local function vcpu_share(x, left, total)
  local n, ns = 0, 0
  for _, pass_no in ipairs { "p2", "p3" } do
    for _, set in ipairs(x.null[pass_no]) do n, ns = n + #set.slow, ns + set.ns end
  end
  local fwd_ns = 0
  for _, set in ipairs(x.forward.p2) do fwd_ns = fwd_ns + set.ns end
  return math.min(left, math.floor(n / ns * fwd_ns + 0.5)) / total
end

do -- a slow page every 20 µs of pass time in every walk, the null walk's every 25 µs: the vCPU's own gaps
  local x = experiment(in_time(20000, 25000))
  local d = slowperiod.decide(x)
  t.is(d.follows, "time and vCPU gaps", "planted in time: they follow time, the null walk's too",
    table.concat(d.verdicts, " | "))
  t.is(names(d), "the vCPU's own gaps (present with no page walked; covered by rate, not page by page)",
    "named, as covered by rate")
  local want = vcpu_share(x, d.total, d.total)
  t.ok(want > 0.7 and want < 0.9, "the null walk's rate covers most of pass 2's, not all", tostring(want))
  t.ok(d.classes[1] and math.abs(d.classes[1].share - want) < 1e-12, "its share: the null rate times pass 2's time",
    ("%s against %s"):format(d.classes[1] and d.classes[1].share, want))
  t.is(d.unexplained, d.total - d.classes[1].pages, "the rest above the null rate stays not explained")
  t.ok(d.unexplained > 0, "and some does")
  t.like(d.classes[1].control, "null walk (one page stored again and again, passes 2 and 3): 39.77 slow samples per "
    .. "ms", "its control gives the null walk's rate")
  t.like(d.classes[1].control, "pass 3 49.43 per ms", "and pass 3's beside it")
  t.is(d.classes[1].agreed, 3, "every repetition's ratio within the factor")
  t.ok(d.null and d.null.reps and d.null.reps.n == 3, "the null rate per repetition, for its spread")
  t.ok(d.gaps.cv and d.gaps.cv < 0.2, "the gaps between them are regular", tostring(d.gaps.cv))
end

do -- the same in every walk, but the null walk has no slow sample: nothing is named
  local d = slowperiod.decide(experiment(in_time(20000, nil)))
  t.is(d.follows, "time", "planted in time, a quiet null walk: they follow time", table.concat(d.verdicts, " | "))
  t.is(names(d), "", "and no class is named (the null walk does not show them)")
  t.is(d.unexplained, d.total, "every one stays not explained")
  t.like(table.concat(d.verdicts, " | "), "the null walk has 0 slow samples", "said so")
end

do -- the null walk a little busier than the walks (15 µs against 20): its cover is capped at what is left
  local x = experiment(in_time(20000, 15000))
  local d = slowperiod.decide(x)
  t.like(names(d), "the vCPU's own gaps", "named (within a factor 1.5)", table.concat(d.verdicts, " | "))
  t.ok(d.null.expected > d.total, "the null rate times pass 2's time is above the pages left",
    ("%s against %d"):format(d.null.expected, d.total))
  t.is(d.classes[1] and d.classes[1].pages, d.total, "the class covers exactly what is left")
  t.is(d.unexplained, 0, "leaving nothing not explained")
end

do -- the null walk far busier than pass 3 (5 µs against 20): not the same rate, not named
  local d = slowperiod.decide(experiment(in_time(20000, 5000)))
  t.is(names(d), "", "a null walk 4 times as busy names nothing", names(d))
  t.like(table.concat(d.verdicts, " | "), "does not keep the null walk's rate", "said so")
end

do -- residues 3 and 13 of 16 by page index, one page in three of those, every walk and pass alike
  local function rule() return function(_, page) local r = page % 16 return (r == 3 or r == 13) and page % 3 == 0 end end
  local x = experiment(rule)
  x.huge = experiment(function() return function(_, page) return page % 97 == 5 end end)
  local d = slowperiod.decide(x)
  t.is(d.follows, "index", "planted by page index: they follow the index", table.concat(d.verdicts, " | "))
  t.like(names(d), "period 16 of the page index (positions 3, 13", "named, as THP=always removed the period")
  t.ok(not names(d):find("vCPU", 1, true), "and no vCPU gaps: the null walk (page 0) has none", names(d))
  t.ok(d.classes[1] and d.classes[1].share > 0.8, "covering most slow pages",
    tostring(d.classes[1] and d.classes[1].share))
  x.huge = experiment(rule)
  d = slowperiod.decide(x)
  t.is(d.follows, "index", "with the same period under THP=always: still index")
  t.is(names(d), "", "but nothing is named: no control removed it")
end

do -- a control too thin to show anything removes nothing: THP=always with 6 slow pages, all at the same residue
  local x = experiment(function() return function(_, page) return page % 16 == 3 and (page // 16) % 8 == 0 end end)
  x.huge = experiment(function() return function(_, page) return page % 16 == 3 and page < 16 * 2 end end)
  local d = slowperiod.decide(x)
  t.is(names(d), "", "a THP=always control with too few slow pages to test names no class", names(d))
  t.like(table.concat(d.verdicts, " | "), "too few slow pages", "and says the control could not decide")
end

do -- nothing planted: nothing named
  local d = slowperiod.decide(experiment(function() return function() return false end end))
  t.is(d.total, 0, "no slow pages")
  t.is(names(d), "", "no class")
  t.is(d.follows, nil, "no verdict")
end

do -- random pages in pass 2 only: the second touch, kept 50 ms later
  local function rule(_, pass_no, rep)
    return function(j, page) return pass_no == 2 and (page * 7919 + rep * 104729 + j) % 211 == 0 end
  end
  local d = slowperiod.decide(experiment(rule))
  t.is(d.follows, "second touch", "gone in pass 3: the second touch", table.concat(d.verdicts, " | "))
  t.like(names(d), "the page's second touch", "named")
  t.ok(not names(d):find("vCPU", 1, true), "and no vCPU gaps: pass 3 keeps nothing for the null walk to match",
    names(d))
  t.ok(d.unexplained_share < 0.1, "leaving under 10 % not explained", tostring(d.unexplained_share))
  t.is(d.classes[1] and d.classes[1].agreed, 3, "every repetition agrees")
  -- the same, but the pass 2 that comes later has none either: time since the first touch
  local function fading(case, pass_no, rep)
    if case == "pause" then return function() return false end end
    return rule(case, pass_no, rep)
  end
  d = slowperiod.decide(experiment(fading))
  t.is(names(d), "", "gone 50 ms later too: no second touch named")
  t.like(table.concat(d.verdicts, " | "), "fade with the time since the first touch", "said so")
end

do -- the walk's first store in each 2 MiB, whichever page that is
  local function rule(_, pass_no) return function(_, _, _, entry) return pass_no == 2 and entry end end
  local d = slowperiod.decide(experiment(rule))
  t.like(names(d), "the walk's first store in a 2 MiB region", "backward moved them: the walk's entry",
    table.concat(d.verdicts, " | "))
  -- one in three of the walk's first 16 stores in each 2 MiB, in pass 2 only: the reach is found
  local seen = {}
  local function reach(_, pass_no)
    return function(j, page)
      local region = page // P2M
      seen[region] = seen[region] or j
      return pass_no == 2 and j - seen[region] < 16 and j % 3 == 0
    end
  end
  local x = experiment(function(case, pass_no) seen = {} return reach(case, pass_no) end)
  d = slowperiod.decide(x)
  t.like(names(d), "the walk's first 16 stores in a 2 MiB region", "its reach: 16 stores", names(d))
  -- page 0 of each 2 MiB whichever way: not the entry
  local function page0() return function(_, page) return page % P2M == 0 end end
  x = experiment(page0)
  d = slowperiod.decide(x)
  t.ok(not names(d):find("first store"), "page 0 kept backward: not the walk's entry", names(d))
  t.like(table.concat(d.verdicts, " | "), "page 0 of each 2 MiB is slow whichever way", "said so")
end

do -- the samples array's lines: the j whose sample opens a new line, moving with the shift
  t.is(slowperiod.line_residue(0), 0, "unshifted, sample 0 of every 8 opens a line")
  t.is(slowperiod.line_residue(4), 7, "4 bytes off, sample 7 does")
  local function rule(case)
    local at = slowperiod.line_residue(case == "shift" and 4 or 0)
    return function(j) return j % 8 == at and j % 5 == 0 end
  end
  local d = slowperiod.decide(experiment(rule))
  t.ok(d.kinds.samples, "they moved with the shift", table.concat(d.verdicts, " | "))
  t.like(names(d), "the samples array's cache lines", "named")
end

do -- Poisson's tail
  t.ok(math.abs(slowperiod.poisson_upper(3, 1) - (1 - math.exp(-1) * 2.5)) < 1e-12, "P(X >= 3), mean 1")
  t.is(slowperiod.poisson_upper(0, 5), 1, "P(X >= 0) = 1")
end

t.done()
