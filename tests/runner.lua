-- The executable: arguments, exit codes, tracebacks, script lookup, the REPL
-- over piped stdin, and SIGINT.
local t = require "tap"
local q = t.quote
local run = t.ftrun_run

do
  local out, code = run("--help")
  t.is(code, 0, "--help exits 0")
  t.like(out, "usage: ftrun [options] [script [args...]]", "--help prints usage")
  out, code = run("--version")
  t.is(code, 0, "--version exits 0")
  t.like(out, "ftrun ", "--version names ftrun")
  t.like(out, "Lua 5.4", "--version names Lua")
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
  local out, code = t.run("cd / && " .. q(t.ftrun) .. " first_touch.lua 4")
  t.is(code, 0, "a script found in scripts/ runs from another directory")
  t.like(out, "first touch:", "scripts/first_touch.lua ran")
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
  local cmd = q(t.ftrun) .. " " .. long_pass .. " & pid=$!; sleep 1.5; kill -INT $pid; wait $pid; echo \"rc=$?\""
  local out = t.run(cmd)
  t.like(out, "interrupted", "SIGINT in a fill pass raises 'interrupted'")
  t.like(out, "rc=130", "SIGINT exits 130")
  out = t.run(q(t.ftrun) .. " -e 'while true do end' & pid=$!; sleep 0.5; kill -INT $pid; wait $pid; echo \"rc=$?\"")
  t.like(out, "interrupted", "SIGINT in Lua code raises 'interrupted'")
  t.like(out, "rc=130", "SIGINT in Lua code exits 130")
end

t.done()
