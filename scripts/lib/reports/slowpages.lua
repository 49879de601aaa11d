-- slowpages.lua's tables, from its raw file alone: the rows, then per case
-- and pass the slow pages by cause, their runs, the planted cause's recall
-- and precision, the fault in time and tracing's cost.
local plots = require "plots"
local slowrun = require "slowrun"
local summary = require "summary"
local units = require "units"

local report = {}

local each, num = slowrun.each, slowrun.num

function report.table(raw)
  local ix = summary.index(raw)
  local out = { summary.table(raw) }
  local function add(line) out[#out + 1] = line end
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

return report
