-- cycles.lua's report: its table (from the raw file) and its plots (from
-- the JSON and cycle C's samples beside it), and the histogram and samples
-- helpers the script uses to leave cycle C's data for them.
local ab = require "ab"
local ft = require "ft"
local inference = require "inference"
local json = require "json"
local pagesizes = require "pagesizes"
local plots = require "plots"
local regimes = require "regimes"
local slowrun = require "slowrun"
local stats = require "stats"
local summary = require "summary"
local units = require "units"

local report = {}
local shown = summary.shown

-- An AB run's sides: {case suffix, what the side ran}; one side, unnamed, for any other run.
local function sides_of(doc)
  local run_ab = type(doc.ab) == "table" and doc.ab
  if not run_ab then return { { "", nil } } end
  local function knobs(k) return k ~= nil and k ~= "" and k or "the run's own knobs" end
  return { { "", "side A: " .. knobs(run_ab.a) }, { " [B]", "side B: " .. knobs(run_ab.b) } }
end

-- Cycle C's per-page histograms: HIST_PER_OCTAVE bins per doubling from
-- 2^HIST_FROM ns (bin 1 holds everything below, the last everything above).
report.HIST_PER_OCTAVE, report.HIST_FROM, report.HIST_BINS = 4, 3, 4 * 18 + 2

-- The histogram of a samples object: a list of HIST_BINS counts.
function report.histogram(s)
  return s:histogram(report.HIST_PER_OCTAVE, report.HIST_FROM, report.HIST_BINS)
end

-- The upper edge of histogram bin k in ns.
local function edge(k) return 2 ^ (report.HIST_FROM + (k - 1) / report.HIST_PER_OCTAVE) end

-- A samples object as little-endian int32 ns, one per page, in page order,
-- and what its sidecar says it is
-- (in C: read from Lua, s[i] by s[i], a 1 GiB pass took 45 ms).
function report.samples_about(pass)
  return ("cycle C %s, the last repetition's ns per page (store + one timestamp), one little-endian "
    .. "int32 a page in page order"):format(pass)
end

function report.pack_samples(s, pass)
  return s:pack_i32(), report.samples_about(pass)
end

-- What cycle C keeps of a pass's samples in its record, each field with the
-- pass's name before it (pass1_median_page ...): the figures of the last
-- repetition's are those of the samples file, which claims checks by them.
function report.sample_figures(s, slow_ns)
  local runs, longest = s:runs_above(slow_ns)
  return { median_page = s:median(), p90 = s:percentile(90), p99 = s:percentile(99),
    slow_pct = 100 * s:count_above(slow_ns) / #s, slow_mean = s:mean_above(slow_ns), runs = runs, longest = longest,
    hist = report.histogram(s) }
end

-- Unpacked CHUNK values a call: a call per sample took 0.3 s a 1 GiB pass.
local CHUNK = 4096

local formats = setmetatable({}, { __index = function(t, k) t[k] = "<" .. ("i4"):rep(k); return t[k] end })

-- The k samples from the first-th on, as a list.
local function unpack_samples(bytes, first, k)
  if k <= CHUNK then
    local out = { string.unpack(formats[k], bytes, 4 * first - 3) }
    out[k + 1] = nil -- string.unpack's next position
    return out
  end
  local out = {}
  for at = 0, k - 1, CHUNK do
    table.move(unpack_samples(bytes, first + at, math.min(CHUNK, k - at)), 1, math.min(CHUNK, k - at), at + 1, out)
  end
  return out
end

-- A samples file's bytes as a samples object, or nil when they are not whole int32s.
function report.unpack_samples(bytes)
  local n = #bytes // 4
  if n == 0 or #bytes % 4 ~= 0 then return nil end
  local s = ft.samples(n)
  for first = 1, n, CHUNK do
    local k = math.min(CHUNK, n - first + 1)
    for i, v in ipairs(unpack_samples(bytes, first, k)) do s[first + i - 1] = v end
  end
  return s
end

-- Where the slow pages sit: the pages cut into at most 1024 bins, each drawn
-- as its min, median and max, with the pages above SLOW_NS counted per bin.
local function page_map(list, doc, dir, prefix, pass)
  local cycles = type(doc.knobs) == "table" and doc.knobs.CYCLES
  if type(cycles) == "string" and not cycles:find("C", 1, true) then return end -- no cycle C, no samples
  local path = ("%s/%sC-%s-samples.i32"):format(dir, prefix, pass)
  local bytes = plots.read(path)
  if not bytes or #bytes ~= 4 * doc.pages then
    io.stderr:write(("plots: %s's page map skipped: %s %s\n"):format(pass, path,
      bytes and ("holds %d samples, the run had %d pages"):format(#bytes // 4, doc.pages) or "is missing"))
    return
  end
  local n = #bytes // 4
  local per_bin = math.max(1, -(-n // 1024))
  local slow = doc.knobs.SLOW_NS
  local lines = { ("# page  min_ns  median_ns  max_ns  pages_above_%d_ns  (bins of %d pages, %d pages, the last "
    .. "repetition's samples)"):format(slow, per_bin, n) }
  for first = 1, n, per_bin do -- each bin unpacked and sorted once: its min, median, max and pages above from that
    local k = math.min(per_bin, n - first + 1)
    local bin = unpack_samples(bytes, first, k)
    table.sort(bin)
    local lo, hi = 1, k + 1 -- the first value above SLOW_NS, by bisection
    while lo < hi do
      local mid = (lo + hi) // 2
      if bin[mid] > slow then hi = mid else lo = mid + 1 end
    end
    lines[#lines + 1] = ("%d %d %s %d %d"):format(first - 1, bin[1], units.exact(stats.median_sorted(bin)),
      bin[k], k + 1 - lo)
  end
  local name = ("%sC-%s-pages"):format(prefix, pass)
  local title = ("cycle C, %s: ns per page against page index (%s)"):format(pass, doc.run)
  local sides = sides_of(doc)
  if #sides > 1 then -- both sides store into one samples array: the file holds the side that ran last
    local last = ab.order(math.max(#plots.records(doc, "C"), 1))[2] == "A" and sides[1] or sides[2]
    title = ("%s; %s only: the samples file holds the side that ran last"):format(title, last[2])
  end
  -- The right axis spans what a bin can hold (autoscaled, a constant count
  -- drew a flat line mid-plot on a made-up scale), and the key sits above the
  -- plot, where it cannot cover the x axis's label; a tenth more on the right,
-- so a bin that is all slow pages is a line below the frame, not on it.
  plots.add(list, name, title, table.concat(lines, "\n") .. "\n", ([[
set logscale y
set yrange [10:*]
set key above horizontal
set xlabel "page index (bins of %d pages; the last repetition's samples)"
set ylabel "ns per page (store + one timestamp)"
set y2label "pages above SLOW\\_NS in the bin (of %d)"
set y2range [0:%g]
set xrange [0:%d]
set y2tics
set ytics nomirror
set arrow from graph 0, first %d to graph 1, first %d nohead dt 2 lc rgb "#aa0000"
set label "SLOW\\_NS = %d ns" at graph 0.01, first %d offset 0,0.6 tc rgb "#aa0000"
plot "%s.dat" using 1:5 axes x1y2 with steps lw 0.8 lc rgb "#e8a060" title "pages above SLOW\\_NS (right)", \
  "" using 1:2:4 with filledcurves fs transparent solid 0.6 lc rgb "#9db4dd" title "min to max of each bin", \
  "" using 1:3 with lines lw 1.5 lc rgb "#1f4e99" title "median of each bin"]])
    :format(per_bin, per_bin, 1.1 * per_bin, n, slow, slow, slow, slow, name))
end

-- The distribution of per-page time over all repetitions, from the
-- histograms, beside a THP=always run in the same directory.
local function page_cdf(list, doc, dir, prefix)
  local runs = {} -- {run, case, title}: an AB run's two sides, else the run and a THP=always run beside it
  for _, side in ipairs(sides_of(doc)) do
    runs[#runs + 1] = { doc, "C" .. side[1], side[2] and side[2] .. " " or "" }
  end
  if prefix == "" and #runs == 1 then
    local thp = json.decode(plots.read(dir .. "/thp-always-results.json") or "null")
    if thp then runs[2] = { thp, "C", "THP=always " } end
  end
  local columns, titles = {}, {}
  for _, run in ipairs(runs) do
    for _, pass in ipairs { "pass1", "pass2" } do
      local total, counts = 0, {}
      for k = 1, report.HIST_BINS do counts[k] = 0 end
      for _, r in ipairs(plots.records(run[1], run[2])) do
        for k, c in ipairs(r[pass .. "_hist"] or {}) do counts[k] = counts[k] + c; total = total + c end
      end
      if total > 0 then
        local cum, col = 0, {}
        for k = 1, report.HIST_BINS do cum = cum + counts[k]; col[k] = cum / total end
        columns[#columns + 1] = col
        titles[#titles + 1] = run[3] .. pass
      end
    end
  end
  if #columns == 0 then return end
  local lines = { "# ns (upper edge of the bin)  " .. table.concat(titles, "  ") .. "  (share of pages at or below)" }
  for k = 1, report.HIST_BINS - 1 do
    local cells = { units.exact(edge(k)) }
    for _, col in ipairs(columns) do cells[#cells + 1] = units.exact(col[k]) end
    lines[#lines + 1] = table.concat(cells, " ")
  end
  local curves = {}
  for i, t in ipairs(titles) do
    curves[#curves + 1] = ('"%s.dat" using 1:%d with steps lw 1.5 title %s'):format(prefix .. "C-cdf", i + 1,
      plots.quoted(t))
  end
  plots.add(list, prefix .. "C-cdf", ("cycle C: distribution of per-page time, all repetitions (%s)"):format(doc.run),
    table.concat(lines, "\n") .. "\n", ([[
set logscale x
set xlabel "ns per page (store + one timestamp)"
set ylabel "share of pages at or below"
set yrange [0:1]
set key bottom right
plot ]]) .. table.concat(curves, ", \\\n  "))
end

local SERIES = { { "A", "mmap" }, { "A", "pass1" }, { "A", "pass2" }, { "A", "pass2r" }, { "A", "fill" },
  { "A", "munmap" }, { "B", "fill" }, { "C", "pass1" }, { "C", "pass2" }, { "D", "malloc" }, { "D", "touch1" },
  { "D", "touch2" }, { "D", "free" } }

-- Every pass over the repetitions in run order, noisy ones marked; an AB
-- run's two sides in each panel, side B in orange.
local SIDE_COLOURS = { "#1f4e99", "#e08000" }

local function rep_series(list, doc, prefix)
  local blocks, panels, sides = {}, {}, sides_of(doc)
  for _, s in ipairs(SERIES) do
    local row = plots.row(doc, s[1], s[2])
    if row then
      local panel = { title = ("%s %s, %s"):format(s[1], s[2], row.unit), index = {} }
      for i, side in ipairs(sides) do
        local case = s[1] .. side[1]
        local r = plots.row(doc, case, s[2])
        if r then
          local records = plots.records(doc, case)
          local lines = { ("# %s %s (%s)%s: rep value noisy"):format(s[1], s[2], row.unit,
            side[2] and ", " .. side[2] or "") }
          for k, v in ipairs(r.values) do
            lines[#lines + 1] = ("%d %s %d"):format(k, units.exact(v), records[k].noise.flagged and 1 or 0)
          end
          blocks[#blocks + 1] = table.concat(lines, "\n")
          panel.index[i] = #blocks - 1
        end
      end
      panels[#panels + 1] = panel
    end
  end
  if #panels == 0 then return end
  local cols = 3
  local rows = -(-#panels // cols)
  local what = #sides > 1 and ("blue: %s; orange: %s; red: flagged as noisy"):format(sides[1][2], sides[2][2])
    or "red: flagged as noisy"
  local body = { ("set multiplot layout %d,%d title %s"):format(rows, cols,
    plots.quoted(("every pass over the repetitions in run order; %s (%s)"):format(what, doc.run))),
    "unset key", "set xlabel \"repetition\"", "set xtics 1 format \"%g\"" }
  for _, p in ipairs(panels) do
    body[#body + 1] = ("set title %s"):format(plots.quoted(p.title))
    local curves = {}
    for i in ipairs(sides) do
      local at = p.index[i]
      if at then
        curves[#curves + 1] = ('%s index %d using 1:2 with linespoints pt 7 ps 0.5 lc rgb "%s", '
          .. '"" index %d using 1:($3 == 1 ? $2 : 1/0) with points pt 7 ps 0.9 lc rgb "#cc0000"'):format(
          #curves == 0 and ('"%s.dat"'):format(prefix .. "reps") or '""', at, SIDE_COLOURS[i], at)
      end
    end
    body[#body + 1] = "plot " .. table.concat(curves, ", ")
  end
  body[#body + 1] = "unset multiplot"
  plots.add(list, prefix .. "reps", "repetitions", table.concat(blocks, "\n\n\n") .. "\n", table.concat(body, "\n"),
    1100, 260 * rows)
end

-- What the plots need of a run's JSON beyond every script's fields: nil, or why not.
function report.check(doc)
  if math.type(doc.pages) ~= "integer" then return "has no pages (an integer), which cycle C's page maps need" end
  return nil
end

function report.plots(list, doc, dir, prefix)
  page_map(list, doc, dir, prefix, "pass1")
  page_map(list, doc, dir, prefix, "pass2")
  page_cdf(list, doc, dir, prefix)
  rep_series(list, doc, prefix)
  slowrun.page_maps(list, doc, prefix) -- CAUSES=1: cycle C's slow pages coloured by cause
end

-- The columns, what a row of the table is: the timed steps (each with its
-- faults), then what cycle A learns of THP, cycle C of the pages and cycle D of malloc.
local TIMED = {
  { "mmap", "mmap (the call alone)", "us" }, { "pass1", "pass 1: first touch", "ns/page" },
  { "pass2", "pass 2", "ns/page" }, { "pass2r", "pass 2 repeated", "ns/page" },
  { "fill", "fill", "GB/s" }, { "munmap", "munmap (the call alone)", "ns/page" },
  { "malloc", "malloc (the call alone)", "us" }, { "touch1", "touch 1 after malloc", "ns/page" },
  { "touch2", "touch 2", "ns/page" }, { "free", "free (the call alone)", "us" },
}
local PAGES = {
  { "median_page", "median page", "ns" }, { "p90", "90th percentile page", "ns" },
  { "p99", "99th percentile page", "ns" }, { "slow_pct", "pages above SLOW_NS", "%" },
  { "slow_mean", "their mean", "ns" }, { "runs", "runs they form", "count" }, { "longest", "longest run", "pages" },
}
local COLUMNS = {
  { "thp_bytes", "bytes in huge pages", "bytes" }, { "thp_fault_alloc", "thp_fault_alloc", "count" },
  { "folio_alloc", "the folio size's anon_fault_alloc", "count" },
  { "same_block", "malloc gave the address just freed", "count" },
}
for _, c in ipairs(TIMED) do
  COLUMNS[#COLUMNS + 1] = c
  COLUMNS[#COLUMNS + 1] = { c[1] .. "_faults", c[2] .. ": faults", "faults" }
end
for _, pass in ipairs { "pass1", "pass2" } do
  for _, c in ipairs(PAGES) do COLUMNS[#COLUMNS + 1] = { pass .. "_" .. c[1], pass .. ", " .. c[2], c[3] } end
end
report.COLUMNS = COLUMNS

-- The figures derived from the rows, before the files are written: the
-- stall threshold and the passes above it, the page cycle A obtained,
-- cycle C's SLOW_NS and how often cycle D got its block back.
-- auto: pass 2 repeated's floor plus 2.5 % of the pages at pass 1's cost
local function stall_threshold(h)
  if h.cfg.STALL_NS ~= "auto" then return h.cfg.STALL_NS, "STALL_NS" end
  for _, c in ipairs { { "A", "pass1", "pass2r" }, { "D", "touch1", "touch2" } } do
    local first, floor = h:row(c[1], c[2]), h:row(c[1], c[3])
    if first and floor then return floor.min + 0.025 * first.min, "auto" end
  end
end

local FAULT_FREE = { { "A", "pass1" }, { "A", "pass2" }, { "A", "pass2r" }, { "D", "touch1" }, { "D", "touch2" } }

function report.derive(h)
  local cfg = h.cfg
  local folio = select(2, pagesizes.multi_size())[cfg.THP]
  local threshold, threshold_from = stall_threshold(h)
  if threshold then
    h:value("stall_threshold", threshold, "ns/page", { { "from", threshold_from } })
    for _, c in ipairs(FAULT_FREE) do
      local row, faults = h:row(c[1], c[2]), h:row(c[1], c[2] .. "_faults")
      if row and faults.median == 0 then
        local above = 0
        for _, x in ipairs(row.values) do if x > threshold then above = above + 1 end end
        h:value("stalls", above, "count",
          { { "case", c[1] }, { "column", c[2] }, { "of", row.n }, { "worst", row.max } })
      end
    end
  end

  local huge = h:row("A", "thp_bytes")
  if huge then -- the page obtained (pagesizes.page_got)
    local faults, alloc = h:row("A", "pass1_faults").median, folio and h:row("A", "folio_alloc").median
    local page, want = pagesizes.page_got { bytes = h.bytes, page = h.page, pmd = h.machine.thp_pmd_size,
      thp_bytes = huge.median, folio = folio, faults = faults, alloc = alloc }
    h:value("thp_page", page or 0, "bytes", { { "asked", cfg.THP }, { "mixed", page == nil or nil },
      { "bytes", h.bytes }, { "thp_bytes", huge.median }, { "faults_expected", want },
      { "pass1_faults", faults }, { "folio_kb", folio and folio.kb }, { "folio_alloc", alloc },
      { "thp_fault_alloc", not folio and h:row("A", "thp_fault_alloc").median or nil } })
  end

  if h:row("C", "pass1") then h:value("slow_ns", cfg.SLOW_NS, "ns", { { "pages", h.pages } }) end
  for _, case in ipairs(cfg.CAUSES and h.cases or {}) do -- cycle C traced: its slow pages by cause
    if case.records[1] and case.records[1].slow_pages then
      for pass_no = 1, 2 do slowrun.values(h, case, pass_no, cfg.SLOW_NS) end
    end
  end
  local same = h:row("D", "same_block")
  if same then h:value("same_block", stats.sum(same.values), "count", { { "of", same.n } }) end
end

local CYCLE_ROWS = { -- cycle, column, and a label where the column's own would not tell
  { "A", "mmap" }, { "A", "pass1" }, { "A", "pass2" }, { "A", "pass2r" },
  { "A", "fill", "pass 3: fill of touched pages" }, { "A", "munmap" }, { "B", "fill", "fill of a fresh mapping" },
  { "D", "malloc" }, { "D", "touch1" }, { "D", "touch2" }, { "D", "free" },
}

local RATIOS = {
  { "first_touch", "pass 1 / pass 2 repeated, ns per page" },
  { "fill_bandwidth", "touched fill / fresh fill, GB/s" },
  { "fresh_fill_time", "fresh fill / (pass 1 + touched fill), time" },
  { "malloc_first_touch", "first touch after malloc / first touch after mmap, ns per page" },
  { "munmap_share", "munmap / pass 1, ns per page" },
}

local function faults(ix, case, column)
  local f = ix.row(case, column .. "_faults")
  if not f then return "–" end
  return ("%s / %s"):format(units.cell(f.median, "faults"), units.cell(f.max, "faults"))
end

local function stalls_of(ix, case, column)
  for _, v in ipairs(ix.values.stalls or {}) do
    if v.case == case and v.column == column then
      return ("%s of %s (worst %s ns/page)"):format(units.cell(v.x, "count"), units.cell(v.of, "count"),
        units.cell(v.worst, "ns/page"))
    end
  end
  return "–"
end

-- The page cycle A obtained (thp_page), for side A alone in an AB run.
local function pages_obtained(ix, put, ab_a)
  local thp = ix.value("thp_page")
  local obtained = thp
    and (ab_a and "side A: " .. (ab_a ~= "" and ab_a or "the run's own knobs") or "THP=" .. thp.asked)
  if thp and thp.folio_kb then -- multi-size THP: PTE-mapped folios, told by the faults and the size's counter
    -- a mixed page predicts no fault count: one size's figure would read as the run's
    put(("Pages obtained (cycle A, %s): pass 1 took %s faults and the %s kB size's anon_fault_alloc rose "
      .. "by %s per rep (medians), so the page is %s."):format(
      obtained, units.cell(thp.pass1_faults, "faults"), units.cell(thp.folio_kb, "count"),
      units.cell(thp.folio_alloc, "count"), thp.mixed and "mixed (no fault count follows from it)"
      or ("%s bytes; the faults %s kB folios predict for pass 1: %s"):format(units.cell(thp.x, "bytes"),
        units.cell(thp.folio_kb, "count"), units.cell(thp.faults_expected, "faults"))))
    put("")
  elseif thp then
    put(("Pages obtained (cycle A, %s): %s of %s bytes in huge pages at the median, so the page is %s; "
      .. "thp_fault_alloc per rep (median): %s."):format(obtained,
      units.cell(thp.thp_bytes, "bytes"), units.cell(thp.bytes, "bytes"),
      thp.mixed and "mixed (no fault count follows from it)" or ("%s bytes; the faults this predicts for pass 1: %s")
        :format(units.cell(thp.x, "bytes"), units.cell(thp.faults_expected, "faults")),
      units.cell(thp.thp_fault_alloc, "count")))
    put("")
  end
end

-- Cycle C's pages: the whole pass against its pages' percentiles and slow pages.
local function cycle_c(ix, put)
  if ix.row("C", "pass1") then
    put("Cycle C, one timestamp per page (each sample is the store plus one clock reading):")
    put("")
    put(("| pass | whole pass ns/page | faults (median / max) | median page ns | p90 page ns | p99 page ns "
      .. "| pages above %s ns, %% (min – max over reps) | of them, more than the pass's faults | their mean ns "
      .. "| runs they form | longest run, pages (median / worst) |"):format(units.cell(ix.value("slow_ns").x, "ns")))
    put("|---|---|---|---|---|---|---|---|---|---|---|")
    for _, p in ipairs { "pass1", "pass2" } do
      local function row(k) return ix.row("C", p .. "_" .. k) end
      -- A slow page beyond the pass's fault count cannot have been a fault: it is labelled as such.
      local pages = ix.row("C", p .. "_longest") and ix.value("slow_ns").pages
      local slow_pages = pages and row("slow_pct").median * pages / 100
      local unexplained = slow_pages and math.max(0, slow_pages - ix.row("C", p .. "_faults").median)
      put(("| %s | %s | %s | %s | %s | %s | %s – %s | %s | %s | %s | %s / %s |"):format(ix.row("C", p).label,
        shown(ix.row("C", p)), faults(ix, "C", p), shown(row("median_page")), shown(row("p90")),
        shown(row("p99")),
        units.cell(row("slow_pct").min, "%"), units.cell(row("slow_pct").max, "%"),
        unexplained and (unexplained == 0 and "none" or ("%s pages (median): not faults"):format(
          units.cell(unexplained, "pages"))) or "–",
        shown(row("slow_mean")),
        units.cell(row("runs").median, "count"), units.cell(row("longest").median, "pages"),
        units.cell(row("longest").max, "pages")))
    end
    put("")
  end
end

-- The table, from the raw file alone.
function report.table(raw)
  local ix = summary.index(raw)
  local out = summary.head(ix)
  local function put(s) out[#out + 1] = s end
  local ghz = ix.value("clock_ghz")
  out[2] = ("%s; clock estimate %s GHz (%s); %s."):format(ix.meta.machine, units.cell(ghz.x, "GHz"), ghz.source,
    ix.meta.clock)
  put("| cycle | pass | unit | median [lo, hi] | min | cv % | faults (median / max) | cycles/page (of the min) "
    .. "| reps above stall threshold (worst) | noisy reps |")
  put("|---|---|---|---|---|---|---|---|---|---|")
  -- an AB run: both sides' rows, each labelled with its side's knobs (the
  -- cycle letter alone would read as a side)
  local ab_a, ab_b = raw:match('\nknobs: [^\n]*AB="([^"|]*)|([^"|]*)"')
  if ab_a then ab_a, ab_b = ab_a:match("^%s*(.-)%s*$"), ab_b:match("^%s*(.-)%s*$") end
  local sides = ab_a and { { "", "side A: " .. (ab_a ~= "" and ab_a or "the run's own knobs") },
    { " [B]", "side B: " .. (ab_b ~= "" and ab_b or "the run's own knobs") } } or { { "", nil } }
  for _, cr in ipairs(CYCLE_ROWS) do
    for _, side in ipairs(sides) do
      local case = cr[1] .. side[1]
      local r = ix.row(case, cr[2])
      if r then
        put(("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(
          side[2] and ("%s (%s)"):format(cr[1], side[2]) or cr[1], cr[3] or r.label, r.unit, shown(r),
          units.cell(r.min, r.unit), units.cell(r.cv, "%"), faults(ix, case, cr[2]),
          r.unit == "ns/page" and units.cell(r.min * ghz.x, "cycles") or "–", stalls_of(ix, case, cr[2]),
          summary.noisy(ix, case)))
      end
    end
  end
  put("")
  local t = ix.value("stall_threshold")
  if t then
    put(("Stall threshold: %s ns/page (%s), for the passes that take no counted faults."):format(
      units.cell(t.x, "ns/page"), t.from == "auto" and "pass 2 repeated's min plus 2.5 % of pass 1's min"
      or "STALL_NS"))
    put("")
  end
  pages_obtained(ix, put, ab_a)
  cycle_c(ix, put)
  local same = ix.value("same_block")
  if same then
    put(("Cycle D: malloc returned the address just freed in %s of %s reps; malloc %s us, free %s us (medians).")
      :format(units.cell(same.x, "count"), units.cell(same.of, "count"),
      units.cell(ix.row("D", "malloc").median, "us"), units.cell(ix.row("D", "free").median, "us")))
    put("")
  end
  local lines = {}
  for _, r in ipairs(RATIOS) do
    local v = ix.value(r[1])
    if v then
      lines[#lines + 1] = ("- %s: **%s [%s, %s]**%s"):format(r[2], units.cell(v.x, "ratio"),
        units.cell(v.lo, "ratio"), units.cell(v.hi, "ratio"),
        v.of_minima and (" (of the minima: %s)"):format(units.cell(v.of_minima, "ratio")) or "")
    end
  end
  if #lines > 0 then
    put("Headline, each ratio taken within every repetition (median [lo, hi] over the repetitions):")
    put("")
    for _, l in ipairs(lines) do put(l) end
    put("")
  end
  for _, line in ipairs(slowrun.tables(ix)) do put(line) end -- CAUSES=1: cycle C's slow pages by cause
  return summary.tail(ix, out)
end

-- The findings the published pages state from cycles.lua's runs, for them
-- and a user's own runs. say: the published pages' wording (round, interval,
-- vinterval, held, row, value), given by whoever prints them.

-- Cycle C's first touch against cycle A's in the same repetitions (the
-- headline quotes cycle A, untimed per page; C times each page): in how many
-- repetitions C was lower, of how many.
function report.c_below_a(doc, say)
  local a, cc = say.row(doc, "A", "pass1").values, say.row(doc, "C", "pass1").values
  local lower, n = 0, 0
  for i = 1, math.min(#a, #cc) do
    if type(a[i]) == "number" and type(cc[i]) == "number" then
      n = n + 1
      if cc[i] < a[i] then lower = lower + 1 end
    end
  end
  return lower, n
end

-- Cycle C against cycle A in each run, as the published run's count with the
-- repeats' beside it, and what a sign test per run lets one conclude.
function report.c_against_a(runs, say)
  local counts, held_in = {}, 0
  for i, d in ipairs(runs) do
    local lower, n = report.c_below_a(d, say)
    counts[i] = ("%d of %d"):format(lower, n)
    if inference.sign_test(lower, n) < 0.05 and lower > n / 2 then held_in = held_in + 1 end
  end
  local repeats = #runs > 1 and ("; in the repeats %s"):format(table.concat(counts, " and ", 2)) or ""
  local conclusion = held_in == #runs and "lower by a sign test in every run, for a reason not explained"
    or held_in == 0 and "no difference held_in by a sign test in any run"
    or ("lower by a sign test in %d of the %d runs only, so not a difference that carries from run to run")
      :format(held_in, #runs)
  return ("in the published run C was lower in %s repetitions%s: %s"):format(counts[1], repeats, conclusion)
end

-- Cycle C's first touch against cycle A's in one run (and, given runs, in
-- how many of them C was lower in every repetition).
function report.c_sentence(doc, say, runs)
  local lower, n = report.c_below_a(doc, say)
  local all_lower = 0
  for _, d in ipairs(runs or {}) do
    local k, m = report.c_below_a(d, say)
    if k == m then all_lower = all_lower + 1 end
  end
  local p = inference.sign_test(lower, n)
  return ("Cycle C's first touch, each page timed, cost %s ns per %d KiB in the same repetitions, below cycle A's "
    .. "in %d of %d%s; %s.")
    :format(say.interval(say.row(doc, "C", "pass1")), doc.page_size // 1024, lower, n,
      runs and (", and in every repetition %s"):format(say.held(all_lower, #runs)) or "",
      p < 0.05 and ("why the two cycles differ is not explained (sign test p = %.2g)"):format(p)
        or ("no difference between them shown (sign test p = %.2g)"):format(p))
end

-- A run's repetitions of one row on either side of its stall threshold, and
-- in how many of each the guest counted a CPU migration.
local function stalls_migrated(doc, case, column, say)
  local row, value = say.row, say.value
  local threshold, records = value(doc, "stall_threshold").x, {}
  for _, c in ipairs(doc.reps) do if c.case == case then records = c.records end end
  local out = { stalled = 0, with = 0, other = 0, other_with = 0 }
  for i, x in ipairs(row(doc, case, column).values) do
    local moved = (((records[i] or {}).noise or {}).migrations or 0) > 0 and 1 or 0
    if x > threshold then out.stalled, out.with = out.stalled + 1, out.with + moved
    else out.other, out.other_with = out.other + 1, out.other_with + moved end
  end
  local counted = value(doc, "stalls", "column", column).x
  if out.stalled ~= counted then
    error(("publish: %s: %s %s: %d repetitions above the threshold, the run counted %d stalls"):format(doc.path, case,
      column, out.stalled, counted), 0)
  end
  return out
end

-- What the guest counted in a run's stalled repetitions (the published
-- pages quote THP=always's).
function report.stalls_finding(doc, say)
  local a, d = stalls_migrated(doc, "A", "pass2", say), stalls_migrated(doc, "D", "touch2", say)
  return ("With `THP=%s` (its threshold at %s ns per page) pass 2 stalled in %d of %d repetitions and the "
    .. "second touch in %d: the guest counted a CPU migration in %d of the %d stalled repetitions of cycle A and in "
    .. "%d of its %d others, in %d of the %d stalled of cycle D and in %d of its %d others (a count covers the "
    .. "repetition of the cycle, not the pass). Why they stalled is not explained.")
    :format(tostring((doc.knobs or {}).THP), say.round(say.value(doc, "stall_threshold").x), a.stalled,
      a.stalled + a.other, d.stalled, a.with, a.stalled, a.other_with, a.other, d.with, d.stalled, d.other_with,
      d.other)
end

-- The findings on the default runs, a paragraph each: c holds runs (the
-- published run first, then its repeats) as pub, others and n, their size
-- (pages, kib, mib), compare.lua's verdicts v and the THP=always run always;
-- each paragraph leaves on c the counts later ones quote. say: the published
-- pages' wording (round, interval, vinterval, held, count, list, ms, row,
-- value, verdict), given by whoever prints them.
local F = {}

-- " (x, y in the repeats)": a row's or a value's medians in the repeats.
local function medians(c, say, case, column)
  return #c.others == 0 and "" or (" (%s in the repeats)"):format(say.list(c.others, function(d)
    return say.round(say.row(d, case, column).median) end))
end
local function vmedians(c, say, name)
  return #c.others == 0 and "" or (" (%s in the repeats)"):format(say.list(c.others, function(d)
    return say.round(say.value(d, name).x) end))
end

-- The seed's figures (macOS, 16 KiB pages), quoted from its write-up.
local SEED = { first_touch_ratio = 155, fill_ratio = 5.0 }

function F.first_touch(c, say)
  local p1 = say.row(c.pub, "A", "pass1")
  c.p1 = p1
  c.one_fault = say.count(c.runs, function(d)
    local r = say.row(d, "A", "pass1_faults")
    return r.min == d.pages and r.max == d.pages
  end)
  return ("Pass 1 took one fault per page, %d faults for the %d MiB, in every repetition, %s. "
    .. "Its median cost was **%s ns per %d KiB page** in the published run%s, the interval in brackets; "
    .. "%s s to bring in the whole buffer at the median. %s. This is cycle A's pass 1, which every figure "
    .. "called the first touch on this page quotes. %s")
    :format(c.pages, c.mib, say.held(c.one_fault, c.n), say.interval(p1), c.kib, medians(c, say, "A", "pass1"),
      say.round(p1.median * c.pages / 1e9), say.verdict(c.v, "A pass1"), report.c_sentence(c.pub, say, c.runs))
end

function F.headline_ratio(c, say)
  c.ft_ratio = say.value(c.pub, "first_touch")
  c.above = say.count(c.runs, function(d) return say.value(d, "first_touch").lo > 100 end)
  local seed_in = say.count(c.runs, function(d)
    local x = say.value(d, "first_touch")
    return x.lo <= SEED.first_touch_ratio and SEED.first_touch_ratio <= x.hi
  end)
  return ("Taken within each repetition, pass 1 cost **%s times** pass 2 repeated in the "
    .. "published run%s: more than a hundred later passes at the interval's lower end %s. The seed's %s lies "
    .. "inside the interval %s. Pass 2 repeated: %s ns per page; %s.")
    :format(say.vinterval(c.ft_ratio), vmedians(c, say, "first_touch"), say.held(c.above, c.n),
      say.round(SEED.first_touch_ratio), say.held(seed_in, c.n), say.interval(say.row(c.pub, "A", "pass2r")),
      say.verdict(c.v, "A pass2r"))
end

function F.fill(c, say)
  local pub, n = c.pub, c.n
  local fill = say.value(pub, "fill_bandwidth")
  local fill_above = say.count(c.runs, function(d) return say.value(d, "fill_bandwidth").lo > 1 end)
  local fresh = say.value(pub, "fresh_fill_time")
  local fresh_below = say.count(c.runs, function(d) return say.value(d, "fresh_fill_time").hi < 1 end)
  return ("Filling touched pages ran at %s GB/s, filling a fresh mapping (its %d faults inside) at %s "
    .. "GB/s; within each repetition the touched fill was **%s times** the fresh one%s, above 1 %s "
    .. "(the seed: %s). The fresh fill took %s of the time of pass 1 plus the touched fill%s: below 1 "
    .. "(faulting while writing is cheaper than faulting first and writing after) %s. Touched fill: %s; "
    .. "fresh fill: %s.")
    :format(say.interval(say.row(pub, "A", "fill")), say.row(pub, "B", "fill_faults").median,
      say.interval(say.row(pub, "B", "fill")),
      say.vinterval(fill), vmedians(c, say, "fill_bandwidth"), say.held(fill_above, n), say.round(SEED.fill_ratio),
      say.vinterval(fresh), vmedians(c, say, "fresh_fill_time"), say.held(fresh_below, n), say.verdict(c.v, "A fill"),
      say.verdict(c.v, "B fill"))
end

function F.stalls(c, say)
  local pub, n, runs = c.pub, c.n, c.runs
  local function stalls(d, column) return say.value(d, "stalls", "column", column) end
  local threshold = say.value(pub, "stall_threshold")
  local stalled = say.count(runs, function(d) return stalls(d, "pass2").x > 0 end)
  local clean2r = say.count(runs, function(d) return stalls(d, "pass2r").x == 0 end)
  return ("With the stall threshold at %s ns per page, pass 2 had a stalled repetition %s (%s of %d; "
    .. "the worst at %s ns per page), the second touch after malloc %s (%s; the worst at %s), and pass 2 "
    .. "repeated stayed below it in every repetition, %s. Passes 2 and the second touch took no counted fault "
    .. "in any repetition %s. Cycle C: %s %% of "
    .. "pass 2's pages took more than %d ns, %s ns on average.")
    :format(say.round(threshold.x), say.held(stalled, n),
      say.list(runs, function(d) return tostring(stalls(d, "pass2").x) end),
      stalls(pub, "pass2").of, say.list(runs, function(d) return say.round(stalls(d, "pass2").worst) end),
      say.held(say.count(runs, function(d) return stalls(d, "touch2").x > 0 end), n),
      say.list(runs, function(d) return tostring(stalls(d, "touch2").x) end),
      say.list(runs, function(d) return say.round(stalls(d, "touch2").worst) end), say.held(clean2r, n),
      say.held(say.count(runs, function(d)
        return say.row(d, "A", "pass2_faults").max == 0 and say.row(d, "D", "touch2_faults").max == 0 end), n),
      say.interval(say.row(pub, "C", "pass2_slow_pct")), say.value(pub, "slow_ns").x,
      say.interval(say.row(pub, "C", "pass2_slow_mean")))
    .. " " .. report.stalls_finding(c.always, say)
end

function F.malloc(c, say)
  local pub, n, runs = c.pub, c.n, c.runs
  local same = say.value(pub, "same_block")
  local all_same = say.count(runs, function(d) local s = say.value(d, "same_block"); return s.x == s.of end)
  -- every page faulted in once: all but one in the first touch, the other in the malloc call
  c.minus_one = say.count(runs, function(d)
    local r, m = say.row(d, "D", "touch1_faults"), say.row(d, "D", "malloc_faults")
    return r.min == d.pages - 1 and r.max == d.pages - 1 and m.min == 1 and m.max == 1
  end)
  local mft = say.value(pub, "malloc_first_touch")
  local tf, mf = say.row(pub, "D", "touch1_faults").median, say.row(pub, "D", "malloc_faults").median
  c.contains_one = say.count(runs, function(d)
    local x = say.value(d, "malloc_first_touch")
    return x.lo <= 1 and 1 <= x.hi
  end)
  return ("malloc returned the address just freed in %d of %d repetitions of the published run, and in "
    .. "every repetition, %s; the first touch after it took %d faults and the malloc call %d%s in every "
    .. "repetition, %s, and cost **%s times** the first touch after mmap "
    .. "in the same repetition%s, an interval holding 1 %s. free took %s ms. %s.")
    :format(same.x, same.of, say.held(all_same, n), tf, mf,
      tf + mf == c.pages and (" (one fault for each of the %d pages between them)"):format(c.pages) or "",
      say.held(c.minus_one, n), say.vinterval(mft),
      vmedians(c, say, "malloc_first_touch"), say.held(c.contains_one, n),
      say.interval(say.ms(say.row(pub, "D", "free"))),
      say.verdict(c.v, "D touch1"))
end

function F.munmap(c, say)
  local mun = say.value(c.pub, "munmap_share")
  return ("munmap returned the pages at %s ns per page, %s of what pass 1 cost per page%s.")
    :format(say.interval(say.row(c.pub, "A", "munmap")), say.vinterval(mun), vmedians(c, say, "munmap_share"))
end

function F.runner(c, say)
  local own = say.value(c.pub, "own_time")
  return ("The runner itself took %s %% of the published run's %s s (the rest: the timed windows, the "
    .. "map and release calls and the read-backs)%s.")
    :format(say.round(own.x), say.round(own.wall_ms / 1e3), #c.others == 0 and ""
      or (", %s %% in the repeats"):format(say.list(c.others, function(d) return say.round(say.value(d, "own_time").x)
      end)))
end

local DEFAULT = { { "first-touch", F.first_touch }, { "headline-ratio", F.headline_ratio }, { "fill", F.fill },
  { "stalls", F.stalls }, { "malloc", F.malloc }, { "munmap", F.munmap }, { "runner", F.runner } }

-- Every default-run paragraph by marker name, made in order.
function report.default_findings(c, say)
  local out = {}
  for _, f in ipairs(DEFAULT) do out[f[1]] = f[2](c, say) end
  return out
end

-- README.md's headline: the sentence, the machine, and a column per run;
-- c.kinds: other kinds' factors against this one's first touch.
function report.headline(c, say)
  local pub, runs, n = c.pub, c.runs, c.n
  local m = pub.machine or {}
  local machine = ("Measured on %s (%s CPUs, hypervisor %s), kernel %s, %d KiB pages, THP %s, %s NUMA node(s), "
    .. "clocksource %s."):format(tostring(m.cpu), tostring(m.cpus), tostring(m.hypervisor), tostring(m.kernel), c.kib,
    tostring(m.thp_enabled), tostring(m.numa_nodes), tostring(m.clocksource))
  local text = ("On this machine the first touch of a page cost **%s ns** (median [95 %% interval], %d KiB "
    .. "pages, %d MiB, %d repetitions, cycle A), **%s times** a later pass over the same page, taken within each "
    .. "repetition. The ratio's lower end was above a hundred %s; the absolute cost moves with the host "
    .. "(pass 1's medians: %s ns). Cycle C, which times each page, measured %s ns in the same repetitions; %s.")
    :format(say.interval(c.p1), c.kib, c.mib, c.p1.n, say.vinterval(c.ft_ratio), say.held(c.above, n),
      say.list(runs, function(d) return say.round(say.row(d, "A", "pass1").median) end),
      say.interval(say.row(pub, "C", "pass1")), report.c_against_a(runs, say))
  local function cells(f)
    local out = {}
    for i, d in ipairs(runs) do out[i] = f(d) end
    return table.concat(out, " | ")
  end
  local head = { "| row | unit | " .. cells(function(d)
    return (d == pub and "published run, %s UTC" or "repeat, %s UTC"):format(tostring(d.date):match("T(%d+:%d+)"))
  end)
    .. " |", "|---|---|" .. ("---|"):rep(n) }
  local function trow(label, unit, f)
    head[#head + 1] = ("| %s | %s | %s |"):format(label, unit, cells(f))
  end
  trow("pass 1: first touch", "ns/page", function(d) return say.interval(say.row(d, "A", "pass1")) end)
  trow("pass 2 repeated", "ns/page", function(d) return say.interval(say.row(d, "A", "pass2r")) end)
  trow("pass 1 / pass 2 repeated", "ratio", function(d) return say.vinterval(say.value(d, "first_touch")) end)
  trow("fill of touched pages", "GB/s", function(d) return say.interval(say.row(d, "A", "fill")) end)
  trow("fill of a fresh mapping", "GB/s", function(d) return say.interval(say.row(d, "B", "fill")) end)
  trow("munmap", "ns/page", function(d) return say.interval(say.row(d, "A", "munmap")) end)
  for _, k in ipairs(c.kinds) do
    text = text .. (" On a %s guest (`%s/`) the first touch cost %s ns, %s times this %s guest's.")
      :format(k.kind, k.dir, say.interval(k.median), say.vinterval(k.p1), k.home)
  end
  return text .. " " .. machine .. "\n\n" .. table.concat(head, "\n")
end

-- THP, and the seed's page size: pass 1 with THP=always and THP=16K against
-- the default run's.
function report.thp_finding(default, always, k16, say)
  local interval, vinterval, row, value = say.interval, say.vinterval, say.row, say.value
  local f4k, f2m = row(default, "A", "pass1_faults").median, row(always, "A", "pass1_faults").median
  local f16 = row(k16, "A", "pass1_faults").median
  return ("With `THP=always` pass 1 took %d faults for the %d MiB (%d KiB pages obtained; %d times fewer "
    .. "than with 4 KiB pages) and cost %s ns per 4 KiB of memory; within each repetition, %s times pass 2 "
    .. "repeated. With `THP=16K` (the seed's page size): %d faults, %s ns per 4 KiB, %s times pass 2 repeated. "
    .. "Each from one run, cycle A's pass 1. Whether a bigger page makes a first touch cheaper depends on the "
    .. "cycle: %s With `THP=16K`, cycle C: %s ns per 4 KiB, below cycle A's in %d of %d repetitions.")
    :format(f2m, always.bytes >> 20, value(always, "thp_page").x // 1024, f4k // f2m,
      interval(row(always, "A", "pass1")), vinterval(value(always, "first_touch")), f16,
      interval(row(k16, "A", "pass1")), vinterval(value(k16, "first_touch")),
      report.c_sentence(always, say):gsub("^Cycle C's", "with `THP=always`, cycle C's"),
      interval(row(k16, "C", "pass1")), report.c_below_a(k16, say))
end

-- 1, 3, 6, 7, 8 as "1, 3 and 6–8".
local function rep_spans(reps)
  local spans = {}
  for _, r in ipairs(reps) do
    local last = spans[#spans]
    if last and last[2] == r - 1 then last[2] = r else spans[#spans + 1] = { r, r } end
  end
  return inference.spans(spans)
end

-- The run's other rows whose values put the same repetitions apart.
local function same_apart(doc, r, lower, R)
  local in_lower, out = {}, {}
  for _, rep in ipairs(lower.reps) do in_lower[rep] = true end
  for _, o in ipairs(doc.rows) do
    if o ~= r and type(o.values) == "table" then
      local a, b = { math.huge, -math.huge }, { math.huge, -math.huge }
      for i, x in ipairs(o.values) do
        local t = in_lower[i] and a or b
        if type(x) == "number" then t[1], t[2] = math.min(t[1], x), math.max(t[2], x) end
      end
      if a[2] < b[1] or b[2] < a[1] then
        out[#out + 1] = ("%s's \"%s\" (the lower group's repetitions from %s to %s, the upper's from %s to %s %s)")
          :format(o.case, o.label, R(a[1]), R(a[2]), R(b[1]), R(b[2]), o.unit)
      end
    end
  end
  return out
end

-- One row's split into two groups (split, as the publishing wing's rule
-- finds them), in words: the groups, where the table's median sits, what
-- else in the run (faults, other rows, the regime test) goes with it.
function report.split_finding(lead, doc, r, split, say)
  local R = say.round
  local lo, hi = split[1], split[2]
  local unit = r.unit == "ns/page" and ("ns per %d KiB"):format(doc.page_size // 1024) or r.unit
  local few = lo.n <= hi.n and lo or hi
  local function side(g, with_unit)
    return ("%d at a median of %s%s (from %s to %s%s)"):format(g.n, R(g.median), with_unit and " " .. unit or "",
      R(g.min), R(g.max), g == few and "; repetitions " .. rep_spans(g.reps) or "")
  end
  local where = r.median < lo.min and "lies below both groups" or r.median <= lo.max and "lies within the lower group"
    or r.median < hi.min and "falls between the groups" or r.median <= hi.max and "lies within the upper group"
    or "lies above both groups"
  local out = { ("%s, cycle %s's row \"%s\": its %d repetitions fall into two separated groups, %s and %s, %s times "
    .. "apart where they are nearest. The table's median, %s, %s%s.")
    :format(lead, r.case, r.label, #r.values, side(lo, true), side(hi, false), R(split.factor), say.interval(r), where,
      (r.lo <= lo.max and r.hi >= hi.min) and ", and its interval spans the gap between them" or "") }
  local same = same_apart(doc, r, lo, say.round)
  out[#out + 1] = #same == 0 and "No other row of the run puts the same repetitions apart."
    or ("Other rows of the run that put the same repetitions apart: %s; a coincidence or a common cause, which "
      .. "one run cannot tell."):format(table.concat(same, "; "))
  for _, f in ipairs(doc.rows) do
    if f.case == r.case and f.column == r.column .. "_faults" and f.min == f.max then
      out[#out + 1] = ("Every repetition took %d fault%s in it, in both groups alike."):format(f.min,
        f.min == 1 and "" or "s")
    end
  end
  out[#out + 1] = regimes.of(r.unit, r.values) and "The regime test (in time order) also finds a lasting shift in it."
    or "The regime test (in time order) finds no lasting shift in it."
  return table.concat(out, " ")
end

return report
