-- A timed pass traced and matched (slowcause.lua), for a script that runs
-- on the harness: the pass under ft.trace, what its matching keeps in the
-- repetition's record, the RESULT values over a case's repetitions, and
-- from those the tables and the page maps coloured by cause. slowpages.lua
-- and cycles.lua's CAUSES=1 share it.
local ft = require "ft"
local plots = require "plots"
local slowcause = require "slowcause"
local stats = require "stats"
local units = require "units"

local slowrun = {}

-- ft.trace with slowcause's events and a ring that holds every sample of
-- a first touch of `pages` (a fault per page and the rest: 40 bytes a
-- sample, room for twice as many). Returns the session, or nil and why.
function slowrun.open(pages)
  local kib = 64
  while kib * 1024 < 2 * 48 * pages do kib = kib * 2 end
  return ft.trace { events = slowcause.THREAD_EVENTS, cpu_events = slowcause.CPU_EVENTS, ring_kib = kib }
end

-- The traced pass: its samples as a list, its timing, its faults, its
-- events and whether the steal counter moved.
function slowrun.pass(tr, b, s, value)
  local steal0 = slowcause.steal()
  tr:start()
  local f0 = ft.faults()
  local ns, start, scale, chunks = ft.touch_timed_at(b, value, s)
  local f1 = ft.faults()
  local events = tr:stop()
  local steal1 = slowcause.steal()
  local list = {}
  for i = 1, #s do list[i] = s[i] end
  return { ns = ns, start = start, scale = scale, timing = { start_ns = start, scale = scale, chunks = chunks },
    faults = f1 - f0, events = events, samples = list, steal_moved = steal0 ~= steal1 }
end

-- The same pass over another order of the pages (ft.touch_timed_walk:
-- walk = {stride =, backward =, shift =, pages =}); ix, an ft.samples, gets the page
-- of each store. The samples are in walk order.
function slowrun.walk_pass(tr, b, s, value, walk, ix)
  local steal0 = slowcause.steal()
  tr:start()
  local f0 = ft.faults()
  local ns, start, scale, chunks = ft.touch_timed_walk(b, value, s, { stride = walk.stride,
    backward = walk.backward, shift = walk.shift, index = ix, pages = walk.pages and math.min(walk.pages, b.pages) })
  local f1 = ft.faults()
  local events = tr:stop()
  local steal1 = slowcause.steal()
  local list = {}
  for i = 1, #s do list[i] = s[i] end
  return { ns = ns, start = start, scale = scale, timing = { start_ns = start, scale = scale, chunks = chunks },
    faults = f1 - f0, events = events, samples = list, steal_moved = steal0 ~= steal1 }
end

-- What a pass's matching keeps in the record r under "pass<n>": its ns and
-- faults, the counts by cause, the slow pages (pass 1's own faults only as
-- a count: every page of a first touch faults), the runs, the fault's
-- split, the check that windows and faults line up, and the pass's events
-- by cause. opts: slow_ns, resolution_ns. Returns the match.
function slowrun.keep(r, rep, pass_no, p, opts)
  local m = slowcause.match { samples = p.samples, timing = p.timing, events = p.events, slow_ns = opts.slow_ns,
    resolution_ns = opts.resolution_ns, steal_moved = p.steal_moved }
  local key = "pass" .. pass_no
  r[key] = p.ns
  r[key .. "_faults"] = p.faults
  r[key .. "_clock_ppm"] = 1e6 * (p.scale - 1) -- the rate over the pass against the calibrated one
  r[key .. "_slow"] = #m.slow
  r[key .. "_lost"] = m.lost
  r[key .. "_events"] = p.events.n
  r[key .. "_steal_moved"] = p.steal_moved and 1 or 0
  r[key .. "_causes"] = {}
  for _, c in ipairs(slowcause.CAUSES) do
    local b = m.by_cause[c]
    if b.count > 0 then r[key .. "_causes"][c] = { count = b.count, median_ns = slowcause.median(b.ns), ns = b.ns } end
  end
  r.slow_pages = r.slow_pages or {}
  local other = 0
  for _, page in ipairs(m.slow) do
    if pass_no == 2 or page.cause ~= "fault" then
      r.slow_pages[#r.slow_pages + 1] = { pass = pass_no, rep = rep, index = page.index, ns = page.ns,
        cause = page.cause }
    end
    if page.cause ~= "fault" then other = other + 1 end
  end
  r[key .. "_slow_not_fault"] = other
  local runs = slowcause.runs(m)
  r[key .. "_cause_runs"] = { runs = runs.runs, multi = runs.multi, single_cause = runs.single_cause,
    by_cause = runs.by_cause }
  local before, after, doubled = slowcause.fault_split(p.samples, p.timing, p.events)
  r[key .. "_misaligned"] = doubled
  if #before > 0 then
    r[key .. "_fault_entry_ns"] = stats.median(before)
    r[key .. "_fault_rest_ns"] = stats.median(after)
    r[key .. "_fault_split"] = { pages = #before }
    for _, pc in ipairs { 10, 50, 90, 99 } do
      r[key .. "_fault_split"]["entry_p" .. pc] = stats.percentile(before, pc)
      r[key .. "_fault_split"]["rest_p" .. pc] = stats.percentile(after, pc)
    end
  end
  -- the pass's events by the cause they stand for: what a slow regime
  -- would show if the guest saw it
  local tally, e = {}, p.events
  for k = 1, e.n do
    if e.time[k] >= p.start and e.time[k] < p.start + p.ns then
      local c = slowcause.class(e.name[k])
      if c then tally[c] = (tally[c] or 0) + 1 end
    end
  end
  r[key .. "_event_causes"] = tally
  return m
end

-- The counts by cause of a pass over a case's records, taken out of them
-- (the JSON keeps the pages themselves, slow_pages).
local function causes_of(records, key)
  local total, by = 0, {}
  for _, r in ipairs(records) do
    for c, v in pairs(r[key .. "_causes"] or {}) do
      by[c] = by[c] or { count = 0, ns = {} }
      by[c].count = by[c].count + v.count
      table.move(v.ns, 1, #v.ns, #by[c].ns + 1, by[c].ns)
      total = total + v.count
    end
    r[key .. "_causes"] = nil
  end
  return by, total
end

-- The RESULT values of a case's pass over its repetitions: slow pages,
-- their share and median cost by cause, their runs.
function slowrun.values(h, case, pass_no, slow_ns)
  local recs, key = case.records, "pass" .. pass_no
  local by, total = causes_of(recs, key)
  h:value("slow_pages", total, "pages", { { "case", case.name }, { "pass", pass_no }, { "reps", #recs },
    { "slow_ns", slow_ns }, { "lost", stats.sum(stats.map(recs, function(r) return r[key .. "_lost"] end)) } })
  for _, c in ipairs(slowcause.CAUSES) do
    local b = by[c]
    if b then
      h:value("slow_share", 100 * b.count / total, "%", { { "case", case.name }, { "pass", pass_no },
        { "cause", c }, { "pages", b.count }, { "median_ns", slowcause.median(b.ns) } })
    end
  end
  local runs, multi, single = 0, 0, 0
  for _, r in ipairs(recs) do
    local x = r[key .. "_cause_runs"]
    runs, multi, single = runs + x.runs, multi + x.multi, single + x.single_cause
  end
  h:value("runs", runs, "count", { { "case", case.name }, { "pass", pass_no }, { "multi", multi },
    { "single_cause", single } })
end

local function each(ix, name, keep)
  local out = {}
  for _, v in ipairs(ix.values[name] or {}) do
    if keep(v) then out[#out + 1] = v end
  end
  return out
end
slowrun.each = each

local function num(x) return ("%.0f"):format(tonumber(x)) end
slowrun.num = num

-- From a raw file's index (summary.index): per case and pass, the table of
-- slow pages by cause, their runs, and a planted cause's recall and
-- precision where the run has them. Markdown lines.
function slowrun.tables(ix)
  local out = {}
  local function add(line) out[#out + 1] = line end
  for _, total in ipairs(ix.values.slow_pages or {}) do
    local case, pass = total.case, tonumber(total.pass)
    local function here(v) return v.case == case and tonumber(v.pass) == pass end
    add(("\n**%s, pass %d**: %s slow pages (> %s ns) in %s repetitions, %s events lost\n"):format(case, pass,
      num(total.x), num(total.slow_ns), num(total.reps), num(total.lost)))
    add("| cause | pages | share | median ns |\n|---|---:|---:|---:|")
    for _, v in ipairs(each(ix, "slow_share", here)) do
      add(("| %s | %s | %s %% | %s |"):format(v.cause, num(v.pages), units.cell(tonumber(v.x), "%"), num(v.median_ns)))
    end
    for _, v in ipairs(each(ix, "runs", here)) do
      add(("\nRuns of slow pages: %s, of which %s span two pages or more and %s of those have one cause "
        .. "throughout."):format(num(v.x), num(v.multi), num(v.single_cause)))
    end
    for _, v in ipairs(each(ix, "recall", here)) do
      add(("\nPlanted %s: recall %s %% (%s of %s planted pages found as `%s`)"):format(v.plant,
        units.cell(tonumber(v.x), "%"), num(v.found), num(v.planted), v.cause))
    end
    for _, v in ipairs(each(ix, "precision", here)) do
      add(("\nPlanted %s: precision %s %% (%s of %s pages classified `%s`)"):format(v.plant,
        units.cell(tonumber(v.x), "%"), num(v.right), num(v.classified), v.cause))
    end
  end
  return out
end

local COLOURS = {
  ["preempted"] = "#7a3db8", ["fault"] = "#1f4e99", ["IPI / TLB shootdown"] = "#d62728",
  ["timer interrupt"] = "#2ca02c", ["other interrupt"] = "#8c564b", ["DAMON / reclaim work"] = "#e377c2",
  ["host"] = "#ff7f0e", ["no guest event"] = "#9a9a9a", ["unknown"] = "#000000",
}

-- The page map of one case and pass: every slow page of every repetition
-- at its index and cost, coloured by its cause (pass 1: the JSON keeps
-- only the pages whose cause is not their fault: every page faults).
local function page_map(list, doc, prefix, case, pass)
  local by = {}
  for _, r in ipairs(plots.records(doc, case)) do
    for _, p in ipairs(r.slow_pages or {}) do
      if p.pass == pass then
        by[p.cause] = by[p.cause] or {}
        table.insert(by[p.cause], ("%d %d %d"):format(p.index, p.ns, p.rep))
      end
    end
  end
  local blocks, series = {}, {}
  for _, c in ipairs(slowcause.CAUSES) do
    if by[c] then
      blocks[#blocks + 1] = "# " .. c .. ": page index, ns, repetition\n" .. table.concat(by[c], "\n")
      series[#series + 1] = ('"%%s.dat" index %d using 1:2 with points pt 7 ps 0.35 lc rgb "%s" title %s')
        :format(#series, COLOURS[c], plots.quoted(("%s (%d)"):format(c, #by[c])))
    end
  end
  if #series == 0 then return end
  local name = ("%spass%d-%s-causes"):format(prefix, pass, case:gsub("[^%w]+", "-"):lower())
  for i, sr in ipairs(series) do series[i] = sr:format(name) end
  local what = pass == 1 and "slow pages other than their own fault" or "slow pages by cause"
  -- the key above the plot: below it, gnuplot drew it over the x label
  plots.add(list, name, ("%s, pass %d: %s, every repetition (%s)"):format(case, pass, what, doc.run),
    table.concat(blocks, "\n\n\n") .. "\n", ([[
set logscale y
set key above horizontal
set xlabel "page index"
set ylabel "ns per page (store + one timestamp)"
set xrange [0:%d]
plot %s]]):format(doc.pages, table.concat(series, ", \\\n  ")))
end

-- The page maps of every case whose records hold slow pages.
function slowrun.page_maps(list, doc, prefix)
  for _, c in ipairs(doc.reps or {}) do
    local first = c.records and c.records[1]
    if first and first.slow_pages then
      page_map(list, doc, prefix, c.case, 1)
      page_map(list, doc, prefix, c.case, 2)
    end
  end
end

return slowrun
