-- Where the settings lock and journal live and who may use them (core/restore.h): only the
-- user running ftrun may write there, a journal names only the settings ftrun changes, nobody
-- else can hold the lock, the lock ends with the run, runs that measure under the THP settings
-- hold it shared, and two starts replaying one dead run's journal both end well.
-- Every case uses a private lock directory (FTRUN_LOCK_DIR) and stand-in files: nothing here
-- changes a machine-wide setting (nobody's attempt is refused by the kernel).
local ft = require "ft"
local t = require "tap"
local q = t.quote
-- the holder's command as the kernel names it: the executable's name (ftrun, ftrun-clang), 15 bytes
local comm = t.ftrun:match("[^/]+$"):sub(1, 15)

-- The real lock, held for the whole file: its THP=always runs (under a private lock) must not
-- fault beside another suite's test of the folio sizes, nor under another run's settings.
assert(require("sysfs").hold_lock())

local root = t.run("id -u") == "0\n"
local setpriv = root and t.run("command -v setpriv") ~= ""
local function skip(name, why) t.ok(true, name .. " # SKIP " .. why) end
local NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups"

local dir = t.tmpdir()
local lockdir = dir .. "/lock"
local env = ("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s"):format(q(lockdir))
local journals = lockdir .. "/ftrun-settings.journal"

local function mode(path) return (t.run("stat -c %a " .. q(path)):match("%d+")) end
local function dead_pid() return tonumber(t.run("sh -c 'echo $$'"):match("%d+")) end

-- Starts `ftrun -e code` in the background with the private lock and waits until it prints
-- "held"; returns its pid. Its output goes to a file, so that t.run does not wait for it.
local function holder(code, seconds, extra)
  local log = dir .. "/holder.log"
  os.remove(log)
  local pid = t.run(("%s %s %s -e %s >%s 2>&1 & echo $!"):format(extra or "", env, q(t.ftrun),
    q(code .. ' io.write("held\\n") io.flush() ft.sleep(' .. seconds .. ')'), q(log))):match("%d+")
  for _ = 1, 300 do
    if (t.read(log) or ""):find("held", 1, true) then break end
    os.execute("sleep 0.02")
  end
  return tonumber(pid)
end
local function stop(pid) os.execute(("kill %d 2>/dev/null; sleep 0.1"):format(pid)) end

do -- root's lock directory is made 0711 and its lock file 0644: every user's runs share it (SW-2)
  local out, code = t.ftrun_run("-e 'print(ft.lock_settings())'", env)
  t.is(code, 0, "a free lock is taken", out)
  t.is(mode(lockdir), root and "711" or "700", "the lock directory is made " .. (root and "0711" or "0700"))
  t.is(mode(lockdir .. "/ftrun-settings.lock"), root and "644" or "600", "the lock file is "
    .. (root and "0644" or "0600"))
end

-- S1: a journal is read only from where no one but the user running ftrun can write.
if not setpriv then
  skip("a journal planted by another user", root and "no setpriv" or "needs root")
else
  local pub = dir .. "/pub"
  os.execute(("mkdir -m 1777 %s"):format(q(pub)))
  local victim = dir .. "/victim"
  local function plant(at)
    t.write(victim, "#!/bin/sh\necho hi\n")
    local cmd = ("mkdir -p %s/ftrun-settings.journal && printf '%%s\\t%%s\\n' %s 'echo PWNED' > %s/ftrun-settings.journal/1-1")
      :format(q(at), q(victim), q(at))
    return t.run(("%s sh -c %s"):format(NOBODY, q(cmd)))
  end
  -- the review's case: the lock directory itself is world-writable (as /run/lock is)
  plant(pub)
  local out, code = t.ftrun_run("-e 'print(1)'", ("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s"):format(q(pub)))
  t.is(code, 0, "a start beside a world-writable lock directory still runs", out)
  t.is(t.read(victim), "#!/bin/sh\necho hi\n", "and writes nothing a journal there names (S1)", out)
  t.like(out, "the settings lock directory " .. pub .. " is writable by others (mode 1777): not used",
    "it says why the directory is not used")
  local sizes1 = (require("ft").folio_sizes() or {})[1]
  if sizes1 then -- UM-1: a change refused for the lock says so, not the kernel's EPERM
    out = t.ftrun_run(("-e 'print(ft.set_folio(%d, \"never\"))'"):format(sizes1.kb),
      ("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s"):format(q(pub)))
    t.like(out, ": cannot take the settings lock: the settings lock directory " .. pub
      .. " is writable by others (mode 1777)", "ft.set_folio refused for the lock says so (UM-1)", out)
  end
  -- another user made the lock directory first, in a 1777 place
  local theirs = pub .. "/lk"
  plant(theirs)
  out = t.ftrun_run("--restore", ("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s"):format(q(theirs)))
  t.is(t.read(victim), "#!/bin/sh\necho hi\n", "a lock directory another user made is not read", out)
  t.like(out, "is owned by uid 65534, not 0", "and its owner is named")
  out, code = t.ftrun_run("-e 'print(ft.lock_settings())'", ("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s"):format(q(theirs)))
  t.like(out, "cannot take the settings lock: Operation not permitted", "nor is the lock taken there", out)
  -- a journal directory owned by another user inside our own lock directory
  local own = dir .. "/own"
  os.execute(("mkdir -m 700 %s && mkdir %s/ftrun-settings.journal && chown 65534 %s/ftrun-settings.journal")
    :format(q(own), q(own), q(own)))
  t.write(own .. "/ftrun-settings.journal/1-1", victim .. "\techo PWNED\n")
  out = t.ftrun_run("--restore", ("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s"):format(q(own)))
  t.like(out, "the settings journal directory " .. own .. "/ftrun-settings.journal is owned by uid 65534",
    "a journal directory of another user's is refused", out)
  t.is(t.read(victim), "#!/bin/sh\necho hi\n", "and nothing in it written")
end

do -- what a journal in the right place may say: only a setting ftrun changes, a short value
  os.execute("mkdir -p " .. q(journals))
  local victim = dir .. "/victim2"
  t.write(victim, "keep\n")
  local stand = lockdir .. "/setting-s"
  local function journal(text)
    local pid = dead_pid()
    local path = ("%s/%d-1"):format(journals, pid)
    t.write(path, text)
    return path, pid
  end
  local cases = {
    { victim .. "\tnever\n", "a path outside the settings", victim },
    { "/sys/kernel/mm/../../.." .. victim .. "\tnever\n", "a path climbing out of /sys with ..", "/sys/kernel/mm/../../.." },
  }
  for _, c in ipairs(cases) do
    local path = journal(c[1])
    local out, code = t.ftrun_run("--restore", env)
    t.is(code, 1, c[2] .. ": --restore exits 1", out)
    t.like(out, "names " .. c[3], c[2] .. ": refused and named")
    t.like(out, "which is not a setting ftrun changes: not written", c[2] .. ": said not written")
    t.is(t.read(victim), "keep\n", c[2] .. ": nothing written")
    os.remove(path)
  end
  t.write(stand, "16\n")
  local path = journal(stand .. "\t" .. ("x"):rep(200) .. "\n")
  local out, code = t.ftrun_run("--restore", env)
  t.is(code, 1, "a 200-byte value: --restore exits 1", out)
  t.like(out, "a value of 200 bytes that no setting takes", "and the value is refused")
  t.is(t.read(stand), "16\n", "and not written")
  os.remove(path)
  path = journal(stand .. "\techo PWNED\n")
  out = t.ftrun_run("--restore", env)
  t.like(out, "a value of 10 bytes that no setting takes", "a value with a blank is refused")
  t.is(t.read(stand), "16\n", "and not written")
  os.remove(path)

  -- a FIFO: no start hangs on it (S1)
  local fifo = ("%s/%d-1"):format(journals, dead_pid())
  os.execute("mkfifo " .. q(fifo))
  out, code = t.run(("%s timeout 10 %s -e 'print(\"ran\")'"):format(env, q(t.ftrun)))
  t.is(code, 0, "a FIFO journal: a start does not hang on it", out)
  t.like(out, "ran", "and runs")
  t.like(out, "cannot read journal " .. fifo .. ": not a regular file", "and names the FIFO")
  os.remove(fifo)

  -- a directory: named (U3)
  local d = ("%s/%d-1"):format(journals, dead_pid())
  os.execute("mkdir " .. q(d))
  out, code = t.ftrun_run("--restore", env)
  t.is(code, 1, "a journal that is a directory: --restore exits 1", out)
  t.like(out, "cannot read journal " .. d .. ": Is a directory", "and says why (U3)")
  os.execute("rmdir " .. q(d))

  -- a symbolic link: not followed
  local link = ("%s/%d-1"):format(journals, dead_pid())
  local target = dir .. "/target-journal"
  t.write(target, stand .. "\t0\n")
  os.execute(("ln -s %s %s"):format(q(target), q(link)))
  out = t.ftrun_run("--restore", env)
  t.like(out, "cannot read journal " .. link .. ": it is a symbolic link", "a symlinked journal is refused")
  t.is(t.read(stand), "16\n", "and not followed")
  os.remove(link)

  -- a journal owned by another user in our directory
  if root then
    local other = ("%s/%d-1"):format(journals, dead_pid())
    t.write(other, stand .. "\t0\n")
    os.execute("chown 65534 " .. q(other))
    out = t.ftrun_run("--restore", env)
    t.like(out, "cannot read journal " .. other .. ": owned by uid 65534, not 0", "a journal of another user's is refused")
    t.is(t.read(stand), "16\n", "and not written")
    os.remove(other)
  end
  -- the allowed names still go back
  path = journal(stand .. "\t0\n")
  out, code = t.ftrun_run("--restore", env)
  t.is(code, 0, "a good journal: --restore exits 0", out)
  t.is(t.read(stand), "0", "and its setting is back")
end

-- Another user's runs keep their own lock and journal; a change the kernel refuses them leaves
-- no journal for every later start of theirs to retry.
local nobody, why_not = t.nobody()
local sizes = require("ft").folio_sizes() or {}
if not nobody or not sizes[1] then
  skip("an unprivileged user's refused change", why_not or "no folio sizes")
else
  local theirs = dir .. "/nobody-lock"
  os.execute(("mkdir -m 700 %s && chown 65534:65534 %s"):format(q(theirs), q(theirs)))
  local nenv = ("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s"):format(q(theirs))
  local out = t.run(("%s %s -e 'print(ft.set_folio(%d, \"madvise\"))'"):format(nenv, nobody, sizes[1].kb))
  t.like(out, "Permission denied", "nobody's change is refused by the kernel", out)
  t.is(t.run(("ls -A %s/ftrun-settings.journal"):format(q(theirs))), "", "and leaves no journal behind")
  out = t.run(("%s %s -e 'print(1)'"):format(nenv, nobody))
  t.is(out, "1\n", "so nobody's next start has nothing to retry or say")
end

os.execute("chmod 711 " .. q(dir)) -- nobody reaches the lock files below by their names (SW-2, S3)

-- S3: another user who holds root's lock alone is refused and named at once, never waited for.
if not setpriv then
  skip("another user holds the lock", root and "no setpriv" or "needs root")
else
  local pub = dir .. "/pub3"
  os.execute(("mkdir -m 1777 %s"):format(q(pub)))
  local lk = pub .. "/lk"
  local lenv = ("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s"):format(q(lk))
  t.ftrun_run("-e 'ft.lock_settings()'", lenv)
  local pid = t.run(("%s sh -c %s >/dev/null 2>&1 & echo $!; sleep 0.5"):format(NOBODY,
    q(("exec flock -x %s sleep 3"):format(q(lk .. "/ftrun-settings.lock"))))):match("%d+")
  local out, code = t.run(("%s timeout 10 %s -e 'print(ft.lock_settings())'"):format(lenv, q(t.ftrun)))
  t.ok(code == 0 and out:find("nil\tcannot take the settings lock: Operation not permitted"),
    "a lock another user holds alone: root's run is refused at once, not left waiting (S3)", out)
  t.like(out, ("is held alone by pid %s (flock, uid 65534), not a run of root's"):format(pid), "naming the holder")
  os.execute("sleep 3")
  out = t.ftrun_run("-e 'print(ft.lock_settings())'", "NOWAIT=1 " .. lenv)
  t.like(out, "true", "and takes it once that holder is gone", out)
end

-- SW-2: a run not root's holds root's lock shared beside its own: it waits for (or, NOWAIT=1,
-- refuses beside) a root run that holds it alone, and a root run changing settings waits for it.
local nobody_env = ("env -u FTRUN_SETTINGS_LOCK_FD -u FTRUN_LOCK_DIR -u XDG_RUNTIME_DIR HOME=/nonexistent "
  .. "FTRUN_ROOT_LOCK_DIR=%s"):format(q(lockdir))
if not nobody or t.run(("%s test -x %s && echo yes"):format(NOBODY, q(lockdir))) ~= "yes\n" then
  skip("a user's run beside root's lock", why_not or "the test directory is out of nobody's reach")
else
  local h = holder("ft.lock_settings()", 2)
  local out = t.run(("NOWAIT=1 %s %s -e 'print(ft.lock_settings(\"shared\"))'"):format(nobody_env, nobody))
  t.like(out, ("root's settings lock %s/ftrun-settings.lock is held alone by pid %d (%s, uid 0), which changes "
    .. "settings, and NOWAIT=1: not waiting"):format(lockdir, h, comm), "NOWAIT=1: nobody's run refuses beside "
    .. "root's holder, naming it (SW-2)", out)
  t.like(out, "nil\tcannot take the settings lock", "and takes no lock")
  local t0 = ft.now_ns()
  out = t.run(("%s %s -e 'print(ft.lock_settings(\"shared\"))'"):format(nobody_env, nobody))
  local waited = (ft.now_ns() - t0) / 1e9
  t.like(out, ("waiting for root's settings lock %s/ftrun-settings.lock: pid %d"):format(lockdir, h),
    "without NOWAIT it waits for root's holder, naming it", out)
  t.like(out, "got root's settings lock (shared)\ntrue", "and then holds it shared")
  t.ok(waited > 0.5, ("for as long as the holder held it (%.1f s)"):format(waited))
  stop(h)
  -- the other way: root's change of settings waits for nobody's measuring run
  local log = dir .. "/nobody-holder.log"
  local pid = t.run(("%s %s -e %s >%s 2>&1 & echo $!"):format(nobody_env, nobody,
    q('ft.lock_settings("shared") io.write("held\\n") io.flush() ft.sleep(3)'), q(log))):match("%d+")
  for _ = 1, 300 do
    if (t.read(log) or ""):find("held", 1, true) then break end
    os.execute("sleep 0.02")
  end
  out = t.ftrun_run("-e 'print(ft.lock_settings())'", "NOWAIT=1 " .. env)
  t.like(out, ("is held by pid %s ("):format(pid), "root's change of settings does not go in under nobody's run", out)
  t.like(out, "uid 65534), and NOWAIT=1: not waiting", "and says whose run it is")
  os.execute("kill " .. pid .. " 2>/dev/null")
  -- a run of nobody's that root's holder started is part of that run: it does not wait for it
  local child = dir .. "/nobody-child.sh"
  t.write(child, ("NOWAIT=1 %s timeout 10 %s -e 'print(ft.lock_settings(\"shared\"))'\n"):format(nobody_env, nobody))
  out = t.run(("%s timeout 20 %s -e %s"):format(env, q(t.ftrun), q(('ft.lock_settings() os.execute("sh %s")')
    :format(child))))
  t.like(out, "true", "nobody's run started by root's holder of the lock shares it, not waiting for it", out)
end

do -- X6: a child left running does not keep the lock; U1: the holder is named with its command
  local sleeper = dir .. "/sleeper"
  t.ftrun_run(("-e %s"):format(q(('ft.lock_settings() os.execute("sleep 5 >/dev/null 2>&1 & echo $! > %s")')
    :format(sleeper))), env)
  local pid = tonumber((t.read(sleeper) or ""):match("%d+"))
  local out = t.ftrun_run("-e 'print(ft.lock_settings())'", "NOWAIT=1 " .. env)
  t.like(out, "true", "the lock ends with the run, not with a child it left behind (X6)", out)
  if pid then os.execute("kill " .. pid .. " 2>/dev/null") end

  local h = holder("ft.lock_settings()", 5)
  out = t.ftrun_run("-e 'print(ft.lock_settings())'", "NOWAIT=1 " .. env)
  t.like(out, ("is held by pid %d (%s), and NOWAIT=1: not waiting"):format(h, comm),
    "NOWAIT=1: the holder is named with its command (U1)")
  -- a child the holder starts shares its lock, and knows it without an inherited descriptor
  stop(h)
  out = t.ftrun_run(("-e %s"):format(q(('ft.lock_settings() os.execute("NOWAIT=1 %s -e \'print(ft.lock_settings())\'")')
    :format(t.ftrun))), env)
  t.like(out, "true", "an ftrun the holder starts shares the lock", out)
  -- a child of a shared holder asking to change settings is refused, not left to wait forever
  out = t.run(("%s timeout 10 %s -e %s"):format(env, q(t.ftrun), q(('ft.lock_settings("shared") '
    .. 'os.execute("NOWAIT=1 %s -e \'print(ft.lock_settings())\'")'):format(t.ftrun))))
  t.like(out, "which started this run, holds the settings lock shared", "a shared holder's child asking it alone is told why", out)
  t.like(out, "cannot take the settings lock: Resource deadlock avoided", "and refused")
end

do -- a dead run's journal under a held lock: said to a script, which measures under the settings;
  -- -e only probes, and a second suite's every start saying it would bury its output
  local stand = lockdir .. "/setting-held"
  local h = holder("ft.lock_settings()", 8) -- first: taking the lock, it would restore the journal
  t.write(stand, "16\n")
  os.execute("mkdir -p " .. q(journals))
  local journal = ("%s/%d-1"):format(journals, dead_pid())
  t.write(journal, stand .. "\t0\n")
  local t0 = ft.now_ns()
  local out = t.ftrun_run("-e 'print(1)'", env)
  local waited = (ft.now_ns() - t0) / 1e9
  t.is(out, "1\n", "ftrun -e says nothing of a journal the holder keeps it from restoring", out)
  -- a script start waits 2 s for an exclusive holder that may be restoring it; a silent -e must not
  t.ok(waited < 1.5, ("nor waits for the holder (%.2f s; a script start waits 2 s)"):format(waited))
  out = t.ftrun_run("first_touch.lua --help", env)
  t.like(out, "died and left settings changed", "a script start says it", out)
  t.like(out, "so they are left for a later start", "and why it leaves them")
  stop(h)
  t.ftrun_run("-e 'print(1)'", env)
  t.is(t.read(stand), "0", "the next start with the lock free restores it")
  os.remove(journal)
end

do -- W1: a run that measures under the THP settings holds the lock shared
  local run = ("QUICK=1 MIB=4 REPS=1 CYCLES=A RESULTS=%s"):format(q(dir .. "/w1"))
  local h = holder("ft.lock_settings()", 10)
  local out, code = t.run(("NOWAIT=1 THP=always %s %s %s cycles.lua"):format(run, env, q(t.ftrun)))
  t.is(code, 2, "a THP=always run beside a holder of the lock: NOWAIT=1 refuses it", out)
  t.like(out, ("is held by pid %d (%s)"):format(h, comm), "naming the holder")
  out, code = t.run(("NOWAIT=1 %s %s %s cycles.lua"):format(run, env, q(t.ftrun)))
  t.is(code, 2, "so does a default run", out)
  stop(h)
  h = holder('ft.lock_settings("shared")', 10)
  out, code = t.run(("NOWAIT=1 THP=always %s %s %s cycles.lua"):format(run, env, q(t.ftrun)))
  t.is(code, 0, "beside another shared holder it runs at once", out)
  out = t.ftrun_run("-e 'print(ft.lock_settings())'", "NOWAIT=1 " .. env)
  t.like(out, "nil\tcannot take the settings lock", "a change of settings waits for the shared holders", out)
  stop(h)
  -- the waiting run goes on once the change is over
  h = holder("ft.lock_settings()", 1.5)
  out, code = t.run(("THP=always %s %s %s cycles.lua"):format(run, env, q(t.ftrun)))
  t.is(code, 0, "without NOWAIT it waits for the holder, then runs", out)
  t.like(out, ("waiting for the settings lock %s/ftrun-settings.lock: pid %d (%s) holds it"):format(lockdir, h, comm),
    "and says whom it waits for")
end

do -- WE-1: a killed run not yet reaped (a zombie) is dead to --restore: its journal is replayed
  local stand = lockdir .. "/setting-zombie"
  t.write(stand, "16\n")
  local pidfile = dir .. "/zombie.pid"
  -- the child exits after 0.1 s, when its parent is sleep, which never reaps it
  local parent = t.run(("sh -c %s >/dev/null 2>&1 & echo $!"):format(
    q(("sleep 0.1 & echo $! > %s; exec sleep 5"):format(q(pidfile))))):match("%d+")
  os.execute("sleep 0.3")
  local pid = tonumber((t.read(pidfile) or ""):match("%d+"))
  local stat = t.read(("/proc/%d/stat"):format(pid or 0)) or ""
  local state, start = stat:match("%) (%a) " .. ("%S+ "):rep(18) .. "(%d+)")
  t.is(state, "Z", "the stand-in run is a zombie", stat)
  os.execute("mkdir -p " .. q(journals))
  t.write(("%s/%d-%s"):format(journals, pid or 0, start or "0"), stand .. "\t0\n")
  local out, code = t.ftrun_run("--restore", env)
  t.is(code, 0, "--restore beside a zombie's journal exits 0", out)
  t.is(t.read(stand), "0", "and restores what the killed run changed (WE-1)", out)
  os.execute("kill " .. parent .. " 2>/dev/null")
end

do -- X3: starts racing to replay one dead run's journal all end well
  local stand = lockdir .. "/setting-race"
  local bad = 0
  for _ = 1, 8 do
    t.write(stand, "16\n")
    local pid = dead_pid()
    t.write(("%s/%d-1"):format(journals, pid), stand .. "\t0\n")
    local out = t.run(("%s %s -e 'print(1)' >/dev/null 2>&1 & %s %s --restore; echo \"restore $?\"; %s %s -e 'print(2)' >/dev/null 2>&1; wait")
      :format(env, q(t.ftrun), env, q(t.ftrun), env, q(t.ftrun)))
    if not out:find("restore 0", 1, true) or out:find("left for a later start", 1, true) or t.read(stand) ~= "0" then
      bad = bad + 1
      t.diag(out)
    end
  end
  t.is(bad, 0, "8 races of three starts: --restore exits 0 each time, the setting restored once (X3)")
end

do -- a lock directory given as a symbolic link with a trailing slash is refused as one without
  local real, link = dir .. "/real", dir .. "/link"
  os.execute(("mkdir -m 700 %s && ln -s %s %s"):format(q(real), q(real), q(link)))
  for _, given in ipairs { link, link .. "/" } do
    local out = t.ftrun_run("-e 'print(ft.lock_settings())'", ("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s")
      :format(q(given)))
    t.like(out, "the settings lock directory " .. link .. " is a symbolic link: not used",
      "FTRUN_LOCK_DIR=" .. given .. ": not followed, and said to be a link (UM-2)", out)
  end
  t.ok(not io.open(real .. "/ftrun-settings.lock"), "and nothing made behind the link")
end

os.execute("rm -rf " .. q(dir))
t.done()
