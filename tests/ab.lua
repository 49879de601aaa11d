-- AB="A knobs | B knobs": both sides in every repetition in ABBA order, each
-- side's knobs set and the run's own restored, both sides and the paired
-- change reported, compare.lua's paired table and gate; knobs that cannot
-- change inside a run refused before anything runs.
local t = require "tap"
local kind = require "kind"
local json = require "json"
local q = t.quote

local dir = t.tmpdir()
local script = dir .. "/order.lua"
t.write(script, [[
local harness = require "harness"
local seq = 0
local h = harness.start({ script = "order", about = "AB order", mib = 1, reps = 6,
  knobs = { { name = "LEVEL", kind = "count", default = 1, ab = true, desc = "a value the cases read" } } }, { ... })
for _, name in ipairs { "x", "y" } do
  h:case(name, function(r)
    seq = seq + 1
    r.seq, r.level, r.extra = seq, h.cfg.LEVEL, h.cfg.LEVEL - 1
    r.ns = 1000 * h.cfg.LEVEL + seq % 7
  end)
end
h:columns { { "seq", "sequence", "count" }, { "level", "LEVEL", "count" }, { "extra", "LEVEL - 1", "count" },
  { "ns", "time", "ns" } }
h:run()
h:note(("LEVEL after the repetitions: %d"):format(h.cfg.LEVEL))
h:finish()
]])

local out, code = t.ftrun_run(q(script) .. " 'AB=LEVEL=1 | LEVEL=2' LEVEL=3", "RESULTS=" .. q(dir))
t.is(code, 0, "an AB run")
local doc = json.decode(t.read(dir .. "/exp-order-ab-results.json") or "null") or { reps = {}, rows = {} }
t.is(doc.ab and doc.ab.a, "LEVEL=1", "the JSON names side A")
t.is(doc.ab and doc.ab.b, "LEVEL=2", "and side B")

-- ABBA: in odd repetitions every case of A runs before any of B, in even ones after.
local seqs = {}
for _, c in ipairs(doc.reps) do seqs[c.case] = c.records end
local abba, levels = true, true
for i = 1, 6 do
  local a_last = math.max(seqs.x[i].seq, seqs.y[i].seq)
  local b_first = math.min(seqs["x [B]"][i].seq, seqs["y [B]"][i].seq)
  local a_first = math.min(seqs.x[i].seq, seqs.y[i].seq)
  local b_last = math.max(seqs["x [B]"][i].seq, seqs["y [B]"][i].seq)
  if i % 2 == 1 and a_last >= b_first or i % 2 == 0 and b_last >= a_first then abba = false end
  if seqs.x[i].level ~= 1 or seqs["x [B]"][i].level ~= 2 then levels = false end
end
t.ok(abba, "A B in odd repetitions, B A in even ones (ABBA)", json.encode(seqs))
local stamped = true
for i = 1, 6 do
  for _, name in ipairs { "x", "x [B]" } do
    local tag, side = seqs[name][i].ab or {}, name == "x" and "A" or "B"
    local slot = (i % 2 == 1) == (side == "A") and 1 or 2
    stamped = stamped and tag.rep == i and tag.side == side and tag.slot == slot
  end
end
t.ok(stamped, "each record in the JSON names its repetition, its side and whether that side ran first (slot 1)",
  json.encode(seqs))
t.ok(levels, "each side ran with its own knob value")
t.like(out, "LEVEL after the repetitions: 3", "the run's own value is back after the repetitions")

local rows = {}
for _, r in ipairs(doc.rows) do rows[r.case .. " " .. r.column] = r end
t.is(rows["x ns"] and rows["x ns"].side, "A", "side A's rows carry their side")
t.is(rows["x [B] ns"] and rows["x [B] ns"].ab_case, "x", "side B's rows name their case")
t.is(rows["x [B] ns"] and #rows["x [B] ns"].values, 6, "and keep every repetition's value by index")
t.like(out, "**AB: the paired change B/A**", "the run prints the paired table")
t.like(out, "| x | ns | ns | ", "a paired row")
t.like(out, "| 0.0312 | ", "six pairs all one way: Wilcoxon p = 2/64")

out, code = t.ftrun_run("compare.lua " .. q(dir .. "/exp-order-ab-results.json"))
t.is(code, 0, "compare.lua on one AB run")
t.like(out, "| x | ns | ns | ", "prints the paired table")
t.like(out, "+100.0 % (worse)", "and calls the doubled time")
t.like(out, "| x | extra | count | 0 [0, 0] | 1 [1, 1] | B - A +1 (6) | – | – | different (exact): B - A +1 |",
  "a count zero on side A and one on side B in every pair: different, exactly, not a silent ~")
t.like(out, "| x | level | count | 1 [1, 1] | 2 [2, 2] | +100.0 [+100.0, +100.0] (6) | – | – | different (exact): "
  .. "+100.0 % |", "a count constant on each side: its exact ratio")
t.like(out, "| side A: LEVEL=1, median [95 %] | side B: LEVEL=2, median [95 %] |",
  "each side's column named by its knobs, never a bare letter beside the case's")

-- AB at a newcomer's sizes: QUICK's repetitions raised to enough pairs, too few refused.
out, code = t.ftrun_run(q(script) .. " 'AB=LEVEL=1 | LEVEL=2' REPS=4", "RESULTS=" .. q(dir .. "/few"))
t.is(code, 2, "an AB run of 4 pairs is refused before it runs")
t.like(out, "4 pairs cannot reach p < 0.05", "saying why")
t.like(out, "give REPS=6 or more", "and the number needed")
out, code = t.ftrun_run(q(script) .. " 'AB=LEVEL=1 | LEVEL=2' QUICK=1", "RESULTS=" .. q(dir .. "/quick"))
t.is(code, 0, "a QUICK AB run")
local quick = json.decode(t.read(dir .. "/quick/quick-order-ab-results.json") or "null") or {}
t.is(quick.reps and #quick.reps > 0 and #quick.reps[1].records, 10, "takes 10 pairs", out)

-- A newcomer's first AB run: pass 1 gets a verdict, and the run's own table shows both sides by their knobs.
out, code = t.ftrun_run("cycles.lua 'AB=THP=never | THP=always' CYCLES=A QUICK=1 MIB=16", "RESULTS=" .. q(dir .. "/thp"))
t.is(code, 0, "AB=THP=never | THP=always CYCLES=A QUICK=1 runs", out)
local pass1 = out:match("\n(| A | pass1 | ns/page | [^\n]*)") or ""
local disturbed = kind.thp_disturbed()
if disturbed then
  t.skip("pass 1's paired row is called (10 pairs)", disturbed)
else
  t.ok(pass1:find("| %-%d+%.%d %% %(better%) |$") ~= nil, "pass 1's paired row is called (10 pairs)", pass1)
end
t.like(out, "| A (side A: THP=never) | pass 1: first touch |", "the run's table has side A's row, by its knobs")
t.like(out, "| A (side B: THP=always) | pass 1: first touch |", "and side B's")
t.like(out, "Pages obtained (cycle A, side A: THP=never)", "the page obtained is said to be side A's")

out, code = t.ftrun_run("compare.lua " .. q(dir .. "/exp-order-ab-results.json"), "FAIL_ABOVE=50")
t.is(code, 1, "FAIL_ABOVE gates an AB run")
t.like(out, "x ns: B/A +100.0 %", "naming the row")
out, code = t.ftrun_run("compare.lua " .. q(dir .. "/exp-order-ab-results.json"), "FAIL_ABOVE=150")
t.is(code, 0, "and lets a smaller change through")
do -- an AB run whose side B rows are lost: nothing to pair
  local copy = json.decode(t.read(dir .. "/exp-order-ab-results.json"))
  local kept = {}
  for _, r in ipairs(copy.rows) do if r.side ~= "B" then kept[#kept + 1] = r end end
  copy.rows = kept
  local path = dir .. "/oneside.json"
  t.write(path, json.encode(copy))
  out, code = t.ftrun_run("compare.lua " .. q(path))
  t.is(code, 2, "an AB run with side A alone: exit 2")
  t.like(out, "compare.lua: " .. path .. ": an AB run with no row measured on both sides", "and says why")
end

-- COUNTERS changes between the halves: perf counters around side B's passes alone.
do
  local cdir = dir .. "/counters"
  out, code = t.ftrun_run("populate.lua QUICK=1 REPS=6 'AB= | COUNTERS=1'", "RESULTS=" .. q(cdir))
  t.is(code, 0, "AB=' | COUNTERS=1' runs (populate.lua)")
  local cdoc = json.decode(t.read(cdir .. "/quick-populate-ab-results.json") or "null") or { rows = {} }
  local with = { A = 0, B = 0 }
  local passes = 0
  for _, r in ipairs(cdoc.rows) do
    if r.column == "pass" then
      passes = passes + 1
      if r.counters then with[r.side] = with[r.side] + 1 end
    end
  end
  t.ok(passes > 0 and with.A == 0 and with.B * 2 == passes,
    "side B's pass rows carry perf counters, side A's none", ("%d rows, A %d, B %d"):format(passes, with.A, with.B))
end

-- Refused before anything runs: no repetition starts, no file is written.
local refused = dir .. "/refused"
for _, c in ipairs {
  { "AB=MIB=4 | MIB=8", "AB=MIB=4 | MIB=8: MIB cannot change inside a run of order.lua (in AB: LEVEL, COUNTERS, REPORTING)" },
  { "AB=REPS=2 | ", "REPS cannot change inside a run" },
  { "AB= | RESULTS=/tmp", "RESULTS cannot change inside a run" },
  { "AB=NOPE=1 | ", "NOPE is not a knob of order.lua" },
  { "AB=LEVEL=0 | LEVEL=1", "LEVEL=0: expected a positive integer" },
  { "AB=LEVEL=1", "'A knobs | B knobs' (one |)" },
  { "AB= | ", "at least one knob on one side" },
  { "AB=LEVEL=1 LEVEL=2 | ", "LEVEL twice on side A" },
} do
  out, code = t.ftrun_run(q(script) .. " " .. q(c[1]), "RESULTS=" .. q(refused))
  t.is(code, 2, c[1] .. ": exit 2")
  t.like(out, c[2], "names why: " .. c[2])
  t.ok(not out:find("rep 1/", 1, true), "before any repetition", out)
end
t.ok(not io.open(refused), "nothing written")

os.execute("rm -rf " .. q(dir))
t.done()
