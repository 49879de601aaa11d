-- The kernel's list format of CPUs and nodes (sysfs cpulist, online,
-- has_memory; /proc's Cpus_allowed_list): "0-2,5".
local cpulist = {}

-- "0-2,5" -> {0, 1, 2, 5} in order, and the set {[0] = true, [1] = true, ...};
-- nil or "" -> two empty tables.
function cpulist.parse(s)
  local out, set = {}, {}
  for a, b in (s or ""):gmatch("(%d+)%-?(%d*)") do
    for i = tonumber(a), tonumber(b ~= "" and b or a) do out[#out + 1], set[i] = i, true end
  end
  return out, set
end

return cpulist
