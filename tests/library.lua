-- The Lua library under scripts/lib/ on its own: statistics against values
-- worked out by hand, the one number formatter, RESULT lines, the summary
-- made from a raw file, every kind of knob, and JSON round trips of every
-- shape a script writes.
local t = require "tap"
local cpulist = require "cpulist"
local json = require "json"
local knobs = require "knobs"
local pagesizes = require "pagesizes"
local report = require "report"
local reports = require "reports"
local stages = require "stages"
local stats = require "stats"
local summary = require "summary"
local units = require "units"

do -- the kernel's CPU and node lists
  local list, set = cpulist.parse("0-2,5,7-8")
  t.is(table.concat(list, " "), "0 1 2 5 7 8", "ranges and single numbers, in order")
  t.ok(set[0] and set[2] and set[5] and set[8] and not set[3] and not set[6], "and as a set")
  t.is(#cpulist.parse("3"), 1, "one CPU")
  t.is(#cpulist.parse(nil) + #cpulist.parse(""), 0, "nil (no such file) and \"\" are empty")
end

do -- statistics
  t.is(stats.min { 3, 1, 2 }, 1, "min")
  t.is(stats.max { 3, 1, 2 }, 3, "max")
  t.is(stats.median { 5, 1, 3 }, 3, "median of an odd count is the middle value")
  t.is(stats.median { 4, 1, 3, 2 }, 2.5, "median of an even count is the mean of the middle two")
  t.is(stats.median { 7 }, 7, "median of one value")
  t.is(stats.sum { 1, 2, 3.5 }, 6.5, "sum")
  t.is(stats.mean { 1, 2, 3, 4 }, 2.5, "mean")
  -- 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7, sd 2.138..., cv 42.76 %
  t.ok(math.abs(stats.cv { 2, 4, 4, 4, 5, 5, 7, 9 } - 100 * math.sqrt(32 / 7) / 5) < 1e-12, "cv: sample sd over mean, in %")
  t.is(stats.cv { 7 }, 0, "cv of one value is 0")
  t.is(stats.cv { 0, 0 }, 0, "cv of zeros is 0, not a division by zero")
  local xs = { 15, 20, 35, 40, 50 } -- nearest rank: ceil(p/100 * 5)
  t.is(stats.percentile(xs, 5), 15, "p5 is rank 1")
  t.is(stats.percentile(xs, 30), 20, "p30 is rank 2")
  t.is(stats.percentile(xs, 40), 20, "p40 is rank 2 exactly")
  t.is(stats.percentile(xs, 50), 35, "p50 is rank 3")
  t.is(stats.percentile(xs, 100), 50, "p100 is the max")
  t.is(stats.percentile(xs, 0), 15, "p0 is the min")
  local d = stats.describe { 1, 2, 3, 4 }
  t.ok(d.n == 4 and d.min == 1 and d.median == 2.5 and d.max == 4 and d.mean == 2.5, "describe")
  t.is(stats.map({ { a = 1 }, { a = 2 } }, "a")[2], 2, "map by field name")
end

do -- numbers as text
  for _, x in ipairs { 1184917.3, 1 / 3, 0.1, 2.0, -3, 1 << 62, 6.02e23, 5e-324, 1e16 } do
    local s = units.exact(x)
    local back = units.parse(s)
    t.ok(back == x and math.type(back) == math.type(x), ("exact %s reads back as the same %s"):format(s, math.type(x)))
  end
  t.is(units.exact(1184917.3), "1184917.3", "the shortest text that round-trips, not 1.18492e+06")
  t.is(units.exact(1 / 0), "inf", "infinity is inf")
  t.is(units.parse("inf"), math.huge, "and reads back")
  t.ok(units.parse("nan") ~= units.parse("nan"), "nan reads back as nan")
  t.is(units.parse("12abc"), nil, "text that is no number is nil")
  -- one precision per unit, whatever the magnitude
  t.is(units.cell(928, "ns/page"), "928.0", "ns/page: one decimal, also for a whole number")
  t.is(units.cell(922.94, "ns/page"), "922.9", "ns/page: one decimal")
  t.is(units.cell(16.836, "ns/page"), "16.8", "ns/page: one decimal, small")
  t.is(units.cell(9.7012, "GB/s"), "9.70", "GB/s: two decimals")
  t.is(units.cell(262144, "faults"), "262144", "faults: an integer")
  t.is(units.cell(262143.5, "faults"), "262143.5", "faults: a median between two")
  t.is(units.cell(2.0883, "GHz"), "2.088", "GHz: three decimals")
  t.is(units.cell(nil, "ns"), "–", "no value is a dash")
  t.is(units.cell(1 / 0, "ratio"), "inf", "infinity is said")
  t.errors(function() units.cell(1, "furlongs") end, "unknown unit 'furlongs'", "an unknown unit is an error")
  t.is(units.convert("ns/page", 4096, 1 << 20, 256), 16.0, "ns/page: ns over pages")
  t.is(units.convert("GB/s", 1000, 2000, 1), 2.0, "GB/s: bytes over ns")
  t.is(units.convert("us", 1500, 0, 0), 1.5, "us: ns over 1000")
  t.is(units.shown("ns/page"), "median", "tables show the median of a time")
  t.is(units.shown("GB/s"), "median", "and of a throughput")
end

do -- RESULT lines
  local fields = { { "case", "munmap, then a fresh mmap" }, { "column", "pass1" }, { "x", 1 / 3 }, { "n", 15 },
    { "big", 1 << 62 }, { "flag", true }, { "word", "THP=never" }, { "numeric_text", "12" }, { "empty", "" },
    { "inf", 1 / 0 } }
  local line = report.line(fields)
  local back = report.parse(line)
  local same = true
  for i, kv in ipairs(fields) do
    if back[kv[1]] ~= kv[2] or math.type(back[kv[1]]) ~= math.type(kv[2]) or back._keys[i] ~= kv[1] then
      same = false
      t.diag(("%s: %s came back as %s"):format(kv[1], tostring(kv[2]), tostring(back[kv[1]])))
    end
  end
  t.ok(same, "a RESULT line reads back to the same values, types and order")
  t.is(report.line { { "a", 1 }, { "b", nil }, { "c", 2 } }, "RESULT a=1 c=2", "a nil value is left out")
  t.is(report.line { { "WAITS", { 0, 0.1, 2 } } }, "RESULT WAITS=0,0.1,2", "a list knob as it was written, not a pointer")
  t.errors(function() report.line { { "a", 'say "hi"' } } end, "may not hold a double quote", "a quote is refused")
  t.is(report.parse("not a result"), nil, "other lines are not results")
end

do -- the summary, from a raw file alone
  local raw = table.concat({
    "# any header line",
    'RESULT meta=title text="ftrun demo.lua: a demo; exp-demo, 1 MiB, 3 reps"',
    'RESULT meta=date text="2026-12-03 10:00"',
    'RESULT meta=machine text="a CPU (2 CPUs)"',
    'RESULT meta=column name=pass label="first pass" unit=ns/page shown=min',
    'RESULT meta=column name=pass label="first pass" unit=ns/page shown=median',
    'RESULT meta=column name=pass_faults label=faults unit=faults shown=median',
    'RESULT meta=column name=bw label=fill unit=GB/s shown=median',
    'RESULT meta=note text="A note under the table."',
    'RESULT case="not here" unsupported="refused (EINVAL)"',
    'RESULT meta=warning text="Something to know."',
    'RESULT case=fast column=pass label="first pass" unit=ns/page n=3 min=10.26 median=11 lo=10.26 hi=12 '
      .. 'ci_ranks=1,3 ci_coverage=0.75 max=12 mean=11.1 cv=8',
    'RESULT case=fast column=pass_faults label=faults unit=faults n=3 min=256 median=256 lo=256 hi=256 max=256 '
      .. 'mean=256.0 cv=0',
    'RESULT case=fast column=bw label=fill unit=GB/s n=3 min=1.5 median=2.126 lo=1.5 hi=3 max=3 mean=2.2 cv=30',
    'RESULT case=slow column=pass label="first pass" unit=ns/page n=3 min=2000 median=2100.06 lo=2000 hi=2200 '
      .. 'max=2200 mean=2100 cv=4',
    'RESULT case=slow column=pass_faults label=faults unit=faults n=2 min=1 median=1.5 lo=1 hi=2 max=2 mean=1.5 cv=47',
    "RESULT value=noisy unit=count x=1 case=fast of=3",
    "RESULT value=own_time unit=% x=12.5 wall_ms=2000 work_ms=1750",
    "CHECKSUMS OK: 6 read-backs matched the values written",
  }, "\n") .. "\n"
  local want = table.concat({
    "**ftrun demo.lua: a demo; exp-demo, 1 MiB, 3 reps**, finished 2026-12-03 10:00 UTC  ",
    "a CPU (2 CPUs).",
    "",
    "| case | first pass ns/page (min) | first pass ns/page (median [lo, hi]) | faults (median [lo, hi]) "
      .. "| fill GB/s (median [lo, hi]) | noisy reps |",
    "|---|---|---|---|---|---|",
    "| not here | not supported: refused (EINVAL) |  |  |  | – |",
    "| fast | 10.3 | 11.0 [10.3, 12.0] | 256 | 2.13 [1.50, 3.00] | 1 of 3 |",
    "| slow | 2000.0 | 2100.1 [2000.0, 2200.0] | 1.5 [1, 2] | – | – |",
    "",
    "A note under the table.",
    "",
    "Intervals: [lo, hi] is a distribution-free confidence interval of the median: the values of ranks 1 and 3 "
      .. "of the 3 sorted repetitions, which cover the median with probability 75.00 % (95 % needs at least 6 "
      .. "repetitions).",
    "",
    "**Warning:** Something to know.",
    "",
    "Wall time 2.00 s: 1.75 s in the timed windows, the map and release calls and the read-backs; "
      .. "12.50 % in the runner itself.",
    "",
    "CHECKSUMS OK: 6 read-backs matched the values written.",
  }, "\n") .. "\n"
  local got = summary.table(raw)
  t.is(got, want, "summary.table: a raw file in, the expected table out")
  local ix = summary.index(raw)
  t.is(ix.row("slow", "pass").median, 2100.06, "index: a row by case and column")
  t.is(ix.value("own_time").work_ms, 1750, "index: a value by name")
  t.is(#ix.cases, 3, "index: the cases in order, unsupported ones too")
end

do -- the confidence interval of the median and the Mann-Whitney U test, against hand values
  local xs = {}
  for i = 1, 15 do xs[i] = 16 - i end
  local lo, hi, l, u, coverage = stats.median_ci(xs)
  t.ok(lo == 4 and hi == 12 and l == 4 and u == 12, "n = 15: the 4th and 12th values (the binomial table's ranks)")
  t.is(coverage, 1 - 2 * 576 / 32768, "covering 1 - 2 P(B <= 3) = 96.48 %")
  lo, hi, l, u = stats.median_ci { 5, 1, 3, 2, 4, 6 }
  t.ok(lo == 1 and hi == 6 and l == 1 and u == 6, "n = 6: min and max, 96.9 %")
  local _, _, _, _, c5 = stats.median_ci { 1, 2, 3, 4, 5 }
  t.is(c5, 0.9375, "n = 5: [min, max] covers only 93.75 %, and says so")
  lo, hi = stats.median_ci { 7 }
  t.ok(lo == 7 and hi == 7, "n = 1: the value itself")
  local p, U, how = stats.mann_whitney({ 1, 2, 3 }, { 4, 5, 6 })
  t.ok(p == 0.1 and U == 0 and how == "exact", "3 against 3, apart: U = 0, exact p = 2/20")
  p = stats.mann_whitney({ 1, 2, 3, 4, 5 }, { 6, 7, 8, 9, 10 })
  t.ok(math.abs(p - 2 / 252) < 1e-15, "5 against 5, apart: p = 2/252")
  p = stats.mann_whitney({ 1, 3, 5 }, { 2, 4, 6 })
  t.ok(math.abs(p - 0.7) < 1e-15, "interleaved: U = 3, P(U <= 3) = 7/20, p = 0.7")
  p, U, how = stats.mann_whitney({ 1, 2, 2, 3 }, { 2, 3, 4, 5 })
  -- midranks 1, 3, 3, 5.5 -> U = 2.5; ties 3 and 2: var = 16/12 (9 - 30/56); z = 5 / sqrt(var)
  local z = 5 / math.sqrt(16 / 12 * (9 - 30 / 56))
  t.ok(U == 2.5 and how == "normal" and math.abs(p - 2 * stats.upper_tail(z)) < 1e-12, "ties: the normal "
    .. "approximation with the tie correction (p = 0.1367)")
  t.ok(math.abs(p - 0.1367) < 0.0001, "which is R's wilcox.test value for these samples")
  t.is(stats.mann_whitney({ 1 }, { 2 }), 1, "n = 1 each: p = 1")
  t.is(stats.mann_whitney({ 3, 3, 3 }, { 3, 3, 3 }), 1.0, "identical samples: p = 1")
  t.ok(math.abs(stats.upper_tail(1.959964) - 0.025) < 1e-6, "the normal tail at 1.96 is 2.5 %")
end

do -- knobs: every kind, good and bad
  local P = knobs.parsers
  local function bad(kind, text, spec, part)
    local v, expected = P[kind](text, spec or {})
    t.ok(v == nil and expected and expected:find(part, 1, true), ("%s %q is refused: %s"):format(kind, text,
      tostring(expected)))
  end
  t.is(P.count("15", {}), 15, "count")
  bad("count", "0", nil, "a positive integer")
  bad("count", "-1", nil, "a positive integer")
  bad("count", "1.5", nil, "a positive integer")
  bad("count", "0x10", nil, "a positive integer")
  bad("count", "9", { max = 8 }, "up to 8")
  bad("count", "99999999999999999999", nil, "a positive integer")
  t.is(P.count_or_auto("auto", {}), "auto", "count_or_auto: auto")
  t.is(P.count_or_auto("7", {}), 7, "count_or_auto: a count")
  bad("count_or_auto", "soon", nil, "or auto")
  t.is(P.choice("never", { choices = { "never", "always" } }), "never", "choice")
  bad("choice", "maybe", { choices = { "never", "always" } }, "one of never, always")
  t.is(P.flag("1"), true, "flag 1")
  t.is(P.flag("0"), false, "flag 0")
  bad("flag", "yes", nil, "0 or 1")
  t.is(P.letters("AD", { letters = "ABCD" }), "AD", "letters")
  bad("letters", "AA", { letters = "ABCD" }, "each once")
  bad("letters", "AZ", { letters = "ABCD" }, "a subset of the letters ABCD")
  bad("letters", "", { letters = "ABCD" }, "a non-empty subset")
  local s = P.seconds("0,0.5,10")
  t.ok(s and s[1] == 0 and s[2] == 0.5 and s[3] == 10, "seconds: a list")
  bad("seconds", "0,,1", nil, "seconds from 0 to 600")
  bad("seconds", "601", nil, "seconds from 0 to 600")
  bad("seconds", "-1", nil, "seconds from 0 to 600")
  bad("seconds", "soon", nil, "seconds from 0 to 600")
  local read = knobs.read("x.lua", { { name = "WAITS_TEST", kind = "seconds", default = "0,0.5", desc = "d" } }, {})
  t.ok(type(read.WAITS_TEST) == "table" and read.WAITS_TEST[2] == 0.5, "a list knob's default is read as a list")
  t.is(P.path("/tmp/x"), "/tmp/x", "path")
  bad("path", "", nil, "a non-empty path")
  bad("path", "a\0b", nil, "a non-empty path")
end

do -- JSON: every shape a script writes comes back
  local doc = {
    script = "cycles.lua", knobs = { MIB = 1024, THP = "default", QUICK = false, WAITS = { 0, 0.5 } },
    rows = { { case = "A", column = "pass1", n = 3, min = 1184917.3, median = 1 / 3, values = { 1, 2.5, 1 << 62 } } },
    reps = { { case = "A", records = { { pass1 = 123456789, pass1_faults = 262144 } } } },
    nodes = { [0] = 5, [1] = 2, absent = 1 }, nested = { n = { [0] = 7 } }, empty = {}, text = 'quote " and \\ and /',
  }
  local back = assert(json.decode(json.encode(doc)))
  t.is(back.rows[1].min, 1184917.3, "a float keeps every digit")
  t.is(back.rows[1].median, 1 / 3, "1/3 keeps every digit")
  t.is(back.rows[1].values[3], 1 << 62, "an integer beyond 2^53 stays exact on the way out")
  t.is(back.reps[1].records[1].pass1, 123456789, "integers come back as integers")
  t.is(back.knobs.QUICK, false, "booleans")
  t.is(back.knobs.WAITS[2], 0.5, "lists in objects")
  t.is(back.nodes["0"], 5, "{[0]=5, [1]=2, absent=1} keeps key 0")
  t.is(back.nodes["1"], 2, "and key 1")
  t.is(back.nodes.absent, 1, "and its named key")
  t.is(back.nested.n["0"], 7, "{n = {[0] = 7}} keeps its value")
  t.is(back.text, doc.text, "strings with quotes and slashes")
  local inf = assert(json.decode(json.encode { ratio = 1 / 0, nan = 0 / 0 }))
  t.is(inf.ratio, json.null, "infinity is written as null")
  t.is(inf.ratio_nonfinite, "inf", "with the reason beside it")
  t.is(inf.nan_nonfinite, "nan", "nan likewise")
  t.ok(not json.encode({ x = 1 / 0 }):find("inf[^\"]"), "never a bare inf token")
  t.errors(function() json.encode { 1, 0 / 0 } end, "nan in a list", "a non-finite value in a list is an error")
  local cyclic = {}
  cyclic.self = cyclic
  t.errors(function() json.encode(cyclic) end, "contains itself", "a cyclic table is an error")
  t.errors(function() json.encode { f = print } end, "a function cannot be written", "a function is an error")
  local none, err = json.decode("{oops")
  t.ok(none == nil and err ~= nil, "text that is not JSON: nil and a message")
  none, err = json.decode("null")
  t.ok(none == nil and err ~= nil, "JSON's null at the top: nil and a message, never a userdata")
  -- numbers that are whole come back as integers, at any depth; strings that look like numbers stay strings
  local kinds = json.decode('{"a":3,"b":[2.0,2.5,1e300],"c":"3","d":{"e":[[-0.0]]}}')
  t.is(math.type(kinds.a) .. " " .. math.type(kinds.b[1]) .. " " .. math.type(kinds.b[2]) .. " "
    .. math.type(kinds.b[3]) .. " " .. math.type(kinds.d.e[1][1]), "integer integer float float integer",
    "whole numbers as integers at any depth; 2.5 and 1e300 (beyond 2^63) stay floats")
  t.is(kinds.c, "3", "a string of digits stays a string")
  t.is(json.decode('"3"'), "3", "at the top too")
  t.is(math.type(json.decode("3")), "integer", "a whole number at the top is an integer")
end

do -- the weighted line fit, page sizes, the stage classifier, report modules
  local a, b = stats.fit_line({ 1, 2, 4 }, { 5, 7, 11 })
  t.ok(math.abs(a - 3) < 1e-12 and math.abs(b - 2) < 1e-12, "fit_line: y = 3 + 2x through exact points")
  a, b = stats.fit_line({ 0, 1, 2 }, { 0, 10, 2 }, { 1, 1e-12, 1 })
  t.ok(math.abs(a) < 1e-6 and math.abs(b - 1) < 1e-6, "fit_line: a point of weight ~0 does not pull the line")
  t.is(stats.fit_line({ 3, 3 }, { 1, 2 }), nil, "fit_line: one distinct x fixes no line")
  t.is(pagesizes.named(16384), "16 KiB", "named: 16 KiB")
  t.is(pagesizes.named(2 << 20), "2 MiB", "named: 2 MiB")
  t.is(pagesizes.named(1 << 30), "1 GiB", "named: 1 GiB")
  t.ok(pagesizes.obtained(1 << 20, 16384, 64, 64), "obtained: a fault and a counted folio per 16 KiB")
  t.ok(not pagesizes.obtained(1 << 20, 16384, 256, 0), "not obtained: a fault per 4 KiB")
  t.ok(not pagesizes.obtained(4 << 20, 2 << 20, 2, nil, 2 << 20), "not obtained: half the bytes in PMD pages")
  local page, faults = pagesizes.page_got { bytes = 4 << 20, page = 4096, pmd = 2 << 20, thp_bytes = 2 << 20 }
  t.ok(page == nil and faults == 1 + 512, "page_got: half in a PMD page is mixed, 1 + 512 faults predicted")
  local fixed, per_byte, points = pagesizes.fit({ { "4K", 4096, 1000 + 4096 }, { "2M", 2 << 20, 1000 + (2 << 20) },
    { "1G", 1 << 30, 1 } }, 2 << 20)
  t.ok(math.abs(fixed - 1000) < 1e-6 and math.abs(per_byte - 1) < 1e-9, "pagesizes.fit: fixed + per byte")
  t.ok(points[3].in_fit == false and points[1].in_fit, "pagesizes.fit: a size above the limit is shown, not fitted")
  local r = {}
  stages.tally(r, { samples = 4, kernel = 3, user = 1, lost = 0, dropped = 0, share = 1,
    symbols = { { name = "clear_page_erms", kernel = true }, { name = "_raw_spin_unlock_irqrestore", kernel = true },
      { name = "mystery_fn", kernel = true }, { name = "main", kernel = false } },
    chains = { { stack = "main;asm_exc_page_fault;clear_page_erms", samples = 1 },
      { stack = "main;folio_add_lru;_raw_spin_unlock_irqrestore", samples = 1 },
      { stack = "main;mystery_fn", samples = 1 }, { stack = "main", samples = 1 } } })
  t.is(r.stages.zero, 1, "stages: clear_page is zeroing")
  t.is(r.stages.memcg, 1, "stages: an irq-restoring unlock counts toward its caller's stage")
  t.is(r.stages.ungrouped, 1, "stages: what no rule names is ungrouped")
  t.is(r.stages.user, 1, "stages: a user leaf is user")
  local pooled = stages.pool { r, r }
  t.is(pooled.total, 8, "stages.pool: the records' chained samples added")
  t.is(pooled.kernel_symbols[1].samples, 2, "stages.pool: kernel symbols by samples")
  t.is(next(reports.of("no_such_script")), nil, "a script without a report module gets none")
  t.is(type(reports.of("cycles.lua").table), "function", "cycles.lua's report module is found by name")
end

do -- a text sealed by its own hash: the seal holds, an edit or a missing seal shows
  local textfile = require "textfile"
  t.is(textfile.sha256("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256 of abc")
  local sealed = textfile.seal("line one\nline two\n")
  t.is(textfile.sealed(sealed), "line one\nline two\n", "a sealed text gives its lines back")
  local _, why = textfile.sealed((sealed:gsub("two", "2", 1)))
  t.like(why or "", "no longer give the sha256", "an edited line breaks the seal")
  _, why = textfile.sealed("line one\n")
  t.like(why or "", "no seal", "no seal: said so")
end

t.done()
