-- host.lua's report: the host's share of a 4 KiB and a 2 MiB first touch,
-- in words under the table, from the rows of the cases that touch fresh
-- memory (found by their params).
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
  for _, page in ipairs { "4K", "2M" } do
    local name = case_where(h, { fresh = true, page = page })
    local step, beside = name and h:row(name, "step"), name and h:row(name, "beside_pct")
    if step and beside then
      local sys, waited = h:row(name, "sys_pct"), h:row(name, "waited_pct")
      local steal, unseen = h:row(name, "steal_pct"), h:row(name, "unseen_pct")
      h:value("host_share_" .. page, beside.median, "%",
        { { "lo", beside.lo }, { "hi", beside.hi }, { "n", beside.n } })
      h:note(("%s first touch, %s ns per page: of its time on the CPU, %s %% is outside the guest kernel "
        .. "(user mode by the guest's account, where the loop's own stores cost about 20 ns a page); "
        .. "of its wall time the guest kernel holds %s %%, "
        .. "waiting for the CPU %s %%, steal %s %%, no guest account %s %%."):format(page, cell(step), cell(beside),
        cell(sys), cell(waited), cell(steal), cell(unseen)))
    end
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

return report
