-- SIGINT whatever the run inherited, and after a publish's renames.
-- 1. A non-interactive shell starts background jobs with SIGINT ignored: `kill -INT` stops the
--    run all the same (exit 130), with and without AB alike, and so does an explicit `trap '' INT`;
--    it says in one line where it was interrupted, no traceback (an error keeps its traceback).
--    SIGTERM and SIGHUP end the open progress line before the run dies of them.
-- 2. A SIGINT that lands after the renames of a published set exits 130 and says the set was
--    published whole; every published file is the run's, none the previous one's.
local t = require "tap"
local q = t.quote
local runfiles = require "runfiles"

local dir = t.tmpdir()
local script = dir .. "/slow.lua"
t.write(script, [[
local h = require("harness").start({ script = "slow", about = "a slow case", mib = 1, reps = 100,
  knobs = { { name = "LEVEL", kind = "count", default = 1, ab = true, desc = "a value the cases read" } } }, { ... })
h:case("spin", function(r)
  io.stderr:write(" started") -- the test waits for this before its SIGINT
  local t0 = ft.now_ns()
  while ft.now_ns() - t0 < 5e7 do end
  r.x = h.cfg.LEVEL
end)
h:columns { { "x", "x", "count" } }
h:finish()
]])

-- Starts the run in the background of a non-interactive shell (with ignore: after
-- `trap '' INT` as well), waits until a case runs, sends SIGINT and reports the exit status,
-- what SigIgn said SIGINT was at the start, and the run's stderr.
local function background(args, ignore)
  local log = dir .. "/log"
  os.remove(log)
  local out = t.signal_when(("%s %s %s %s 2>%s"):format(ignore and "trap '' INT;" or "",
    "RESULTS=" .. q(dir .. "/out"), q(t.ftrun), q(script) .. " " .. args, q(log)),
    ("grep -q started %s 2>/dev/null"):format(q(log)), "INT")
  return out, t.read(log) or ""
end
for _, ab in ipairs { "", "'AB=LEVEL=1 | LEVEL=2'" } do
  for _, ignore in ipairs { false, true } do
    local name = (ab == "" and "without AB" or "with AB") .. (ignore and ", SIGINT ignored by trap" or "")
    local out, log = background(ab, ignore)
    t.is(out, "exit 130\n", "a background run " .. name .. ": SIGINT exits 130")
    -- an interrupt is not a bug: one line with where the Lua code was, no traceback
    t.ok(log:find("\nftrun: interrupted at [^\n:]*slow%.lua:%d+\n"), name .. ": and says where it was interrupted, once",
      log)
    t.ok(not log:find("stack traceback", 1, true), name .. ": without a traceback", log)
  end
end

-- SIGTERM and SIGHUP end the run's open progress line before it dies of them, as SIGINT does.
for _, sig in ipairs { "TERM", "HUP" } do
  local log = dir .. "/log"
  os.remove(log)
  -- default dispositions: under nohup SIGHUP comes ignored, and ftrun keeps it so
  local out = t.signal_when(("env --default-signal=TERM,HUP %s %s %s 2>%s"):format("RESULTS=" .. q(dir .. "/out"),
    q(t.ftrun), q(script), q(log)), ("grep -q started %s 2>/dev/null"):format(q(log)), sig)
  local text = t.read(log) or ""
  -- (the shell may say "Terminated" or "Hangup" before the status)
  t.like(out, ("exit %d\n"):format(128 + (sig == "TERM" and 15 or 1)), "SIG" .. sig .. ": the run dies of it")
  t.like(text, " started", "SIG" .. sig .. ": a case had started, its progress line open")
  t.is(text:sub(-1), "\n", "SIG" .. sig .. ": stderr ends with the progress line's newline", text)
end

do -- a script's own error that quotes the interrupt stays the script's; a rethrow stays an interrupt
  local function sigint(code)
    return t.run(("%s -e %s 2>&1 & pid=$!; sleep 0.5; kill -INT $pid; wait $pid; echo \"exit $?\""):format(
      q(t.ftrun), q(code)))
  end
  local out = sigint('local function f() while true do end end\nf()')
  t.like(out, "ftrun: interrupted at (command line):1\n", "a loop in a function: its line alone, not its caller's too")
  out = sigint('local ok, e = pcall(function() while true do end end)\nerror("wrapped: " .. tostring(e))')
  t.like(out, "ftrun: (command line):2: wrapped: interrupted at (command line):1\nstack traceback:",
    "a message of the script's that quotes it: printed as it is, with its traceback", out)
  out = sigint('local ok, e = pcall(function() while true do end end)\nerror(e)')
  t.like(out, "ftrun: interrupted at (command line):1\nexit 130", "error(e) of it: the interrupt, its position once", out)
  -- a binding's interrupt (ft.sleep's) caught by a pcall and raised again two lines on (as ab.lua does):
  -- where the binding stopped, not the line the pending hook reached after the pcall
  out = sigint('local function f()\n  ft.sleep(5)\nend\nlocal ok, e = pcall(f)\nerror(e, 0)')
  t.like(out, "ftrun: interrupted at (command line):2\nexit 130", "a binding's, rethrown: its own line", out)
  -- a loop in scripts/lib/ (stats.map, called over and over): the script's line that called it
  local spin_dir = t.tmpdir()
  t.write(spin_dir .. "/spin.lua", 'local stats = require "stats"\nlocal xs = {}\nfor i = 1, 20000 do xs[i] = i end\n'
    .. "while true do stats.map(xs, function(x) return x + 1 end) end\n")
  out = t.run(("%s %s 2>&1 & pid=$!; sleep 0.5; kill -INT $pid; wait $pid; echo \"exit $?\""):format(q(t.ftrun),
    q(spin_dir .. "/spin.lua")))
  t.like(out, "ftrun: interrupted at " .. spin_dir .. "/spin.lua:4\nexit 130",
    "interrupted inside the shared library: the script's line is named, not the library's", out)
  os.execute("rm -rf " .. q(spin_dir))
end

do -- a real error keeps its traceback
  local out, code = t.ftrun_run("-e " .. q('local function f() error("boom") end f()'))
  t.is(code, 1, "an error exits 1", out)
  t.like(out, "stack traceback:", "and shows its traceback")
end
do -- before the first call too: while the script is read from stdin, SIGINT stops the run
  -- (its stdout alone: the runner's warnings about the machine's settings go to stderr)
  local out = t.run(("trap '' INT; (sleep 2; echo 'print(\"ran\")') | %s - 2>/dev/null & pid=$!; sleep 0.5; kill -INT $pid; "
    .. "wait $pid; echo \"exit $?\""):format(q(t.ftrun)))
  t.is(t.own(out), "exit 130\n", "SIGINT ignored by trap, the script still being read: exit 130, nothing ran")
end
do -- the inherited disposition really is SIG_IGN in such a background job
  -- the job reads its own status: read from outside, it raced the fork's setting of SIG_IGN
  local out = t.run("grep SigIgn /proc/self/status & wait")
  local mask = tonumber(out:match("SigIgn:%s*(%x+)") or "0", 16)
  t.ok(mask & 2 ~= 0, "a non-interactive shell's background job starts with SIGINT ignored", out)
end

do -- a SIGINT after the renames of a published set (the lock held here, which the run shares, so
  -- that it does not wait for another suite's before it publishes)
  assert(require("sysfs").hold_lock())
  local readme = "x\n" .. table.concat({ runfiles.markers("cycles-A") }, "\nprevious block\n") .. "\n"
  local pub = dir .. "/pub"
  os.execute("mkdir -p " .. q(pub))
  t.write(pub .. "/README.md", readme)
  local log = dir .. "/publog"
  local out = t.signal_when(("FTRUN_TEST_PUBLISHED_PAUSE=60 PUBLISH=1 %s cycles.lua MIB=4 REPS=1 CYCLES=A RESULTS=%s "
    .. "README=%s >/dev/null 2>%s"):format(q(t.ftrun), q(pub), q(pub .. "/README.md"), q(log)),
    ("grep -q 'paused after the renames' %s 2>/dev/null"):format(q(log)), "INT")
  local text = t.read(log) or ""
  t.is(out, "exit 130\n", "SIGINT after the renames: exit 130", text)
  t.like(text, "cycles.lua: interrupted after the results were published whole: ",
    "and it says the set was published whole")
  t.like(text, pub .. "/README.md", "naming the README among the files")
  t.ok(not (t.read(pub .. "/README.md") or ""):find("\nprevious block\n", 1, true), "the README holds the run's block")
  local listing = t.run("ls -A " .. q(pub))
  t.ok(not listing:find("%.tmp"), "no temporary left", listing)
  local json = listing:match("[^\n]*results%.json")
  t.ok(json and text:find(json, 1, true), "the results JSON on disk is the one named", listing)
  t.ok(listing:find("%.svg"), "the plots are beside it", listing)
end

do -- a plain run's SIGINT after its renames: the set is whole, so results/runs/latest-cycles names it
  local runs = ft.project_dir .. "/results/runs"
  local log = dir .. "/plainlog"
  -- the SIGINT once the run says it pauses, its renames done
  local out = t.signal_when(("FTRUN_TEST_PUBLISHED_PAUSE=60 %s cycles.lua QUICK=1 MIB=4 REPS=1 CYCLES=A >/dev/null 2>%s")
    :format(q(t.ftrun), q(log)), ("grep -q 'paused after the renames' %s 2>/dev/null"):format(q(log)), "INT")
  local text = t.read(log) or ""
  t.is(out, "exit 130\n", "a plain run's SIGINT after the renames: exit 130", text)
  local run = text:match("written whole: " .. runs:gsub("%p", "%%%0") .. "/([^/]+)/quick%-raw%.txt")
  t.ok(run ~= nil, "it says the set was written whole", text)
  t.is(t.run("readlink " .. q(runs .. "/latest-cycles")), (run or "?") .. "\n", "and latest-cycles names that run")
  if run then os.execute("rm -rf " .. q(runs .. "/" .. run)) end
end

do -- a SIGINT to ftrun alone while os.execute runs a command: system() ignored it, and the run went on
  -- the SIGINT once the command runs (a SIGINT before it would also exit 130, and prove nothing)
  local out = t.run(("%s -e %s 2>&1 & pid=$!; for i in $(seq 1000); do pgrep -P $pid >/dev/null && break; "
    .. "sleep 0.01; done; kill -INT $pid; wait $pid; echo \"exit $?\""):format(
    q(t.ftrun), q('os.execute("sleep 2") print("went on")')))
  t.like(out, "exit 130\n", "SIGINT during os.execute: exit 130 once the command returns", out)
  t.ok(not out:find("went on", 1, true), "and the script does not go on", out)
  local said, code = t.ftrun_run("-e " .. q('local ok, how, n = os.execute("exit 3") '
    .. 'assert(ok == nil and how == "exit" and n == 3) assert(os.execute("true") == true) '
    .. 'assert(select(2, os.execute("kill -INT $$")) == "signal") assert(os.execute() == true)'))
  t.is(code, 0, "os.execute returns what Lua's does: exit status, signal, a shell there", said)
end

os.execute("rm -rf " .. q(dir))
t.done()
