-- A script writer's mistakes, said at once and at their own line: a
-- misspelt column stops the run after its first repetition, an error raised
-- inside scripts/lib/ on a script's behalf names the script's line first,
-- the ratios a script takes are shown, and the tests that a new file in
-- scripts/ breaks name `make docs`.
local t = require "tap"
local q = t.quote

local dir = t.tmpdir()
local function script(name, body)
  t.write(dir .. "/" .. name, body)
  return q(dir .. "/" .. name)
end

local HEAD = [[
local h = require("harness").start({ script = "%s", mib = 4, reps = 2, about = "a script writer's test" }, { ... })
h:case("demand", function(r)
  local b <close> = r:map("map")
  r:pass("first", b, "%s", 1)
  r:pass("second", b, "touch", 2)
  r:check_bytes(b, 2, "second pass")
end)
]]

do -- a column typo: refused after the first repetition, at the h:columns line
  local path = script("typo.lua", HEAD:format("typo", "touch")
    .. 'h:columns { { "first", "first touch", "ns/page" }, { "frist_faults", "its faults", "faults" } }\n'
    .. "h:finish()\n")
  local t0 = require("ft").now_ns()
  local out, code = t.ftrun_run(path .. " MIB=64 REPS=20 QUIET=1 RESULTS=" .. q(dir .. "/out"))
  local s = (require("ft").now_ns() - t0) / 1e9
  t.is(code, 1, "a misspelt column fails the run")
  t.ok(s < 3, ("within 3 s at MIB=64 REPS=20 (took %.1f s)"):format(s))
  t.like(out, "ftrun: " .. dir .. "/typo.lua:8: column frist_faults names the field 'frist_faults'",
    "naming the script's h:columns line first")
  t.like(out, "after the first repetition", "and when it was found")
  t.ok(not out:find("rep 2/20", 1, true), "before the second repetition")
  t.is(t.run("ls -A " .. q(dir .. "/out") .. " 2>/dev/null"), "", "nothing written")
end

do -- with a warm-up: found after it, before any timed repetition
  local path = script("warm.lua", (HEAD:format("warm", "touch"):gsub("reps = 2,", "reps = 2, warmup = 1,"))
    .. 'h:columns { { "frist", "first touch", "ns/page" } }\nh:finish()\n')
  local out, code = t.ftrun_run(path .. " RESULTS=" .. q(dir .. "/out"))
  t.is(code, 1, "with a warm-up, a misspelt column fails the run")
  t.like(out, "after the warm-up", "found after the warm-up")
  t.ok(not out:find("rep 1/2", 1, true), "before the first timed repetition", out)
end

do -- an error inside scripts/lib/ on the script's behalf: the script's line first
  local path = script("tuoch.lua", HEAD:format("tuoch", "tuoch")
    .. 'h:columns { { "first", "first touch", "ns/page" } }\nh:finish()\n')
  local out, code = t.ftrun_run(path .. " QUIET=1 RESULTS=" .. q(dir .. "/out"))
  t.is(code, 1, "a misspelt method fails the run")
  t.like(out, "ftrun: " .. dir .. "/tuoch.lua:4: ", "the message starts with the script's line")
  t.like(out, "/scripts/lib/measure.lua:", "then the library's")
  t.like(out, "ft.buffer has no field or method 'tuoch'", "then what is wrong")
  out = t.ftrun_run("-e 'error(\"plain\")'")
  t.like(out, "ftrun: (command line):1: plain\n", "an error of the script's own is left as it is")
end

do -- h:ratio: shown under the default table
  local path = script("ratio.lua", HEAD:format("ratio", "touch")
    .. 'h:columns { { "first", "first touch", "ns/page" }, { "second", "second pass", "ns/page" } }\n'
    .. 'h:run()\nh:ratio("first_over_second", { "demand", "first" }, { "demand", "second" })\nh:finish()\n')
  local out, code = t.ftrun_run(path .. " QUIET=1 RESULTS=" .. q(dir .. "/out") .. " 2>/dev/null")
  t.is(code, 0, "a script with a ratio runs")
  t.ok(out:find("\n%- first_over_second: %*%*[%d.]+ %[[%d.]+, [%d.]+%]%*%*") ~= nil, "its ratio is in the table", out)
end

do -- a new file in scripts/: the tests it breaks say what regenerates the documents
  local root = require("ft").project_dir
  t.like(t.read(root .. "/tests/layout.lua") or "", "`make docs` regenerates README.md's layout block",
    "tests/layout.lua names make docs when a file is missing from README's layout")
  t.like(t.read(root .. "/tests/docs.lua") or "", "`make docs` regenerates the man page's SCRIPTS",
    "tests/docs.lua names make docs when a script's man entry is missing or stale")
  t.like(t.read(root .. "/doc/ft.md") or "", "A script kept in `scripts/` itself is part of the documents: run `make docs`",
    "doc/ft.md says what a script in scripts/ needs")
end

os.execute("rm -rf " .. q(dir))
t.done()
