-- floor.lua's report: the floor (zeroing + the cheapest fault that sets one
-- PTE) taken within each repetition, its split into the kernel's entry and
-- exit and the rest of the fault, and a plot of every case's median with
-- its interval. The cases are found by their params, never their names.
local plots = require "plots"
local stats = require "stats"
local units = require "units"

local report = {}

-- The cases that ran whose params have every field of want.
local function cases_where(h, want)
  local out = {}
  for _, c in ipairs(h.cases) do
    local p, all = c.params or {}, not c.unsupported and #c.records > 0
    for k, v in pairs(want) do all = all and p[k] == v end
    if all then out[#out + 1] = c end
  end
  return out
end

-- Sums of r.ns over cases, repetition by repetition (the cases ran in the
-- same repetitions, so drift over the run falls on every part alike).
local function per_rep_sum(cases)
  local n = math.huge
  for _, c in ipairs(cases) do n = math.min(n, #c.records) end
  local sums = {}
  for i = 1, n do
    local s = 0
    for _, c in ipairs(cases) do s = s + c.records[i].ns end
    sums[i] = s
  end
  return sums
end

local function median_of(c)
  return stats.median(stats.map(c.records, function(r) return r.ns end))
end

local function cell(d) return ("%s [%s, %s]"):format(units.cell(d.median, "ns"), units.cell(d.lo, "ns"),
  units.cell(d.hi, "ns")) end

-- Whether the case's control held in every repetition: a floor of parts
-- not shown to be what they say is no floor.
local function held_throughout(c)
  for _, r in ipairs(c.records) do
    if r.control ~= 1 then return false end
  end
  return true
end

-- The fault among the candidates with the lowest median over the run: the
-- choice is made once for the run, not repetition by repetition, which
-- would take the lower of two noisy figures and bias the floor down.
local function cheapest(list)
  table.sort(list, function(a, b) return median_of(a) < median_of(b) end)
  return list[1]
end

function report.derive(h)
  local zero = cases_where(h, { part = "zero", floor = true })[1]
  local faults = {}
  for _, c in ipairs(cases_where(h, { part = "fault", floor = true })) do
    if held_throughout(c) then faults[#faults + 1] = c end
  end
  local fault = cheapest(faults)
  local entry = cases_where(h, { part = "entry" })[1]
  if not (zero and fault) then
    h:note("No floor: " .. (zero and "no fault case ran with its control held in every repetition"
      or "rep stosb into cold memory did not run here") .. ".")
    return
  end
  if not held_throughout(zero) then
    h:note(("No floor: the control of %s did not hold in every repetition, so its memory is not shown to be "
      .. "cold."):format(zero.name))
    return
  end
  local d = stats.describe(per_rep_sum { zero, fault })
  h:value("floor", d.median, "ns", { { "lo", d.lo }, { "hi", d.hi }, { "n", d.n }, { "per_bytes", 4096 },
    { "zero_case", zero.name }, { "fault_case", fault.name }, { "zero", median_of(zero) },
    { "fault", median_of(fault) }, { "entry", entry and median_of(entry) or nil } })
  h:note(("The floor: %s ns per 4 KiB (median [95 %% interval] over %d repetitions of the sum within each), "
    .. "zeroing (%s) plus the cheapest fault that sets one PTE (%s)."):format(cell(d), d.n, zero.name, fault.name))
  local warm = cases_where(h, { part = "zero", method = zero.params.method, where = "warm" })[1]
  if warm then
    local w = stats.describe(per_rep_sum { warm, fault })
    h:value("floor_warm", w.median, "ns", { { "lo", w.lo }, { "hi", w.hi }, { "n", w.n }, { "zero_case", warm.name } })
    h:note(("With the page's lines already in cache (%s) it would be %s ns."):format(warm.name, cell(w)))
  end
  local whole = cases_where(h, { part = "whole" })[1]
  if whole then
    local over = {}
    local floors = per_rep_sum { zero, fault }
    for i = 1, math.min(#floors, #whole.records) do over[i] = whole.records[i].ns / floors[i] end
    local o = stats.describe(over)
    h:value("first_touch_over_floor", o.median, "ratio", { { "lo", o.lo }, { "hi", o.hi }, { "n", o.n },
      { "first_touch", median_of(whole) } })
    h:note(("A first touch of 4 KiB pages in the same repetitions, %s ns per page, is %.2f [%.2f, %.2f] times the "
      .. "floor (the ratio within each repetition)."):format(units.cell(median_of(whole), "ns"), o.median, o.lo, o.hi))
  end
  if entry then
    local minus = {}
    local n = math.min(#fault.records, #entry.records)
    for i = 1, n do minus[i] = fault.records[i].ns - entry.records[i].ns end
    local m = stats.describe(minus)
    h:value("fault_beyond_entry", m.median, "ns", { { "lo", m.lo }, { "hi", m.hi }, { "n", m.n } })
    h:note(("Of the fault, the kernel's entry and exit (%s) is %s ns; the rest, the handler's lookup and the PTE "
      .. "update with the exception's own delivery, %s ns."):format(entry.name, units.cell(median_of(entry), "ns"),
      cell(m)))
  end
end

-- Every case's median with its interval, one bar each; one series, so no
-- key to sit on the bars: the y label says what they are.
function report.plots(list, doc, _, prefix)
  local lines = { "# case  ns_median  lo  hi  (per 4 KiB zeroed, per page faulted, per call)" }
  for _, c in ipairs(doc.reps) do
    local r = not c.unsupported and plots.row(doc, c.case, "ns")
    if r then
      lines[#lines + 1] = ("%s %s %s %s"):format(plots.quoted(c.case), units.exact(r.median), units.exact(r.lo),
        units.exact(r.hi))
    end
  end
  plots.add(list, prefix .. "plot", "the floor's parts, medians and their intervals (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", ([[
unset key
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.7 border -1
set ylabel "ns per 4 KiB zeroed, per page faulted, per call"
set xtics rotate by -30 noenhanced
set bmargin 9
set yrange [0:*]
plot "%s.dat" using 2:3:4:xtic(1) lc rgb "#1f4e99"]]):format(prefix .. "plot"), 1000, 560)
end

return report
