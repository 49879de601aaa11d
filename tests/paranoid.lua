-- kernel.perf_event_paranoid set for real (D10). The setting explains a refused
-- perf_event_open, it never predicts one: paranoid 3 refuses user space on kernels with
-- Debian's patch and means 2 on the others. A C probe says what this kernel grants, and
-- ft.counters, ft.profile and ft.trace must agree with it, as nobody and as root.
--
-- The file holds the settings lock, and each change (perf_event_paranoid, and kptr_restrict
-- once) is made and undone inside one shell
-- whose EXIT, INT, TERM and HUP traps write the value found back, whatever the run inside
-- does; the value is checked after each. (The settings journal records only what ftrun
-- itself writes; a SIGKILL of that shell would leave the change, for at most one short run.)
local t = require "tap"
local sysfs = require "sysfs"

local PARANOID = "/proc/sys/kernel/perf_event_paranoid"
local function skip_all(why)
  t.ok(true, "perf_event_paranoid set for real # SKIP " .. why)
  t.done()
end
local nobody, why = t.nobody()
if not nobody then skip_all(why) end
if not t.read(PARANOID) then skip_all(PARANOID .. " is missing: no perf events") end
assert(sysfs.hold_lock())
local before = t.read(PARANOID):match("%-?%d+")
if not t.read("/proc/sys/kernel/kptr_restrict") then skip_all("no /proc/sys/kernel/kptr_restrict") end

-- What the kernel grants nobody, asked without ftrun: "granted" or "refused <errno>".
-- user: this thread's page faults, user space only; cpu: page faults on CPU 0, any task.
local dir = t.tmpdir()
t.write(dir .. "/probe.c", [[
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int cpu = argc > 1 && strcmp(argv[1], "cpu") == 0;
	long fd = syscall(SYS_perf_event_open, &a, cpu ? -1 : 0, cpu ? 0 : -1, -1, 0);
	if (fd < 0)
		printf("refused %d\n", errno);
	else
		printf("granted\n");
	return 0;
}
]])
local cc = os.getenv("CC") or "cc"
local out, built = t.run(("%s -o %s/probe %s/probe.c && chmod -R a+rX %s"):format(cc, t.quote(dir),
  t.quote(dir), t.quote(dir)))
if built ~= 0 then
  os.execute("rm -rf " .. t.quote(dir))
  skip_all("the probe does not compile with " .. cc .. ": " .. out)
end
local probe = "setpriv --reuid=65534 --regid=65534 --clear-groups " .. t.quote(dir .. "/probe")

-- Runs cmd with the kernel settings at values ({name = value}, in /proc/sys/kernel); the
-- shell's traps put back what was found. Returns the output and checks the settings are back.
local KERNEL = "/proc/sys/kernel/"
local found = {}
local function at(values, cmd)
  local restore, change, names = {}, {}, {}
  for name, v in pairs(values) do
    found[name] = found[name] or t.read(KERNEL .. name):match("%-?%d+")
    restore[#restore + 1] = ("echo %s >%s%s"):format(found[name], KERNEL, name)
    change[#change + 1] = ("echo %d >%s%s"):format(v, KERNEL, name)
    names[#names + 1] = name .. " " .. v
  end
  local run_out = t.run(("trap %s EXIT; trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM; " ..
    "%s || exit 1; %s"):format(t.quote(table.concat(restore, "; ")), table.concat(change, " && "), cmd))
  for name in pairs(values) do
    t.is(t.read(KERNEL .. name):match("%-?%d+"), found[name], ("%s back at %s after a run with %s")
      :format(name, found[name], table.concat(names, ", ")))
  end
  return run_out
end
local function ftrun_code(code) return " -e " .. t.quote(code) end
local root = t.quote(t.ftrun)

local COUNT = [[
  local c, why, err = ft.counters()
  if not c then print("refused", why, err) return end
  local b = ft.mmap(1 << 20, {thp = "never"})
  local x, y = c:read(), c:read()
  c:read(x) b:touch(1) c:read(y)
  local n = y.page_faults - x.page_faults
  print("open", c.kernel_excluded, n == b.pages or ("%d faults for %d pages"):format(n, b.pages))]]
local PROFILE = [[
  local b = ft.mmap(4 << 20)
  local p, why, err = ft.profile(b.touch, {kernel = false, freq = 20000}, b, 1)
  if not p then print("refused", why, err) return end
  print("open", p.kernel, p.samples == p.user)]]

do -- FTRUN_PROC_SYS naming a directory without the settings: a refusal says the setting could
  -- not be read, never a value or a cause it did not read (at the machine's own setting: at 2,
  -- the default, nobody's kernel profile is refused)
  local missing = dir .. "/no-such-dir"
  local said = t.run(("FTRUN_PROC_SYS=%s %s"):format(t.quote(missing), nobody .. ftrun_code("print(ft.profile(print))")))
  if said:find("^nil\t") then
    t.like(said, "ft.profile: perf_event_open (cpu-clock): " .. missing .. "/perf_event_paranoid could not be read ("
      .. "No such file or directory): the setting that refused it is not known", "an unreadable stand-in: said so")
    t.ok(not said:find("CONFIG_PERF_EVENTS", 1, true) and not said:find("-1000", 1, true),
      "and no cause or value it did not read", said)
  else
    t.ok(true, "an unreadable FTRUN_PROC_SYS # SKIP nobody may profile the kernel here: " .. said)
  end
end

local ok, err = pcall(function()
  -- At 3: what the probe says, ftrun does; a refusal names the setting and its value.
  local granted = at({ perf_event_paranoid = 3 }, probe .. " user")
  local counters = at({ perf_event_paranoid = 3 }, nobody .. ftrun_code(COUNT))
  local profile = at({ perf_event_paranoid = 3 }, nobody .. ftrun_code(PROFILE))
  t.diag("paranoid 3, nobody, the probe: " .. granted:gsub("\n$", ""))
  if granted == "granted\n" then
    t.is(counters, "open\ttrue\ttrue\n",
      "paranoid 3, granted by the kernel: nobody's counters open, user space only, faults counted")
    t.is(profile, "open\t0\ttrue\n", "paranoid 3, granted by the kernel: nobody's user-space profile works")
  else
    t.ok(granted == "refused 13\n" or granted == "refused 1\n", "the probe is refused with EACCES or EPERM",
      granted)
    t.like(counters, "refused\tft.counters: page_faults: /proc/sys/kernel/perf_event_paranoid is 3: " ..
      "perf events in user space needs it at 2 or below", "paranoid 3, refused: the setting and its value")
    t.like(profile, "perf_event_paranoid is 3: perf events in user space needs it at 2 or below",
      "paranoid 3, refused: ft.profile names the setting and its value")
  end
  -- As root nothing changes: CAP_PERFMON is not subject to the setting.
  t.is(at({ perf_event_paranoid = 3 }, root .. ftrun_code(COUNT)), "open\tfalse\ttrue\n",
    "paranoid 3, root: counters see the kernel too")
  t.is(at({ perf_event_paranoid = 3 }, root .. ftrun_code("print(ft.profile(function() end) ~= nil)")), "true\n",
    "paranoid 3, root: kernel profiling works")
  -- At 1: events on every CPU are refused to nobody; the refusal says so by name.
  local cpu = at({ perf_event_paranoid = 1 }, probe .. " cpu")
  local trace = at({ perf_event_paranoid = 1 }, nobody .. ftrun_code("print(ft.trace{cpu_events = {'software:page-faults'}})"))
  if cpu == "granted\n" then
    t.ok(not trace:find("^nil"), "paranoid 1, per-CPU events granted by the kernel: ft.trace opens them")
  else
    t.like(trace, "nil\tft.trace: perf_event_open (software:page-faults, per CPU): " ..
      "/proc/sys/kernel/perf_event_paranoid is 1: events on every CPU need it at 0 or below",
      "paranoid 1, per-CPU events refused: the setting, its value, what it must be")
  end
  -- At 1 with kptr_restrict 1, the kernel grants nobody kernel samples but shows zeros in
  -- /proc/kallsyms; fake values that say otherwise let the open through, and the zeros are
  -- a refusal that names both settings.
  local fake = t.tmpdir()
  t.write(fake .. "/perf_event_paranoid", "1\n")
  t.write(fake .. "/kptr_restrict", "0\n")
  os.execute("chmod a+rX " .. t.quote(fake))
  local zeros = at({ perf_event_paranoid = 1, kptr_restrict = 1 }, ("FTRUN_PROC_SYS=%s %s"):format(
    t.quote(fake), nobody .. ftrun_code("print(ft.profile(print))")))
  os.execute("rm -rf " .. t.quote(fake))
  t.like(zeros, "nil\tft.profile: /proc/kallsyms shows every address as 0 (",
    "paranoid 1, kptr_restrict 1, nobody: kallsyms read as zeros is a refusal")
  t.like(zeros, "perf_event_paranoid 1): kptr_restrict must be 0", "and it names both settings")
end)
os.execute("rm -rf " .. t.quote(dir))
t.is(t.read(PARANOID):match("%-?%d+"), before, "perf_event_paranoid is as found: " .. before)
for name, v in pairs(found) do t.is(t.read(KERNEL .. name):match("%-?%d+"), v, name .. " is as found: " .. v) end
if not ok then t.ok(false, "the checks ran to the end", tostring(err)) end
t.done()
