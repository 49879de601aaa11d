-- slowpages.lua EXPERIMENT=period: the cases that decide what pass 2's slow
-- pages follow (slowperiod.lua says how), interleaved in one run. Each case
-- maps a fresh buffer, stores into every page once (pass 1, untimed), then
-- walks it twice with a timestamp around every store under ft.trace: pass 2
-- and pass 3, the same walk over the same written pages. The walks: forward
-- (the reference; the physical frame of every page is read after pass 3),
-- forward with the samples array 4 bytes off its cache lines, backward, by
-- a stride of STRIDE pages, forward 50 ms after pass 1 (a second touch
-- later in time), the null walk (stride 0: every store into page 0, as
-- many stores as pages: the clock and the vCPU with no page involved) and
-- the small set (pages 0 to SMALL_PAGES - 1 forward again and again, as
-- many stores as pages: the same loop over a working set within the
-- translation and data caches' reach); each under every THP mode asked for.
local ft = require "ft"
local slowcause = require "slowcause"
local slowperiod = require "slowperiod"
local slowrun = require "slowrun"

local slowwalks = {}

local STRIDE = 7 -- odd: consecutive stores fall on other residues of every power of two
-- The small set: 32 pages (128 KiB) of 4 KiB take half the L1 data TLB (64
-- entries on Zen 2 and 3, 72 on Zen 4) with room for the samples array's
-- page, the stack and the code, a sliver of the L2 TLB, 32 of one page-table
-- page's 512 entries (4 of its lines) and so one shadow page under PVM; with
-- THP=always they lie in one 2 MiB page. At 4 KiB apart their 32 lines
-- share one set of the L1 data cache (8 ways) but fit the L2 cache: the
-- small set is also smaller in the data caches, which it does not tell
-- apart from translation.
local SMALL_PAGES = 32
slowwalks.SMALL_PAGES = SMALL_PAGES
slowwalks.WALKS = {
  { key = "forward", label = "forward", walk = {} },
  { key = "shift", label = "samples shifted 4 bytes", walk = { shift = 4 } },
  { key = "backward", label = "backward", walk = { backward = true } },
  { key = "stride", label = ("stride %d"):format(STRIDE), walk = { stride = STRIDE } },
  { key = "pause", label = "forward, 50 ms after pass 1", walk = {}, pause = 0.05 },
  { key = "null", label = "one page stored again and again", walk = { stride = 0 } },
  { key = "small", label = ("the first %d pages again and again"):format(SMALL_PAGES),
    walk = { pages = SMALL_PAGES } },
}

local function case_name(mode, w) return ("THP=%s, %s"):format(mode, w.label) end

-- h: the harness; modes: THP modes; slow_ns, resolution_ns as slowpages.lua's.
function slowwalks.run(h, modes, slow_ns, resolution_ns)
  local pages_2m = (2 << 20) // h.page
  local opts = { slow_ns = slow_ns, resolution_ns = resolution_ns }
  local function walk_case(mode, w)
    return function(r, rep)
      local tr <close>, why = slowrun.open(h.pages)
      if not tr then return false, why end
      local b <close> = r:map(nil, { thp = mode })
      r:pass("pass1", b, "touch", 1)
      if w.pause then ft.sleep(w.pause) end
      local s, ix, ns, passes = ft.samples(b.pages), ft.samples(b.pages), 0, {}
      for pass_no = 2, 3 do
        local p = slowrun.walk_pass(tr, b, s, pass_no, w.walk, ix)
        passes[pass_no] = { p = p, m = slowrun.keep(r, rep, pass_no, p, opts) }
        ns = ns + p.ns
      end
      -- the frames after both passes: reading pagemap walks the page tables, which must not warm them for pass 2
      local frames
      if w.key == "forward" then
        local f = ft.samples(b.pages)
        if b:frames(f) then frames = f end -- not root: no frames, and the frame test is left out
      end
      for pass_no = 2, 3 do
        local p, m = passes[pass_no].p, passes[pass_no].m
        r["walk" .. pass_no] = slowperiod.set(p.samples, ix, slowcause.windows(p.samples, p.timing), m.slow, p.ns,
          pages_2m, frames)
      end
      r.frames = frames and slowperiod.all_frames(frames) or nil
      if w.walk.stride == 0 or w.walk.pages then
        -- its slow samples are all page 0's, or a few pages' again and again: no page map
        r.slow_pages = nil
        r:work(ns)
        local k = w.walk.stride == 0 and 1 or math.min(w.walk.pages, b.pages)
        r:check_byte_sum(b, 3 * k + (b.pages - k), ("pass 3 (pages 0 to %d only)"):format(k - 1))
        return
      end
      for _, page in ipairs(r.slow_pages or {}) do -- the page maps' x: the page, not the store's place in the walk
        page.j, page.index = page.index, ix[page.index + 1]
      end
      r:work(ns)
      r:check_bytes(b, 3, "pass 3")
    end
  end
  for _, mode in ipairs(modes) do
    for _, w in ipairs(slowwalks.WALKS) do
      h:case(case_name(mode, w), walk_case(mode, w), { params = { thp = mode, walk = w.key } })
    end
  end
  h:columns {
    { "pass1", "pass 1 (no per-page timer)", "ns/page" }, { "pass2", "pass 2", "ns/page" },
    { "pass3", "pass 3", "ns/page" },
    { "pass2_faults", "pass 2 faults", "faults" }, { "pass3_faults", "pass 3 faults", "faults" },
    { "pass2_slow", "pass 2 slow pages", "pages" }, { "pass3_slow", "pass 3 slow pages", "pages" },
    { "pass2_lost", "pass 2 events lost", "count" }, { "pass3_lost", "pass 3 events lost", "count" },
  }
  h:run()

  for _, case in ipairs(h.cases) do
    if #case.records > 0 then
      slowrun.values(h, case, 2, slow_ns)
      slowrun.values(h, case, 3, slow_ns)
    end
  end
  for _, mode in ipairs(modes) do
    slowwalks.decide(h, mode, modes, pages_2m, h.page)
  end
  h:note(("A page is slow above SLOW_NS = %d ns. Pass 2 and pass 3 walk the same written pages in the case's "
    .. "order; a slow page no guest event explains (no guest event, host, unknown) is decided by the walks "
    .. "(scripts/lib/slowperiod.lua): a class is named only where its control removed it or moved it as "
    .. "predicted, or by rate where a control walk showed or took away its rate, with the share of the forward "
    .. "walk's pass-2 slow pages it covers. Stride %d: pages 0, %d, ... then 1, %d, ...; the shifted samples "
    .. "array puts each 8-byte sample 4 bytes off its line. The null walk stores into page 0 as many times as "
    .. "the buffer has pages: its slow samples are the timed loop's own with one data page (the samples array "
    .. "is written as in every walk), and it names the timed loop's own gaps by rate, not page by page. The "
    .. "small set walks pages 0 to %d (%d KiB) forward again and again, as many stores as the buffer has pages: "
    .. "the same loop over a working set within the TLB's and the shadow page tables' reach (its lines share "
    .. "cache sets); the forward walk's excess over it names the working set's size by rate, not page by page, "
    .. "and does not tell the TLB, the shadow tables and the data caches apart."):format(
      slow_ns, STRIDE, STRIDE, STRIDE + 1, SMALL_PAGES - 1, SMALL_PAGES * h.page // 1024))
  h:finish()
end

-- The walks' sets of one THP mode, as slowperiod.decide takes them.
local function gather(h, mode, pages_2m)
  local x = { pages_2m = pages_2m }
  for _, w in ipairs(slowwalks.WALKS) do
    local recs = h:records(case_name(mode, w))
    if recs and #recs > 0 then
      local c = { p2 = {}, p3 = {}, frames = {}, shift = w.walk.shift, span = w.walk.pages }
      for _, r in ipairs(recs) do
        c.p2[#c.p2 + 1], c.p3[#c.p3 + 1] = r.walk2, r.walk3
        if r.frames then c.frames[#c.frames + 1] = r.frames end
      end
      x[w.key] = c
    end
  end
  return x
end

-- The verdict of one THP mode over every repetition, with THP=always's
-- forward walk as a control where it ran, as RESULT values and notes (each
-- class says in how many repetitions its control went its way: a
-- repetition alone has too few pairs of passes for the tests).
function slowwalks.decide(h, mode, modes, pages_2m, page)
  local x = gather(h, mode, pages_2m)
  if not x.forward or #x.forward.p2 == 0 then return end
  if mode ~= "always" then
    for _, m in ipairs(modes) do
      if m == "always" then x.huge = gather(h, m, pages_2m) end
    end
  end
  local d = slowperiod.decide(x)
  local reps = #x.forward.p2
  local base = { { "thp", mode }, { "reps", reps } }
  local function with(extra)
    local f = { base[1], base[2] }
    for _, kv in ipairs(extra) do f[#f + 1] = kv end
    return f
  end
  h:value("period_total", d.total, "pages", with { { "follows", d.follows or "nothing decided" } })
  for cause, n in pairs(d.guest) do
    h:value("period_guest", d.total > 0 and 100 * n / d.total or 0, "%", with { { "cause", cause }, { "pages", n } })
  end
  for _, c in ipairs(d.classes) do
    h:value("period_class", 100 * c.share, "%", with { { "class", c.name }, { "pages", c.pages },
      { "control", c.control }, { "agreed", c.agreed or "-" } })
  end
  h:value("period_unexplained", 100 * d.unexplained_share, "%", with { { "pages", d.unexplained } })
  if d.rates and d.rates.a then -- unexplained slow pages per ms of pass, forward, outside any class
    for pass_no, k in pairs { [2] = "a", [3] = "b" } do
      local n, ns = d.rates[k], d.rates[k .. "_ns"]
      local sp = d.null and d.null["p" .. pass_no] or {} -- their spread over the repetitions
      h:value("period_rate", n, "pages", with { { "pass", pass_no }, { "pass_ns", ns },
        { "per_ms", ns > 0 and 1e6 * n / ns or 0 }, { "rep_median", sp.median or "-" }, { "rep_lo", sp.lo or "-" },
        { "rep_hi", sp.hi or "-" } })
    end
  end
  local null = d.null
  if null then -- slow samples per ms of the null walk (passes 2 and 3 together), per repetition too
    local sp = null.reps or {}
    h:value("period_null_rate", null.count, "count", with { { "pass_ns", null.ns }, { "per_ms", null.per_ms },
      { "rep_median", sp.median or "-" }, { "rep_lo", sp.lo or "-" }, { "rep_hi", sp.hi or "-" },
      { "ratio", null.ratio or "-" }, { "rep_ratio", null.median and null.median < math.huge and null.median or "-" },
      { "above", null.above },
      { "pairs", null.pairs }, { "sign_p", null.sign_p } })
  end
  local small = d.small
  if small then -- slow samples per ms of the small set (passes 2 and 3 together), per repetition too
    local sp = small.reps or {}
    local function finite(q) return q and q < math.huge and q or "-" end -- a ratio over a rate of 0: none
    h:value("period_small_rate", small.count, "count", with { { "pages", small.span or 0 },
      { "kib", (small.span or 0) * page // 1024 }, { "pass_ns", small.ns },
      { "per_ms", small.per_ms }, { "rep_median", sp.median or "-" }, { "rep_lo", sp.lo or "-" },
      { "rep_hi", sp.hi or "-" }, { "to_null", finite(small.to_null) },
      { "rep_to_null", finite(small.rep_to_null) }, { "null_above", small.null_above },
      { "null_pairs", small.null_pairs }, { "null_sign_p", small.null_sign_p },
      { "p3_ratio", finite(small.p3_ratio) }, { "rep_p3_ratio", finite(small.rep_p3_ratio) },
      { "p3_above", small.p3_above }, { "p3_pairs", small.p3_pairs }, { "p3_sign_p", small.p3_sign_p } })
  end
  if d.gaps and d.gaps.median_ns then
    h:value("period_gap", d.gaps.median_ns, "ns", with { { "gaps", d.gaps.n }, { "cv", d.gaps.cv or "-" } })
  end
  for _, v in ipairs(d.verdicts) do
    h:note(("The slow pages' period, THP=%s, pass 2 over %d repetitions: %s"):format(mode, reps, v))
  end
end

return slowwalks
