-- The guest's free page reporting (/sys/module/page_reporting): what it was
-- set to for the run's record, how much it handed back to the host around
-- each pass, and the REPORTING knob every script takes through the harness.
-- A page the guest reported must be supplied by the host again at its next
-- first touch, so the module is a setting of the measurement like THP.
local ft = require "ft"

local reporting = {}

-- HELD stops reporting for the run: a free page must wait five minutes
-- (min_free_ms; this PVM guest refuses 600000 and more) and be part of a
-- free 4 MiB block (page_reporting_order 10, the buddy allocator's largest)
-- before it is handed back.
reporting.HELD = { min_free_ms = "300000", page_reporting_order = "10" }
reporting.PARAMS = { "page_reporting_order", "min_free_ms", "max_waiting_mib", "free_bitmap_enable" }

-- The parameters as one line for the provenance ("page_reporting_order=9
-- min_free_ms=0 ..."), or "absent (why)".
function reporting.describe()
  local p, why = ft.page_reporting()
  if not p then return "absent (" .. tostring(why) .. ")" end
  local parts = {}
  for _, k in ipairs(reporting.PARAMS) do parts[#parts + 1] = k .. "=" .. p[k] end
  return table.concat(parts, " ")
end

-- reported_kib now, or nil where the module is absent: read around passes.
function reporting.kib()
  return (ft.reported_kib())
end

-- The values before the run's first change, so that "as-booted" can put
-- them back between AB's sides.
local booted

-- REPORTING's apply: "held" writes HELD (through the settings lock and
-- journal; restored at the run's end, and after a kill at the next start),
-- "as-booted" writes back what the run found. nil, why: refused.
function reporting.use(value)
  if value == "as-booted" and not booted then return true end
  if not booted then
    local p, why = ft.page_reporting()
    if not p then return nil, "REPORTING=held: no page reporting module here: " .. tostring(why) end
    booted = { min_free_ms = p.min_free_ms, page_reporting_order = p.page_reporting_order }
  end
  local want = value == "held" and reporting.HELD or booted
  for _, k in ipairs { "min_free_ms", "page_reporting_order" } do
    local ok, why = ft.set_page_reporting(k, want[k])
    if not ok then return nil, ("REPORTING=%s: %s"):format(value, why) end
  end
  return true
end

function reporting.knob(fail)
  return { name = "REPORTING", kind = "choice", choices = { "as-booted", "held" }, default = "as-booted",
    desc = "held: the guest's free page reporting stopped for the run (min_free_ms and page_reporting_order "
      .. "raised, restored at its end); as-booted: left as found",
    apply = function(value)
      local ok, why = reporting.use(value)
      if not ok then fail(why) end
    end }
end

return reporting
