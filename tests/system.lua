-- The clock, the counters and the machine description.
local t = require "tap"
local ft = require "ft"

local function integer(v) return math.type(v) == "integer" end

do
  local a = ft.now_ns()
  local b = ft.now_ns()
  t.ok(integer(a) and b >= a, "now_ns is a monotonic integer")
end

do
  local c = ft.clock()
  t.diag(("clock: tick %d ns, read %.1f ns; touch_timed: tick %d ns, read %.1f ns"):format(
    c.tick_ns, c.read_ns, c.timed.tick_ns, c.timed.read_ns))
  t.ok(integer(c.tick_ns) and c.tick_ns > 0, "clock tick measured")
  t.ok(c.read_ns > 0 and c.read_ns < 10000, "clock read cost measured")
  t.ok(c.timed.tick_ns > 0 and c.timed.read_ns > 0, "touch_timed timestamp measured")
  t.like(c.source, "CLOCK_MONOTONIC", "clock source named")
  t.ok(#c.clocksource > 0, "kernel clocksource named")
end

do
  local ghz, source = ft.clock_estimate()
  t.diag(("clock estimate %.3f GHz (%s)"):format(ghz, source))
  t.ok(ghz > 0.2 and ghz < 10, "clock estimate in a sane range")
  t.is(source, "measured", "clock estimate source")
  local out, code = t.ftrun_run("-e 'print(ft.clock_estimate())'", "CLOCK_GHZ=3.25")
  t.like(out, "3.25\tCLOCK_GHZ", "CLOCK_GHZ overrides the estimate")
  t.is(code, 0, "CLOCK_GHZ override exits 0")
  out, code = t.ftrun_run("-e 'print(ft.clock_estimate())'", "CLOCK_GHZ=fast")
  t.like(out, "CLOCK_GHZ=fast: expected a clock rate in GHz", "bad CLOCK_GHZ named")
  t.is(code, 1, "bad CLOCK_GHZ exits 1")
  out, code = t.ftrun_run("-e 'print(ft.clock_estimate())'", "CLOCK_GHZ=measured")
  t.like(out, "\tmeasured", "CLOCK_GHZ=measured asks for the estimate")
  t.is(code, 0, "and exits 0")
  local dir = t.tmpdir()
  out, code = t.ftrun_run("first_touch.lua MIB=1 REPS=1 RESULTS=" .. t.quote(dir .. "/r"), "CLOCK_GHZ=measured")
  t.is(code, 0, "a script run with CLOCK_GHZ=measured in the environment (its knob's own value) exits 0", out)
  t.ok((t.read(dir .. "/r/exp-first_touch-raw.txt") or ""):find("value=clock_ghz unit=GHz x=[%d.]+ source=measured"),
    "and measures")
  os.execute("rm -rf " .. t.quote(dir))
end

do
  local ru = ft.rusage()
  for _, k in ipairs { "minflt", "majflt", "utime_ns", "stime_ns", "maxrss_kb" } do
    t.ok(integer(ru[k]) and ru[k] >= 0, "rusage." .. k .. " is an integer")
  end
  t.ok(ft.faults() >= ru.minflt + ru.majflt, "faults = minor + major")
  -- faults() allocates nothing: a bracket around nothing counts nothing
  local f0 = ft.faults()
  local f1 = ft.faults()
  t.is(f1 - f0, 0, "an empty bracket counts 0 faults")
end

do
  local m = ft.meminfo()
  t.ok(integer(m.MemTotal) and m.MemTotal > 0, "meminfo MemTotal")
  t.ok(integer(m.MemAvailable), "meminfo MemAvailable")
  t.ok(integer(m.AnonHugePages), "meminfo AnonHugePages")
  local v = ft.vmstat()
  t.ok(integer(v.pgfault) and v.pgfault > 0, "vmstat pgfault")
  t.ok(integer(v.thp_fault_alloc), "vmstat thp_fault_alloc")
end

do
  local m = ft.machine()
  t.is(m.page_size, ft.page_size(), "machine page size is sysconf's")
  t.ok(#m.kernel > 0, "kernel release")
  t.ok(#m.cpu > 0, "cpu model")
  t.ok(m.thp_enabled == "always" or m.thp_enabled == "madvise" or m.thp_enabled == "never",
    "THP enabled setting: " .. m.thp_enabled)
  t.ok(integer(m.numa_nodes) and m.numa_nodes >= 1, "numa nodes counted")
  t.ok(integer(m.cpus) and m.cpus >= 1, "cpus counted")
  t.ok(type(m.hypervisor) == "string", "hypervisor: " .. m.hypervisor)
  t.ok(m.free_page_reporting == "on" or m.free_page_reporting == "off"
    or m.free_page_reporting == "no balloon", "free page reporting: " .. m.free_page_reporting)
end

do
  t.is(ft.sink(42), 42, "sink returns its argument")
  local b <close> = ft.mmap(1 << 20)
  t.is(ft.sink(b), b, "sink takes a buffer")
  t.errors(function() ft.sink() end, "value expected", "sink needs an argument")
  t.errors(function() ft.clock(1) end, "too many arguments", "clock takes no argument")
  t.errors(function() ft.now_ns(1) end, "got 1, expected at most 0", "now_ns takes no argument")
  t.errors(function() ft.faults(1) end, "got 1, expected at most 0", "faults takes no argument")
  t.errors(function() ft.page_size(1) end, "got 1, expected at most 0", "page_size takes no argument")
  t.errors(function() ft.sink(1, 2) end, "got 2, expected at most 1", "sink takes one argument")
  t.is(require("ft"), ft, "require 'ft' returns the preloaded module")
  t.ok(type(ft.version) == "string", "ft.version")
end

do -- ft.interrupted, ft.project_dir, ft.mkdir, ft.symlink
  t.is(ft.interrupted(), false, "not interrupted")
  t.errors(function() ft.interrupted(1) end, "got 1, expected at most 0", "interrupted takes no argument")
  local out = t.run("readlink -f " .. t.quote(t.ftrun))
  t.is(ft.project_dir .. "/", out:match("^(.*/)[^/]*\n$"), "project_dir holds the executable")
  local d = t.tmpdir()
  t.is(ft.mkdir(d .. "/a/b/c"), true, "mkdir creates parents")
  t.is(ft.mkdir(d .. "/a/b/c"), true, "mkdir of an existing directory is true")
  assert(io.open(d .. "/file", "w")):close()
  local ok, msg, errno = ft.mkdir(d .. "/file")
  t.is(ok, nil, "mkdir over a file returns nil")
  t.like(msg, d .. "/file", "the message names the path")
  t.is(math.type(errno), "integer", "and an errno")
  t.is(ft.symlink("one", d .. "/link"), true, "symlink")
  t.is(ft.symlink("two", d .. "/link"), true, "symlink over an existing link")
  t.is(t.run("readlink " .. t.quote(d .. "/link")), "two\n", "the link was replaced")
  t.is(t.run("ls -A " .. t.quote(d) .. " | grep -c tmp"), "0\n", "no temporary link left")
  -- a path with an embedded NUL is refused, not cut short at it
  t.errors(function() ft.mkdir(d .. "/n\0x") end, "holds an embedded NUL", "mkdir: a NUL in the path")
  t.errors(function() ft.symlink("a\0b", d .. "/nl") end, "holds an embedded NUL", "symlink: a NUL in the target")
  t.errors(function() ft.symlink("a", d .. "/nl\0x") end, "holds an embedded NUL", "symlink: a NUL in the link")
  t.errors(function() ft.write_files { { d .. "/nw\0x", "t" } } end, "holds an embedded NUL",
    "write_files: a NUL in a path")
  t.errors(function() ft.temporary(d .. "/nt\0x") end, "holds an embedded NUL", "temporary: a NUL in the path")
  t.is(t.run("ls -A " .. t.quote(d) .. " | grep -c '^n'"), "0\n", "and none of them made a file")
  os.execute("rm -rf " .. t.quote(d))
end

local function read(path)
  local f = io.open(path)
  if not f then return nil end
  local s = f:read("a") f:close() return s
end
local function temps(dir) return t.run("ls -A " .. t.quote(dir) .. " | grep -c '\\.tmp$'") end

do -- ft.write_files: all or nothing
  local d = t.tmpdir()
  t.is(ft.write_files { { d .. "/a", "one" }, { d .. "/b", "two" }, { d .. "/c", ("x"):rep(100000) } },
    true, "write_files of 3 files")
  t.is(read(d .. "/a"), "one", "first file read back")
  t.is(read(d .. "/b"), "two", "second file read back")
  t.is(read(d .. "/c"), ("x"):rep(100000), "third file read back")
  t.is(temps(d), "0\n", "no temporaries left")
  local ok, msg = ft.write_files { { d .. "/a", "new" }, { d .. "/nodir/x", "y" } }
  t.is(ok, nil, "a missing directory makes the whole write fail")
  t.like(msg, d .. "/nodir/x", "the message names the path")
  t.is(read(d .. "/a"), "one", "and no target changed")
  t.is(temps(d), "0\n", "and its temporaries were removed")
  local ro = d .. "/ro"
  ft.mkdir(ro)
  os.execute("chmod 555 " .. t.quote(ro))
  ok, msg = ft.write_files { { ro .. "/x", "y" } }
  if t.run("id -u") == "0\n" then
    -- root ignores the mode bits: sysfs refuses new files even to root
    ok, msg = ft.write_files { { "/sys/ftrun_test_file", "y" } }
    t.is(ok, nil, "an unwritable directory (/sys, as root): nil")
    t.like(msg, "writing /sys/ftrun_test_file failed: Permission denied", "an unwritable directory: path + strerror")
  else
    t.like(msg, "Permission denied", "an unwritable directory: nil + strerror")
  end
  if t.run("id -u") == "0\n" then
    local m = d .. "/small"
    ft.mkdir(m)
    if os.execute("mount -t tmpfs -o size=64k tmpfs " .. t.quote(m)) then
      assert(ft.write_files { { m .. "/keep", "old" } })
      local ok2, msg2 = ft.write_files { { m .. "/keep", "new" }, { m .. "/big", ("z"):rep(1 << 20) } }
      t.is(ok2, nil, "a full disk: nil")
      t.like(msg2, "No space left on device", "a full disk: ENOSPC's text")
      t.is(read(m .. "/keep"), "old", "a full disk: no target changed")
      t.is(read(m .. "/big"), nil, "a full disk: the big target was not created")
      t.is(temps(m), "0\n", "a full disk: no temporary left")
      os.execute("umount " .. t.quote(m))
    else
      t.ok(false, "mount tmpfs failed although root")
    end
  end
  assert(ft.write_files { { d .. "/i1", "old" } })
  local script = ("ft.write_files{{%q,'new'},{%q,'new'}}"):format(d .. "/i1", d .. "/i2")
  local out, code = t.run("{ FTRUN_TEST_WRITE_PAUSE=2 " .. t.quote(t.ftrun) .. " -e " .. t.quote(script)
    .. " & pid=$!; sleep 0.5; kill -INT $pid; wait $pid; }")
  t.is(code, 130, "SIGINT mid-write exits 130", out)
  t.is(read(d .. "/i1"), "old", "interrupted: the target is unchanged")
  t.is(read(d .. "/i2"), nil, "interrupted: the second target was not created")
  t.is(temps(d), "0\n", "interrupted: no temporary left")
  os.execute("chmod 755 " .. t.quote(ro) .. "; rm -rf " .. t.quote(d))
end

do -- WE-4, WE-5, SW-3: no temporaries left for long, one writer at a time in a directory
  local d = t.tmpdir()
  local q = t.quote
  -- a set larger than the old 32-entry table, ended by SIGTERM while writing
  local files = {}
  for i = 1, 60 do files[i] = ("{%q,'x'}"):format(d .. "/many/f" .. i) end
  os.execute("mkdir -p " .. q(d .. "/many"))
  local out = t.run(("{ FTRUN_TEST_WRITE_PAUSE=0.02 %s -e %s & pid=$!; sleep 1; kill -TERM $pid; wait $pid; }")
    :format(q(t.ftrun), q("ft.write_files{" .. table.concat(files, ",") .. "}")))
  t.is(temps(d .. "/many"), "0\n", "SIGTERM while writing 60 files: no temporary left (WE-4)", out)
  -- a killed writer's temporaries are swept by the next write there; a live one's and others' stay
  local dead = tonumber(t.run("sh -c 'echo $$'"):match("%d+"))
  local live = tonumber((t.read("/proc/self/stat") or ""):match("^%d+")) -- this process, alive
  local stale = ("%s/.results.json.%d.1a2b3c.tmp"):format(d, dead)
  local kept = ("%s/.results.json.%d.4d5e6f.tmp"):format(d, live)
  local other = d .. "/.notes.tmp"
  for _, p in ipairs { stale, kept, other } do t.write(p, "x") end
  assert(ft.write_files { { d .. "/results.json", "{}" } })
  t.is(read(stale), nil, "a killed writer's temporary is swept by the next write there (WE-5)")
  t.is(read(kept), "x", "a live writer's is kept")
  t.is(read(other), "x", "and a file not named as ours is kept")
  -- two writers into one directory: the second waits, the set is one writer's (SW-3)
  local set = function(v)
    return q(("ft.write_files{{%q,%q},{%q,%q},{%q,%q}}"):format(d .. "/a", v, d .. "/b", v, d .. "/c", v))
  end
  out = t.run(("{ FTRUN_TEST_RENAME_PAUSE=1.5 %s -e %s & sleep 0.5; %s -e %s; wait; } 2>&1")
    :format(q(t.ftrun), set("1"), q(t.ftrun), set("2")))
  t.is(read(d .. "/a") .. read(d .. "/b") .. read(d .. "/c"), "222", "two writers into one directory leave "
    .. "the second's whole set, not a mix (SW-3)", out)
  t.like(out, "waiting for another run writing into " .. d, "the second says it waits")
  -- the table refuses what it cannot hold, rather than forget it
  local ok, err = pcall(function() for i = 1, 5000 do ft.temporary(d .. "/t" .. i) end end)
  t.ok(not ok and tostring(err):find("cannot be tracked", 1, true), "ft.temporary beyond the table is an error",
    tostring(err))
  for i = 1, 5000 do ft.temporary(d .. "/t" .. i, false) end
  os.execute("rm -rf " .. q(d))
end

do -- ft.list_dir and shell.list: a directory's names, sorted, without . and ..; a refusal as a value
  local dir = t.tmpdir()
  for _, n in ipairs { "b.lua", "a.json", "c results.json", ".hidden" } do t.write(dir .. "/" .. n, "x") end
  t.is(table.concat(ft.list_dir(dir), "|"), ".hidden|a.json|b.lua|c results.json", "every name, sorted")
  local shell = require "shell"
  t.is(table.concat(shell.list(dir, "results%.json$"), "|"), "c results.json", "shell.list filters by a pattern")
  t.is(shell.quote("it's"), [['it'\''s']], "shell.quote: one quoted word")
  local none, msg, errno = ft.list_dir(dir .. "/nope")
  t.is(none, nil, "a missing directory: nil")
  t.like(msg, "cannot list " .. dir .. "/nope: No such file or directory", "with the reason")
  t.is(errno, 2, "and ENOENT")
  t.is(#shell.list(dir .. "/nope"), 0, "shell.list of it: empty")
  t.errors(function() ft.list_dir("a\0b") end, "NUL", "a path with a NUL is an error")
  os.execute("rm -rf " .. t.quote(dir))
end

t.done()
