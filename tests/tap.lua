-- tests/lib/tap.lua itself: a failing check says on stderr (which prove
-- passes through) what was expected, what came and what the ftrun run
-- before it printed, while stdout stays TAP that prove reads; tap.nobody()
-- runs a copy of ftrun as nobody from anywhere.
local t = require "tap"
local q = t.quote

local dir = t.tmpdir()
assert(os.execute(("mkdir %s/lib && ln -s \"$(realpath %s)\" %s/lib/tap.lua"):format(q(dir),
  q(assert(package.searchpath("tap", package.path))), q(dir))))

-- Runs a TAP script with the ftrun under test; its stdout, stderr, exit code.
local function child(name, code, exe)
  local path = ("%s/%s.lua"):format(dir, name)
  t.write(path, code)
  exe = exe or t.ftrun
  local _, status = t.run(("FTRUN=%s %s %s >%s/out 2>%s/err"):format(q(exe), q(exe), q(path), q(dir), q(dir)))
  return t.read(dir .. "/out"), t.read(dir .. "/err"), status
end

local out, err, code = child("failing", [[
local t = require "tap"
t.ok(true, "passes")
t.is(1, 2, "numbers", "the context: what the check was about")
local out, code = t.ftrun_run("-e " .. t.quote('io.stderr:write("the run said boom\\n") print("and this on stdout") os.exit(3)'))
t.is(code, 0, "the run exits 0")
t.like(out, "never printed", "and prints it")
t.diag("a note: 41 faults")
t.ok(false, "a bare ok")
t.ok(false, "another")
t.done()
]])
t.is(code, 1, "a failing TAP script exits 1")
t.like(out, "ok 1 - passes\nnot ok 2 - numbers\n", "stdout: the TAP lines")
t.like(out, "\n1..6\n", "stdout: the plan at the end")
local tap_only = true
for line in out:gmatch("[^\n]+") do
  tap_only = tap_only and (line:match("^ok %d") or line:match("^not ok %d") or line:match("^#")
    or line:match("^1%.%.%d+$")) ~= nil
end
t.ok(tap_only, "stdout: every line is a test line, a comment or the plan", out)
t.like(err, "#   Failed test 2 - numbers (", "stderr: the failed test, its number and file")
t.like(err, "#   got:  1 (integer)\n#   want: 2 (integer)\n#   the context: what the check was about\n",
  "stderr: what came, what was expected, then is's own diagnostic")
t.like(err, "#   Failed test 3 - the run exits 0", "stderr: the check after a run")
t.like(err, "#   exited 3; its stdout and stderr:\n", "stderr: how the run exited")
t.like(err, "#   | the run said boom\n", "stderr: what the run wrote on stderr")
t.like(err, "#   | and this on stdout\n", "stderr: and on stdout")
t.like(err, "#   the last command's output is shown at test 3", "a second failure after the same run does not repeat it")
t.like(err, "#   want it to contain: never printed\n#   got: the run said boom", "like: the part wanted, then the text")
t.like(err, "#   want: a true value\n#   got:  false", "ok without a diagnostic: what it wanted")
t.ok(err:match("a bare ok %([^\n]*%)\n#   want: a true value\n#   got:  false\n#   the test's notes before it:\n"
  .. "#   a note: 41 faults\n"), "the notes (tap.diag) printed since the check before", err)
t.ok(not (err:match("another %([^\n]*%)\n(.*)$") or "notes"):find("notes", 1, true), "and only those", err)
t.ok(not err:find("Failed test 1 ", 1, true), "a passing test prints nothing on stderr", err)

out, err = child("long", [[
local t = require "tap"
t.run(t.quote(t.ftrun) .. " -e 'for i = 1, 200 do print(\"line \" .. i) end' 2>/dev/null")
t.ok(false, "after a long run")
t.done()
]])
t.like(err, "#   | line 20\n#   | [... 120 lines left out ...]\n#   | line 141\n", "a long output: its first 20 and last 60 lines")
t.ok(not err:find("line 21\n", 1, true), "and nothing between", err)

out, err = child("passing", [[
local t = require "tap"
t.run(t.quote(t.ftrun) .. " -e 'os.exit(4)'")
t.ok(true, "fine")
t.done()
]])
-- (ftrun's own start-up warnings about the machine's settings may be there)
t.ok(not err:find("#", 1, true), "a passing script writes no diagnostics on stderr", err)

if t.run("command -v prove") ~= "" then
  local text, status = t.run(("cd %s && FTRUN=%s prove --exec %s failing.lua"):format(q(dir), q(t.ftrun), q(t.ftrun)))
  t.ok(status ~= 0, "prove fails the failing script", text)
  t.like(text, "Failed tests:  2-6", "prove parses the TAP: tests 2 to 6 failed")
  t.like(text, "#   | the run said boom", "and passes the diagnostics through to its log")
else
  t.diag("skipped: prove is not installed")
end

-- tap.nobody(): a copy that nobody can run, wherever the checkout is
local nobody, why = t.nobody()
if nobody then
  out, err = child("nobody", [[
local t = require "tap"
print("#" .. t.run(t.nobody() .. " -e 'print(io.popen(\"id -u\"):read(\"l\"), ft.project_dir)'"))
t.done()
]])
  local uid, copy = out:match("#(%d+)\t(%S+)")
  t.is(uid, "65534", "tap.nobody() runs ftrun as uid 65534", out .. err)
  t.like(copy or "", "/tmp/ftrun-nobody.", "from a copy in /tmp")
  t.ok(copy and not t.read(copy .. "/scripts/cycles.lua"), "the copy is removed by t.done()", copy)
  -- a checkout nobody can reach: the executable in a mode 700 directory
  local hidden = dir .. "/hidden"
  assert(os.execute(("mkdir -m 700 %s && cp %s %s/ && cp -R %s/scripts %s/"):format(q(hidden),
    q(t.ftrun), q(hidden), q(assert(ft.project_dir)), q(hidden))))
  local exe = hidden .. "/" .. t.ftrun:match("[^/]+$")
  -- from /, as the runner falls back on ./scripts when it cannot resolve its own directory
  local text, status = t.run("cd / && setpriv --reuid=65534 --regid=65534 --clear-groups " .. q(exe) .. " cycles.lua --help")
  t.ok(status ~= 0, "nobody cannot run it from a mode 700 directory (its scripts cannot be read)", text)
  out, err = child("hidden", [[
local t = require "tap"
local text, status = t.run(t.nobody() .. " cycles.lua --help")
print("#" .. status .. " " .. (text:match("usage: [^\n]*") or text))
t.done()
]], exe)
  t.like(out, "#0 usage: ", "tap.nobody() runs it and its scripts from its copy", out .. err)
else
  t.diag("skipped: tap.nobody(): " .. why)
end

os.execute("rm -rf " .. q(dir))
t.done()
