-- slowperiod.lua on made-up passes whose answer is known: slow pages planted
-- at a period in time follow time, and the null walk (page 0 stored again
-- and again) at about their rate names the vCPU's own gaps, by rate; a quiet
-- null walk names nothing, one above what is left covers no more than it;
-- the small set (a few pages again and again) at the null walk's rate
-- while pass 3 keeps a higher one names the working set, by rate; a small
-- set at pass 3's rate, or between the two, names nothing; the other
-- classes are the same with the small set as without it;
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
local function order(stride, backward, span) return walkorder(N, stride, backward, span) end

-- One pass: slow(j, page, t_ns, entry) -> true for a slow page (cause: no
-- guest event). The pass costs NS per page, a slow page 600.
local function pass(walk, slow)
  local ix = order(walk.stride or 1, walk.backward, walk.span)
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
  pause = {}, null = { stride = 0 }, small = { span = 64 } }

-- x for slowperiod.decide: rule(case, pass_no, rep) -> slow(j, page, t, entry).
local function experiment(rule, reps)
  local x = { pages_2m = P2M }
  for key, walk in pairs(WALKS) do
    local c = { p2 = {}, p3 = {}, frames = {}, shift = walk.shift, span = walk.span }
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
-- the null walk's every `null_every` ns (nil: none), the small set's every
-- `small_every` ns (default `every`; a function of the repetition, or nil:
-- none).
local function in_time(every, null_every, small_every)
  if small_every == nil then small_every = every end
  return function(case, _, rep)
    local period_ns = every
    if case == "null" then period_ns = null_every end
    if case == "small" then
      if small_every == false then period_ns = nil
      elseif type(small_every) == "function" then period_ns = small_every(rep)
      else period_ns = small_every end
    end
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

-- The share the working set should cover: min(the pages left, (pass 3's
-- rate - the small set's) times the forward walk's pass-2 time) over all
-- pass-2 pages.
local function working_set_share(x, left, total)
  local function rate(sets)
    local n, ns = 0, 0
    for _, list in ipairs(sets) do for _, set in ipairs(list) do n, ns = n + #set.slow, ns + set.ns end end
    return n / ns
  end
  local fwd_ns = 0
  for _, set in ipairs(x.forward.p2) do fwd_ns = fwd_ns + set.ns end
  local p3, small = rate { x.forward.p3 }, rate { x.small.p2, x.small.p3 }
  return math.min(left, math.floor((p3 - small) * fwd_ns + 0.5)) / total
end

local VCPU = "the timed loop's own gaps (the null walk's rate: one page stored again and again, the samples array "
  .. "written as in every walk; covered by rate, not page by page)"
local WORKING_SET = "the working set's size (a 64-page set against the whole buffer: the TLB, the shadow tables and the "
  .. "data caches not told apart; covered by rate, not page by page)"

do -- every 20 µs in the walks, every 100 µs in the null walk and about that in the small set: the vCPU's own
  -- gaps up to the null rate, the working set above the small set's
  local x = experiment(in_time(20000, 100000, function(rep) return rep % 2 == 0 and 75000 or 125000 end), 12)
  local d = slowperiod.decide(x)
  t.is(d.follows, "time", "planted in time: they follow time (the rate classes are shares, not what they follow)",
    table.concat(d.verdicts, " | "))
  t.is(names(d), VCPU .. "; " .. WORKING_SET, "both named, as covered by rate, the working set with its size")
  local gaps = vcpu_share(x, d.total, d.total)
  t.ok(gaps > 0.1 and gaps < 0.3, "the null rate covers a part of pass 2's", tostring(gaps))
  t.ok(d.classes[1] and math.abs(d.classes[1].share - gaps) < 1e-12, "its share: the null rate times pass 2's time",
    ("%s against %s"):format(d.classes[1] and d.classes[1].share, gaps))
  t.is(d.classes[1].agreed .. " of " .. d.classes[1].reps, "12 of 12",
    "its repetitions: those whose pass 3 is not below the null rate")
  local want = working_set_share(x, d.total - d.classes[1].pages, d.total)
  t.ok(want > 0.6 and want < 0.9, "pass 3's excess over the small set covers most of the rest", tostring(want))
  t.ok(d.classes[2] and math.abs(d.classes[2].share - want) < 1e-12,
    "its share: (pass 3's rate - the small set's) times pass 2's time, capped at what the gaps left",
    ("%s against %s"):format(d.classes[2] and d.classes[2].share, want))
  t.is(d.unexplained, d.total - d.classes[1].pages - d.classes[2].pages, "the rest stays not explained")
  t.is(d.classes[2].agreed, 12, "pass 3 above the small set beyond the factor in every repetition")
  t.like(d.classes[2].control, "the small set (pages 0 to 63 again and again, passes 2 and 3)",
    "its control names the small set")
  t.like(d.classes[2].control, "above it in 12 of 12 repetitions, sign test p = 0.00049", "and the sign test")
  t.ok(d.small and d.small.reps and d.small.reps.n == 12 and d.small.reps.lo < d.small.reps.hi,
    "the small set's rate per repetition, for its spread")
  t.ok(d.small.null_pairs == 12 and d.small.null_above == 6, "above the null walk in half the repetitions",
    ("%d of %d"):format(d.small.null_above, d.small.null_pairs))
end

do -- the same with the small set at about 1.4 times the null rate: what it keeps above the null stays not
  -- explained
  local x = experiment(in_time(20000, 140000, function(rep) return rep % 2 == 0 and 80000 or 140000 end), 12)
  local d = slowperiod.decide(x)
  t.is(names(d), VCPU .. "; " .. WORKING_SET, "both named", table.concat(d.verdicts, " | "))
  local gaps = vcpu_share(x, d.total, d.total)
  local ws = working_set_share(x, d.total - d.classes[1].pages, d.total)
  t.ok(d.unexplained > 0 and math.abs(d.unexplained / d.total - (1 - gaps - ws)) < 1e-12,
    "the small set's excess over the null rate left", ("%d of %d"):format(d.unexplained, d.total))
end

do -- pass 3 five times the null rate and no small set: the vCPU's own gaps alone, the rest not explained
  local x = experiment(in_time(20000, 100000, false), 12)
  x.small = nil
  local d = slowperiod.decide(x)
  t.is(names(d), VCPU, "the null rate's share named", table.concat(d.verdicts, " | "))
  t.is(d.unexplained, d.total - d.classes[1].pages, "pass 3's excess over it stays not explained")
end

do -- the small set at pass 3's rate: the working set does not decide them
  local d = slowperiod.decide(experiment(in_time(20000, 100000, 21000), 12))
  t.is(names(d), VCPU, "a small set that keeps pass 3's rate names no working set", table.concat(d.verdicts, " | "))
  t.like(table.concat(d.verdicts, " | "), "the working set did not decide them: the small set keeps pass 3's rate",
    "said so")
  t.is(d.unexplained, d.total - d.classes[1].pages, "all but the null rate's share stays not explained")
  -- between the two (50 µs: 2.5 times below pass 3, twice the null walk's): the working set down to the small
  -- set's rate, the small set's excess over the null walk not explained
  local x = experiment(in_time(20000, 100000, 50000), 12)
  d = slowperiod.decide(x)
  t.is(names(d), VCPU .. "; " .. WORKING_SET, "a small set between the null rate and pass 3's: both named")
  local gaps = vcpu_share(x, d.total, d.total)
  local ws = working_set_share(x, d.total - d.classes[1].pages, d.total)
  t.ok(d.unexplained > 0 and math.abs(d.unexplained / d.total - (1 - gaps - ws)) < 1e-12,
    "the small set's excess over the null walk left", ("%d of %d"):format(d.unexplained, d.total))
  t.like(d.classes[2].control, "the small set's 20.11 per ms over the null walk's 10.11 stays not explained",
    "and said so")
  -- pass 3 above the small set, but too few repetitions for the sign test
  d = slowperiod.decide(experiment(in_time(20000, 100000, 100000), 3))
  t.is(names(d), VCPU, "three repetitions: the sign test cannot name the working set", table.concat(d.verdicts, " | "))
  t.like(table.concat(d.verdicts, " | "), "the forward walk is not above the small set beyond a factor 1.5 by every test",
    "said so")
end

do -- a slow page every 20 µs of pass time in every walk, the null walk's every 25 µs: the vCPU's own gaps
  local x = experiment(in_time(20000, 25000))
  local d = slowperiod.decide(x)
  t.is(d.follows, "time", "planted in time: they follow time",
    table.concat(d.verdicts, " | "))
  t.is(names(d), VCPU, "named, as covered by rate")
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
  t.like(names(d), "the timed loop's own gaps", "named (pass 3 not below it beyond a factor 1.5)",
    table.concat(d.verdicts, " | "))
  t.ok(d.null.expected > d.total, "the null rate times pass 2's time is above the pages left",
    ("%s against %d"):format(d.null.expected, d.total))
  t.is(d.classes[1] and d.classes[1].pages, d.total, "the class covers exactly what is left")
  t.is(d.unexplained, 0, "leaving nothing not explained")
end

do -- pass 2 a quarter of the null rate, pass 3 above it: the null rate is not in the pass it would cover
  local d = slowperiod.decide(experiment(function(case, pass_no)
    local every = case == "forward" and pass_no == 2 and 100000 or case == "null" and 25000 or 20000
    return function(_, _, tn) return (tn + 7000) % every < NS end
  end, 12))
  t.ok(not names(d):find("timed loop", 1, true), "pass 2 below the null walk: the loop's gaps not named", names(d))
end

do -- one burst of slow stores in one repetition of pass 3, the rest quiet below the null rate: not named
  local d = slowperiod.decide(experiment(function(case, pass_no, rep)
    if case == "forward" and pass_no == 3 and rep == 1 then return function(j) return j >= 1000 and j < 1400 end end
    local every = case == "null" and 25000 or 60000
    return function(_, _, tn) return (tn + 7000) % every < NS end
  end, 12))
  t.ok(not names(d):find("timed loop", 1, true), "a burst does not carry the pooled ratio", names(d))
end

do -- a small set quieter than the null walk: the working set's floor is the null rate, and it is said
  local x = experiment(in_time(20000, 50000, 200000), 12)
  local d = slowperiod.decide(x)
  t.is(names(d), VCPU .. "; " .. WORKING_SET, "both named", table.concat(d.verdicts, " | "))
  t.like(d.classes[2] and d.classes[2].control or "", "the small set is quieter than the null walk", "said so")
  t.ok(d.classes[2] and d.classes[2].control:find("(49.43 - 20.11) per ms", 1, true), "the floor is the null rate",
    d.classes[2] and d.classes[2].control)
end

do -- control walks without their passes: no error, said undecided
  local x = experiment(in_time(20000, 25000), 3)
  x.null.p3 = nil
  local ok, d = pcall(slowperiod.decide, x)
  t.ok(ok, "a null walk without pass 3: no error", tostring(d))
  t.like(ok and table.concat(d.verdicts, " | ") or "", "the null walk is missing or has no passes 2 and 3",
    "said so")
end

do -- the null walk far busier than pass 3 (5 µs against 20): pass 3 below it, not named
  local d = slowperiod.decide(experiment(in_time(20000, 5000)))
  t.is(names(d), "", "a null walk 4 times as busy names nothing", names(d))
  t.like(table.concat(d.verdicts, " | "), "the forward walk is below the null walk", "said so")
end

do -- residues 3 and 13 of 16 by page index, one page in three of those, every walk and pass alike
  local function rule() return function(_, page) local r = page % 16 return (r == 3 or r == 13) and page % 3 == 0 end end
  local x = experiment(rule)
  x.huge = experiment(function() return function(_, page) return page % 97 == 5 end end)
  local d = slowperiod.decide(x)
  t.is(d.follows, "index", "planted by page index: they follow the index", table.concat(d.verdicts, " | "))
  t.like(names(d), "period 16 of the page index (positions 3, 13", "named, as THP=always removed the period")
  t.ok(not names(d):find("timed loop", 1, true), "and no loop gaps: the null walk (page 0) has none", names(d))
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
  t.ok(not names(d):find("timed loop", 1, true), "and no loop gaps: pass 3 keeps nothing for the null walk to match",
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

do -- the other classes are the same with the small set as without it
  local rules = {
    index = function() return function(_, page) local r = page % 16 return (r == 3 or r == 13) and page % 3 == 0 end end,
    second = function(_, pass_no, rep)
      return function(j, page) return pass_no == 2 and (page * 7919 + rep * 104729 + j) % 211 == 0 end
    end,
    entry = function(_, pass_no) return function(_, _, _, entry) return pass_no == 2 and entry end end,
    time = in_time(20000, 25000),
  }
  for _, key in ipairs { "index", "second", "entry", "time" } do
    local x = experiment(rules[key])
    x.huge = key == "index" and experiment(function() return function(_, page) return page % 97 == 5 end end) or nil
    local with = slowperiod.decide(x)
    x.small = nil
    local without = slowperiod.decide(x)
    local function pages(d)
      local out = {}
      for _, c in ipairs(d.classes) do out[#out + 1] = c.pages end
      return table.concat(out, ",")
    end
    t.ok(names(with) ~= "" and not names(with):find("working set", 1, true), key .. ": a class named, not the working "
      .. "set", names(with))
    t.is(names(with), names(without), key .. ": the same classes with the small set as without it")
    t.is(pages(with), pages(without), key .. ": covering the same pages")
    t.is(with.unexplained, without.unexplained, key .. ": leaving the same not explained")
    t.ok(without.small == nil and with.small ~= nil, key .. ": the small set's rates only where it walked")
  end
end

do -- the published PVM period run, decided again from its JSON: the same classes, pages and sentences as its raw
  -- file holds (what slowpages.lua decided when it ran)
  local textfile, json = require "textfile", require "json"
  local base = ft.project_dir .. "/results/pvm/exp-slowperiod-"
  local text, raw = textfile.read(base .. "results.json"), textfile.read(base .. "raw.txt")
  if not (text and raw) then
    t.skip("the published period run decided again", "no " .. base .. "results.json and raw.txt")
  else
    local doc, ix = json.decode(text), require("summary").index(raw)
    local function ints(keyed) -- JSON keys are strings: the reaches and frame bits are integers
      local out = {}
      for k, v in pairs(keyed or {}) do out[math.tointeger(tonumber(k))] = v end
      return out
    end
    local function gather(mode)
      local x = { pages_2m = doc.machine.thp_pmd_size // doc.page_size }
      for _, w in ipairs(require("slowwalks").WALKS) do
        local recs = {}
        for _, c in ipairs(doc.reps) do
          if c.case == ("THP=%s, %s"):format(mode, w.label) then recs = c.records end
        end
        if #recs > 0 then
          local c = { p2 = {}, p3 = {}, frames = {}, shift = w.walk.shift, span = w.walk.pages }
          for _, r in ipairs(recs) do
            r.walk2.near, r.walk3.near = ints(r.walk2.near), ints(r.walk3.near)
            c.p2[#c.p2 + 1], c.p3[#c.p3 + 1] = r.walk2, r.walk3
            if r.frames then r.frames.set = ints(r.frames.set); c.frames[#c.frames + 1] = r.frames end
          end
          x[w.key] = c
        end
      end
      return x
    end
    local decided = 0
    for _, total in ipairs(ix.values.period_total or {}) do
      local mode = total.thp
      local x = gather(mode)
      if mode ~= "always" then x.huge = gather("always") end
      local d = slowperiod.decide(x)
      local said = {}
      for _, v in ipairs(d.verdicts) do
        said[#said + 1] = ("The slow pages' period, THP=%s, pass 2 over %d repetitions: %s"):format(mode, d.reps, v)
      end
      local noted = {}
      for _, n in ipairs(ix.meta.note) do
        if n.text:find(("The slow pages' period, THP=%s,"):format(mode), 1, true) then noted[#noted + 1] = n.text end
      end
      t.is(table.concat(said, "\n"), table.concat(noted, "\n"), "THP=" .. mode .. ": the same sentences")
      t.is(d.total .. " " .. (d.follows or "nothing decided"), total.x .. " " .. total.follows,
        "THP=" .. mode .. ": the same slow pages, following the same")
      local classes, published = {}, {}
      for _, c in ipairs(d.classes) do
        classes[#classes + 1] = ("%s | %d | %s | %s | %.9f"):format(c.name, c.pages, c.control, c.agreed or "-",
          100 * c.share)
      end
      for _, v in ipairs(ix.values.period_class or {}) do
        if v.thp == mode then
          published[#published + 1] = ("%s | %s | %s | %s | %.9f"):format(v.class, v.pages, v.control, v.agreed,
            tonumber(v.x))
        end
      end
      t.is(table.concat(classes, "\n"), table.concat(published, "\n"), "THP=" .. mode .. ": the same classes")
      for _, v in ipairs(ix.values.period_unexplained or {}) do
        if v.thp == mode then t.is(d.unexplained, tonumber(v.pages), "THP=" .. mode .. ": the same left unexplained") end
      end
      decided = decided + 1
    end
    t.is(decided, 2, "both THP modes of the published run decided again")
  end
end

do -- Poisson's tail
  t.ok(math.abs(slowperiod.poisson_upper(3, 1) - (1 - math.exp(-1) * 2.5)) < 1e-12, "P(X >= 3), mean 1")
  t.is(slowperiod.poisson_upper(0, 5), 1, "P(X >= 0) = 1")
end

t.done()
