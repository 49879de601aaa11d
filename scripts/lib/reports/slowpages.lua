-- slowpages.lua's tables, from its raw file alone: the rows, then per case
-- and pass the slow pages by cause, their runs, the planted cause's recall
-- and precision, the fault in time and tracing's cost.
local plots = require "plots"
local slowcause = require "slowcause"
local summary = require "summary"
local units = require "units"

local report = {}

local function each(ix, name, keep)
  local out = {}
  for _, v in ipairs(ix.values[name] or {}) do
    if keep(v) then out[#out + 1] = v end
  end
  return out
end

local function num(x) return ("%.0f"):format(tonumber(x)) end

function report.table(raw)
  local ix = summary.index(raw)
  local out = { summary.table(raw) }
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
  plots.add(list, name, ("%s, pass %d: %s, every repetition (%s)"):format(case, pass, what, doc.run),
    table.concat(blocks, "\n\n\n") .. "\n", ([[
set logscale y
set key below horizontal
set xlabel "page index"
set ylabel "ns per page (store + one timestamp)"
set xrange [0:%d]
plot %s]]):format(doc.pages, table.concat(series, ", \\\n  ")))
end

function report.plots(list, doc, dir, prefix)
  plots.generic(list, doc, dir, prefix)
  for _, c in ipairs(doc.reps or {}) do
    local first = c.records and c.records[1]
    if first and first.slow_pages then
      page_map(list, doc, prefix, c.case, 1)
      page_map(list, doc, prefix, c.case, 2)
    end
  end
end

return report
