-- The executable: arguments, exit codes, tracebacks, script lookup, the REPL
-- over piped stdin, and SIGINT.
local t = require "tap"
local q = t.quote
local run = t.ftrun_run

do
  local out, code = run("--help")
  t.is(code, 0, "--help exits 0")
  t.like(out, "usage: ftrun [options] [script [args...]]", "--help prints usage")
  local listed = out:match("scripts %(each explains its knobs with %-%-help[^\n]*\n(.*)$") or ""
  local missing = {}
  for name in io.popen("ls scripts"):lines() do
    if name:match("%.lua$") and not listed:find(name, 1, true) then missing[#missing + 1] = name end
  end
  t.ok(listed ~= "" and #missing == 0, "--help lists every script and says each has --help",
    table.concat(missing, " "))
  out, code = run("--version")
  t.is(code, 0, "--version exits 0")
  t.like(out, "ftrun ", "--version names ftrun")
  t.like(out, "Lua 5.4", "--version names Lua")
  local commit = run("-e " .. q("io.write(ft.build.commit)"))
  t.like(out, "commit " .. commit .. " (", "--version names the commit ft.build records")
end

do
  local out, code = run("--frobnicate")
  t.is(code, 2, "unknown option exits 2")
  t.like(out, "unknown option '--frobnicate'", "unknown option named")
  out, code = run("-e")
  t.is(code, 2, "-e without code exits 2")
  out, code = run("no_such_script.lua")
  t.is(code, 2, "missing script exits 2")
  t.like(out, "cannot open script 'no_such_script.lua'", "missing script named")
end

do -- a Lua error: message, traceback with file:line, exit 1
  local dir = t.tmpdir()
  local path = dir .. "/boom.lua"
  local f = assert(io.open(path, "w"))
  f:write("local function inner()\n  local b = ft.mmap(1 << 20)\n  b:unmap()\n  b:touch(1)\nend\ninner()\n")
  f:close()
  local out, code = run(q(path))
  t.is(code, 1, "Lua error exits 1")
  t.like(out, "boom.lua:4: buffer is unmapped", "error names file, line and cause")
  t.like(out, "stack traceback:", "traceback printed")
  t.like(out, "boom.lua:6: in main chunk", "traceback reaches the caller")
  -- arg and ... as the standalone lua sets them
  f = assert(io.open(path, "w"))
  f:write("print(arg[0], arg[1], arg[2], select('#', ...), ...)\n")
  f:close()
  out, code = run(q(path) .. " one two")
  t.is(code, 0, "script with arguments exits 0")
  t.like(out, path .. "\tone\ttwo\t2\tone\ttwo", "arg table and ... hold the arguments")
  os.remove(path)
  os.remove(dir)
end

do -- scripts/ is searched, from any working directory
  local dir = t.tmpdir()
  local out, code = t.run("cd / && " .. q(t.ftrun) .. " first_touch.lua MIB=4 REPS=1 RESULTS=" .. q(dir))
  t.is(code, 0, "a script found in scripts/ runs from another directory")
  t.like(out, "| fresh mmap |", "scripts/first_touch.lua ran")
  os.execute("rm -rf " .. q(dir))
end

do
  local out, code = run("-e 'print(1 + 1)' -e 'print(ft.page_size())'")
  t.is(code, 0, "-e exits 0")
  t.like(out, "2\n4096", "several -e run in order")
  out, code = run("-e 'error(\"custom failure\")'")
  t.is(code, 1, "-e error exits 1")
  t.like(out, "custom failure", "-e error message")
end

do -- the REPL over piped stdin
  local session = table.concat({
    "1 + 1",
    "x = 20",
    "x + 1",
    "for i = 1, 2 do",
    "  print('line', i)",
    "end",
    "error('oops')",
    "local b <close> = ft.mmap(1 << 20); print(b.pages)",
    "'still here'",
  }, "\n")
  local out, code = t.run("printf '%s\\n' " .. q(session) .. " | " .. q(t.ftrun))
  t.is(code, 0, "REPL on piped stdin exits 0 at end of input")
  t.like(out, "2\n", "an expression prints its value")
  t.like(out, "21\n", "globals persist between lines")
  t.like(out, "line\t1\nline\t2\n", "an unfinished statement continues on the next line")
  t.like(out, "oops", "an error is reported")
  t.like(out, "256\n", "ft is loaded in the REPL")
  t.like(out, "still here", "the REPL goes on after an error")
  out = t.run("printf 'print(1' | " .. q(t.ftrun))
  t.like(out, "<eof>", "an unfinished chunk at end of input is reported")
  out, code = t.run("printf 'x = 3\\n' | " .. q(t.ftrun) .. " -e 'x = 2' -i")
  t.is(code, 0, "-i after -e opens the REPL")
end

do -- SIGINT inside a long C pass and inside Lua code
  local long_pass = [[-e 'local b <close> = ft.mmap(1 << 30); b:touch(1); io.stderr:write("ready\n"); while true do b:fill(3) end']]
  -- the SIGINT once the run says it is ready (its 1 GiB first touch done, which load slows), then
  -- 0.3 s into the fill passes
  local log = t.tmpdir() .. "/log"
  local out = t.signal_when(q(t.ftrun) .. " " .. long_pass .. " 2>" .. q(log),
    "grep -q ready " .. q(log) .. " && sleep 0.3", "INT") .. (t.read(log) or "")
  t.like(out, "interrupted", "SIGINT in a fill pass raises 'interrupted'")
  t.like(out, "exit 130", "SIGINT exits 130")
  out = t.run(q(t.ftrun) .. " -e 'while true do end' & pid=$!; sleep 0.5; kill -INT $pid; wait $pid; echo \"rc=$?\"")
  t.like(out, "interrupted", "SIGINT in Lua code raises 'interrupted'")
  t.like(out, "rc=130", "SIGINT in Lua code exits 130")
end

local write = t.write

do -- 1: too many results are an error inside a protected call, not a panic
  local out, code = t.run("echo 'return table.unpack({}, 1, 999980)' | " .. q(t.ftrun))
  t.ok(code ~= 134, "REPL survives too many results (no abort)", "exit " .. tostring(code))
  t.like(out, "ftrun: ", "too many results print an error")
end

do -- 2: the sanitizer build carries allocator_may_return_null=1
  local san = t.ftrun:gsub("ftrun$", "ftrun-san")
  local f = io.open(san)
  if f then
    f:close()
    local _, code = t.run("env -u ASAN_OPTIONS " .. q(san) .. " -e 'print(pcall(ft.malloc, 1<<62))'")
    t.is(code, 0, "ftrun-san: ft.malloc(1<<62) with ASAN_OPTIONS unset exits 0")
  else
    t.ok(true, "# SKIP no ./ftrun-san (make SAN=1 builds it)")
  end
end

do -- 3: SIGINT reaches coroutines, a caught interrupt still ends the run,
   -- error objects without a string never print (null)
  local dir = t.tmpdir()
  local co = dir .. "/co.lua"
  write(co, "coroutine.wrap(function() while true do end end)()\n")
  local out = t.run(q(t.ftrun) .. " " .. q(co) .. " & pid=$!; sleep 0.5; kill -INT $pid; wait $pid; echo \"rc=$?\"")
  t.like(out, "rc=130", "SIGINT stops a loop inside a coroutine (exit 130)")
  t.like(out, "\nftrun: ", "the interrupt message starts on its own line")
  local caught = dir .. "/caught.lua"
  write(caught, "local ok, e = pcall(function() while true do end end)\nprint('caught', e)\n")
  out = t.run(q(t.ftrun) .. " " .. q(caught) .. " & pid=$!; sleep 0.5; kill -INT $pid; wait $pid; echo \"rc=$?\"")
  t.like(out, "caught", "the script caught the interrupt and went on")
  t.like(out, "rc=130", "a caught interrupt still exits 130")
  for _, code in ipairs({
    "error(setmetatable({}, {__tostring = function() return nil end}))",
    "error(nil)",
    "do local x <close> = setmetatable({}, {__close = function() error(setmetatable({}, {})) end}) end",
    "do local x <close> = setmetatable({}, {__close = function() error(nil) end}) end",
  }) do
    local o, c = run("-e " .. q(code))
    t.ok(not o:find("(null)", 1, true) and o:find("error object is a", 1, true), "no (null) for: " .. code, o)
    t.is(c, 1, "exit 1 for: " .. code)
  end
  os.remove(co); os.remove(caught); os.remove(dir)
end

do -- 4: ftrun - reads the script from stdin
  local out, code = t.run("echo 'print(\"from stdin\", arg[0], ...)' | " .. q(t.ftrun) .. " - a b")
  t.is(code, 0, "ftrun - exits 0")
  t.like(out, "from stdin\t-\ta\tb", "ftrun - runs stdin with arguments")
end

do -- an installed layout: <prefix>/bin/ftrun with <prefix>/share/ftrun/scripts
  local prefix = t.tmpdir()
  local share = prefix .. "/share/ftrun/scripts"
  t.run("mkdir -p " .. q(prefix .. "/bin") .. " " .. q(share .. "/lib") .. " && cp " .. q(t.ftrun) .. " "
    .. q(prefix .. "/bin/ftrun"))
  write(share .. "/hello.lua", "print('hello from', arg[0], require('greeting'))\n")
  write(share .. "/lib/greeting.lua", "return 'the installed library'\n")
  write(share .. "/worker.lua", "return function(i) return i * 10 end\n")
  local real = t.run("realpath " .. q(share .. "/hello.lua")):gsub("\n", "")
  local out, code = t.run("cd / && " .. q(prefix .. "/bin/ftrun") .. " hello.lua")
  t.is(code, 0, "an installed ftrun runs a script from share/ftrun/scripts")
  t.like(out, "hello from\t" .. real .. "\tthe installed library",
    "its arg[0] is the script's path, and require finds share/ftrun/scripts/lib")
  out = t.run("cd / && " .. q(prefix .. "/bin/ftrun")
    .. " -e 'print(ft.tasks(1, \"@worker.lua\", {mode = \"processes\"}).tasks[1].values[1])'")
  t.like(out, "10\n", "a task script is found there too")
  out, code = t.run("cd / && " .. q(prefix .. "/bin/ftrun") .. " nothing.lua")
  t.is(code, 2, "a missing script exits 2")
  t.like(out, "share/ftrun/scripts/nothing.lua", "the message names the installed place it looked")
  t.run("rm -rf " .. q(prefix))
end

do -- 5: a script found in scripts/ gets its absolute path as arg[0]
  local dir = t.ftrun:match("^(.*)/[^/]*$")
  local real = t.run("realpath " .. q(dir .. "/scripts/first_touch.lua")):gsub("\n", "")
  local tmp = t.tmpdir()
  local out = t.run("cd /tmp && " .. q(t.ftrun) .. " -i first_touch.lua MIB=4 REPS=1 RESULTS=" .. q(tmp)
    .. " <<'EOF'\nprint('ARG0=' .. arg[0])\nEOF")
  os.execute("rm -rf " .. q(tmp))
  t.like(out, "ARG0=" .. real .. "\n", "arg[0] is the absolute scripts/ path from another directory")
end

do -- 6c, e, f: the REPL over piped input
  local out = t.run("printf '%s\\n' 't = {b = \"x\", a = 1}' t '{1, 2, 3}' 'setmetatable({}, {__tostring = function() return \"T!\" end})' | " .. q(t.ftrun))
  t.like(out, '{a = 1, b = "x"}\n', "a table prints its fields, keys sorted")
  t.like(out, "{1, 2, 3}\n", "an array prints its items")
  t.like(out, "T!\n", "a table with __tostring uses it")
  local dir = t.tmpdir()
  local big = dir .. "/big.lua"
  local lines = {"do", "  local s = 0"}
  for i = 1, 20000 do lines[#lines + 1] = "  s = s + " .. i end
  lines[#lines + 1] = "  print('sum', s)"
  lines[#lines + 1] = "end"
  write(big, table.concat(lines, "\n") .. "\n")
  out = t.run("FTRUN_TEST_REPL_COMPILES=1 " .. q(t.ftrun) .. " < " .. q(big))
  t.like(out, "sum\t200010000", "a 20 000-line block on piped stdin runs")
  -- the work, not the time: one compile per line would be 20 003
  local compiles = tonumber(out:match("the REPL compiled (%d+) chunks"))
  t.ok(compiles and compiles <= 40, "a 20 000-line block is compiled O(log n) times, not per line",
    "compiles: " .. tostring(compiles))
  -- a line the nesting estimate gets wrong (a backslash-newline string
  -- holding brackets) is still run: the doubling fallback compiles it
  out = t.run("printf '%s\\n' 'x = \"\\' '((((\"' 'y = 1' 'print(#x, y)' | " .. q(t.ftrun))
  t.like(out, "5\t1\n", "a chunk the nesting estimate misjudges still runs")
  out = t.run("printf 'print(1)\\nx = \"a\\0b\"\\nprint(2)\\n' | " .. q(t.ftrun))
  t.like(out, "stdin:2:", "a NUL byte is an error naming its line")
  t.like(out, "1\n", "lines before the NUL line run")
  t.like(out, "2\n", "lines after the NUL line run")
  os.remove(big); os.remove(dir)
end

do -- 6a, b, d: the interactive REPL, through tmux
  if not os.execute("command -v tmux >/dev/null 2>&1") then
    t.ok(true, "# SKIP tmux not installed")
  else
    local home = t.tmpdir()
    local s = "ftrun_test_" .. tostring(os.time()) .. tostring(math.random(1000000))
    local function tm(cmd) return t.run("tmux " .. cmd) end
    tm("new-session -d -x 120 -y 40 -s " .. s .. " " .. q("HOME=" .. home .. " " .. q(t.ftrun)))
    local function pane() os.execute("sleep 0.4"); return (tm("capture-pane -p -t " .. s)) end
    pane()
    tm("send-keys -t " .. s .. " 'x_history_marker = 42' Enter")
    pane()
    local f = io.open(home .. "/.ftrun_history")
    local hist = f and f:read("a") or ""
    if f then f:close() end
    t.like(hist, "x_history_marker = 42", "history is saved as lines are entered")
    -- a history already past its limit is cut to the newest lines when the REPL starts
    local home2 = t.tmpdir()
    local old = {}
    for i = 1, 6000 do old[i] = "old_line_" .. i end
    t.write(home2 .. "/.ftrun_history", table.concat(old, "\n") .. "\n")
    local s2 = s .. "_h"
    tm("new-session -d -x 120 -y 40 -s " .. s2 .. " " .. q("HOME=" .. home2 .. " " .. q(t.ftrun)))
    os.execute("sleep 0.4")
    tm("send-keys -t " .. s2 .. " 'y_marker = 1' Enter")
    os.execute("sleep 0.4")
    tm("kill-session -t " .. s2)
    local kept = t.read(home2 .. "/.ftrun_history") or ""
    local n = select(2, kept:gsub("\n", ""))
    t.ok(n > 0 and n <= 5001 and kept:find("old_line_6000", 1, true) and not kept:find("old_line_1\n", 1, true),
      "a history of 6000 lines keeps the newest 5000 (and the new one)", n)
    tm("send-keys -t " .. s .. " 'half typed' C-c")
    tm("send-keys -t " .. s .. " '1 + 41' Enter")
    local p = pane()
    t.like(p, "\n42\n", "Ctrl-C at the prompt clears the line and keeps the REPL")
    tm("send-keys -t " .. s .. " 'x_hist' Tab")
    tm("send-keys -t " .. s .. " ' + 1' Enter")
    p = pane()
    t.like(p, "43", "tab completes a global name")
    tm("send-keys -t " .. s .. " 'ft.page_s' Tab")
    tm("send-keys -t " .. s .. " '()' Enter")
    p = pane()
    t.like(p, "4096", "tab completes an ft. field")
    tm("send-keys -t " .. s .. " 'bb = ft.mmap(8192)' Enter")
    tm("send-keys -t " .. s .. " 'bb:sum_b' Tab")
    tm("send-keys -t " .. s .. " '() + 1000' Enter")
    p = pane()
    t.like(p, "\n1000\n", "tab completes a buffer's method after b:")
    tm("send-keys -t " .. s .. " 'help' Enter")
    p = pane()
    t.like(p, "b:<Tab> a buffer's methods", "help prints what to try and how")
    t.like(p, "The reference of every ft function and of the harness: ", "and where the reference is")
    tm("send-keys -t " .. s .. " 'local gone = 5' Enter")
    p = pane()
    t.like(p, "note: each line is a chunk of its own, so its locals end with it", "a local at the prompt gets a note")
    tm("send-keys -t " .. s .. " 'io.write(\"progress...\"); while true do end' Enter")
    os.execute("sleep 0.5")
    tm("send-keys -t " .. s .. " C-c")
    tm("send-keys -t " .. s .. " '\"alive\"' Enter")
    p = pane()
    t.ok(p:find("progress...", 1, true) and p:find("\nftrun: interrupted") and not p:find("[^\n]ftrun: interrupted"),
      "an interrupt message starts on its own line after an open progress line", p)
    t.like(p, "alive", "Ctrl-C during a run stops it and keeps the REPL")
    tm("send-keys -t " .. s .. " 'local pending = {' Enter")
    tm("send-keys -t " .. s .. " C-c")
    tm("send-keys -t " .. s .. " '\"fresh\" .. 1' Enter")
    p = pane()
    t.like(p, "fresh1", "Ctrl-C at the >> prompt drops the pending statement")
    tm("kill-session -t " .. s)
    -- a 20 000-line block pasted into the terminal (no bracketed paste):
    -- the REPL compiles when a statement may have ended, not every line
    local lines = {"do", "  local s = 0"}
    for i = 1, 20000 do lines[#lines + 1] = "  s = s + " .. i end
    lines[#lines + 1] = "  print('sum', s)"
    lines[#lines + 1] = "end"
    local big, count = home .. "/paste.lua", home .. "/compiles.txt"
    write(big, table.concat(lines, "\n") .. "\n")
    tm("new-session -d -x 120 -y 40 -s " .. s .. " " .. q("HOME=" .. home
      .. " FTRUN_TEST_REPL_COMPILES=1 " .. q(t.ftrun) .. " 2>" .. q(count) .. "; sleep 60"))
    pane()
    tm("load-buffer " .. q(big))
    tm("paste-buffer -t " .. s)
    local shown = ""
    for _ = 1, 300 do -- a generous wait for the paste to arrive, not a threshold
      shown = tm("capture-pane -p -t " .. s)
      if shown:find("sum\t200010000") or shown:find("sum%s+200010000") then break end
      os.execute("sleep 0.5")
    end
    tm("send-keys -t " .. s .. " C-d")
    os.execute("sleep 0.5")
    local compiles = tonumber((t.read(count) or ""):match("compiled (%d+) chunks"))
    t.ok(shown:find("200010000") ~= nil, "a pasted 20 000-line block runs", shown)
    t.ok(compiles and compiles <= 40, "a pasted 20 000-line block is compiled O(log n) times, not per line (D6)",
      "compiles: " .. tostring(compiles))
    tm("kill-session -t " .. s)
    os.remove(big); os.remove(count)
    os.remove(home .. "/.ftrun_history"); os.remove(home)
  end
end

t.done()
