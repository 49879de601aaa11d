-- pagesize.lua: the first touch by the size one fault brings in: base pages, every multi-size
-- THP folio offered, 2 MiB THP, hugetlb 2 MiB and 1 GiB; then ns per fault fitted against bytes
-- per fault, as a fixed cost per fault plus a cost per byte.
local ft = require "ft"
local harness = require "harness"
local pagesizes = require "pagesizes"
local units = require "units"

local h = harness.start({ script = "pagesize", shuffle = true, mib = 1024, reps = 5, limits = { "fault_cost" },
  about = "first touch by fault size (base pages, multi-size THP, 2 MiB THP, hugetlb)",
  memory = function(cfg, bytes) return bytes * (cfg.MIB % 1024 == 0 and 3 or 2) end }, { ... })
local K, PMD, named = 0x9E3779B97F4A7C15, 2 << 20, pagesizes.named

-- The cases: the bytes one fault brings in, the mapping, and either the folio size left on for
-- MADV_HUGEPAGE mappings (madvise; every other size never) or the hugetlb pool mapped from.
local CASES = { { name = named(h.page) .. " base pages", size = h.page, map = { thp = "never" } } }
for _, f in ipairs(pagesizes.folios()) do
  CASES[#CASES + 1] = { name = named(f.bytes) .. (f.pmd and " THP" or " mTHP"), size = f.bytes,
    map = { thp = "always" }, folio = f.kb }
end
for _, p in ipairs { { 2048, "2M" }, { 1 << 20, "1G" } } do
  CASES[#CASES + 1] = { name = named(p[1] << 10) .. " hugetlb", size = p[1] << 10,
    map = { hugetlb = p[2] }, pool = p[1] }
end

-- The size's own counters: anon_fault_alloc and _fallback; hugetlb: the pool's free pages.
local function counts(c)
  if c.pool then return -ft.hugetlb_pages(c.pool).free end
  if c.folio then local f = ft.folio(c.folio); return f.anon_fault_alloc, f.anon_fault_fallback end
end

for _, c in ipairs(CASES) do -- a hugetlb pool's pages reserved before the run
  local why = c.pool and pagesizes.reserve(c.pool, h.bytes)
  h:case(c.name, function(r)
    local ok, err = not why, why
    if ok and c.folio then ok, err = pagesizes.only(c.folio) end -- in each case: they are shuffled
    if not ok then return false, err end
    local a0, f0 = counts(c)
    local b <close> = r:map(nil, c.map)
    r:pass("pass1", b, "touch", 1)
    local a1, f1 = counts(c)
    r.expected, r.alloc, r.fallback = h.bytes // c.size, a0 and a1 - a0, f0 and f1 - f0
    r.huge_bytes = c.size >= PMD and assert(b:thp_bytes()) or nil
    r.obtained = pagesizes.obtained(h.bytes, c.size, r.pass1_faults, r.alloc, r.huge_bytes) and 1 or 0
    r:pass("retouch", b, "touch", 2)
    r:check_bytes(b, 2, c.name .. " re-touch")
    r:release("munmap", b)
    local f <close> = r:map(nil, c.map)
    r:pass("fill", f, "fill", K)
    r:check_words(f, K, c.name .. " fresh fill")
    if r.obtained == 0 then -- not this size: its times go aside, out of the rows
      r.not_obtained = { pass1 = r.pass1, retouch = r.retouch, munmap = r.munmap, fill = r.fill }
      r.pass1, r.retouch, r.munmap, r.fill = nil, nil, nil, nil
    end
  end, { params = { bytes = c.size, folio_kb = c.folio, pool_kb = c.pool } })
end
h:columns {
  { "per_fault", "ns per fault", "ns", function(r) return r.pass1 and r.pass1 / r.pass1_faults end },
  { "pass1", "first touch", "ns/page" }, { "retouch", "re-touch", "ns/page" },
  { "fill", "fresh fill", "GB/s" }, { "munmap", "munmap", "ns/page" },
  { "pass1_faults", "pass-1 faults", "faults" }, { "expected", "bytes / size", "faults" },
  { "alloc", "anon_fault_alloc (hugetlb: pool pages taken)", "count" },
  { "fallback", "anon_fault_fallback", "count" }, { "huge_bytes", "in PMD or hugetlb pages (thp_bytes)", "bytes" },
  { "got", "reps that got the size", "%", function(r) return 100 * r.obtained end, shown = "mean" },
}
h:run()
assert(ft.sysfs_restore())

-- The model (pagesizes.fit) over the sizes obtained up to 2 MiB; a 1 GiB page, if obtained, is
-- shown against it. Fitted to the medians, and to the minima: memory the host must back again
-- makes some repetitions of the large sizes slow.
local function fit(stat)
  local pts = {}
  for _, c in ipairs(CASES) do
    local y = (h:row(c.name, "per_fault") or {})[stat]
    if y then pts[#pts + 1] = { c.name, c.size, y } end
  end
  local fixed, per_byte, points = pagesizes.fit(pts, PMD)
  if not fixed then return nil end
  h:value("fit_fixed", fixed, "ns", { { "stat", stat }, { "per_byte_ns", per_byte } })
  h:value("fit_zeroing", 1 / per_byte, "GB/s", { { "stat", stat }, { "per_4k", 4096 * per_byte } })
  local res = {}
  for _, p in ipairs(points) do
    h:value("fit_residual", p.ns - p.predicted, "ns", { { "stat", stat }, { "case", p.name }, { "bytes", p.bytes },
      { "predicted", p.predicted }, { "pct", p.pct }, { "in_fit", p.in_fit } })
    res[#res + 1] = ("%s %s ns (%s %%)"):format(p.name, units.cell(p.ns - p.predicted, "ns"), units.cell(p.pct, "%"))
  end
  local four = fixed + 4096 * per_byte
  return ("%s ns + bytes / %s GB/s, so a 4 KiB fault is %s ns, %s %% of it fixed; residuals: %s")
    :format(units.cell(fixed, "ns"), units.cell(1 / per_byte, "GB/s"), units.cell(four, "ns"),
      units.cell(100 * fixed / four, "%"), table.concat(res, ", "))
end
local medians, minima = fit("median"), fit("min")
if medians then
  h:note(("Model, ns per fault = fixed + bytes / zeroing rate, least squares over the sizes obtained up "
    .. "to 2 MiB weighted by 1/ns². Over the medians: %s. Over the minima: %s."):format(medians, minima))
end
h:note("A repetition that did not get its size (pass-1 faults not bytes / size, the size's counter short "
  .. "of them, PMD or hugetlb bytes short) has its times in not_obtained (JSON), out of the rows.")
h:finish()
