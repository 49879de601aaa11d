-- host.lua: every case runs, each step's faults are what its pages say (one per 4 KiB page
-- of a fresh or freed mapping, none when MAP_POPULATE faulted them in the call), the report
-- states the host's share, and the page reporting settings the held case changed are back.
local t = require "tap"
local json = require "json"
local sysfs = require "sysfs"
local q = t.quote

-- The held case changes page reporting; holding the settings lock keeps another suite's
-- REPORTING=held run from changing it between this file's two readings.
assert(sysfs.hold_lock())

local dir = t.tmpdir()
local DIR = "/sys/module/page_reporting/parameters"
local function params()
  local out = {}
  for _, k in ipairs { "page_reporting_order", "min_free_ms" } do out[#out + 1] = t.read(DIR .. "/" .. k) or "absent" end
  return table.concat(out, " ")
end
local before = params()

local out, code = t.ftrun_run(("host.lua QUICK=1 MIB=4 REPS=2 DELAY=1 RESULTS=%s"):format(q(dir)))
t.is(code, 0, "host.lua QUICK=1 exits 0", out)
local doc = json.decode(t.read(dir .. "/quick-host-results.json") or "null") or { reps = {} }
local by = {}
for _, c in ipairs(doc.reps) do by[c.case] = c end
local pages = (4 << 20) // doc.page_size
for _, c in ipairs(doc.reps) do
  local p = c.params or {}
  if c.unsupported then
    t.ok(true, c.case .. " # SKIP " .. c.unsupported)
  elseif p.page ~= "2M" and not p.sampled then
    t.is(c.records[1].step_faults, pages, c.case .. ": one fault per page in its step")
  end
end
local pop = by["MAP_POPULATE, 4 KiB"]
t.is(pop and pop.records[1].after_faults, 0, "the store after MAP_POPULATE takes no guest fault")
t.ok(pop and pop.records[1].after_oncpu > 0, "and its time on the CPU is read")
local summary = t.read(dir .. "/quick-host-summary.md") or ""
t.like(summary, "of its time on the CPU", "the summary states the share outside the guest kernel")
t.like(summary, "A first store into pages MAP_POPULATE mapped takes 0 guest faults", "and the populated store's share")
-- What this kind of machine cannot show, in the notes and the JSON's limits.
local function topics(d)
  local set = {}
  for _, l in ipairs(d and d.limits or {}) do set[l.topic] = true end
  return set
end
local has = topics(doc)
local steal = tonumber((t.read("/proc/stat") or ""):match("^cpu" .. ("%s+%d+"):rep(7) .. "%s+(%d+)"))
if steal == 0 then
  t.like(summary, "steal has not moved since boot: this guest's host does not report it", "a steal never moved is said")
  t.ok(has.steal, "and is in the JSON's limits")
  t.ok(not summary:find("steal 0.00", 1, true), "and not shown as the host's share", summary)
else
  t.ok(not has.steal, "steal moved since boot: no limit on it")
end
if doc.machine and doc.machine.shadow_page_tables == true then
  t.ok(has.fault_cost, "shadow page tables: the fault-cost caveat is in the JSON's limits")
end
-- A share's point estimate is never negative in the headline (its interval is as measured).
for line in ("\n" .. summary):gmatch("\n(%d[KM] first touch[^\n]*)") do
  local bare = line:gsub("%b[]", ""):gsub("%b()", "")
  t.ok(not bare:find("%-%d"), "no negative share: " .. line:sub(1, 40), line)
end
-- A 2 MiB case that got no 2 MiB pages is said so and kept out of the headline.
local huge = by["fresh, 2 MiB (THP)"]
local got = huge and not huge.unsupported and #huge.records > 0
for _, r in ipairs(got and huge.records or {}) do
  got = got and r.step_faults == (4 << 20) // doc.machine.thp_pmd_size and r.thp_bytes == 4 << 20
end
if got then
  t.like(summary, "2M first touch, ", "2 MiB pages obtained: the 2M headline")
else
  t.like(summary, "2 MiB pages obtained (THP ", "no 2 MiB pages obtained: said, with the THP setting")
  t.ok(not summary:find("2M first touch, %d"), "and no 2M headline", summary)
end
t.is(params(), before, "the page reporting settings read as before the run")

-- Below one 2 MiB page, the 2 MiB case is skipped with its reason.
local small = t.tmpdir()
out, code = t.ftrun_run(("host.lua QUICK=1 MIB=1 REPS=1 DELAY=1 RESULTS=%s"):format(q(small)))
t.is(code, 0, "host.lua MIB=1 exits 0", out)
local one = json.decode(t.read(small .. "/quick-host-results.json") or "null") or { reps = {} }
for _, c in ipairs(one.reps) do
  if (c.params or {}).page == "2M" then t.like(c.unsupported or "", "holds no 2 MiB page", "MIB=1: the 2M case skipped") end
end
t.ok(not (t.read(small .. "/quick-host-summary.md") or ""):find("2M first touch, %d"), "and no 2M headline")

-- actouch.lua's figures carry the same kind's caveats.
out, code = t.ftrun_run(("actouch.lua QUICK=1 MIB=1 REPS=1 RESULTS=%s"):format(q(small)))
t.is(code, 0, "actouch.lua QUICK=1 MIB=1 exits 0", out)
local ac = json.decode(t.read(small .. "/quick-actouch-results.json") or "null")
if ac and ac.machine.shadow_page_tables == true then
  t.ok(topics(ac).fault_cost, "actouch.lua: the fault-cost caveat is in the JSON's limits")
end
if ac and ac.machine.timer ~= "rdtscp" then
  t.ok(topics(ac).timer, "actouch.lua: the per-page timer's caveat is in the JSON's limits")
end
t.done()
