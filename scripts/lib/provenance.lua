-- What a run ran on and with (read once, before anything is mapped), and
-- what else the machine did while each repetition ran (read around it).
-- Everything comes from /proc and /sys as text; git is asked once, before
-- the first mapping, since a fork later would make the process's pages
-- copy-on-write.
local ft = require "ft"

local provenance = {}

local function read(path)
  local f = io.open(path)
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

local function line(path)
  local text = read(path)
  return text and (text:gsub("%s+$", "")) or nil
end

local function command(cmd)
  local p = io.popen(cmd .. " 2>/dev/null")
  if not p then return nil end
  local out = p:read("a")
  local ok = p:close()
  return ok and (out:gsub("%s+$", "")) or nil
end

local THP = "/sys/kernel/mm/transparent_hugepage"

-- The run's record: git, build, kernel, memory settings, load.
function provenance.collect()
  local root = ft.project_dir
  local q = "'" .. root:gsub("'", "'\\''") .. "'"
  local commit = command("git -C " .. q .. " rev-parse HEAD")
  local status = commit and command("git -C " .. q .. " status --porcelain --untracked-files=no")
  local sizes = {}
  for _, kb in ipairs { 16, 32, 64, 128, 256, 512, 1024, 2048 } do
    local setting = line(("%s/hugepages-%dkB/enabled"):format(THP, kb))
    if setting then sizes[#sizes + 1] = ("%dkB: %s"):format(kb, setting:match("%[(%w+)%]") or setting) end
  end
  local function selected(path) local s = line(path); return s and (s:match("%[(%w+)%]") or s) end
  return {
    git_commit = commit or "unknown (not a git checkout)",
    git_dirty = status and status ~= "" or false,
    ftrun = ft.version, compiler = ft.build.compiler, cflags = ft.build.cflags, lua = _VERSION,
    kernel = line("/proc/sys/kernel/osrelease"), cmdline = line("/proc/cmdline"),
    thp_enabled = selected(THP .. "/enabled"), thp_defrag = selected(THP .. "/defrag"),
    thp_sizes = table.concat(sizes, ", "),
    khugepaged_defrag = line(THP .. "/khugepaged/defrag"),
    khugepaged_pages_to_scan = tonumber(line(THP .. "/khugepaged/pages_to_scan") or ""),
    free_page_reporting = ft.machine().free_page_reporting,
    cpufreq_driver = line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver") or "none",
    loadavg = (line("/proc/loadavg") or ""):match("^(%S+ %S+ %S+)"),
  }
end

-- In the order the raw file lists them.
provenance.ORDER = { "git_commit", "git_dirty", "ftrun", "lua", "compiler", "cflags", "kernel", "cmdline",
  "thp_enabled", "thp_defrag", "thp_sizes", "khugepaged_defrag", "khugepaged_pages_to_scan",
  "free_page_reporting", "cpufreq_driver", "loadavg" }

-- Noise ---------------------------------------------------------------------

-- /proc/stat's first line: every CPU's busy ticks (user nice system irq
-- softirq) and the guest's steal, in USER_HZ ticks (10 ms here).
local TICK_NS = 10000000

local function cpu_ticks()
  local l = (read("/proc/stat") or ""):match("^cpu%s+([^\n]*)") or ""
  local v = {}
  for n in l:gmatch("%d+") do v[#v + 1] = tonumber(n) end
  return (v[1] or 0) + (v[2] or 0) + (v[3] or 0) + (v[6] or 0) + (v[7] or 0), v[8] or 0
end

-- The process's context switches, migrations and the CPU it last ran on.
local function own_sched()
  local status = read("/proc/self/status") or ""
  local switches = (tonumber(status:match("voluntary_ctxt_switches:%s*(%d+)")) or 0)
    + (tonumber(status:match("nonvoluntary_ctxt_switches:%s*(%d+)")) or 0)
  local migrations = tonumber((read("/proc/self/sched") or ""):match("se%.nr_migrations%s*:%s*(%d+)"))
  local stat = read("/proc/self/stat") or ""
  local after_comm = stat:match("%) (.*)$") or ""
  local fields = {}
  for f in after_comm:gmatch("%S+") do fields[#fields + 1] = f end
  -- fields 14 to 17 of the file: utime, stime, and those of the children waited for (task processes)
  local ticks = 0
  for i = 12, 15 do ticks = ticks + (tonumber(fields[i]) or 0) end
  return switches, migrations, tonumber(fields[37]), ticks -- field 39 of the file, "processor"
end

function provenance.snapshot()
  local busy, steal = cpu_ticks()
  local switches, migrations, cpu, own_ticks = own_sched()
  return { t = ft.now_ns(), busy = busy, steal = steal, own_ns = own_ticks * TICK_NS,
    switches = switches, migrations = migrations, cpu = cpu }
end

-- A repetition is flagged when the guest lost more than STEAL_PCT of its
-- wall time to the host, or other processes kept more than FOREIGN_PCT of
-- one CPU busy on average while it ran.
provenance.STEAL_PCT, provenance.FOREIGN_PCT = 2, 25

function provenance.noise(a, b)
  local wall = b.t - a.t
  local foreign_ns = math.max(0, (b.busy - a.busy) * TICK_NS - (b.own_ns - a.own_ns))
  local n = {
    wall_ns = wall,
    steal_pct = 100 * (b.steal - a.steal) * TICK_NS / wall,
    foreign_pct = 100 * foreign_ns / wall,
    switches = b.switches - a.switches,
    migrations = a.migrations and b.migrations and b.migrations - a.migrations or nil,
    cpu_changed = a.cpu ~= b.cpu,
  }
  n.flagged = n.steal_pct > provenance.STEAL_PCT or n.foreign_pct > provenance.FOREIGN_PCT
  return n
end

return provenance
