-- slowpages.lua's tables, from its raw file alone: the rows, then per case
-- and pass the slow pages by cause, their runs, the planted cause's recall
-- and precision, the fault in time and tracing's cost.
local plots = require "plots"
local slowrun = require "slowrun"
local stats = require "stats"
local summary = require "summary"
local textfile = require "textfile"
local units = require "units"

local report = {}

local each, num = slowrun.each, slowrun.num

-- A rate's spread over the repetitions, from a value's rep_* fields, or "".
local function by_rep(v)
  if not tonumber(v.rep_median) then return "" end
  return ("; per repetition median %.3f, %.3f to %.3f"):format(tonumber(v.rep_median), tonumber(v.rep_lo),
    tonumber(v.rep_hi))
end

-- EXPERIMENT=period: per THP mode, pass 2's slow pages (forward walk) by
-- what covers them: a guest event, a class an experiment's control
-- decided, or nothing (slowwalks.lua's values).
local function period_tables(ix, add)
  for _, total in ipairs(ix.values.period_total or {}) do
    local thp = total.thp
    local function here(v) return v.thp == thp end
    local n = tonumber(total.x)
    add(("\n**What pass 2's slow pages follow, THP=%s**: %s slow pages of the forward walk in %s repetitions; "
      .. "they follow: %s\n"):format(thp, num(n), num(total.reps), total.follows))
    add("| covered by | pages | share | repetitions whose control went its way |\n|---|---:|---:|---:|")
    for _, v in ipairs(each(ix, "period_guest", here)) do
      add(("| %s (a guest event in its window) | %s | %s %% | – |"):format(v.cause, num(v.pages),
        units.cell(tonumber(v.x), "%")))
    end
    local controls = {}
    for _, v in ipairs(each(ix, "period_class", here)) do
      add(("| %s | %s | %s %% | %s |"):format(v.class, num(v.pages), units.cell(tonumber(v.x), "%"),
        v.agreed == "-" and "–" or (num(v.agreed) .. " of " .. num(v.reps))))
      controls[#controls + 1] = ("- %s: %s"):format(v.class, v.control)
    end
    for _, v in ipairs(each(ix, "period_unexplained", here)) do
      local share = tonumber(v.x)
      add(("| not explained (no guest event, host, unknown; no class) | %s | %s %% | – |"):format(num(v.pages),
        units.cell(share, "%")))
      if #controls > 0 then
        add("\nThe control that removed or moved each class:\n")
        for _, line in ipairs(controls) do add(line) end
      end
      add(n > 0 and ("\nNot explained: %s %% of pass 2's slow pages, %s the target of at most 10 %%."):format(
        units.cell(share, "%"), share <= 10 and "within" or "above")
        or "\nNo slow pages in pass 2: nothing to explain.")
    end
    local r = {}
    for _, v in ipairs(each(ix, "period_rate", here)) do r[tonumber(v.pass)] = v end
    if r[2] and r[3] then
      add(("\nSlow pages outside every class, per ms of pass (forward): pass 2 %.3f (%s pages%s), pass 3 over the "
        .. "same pages %.3f (%s pages%s)."):format(tonumber(r[2].per_ms), num(r[2].x), by_rep(r[2]),
          tonumber(r[3].per_ms), num(r[3].x), by_rep(r[3])))
    end
    for _, v in ipairs(each(ix, "period_null_rate", here)) do
      local ratio, rep_ratio = tonumber(v.ratio), tonumber(v.rep_ratio)
      add(("\nThe null walk (page 0 stored into as many times as there are pages, passes 2 and 3): %.3f slow "
        .. "samples per ms (%s samples%s), the timed loop's own with one data page. Pass 3 "
        .. "(forward) over it: pooled %s, per repetition median %s, above it in %s of %s repetitions (sign test "
        .. "p = %.2g). The timed loop's own gaps are named where the forward walk is not below the null "
        .. "rate, and are covered by rate, not page by page: at most the null rate times pass 2's time of the pages "
        .. "left."):format(
          tonumber(v.per_ms), num(v.x), by_rep(v), ratio and ("%.2f"):format(ratio) or "–",
          rep_ratio and ("%.2f"):format(rep_ratio) or "–", num(v.above), num(v.pairs), tonumber(v.sign_p)))
    end
    for _, v in ipairs(each(ix, "period_small_rate", here)) do
      local function q(x) x = tonumber(x) return x and ("%.2f"):format(x) or "–" end
      add(("\nThe small set (pages 0 to %s, %s KiB, stored into again and again as many times as there are pages, "
        .. "passes 2 and 3): %.3f slow samples per ms (%s samples%s), a working set within the TLB's and the shadow "
        .. "page tables' reach (its lines share cache sets). Over the null walk: pooled %s, per repetition median "
        .. "%s, above it in %s of %s repetitions (sign test p = %.2g). Pass 3 (forward) over it: pooled %s, per "
        .. "repetition median %s, above it in %s of %s repetitions (sign test p = %.2g). The working set is named "
        .. "where the forward walk stays above the small set, and is covered by rate, not page by page: at most the "
        .. "forward walk's excess over the small set (or the null walk, the higher) times pass 2's time of the pages "
        .. "left; the small set's own excess over the null walk stays not explained.")
        :format(num(tonumber(v.pages) - 1), num(v.kib), tonumber(v.per_ms), num(v.x), by_rep(v), q(v.to_null),
          q(v.rep_to_null), num(v.null_above), num(v.null_pairs), tonumber(v.null_sign_p), q(v.p3_ratio),
          q(v.rep_p3_ratio), num(v.p3_above), num(v.p3_pairs), tonumber(v.p3_sign_p)))
    end
    for _, v in ipairs(each(ix, "period_gap", here)) do
      add(("\nTheir gaps in time within a pass: median %s ns over %s gaps, cv %s (near 1: at random times; "
        .. "near 0: periodic)."):format(num(v.x), num(v.gaps), v.cv == "-" and "–" or ("%.2f"):format(tonumber(v.cv))))
    end
  end
end

function report.table(raw)
  local ix = summary.index(raw)
  local out = { summary.table(raw) }
  local function add(line) out[#out + 1] = line end
  period_tables(ix, add)
  for _, line in ipairs(slowrun.tables(ix)) do add(line) end
  local cases = {}
  for _, v in ipairs(ix.values.fault_entry or {}) do
    if not cases[v.case] then cases[#cases + 1], cases[v.case] = v.case, v end
  end
  for _, case in ipairs(cases) do
    local first = cases[case]
    add(("\n**%s, pass 1, the fault in time** (%s repetitions, %s faulting pages each at the median)\n"):format(case,
      num(first.reps), num(first.pages)))
    add("| span | p10 ns | p50 ns | p90 ns | p99 ns |\n|---|---:|---:|---:|---:|")
    for _, part in ipairs { { "fault_entry", "page start to fault entry" },
      { "fault_rest", "fault entry to the page's end" } } do
      local cells = {}
      for _, v in ipairs(each(ix, part[1], function(v) return v.case == case end)) do cells[#cells + 1] = num(v.x) end
      add(("| %s | %s |"):format(part[2], table.concat(cells, " | ")))
    end
  end
  local regimes = {}
  for _, v in ipairs(ix.values.pass1_rep or {}) do
    regimes[v.case] = regimes[v.case] or {}
    table.insert(regimes[v.case], v)
  end
  for _, case in ipairs(ix.cases) do
    local list = regimes[case]
    if list then
      table.sort(list, function(a, b) return tonumber(a.x) < tonumber(b.x) end)
      add(("\n**%s, pass 1 by repetition**, fastest first: what the guest saw in each. The last column checks "
        .. "the windows against the events: with 4 KiB pages every page faults once, so a page with a second "
        .. "fault (and a neighbour with none) means they no longer line up from there.\n"):format(case))
      add("| rep | ns/page | fault entry p50 | entry to end p50 | slow, not fault | switches | timer | IPI "
        .. "| other irq | DAMON/reclaim | steal moved | pages with a second fault |\n"
        .. "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
      for _, v in ipairs(list) do
        add(("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(num(v.rep),
          units.cell(tonumber(v.x), "ns/page"), v.entry_p50 and num(v.entry_p50) or "-",
          v.rest_p50 and num(v.rest_p50) or "-", num(v.not_fault), num(v.preempted), num(v.timer), num(v.ipi),
          num(v.other_irq), num(v.damon), tonumber(v.steal_moved) == 1 and "yes" or "no",
          v.misaligned and num(v.misaligned) or "-"))
      end
    end
  end
  for _, v in ipairs(ix.values.trace_cost or {}) do
    add(("\nTracing's cost, THP=%s pass %s: %s %% (median of %s per-repetition ratios, traced / untraced)")
      :format(v.thp, num(v.pass), units.cell(tonumber(v.x), "%"), num(v.reps)))
  end
  return table.concat(out, "\n") .. "\n"
end

function report.plots(list, doc, dir, prefix)
  plots.generic(list, doc, dir, prefix)
  slowrun.page_maps(list, doc, prefix)
end


-- The finding on the seed's open question, pass 2's slow pages, by the
-- guest's events in their windows; dat: the run's pass-2 causes plot data,
-- each cause's pages with their ns. say: the published pages' wording
-- (round), given by whoever prints it.
function report.finding(doc, say, dat)
  local R = say.round
  local function spv(name, want)
    for _, item in ipairs(doc.values) do
      local ok = item.value == name
      for k, x in pairs(want) do ok = ok and item[k] == x end
      if ok then return item end
    end
    error(("publish: %s has no value %s"):format(doc.path, name), 0)
  end
  local slow2 = spv("slow_pages", { case = "THP=never", pass = 2 })
  -- the plot data's ns, since the JSON's median_ns takes the lower middle value of an even count
  local ns, cause = {}, nil
  for l in (textfile.read(dat) or error("publish: " .. dat .. ": cannot read it", 0)):gmatch("[^\n]+") do
    local name = l:match("^# (.-): page index, ns, repetition$")
    if name then cause = name; ns[cause] = {}
    elseif cause and not l:match("^#") then ns[cause][#ns[cause] + 1] = tonumber(l:match("^%S+%s+(%S+)")) end
  end
  local shares, lower = {}, {}
  for _, item in ipairs(doc.values) do
    if item.value == "slow_share" and item.case == "THP=never" and item.pass == 2 then
      local mine = ns[item.cause]
      if not mine or #mine ~= item.pages then
        error(("publish: %s: %s holds %s pages, the JSON %d"):format(dat, item.cause, mine and #mine or "no",
          item.pages), 0)
      end
      local median = stats.median(mine)
      shares[#shares + 1] = ("%s %s %% (%d pages, median %s ns)"):format(item.cause, R(item.x), item.pages,
        R(median))
      if median ~= item.median_ns then
        lower[#lower + 1] = ("%.0f ns for the %s"):format(item.median_ns, item.cause)
      end
    end
  end
  local note = #lower == 0 and "" or (" The run's table gives %s: the lower of the two middle values; the "
    .. "median here is their mean, as everywhere else on this page."):format(table.concat(lower, ", "))
  local runs2 = spv("runs", { case = "THP=never", pass = 2 })
  local cost = spv("trace_cost", { thp = "never", pass = 1 })
  return ("Pass 2 after pass 1 (THP never, %d MiB, %d repetitions of one run): %d of %d page stores "
    .. "(%s %%) took more than %d ns, with %d events lost. By the guest's events in their windows: %s.%s Of the %d "
    .. "runs of slow pages that span two pages or more, %d have one cause throughout. The cause `host` is a "
    .. "pass's, not a page's: every slow page without a guest event is called `host` when the steal counter moved "
    .. "during its pass. Tracing made pass 1 %s than the untraced case interleaved with it (median of the "
    .. "per-repetition ratios). `cycles.lua` traces its cycle C only with `CAUSES=1`.")
    :format(doc.bytes >> 20, slow2.reps, slow2.x, slow2.reps * doc.pages, R(100 * slow2.x / (slow2.reps * doc.pages)),
      slow2.slow_ns, slow2.lost, table.concat(shares, "; "), note, runs2.multi, runs2.single_cause,
      ("%s %% %s"):format(R(math.abs(cost.x)), cost.x >= 0 and "dearer" or "cheaper"))
end

-- slowpages.lua EXPERIMENT=period: what pass 2's slow pages follow, by THP
-- mode, each class with its share, and the share left not explained; home:
-- the kind whose slow pages were not re-measured so. say: the published
-- pages' wording (round), given by whoever prints it.
function report.period_finding(doc, say, home)
  local R = say.round
  local by, order = {}, {}
  for _, v in ipairs(doc.values) do
    if type(v.value) == "string" and v.value:match("^period_") and v.thp then
      if not by[v.thp] then by[v.thp] = { classes = {}, guest = 0 }; order[#order + 1] = v.thp end
      local m = by[v.thp]
      if v.value == "period_total" then m.total = v
      elseif v.value == "period_class" then m.classes[#m.classes + 1] = v
      elseif v.value == "period_guest" then m.guest = m.guest + v.x
      elseif v.value == "period_unexplained" then m.unexplained = v end
    end
  end
  local parts = {}
  for _, thp in ipairs(order) do
    local m = by[thp]
    if m.total and m.unexplained then
      local named = stats.map(m.classes, function(c)
        return ("%s, %s %% (its control went its way in %d of %d repetitions)"):format(c.class, R(c.x), c.agreed,
          c.reps)
      end)
      parts[#parts + 1] = ("with THP=%s, of %d slow pages %s; guest events %s %%; not explained %s %% (the target: "
        .. "at most 10 %%, %s)")
        :format(thp, m.total.x, #named == 0 and "no class is named" or "named: " .. table.concat(named, "; "),
          R(m.guest), R(m.unexplained.x), m.unexplained.x <= 10 and "met" or "not met")
    end
  end
  return ("`slowpages.lua EXPERIMENT=period` (%d repetitions of one run; forward, samples shifted 4 bytes, backward, "
    .. "stride 7, a 50 ms pause, the null walk (one page stored again and again) and a small set of pages walked "
    .. "again and again, each walk with pass 3 over the same pages, shuffled in every repetition), pass "
    .. "2's slow pages of the forward walk by what covers them, a class named only where its control removed, "
    .. "moved or showed it (the null walk's and the small set's classes by rate, not page by page): %s.%s")
    :format(doc.rows[1].n, table.concat(parts, "; "),
      home and (" The %s guest's slow pages were not re-measured with these walks."):format(home) or "")
end

return report
