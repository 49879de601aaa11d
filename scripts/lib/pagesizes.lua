-- The sizes one fault can bring in, and the plumbing around them: the
-- THP folio sizes offered, only one of them left on, a hugetlb pool's
-- pages reserved for a mapping, and whether a mapping got the size asked.
local ft = require "ft"
local stats = require "stats"

local pagesizes = {}

-- 16384 -> "16 KiB"
function pagesizes.named(bytes)
  local shift = bytes >= 1 << 30 and 30 or bytes >= 1 << 20 and 20 or 10
  return (bytes >> shift) .. ({ [10] = " KiB", [20] = " MiB", [30] = " GiB" })[shift]
end

-- The THP folio sizes offered (ft.folio_sizes), {} on a kernel without them.
function pagesizes.folios() return ft.folio_sizes() or {} end

-- The multi-size THP sizes (below the PMD size) by their knob name: the
-- names in order, and name -> the folio size ("16K" -> {kb = 16, ...}).
function pagesizes.multi_size()
  local names, by = {}, {}
  for _, f in ipairs(pagesizes.folios()) do
    if not f.pmd then
      local name = f.kb % 1024 == 0 and (f.kb // 1024) .. "M" or f.kb .. "K"
      names[#names + 1], by[name] = name, f
    end
  end
  return names, by
end

-- Only the folio size of kb for MADV_HUGEPAGE mappings: it madvise, every
-- other never (the sysfs restore puts them back at the end). true, or nil and why.
function pagesizes.only(kb)
  local ok, err = ft.set_folio(kb, "madvise")
  for _, f in ipairs(pagesizes.folios()) do
    if ok and f.kb ~= kb then ok, err = ft.set_folio(f.kb, "never") end
  end
  return ok, err
end

-- The pages of the hugetlb pool of pool_kb one mapping of bytes needs,
-- reserved (given back at the run's end); nil, or why not.
function pagesizes.reserve(pool_kb, bytes)
  local size = pool_kb << 10
  local pool, err = ft.hugetlb_pages(pool_kb)
  if not pool then return err end
  if bytes % size ~= 0 then return "MIB is not a multiple of " .. pagesizes.named(size) end
  local need = bytes // size
  local prev, now = ft.set_hugetlb_pages(pool_kb, pool.nr + need)
  if not prev then return now end
  if now == prev + need then return nil end
  ft.set_hugetlb_pages(pool_kb, prev)
  return ("the kernel granted %d of %d pages"):format(now - prev, need)
end

-- Whether a first touch of bytes got pages of size: one fault per page of
-- that size, the size's own counter up by as many (alloc nil: no counter),
-- and, where huge_bytes is given, all of the bytes in PMD or hugetlb pages.
function pagesizes.obtained(bytes, size, faults, alloc, huge_bytes)
  local want = bytes // size
  return faults == want and (alloc or want) >= want and (huge_bytes or bytes) == bytes
end

-- The page a first touch of t.bytes got, from its medians, and the faults
-- that page predicts. With a multi-size folio asked (t.folio) its faults
-- and the size's counter (t.faults, t.alloc) tell, as PTE-mapped folios
-- show no thp_bytes; otherwise the bytes in PMD pages (t.thp_bytes, t.pmd),
-- with the faults as they predict. The page is nil when mixed.
function pagesizes.page_got(t)
  if t.folio then
    local page = pagesizes.obtained(t.bytes, t.folio.bytes, t.faults, t.alloc) and t.folio.bytes
      or t.faults == t.bytes // t.page and t.page or nil
    return page, t.bytes // t.folio.bytes
  end
  local want = (t.pmd > 0 and t.thp_bytes // t.pmd or 0) + (t.bytes - t.thp_bytes) // t.page
  -- the faults must agree too: folios of a size left enabled (by a killed run) are no huge pages
  local page = t.faults == want and (t.thp_bytes == 0 and t.page or (t.thp_bytes == t.bytes and t.pmd or nil)) or nil
  return page, want
end

-- ns per fault = fixed + per_byte * bytes: least squares over the points
-- ({name, bytes, ns}) of at most upto bytes, each weighted by 1/ns^2 (by
-- its relative error: unweighted, the largest sizes alone would decide).
-- Returns fixed, per_byte and every point with its prediction
-- ({name, bytes, ns, predicted, pct, in_fit}); nil under two sizes.
function pagesizes.fit(points, upto)
  local xs, ys, ws = {}, {}, {}
  for _, p in ipairs(points) do
    if p[2] <= upto then xs[#xs + 1], ys[#ys + 1], ws[#ws + 1] = p[2], p[3], 1 / p[3] ^ 2 end
  end
  local fixed, per_byte = stats.fit_line(xs, ys, ws)
  if not fixed then return nil end
  local out = {}
  for i, p in ipairs(points) do
    local want = fixed + per_byte * p[2]
    out[i] = { name = p[1], bytes = p[2], ns = p[3], predicted = want, pct = 100 * (p[3] - want) / want,
      in_fit = p[2] <= upto }
  end
  return fixed, per_byte, out
end

return pagesizes
