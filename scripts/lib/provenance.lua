-- What a run ran on and with (read once, before anything is mapped), and
-- what else the machine did while each repetition ran (read around it).
-- Everything comes from /proc and /sys as text; git is asked once, before
-- the first mapping, since a fork later would make the process's pages
-- copy-on-write.
local ft = require "ft"

local provenance = {}

local read = require("textfile").read
local reporting = require "reporting"

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

local quote = require("shell").quote

-- What the published files are made from is the tree less what the publish
-- step itself writes (results/, and the blocks it pastes into README.md,
-- bench/README.md and the man page), so a publish's later runs (the bench,
-- the repeats) and the next publish do not see its own output as a change.
-- One pathspec for the record and for the refusal.
provenance.PATHSPEC = "-- . ':(exclude)results' ':(exclude)README.md' ':(exclude)bench/README.md'"
  .. " ':(exclude)doc/ftrun.1'"

-- The tree's state: commit, and when files differ from it, which ones and
-- a hash of the difference (the tracked diff, then each untracked file's
-- name and blob id), so two dirty runs can be told apart or matched. A
-- symlink's blob is its target's text, as git stores it (hash-object would
-- follow it, and a dangling one made git print a fatal error every run); a
-- file git cannot read counts by its name.
function provenance.tree(root)
  local git = "git -C " .. quote(root)
  local commit = command(git .. " rev-parse HEAD")
  if not commit then return { commit = "unknown (not a git checkout)", dirty = false } end
  local status = command(git .. " status --porcelain --untracked-files=normal " .. provenance.PATHSPEC) or ""
  local changed = {}
  for l in status:gmatch("[^\n]+") do changed[#changed + 1] = l:sub(4) end
  local t = { commit = commit, dirty = #changed > 0, changed = table.concat(changed, " ") }
  if t.dirty then
    local hash = command(("cd %s && { git diff HEAD --binary %s; git ls-files --others --exclude-standard %s"
      .. " | while IFS= read -r f; do printf '%%s %%s\\n' \"$f\" \"$(if [ -L \"$f\" ]; then"
      .. " printf '%%s' \"$(readlink -- \"$f\")\" | git hash-object --stdin; else"
      .. " git hash-object -- \"$f\" 2>/dev/null || echo unreadable; fi)\"; done; }"
      .. " | sha256sum"):format(quote(root), provenance.PATHSPEC, provenance.PATHSPEC))
    t.diff_sha256 = hash and hash:match("^(%x+)")
  end
  return t
end

-- CPU identity from /proc/cpuinfo's first processor.
local function cpu_identity()
  local text = read("/proc/cpuinfo") or ""
  local function field(name) return text:match("\n?" .. name .. "%s*:%s*([^\n]*)") end
  return { vendor = field("vendor_id"), family = tonumber(field("cpu family") or ""),
    model = tonumber(field("model") or ""), stepping = tonumber(field("stepping") or ""),
    microcode = field("microcode") }
end

local function glibc()
  local v = command("getconf GNU_LIBC_VERSION")
  return v and v:match("glibc%s+(%S+)") or v or "unknown"
end

-- The run's record: git, build, libc, CPU, kernel, memory settings, load.
-- Where git cannot answer (an installed ftrun, a checkout another user owns,
-- which git refuses as unsafe), what the build recorded: the commit it was
-- built from and whether its tree was dirty then.
function provenance.built_tree(root)
  local tree = provenance.tree(root)
  if tree.commit:match("^%x+$") or not ft.build.commit:match("^%x+$") then return tree end
  return { commit = ft.build.commit, dirty = ft.build.dirty,
    changed = ft.build.dirty and "(not recorded which: the build's tree had uncommitted changes)" or nil,
    source = "the build (git could not read " .. root .. ")" }
end

function provenance.collect()
  local root = ft.project_dir
  local tree = provenance.built_tree(root)
  local sizes = {}
  for _, kb in ipairs { 16, 32, 64, 128, 256, 512, 1024, 2048 } do
    local setting = line(("%s/hugepages-%dkB/enabled"):format(THP, kb))
    if setting then sizes[#sizes + 1] = ("%dkB: %s"):format(kb, setting:match("%[(%w+)%]") or setting) end
  end
  local function selected(path) local s = line(path); return s and (s:match("%[(%w+)%]") or s) end
  local cpu = cpu_identity()
  local m = ft.machine()
  return {
    git_commit = tree.commit, git_dirty = tree.dirty, git_changed = tree.changed, git_diff_sha256 = tree.diff_sha256,
    git_source = tree.source,
    -- a binary not rebuilt since a commit runs the new scripts with older C
    binary_commit = ft.build.commit ~= tree.commit and ft.build.commit:match("^%x+$") or nil,
    allow_dirty = tree.dirty and os.getenv("ALLOW_DIRTY") == "1" or nil,
    ftrun = ft.version, compiler = ft.build.compiler, cflags = ft.build.cflags, lua = _VERSION, glibc = glibc(),
    cpu_vendor = cpu.vendor, cpu_family = cpu.family, cpu_model = cpu.model, cpu_stepping = cpu.stepping,
    cpu_microcode = cpu.microcode,
    kernel = line("/proc/sys/kernel/osrelease"), kernel_version = line("/proc/sys/kernel/version"),
    hostname = line("/proc/sys/kernel/hostname"), cmdline = line("/proc/cmdline"),
    -- the kind of guest as the kernel names it (a PVM fault costs several of a KVM guest's)
    machine_kind = m.hypervisor, machine_kind_source = m.hypervisor_source,
    shadow_page_tables = m.shadow_page_tables, zero_page = m.zero_page,
    perf_event_paranoid = tonumber(line("/proc/sys/kernel/perf_event_paranoid") or ""),
    kptr_restrict = tonumber(line("/proc/sys/kernel/kptr_restrict") or ""),
    thp_enabled = selected(THP .. "/enabled"), thp_defrag = selected(THP .. "/defrag"),
    thp_sizes = table.concat(sizes, ", "),
    khugepaged_defrag = line(THP .. "/khugepaged/defrag"),
    khugepaged_pages_to_scan = tonumber(line(THP .. "/khugepaged/pages_to_scan") or ""),
    free_page_reporting = m.free_page_reporting,
    page_reporting = reporting.describe(),
    cpufreq_driver = line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver") or "none",
    loadavg = (line("/proc/loadavg") or ""):match("^(%S+ %S+ %S+)"),
  }
end

-- In the order the raw file lists them.
provenance.ORDER = { "git_commit", "git_dirty", "git_changed", "git_diff_sha256", "git_source", "binary_commit",
  "allow_dirty",
  "ftrun", "lua",
  "compiler", "cflags", "glibc", "cpu_vendor", "cpu_family", "cpu_model", "cpu_stepping", "cpu_microcode",
  "hostname", "kernel", "kernel_version", "cmdline", "machine_kind", "machine_kind_source", "shadow_page_tables",
  "zero_page", "perf_event_paranoid", "kptr_restrict", "thp_enabled", "thp_defrag", "thp_sizes",
  "khugepaged_defrag", "khugepaged_pages_to_scan", "free_page_reporting", "page_reporting", "cpufreq_driver",
  "loadavg" }

-- A binary file's text sidecar (name.txt): what the bytes are, their
-- sha256, and the provenance of the run that made them. The hash holds the
-- bytes to what the run wrote: claims checks it, and an edit of the file
-- alone, or two of its values swapped, shows (an edit with the sidecar made
-- again, by make claims, does not: the run's own figures of it must then).
function provenance.sidecar(name, about, bytes, prov)
  return ("%s: %s\nsha256: %s\n%s\n"):format(name, about, require("textfile").sha256(bytes),
    provenance.describe(prov))
end

-- The record as the raw file's head lists it, a "key: value" line each.
function provenance.lines(prov)
  local out = {}
  for _, k in ipairs(provenance.ORDER) do
    -- binary_commit only where it differs, so the heads published before it read as they were
    if prov[k] ~= nil or k ~= "binary_commit" then out[#out + 1] = k .. ": " .. tostring(prov[k]) end
  end
  return out
end

-- The record in one line, for the files that have no room for the whole
-- (a summary's foot, bench.txt, compare.lua's output, a plot's sources).
function provenance.describe(p)
  if type(p) ~= "table" then return "provenance: not recorded" end
  local function v(x) return x == nil and "?" or tostring(x) end
  local tree = v(p.git_commit)
  if p.git_dirty then
    tree = p.git_diff_sha256 and ("%s + uncommitted changes (diff sha256 %s%s) in %s"):format(tree,
      p.git_diff_sha256:sub(1, 16), p.allow_dirty and ", published with ALLOW_DIRTY=1" or "", v(p.git_changed))
      or tree .. " + uncommitted changes (not recorded which)"
  end
  if p.git_source then tree = tree .. " (from " .. p.git_source .. ")" end
  if p.binary_commit then tree = tree .. ", the binary built from " .. p.binary_commit end
  return ("provenance: commit %s; ftrun %s, %s, glibc %s; CPU %s family %s model %s stepping %s microcode %s; "
    .. "kernel %s%s, perf_event_paranoid %s, kptr_restrict %s; THP %s, defrag %s, sizes %s "
    .. "(? = not recorded)"):format(
    tree, v(p.ftrun), v(p.compiler), v(p.glibc), v(p.cpu_vendor), v(p.cpu_family), v(p.cpu_model), v(p.cpu_stepping),
    -- runs made before the kind was recorded read as they did
    v(p.cpu_microcode), v(p.kernel), p.machine_kind and ", guest " .. p.machine_kind or "",
    v(p.perf_event_paranoid), v(p.kptr_restrict), v(p.thp_enabled),
    v(p.thp_defrag), p.thp_sizes ~= "" and v(p.thp_sizes) or "none")
end

-- make publish's gate: a tree that differs from its commit (outside
-- results/) is refused, naming the files, unless ALLOW_DIRTY=1, which the
-- runs then record. Returns the exit status.
function provenance.check_clean(root)
  local t = provenance.tree(root or ft.project_dir)
  if not t.dirty then return 0 end
  if os.getenv("ALLOW_DIRTY") == "1" then
    io.stderr:write("publish: the tree has uncommitted changes (" .. t.changed .. "); ALLOW_DIRTY=1: "
      .. "publishing anyway, and every file records it\n")
    return 0
  end
  io.stderr:write("publish: refused: the tree has uncommitted changes in " .. t.changed
    .. "\n  commit them (or stash them), or give ALLOW_DIRTY=1 to publish anyway with the diff's hash on record\n")
  return 2
end

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
