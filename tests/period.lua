-- period.lua: slow pages by index modulo powers of two and at the 2 MiB firsts, on made-up
-- samples whose answer is known: a period is named with its positions and share, the smallest
-- modulus that carries it; an even spread names none; the 2 MiB firsts are counted apart.
local t = require "tap"
local period = require "period"

local N = 1 << 16
local function run(f, slow_ns) return period.of(f, N, slow_ns or 200, 512) end

do -- positions 3 and 5 of every 8 (and so of every 16): period 8
  local res = run(function(i) local r = (i - 1) % 8; return (r == 3 or r == 5) and i % 3 == 0 and 500 or 30 end)
  t.is(res.period, 8, "a pattern at 3 and 5 of every 8 is named period 8, not 16 or 32")
  t.is(table.concat(res.positions, ","), "3,5", "with its positions")
  t.ok(math.abs(res.share - 1) < 1e-9, "holding every slow page", tostring(res.share))
  t.like(period.describe(res), "period 8: positions 3, 5 of every 8 hold 100 %", "said in one line")
end

do -- an even spread: no period
  math.randomseed(7)
  local v = {}
  for i = 1, N do v[i] = math.random() < 0.02 and 500 or 30 end
  local res = run(function(i) return v[i] end)
  t.is(res.period, nil, "an even spread names no period")
  t.like(period.describe(res), "no period among the moduli 2 to", "and says which moduli it tested")
end

do -- only the first page of every 2 MiB: counted apart, no period from it
  local res = run(function(i) return (i - 1) % 512 == 0 and 900 or 30 end)
  t.is(res.period, nil, "slow 2 MiB firsts alone make no period")
  t.is(res.first_2m.slow, N // 512, "they are counted at the boundary")
  t.like(period.describe(res), "the first page of a 2 MiB: 128 slow", "and named there")
end

do -- too few slow pages
  local res = run(function(i) return i == 77 and 500 or 30 end)
  t.like(period.describe(res), "too few slow pages (1) to test a period", "too few slow pages to test")
end

t.done()
