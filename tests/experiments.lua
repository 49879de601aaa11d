-- Every experiment script at a tiny size: it runs clean, its counts are
-- what the kernel must give, and its JSON holds every row exactly as the
-- repetitions it came from give it.
local t = require "tap"
-- What THP gives depends on machine-wide settings another suite may change:
-- the settings lock for the whole file (tests/lib/sysfs.lua).
assert(require("sysfs").hold_lock())
local json = require "json"
local kind = require "kind"
local stats = require "stats"
local summary = require "summary"
local units = require "units"
local q = t.quote

local dir = t.tmpdir()
local PAGE = 4096

-- Every row of the JSON: its statistics recomputed from its values, and its
-- values from the records of its case (the unit's conversion of the
-- record's field, where the column names one), all to the last bit.
local function check_json(name, doc)
  local exact, from_records, rows = true, true, 0
  local records = {}
  for _, c in ipairs(doc.reps) do records[c.case] = c.records end
  for _, row in ipairs(doc.rows) do
    rows = rows + 1
    local finite = {}
    for _, v in ipairs(row.values) do
      if type(v) == "number" then finite[#finite + 1] = v end
    end
    local again = stats.describe(finite)
    for _, k in ipairs { "n", "min", "median", "max", "mean", "cv" } do
      if again[k] ~= row[k] then exact = false; t.diag(("%s %s %s: %s ~= %s"):format(name, row.case, k,
        units.exact(again[k]), units.exact(row[k]))) end
    end
    for i, r in ipairs(records[row.case]) do
      local raw = r[row.column]
      if raw ~= nil and units.convert(row.unit, raw, doc.bytes, doc.pages) ~= row.values[i] then
        from_records = false
      end
    end
  end
  t.ok(rows > 0 and exact, name .. ": every row's statistics recompute exactly from its values in the JSON")
  t.ok(from_records, name .. ": every row's values recompute exactly from the repetitions' records")
end

-- Runs NAME.lua with the knobs; returns its results indexed by case and column.
local function run(name, env)
  local out, code = t.ftrun_run(name .. ".lua", env .. " RESULTS=" .. q(dir) .. " README=/dev/null")
  t.is(code, 0, name .. ".lua runs clean")
  if code ~= 0 then t.diag(out) end
  local text = t.read(dir .. "/exp-" .. name .. "-raw.txt") or ""
  t.like(text, "CHECKSUMS OK", name .. ".lua: every read-back matched")
  local doc = json.decode(t.read(dir .. "/exp-" .. name .. "-results.json") or "null")
  t.ok(doc ~= nil, name .. ".lua: its JSON decodes")
  if doc then check_json(name .. ".lua", doc) end
  local ix = summary.index(text)
  return function(case, column) return (ix.row(case, column) or {}).median end, ix, doc
end

do
  local r = run("thp", "MIB=64 REPS=1")
  local pages = (64 << 20) // PAGE
  t.is(r("THP=never", "pass1_faults"), pages, "thp never: one fault per 4 KiB page")
  t.is(r("THP=never", "huge_bytes"), 0, "thp never: no huge pages")
  t.is(r("THP=never", "fill_faults"), pages, "thp never: the fresh fill faults per page")
  local huge, faults = r("THP=always", "huge_bytes") or 0, r("THP=always", "pass1_faults") or -1
  local expected = huge // (2 << 20) + ((64 << 20) - huge) // PAGE
  t.diag(("thp always: %d bytes in huge pages, %d faults"):format(huge, faults))
  local disturbed = kind.thp_disturbed()
  if disturbed then
    t.skip("thp always: the faults follow the pages granted", disturbed)
  else
    t.ok(faults >= expected and faults <= expected + 4,
      "thp always: the faults follow the pages granted (32 plus a few when all are huge)")
  end
  if huge == 64 << 20 then
    t.ok(faults <= 32 + 4, "thp always on 64 MiB: at most 32 faults plus a few")
  else
    t.ok(huge >= 0 and huge < 64 << 20 and huge % (2 << 20) == 0,
      "thp always: the kernel granted part of 64 MiB in huge pages, a whole number of 2 MiB pages", huge)
  end
end

do
  local r, ix = run("populate", "MIB=8 REPS=1")
  local pages = (8 << 20) // PAGE
  t.is(r("demand faulting", "pass_faults"), pages, "demand: the first pass takes the faults")
  t.is(r("MAP_POPULATE", "map_faults"), pages, "MAP_POPULATE: the mmap call takes them")
  t.is(r("MAP_POPULATE", "pass_faults"), 0, "MAP_POPULATE: the first pass takes none")
  local refused = ix.unsupported["madvise(MADV_POPULATE_WRITE)"]
  if refused then
    t.like(refused, "madvise(populate_write) failed", "MADV_POPULATE_WRITE refused by this kernel: the refusal "
      .. "names the call")
  else
    t.is(r("madvise(MADV_POPULATE_WRITE)", "step_faults"), pages, "MADV_POPULATE_WRITE: the madvise call takes them")
  end
  t.is(r("mlock", "step_faults"), pages, "mlock: the mlock call takes them")
  t.is(r("pre-touch loop", "pass_faults"), 0, "pre-touch: the pass after it takes none")
end

do
  local r, ix, doc = run("zeropage", "MIB=8 REPS=1")
  local pages = (8 << 20) // PAGE
  -- what this kind cannot show is said in the notes and the JSON, and only where it holds
  local said = {}
  for _, l in ipairs(doc and doc.limits or {}) do said[l.topic] = l.text end
  local notes = ""
  for _, n in ipairs(ix.meta.note or {}) do notes = notes .. n.text .. "\n" end
  if kind.zero_page then
    t.is(said.zero_page, nil, "zeropage.lua: with a zero page no limit is said of it")
  else
    t.like(said.zero_page, kind.machine.zero_page_why, "zeropage.lua: its JSON says there is no zero page, and why")
    t.like(notes, said.zero_page or "?", "and so does a note under its table")
  end
  t.is(r("THP=never", "read_faults"), pages, "a read pass faults once per page")
  if kind.zero_page then
    t.is(r("THP=never", "zero_pages"), pages, "and leaves every page on the zero page")
    t.is(r("THP=never", "write_faults"), pages, "the write after it faults again per page")
  else -- the read fault's page is the process's own, placed and writable
    t.skip("and leaves every page on the zero page", kind.NO_ZERO_PAGE)
    t.is(r("THP=never", "zero_pages"), 0, "without a zero page no read page is on it")
    t.skip("the write after it faults again per page", kind.NO_ZERO_PAGE)
    t.is(r("THP=never", "write_faults"), 0, "without a zero page the write after the read takes no fault")
  end
  t.is(r("THP=never", "only_faults"), pages, "a write-only first touch faults once per page")
end

do
  local r, ix = run("scaling", "MIB=8 REPS=1")
  local pages = (8 << 20) // PAGE
  local all = true
  for _, case in ipairs(ix.cases) do
    if r(case, "faults") ~= pages then all = false end
  end
  t.ok(#ix.cases >= 2 and all, "every thread count and shape took one fault per page in total")
end

do
  local r = run("recycle", "MIB=8 REPS=1")
  local pages = (8 << 20) // PAGE
  t.is(r("nothing released (a plain second pass)", "second_faults"), 0, "no release: no faults")
  t.is(r("munmap, then a fresh mmap", "second_faults"), pages, "munmap: faults again per page")
  t.is(r("madvise(MADV_DONTNEED)", "second_faults"), pages, "MADV_DONTNEED: faults again per page")
  local free = r("madvise(MADV_FREE)", "second_faults")
  t.ok(free and free >= 0 and free <= pages, "MADV_FREE: at most a fault per page (none without memory pressure)")
end

do
  local r = run("coldness", "MIB=8 REPS=1 WAITS=0,0.1")
  local pages = (8 << 20) // PAGE
  t.is(r("first mapping of a fresh process", "pass1_faults"), pages, "fresh process: a fault per page")
  t.is(r("released, waited 0.1 s", "pass1_faults"), pages, "after a wait: a fault per page")
  local _, code = t.ftrun_run("coldness.lua", "WAITS=soon RESULTS=" .. q(dir))
  t.is(code, 2, "a bad WAITS exits 2")
end

do -- README's short experiment is scripts/first_touch.lua, and it runs as shown
  local root = t.ftrun:gsub("[^/]+$", "")
  local readme = t.read(root .. "README.md") or ""
  local block = readme:match("## A short experiment.-```lua\n(.-)```")
  t.is(block, t.read(root .. "scripts/first_touch.lua"), "README shows first_touch.lua as it is")
  local out, code = t.ftrun_run("first_touch.lua", "MIB=8 REPS=2 RESULTS=" .. q(dir))
  t.is(code, 0, "first_touch.lua runs")
  t.like(out, "| fresh mmap | ", "and prints its table")
  local row = summary.index(t.read(dir .. "/exp-first_touch-raw.txt") or "").row("fresh mmap", "first_faults")
  t.is(row and row.max, (8 << 20) // PAGE, "its first touch faults once per page")
end

do -- a busy loop on the run's own CPU: every repetition is flagged as noisy, and counted
  local busy = io.popen("taskset -c 0 sh -c 'while :; do :; done' & echo $!")
  local pid = busy:read("l")
  busy:close()
  local out, code = t.run(("taskset -c 0 %s first_touch.lua MIB=128 REPS=3 RESULTS=%s 2>&1"):format(q(t.ftrun), q(dir)))
  os.execute("kill " .. pid)
  t.is(code, 0, "a run beside a busy loop completes")
  t.like(out, "(noisy)", "its progress marks the disturbed repetitions")
  local doc = json.decode(t.read(dir .. "/exp-first_touch-results.json") or "null") or { reps = { {} } }
  local flagged, foreign = 0, {}
  for _, r in ipairs(doc.reps[1].records or {}) do
    if r.noise.flagged then flagged = flagged + 1 end
    foreign[#foreign + 1] = units.cell(r.noise.foreign_pct, "%")
  end
  t.ok(flagged >= 2, "the JSON flags the repetitions (foreign CPU %: " .. table.concat(foreign, ", ") .. ")")
  t.like(out, "of 3 repetitions ran while the host stole more than", "and the summary warns")
  t.like(out, "| fresh mmap | ", "the table still comes")
end

do -- a column that is not finite in one repetition; a case name a RESULT line cannot hold
  local path = dir .. "/odd.lua"
  t.write(path, [[
local h = require("harness").start({ script = "odd", about = "odd values", mib = 1, reps = 3 }, { ... })
h:case(os.getenv("ODD_CASE") or "odd", function(r, rep) r.x = rep == 2 and 1 / 0 or rep end)
h:columns { { "x", "x", "count" } }
h:finish()
]])
  local out, code = t.ftrun_run(q(path), "RESULTS=" .. q(dir .. "/odd"))
  t.is(code, 0, "a run with an infinite value in one repetition completes")
  local doc = json.decode(t.read(dir .. "/odd/exp-odd-results.json") or "null") or { rows = { {} } }
  local row = doc.rows[1]
  t.ok(row.values and row.values[2] == json.null and row.values[3] == 3, "the JSON keeps it as null in its place")
  t.ok(row.nonfinite and row.nonfinite[1].rep == 2 and row.nonfinite[1].value == "inf", "with the reason beside it")
  t.ok(row.n == 2 and row.median == 2.0, "and the statistics are the finite values'")
  out, code = t.ftrun_run(q(path), 'ODD_CASE=\'a"b\' RESULTS=' .. q(dir .. "/odd2"))
  t.is(code, 1, "a case name with a double quote is an error")
  t.like(out, "expected a non-empty string without a double quote", "named when it is declared")
  t.ok(not out:find("rep 1/", 1, true), "before any repetition runs")
end

do -- case params go into the JSON; h:ratio takes a ratio within each repetition; misuse is named
  local path = dir .. "/params.lua"
  t.write(path, [[
local h = require("harness").start({ script = "params", about = "params and ratios", mib = 1, reps = 3 }, { ... })
h:case("slow", function(r, rep) r.t = 10 * rep end, { params = { speed = "slow", n = 1 } })
h:case("fast", function(r, rep) r.t = rep end, { params = { speed = "fast", n = 2 } })
if os.getenv("BAD") == "param" then h:case("bad", function() end, { params = { f = print } }) end
if os.getenv("BAD") == "option" then h:case("bad", function() end, { param = {} }) end
h:columns { { "t", "time", "ns" }, { "absent", "never recorded", "ns", optional = true } }
h:run()
local d = h:ratio("slow_over_fast", { "slow", "t" }, { "fast", "t" }, { minima = true })
assert(h:ratio("none", { "slow", "absent" }, { "fast", "t" }) == nil) -- a row not recorded: no ratio
local sum = h:ratio("sum", { { "slow", "t" }, { "fast", "t" } }, { "fast", "t" }, { time = true })
print(("ratio %s %d %s"):format(d.median, d.n, sum.median))
h:finish()
]])
  local out, code = t.ftrun_run(q(path), "RESULTS=" .. q(dir .. "/params"))
  t.is(code, 0, "a script with params and ratios runs")
  t.like(out, "ratio 10.0 3 11.0", "h:ratio: each repetition's ratio (10 every time), and a sum of times")
  local doc = json.decode(t.read(dir .. "/params/exp-params-results.json") or "null") or { reps = {}, values = {} }
  t.ok(doc.reps[1] and doc.reps[1].params.speed == "slow" and doc.reps[2].params.n == 2, "the JSON keeps each case's params")
  local v
  for _, x in ipairs(doc.values) do if x.value == "slow_over_fast" then v = x end end
  t.ok(v and v.x == 10 and v.of_minima == 10 and v.n == 3, "the ratio is a value with its minima's ratio beside it")
  out, code = t.ftrun_run(q(path), "BAD=param RESULTS=" .. q(dir .. "/params"))
  t.is(code, 1, "a param that is a function is an error")
  t.like(out, "expected a name and a string, number or boolean", "named when the case is declared")
  out, code = t.ftrun_run(q(path), "BAD=option RESULTS=" .. q(dir .. "/params"))
  t.is(code, 1, "an unknown case option is an error")
  t.like(out, "unknown option 'param'", "and names it")
end

do -- CLOCK_GHZ is a knob like the others: an argument, or the environment; a bad value exits 2
  local out, code = t.ftrun_run("first_touch.lua MIB=4 REPS=1 CLOCK_GHZ=2.5 RESULTS=" .. q(dir .. "/ghz"))
  t.is(code, 0, "CLOCK_GHZ=2.5 as an argument runs")
  local ix = summary.index(t.read(dir .. "/ghz/exp-first_touch-raw.txt") or "")
  local v = ix.value("clock_ghz") or {}
  t.ok(v.x == 2.5 and v.source == "CLOCK_GHZ", "and is the clock rate the run uses, named as given")
  out, code = t.ftrun_run("first_touch.lua MIB=4 REPS=1 RESULTS=" .. q(dir .. "/ghz2"), "CLOCK_GHZ=3")
  ix = summary.index(t.read(dir .. "/ghz2/exp-first_touch-raw.txt") or "")
  t.ok(code == 0 and (ix.value("clock_ghz") or {}).x == 3, "CLOCK_GHZ=3 in the environment likewise")
  for _, bad in ipairs { "fast", "0", "100", "-1" } do
    out, code = t.ftrun_run("first_touch.lua CLOCK_GHZ=" .. bad .. " RESULTS=" .. q(dir .. "/ghz3"))
    t.is(code, 2, "CLOCK_GHZ=" .. bad .. " exits 2")
    t.like(out, "CLOCK_GHZ=" .. bad .. ": expected a clock rate in GHz", "and says what is expected")
  end
end

do -- the map of knobs only some scripts take is derived from the scripts: every such knob a
  -- script's --help lists is in the map under that script
  local root = t.ftrun:gsub("[^/]+$", "")
  local function listed(script)
    local out = t.ftrun_run(script .. " --help")
    local names = {}
    for name in out:gmatch("\n  ([%u_][%u%d_]*) ") do names[name] = true end
    return names
  end
  local common, elsewhere, missing = listed("first_touch.lua"), require("knobs").elsewhere, {}
  local p = io.popen("ls " .. q(root .. "scripts"))
  local checked = 0
  for file in p:lines() do
    if file:match("%.lua$") and file ~= "compare.lua" and file ~= "plot.lua" then
      checked = checked + 1
      for name in pairs(listed(file)) do
        local takes = false
        for _, s in ipairs(elsewhere[name] or {}) do takes = takes or s == file end
        if not common[name] and not takes then missing[#missing + 1] = file .. ": " .. name end
      end
    end
  end
  p:close()
  t.ok(checked >= 12, ("every experiment's --help read (%d)"):format(checked))
  t.is(#missing, 0, "every knob a script takes beyond the common ones is in the derived map")
  for _, m in ipairs(missing) do t.diag("not in the map: " .. m) end
end

do -- a new experiment needs no rebuild: a script written here runs as is
  local path = dir .. "/mine.lua"
  local f = assert(io.open(path, "w"))
  f:write([[
local ft = require "ft"
local measure = require "measure"
local b <close> = ft.mmap(4 << 20)
local ns, faults = measure.pass(b, "touch", 1)
-- a first call may grow the Lua stack (a few faults more under ASan)
print(faults >= b.pages and faults <= b.pages + 16 and "ok" or "wrong: " .. faults)
]])
  f:close()
  local out, code = t.ftrun_run(q(path))
  t.is(code, 0, "a script outside the tree runs")
  t.like(out, "ok", "and reaches scripts/lib/ and ft")
end

os.execute("rm -rf " .. q(dir))
t.done()
