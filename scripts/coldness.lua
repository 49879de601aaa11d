-- coldness.lua: the host behind the guest. In a guest whose freed memory is
-- reported back to the host (virtio-balloon free page reporting), memory
-- freed a while ago may have to be backed by the host again on its first
-- touch. The pass-1 cost after the buffer was released and the run waited
-- 0 to 10 s, and the first repetition of a fresh process apart.
local ft = require "ft"
local experiment = require "experiment"
local measure = require "measure"
local stats = require "stats"

local exp = experiment.start("coldness", "first touch after the memory was released and the run waited",
  { MIB = 256, REPS = 3 }, { { name = "WAITS", kind = "path", default = "0,0.5,1,2,5,10",
    desc = "seconds to wait after releasing, comma-separated" } })
local fmt = experiment.fmt

local waits = {}
for w in exp.cfg.WAITS:gmatch("[^,]+") do
  local v = tonumber(w)
  if not v or v < 0 or v > 600 then
    io.stderr:write(("coldness.lua: WAITS=%s: expected seconds from 0 to 600, comma-separated\n"):format(exp.cfg.WAITS))
    os.exit(2, true)
  end
  waits[#waits + 1] = v
end

local function first_touch(value)
  local b <close> = measure.map(exp.bytes, { thp = "never" })
  local ns, faults = measure.pass(b, "touch", value)
  measure.check_bytes(b, value, "coldness")
  measure.release(b)
  return { ns = ns, faults = faults }
end

local rows = {}
local function record(label, runs)
  local ns = stats.map(runs, function(r) return r.ns end)
  local lo, med = experiment.per_page(ns, exp.pages)
  local faults = stats.median(stats.map(runs, function(r) return r.faults end))
  exp:keep(label, runs)
  exp:result { { "case", label }, { "min_ns_per_page", lo }, { "median_ns_per_page", med },
    { "max_ns_per_page", stats.max(ns) / exp.pages }, { "faults", faults } }
  rows[#rows + 1] = { label, fmt(lo), fmt(med), fmt(stats.max(ns) / exp.pages), fmt(faults) }
end

exp:progress("the first mapping of a fresh process")
record("first repetition of a fresh process", { first_touch(1) })
for _, wait in ipairs(waits) do
  record(("released, waited %s s"):format(fmt(wait)), exp:repeat_(("wait %s s"):format(fmt(wait)), function(rep)
    ft.sleep(wait)
    return first_touch((rep % 200) + 2)
  end))
end

exp:text(("This guest: hypervisor %s, free page reporting %s (the virtio-balloon device's "
  .. "VIRTIO_BALLOON_F_REPORTING feature, from sysfs). Every case maps %d MiB with THP never, "
  .. "so each row is %d faults of 4 KiB."):format(exp.machine.hypervisor, exp.machine.free_page_reporting,
  exp.cfg.MIB, exp.pages))
exp:text("")
exp:table({ "before the first touch", "pass 1 ns/page (min)", "median", "max", "faults" }, rows)
exp:finish()
