-- What this kind of machine cannot show, said beside the figures (the table's notes and the
-- JSON's `limits`), so that a figure this guest made is not read as the kernel's. A script
-- names the topics its figures touch; the facts come from ft.machine() and ft.clock().
local limits = {}

local TOPICS = {}

-- A read fault without the shared zero page.
function TOPICS.zero_page(m)
  if m.zero_page ~= false then return nil end
  return ("No zero page on this kernel (%s): a read fault gets a zeroed page of its own, so a read "
    .. "pass is a first touch here and no page sits on the zero page."):format(m.zero_page_why)
end

-- A cpu-clock profile inside a PVM guest.
function TOPICS.profile(m)
  if m.hypervisor ~= "PVM" then return nil end
  return ("PVM guest (%s): the samples taken with interrupts off land on pvm_irq_enable, and a "
    .. "fault's time outside the guest kernel is unsampled or lands on the faulting store, so the "
    .. "stages are the guest's view of a fault, not the kernel's cost of one."):format(m.hypervisor_source)
end

-- A per-page timer that is not the TSC.
function TOPICS.timer(m, clock)
  if m.timer == "rdtscp" or not clock then return nil end
  return ("The per-page timer is %s (%s): a reading costs %.0f ns with a %d ns tick, so a per-page "
    .. "time within a few readings of that is the timer's, not the store's."):format(m.timer,
    m.timer_why or "not the TSC", clock.timed.read_ns, clock.timed.tick_ns)
end

-- A fault's cost under shadow page tables.
function TOPICS.fault_cost(m)
  if m.shadow_page_tables ~= true then return nil end
  return ("%s guest with shadow page tables (%s): every page-table change of a fault is also "
    .. "the host's work, so a fault's cost here is this kind's and is not comparable with an "
    .. "EPT guest's (KVM)."):format(m.hypervisor, m.hypervisor_source)
end

-- The steal counter, where the host does not keep it.
function TOPICS.steal(m)
  local f = io.open("/proc/stat")
  local line = f and f:read("l")
  if f then f:close() end
  local v = {}
  for n in (line or ""):gmatch("%d+") do v[#v + 1] = tonumber(n) end
  if v[8] ~= 0 then return nil end -- moved, or unread
  return ("In /proc/stat, steal has not moved since boot: this guest's host does not report it, so a steal of 0 "
    .. "is no measurement of the host's share%s."):format(m.shadow_page_tables == true and (" (on this %s guest the "
    .. "host's time in a fault hides in guest user time at the faulting store)"):format(m.hypervisor) or "")
end

limits.TOPICS = TOPICS

-- Whether the topic is among the limits that hold (a list from limits.of).
function limits.holds(list, topic)
  for _, l in ipairs(list or {}) do
    if l.topic == topic then return true end
  end
  return false
end

-- The limits among topics that hold on this machine: a list of {topic =, text =}.
function limits.of(machine, clock, topics)
  local list = {}
  for _, topic in ipairs(topics) do
    local fn = TOPICS[topic]
    if not fn then error(("limits: unknown topic '%s'"):format(tostring(topic)), 2) end
    local text = fn(machine, clock)
    if text then list[#list + 1] = { topic = topic, text = text } end
  end
  return list
end

return limits
