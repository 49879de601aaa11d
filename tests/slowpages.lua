-- slowpages.lua at a tiny size: a planted cause is found in the pages it
-- was planted in, the JSON keeps every slow page, bad knobs exit 2.
local t = require "tap"
-- What THP gives depends on machine-wide settings another suite may change:
-- the settings lock for the whole file (tests/lib/sysfs.lua).
assert(require("sysfs").hold_lock())
local json = require "json"
local q = t.quote

local out, code = t.ftrun_run("slowpages.lua PLANT=sometimes")
t.is(code, 2, "PLANT=sometimes exits 2")
t.like(out, "one of none, dontneed, tlb, preempt", "and names the values allowed")
do -- a plant that cannot run on the CPUs allowed is refused before anything runs
  local base = t.tmpdir()
  local dir = base .. "/one-cpu"
  out, code = t.ftrun_run("slowpages.lua EXPERIMENT=period MIB=3 RESULTS=" .. q(dir))
  t.is(code, 2, "EXPERIMENT=period with an odd MIB exits 2 (its 2 MiB regions would not be whole)", out)
  t.like(out, "EXPERIMENT=period with MIB=3: expected an even number of MiB", "naming both knobs")
  out, code = t.run("taskset -c 0 " .. q(t.ftrun) .. " slowpages.lua QUICK=1 PLANT=tlb RESULTS=" .. q(dir))
  t.is(code, 2, "PLANT=tlb on one CPU exits 2", out)
  t.like(out, "PLANT=tlb: needs two CPUs", "naming the knob and what it needs")
  t.ok(not io.open(dir), "and writes nothing")
  os.execute("rm -rf " .. q(base))
end
out, code = t.ftrun_run("slowpages.lua EXPERIMENT=periodic")
t.is(code, 2, "EXPERIMENT=periodic exits 2")
t.like(out, "periodic", "naming the value")
t.like(out, "one of none, period", "and the values allowed")
out, code = t.ftrun_run("slowpages.lua EXPERIMENT=period PLANT=dontneed MIB=16")
t.is(code, 2, "EXPERIMENT=period with a PLANT exits 2")
t.like(out, "EXPERIMENT=period with PLANT=dontneed", "naming both")
out = t.ftrun_run("slowpages.lua --help")
t.like(out, "  PLANT ", "--help lists PLANT")
t.like(out, "  SLOW_NS ", "and SLOW_NS")
t.like(out, "  EXPERIMENT ", "and EXPERIMENT")

if t.run("id -u") ~= "0\n" then
  t.diag("skipped: the traced runs need root")
  t.done()
  return
end

local function run(args)
  local dir = t.tmpdir()
  local o, c = t.ftrun_run("slowpages.lua MIB=16 REPS=1 " .. args .. " RESULTS=" .. q(dir))
  local doc = json.decode(t.read(dir .. "/exp-slowpages-results.json") or "null")
  local map = t.read(dir .. "/exp-slowpages-pass2-thp-never" .. (args:match("PLANT=(%w+)") and "-plant-"
    .. args:match("PLANT=(%w+)") or "") .. "-causes.dat")
  os.execute("rm -rf " .. q(dir))
  return doc, o, c, map
end
local function value(doc, name, pass)
  for _, v in ipairs(doc and doc.values or {}) do
    if v.value == name and (pass == nil or v.pass == pass) then return v end
  end
end

do -- dontneed: the planted pages fault again in pass 2 and are named `fault`
  local doc, o, c, map = run("PLANT=dontneed THP_CASES=never")
  t.like(map, "# fault: page index, ns, repetition", "pass 2's page map has a series of fault pages")
  t.is(c, 0, "PLANT=dontneed runs clean", o)
  t.like(o, "Planted dontneed: recall ", "the table gives recall and precision")
  local recall = value(doc, "recall", 2)
  t.ok(recall and recall.x >= 99, ("at least 99 %% of the planted slow pages are faults: %s"):format(
    recall and recall.x or "none"))
  local precision = value(doc, "precision", 2)
  t.ok(precision and precision.x >= 99, "and the fault pages are the planted ones")
  local rec = doc and doc.reps[1].records[1] or {}
  t.is(rec.pass2_faults, 16 * 256 // 16, "pass 2 took one fault per planted page")
  local pages, planted, fields = rec.slow_pages or {}, 0, true
  for _, p in ipairs(pages) do
    fields = fields and p.pass and p.rep == 1 and math.type(p.index) == "integer" and p.ns > 200
      and type(p.cause) == "string"
    if p.pass == 2 and p.index % 16 == 0 and p.cause == "fault" then planted = planted + 1 end
  end
  t.ok(#pages > 0 and fields, "slow_pages = {{pass, rep, index, ns, cause}, ...} in the JSON")
  t.ok(planted > 0, "planted pages among them, as fault: " .. planted)
end

do -- none: both THP modes, traced and untraced, and tracing's cost
  local doc, o, c = run("")
  t.is(c, 0, "PLANT=none runs clean", o)
  t.like(o, "THP=always, no events", "the untraced cases run beside the traced ones")
  t.ok(value(doc, "trace_cost", 1) and value(doc, "trace_cost", 2), "tracing's cost for both passes")
  local share = value(doc, "slow_share", 1)
  t.ok(share and share.cause and share.pages > 0, "pass 1's slow pages by cause")
end

do -- EXPERIMENT=period: every walk with pass 3, the sets the verdict is made from, and its table
  local dir = t.tmpdir()
  local o, c = t.ftrun_run("slowpages.lua EXPERIMENT=period MIB=16 REPS=1 THP_CASES=never RESULTS=" .. q(dir))
  t.is(c, 0, "EXPERIMENT=period runs clean", o)
  for _, walk in ipairs { "forward", "samples shifted 4 bytes", "backward", "stride 7", "forward, 50 ms after pass 1",
    "one page stored again and again", "the first 32 pages again and again" } do
    t.like(o, "| THP=never, " .. walk .. " |", "the case " .. walk .. " ran")
  end
  t.like(o, "**What pass 2's slow pages follow, THP=never**", "the verdict's table")
  t.like(o, "Not explained: ", "with the share left not explained")
  local doc = json.decode(t.read(dir .. "/exp-slowperiod-results.json") or "null")
  local rec = doc and doc.reps[1].records[1] or {}
  t.ok(rec.walk2 and rec.walk3 and rec.walk2.pages == 16 * 256 and rec.walk2.slow, "each record keeps both passes' sets")
  t.is(rec.pass2_faults, 0, "the walks take no fault of their own (the shifted samples too)")
  local total
  for _, v in ipairs(doc and doc.values or {}) do if v.value == "period_total" then total = v end end
  t.ok(total and total.follows, "period_total carries the verdict")
  local null
  for _, v in ipairs(doc and doc.values or {}) do if v.value == "period_null_rate" then null = v end end
  t.ok(null and null.per_ms and null.pass_ns > 0, "period_null_rate gives the null walk's slow samples per ms")
  t.like(o, "The null walk (page 0 stored into as many times as there are pages", "and the table says it")
  local walked = {}
  for _, r in ipairs(doc and doc.reps or {}) do
    if r.case:find("one page stored again and again", 1, true) then walked = r.records[1] or {} end
  end
  t.ok(walked.walk2 and walked.walk2.pages == 16 * 256 and walked.slow_pages == nil,
    "the null walk: a sample per page of the buffer, no page map of its slow samples")
  local small
  for _, v in ipairs(doc and doc.values or {}) do if v.value == "period_small_rate" then small = v end end
  t.ok(small and small.per_ms and small.pass_ns > 0 and small.pages == 32 and small.kib == 128,
    "period_small_rate gives the small set's slow samples per ms and its size")
  t.like(o, "The small set (pages 0 to 31, 128 KiB, stored into again and again", "and the table says it")
  walked = {}
  for _, r in ipairs(doc and doc.reps or {}) do
    if r.case:find("the first 32 pages again and again", 1, true) then walked = r.records[1] or {} end
  end
  t.ok(walked.walk2 and walked.walk2.pages == 16 * 256 and walked.slow_pages == nil,
    "the small set: a sample per page of the buffer, no page map of its slow samples")
  t.is(walked.pass2_faults, 0, "and no fault of its own")
  os.execute("rm -rf " .. q(dir))
end

do -- cycles.lua CAUSES=1: cycle C's slow pages by cause, in the table, the JSON and a page map
  local dir = t.tmpdir()
  local o, c = t.ftrun_run("cycles.lua MIB=16 REPS=1 CYCLES=C CAUSES=1 RESULTS=" .. q(dir))
  t.is(c, 0, "cycles.lua CAUSES=1 runs clean", o)
  t.like(o, "**C, pass 2**: ", "its table gives cycle C's pass 2 slow pages by cause")
  local ls = io.popen("ls " .. q(dir) .. "/*results.json")
  local path = ls:read("l")
  ls:close()
  local doc = json.decode(path and t.read(path) or "null")
  local rec = doc and doc.reps[1].records[1] or {}
  t.ok(rec.slow_pages and rec.slow_pages[1] and rec.slow_pages[1].cause, "the JSON keeps slow_pages with causes")
  t.is(rec.pass1_faults, 16 * 256, "pass 1 still counts its faults")
  local p = io.popen("ls " .. q(dir) .. "/*pass2-c-causes.svg 2>/dev/null")
  local svg = p:read("l")
  p:close()
  t.ok(svg ~= nil or t.run("command -v gnuplot") == "", "pass 2's page map by cause is drawn")
  os.execute("rm -rf " .. q(dir))
end

t.done()
