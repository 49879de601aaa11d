-- Hostile inputs stay data: a results JSON, a knob or a path never becomes
-- a command, a write outside its place or a read past a buffer, and a bad
-- one is refused before anything is measured, in a message of bounded size.
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

os.execute("rm -rf " .. q(dir))
t.done()
