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

-- The snapshot after a run, for a check that the run left every setting as `before`: read again
-- every 0.2 s until it equals `before` or `limit` seconds (default 30) have passed. The lock
-- keeps out ftrun runs that share it, not everyone: a suite in a chroot has a lock directory of
-- its own, and a program may write a setting directly. Their runs put back what they change
-- when they end; a setting this run left changed stays changed and still fails the check. The
-- returned diagnostics name the lines that differ.
function sysfs.settled(before, limit)
  local now = sysfs.snapshot()
  local deadline = os.time() + (limit or 30)
  while now ~= before and os.time() < deadline do
    os.execute("sleep 0.2")
    now = sysfs.snapshot()
  end
  local was, diag = {}, {}
  for line in before:gmatch("[^\n]+") do was[line] = true end
  for line in now:gmatch("[^\n]+") do
    if not was[line] then diag[#diag + 1] = "now " .. line end
  end
  if #diag > 0 then
    diag[#diag + 1] = ("(%d s later; another process may change a setting outside this file's lock)"):format(limit or 30)
  end
  return now, table.concat(diag, "\n")
end

-- The check itself: every setting reads as `before` (sysfs.settled), named `name`.
function sysfs.is_as_before(before, name)
  local now, diag = sysfs.settled(before)
  return t.is(now, before, name, diag)
end

-- Takes the settings lock for the rest of the test file, so that another suite or a run that
-- changes settings waits instead of changing them under this file's checks. The ftrun runs
-- the file starts inherit it (core/restore.h). Returns true, or nil and why.
function sysfs.hold_lock()
  local ft = require "ft"
  return ft.lock_settings()
end

return sysfs
