-- A small TAP producer for prove: ok/is/like/errors, then done().
local tap = {}

local count, failed = 0, 0

-- The ftrun under test: FTRUN from make, else the interpreter running us.
tap.ftrun = os.getenv("FTRUN") or arg[-1]
if tap.ftrun:sub(1, 1) ~= "/" then tap.ftrun = os.getenv("PWD") .. "/" .. tap.ftrun end

-- A failure's diagnostics go to stderr, which prove passes through (it
-- shows no comment on stdout unless verbose), so that `make test`'s log
-- alone says what was expected, what came, and what the last ftrun run
-- before the check (usually the run it checks) printed and how it exited.
local last_run -- {cmd, out, code, shown = test number}, set by tap.run
local notes = {} -- tap.diag's lines since the last check

-- at most the first 20 and the last 60 lines
local function shorten(text)
  local lines = {}
  for line in (tostring(text) .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  if lines[#lines] == "" then lines[#lines] = nil end
  if #lines <= 80 then return lines end
  local kept = table.move(lines, 1, 20, 1, {})
  kept[21] = ("[... %d lines left out ...]"):format(#lines - 80)
  return table.move(lines, #lines - 59, #lines, 22, kept)
end

local function diagnose(name, diag)
  local out = { ("  Failed test %d - %s (%s)"):format(count, name, arg and arg[0] or "?") }
  for _, line in ipairs(shorten(diag or "")) do out[#out + 1] = "  " .. line end
  if #notes > 0 then
    out[#out + 1] = "  the test's notes before it:"
    for _, line in ipairs(shorten(table.concat(notes, "\n"))) do out[#out + 1] = "  " .. line end
  end
  if last_run and last_run.shown then
    out[#out + 1] = ("  the last command's output is shown at test %d"):format(last_run.shown)
  elseif last_run then
    last_run.shown = count
    out[#out + 1] = "  the last command run before it: " .. last_run.cmd
    out[#out + 1] = ("  exited %s; its stdout and stderr:"):format(tostring(last_run.code))
    for _, line in ipairs(shorten(last_run.out)) do out[#out + 1] = "  | " .. line end
  end
  io.stdout:flush()
  for _, line in ipairs(out) do io.stderr:write("# ", line, "\n") end
end

local function report(pass, name, diag)
  count = count + 1
  if not pass then failed = failed + 1 end
  print(("%s %d - %s"):format(pass and "ok" or "not ok", count, name))
  if not pass then diagnose(name, diag) end
  notes = {}
  return pass
end

function tap.ok(cond, name, diag)
  return report(cond and true or false, name, diag or ("want: a true value\ngot:  %s"):format(tostring(cond)))
end

-- diag, when given, follows the two values in a failure's diagnostics
function tap.is(got, want, name, diag)
  return report(got == want and math.type(got) == math.type(want), name,
    ("got:  %s (%s)\nwant: %s (%s)%s"):format(tostring(got), math.type(got) or type(got),
      tostring(want), math.type(want) or type(want), diag and "\n" .. tostring(diag) or ""))
end

-- plain-text containment, so messages with punctuation need no escaping
function tap.like(text, part, name)
  return report(type(text) == "string" and text:find(part, 1, true) ~= nil, name,
    ("want it to contain: %s\ngot: %s"):format(part, tostring(text)))
end

-- fn must raise an error whose message contains part
function tap.errors(fn, part, name)
  local ok, msg = pcall(fn)
  if ok then return report(false, name, "want: an error containing: " .. part .. "\ngot:  no error") end
  return tap.like(tostring(msg), part, name)
end

-- A check that cannot hold on this machine: a TAP skip that names why (a kernel fact).
function tap.skip(name, reason)
  count = count + 1
  print(("ok %d - %s # SKIP %s"):format(count, name, reason))
  notes = {}
  return true
end

function tap.diag(text)
  print("# " .. text)
  notes[#notes + 1] = tostring(text)
end

local function quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end
tap.quote = quote

-- A fresh empty directory for a test's files, removed when the file ends: at tap.done, or
-- when the state closes after an error stopped the file before it.
local tmpdirs = {}
local function remove_tmpdirs()
  for _, d in ipairs(tmpdirs) do os.execute("rm -rf " .. quote(d)) end
  tmpdirs = {}
end
tap.tmpdirs_sentinel = setmetatable({}, { __gc = remove_tmpdirs })
function tap.tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. quote(d)))
  tmpdirs[#tmpdirs + 1] = d
  return d
end

-- A file's text, or nil when it cannot be read.
function tap.read(path)
  local f = io.open(path)
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- How many of this process's descriptors point at a target matching the
-- Lua pattern (ls -l of /proc/PID/fd: "memfd:ftrun (deleted)", ...).
function tap.open_fds(pattern)
  -- ls's complaints left out: popen's own pipe end can close between ls's
  -- listing and its readlink, and ls then names the pid in an error line
  local p = io.popen("ls -l /proc/" .. tap.read("/proc/self/stat"):match("^(%d+)") .. "/fd 2>/dev/null")
  local s = p:read("a")
  p:close()
  local n = 0
  for _ in s:gmatch(pattern) do n = n + 1 end
  return n
end

function tap.write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function shell(cmd)
  local p = assert(io.popen("{ " .. cmd .. "\n} 2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

-- Runs a shell command; returns its combined output and exit code. A run
-- of ftrun is kept for the diagnostics of the checks that follow it.
function tap.run(cmd)
  local out, code = shell(cmd)
  if cmd:find("ftrun", 1, true) then last_run = { cmd = cmd, out = out, code = code } end
  return out, code
end

-- ftrun's output without its start-up warnings about settings another
-- process left changed (a machine shared with other work prints them, and
-- a check that counts lines or bytes is about the run's own output).
function tap.own(out)
  return (out:gsub("ftrun: warning: [^\n]- and no run holds the settings lock[^\n]*\n", "")
    :gsub("ftrun: pid %d+ died and left settings changed [^\n]- so they are left for a later start\n", ""))
end

-- Starts cmd (a shell command line) in the background, sends it SIG<sig> once `ready` (a shell
-- condition) holds, and returns what tap.run does, its output ending in "exit <status>". The
-- wait is bounded by time (limit seconds, default 300), not by a count of polls that a loaded
-- machine stretches; a run that ends before the window opens, or a window that never opens, is
-- said as "window missed: ..." with the run's status, never as another run's kill failing.
function tap.signal_when(cmd, ready, sig, limit)
  return tap.run(([[
%s &
P=$!; end=$(( $(date +%%s) + %d ))
until { %s; }; do
  st=$(sed 's/.*) //' /proc/$P/stat 2>/dev/null | cut -c1)
  if [ -z "$st" ] || [ "$st" = Z ]; then wait $P; echo "window missed: the run ended first, status $?"; exit; fi
  if [ "$(date +%%s)" -ge "$end" ]; then
    kill -KILL $P; wait $P; echo "window missed: not open within %d s, the run killed"; exit
  fi
  sleep 0.02
done
kill -%s $P; wait $P; echo "exit $?"]]):format(cmd, limit or 300, ready, limit or 300, sig))
end

-- Runs ftrun with the given argument string (already quoted).
function tap.ftrun_run(args, env)
  return tap.run((env and env .. " " or "") .. quote(tap.ftrun) .. " " .. args)
end

-- The command that runs ftrun as nobody (uid and gid 65534, no groups):
-- setpriv and a copy of the executable and scripts/ in a directory that
-- everyone can read, so that it works from a checkout nobody can reach
-- (under a mode 700 /root, say). nil and the reason when it cannot be.
local nobody_copy
function tap.nobody()
  if shell("id -u") ~= "0\n" then return nil, "not root" end
  if shell("command -v setpriv") == "" then return nil, "no setpriv (util-linux)" end
  if not nobody_copy then
    local exe = tap.ftrun:match("[^/]+$")
    local dir = shell("mktemp -d /tmp/ftrun-nobody.XXXXXX"):match("[^\n]+")
    local project = shell("dirname \"$(realpath " .. quote(tap.ftrun) .. ")\""):match("[^\n]+")
    local out, code = shell(("cp %s %s/ && cp -R %s/scripts %s/ && chmod -R a+rX %s"):format(
      quote(tap.ftrun), quote(dir), quote(project), quote(dir), quote(dir)))
    if code ~= 0 then
      shell("rm -rf " .. quote(dir))
      error("cannot copy ftrun for nobody: " .. out)
    end
    nobody_copy = { dir = dir, exe = dir .. "/" .. exe }
  end
  return "setpriv --reuid=65534 --regid=65534 --clear-groups " .. quote(nobody_copy.exe)
end

-- results/runs/latest*, as they were when the file started: a test's runs
-- move them, then the test removes its runs and would leave them dangling.
local RUNS = require("ft").project_dir .. "/results/runs"
local LIST_LINKS = "cd " .. quote(RUNS) .. " 2>/dev/null && for l in latest*; do "
  .. "[ -L \"$l\" ] && printf '%s %s %s\\n' \"$l\" \"$(readlink \"$l\")\" \"$([ -e \"$l\" ] && echo ok)\"; done"
local function latest_links()
  local links, p = {}, io.popen(LIST_LINKS)
  for name, target, ok in p:read("a"):gmatch("(%S+) (%S+) ?(%S*)\n") do
    links[name] = { target = target, dangling = ok ~= "ok" }
  end
  p:close()
  return links
end
local links_at_start = latest_links()

function tap.done()
  if nobody_copy then os.execute("rm -rf " .. quote(nobody_copy.dir)) end
  remove_tmpdirs()
  -- only a link this file left dangling is put back (or removed): a run
  -- beside the suite may have moved one for real
  for name, now in pairs(latest_links()) do
    if now.dangling then
      local was = links_at_start[name]
      os.execute((was and not was.dangling) and ("ln -sfn %s %s"):format(quote(was.target), quote(RUNS .. "/" .. name))
        or "rm -f " .. quote(RUNS .. "/" .. name))
    end
  end
  print("1.." .. count)
  os.exit(failed == 0 and 0 or 1)
end

return tap
