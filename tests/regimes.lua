-- Regimes named: a custom script maps with thp = "never" for repetitions
-- 1-7 and "always" from 8, so pass 1 changes level at repetition 8; the
-- run's JSON and summary must say so. Needs THP not "never" machine-wide.
-- 128 MiB: a huge-page pass lasts long enough (about 16 ms) that one
-- preemption by another process cannot lift it to the 4 KiB pages' level.
local t = require "tap"
-- What THP gives depends on machine-wide settings another suite may change:
-- the settings lock for the whole file (tests/lib/sysfs.lua).
assert(require("sysfs").hold_lock())
local json = require "json"
local q = t.quote

local dir = t.tmpdir()
local script = dir .. "/planted.lua"
t.write(script, [[
local ft = require "ft"
local harness = require "harness"
local h = harness.start({ script = "planted", about = "thp never for repetitions 1-7, always from 8",
  mib = 128, reps = 15 }, { ... })
h:case("planted", function(r, rep)
  if rep > 7 then -- huge pages made once untimed: after 4 KiB pages the first ones may need compaction
    local warm <close> = ft.mmap(128 << 20, { thp = "always" })
    warm:touch(1)
  end
  local b <close> = r:map(nil, { thp = rep <= 7 and "never" or "always" })
  r:pass("pass1", b, "touch", 1)
  r.huge = assert(b:thp_bytes()) >> 21 -- this mapping's 2 MiB pages (smaps), not the machine's
  r:check_bytes(b, 1, "planted")
end)
h:columns { { "pass1", "pass 1", "ns/page" }, { "huge", "2 MiB pages", "count" } }
h:finish()
]])
local enabled = t.read("/sys/kernel/mm/transparent_hugepage/enabled") or ""
local out, code = t.ftrun_run(q(script), "RESULTS=" .. q(dir))
t.is(code, 0, "the planted run", out)
local doc = json.decode(t.read(dir .. "/exp-planted-results.json") or "null") or { rows = {} }
local pass1, allocs
for _, r in ipairs(doc.rows) do
  if r.column == "pass1" then pass1 = r end
  if r.column == "huge" then allocs = r end
end
-- planted: no huge page in 1-7, some in each of 8-15 (the data check below says whether it shows)
local huge_from_8 = allocs ~= nil
for i = 1, 15 do
  local v = allocs and allocs.values[i]
  if not v or (i <= 7 and v ~= 0) or (i > 7 and v == 0) then huge_from_8 = false end
end
if not huge_from_8 then
  -- THP settings are machine-wide: another process (a test setting folio sizes, a THP=16K run)
  -- may have turned 2 MiB pages off meanwhile; then nothing was planted and nothing is checked
  t.diag(("no 2 MiB pages in repetitions 8-15 (THP enabled: %s; 2048 kB: %s): the shift was not planted (%s)")
    :format(enabled:gsub("\n", ""), (t.read("/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled") or "?")
      :gsub("\n", ""), json.encode(allocs and allocs.values or {})))
else
  -- the plant shows in the data when every repetition from 8 is below every one before
  local v = pass1 and pass1.values or {}
  local highest_after, lowest_before = -math.huge, math.huge
  for i = 1, 15 do
    if type(v[i]) ~= "number" then highest_after = math.huge
    elseif i <= 7 then lowest_before = math.min(lowest_before, v[i])
    else highest_after = math.max(highest_after, v[i]) end
  end
  local regimes = pass1 and pass1.regimes
  if highest_after >= lowest_before then
    -- the host (free page reporting, other processes) slowed a huge-page repetition to the 4 KiB
    -- level: the data has no clean shift at 8 to find, so nothing is checked
    t.diag(("the plant did not show in the data: %s ns/page after repetition 7 against %s before (%s)")
      :format(highest_after, lowest_before, json.encode(v)))
  else
    t.ok(regimes and #regimes == 2, "pass 1 has two regimes in the JSON", json.encode(v))
    t.is(regimes and regimes[2] and regimes[2].reps[1][1], 8, "the second begins at repetition 8")
    t.is(regimes and regimes[1].reps[1][2], 7, "the first ends at 7")
    t.ok(regimes and regimes[2].median < regimes[1].median, "huge pages make the second regime's first touch cheaper")
    local md = t.read(dir .. "/exp-planted-summary.md") or ""
    t.like(md, "Regimes: planted pass1: repetitions 1–7 at ", "the summary names the row and its repetitions")
    t.like(md, ", 8–15 at ", "and the second regime")
    t.like(md, "would show a shift by chance", "and how many rows chance alone would name")
    t.like(out, "8–15 at", "printed with the table")
  end
end
if os.getenv("KEEP") then t.diag(dir) else os.execute("rm -rf " .. q(dir)) end
t.done()
