-- coldness.lua: the host behind the guest. In a guest whose freed memory is
-- reported back to the host (virtio-balloon free page reporting), memory
-- freed a while ago may have to be backed by the host again on its first
-- touch. The pass-1 cost after the buffer was released and the run waited
-- 0 to 10 s, each repetition going through every wait, and the first
-- mapping of a fresh process apart.
local ft = require "ft"
local harness = require "harness"

local h = harness.start({ script = "coldness", shuffle = true, mib = 256, reps = 3,
  about = "first touch after the memory was released and the run waited",
  knobs = { { name = "WAITS", kind = "seconds", default = "0,0.5,1,2,5,10",
    desc = "seconds to wait after releasing, comma-separated" } } }, { ... })

local function first_touch(r, value)
  local b <close> = r:map(nil, { thp = "never" })
  r:pass("pass1", b, "touch", value)
  r:check_bytes(b, value, "coldness")
end
h:case("first mapping of a fresh process", function(r) first_touch(r, 1) end,
  { once = true, params = { fresh = true } })
for _, wait in ipairs(h.cfg.WAITS) do
  h:case(("released, waited %g s"):format(wait), function(r, rep)
    ft.sleep(wait)
    first_touch(r, rep % 200 + 2)
  end, { params = { wait = wait } })
end
h:note(("This guest: hypervisor %s, free page reporting %s (virtio-balloon's "
  .. "VIRTIO_BALLOON_F_REPORTING, from sysfs). Every case maps %d MiB with THP never: %d faults "
  .. "of 4 KiB."):format(h.machine.hypervisor, h.machine.free_page_reporting, h.cfg.MIB, h.pages))
h:columns {
  { "pass1", "pass 1", "ns/page", shown = "min" }, { "pass1", "pass 1", "ns/page", shown = "median" },
  { "pass1", "pass 1", "ns/page", shown = "max" }, { "pass1_faults", "faults", "faults" },
}
h:finish()
