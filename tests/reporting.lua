-- The guest's free page reporting module: its parameters in every run's provenance, the KiB
-- it reported around every pass in the records, and REPORTING=held as a setting under the
-- settings lock: restored at the run's end, after a SIGKILL by the next start, usable in AB.
local t = require "tap"
local ft = require "ft"
local sysfs = require "sysfs"
local q = t.quote

local DIR = "/sys/module/page_reporting/parameters"
local PARAMS = { "page_reporting_order", "min_free_ms", "max_waiting_mib", "free_bitmap_enable" }
local root = t.run("id -u") == "0\n"
local function skip(name, why) t.ok(true, name .. " # SKIP " .. why) end
local function matches(text, pattern, name) return t.ok((text or ""):find(pattern) ~= nil, name, text) end

local function params()
  local out = {}
  for _, k in ipairs(PARAMS) do out[#out + 1] = k .. "=" .. tostring(sysfs.setting(DIR .. "/" .. k)) end
  return table.concat(out, " ")
end

t.errors(function() ft.set_page_reporting("reported_kib", "1") end, "invalid option",
  "a counter or an unknown name cannot be set")
t.errors(function() ft.page_reporting(1) end, "", "an extra argument raises")

local p, why = ft.page_reporting()
if not p then
  t.like(why, "cannot read " .. DIR, "without the module, a refusal naming the file")
  skip("the module's parameters, counters and REPORTING", "no page_reporting module here: " .. tostring(why))
  t.done()
  return
end

for _, k in ipairs(PARAMS) do t.is(type(p[k]), "string", "ft.page_reporting()." .. k .. " as the file says it") end
t.is(math.type(p.reported_kib), "integer", "reported_kib is an integer")
local kib = ft.reported_kib()
t.ok(math.type(kib) == "integer" and kib >= p.reported_kib, "ft.reported_kib() reads the same counter, later",
  tostring(kib) .. " against " .. p.reported_kib)

-- The real lock from here on: runs started below share it, another suite waits.
local held = sysfs.hold_lock()
t.ok(held, "the test takes the real settings lock")
local dir = t.tmpdir()
local before = params()

do -- provenance and the per-pass delta
  local out, code = t.ftrun_run(("first_touch.lua QUICK=1 MIB=4 REPS=2 RESULTS=%s"):format(q(dir .. "/plain")))
  t.is(code, 0, "a plain run exits 0", out)
  local raw = t.read(dir .. "/plain/quick-first_touch-raw.txt") or ""
  matches(raw, "page_reporting: page_reporting_order=%d+ min_free_ms=%d+ max_waiting_mib=%d+ free_bitmap_enable=%a",
    "the raw file's provenance records the module's four parameters")
  local json = t.read(dir .. "/plain/quick-first_touch-results.json") or ""
  matches(json, '"first_reported_kib":%s*%d+', "every pass's record has the KiB reported around it")
  matches(json, '"page_reporting":%s*"page_reporting_order=', "and the JSON's provenance the parameters")
end

if not root then
  skip("REPORTING=held, AB and SIGKILL", "needs root to write " .. DIR)
  t.done()
  return
end

do -- held for the run: recorded, then put back
  local out, code = t.ftrun_run(("first_touch.lua QUICK=1 MIB=4 REPS=2 REPORTING=held RESULTS=%s")
    :format(q(dir .. "/held")))
  t.is(code, 0, "REPORTING=held exits 0", out)
  t.like(t.read(dir .. "/held/quick-first_touch-raw.txt") or "", "page_reporting: page_reporting_order=10 min_free_ms=300000",
    "its provenance records the held parameters")
  t.is(params(), before, "and the run's end puts them back")
end

do -- AB: both sides in every repetition, then as before
  local out, code = t.ftrun_run(("first_touch.lua QUICK=1 MIB=4 REPS=6 RESULTS=%s %s")
    :format(q(dir .. "/ab"), q("AB=REPORTING=as-booted | REPORTING=held")))
  t.is(code, 0, "AB REPORTING=as-booted | held exits 0", out)
  matches(t.read(dir .. "/ab/quick-first_touch-ab-results.json"), '"side":"B"', "side B's repetitions are on record")
  t.is(params(), before, "the parameters read as before the AB run")
end

do -- SIGKILL while held: the next start restores and says so
  local out = t.run(([[
%s %s QUICK=1 MIB=4 REPS=200 REPORTING=held RESULTS=%s & P=$!
for i in $(seq 3000); do grep -q '^300000$' %s/min_free_ms && break; sleep 0.02; done
kill -KILL $P; wait $P; echo "status $?"
echo "min_free_ms: $(cat %s/min_free_ms)"]]):format(q(t.ftrun), "first_touch.lua", q(dir .. "/kill"), DIR, DIR))
  t.like(out, "status 137", "the REPORTING=held run was killed", out)
  t.like(out, "min_free_ms: 300000", "and left min_free_ms held")
  out = t.ftrun_run("-e 'print(1)'")
  t.is(params(), before, "the next start puts every parameter back", out)
  matches(out, "ftrun: restored " .. DIR .. "/min_free_ms to %d+ %(it read 300000%)", "and says what it restored")
end

t.done()
