-- faults.lua at a tiny size: every case runs as threads and as processes,
-- a page fault per page in the page_fault cases and almost none in mmap1,
-- the ideal line's ratios, and a bad SECONDS refused.
local t = require "tap"
-- one fault per page holds only while no other process turns THP on
-- (another suite's THP=always run gave page_fault1 0.85 faults a page)
assert(require("sysfs").hold_lock())
local summary = require "summary"
local q = t.quote

local dir = t.tmpdir()
local out, code = t.ftrun_run("faults.lua", "MIB=4 REPS=1 SECONDS=0.1 RESULTS=" .. q(dir))
t.is(code, 0, "faults.lua runs")
if code ~= 0 then t.diag(out) end
local raw = t.read(dir .. "/exp-faults-raw.txt") or ""
local ix = summary.index(raw)
local cpus = tonumber(t.run("nproc"):match("%d+"))
t.is(#ix.cases, 4 * 2 * cpus, "four workloads, threads and processes, 1 to " .. cpus .. " tasks")
for _, case in ipairs(ix.cases) do
  local per_op = (ix.row(case, "faults_per_op") or {}).median
  if case:match("^page_fault") then
    t.ok(per_op and per_op >= 1 and per_op < 1.01, case .. ": one fault per page touched (" .. tostring(per_op) .. ")")
  else
    t.ok(per_op and per_op < 0.1, case .. ": map and unmap alone take next to no fault (" .. tostring(per_op) .. ")")
  end
  t.ok(((ix.row(case, "total") or {}).median or 0) > 0, case .. ": a rate")
end
t.like(raw, "CHECKSUMS OK: " .. 3 * (cpus * (cpus + 1)) .. " read-backs", "every page_fault task read its last region back")
if cpus > 1 then t.ok(ix.value("of_ideal") ~= nil, "the ratio to the ideal for more than one task") end
out, code = t.ftrun_run("faults.lua", "SECONDS=0 RESULTS=" .. q(dir))
t.is(code, 2, "SECONDS=0 exits 2")
t.like(out, "SECONDS=0: expected seconds above 0, at most 600", "and names what is allowed")
os.execute("rm -rf " .. q(dir))
t.done()
