-- The machine-wide THP and hugetlb settings as their files say, read without ft, for tests
-- that check a run left them as it found them. One snapshot is "path=value" lines, sorted.
local t = require "tap"

local sysfs = {
  THP = "/sys/kernel/mm/transparent_hugepage",
  HUGETLB = "/sys/kernel/mm/hugepages",
}

-- A setting's value: the bracketed choice of "always [madvise] never", else the first word.
function sysfs.setting(path)
  local s = t.read(path)
  return s and (s:match("%[(%w+)%]") or s:match("^%s*(%S+)"))
end

local FILES = { "enabled", "nr_hugepages", "surplus_hugepages", "nr_overcommit_hugepages" }

function sysfs.snapshot()
  local lines = { sysfs.THP .. "/enabled=" .. tostring(sysfs.setting(sysfs.THP .. "/enabled")) }
  local dirs = t.run("ls -d " .. sysfs.THP .. "/hugepages-*kB " .. sysfs.HUGETLB .. "/hugepages-*kB 2>/dev/null")
  for dir in dirs:gmatch("[^\n]+") do
    for _, name in ipairs(FILES) do
      local v = sysfs.setting(dir .. "/" .. name)
      if v then lines[#lines + 1] = dir .. "/" .. name .. "=" .. v end
    end
  end
  table.sort(lines)
  return table.concat(lines, "\n")
end

-- Takes the settings lock for the rest of the test file, so that another suite or a run that
-- changes settings waits instead of changing them under this file's checks. The ftrun runs
-- the file starts inherit it (core/restore.h). Returns true, or nil and why.
function sysfs.hold_lock()
  local ft = require "ft"
  return ft.lock_settings()
end

return sysfs
