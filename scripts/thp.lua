-- thp.lua: the same first touch, re-touch and fresh fill with THP never,
-- default and always, and the page size the kernel actually gave.
local ft = require "ft"
local harness = require "harness"

local h = harness.start({ script = "thp", shuffle = true, mib = 1024, reps = 5,
  about = "first touch by page size (THP never / default / always)" }, { ... })
local K = 0x9E3779B97F4A7C15

for _, mode in ipairs { "never", "default", "always" } do
  h:case("THP=" .. mode, function(r)
    local vm0 = ft.vmstat()
    local b <close> = r:map(nil, { thp = mode })
    r:pass("pass1", b, "touch", 1)
    local vm1 = ft.vmstat()
    r.huge_bytes = assert(b:thp_bytes())
    r.thp_fault_alloc = vm1.thp_fault_alloc - vm0.thp_fault_alloc
    r.thp_fault_fallback = vm1.thp_fault_fallback - vm0.thp_fault_fallback
    r:pass("retouch", b, "touch", 2)
    r:check_bytes(b, 2, "THP=" .. mode .. " re-touch")
    r:release(nil, b)
    local f <close> = r:map(nil, { thp = mode })
    r:pass("fill", f, "fill", K)
    r:check_words(f, K, "THP=" .. mode .. " fresh fill")
  end)
end
h:columns {
  { "huge_bytes", "bytes in PMD-mapped huge pages (PAGEMAP_SCAN)", "bytes" },
  { "thp_fault_alloc", "thp_fault_alloc", "count" },
  { "thp_fault_fallback", "thp_fault_fallback", "count" },
  { "pass1_faults", "pass-1 faults", "faults" }, { "pass1", "pass 1", "ns/page" },
  { "per_fault", "pass 1 per fault", "ns", function(r) return r.pass1 / r.pass1_faults end },
  { "retouch", "re-touch", "ns/page" }, { "fill", "fresh fill", "GB/s" },
  { "fill_faults", "fresh-fill faults", "faults" },
}
h:finish()
