-- host.lua's report: the host's share of a 4 KiB and a 2 MiB first touch,
-- in words under the table, from the rows of the cases that touch fresh
-- memory (found by their params).
local limits = require "limits"
local units = require "units"

local report = {}

local function case_where(h, want)
  for _, c in ipairs(h.cases) do
    local p = c.params or {}
    local all = not c.unsupported and #c.records > 0
    for k, v in pairs(want) do all = all and p[k] == v end
    if all and (want.populate or not p.populate) and not p.sampled then return c.name end
  end
end

local function cell(row) return ("%s [%s, %s]"):format(units.cell(row.median, row.unit),
  units.cell(row.lo, row.unit), units.cell(row.hi, row.unit)) end

-- A share as measured, with its %, when its median lies in [0, 100]; outside (the step's timer,
-- schedstat's time on the CPU and getrusage's system time are different clocks) it is no share:
-- "not resolved" when its interval reaches back in, else the bound, with the interval as
-- measured. clamped: set when one was shown as a bound.
local function share(row, clamped)
  if not row then return "unreported" end
  if row.median >= 0 and row.median <= 100 then return cell(row) .. " %" end
  if row.hi >= 0 and row.lo <= 100 then
    return ("not resolved (below the clocks' resolution: [%s, %s] %%)"):format(units.cell(row.lo, row.unit),
      units.cell(row.hi, row.unit))
  end
  clamped[1] = true
  return ("%d %% (measured %s %%)"):format(row.median < 0 and 0 or 100, cell(row))
end

-- Why a 2 MiB case's repetitions are no 2 MiB first touch, or nil when every one got 2 MiB
-- pages only: one fault per 2 MiB and all of its bytes in them.
local function not_huge(h, name)
  local pmd, ok, n, faults = h.machine.thp_pmd_size or 0, 0, 0, {}
  for _, c in ipairs(h.cases) do
    for _, r in ipairs(c.name == name and c.records or {}) do
      n = n + 1
      faults[#faults + 1] = r.step_faults
      if pmd > 0 and r.step_faults == h.bytes // pmd and r.thp_bytes == h.bytes then ok = ok + 1 end
    end
  end
  if ok == n then return nil end
  local p = h.provenance or {}
  local setting = ("THP %s, %s"):format(p.thp_enabled or "?",
    (p.thp_sizes or ""):match("2048kB: %w+") or "no per-size setting")
  return ("%s (%s): faults %s by repetition where 2 MiB pages take %d, so the 2M rows are left out of the "
    .. "headline."):format(ok == 0 and "no 2 MiB pages obtained" or ("2 MiB pages in only %d of %d repetitions")
    :format(ok, n), setting, table.concat(faults, ", "), h.bytes // math.max(pmd, 1))
end

-- A value h:ratio put on record: x, lo, hi by name, or nil.
local function value(h, name)
  for _, v in ipairs(h.values) do
    if v[1][2] == name then
      local t = {}
      for _, kv in ipairs(v) do t[kv[1]] = kv[2] end
      return t
    end
  end
end

function report.derive(h)
  local clamped = {}
  for _, page in ipairs { "4K", "2M" } do
    local name = case_where(h, { fresh = true, page = page })
    local step, beside = name and h:row(name, "step"), name and h:row(name, "beside_pct")
    local why = page == "2M" and name and not_huge(h, name)
    if why then h:note("2M first touch: " .. why) end
    if step and beside and not why then
      local sys, waited = h:row(name, "sys_pct"), h:row(name, "waited_pct")
      local steal, unseen = h:row(name, "steal_pct"), h:row(name, "unseen_pct")
      h:value("host_share_" .. page, math.min(100, math.max(0, beside.median)), "%",
        { { "measured", beside.median }, { "lo", beside.lo }, { "hi", beside.hi }, { "n", beside.n } })
      h:note(("%s first touch, %s ns per page: of its time on the CPU, %s is outside the guest kernel "
        .. "(user mode by the guest's account, where the loop's own stores cost about 20 ns a page); "
        .. "of its wall time the guest kernel holds %s, waiting for the CPU %s, %s, no guest account %s.")
        :format(page, cell(step), share(beside, clamped), share(sys, clamped), share(waited, clamped),
        limits.holds(h.limits, "steal") and "steal unreported by this host (see its note)"
        or "steal " .. share(steal, clamped), share(unseen, clamped)))
    end
  end
  if clamped[1] then
    h:note("A share shown as 0 % or 100 % measured beyond it: the times it compares come from different "
      .. "clocks (the step's timer, schedstat's ns on the CPU, getrusage's system time), whose granularity can "
      .. "put a part above its whole.")
  end
  local pop, fresh = case_where(h, { populate = true }), case_where(h, { fresh = true, page = "4K" })
  local after, r = pop and h:row(pop, "after_oncpu"), value(h, "populated_touch_over_touch_oncpu")
  local faults = pop and h:row(pop, "after_faults")
  if after and r and faults and fresh then
    h:note(("A first store into pages MAP_POPULATE mapped takes %d guest faults and %s ns per page on the CPU, "
      .. "%.2f [%.2f, %.2f] of a fresh first touch's time on the CPU (%s ns): the guest's page tables were "
      .. "filled, so this is what a first touch costs beyond the guest's own fault."):format(faults.max, cell(after),
      r.x, r.lo, r.hi, cell(h:row(fresh, "step_oncpu"))))
  end
end

-- The finding: how much of a 4 KiB first touch's time on the CPU lies
-- outside the guest kernel's account, or nil. say: the published pages'
-- wording (round), given by whoever prints it.
function report.finding(doc, say)
  for _, v in ipairs(doc.values) do
    if v.value == "host_share_4K" then
      return ("`host.lua`: of a 4 KiB first touch's time on the CPU, %s [%s, %s] %% lies outside the "
        .. "guest kernel's account (%d repetitions of one run)."):format(say.round(v.measured), say.round(v.lo),
        say.round(v.hi), v.n)
    end
  end
end

return report
