-- Where a run's files go and when they are written: a plain run under
-- results/runs/ from any directory, PUBLISH=1 only with the README's
-- markers, knobs as arguments, and nothing written by a run that fails, is
-- interrupted or is misconfigured.
local t = require "tap"
local runfiles = require "runfiles"
local q = t.quote

local ROOT = ft.project_dir -- the ftrun under test is the one running this file
local ROOT_IS_ROOT = io.popen("id -u"):read("l") == "0"

local read, write = t.read, t.write

local function listing(dir)
  return (t.run("ls -A " .. q(dir)))
end

local function skip(name, why)
  print(("ok - %s # SKIP %s"):format(name, why))
end

local TINY = "QUICK=1 MIB=4 REPS=1 CYCLES=A"

do -- a plain run from another directory: results/runs/<time>-<run>, latest, README untouched
  local readme = read(ROOT .. "/README.md")
  local status0 = t.run("git -C " .. q(ROOT) .. " status --porcelain 2>/dev/null")
  local out, code = t.run("cd / && " .. q(t.ftrun) .. " cycles.lua " .. TINY)
  t.is(code, 0, "a plain run from / exits 0")
  local dir = out:match("wrote (" .. ROOT:gsub("%p", "%%%0") .. "/results/runs/[^/]+)/quick%-raw%.txt")
  t.ok(dir ~= nil, "it says it wrote under the project's results/runs/", out)
  t.ok(dir and dir:match("/%d+T%d+Z%-quick$") ~= nil, "the run's directory is named by UTC time and run")
  t.ok(dir and read(dir .. "/quick-summary.md") and read(dir .. "/quick-results.json"), "raw, summary and JSON are there")
  t.ok(not out:find("page map skipped", 1, true), "CYCLES=A: no page map drawn and none said to be skipped", out)
  local link = t.run("readlink " .. q(ROOT .. "/results/runs/latest"))
  t.is(dir and link == dir:match("[^/]+$") .. "\n", true, "results/runs/latest points at it")
  t.is(read(ROOT .. "/README.md"), readme, "README.md is untouched")
  t.is(t.run("git -C " .. q(ROOT) .. " status --porcelain 2>/dev/null"), status0, "git status is what it was")
  if dir then os.execute("rm -rf " .. q(dir)) end
end

do -- knobs as arguments, and arguments that are not knobs
  local dir = t.tmpdir()
  local out, code = t.ftrun_run("cycles.lua FROB=1 RESULTS=" .. q(dir))
  t.is(code, 2, "an argument that is no knob exits 2")
  t.like(out, "argument 'FROB=1' is not one of this script's knobs", "and is named")
  t.like(out, "MIB, REPS, QUICK, THP, CYCLES", "with the script's knobs listed")
  out, code = t.ftrun_run("thp.lua banana")
  t.is(code, 2, "a bare word exits 2")
  out, code = t.ftrun_run("thp.lua", "THP=maybe")
  t.is(code, 2, "THP in the environment for thp.lua, which does not take it, exits 2")
  t.like(out, "thp.lua does not take THP (cycles.lua does)", "and names the script that does")
  out, code = t.ftrun_run("coldness.lua MIB=4", "CYCLES=A")
  t.is(code, 2, "CYCLES for coldness.lua exits 2")
  t.is(listing(dir), "", "nothing written")
  -- every knob only some scripts take is in each such script's --help, and in no other's
  for name, scripts in pairs(require("knobs").elsewhere) do
    for _, s in ipairs(scripts) do
      t.like(t.ftrun_run(s .. " --help"), "  " .. name .. " ", s .. " --help lists " .. name)
    end
  end
  os.execute("rm -rf " .. q(dir))
end

do -- RESULTS that cannot be used stops the run before anything is mapped
  local dir = t.tmpdir()
  write(dir .. "/afile", "x")
  local out, code = t.ftrun_run("cycles.lua " .. TINY .. " RESULTS=" .. q(dir .. "/afile"))
  t.is(code, 2, "RESULTS that is a file exits 2")
  t.like(out, "RESULTS=" .. dir .. "/afile: cannot make the directory", "and says why")
  t.ok(not out:find("warm-up", 1, true), "before the first repetition")
  out, code = t.ftrun_run("cycles.lua " .. TINY .. " RESULTS=" .. q(dir .. "/new/deeper"))
  t.is(code, 0, "a missing RESULTS directory is made")
  t.ok(read(dir .. "/new/deeper/quick-raw.txt") ~= nil, "and written into")
  if ROOT_IS_ROOT and os.execute("mkdir -p " .. q(dir .. "/ro") .. " && mount -t tmpfs -o ro,size=64k tmpfs " .. q(dir .. "/ro")) then
    out, code = t.ftrun_run("cycles.lua " .. TINY .. " RESULTS=" .. q(dir .. "/ro"))
    t.is(code, 2, "a read-only RESULTS exits 2")
    t.like(out, "cannot write there: ", "and says so")
    t.ok(not out:find("warm-up", 1, true), "before the first repetition")
    os.execute("umount " .. q(dir .. "/ro"))
  else
    skip("a read-only RESULTS exits 2", "needs root to mount a read-only tmpfs")
  end
  os.execute("rm -rf " .. q(dir))
end

do -- PUBLISH=1 needs the README's markers, before the run
  local dir = t.tmpdir()
  write(dir .. "/README.md", "# no markers here\n")
  local out, code = t.ftrun_run("cycles.lua MIB=4 REPS=1 CYCLES=A PUBLISH=1 RESULTS=" .. q(dir)
    .. " README=" .. q(dir .. "/README.md"))
  t.is(code, 2, "PUBLISH=1 with a README without markers exits 2")
  t.like(out, "has no markers for this run (<!-- ftrun results cycles-A: begin -->", "and names the markers")
  t.ok(not out:find("warm-up", 1, true), "before the first repetition")
  t.is(listing(dir), "README.md\n", "nothing written")
  os.execute("rm -rf " .. q(dir))
end

do -- a full disk: exit 1, no file written, no temporary left
  local dir = t.tmpdir()
  if ROOT_IS_ROOT and os.execute("mount -t tmpfs -o size=8k tmpfs " .. q(dir)) then
    local out, code = t.ftrun_run("cycles.lua " .. TINY .. " RESULTS=" .. q(dir))
    t.is(code, 1, "a run whose files do not fit exits 1")
    t.like(out, "results not written: ", "and says the results were not written")
    t.like(out, "No space left on device", "with the system's reason")
    t.is(listing(dir), "", "no file and no temporary left")
    os.execute("umount " .. q(dir))
  else
    skip("a run whose files do not fit exits 1", "needs root to mount a small tmpfs")
  end
  os.execute("rm -rf " .. q(dir))
end

do -- an interrupt while each file of a published set is being written
  for k = 1, 4 do
    local dir = t.tmpdir()
    local readme = "x\n" .. table.concat({ runfiles.markers("cycles-A") }, "\nold\n") .. "\n"
    write(dir .. "/README.md", readme)
    -- SIGINT once the k-th temporary is there, inside its 2 s pause
    local out = t.signal_when(("FTRUN_TEST_WRITE_PAUSE=2 PUBLISH=1 %s cycles.lua MIB=4 REPS=1 CYCLES=A RESULTS=%s "
      .. "README=%s >/dev/null 2>&1"):format(q(t.ftrun), q(dir), q(dir .. "/README.md")),
      ("[ \"$(find %s -name '*.tmp' | wc -l)\" -ge %d ]"):format(q(dir), k), "INT")
    t.like(out, "exit 130", ("interrupted while writing file %d of 4: exit 130"):format(k))
    t.is(listing(dir), "README.md\n", ("file %d of 4: nothing written, no temporary left"):format(k))
    t.is(read(dir .. "/README.md"), readme, ("file %d of 4: README unchanged"):format(k))
    os.execute("rm -rf " .. q(dir))
  end
end

do -- D2: SIGINT during the clock estimate is an interrupt (130), not a knob error (2)
  local out = t.run(("%s -e %s & P=$!; sleep 1; kill -INT $P; wait $P; echo \"exit $?\""):format(q(t.ftrun),
    q('package.path = "' .. ROOT .. '/scripts/lib/?.lua;" .. package.path '
      .. 'local k = require "knobs" while true do k.clock_ghz("x.lua") end')))
  t.like(out, "exit 130", "SIGINT during knobs.clock_ghz exits 130 (D2)")
end

do -- D5, D14: runs in the same second get directories of their own; an interrupted run leaves none
  local runs = ROOT .. "/results/runs"
  local before = listing(runs)
  local out = t.run(("cd / && { %s cycles.lua %s & %s cycles.lua %s; wait; }"):format(q(t.ftrun), TINY, q(t.ftrun), TINY))
  local dirs = {}
  for d in out:gmatch("wrote " .. runs:gsub("%p", "%%%0") .. "/([^/]+)/quick%-raw%.txt") do dirs[#dirs + 1] = d end
  t.is(#dirs, 2, "two runs at once both say they wrote", out)
  t.ok(dirs[1] and dirs[1] ~= dirs[2], "into two directories (D5)", out)
  for _, d in ipairs(dirs) do
    t.ok(read(runs .. "/" .. d .. "/quick-results.json") ~= nil, d .. ": its files are there")
    os.execute("rm -rf " .. q(runs .. "/" .. d))
  end
  local link = t.run("readlink " .. q(runs .. "/latest-cycles"))
  t.ok(dirs[2] and (link == dirs[1] .. "\n" or link == dirs[2] .. "\n"), "results/runs/latest-cycles names one of them")
  before = listing(runs)
  out = t.run(("%s cycles.lua QUICK=1 & P=$!; sleep 0.6; kill -INT $P; wait $P; echo \"exit $?\""):format(q(t.ftrun)))
  t.like(out, "exit 130", "a plain run interrupted exits 130")
  t.is(listing(runs), before, "and leaves no directory under results/runs (D14)", out)
  for _, sig in ipairs { "INT", "TERM" } do -- and so does one stopped while its files are written
    out = t.signal_when(("FTRUN_TEST_WRITE_PAUSE=3 %s cycles.lua %s >/dev/null 2>&1"):format(q(t.ftrun), TINY),
      ("ls -A %s/*/ 2>/dev/null | grep -q 'tmp$'"):format(q(runs)), sig)
    t.like(out, sig == "INT" and "exit 130" or "exit 143", "a plain run stopped by SIG" .. sig .. " while it writes")
    t.is(listing(runs), before, "leaves no directory under results/runs either", out)
  end
end

do -- D11: a target that cannot be replaced is found before the first rename
  local dir = t.tmpdir()
  local out, code = t.ftrun_run("cycles.lua " .. TINY .. " RESULTS=" .. q(dir))
  t.is(code, 0, "a first run writes its set", out)
  local raw = read(dir .. "/quick-raw.txt")
  os.remove(dir .. "/quick-results.json")
  os.execute("mkdir -p " .. q(dir .. "/quick-results.json/x"))
  out, code = t.ftrun_run("cycles.lua " .. TINY .. " SLOW_NS=201 RESULTS=" .. q(dir))
  t.is(code, 1, "a run whose JSON target is a directory exits 1")
  t.like(out, "results not written: writing " .. dir .. "/quick-results.json failed: Is a directory", "naming it")
  t.is(read(dir .. "/quick-raw.txt"), raw, "raw.txt was not replaced: no file was renamed (D11)")
  t.is(t.run("ls -A " .. q(dir) .. " | grep -c tmp"), "0\n", "no temporary left")
  os.execute("rm -rf " .. q(dir))
end

do -- D12: SIGTERM while the files are written leaves no temporary, in RESULTS or beside README
  local dir, tmp = t.tmpdir(), t.tmpdir()
  local readme = "x\n" .. table.concat({ runfiles.markers("cycles-A") }, "\nold\n") .. "\n"
  write(dir .. "/README.md", readme)
  local out = t.signal_when(("TMPDIR=%s FTRUN_TEST_WRITE_PAUSE=1 PUBLISH=1 %s cycles.lua MIB=4 REPS=1 CYCLES=A "
    .. "RESULTS=%s README=%s >/dev/null 2>&1"):format(q(tmp), q(t.ftrun), q(dir), q(dir .. "/README.md")),
    ("[ -n \"$(find %s -name '*.tmp')\" ]"):format(q(dir)), "TERM")
  t.like(out, "exit 143", "SIGTERM while writing exits 143")
  t.is(listing(dir), "README.md\n", "no temporary and no file left (D12)")
  t.is(read(dir .. "/README.md"), readme, "README unchanged")
  t.is(listing(tmp), "", "no plot temporaries left in TMPDIR")
  os.execute("rm -rf " .. q(dir) .. " " .. q(tmp))
end

do -- SIGTERM between two renames lands after the last: the set on disk is whole, never mixed
  local dir = t.tmpdir()
  local _, code = t.ftrun_run("cycles.lua " .. TINY .. " RESULTS=" .. q(dir))
  local whole = listing(dir)
  t.is(code, 0, "a first run writes the whole set", whole)
  os.execute("rm -f " .. q(dir) .. "/*")
  local out = t.signal_when(("FTRUN_TEST_RENAME_PAUSE=2 %s cycles.lua %s RESULTS=%s >/dev/null 2>&1")
    :format(q(t.ftrun), TINY, q(dir)), ("[ -n \"$(ls %s)\" ]"):format(q(dir)), "TERM")
  t.like(out, "exit 143", "SIGTERM after the first rename exits 143")
  t.is(listing(dir), whole, "once every file is renamed: the same set as the run before, no temporary", out)
  os.execute("rm -rf " .. q(dir))
end

do -- D3, D4: SIGINT while gnuplot draws a published run's plots: 130, the old set stays whole
  local dir, tmp = t.tmpdir(), t.tmpdir()
  local readme = "x\n" .. table.concat({ runfiles.markers("main") }, "\nold\n") .. "\n"
  write(dir .. "/README.md", readme)
  local run = ("TMPDIR=%s PUBLISH=1 %s cycles.lua MIB=8 REPS=1 RESULTS=%s README=%s"):format(q(tmp),
    q(t.ftrun), q(dir), q(dir .. "/README.md"))
  local out, code = t.run(run .. " SLOW_NS=201")
  t.is(code, 0, "a first published run", out)
  local old = {}
  for name in listing(dir):gmatch("[^\n]+") do old[name] = read(dir .. "/" .. name) end
  do -- a gnuplot that says when it starts and takes its time, so the SIGINT lands while it runs
    local bin = tmp .. "/bin"
    os.execute("mkdir -p " .. q(bin))
    write(bin .. "/gnuplot", ("#!/bin/sh\ntouch %s\nsleep 1\nexec %s \"$@\"\n")
      :format(q(bin .. "/started"), q((t.run("command -v gnuplot"):gsub("\n", "")))))
    os.execute("chmod +x " .. q(bin .. "/gnuplot"))
    out = t.signal_when(("PATH=%s:$PATH %s SLOW_NS=202 >/dev/null 2>&1"):format(q(bin), run),
      "[ -e " .. q(bin .. "/started") .. " ]", "INT")
    os.execute("rm -rf " .. q(bin))
    t.like(out, "exit 130", "SIGINT while gnuplot runs exits 130 (D3)")
    local same = true
    for name in listing(dir):gmatch("[^\n]+") do
      if read(dir .. "/" .. name) ~= old[name] then same = false; t.diag(name .. " changed") end
    end
    t.ok(same, "every published file, plots and README included, is the first run's (D4)")
    t.is(listing(tmp), "", "no plot temporaries left")
  end
  os.execute("rm -rf " .. q(dir) .. " " .. q(tmp))
end

do -- D-race: two publishing runs against one README, a wide write window: both blocks pasted
  local dir = t.tmpdir()
  local readme = "x\n" .. table.concat({ runfiles.markers("cycles-A") }, "\nold A\n") .. "\n"
    .. table.concat({ runfiles.markers("exp-populate") }, "\nold P\n") .. "\n"
  write(dir .. "/README.md", readme)
  local common = ("FTRUN_TEST_WRITE_PAUSE=0.3 PUBLISH=1 RESULTS=%s README=%s"):format(q(dir), q(dir .. "/README.md"))
  local out = t.run(("env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s %s %s cycles.lua MIB=4 REPS=1 CYCLES=A & "
    .. "env -u FTRUN_SETTINGS_LOCK_FD FTRUN_LOCK_DIR=%s %s %s populate.lua MIB=4 REPS=1; wait")
    :format(q(dir .. "/lock"), common, q(t.ftrun), q(dir .. "/lock"), common, q(t.ftrun)))
  local text = read(dir .. "/README.md") or ""
  t.ok(not text:find("old A", 1, true) and not text:find("old P", 1, true),
    "both publishing runs' blocks are in the README (D-race)", out .. "\n" .. text)
  os.execute("rm -rf " .. q(dir))
end

do -- a column naming a field no case records: an error naming it and what is recorded, nothing written
  local dir = t.tmpdir()
  local script = dir .. "/misspelt.lua"
  write(script, [[
local h = require("harness").start({ script = "misspelt", mib = 4, reps = 1, about = "a column misspelt" }, { ... })
h:case("fresh", function(r)
  local b <close> = r:map()
  r:pass("first", b, "touch", 1)
  r:check_bytes(b, 1, "first pass")
end)
h:columns { { "first", "first touch", "ns/page" }, { "frist_faults", "its faults", "faults" } }
h:finish()
]])
  os.execute("mkdir -p " .. q(dir .. "/out"))
  local out, code = t.ftrun_run(q(script) .. " RESULTS=" .. q(dir .. "/out"))
  t.is(code, 1, "a column whose field no case records fails the run")
  t.like(out, "column frist_faults names the field 'frist_faults', which no case records (they record: first, "
    .. "first_faults", "naming the column and what the cases record")
  t.is(listing(dir .. "/out"), "", "nothing written")
  os.execute("rm -rf " .. q(dir))
end

do -- a misspelt name in h:ratio, or an unknown key in a column: an error at the script's line, nothing written
  local dir = t.tmpdir()
  local body = [[
local h = require("harness").start({ script = "misnamed", mib = 4, reps = 1, about = "a name misspelt" }, { ... })
h:case("fresh", function(r)
  local b <close> = r:map()
  r:pass("first", b, "touch", 1)
  r:pass("second", b, "touch", 1)
  r:check_bytes(b, 1, "second pass")
end)
]]
  local cases = {
    { "h:columns { { \"first\", \"first\", \"ns/page\" }, { \"second\", \"second\", \"ns/page\", form = \"second\" } }",
      "misnamed.lua:8: column second: unknown key 'form'" },
    { "h:columns { { \"first\", \"first\", \"ns/page\" }, { \"second\", \"second\", \"ns/page\" } }\nh:run()\n"
      .. "h:ratio(\"r\", { \"fresh\", \"first\" }, { \"fresh\", \"secnod\" })",
      "misnamed.lua:10: h:ratio r: no column is named 'secnod'" },
    { "h:columns { { \"first\", \"first\", \"ns/page\" } }\nh:run()\n"
      .. "h:ratio(\"r\", { \"fresh\", \"first\", \"extra\" }, { \"fresh\", \"first\" })",
      "misnamed.lua:10: h:ratio r: expected {case, column}, two names and nothing else" },
    { "h:columns { { \"first\", \"first\", \"ns/page\" } }\nh:run()\n"
      .. "h:ratio(\"r\", { \"fresh\", \"first\" }, { \"fresh\", \"first\" }, { tme = true })",
      "misnamed.lua:10: h:ratio r: unknown option 'tme' (time, minima)" },
    { "h:columns { { \"first\", \"first\", \"ns/page\" } }\nh:run()\n"
      .. "h:ratio(\"r\", { \"fersh\", \"first\" }, { \"fresh\", \"first\" })",
      "misnamed.lua: h:ratio r: no case named 'fersh' ran (skipped by a knob, or misspelt), so no ratio", 0 },
    { "h:columns { { \"first\", \"first\", \"ns/page\" } }\nh:ratio(\"r\", { \"fresh\", \"first\" }, "
      .. "{ \"fresh\", \"first\" })\nh:run()",
      "misnamed.lua:9: h:ratio r: called before h:run(); call h:run() first" },
  }
  for i, c in ipairs(cases) do
    local script = dir .. "/misnamed.lua"
    write(script, body .. c[1] .. "\nh:finish()\n")
    local out_dir = dir .. "/out" .. i
    os.execute("mkdir -p " .. q(out_dir))
    local out, code = t.ftrun_run(q(script) .. " RESULTS=" .. q(out_dir))
    t.is(code, c[3] or 1, c[2] .. ": exit " .. (c[3] or 1), out)
    t.like(out, c[2], "named", out)
    if not c[3] then t.is(listing(out_dir), "", "nothing written") end
  end
  os.execute("rm -rf " .. q(dir))
end

do -- a check's warning (a default the user did not give that the machine makes doubtful): said, noted, run
  local dir = t.tmpdir()
  local script = dir .. "/warned.lua"
  write(script, [[
local h = require("harness").start({ script = "warned", mib = 4, reps = 1, about = "a default warned of",
  knobs = { { name = "LIMIT", kind = "count", default = 5, desc = "a limit" } },
  check = function(cfg)
    if cfg.LIMIT < 10 then
      local why = ("LIMIT=%d: expected at least 10"):format(cfg.LIMIT)
      if cfg.given.LIMIT then return why end
      return nil, why .. " (the default, kept)"
    end
  end }, { ... })
h:case("fresh", function(r)
  local b <close> = r:map()
  r:pass("first", b, "touch", 1)
  r:check_bytes(b, 1, "first pass")
end)
h:columns { { "first", "first touch", "ns/page" } }
h:finish()
]])
  local out, code = t.ftrun_run(q(script) .. " RESULTS=" .. q(dir .. "/out"))
  t.is(code, 0, "a default a check warns of does not stop the run", out)
  t.like(out, "warned.lua: warning: LIMIT=5: expected at least 10 (the default, kept)", "the warning is said")
  t.like(t.read(dir .. "/out/exp-warned-summary.md") or "", "LIMIT=5: expected at least 10 (the default, kept)",
    "and noted under the table")
  out, code = t.ftrun_run(q(script) .. " LIMIT=5 RESULTS=" .. q(dir .. "/given"))
  t.is(code, 2, "the same value given is refused: exit 2", out)
  t.like(out, "warned.lua: LIMIT=5: expected at least 10", "naming it")
  os.execute("rm -rf " .. q(dir))
end

do -- D1: an SVG cut short (its disk full) fails the run before anything is published
  local dir, tmp = t.tmpdir(), t.tmpdir()
  if ROOT_IS_ROOT and os.execute("mount -t tmpfs -o size=64k tmpfs " .. q(tmp)) then
    local readme = "x\n" .. table.concat({ runfiles.markers("main") }, "\nold\n") .. "\n"
    write(dir .. "/README.md", readme)
    local out, code = t.run(("TMPDIR=%s PUBLISH=1 %s cycles.lua MIB=16 REPS=1 RESULTS=%s README=%s"):format(q(tmp),
      q(t.ftrun), q(dir), q(dir .. "/README.md")))
    t.is(code, 1, "a plot that cannot be drawn whole exits 1 (D1)", out)
    t.like(out, "gnuplot failed on ", "naming the plot")
    t.is(listing(dir), "README.md\n", "nothing published")
    t.is(read(dir .. "/README.md"), readme, "README unchanged")
    t.is(listing(tmp), "", "no plot temporaries left")
    os.execute("umount " .. q(tmp))
  else
    skip("an SVG cut short fails the run (D1)", "needs root to mount a small tmpfs")
  end
  os.execute("rm -rf " .. q(dir) .. " " .. q(tmp))
end

-- A checksum made wrong on purpose, in every script: exit 1, the mismatch
-- named, no results, README unchanged.
local HOOK = [[
local methods = select(2, debug.getupvalue(debug.getregistry()["ft.buffer"].__index, 1))
local real = methods.sum_bytes
methods.sum_bytes = function(b) return real(b) + 1 end]]
for _, name in ipairs { "thp", "populate", "zeropage", "placement", "scaling", "recycle", "coldness" } do
  local dir = t.tmpdir()
  local readme = table.concat({ runfiles.markers("exp-" .. name) }, "\nold\n") .. "\n"
  write(dir .. "/README.md", readme)
  local extra = name == "coldness" and " WAITS=0" or ""
  local out, code = t.ftrun_run(("-e %s %s/scripts/%s.lua MIB=4 REPS=1 PUBLISH=1 RESULTS=%s README=%s%s"):format(
    q(HOOK), q(ROOT), name, q(dir), q(dir .. "/README.md"), extra))
  t.is(code, 1, name .. ".lua: a checksum mismatch exits 1")
  t.like(out, "checksum mismatch in ", name .. ".lua: the mismatch is named")
  t.is(listing(dir), "README.md\n", name .. ".lua: no results written")
  t.is(read(dir .. "/README.md"), readme, name .. ".lua: README unchanged")
  os.execute("rm -rf " .. q(dir))
end

do -- populate.lua: only an advice the kernel does not know becomes "not supported"
  local function refusing(errno)
    return ([[
local methods = select(2, debug.getupvalue(debug.getregistry()["ft.buffer"].__index, 1))
methods.madvise = function() return nil, "madvise(populate_write) failed: refused on purpose", %d end]]):format(errno)
  end
  local dir = t.tmpdir()
  local out, code = t.ftrun_run(("-e %s %s/scripts/populate.lua MIB=4 REPS=1 RESULTS=%s"):format(
    q(refusing(22)), q(ROOT), q(dir)))
  t.is(code, 0, "populate.lua: EINVAL from madvise is a row, not a failure")
  t.like(out, "| madvise(MADV_POPULATE_WRITE) | not supported: madvise(populate_write) failed: refused on purpose (EINVAL) |",
    "and says so in its table")
  out, code = t.ftrun_run(("-e %s %s/scripts/populate.lua MIB=4 REPS=1 RESULTS=%s"):format(
    q(refusing(12)), q(ROOT), q(dir .. "/b")))
  t.is(code, 1, "populate.lua: ENOMEM from madvise fails the run")
  t.is(read(dir .. "/b/exp-populate-results.json"), nil, "and writes no results")
  os.execute("rm -rf " .. q(dir))
end

t.done()
