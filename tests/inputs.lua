-- Hostile inputs stay data: a results JSON, a knob or a path never becomes
-- a command, a write outside its place or a read past a buffer, and a bad
-- one is refused before anything is measured, in a message of bounded size.
local ft = require "ft"
local t = require "tap"
local json = require "json"
local q = t.quote

local dir = t.tmpdir()

do -- a results JSON whose text would be gnuplot commands: plot.lua draws it as text
  local out, code = t.ftrun_run("first_touch.lua MIB=4 REPS=1 RESULTS=" .. q(dir .. "/run"))
  t.is(code, 0, "a small run to plot", out)
  local path = dir .. "/run/exp-first_touch-results.json"
  local doc = json.decode(t.read(path) or "null") or {}
  local pwned = dir .. "/PWNED"
  doc.run = "x`touch " .. pwned .. "1`"
  doc.provenance = doc.provenance or {}
  doc.provenance.kernel = "6.18\n!touch " .. pwned .. "2\n#"
  doc.rows = doc.rows or {}
  if doc.rows[1] then doc.rows[1].label = 'a\\", `touch ' .. pwned .. '3`, "' end
  t.write(path, json.encode(doc))
  out, code = t.ftrun_run("plot.lua " .. q(dir .. "/run"))
  t.is(code, 0, "plot.lua draws it", out)
  for i = 1, 3 do t.ok(not t.read(pwned .. i), "and runs none of its text as a command (" .. i .. ")") end
  local gp = t.read(dir .. "/run/exp-first_touch-plot.gp") or ""
  t.ok(not gp:find("`", 1, true), "the .gp holds no backquote", gp)
  t.ok(not gp:find("\n!", 1, true), "and no line of the provenance's starts a command", gp)
  t.like(gp, "x'touch " .. pwned .. "1'", "the run's name is shown, its backquotes as quotes")
  local plots = require "plots"
  t.is(plots.quoted('a"b\\c`d\ne\0f'), [["a'b/c'd e f"]], "plots.quoted: no character that ends the string or runs a command")
end

do -- ft.mkdir(""): a refusal naming the empty path, no read past the copy (C1)
  local ok, msg, errno = ft.mkdir("")
  t.is(ok, nil, "ft.mkdir('') fails")
  t.is(msg, "mkdir: empty path", "saying the path is empty")
  t.is(errno, 22, "with EINVAL")
end

do -- a knob's value that the results' RESULT lines cannot hold: exit 2 before anything is mapped (X1)
  for _, v in ipairs { { "RESULTS", dir .. '/q"uote' }, { "RESULTS", dir .. "/new\nline" },
    { "README", dir .. '/r"eadme' }, { "AB", 'THP=never | THP="16K"' } } do
    local t0 = os.time()
    local out, code = t.run(("%s=%s %s cycles.lua CYCLES=A MIB=16 REPS=2"):format(v[1], q(v[2]), q(t.ftrun)))
    t.is(code, 2, v[1] .. " with a double quote or a newline: exit 2", out)
    t.like(out, "may not hold a double quote, a newline", "saying why")
    t.is(select(2, t.own(out):gsub("\n", "")), 1, "in one line, no traceback", out)
    t.ok(os.time() - t0 < 20, "before the run", out)
  end
  t.is(t.run("ls " .. q(dir)), "run\n", "and no RESULTS directory made")
end

do -- NOWAIT=1 PUBLISH=1: refused before measuring (X2)
  local readme = dir .. "/README.md"
  t.write(readme, "x\n<!-- ftrun results exp-populate: begin -->\n<!-- ftrun results exp-populate: end -->\n")
  local out, code = t.run(("NOWAIT=1 PUBLISH=1 README=%s RESULTS=%s %s populate.lua MIB=16 REPS=2"):format(
    q(readme), q(dir .. "/pub"), q(t.ftrun)))
  t.is(code, 2, "NOWAIT=1 PUBLISH=1 exits 2", out)
  t.like(out, "NOWAIT=1 PUBLISH=1: ", "naming the two knobs")
  t.ok(not out:find("ns/page", 1, true) and not out:find("traceback", 1, true), "before anything was measured", out)
end

do -- an AB side runs the script's check as the run's own knobs do (W2)
  local out, code = t.ftrun_run("cycles.lua QUICK=1 CYCLES=C SLOW_NS=1 RESULTS=" .. q(dir .. "/w2"))
  t.is(code, 2, "SLOW_NS=1 alone exits 2", out)
  out, code = t.run(("AB='SLOW_NS=1 | SLOW_NS=200' %s cycles.lua QUICK=1 CYCLES=C RESULTS=%s"):format(q(t.ftrun),
    q(dir .. "/w2")))
  t.is(code, 2, "and as side A of an AB run", out)
  t.like(out, "AB side A (SLOW_NS=1): SLOW_NS=1: expected at least twice the per-page timer's cost",
    "naming the side and the check's reason")
  -- without cycle C nothing is timed per page: a timer slowed by load must not refuse the run
  out, code = t.ftrun_run("cycles.lua CYCLES=A MIB=4 REPS=1 SLOW_NS=1 RESULTS=" .. q(dir .. "/w2"))
  t.is(code, 0, "CYCLES=A takes any SLOW_NS: it has no per-page timer", out)
end

do -- a refusal echoes a long value cut, with its length (U8)
  local long = ("THP=never "):rep(11000) .. "| THP=always"
  local out, code = t.run(("AB=%s %s cycles.lua QUICK=1"):format(q(long), q(t.ftrun)))
  t.is(code, 2, "an AB naming THP 11000 times on a side exits 2", out:sub(1, 300))
  t.ok(#t.own(out) < 400, "in a message of a few hundred bytes, not the whole AB", #out)
  t.like(out, ("... (%d bytes): THP twice on side A"):format(#long), "the value cut, its length said")
end

do -- a failure a run can meet: exit 1 and its message, no traceback (U4)
  local res = dir .. "/u4"
  os.execute("mkdir -p " .. q(res .. "/exp-first_touch-results.json"))
  local out, code = t.ftrun_run("first_touch.lua MIB=4 REPS=1 RESULTS=" .. q(res))
  t.is(code, 1, "results.json a directory: exit 1", out)
  t.like(out, "ftrun: first_touch.lua: results not written: writing " .. res
    .. "/exp-first_touch-results.json failed: Is a directory\n", "saying which file and why")
  t.ok(not out:find("traceback", 1, true), "with no traceback", out)
end

do -- WE-2: MIB at the maximum --help states is refused by the memory check, not by a failed mmap
  local out, code = t.ftrun_run("cycles.lua", "CYCLES=A REPS=2 MIB=8796093022207 RESULTS=" .. q(dir .. "/we2"))
  t.is(code, 2, "MIB=8796093022207: exit 2", out)
  t.like(out, "MIB=8796093022207: needs ", "naming MIB and what it needs")
  t.ok(not out:find("traceback", 1, true) and not out:find("mmap", 1, true), "before any mmap, no traceback", out)
end

do -- SW-8: a CLOCK_GHZ far from the clock estimate is said
  local estimate = ft.clock_estimate("measured")
  local far = ("%.4f"):format(estimate / 1000)
  local out, code = t.ftrun_run("cycles.lua", ("CYCLES=A MIB=4 REPS=1 CLOCK_GHZ=%s RESULTS=%s"):format(far,
    q(dir .. "/sw8")))
  t.is(code, 0, "CLOCK_GHZ a thousandth of the estimate still runs", out)
  t.like(out, "warning: CLOCK_GHZ=" .. far .. " is ", "and says how far it is from the estimate")
  t.errors(function() ft.clock_estimate("x") end, 'expected "measured"', "ft.clock_estimate takes only \"measured\"")
end

do -- UM-3: a RESULTS of 100 000 bytes is named once, shortened
  t.write(dir .. "/afile", "x")
  local long = dir .. "/afile/" .. ("x"):rep(100000)
  local out, code = t.ftrun_run("cycles.lua", "CYCLES=A MIB=4 REPS=1 RESULTS=" .. q(long))
  t.is(code, 2, "RESULTS of 100 000 bytes below a file: exit 2")
  t.ok(#out < 2000, ("in a message of %d bytes, the path shortened"):format(#out), out:sub(1, 300))
  t.like(out, "(100", "saying how long it is")
end

os.execute("rm -rf " .. q(dir))
t.done()
