-- The machine's facts that a test's checks depend on, as the kernel states them
-- (ft.machine(): the kernel log's hypervisor, the zero-page parameter, the cpuinfo flags).
-- A check that cannot hold on this kind is skipped with the fact as its reason.
local ft = require "ft"

local m = ft.machine()
local kind = {
  machine = m,
  name = m.hypervisor,
  pvm = m.hypervisor == "PVM",
  zero_page = m.zero_page,
  -- the reasons, worded as the kernel's facts
  NO_ZERO_PAGE = "no zero page: " .. m.zero_page_why,
  PVM_PROFILE = "PVM guest (" .. m.hypervisor_source .. "): time with interrupts off is sampled on "
    .. "pvm_irq_enable, and the faulting store's user samples hold fault time the guest kernel does not see",
}
-- Why a profile's KVM-shaped checks (clear_page on top, kernel above user) cannot be asserted
-- here, or nil: a PVM guest, or a kind the kernel log did not give (CAP_SYSLOG).
kind.PROFILE_SKIP = kind.pvm and kind.PVM_PROFILE
  or m.hypervisor == "unknown" and "the guest's kind is not known: " .. m.hypervisor_source or nil

-- Why a check of what THP advice obtains cannot hold now, or nil: a folio size's setting is
-- off its boot default (the PMD size inherit, the others never) after a run that held the
-- settings lock shared: another program changed it, and the folios a mapping got are its.
function kind.thp_disturbed()
  local ok, sizes = pcall(ft.folio_sizes)
  if not ok or type(sizes) ~= "table" then return nil end
  local pmd = 0
  for _, f in ipairs(sizes) do pmd = math.max(pmd, f.kb) end
  for _, f in ipairs(sizes) do
    local boot = f.kb == pmd and "inherit" or "never"
    if f.enabled ~= boot then
      return ("hugepages-%dkB/enabled is %s, not %s as at boot, changed outside the settings lock")
        :format(f.kb, tostring(f.enabled), boot)
    end
  end
end

-- The kind as one line for a test's notes.
function kind.describe()
  return ("hypervisor %s (%s), CPUID %q, shadow page tables %s, zero page %s (%s), timer %s%s"):format(
    m.hypervisor, m.hypervisor_source, m.cpuid_hypervisor, tostring(m.shadow_page_tables),
    tostring(m.zero_page), m.zero_page_why, m.timer, m.timer_why and " (" .. m.timer_why .. ")" or "")
end

return kind
