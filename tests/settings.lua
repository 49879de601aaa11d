-- The settings lock and journal (core/restore.h): a second run waits or, with NOWAIT=1, is
-- refused; a holder's children share its lock; a dead run's journal is restored by the next
-- start and said, a live run's is left alone; SIGKILL during a THP=16K run, then any start,
-- puts the settings back; the start-up warning about mTHP settings off their boot defaults.
-- Most cases use a private lock directory (FTRUN_LOCK_DIR) and plain files for settings.
local t = require "tap"
local ft = require "ft"
local sysfs = require "sysfs"
local q = t.quote

local root = t.run("id -u") == "0\n"
local function skip(name, why) t.ok(true, name .. " # SKIP " .. why) end
local have_flock = t.run("command -v flock") ~= ""

local dir = t.tmpdir()
local lockdir = dir .. "/lock"
-- every child below uses the private lock, not one this file might hold
local env = ("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s"):format(q(lockdir))
local lockfile = lockdir .. "/ftrun-settings.lock"
local journals = lockdir .. "/ftrun-settings.journal"

-- The pid of a process that has ended.
local function dead_pid()
  return tonumber(t.run("sh -c 'echo $$'"):match("%d+"))
end

do -- no journal: --restore says there was nothing; the lock directory is made
  local out, code = t.ftrun_run("--restore", env)
  t.is(code, 0, "--restore with nothing to restore exits 0")
  t.like(out, "no killed run left settings changed", "and says so")
  out = t.ftrun_run("-e 'print(ft.lock_settings())'", env)
  t.ok(out:find("^true\n") or out:find("\ntrue\n"), "a free lock is taken", out)
  t.ok(not out:find("waiting", 1, true), "at once, without waiting", out)
  t.ok(t.read(lockfile) ~= nil, "in the lock directory, made when missing")
end

do -- a dead run's journal: restored last change first, said, removed
  os.execute("mkdir -p " .. q(journals))
  local a, b = lockdir .. "/setting-a", lockdir .. "/setting-b"
  t.write(a, "always [madvise] never\n")
  t.write(b, "16\n")
  local pid = dead_pid()
  local journal = ("%s/%d-1"):format(journals, pid)
  -- a changed twice (after a restore): its first before-value wins; the cut line is ignored
  t.write(journal, ("%s\tnever\n%s\t0\n%s\tmadvise\n/sys/cut-short"):format(a, b, a))
  local out, code = t.ftrun_run("-e 'print(\"ran\")'", env)
  t.is(code, 0, "a start after a killed run exits 0", out)
  t.like(out, "ran", "and runs its code")
  t.is(t.read(a), "never", "the file changed twice gets its first before-value")
  t.is(t.read(b), "0", "the other file is restored")
  t.like(out, ("ftrun: restored %s to 0 (it read 16), left changed by pid %d which is no longer running")
    :format(b, pid), "each restore is said, with the value found and the dead pid")
  t.is(t.read(journal), nil, "the journal is removed once everything is back")

  -- a journal whose file reads as before already: removed without a word
  t.write(journal, b .. "\t0\n")
  out = t.ftrun_run("--restore", env)
  t.is(t.read(journal), nil, "a journal whose files read as before is removed")
  t.like(out, "no killed run left settings changed", "and nothing is said restored")

  -- a live run's journal (this process's pid and start time) is left alone
  local stat = t.read("/proc/self/stat")
  local me = tonumber(stat:match("^(%d+)"))
  local start = stat:match("%) (.*)"):match("^" .. ("%S+ "):rep(19) .. "(%d+)")
  local live = ("%s/%d-%s"):format(journals, ft.getpid and ft.getpid() or me, start)
  -- /proc/self is the reader (the shell of t.read is not involved): it is this process
  t.write(b, "16\n")
  t.write(live, b .. "\t0\n")
  out = t.ftrun_run("--restore", env)
  t.is(t.read(b), "16\n", "a live run's journal is not restored", out)
  t.ok(t.read(live) ~= nil, "and is kept")
  os.remove(live)

  -- a file that cannot be written back: named, the journal kept, --restore exits 1
  t.write(journal, lockdir .. "/setting-missing\tnever\n")
  out, code = t.ftrun_run("--restore", env)
  t.is(code, 1, "--restore exits 1 when a file would not go back")
  t.like(out, "could not restore " .. lockdir .. "/setting-missing to never", "and names it")
  t.ok(t.read(journal) ~= nil, "that journal is kept for a later try")
  os.remove(journal)
end

do -- a dead run's journal found by the run's first lock, mid-repetition: the progress line
  -- is ended before the restore is said, so the message starts a line of its own
  local setting = lockdir .. "/setting-mid"
  t.write(setting, "16\n")
  local pid = dead_pid()
  local script = dir .. "/midline.lua"
  t.write(script, ([[
local h = require("harness").start({ script = "midline", about = "a restore mid-line", mib = 1, reps = 1 }, { ... })
h:case("lock", function(r)
  os.execute("mkdir -p %s")
  local f = assert(io.open("%s/%d-1", "w"))
  f:write("%s\t0\n")
  f:close()
  r.x = assert(ft.lock_settings()) and 1
end)
h:columns { { "x", "x", "count" } }
h:finish()
]]):format(journals, journals, pid, setting))
  local out, code = t.ftrun_run(q(script), env .. " RESULTS=" .. q(dir .. "/midline"))
  t.is(code, 0, "a run whose case takes the lock after another run died completes", out)
  t.is(t.read(setting), "0", "the dead run's setting is restored")
  t.ok(out:find("\nftrun: restored " .. setting, 1, true) ~= nil,
    "the restore is said at the start of a line, not after the open progress line", out)
  t.like(out, "midline.lua: rep 1/1: lock\n", "which ends where the case was")
end

if not have_flock then
  skip("the lock against a shell holder", "no flock(1)")
else
  -- a shell holds the lock for a while
  local function hold(seconds)
    os.execute(("mkdir -p %s; flock %s sleep %s & echo $! > %s/holder; sleep 0.3")
      :format(q(lockdir), q(lockfile), seconds, q(dir)))
    return tonumber(t.read(dir .. "/holder"):match("%d+"))
  end
  local holder = hold(3)
  local out, code = t.ftrun_run("-e 'print(ft.lock_settings())'", "NOWAIT=1 " .. env)
  t.is(code, 0, "NOWAIT=1: lock_settings returns, it does not wait", out)
  t.like(out, "nil\tcannot take the settings lock: Resource temporarily unavailable", "a refusal value")
  t.like(out, "is held by pid", "stderr names the holder")
  t.ok(holder and out:find("pid " .. holder, 1, true) or out:find("pid %d+"), "a pid is named")

  out, code = t.ftrun_run("-e 'print(\"locked\", ft.lock_settings())'", env)
  t.is(code, 0, "without NOWAIT the run waits for the holder, then goes on", out)
  local waited, got = out:find("waiting for the settings lock", 1, true), out:find("locked\ttrue", 1, true)
  t.ok(waited and got and waited < got, "it says it waits, then has the lock", out)

  -- inherited: a shell holding the lock starts ftrun with the fd named
  out, code = t.run(("mkdir -p %s; exec 9>%s; flock 9; FTRUN_SETTINGS_LOCK_FD=9 NOWAIT=1 FTRUN_LOCK_DIR=%s %s -e 'print(ft.lock_settings())'")
    :format(q(lockdir), q(lockfile), q(lockdir), q(t.ftrun)))
  t.is(code, 0, "a child of the holder runs", out)
  t.like(out, "true", "and shares the lock: no wait, no refusal")
  out = t.run(("FTRUN_SETTINGS_LOCK_FD=9 NOWAIT=1 FTRUN_LOCK_DIR=%s %s -e 'print(ft.lock_settings())' 9</dev/null")
    :format(q(lockdir), q(t.ftrun)))
  t.like(out, "true", "an fd on another file is not taken for the lock; a free lock is taken")

  -- the interrupt while waiting exits 130
  holder = hold(5)
  out, code = t.run(("%s %s -e 'ft.lock_settings() print(\"got\")' & P=$!; sleep 0.5; kill -INT $P; wait $P")
    :format(env, q(t.ftrun)))
  t.is(code, 130, "SIGINT while waiting for the lock exits 130", out)
  t.ok(not out:find("got", 1, true), "and nothing runs after it")
  os.execute(("pkill -P %d; kill %d; sleep 0.1"):format(holder, holder))
end

-- The real lock from here on: this file holds it, its children share it.
local held, why = sysfs.hold_lock()
t.ok(held, "the test takes the real settings lock", why)
local sizes = {}
for _, f in ipairs(ft.folio_sizes() or {}) do sizes[f.kb] = f end

if not root or not sizes[16] or ft.folio(16).enabled ~= "never" then
  skip("SIGKILL during THP=16K, then a start restores", not root and "needs root" or not sizes[16]
    and "no 16 KiB folio size" or "16 KiB is not never: another program changed it, outside the lock")
else
  local before = sysfs.snapshot()
  local rdir = dir .. "/results"
  -- killed once the run has changed 16 KiB (journalled before the write); it shares
  -- this file's lock, so it does not wait for it
  local out = t.run(([[
%s THP=16K QUICK=1 RESULTS=%s README=/dev/null & P=$!
for i in $(seq 3000); do grep -q '\[madvise\]' %s/hugepages-16kB/enabled && break; sleep 0.02; done
kill -KILL $P; wait $P; echo "status $?"
echo "16kB: $(cat %s/hugepages-16kB/enabled)"]]):format(q(t.ftrun) .. " cycles.lua", q(rdir), sysfs.THP, sysfs.THP))
  t.like(out, "status 137", "the THP=16K run was killed", out)
  t.like(out, "16kB: always inherit [madvise] never", "and left 16 KiB madvise")
  t.ok(sysfs.snapshot() ~= before, "the kill left settings changed")
  out = t.ftrun_run("-e 'print(1)'")
  t.is(sysfs.snapshot(), before, "the next start puts every setting back", out)
  t.like(out, "ftrun: restored " .. sysfs.THP .. "/hugepages-16kB/enabled to never (it read madvise)",
    "and says what it restored")
end

if not root or not sizes[16] or not sizes[32] then
  skip("two THP runs at once (D7)", root and "no 16 and 32 KiB folio sizes" or "needs root")
else -- they share the private lock: the second waits for the first to restore
  local before = sysfs.snapshot()
  local out = t.run(([[
%s THP=16K QUICK=1 RESULTS=%s/d7a README=/dev/null %s cycles.lua > %s/d7a.log 2>&1 & P=$!
sleep 0.6
%s THP=32K QUICK=1 RESULTS=%s/d7b README=/dev/null %s cycles.lua; echo "second $?"
wait $P; echo "first $?"]]):format(env, q(dir), q(t.ftrun), q(dir), env, q(dir), q(t.ftrun)))
  t.like(out, "second 0", "two THP runs at once: the second exits 0", out)
  t.like(out, "first 0", "and the first", t.read(dir .. "/d7a.log"))
  -- which one waits depends on which starts first on a loaded machine
  t.like(out .. (t.read(dir .. "/d7a.log") or ""), "waiting for the settings lock", "one of them said it waited")
  sysfs.is_as_before(before, "every setting reads as before both")
  t.like(t.read(dir .. "/d7b/quick-summary.md") or "", "so the page is 32768 bytes",
    "the second measured its own size, not the first run's")
end

if not root or not sizes[16] then
  skip("a setting changed by someone else meanwhile", root and "no 16 KiB folio size" or "needs root")
else -- the run's end finds another value than it left: it says so, and still writes back its before-value
  local before = sysfs.snapshot()
  local file = sysfs.THP .. "/hugepages-16kB/enabled"
  local other = sizes[16].enabled == "always" and "never" or "always"
  local out, code = t.ftrun_run(("-e %s"):format(q(('ft.set_folio(16, "madvise") '
    .. 'local f = assert(io.open("%s", "w")) f:write("%s") f:close()'):format(file, other))))
  t.is(code, 0, "a run whose setting someone else changed exits 0", out)
  t.like(out, ("ftrun: warning: %s read %s at the end, not madvise as this run left it"):format(file, other),
    "and says the file was changed by something else (D7)")
  sysfs.is_as_before(before, "the setting is written back all the same")
end

if not root or not sizes[16] then
  skip("the start-up warning", root and "no 16 KiB folio size" or "needs root")
else
  local before = sysfs.snapshot()
  assert(ft.set_folio(16, ft.folio(16).enabled == "madvise" and "always" or "madvise")) -- not its boot never
  local out = t.run(("echo 'print(1)' | %s %s -"):format(env, q(t.ftrun)))
  t.like(out, "ftrun: warning: " .. sysfs.THP .. "/hugepages-16kB/enabled is", "a start with the lock free warns about a size off its boot default")
  out = t.run(("echo 'print(1)' | %s -"):format(q(t.ftrun)))
  t.ok(not out:find("warning", 1, true), "a child of the run holding the lock does not", out)
  out = t.ftrun_run("-e 'print(1)'", env)
  t.ok(not out:find("warning", 1, true), "nor does -e code, which measures nothing", out)
  assert(ft.sysfs_restore())
  sysfs.is_as_before(before, "the test's own change is restored")
end

os.execute("rm -rf " .. q(dir))
t.done()
