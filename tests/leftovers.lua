-- What an interrupted or killed run leaves in the temporary directory:
-- calibrate's work directory goes with an interrupt, and a plot directory
-- a killed run left is swept by the next run that draws.
local t = require "tap"
local q = t.quote

local dir = t.tmpdir()

do -- WE-3: a TMPDIR the run cannot write is refused before anything is measured, as RESULTS is
  for _, tmp in ipairs { dir .. "/none/x", "/proc" } do
    local out, code = t.run(("TMPDIR=%s QUICK=1 MIB=4 REPS=1 CYCLES=A RESULTS=%s %s cycles.lua"):format(q(tmp),
      q(dir .. "/we3"), q(t.ftrun)))
    t.is(code, 2, "TMPDIR=" .. tmp .. ": exit 2", out)
    t.like(out, "TMPDIR=" .. tmp .. ": cannot write there", "naming it")
    t.ok(not out:find("rep 1/", 1, true), "before any repetition")
  end
end

do -- SIGINT to calibrate in its A/A runs: exit 130, its TMPDIR/ftrun-calibrate.XXXXXX work directory removed
  local tmp = dir .. "/caltmp"
  os.execute("mkdir -p " .. q(tmp))
  local out = t.run(("cd %s && TMPDIR=%s QUICK=1 RESULTS=%s %s bench/calibrate.lua 2>%s & pid=$!; "
    .. "for i in $(seq 300); do grep -q 'A/A run 1/' %s 2>/dev/null && break; sleep 0.05; done; "
    .. "kill -INT $pid; wait $pid; echo \"exit $?\""):format(q(ft.project_dir), q(tmp), q(dir .. "/cal"),
    q(t.ftrun), q(dir .. "/log"), q(dir .. "/log")))
  t.like(out, "exit 130", "calibrate interrupted exits 130", t.read(dir .. "/log"))
  t.is(t.run("ls -A " .. q(tmp)), "", "and leaves no work directory in its TMPDIR")
end

do -- calibrate.lua (any script's A/A runs) interrupted: exit 130, nothing left in its TMPDIR
  local tmp = dir .. "/caltmp2"
  os.execute("mkdir -p " .. q(tmp))
  local out = t.run(("TMPDIR=%s CALIBRATIONS=%s %s calibrate.lua RUNS=5 SIMS=20 -- cycles.lua CYCLES=A MIB=4 REPS=3 "
    .. "2>%s & pid=$!; for i in $(seq 300); do grep -q 'A/A run 1/' %s 2>/dev/null && break; sleep 0.05; done; "
    .. "ls %s; kill -INT $pid; wait $pid; echo \"exit $?\""):format(q(tmp), q(dir .. "/cals"), q(t.ftrun),
    q(dir .. "/log2"), q(dir .. "/log2"), q(tmp)))
  t.like(out, "ftrun-calibrate.", "its work directory is in TMPDIR while it runs", out)
  t.like(out, "exit 130", "calibrate.lua interrupted exits 130", t.read(dir .. "/log2"))
  t.is(t.run("ls -A " .. q(tmp)), "", "and leaves no work directory in its TMPDIR")
end

do -- a TMPDIR whose name holds a newline: refused before any run, and the directory its first line names is kept
  local victim = dir .. "/victim"
  os.execute(("mkdir -p %s %s && touch %s/keep"):format(q(victim), q(victim .. "\nx"), q(victim)))
  local out, code = t.run(("cd %s && TMPDIR=%s QUICK=1 RESULTS=%s %s bench/calibrate.lua 2>&1"):format(
    q(ft.project_dir), q(victim .. "\nx"), q(dir .. "/cal3"), q(t.ftrun)))
  t.is(code, 2, "bench/calibrate.lua with TMPDIR holding a newline exits 2", out)
  t.like(out, "holds a control character", "saying why")
  t.ok(t.read(victim .. "/keep"), "and removes nothing")
end

do -- plot directories of dead runs are swept when a run draws; a live run's and a young unnamed one stay
  local tmp = dir .. "/tmp"
  os.execute("mkdir -p " .. q(tmp))
  local dead, live = tmp .. "/ftrun-plots.2147483646.AbCdEf", tmp .. "/ftrun-plots.1.AbCdEf"
  local old, young = tmp .. "/ftrun-plots.OlDxYz", tmp .. "/ftrun-plots.YoUnGz"
  for _, d in ipairs { dead, live, old, young } do os.execute(("mkdir -p %s && touch %s/x.gp"):format(q(d), q(d))) end
  os.execute("touch -d '2 hours ago' " .. q(old))
  local out, code = t.run(("TMPDIR=%s %s first_touch.lua MIB=4 REPS=1 RESULTS=%s"):format(q(tmp), q(t.ftrun),
    q(dir .. "/run")))
  t.is(code, 0, "a run that draws", out)
  t.ok(not t.read(dead .. "/x.gp"), "removes the plot directory of a process that is gone")
  t.ok(not t.read(old .. "/x.gp"), "and an unnamed one an hour old")
  t.ok(t.read(live .. "/x.gp") and t.read(young .. "/x.gp"), "keeps a live process's and a young unnamed one")
  t.is(t.run("ls " .. q(tmp)), "ftrun-plots.1.AbCdEf\nftrun-plots.YoUnGz\n", "and its own is gone when it ends")
end

os.execute("rm -rf " .. q(dir))
t.done()
