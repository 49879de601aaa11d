-- ft.samples: the statistics of per-page times, and touch_timed filling them.
local t = require "tap"
local ft = require "ft"

do
  local s = ft.samples(10)
  t.is(#s, 10, "length")
  t.is(s[1], -1, "entries start at -1 (written, not zero pages)")
  local values = { 5, 300, 310, 4, 6, 250, 3, 500, 700, 900 }
  for i, v in ipairs(values) do s[i] = v end
  t.is(s:min(), 3, "min")
  t.is(s:max(), 900, "max")
  t.is(s:median(), 250, "median is the nearest-rank 50th percentile")
  t.is(s:percentile(90), 700, "90th percentile")
  t.is(s:percentile(100), 900, "100th percentile")
  t.is(s:percentile(0), 3, "0th percentile")
  t.is(s:count_above(200), 6, "count_above")
  t.is(s:mean_above(200), (300 + 310 + 250 + 500 + 700 + 900) / 6, "mean_above")
  local runs, longest = s:runs_above(200)
  t.is(runs, 3, "runs above 200: [300 310] [250] [500 700 900]")
  t.is(longest, 3, "longest run")
  s[2] = 1
  t.is(s:count_above(200), 5, "statistics follow a changed entry")
  t.is(s:median(), 6, "median follows a changed entry")
  t.errors(function() return s[11] end, "sample index 11 out of range 1..10", "index past the end")
  t.errors(function() s[0] = 1 end, "sample index 0 out of range", "index 0")
  t.errors(function() s:percentile(101) end, "percentile must be within 0 to 100", "percentile 101")
  t.errors(function() s:median(1) end, "too many arguments: got 1, expected 0", "extra argument")
  t.errors(function() s:count_above(1, 2) end, "got 2, expected 1", "count_above takes one argument")
  t.errors(function() return s.mode end, "no method 'mode'", "unknown method")
end

t.errors(function() ft.samples(0) end, "count must be a positive integer, got 0", "samples(0)")
t.errors(function() ft.samples(-1) end, "got -1", "samples(-1)")
t.errors(function() ft.samples(2.5) end, "number has no integer representation", "samples(2.5)")

do -- 262144 samples in C cost milliseconds
  local s = ft.samples(1 << 18)
  for i = 1, #s do s[i] = i % 1000 end
  local t0 = ft.now_ns()
  local m = s:median()
  local runs = s:runs_above(990)
  t.diag(("median of 262144 samples and their runs in %.1f ms"):format((ft.now_ns() - t0) / 1e6))
  t.is(m, 499, "median of 0..999 repeated")
  t.is(runs, 262, "runs above 990 in 0..999 repeated")
end

do -- touch_timed on a fresh mapping: one sample per page
  local b <close> = ft.mmap(4 << 20, { thp = "never" }) -- mTHP set to always elsewhere would fold pages
  local s = ft.samples(b.pages + 100)
  local f0 = ft.faults()
  local ns = b:touch_timed(3, s)
  t.is(ft.faults() - f0, b.pages, "touch_timed pass 1: a fault per page, none for the samples")
  local pass1_median = s:median()
  t.is(#s, b.pages, "the pass sets the samples in use to its page count")
  t.ok(s:min() > 0, "every page was timed")
  t.ok(ns >= s:median() * b.pages // 2, "the pass time covers its pages")
  t.is(b:sum_bytes(), 3 * b.pages, "touch_timed stored the value")
  b:touch_timed(4, s)
  t.diag(("pass 1 median %d ns; pass 2 median %d ns"):format(pass1_median, s:median()))
  t.is(b:sum_bytes(), 4 * b.pages, "second timed pass stored its value")
end

do -- a log-spaced histogram: 2 bins per octave from 2^3 ns, 6 bins
  local s = ft.samples(7)
  for i, v in ipairs { 1, 8, 11, 12, 16, 40, 100000 } do s[i] = v end
  -- edges 8, 11.3, 16, 22.6, 32: below 8 | [8, 11.3) | [11.3, 16) | [16, 22.6) | [22.6, 32) | 32 and up
  local h = s:histogram(2, 3, 6)
  t.is(table.concat(h, ","), "1,2,1,1,0,2", "histogram: counts per log-spaced bin, the ends catching the rest")
  t.errors(function() s:histogram(0, 3, 6) end, "bins per octave", "histogram: a bad bin width is an error")
  t.errors(function() s:histogram(2, 3, 6, 1) end, "too many arguments", "histogram: extra arguments are an error")
  -- counted over the sorted copy, one bin per distinct value: repeated values, and a change after it was sorted
  for i, v in ipairs { 11, 11, 40, 11, 1, 11, 40 } do s[i] = v end
  t.is(s:median(), 11, "histogram: the samples sorted first (for the median)")
  t.is(table.concat(s:histogram(2, 3, 6), ","), "1,4,0,0,0,2", "histogram: repeated values counted once each")
  s[3] = 16
  t.is(table.concat(s:histogram(2, 3, 6), ","), "1,4,0,1,0,1", "histogram: a value changed after a sort is seen")
end

do -- the samples as little-endian int32, clamped to the type's range
  local s = ft.samples(4)
  for i, v in ipairs { 0, 258, 1 << 40, -(1 << 40) } do s[i] = v end
  local p = s:pack_i32()
  t.is(#p, 16, "pack_i32: 4 bytes a sample")
  t.is(table.concat({ string.unpack("<i4<i4<i4<i4", p) }, ",", 1, 4), "0,258,2147483647,-2147483648",
    "pack_i32: values in order, clamped")
  t.errors(function() s:pack_i32(1) end, "too many arguments", "pack_i32: extra arguments are an error")
end

t.done()
