-- host.lua: every case runs, each step's faults are what its pages say (one per 4 KiB page
-- of a fresh or freed mapping, none when MAP_POPULATE faulted them in the call), the report
-- states the host's share, and the page reporting settings the held case changed are back.
local t = require "tap"
local json = require "json"
local q = t.quote

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
t.is(params(), before, "the page reporting settings read as before the run")
t.done()
