-- pagesize.lua: the first touch by the size one fault brings in: base pages, every multi-size
-- THP folio offered, 2 MiB THP, hugetlb 2 MiB and 1 GiB; then ns per fault fitted against bytes
-- per fault, as a fixed cost per fault plus a cost per byte.
local ft = require "ft"
local harness = require "harness"
local units = require "units"

local h = harness.start({ script = "pagesize", shuffle = true, mib = 1024, reps = 5,
  about = "first touch by fault size (base pages, multi-size THP, 2 MiB THP, hugetlb)",
  memory = function(cfg, bytes) return bytes * (cfg.MIB % 1024 == 0 and 3 or 2) end }, { ... })
local K, PMD, sizes = 0x9E3779B97F4A7C15, 2 << 20, ft.folio_sizes() or {}
local function named(b) -- 16384 -> "16 KiB"
  local shift = b >= 1 << 30 and 30 or b >= 1 << 20 and 20 or 10
  return (b >> shift) .. ({ [10] = " KiB", [20] = " MiB", [30] = " GiB" })[shift]
end

-- The cases: the bytes one fault brings in, the mapping, and either the folio size left on for
-- MADV_HUGEPAGE mappings (madvise; every other size never) or the hugetlb pool mapped from.
local CASES = { { name = named(h.page) .. " base pages", size = h.page, map = { thp = "never" } } }
for _, f in ipairs(sizes) do
  CASES[#CASES + 1] = { name = named(f.bytes) .. (f.pmd and " THP" or " mTHP"), size = f.bytes,
    map = { thp = "always" }, folio = f.kb }
end
for _, p in ipairs { { 2048, "2M" }, { 1 << 20, "1G" } } do
  CASES[#CASES + 1] = { name = named(p[1] << 10) .. " hugetlb", size = p[1] << 10,
    map = { hugetlb = p[2] }, pool = p[1] }
end

-- The pool's pages for one mapping, reserved before the run (given back at its end); or why not.
local function reserve(c)
  local pool, err = ft.hugetlb_pages(c.pool)
  if not pool then return err end
  if h.bytes % c.size ~= 0 then return "MIB is not a multiple of " .. named(c.size) end
  local need = h.bytes // c.size
  local prev, now = ft.set_hugetlb_pages(c.pool, pool.nr + need)
  if not prev then return now end
  if now == prev + need then return nil end
  ft.set_hugetlb_pages(c.pool, prev)
  return ("the kernel granted %d of %d pages"):format(now - prev, need)
end

-- The size's own counters: anon_fault_alloc and _fallback; hugetlb: the pool's free pages.
local function counts(c)
  if c.pool then return -ft.hugetlb_pages(c.pool).free end
  if c.folio then local f = ft.folio(c.folio); return f.anon_fault_alloc, f.anon_fault_fallback end
end

-- Set in each case (the cases are shuffled): its own folio size madvise, every other never.
local function enable(c)
  if c.why or not c.folio then return not c.why, c.why end
  local ok, err = ft.set_folio(c.folio, "madvise")
  for _, f in ipairs(sizes) do
    if ok and f.kb ~= c.folio then ok, err = ft.set_folio(f.kb, "never") end
  end
  return ok, err
end

for _, c in ipairs(CASES) do
  c.why = c.pool and reserve(c)
  h:case(c.name, function(r)
    local ok, why = enable(c)
    if not ok then return false, why end
    local a0, f0 = counts(c)
    local b <close> = r:map(nil, c.map)
    r:pass("pass1", b, "touch", 1)
    local a1, f1 = counts(c)
    r.expected, r.alloc, r.fallback = h.bytes // c.size, a0 and a1 - a0, f0 and f1 - f0
    r.huge_bytes = c.size >= PMD and assert(b:thp_bytes()) or nil
    r.obtained = r.pass1_faults == r.expected and (r.alloc or r.expected) >= r.expected
      and (r.huge_bytes or h.bytes) == h.bytes and 1 or 0
    r:pass("retouch", b, "touch", 2)
    r:check_bytes(b, 2, c.name .. " re-touch")
    r:release("munmap", b)
    local f <close> = r:map(nil, c.map)
    r:pass("fill", f, "fill", K)
    r:check_words(f, K, c.name .. " fresh fill")
    if r.obtained == 1 then return end
    r.not_obtained = {} -- not this size: its times go aside, out of the rows
    for _, k in ipairs { "pass1", "retouch", "munmap", "fill" } do
      r.not_obtained[k], r[k] = r[k], nil
    end
  end)
end
local function per_fault(r) return r.pass1 and r.pass1 / r.pass1_faults end
h:columns {
  { "per_fault", "ns per fault", "ns", per_fault },
  { "pass1", "first touch", "ns/page" }, { "retouch", "re-touch", "ns/page" },
  { "fill", "fresh fill", "GB/s" }, { "munmap", "munmap", "ns/page" },
  { "pass1_faults", "pass-1 faults", "faults" }, { "expected", "bytes / size", "faults" },
  { "alloc", "anon_fault_alloc (hugetlb: pool pages taken)", "count" },
  { "fallback", "anon_fault_fallback", "count" },
  { "huge_bytes", "in PMD or hugetlb pages (thp_bytes)", "bytes" },
  { "got", "reps that got the size", "%", function(r) return 100 * r.obtained end, shown = "mean" },
}
h:run()
assert(ft.sysfs_restore())

-- The model: ns per fault = fixed + per_byte * bytes, least squares over the sizes obtained up
-- to 2 MiB, each weighted by 1/ns^2 (by its relative error: unweighted, the 2 MiB faults alone
-- would decide it); a 1 GiB page, if obtained, is shown against it. Fitted to the medians, and to
-- the minima: memory the host must back again makes some repetitions of the large sizes slow.
local function fit(stat)
  local pts, S = {}, { 0, 0, 0, 0, 0 }
  for _, c in ipairs(CASES) do
    local row = h:row(c.name, "per_fault")
    local x, y = c.size, row and row[stat]
    if y then pts[#pts + 1] = { c.name, x, y } end
    if y and x <= PMD then
      for i, v in ipairs { 1, x, y, x * x, x * y } do S[i] = S[i] + v / y ^ 2 end
    end
  end
  local det = S[1] * S[4] - S[2] ^ 2
  if det <= 1e-9 * S[1] * S[4] then return nil end -- fewer than two sizes
  local per_byte = (S[1] * S[5] - S[2] * S[3]) / det
  local fixed = (S[3] - per_byte * S[2]) / S[1]
  h:value("fit_fixed", fixed, "ns", { { "stat", stat }, { "per_byte_ns", per_byte } })
  h:value("fit_zeroing", 1 / per_byte, "GB/s", { { "stat", stat }, { "per_4k", 4096 * per_byte } })
  local res = {}
  for _, p in ipairs(pts) do
    local want = fixed + per_byte * p[2]
    local pct = 100 * (p[3] - want) / want
    h:value("fit_residual", p[3] - want, "ns", { { "stat", stat }, { "case", p[1] },
      { "bytes", p[2] }, { "predicted", want }, { "pct", pct }, { "in_fit", p[2] <= PMD } })
    res[#res + 1] = ("%s %s ns (%s %%)"):format(p[1], units.cell(p[3] - want, "ns"),
      units.cell(pct, "%"))
  end
  local four = fixed + 4096 * per_byte
  return ("%s ns + bytes / %s GB/s, so a 4 KiB fault is %s ns, %s %% of it fixed; residuals: %s")
    :format(units.cell(fixed, "ns"), units.cell(1 / per_byte, "GB/s"), units.cell(four, "ns"),
      units.cell(100 * fixed / four, "%"), table.concat(res, ", "))
end
local medians, minima = fit("median"), fit("min")
if medians then
  h:note(("Model, ns per fault = fixed + bytes / zeroing rate, least squares over the sizes "
    .. "obtained up to 2 MiB weighted by 1/ns². Over the medians: %s. Over the minima: %s.")
    :format(medians, minima))
end
h:note("A repetition that did not get its size (pass-1 faults not bytes / size, the size's counter "
  .. "short of them, PMD or hugetlb bytes short) has its times in not_obtained (JSON), out of the "
  .. "rows.")
h:finish()
