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
    if all and not p.populate and not p.sampled then return c.name end
  end
end

local function cell(row) return ("%s [%s, %s]"):format(units.cell(row.median, row.unit),
  units.cell(row.lo, row.unit), units.cell(row.hi, row.unit)) end

function report.derive(h)
  for _, page in ipairs { "4K", "2M" } do
    local name = case_where(h, { fresh = true, page = page })
    local step, beside = name and h:row(name, "step"), name and h:row(name, "beside_pct")
    if step and beside then
      local sys, waited, steal, unseen = h:row(name, "sys_pct"), h:row(name, "waited_pct"), h:row(name, "steal_pct"),
        h:row(name, "unseen_pct")
      h:value("host_share_" .. page, beside.median, "%", { { "lo", beside.lo }, { "hi", beside.hi }, { "n", beside.n } })
      h:note(("%s first touch, %s ns per page: of its time on the CPU, %s %% is outside the guest kernel "
        .. "(user mode by the guest's account, where the loop's own stores cost about 20 ns a page); of its wall time the guest kernel holds %s %%, "
        .. "waiting for the CPU %s %%, steal %s %%, no guest account %s %%."):format(page, cell(step), cell(beside),
        cell(sys), cell(waited), cell(steal), cell(unseen)))
    end
  end
end

return report
