-- zeropage.lua: read before write. A read of every page first maps the
-- shared zero page (the huge zero page under THP); the write pass after it
-- faults again to get a page of its own. Against a write-only first touch.
local harness = require "harness"

local h = harness.start({ script = "zeropage", shuffle = true, mib = 512, reps = 5, limits = { "zero_page" },
  about = "read before write: the zero page" }, { ... })
local SAMPLE = 64 -- move_pages asks every 64th page

for _, thp in ipairs { "never", "always" } do
  h:case("THP=" .. thp, function(r)
    local b <close> = r:map(nil, { thp = thp })
    r:pass("read", b, "read_touch")
    r.zero_pages = assert(b:nodes(SAMPLE)).zero_page * SAMPLE
    r:pass("write", b, "touch", 3)
    r:check_bytes(b, 3, "write after read")
    r:release(nil, b)
    local w <close> = r:map(nil, { thp = thp })
    r:pass("only", w, "touch", 4)
    r:check_bytes(w, 4, "write only")
  end)
end
h:columns {
  { "read", "read pass", "ns/page" }, { "read_faults", "read-pass faults", "faults" },
  { "zero_pages", "pages on the zero page after it (sampled)", "pages" },
  { "write", "write pass after the read", "ns/page" }, { "write_faults", "its faults", "faults" },
  { "both", "read + write", "ns/page", function(r) return (r.read + r.write) / h.pages end },
  { "only", "write-only first touch", "ns/page" }, { "only_faults", "its faults", "faults" },
}
h:finish()
