-- Names and values from elsewhere are data (issue 45, review 2026-12-07c):
-- a results file's name never reaches gnuplot or a shell as code
-- (plot.lua, make plots: SEC-3), and fleet.lua refuses, before any host is
-- contacted, host names ssh or clush would read as options or paths and
-- knobs a shell would run (SEC-4, SEC-5, the # of CR-4). Each case checks
-- that nothing ran (no PWN file in a HOME of its own), nothing was drawn,
-- and the exit and message name the input. The fleet's side over ssh (a
-- hostile host, a REMOTE others can write) is in .ci/fleet-check.
local t = require "tap"
local q = t.quote
local shell = require "shell"

local dir = t.tmpdir()
local home = dir .. "/home"
t.run("mkdir -p " .. q(home))
local function pwned() return (t.run("ls -A " .. q(home))) end

-- the helper every name goes through
t.ok(shell.unsafe_name("cycles-A-results.json") == nil, "a name ftrun writes passes")
for _, n in ipairs { "x\"; system(\"touch PWN\"); \"", "a\nb", "`id`", "$(id)", "|cmd", "<cmd", "-x", ".hidden", "" } do
  t.ok(shell.unsafe_name(n) ~= nil, ("%q is refused"):format(n))
end
t.like(shell.unsafe_name("a\nb;c") or "", "newline ';'", "naming the characters")
local plots = require "plots"
t.errors(function() plots.file_name('x"plot') end, "the file name x\"plot holds '\"'",
  "plots.file_name refuses a name gnuplot cannot be given, naming it")
t.is(plots.file_name("cycles-A-reps.svg"), '"cycles-A-reps.svg"', "and quotes one it can")

-- one honest run to copy under hostile names
local src = dir .. "/src"
local out, code = t.ftrun_run("cycles.lua", "CYCLES=A MIB=8 REPS=2 RESULTS=" .. q(src))
t.is(code, 0, "a run to copy", out)
local json = src .. "/cycles-A-results.json"

local names = {
  "|cd;touch PWN;results.json", -- the review's: gnuplot pipes set output to sh
  "x\"\n!cd;touch PWN_nl\n#results.json", -- the review's newline form: a ! line
  "x\"; system(\"cd;touch PWN_sys\"); \"results.json", -- the issue's
  "`cd;touch PWN_bq`results.json", -- gnuplot's backquotes
  "$(cd;touch PWN_dl)results.json", -- a shell's
  "<cd;touch PWN_lt;results.json", -- gnuplot reads a data file from a pipe
  "-results.json", -- an option to gnuplot
}
for i, name in ipairs(names) do
  local d = ("%s/d%d"):format(dir, i)
  t.run(("mkdir -p %s && cp %s %s"):format(q(d), q(json), q(d .. "/" .. name)))
  out, code = t.ftrun_run("plot.lua " .. q(d), "HOME=" .. q(home))
  t.is(code, 2, ("plot.lua on %q: exit 2"):format(name), out)
  t.like(out, "this file name holds", "naming the file and what it holds")
  t.is(pwned(), "", "no command ran")
  t.is(#shell.list(d), 1, "nothing drawn beside it")
end
-- the same run under an honest name draws: the refusals are the names'
local d = dir .. "/honest"
t.run(("mkdir -p %s && cp %s %s"):format(q(d), q(json), q(d .. "/cycles-A-results.json")))
out, code = t.ftrun_run("plot.lua " .. q(d), "HOME=" .. q(home))
t.is(code, 0, "the same file under its own name draws", out)

-- fleet.lua: refused before any host is contacted (clush and ssh stand-ins
-- say so if called); nodeset reads HOSTS first, so it must be there
if t.run("command -v nodeset") == "" then
  t.skip("fleet.lua's refusals", "no nodeset (apt-get install clustershell)")
else
  local bin = dir .. "/bin"
  local marker = dir .. "/contacted"
  t.run("mkdir -p " .. q(bin))
  for _, tool in ipairs { "clush", "ssh" } do
    t.write(bin .. "/" .. tool, "#!/bin/sh\ntouch " .. q(marker) .. "\nexit 1\n")
    t.run("chmod +x " .. q(bin .. "/" .. tool))
  end
  local env = ("PATH=%s:\"$PATH\" HOME=%s"):format(q(bin), q(home))
  local run = "-- cycles.lua CYCLES=A MIB=8 REPS=2"
  for _, c in ipairs {
    { "HOSTS=" .. q("node1,-oProxyCommand=touch " .. home .. "/PWN"), "host -oProxyCommand=touch",
      "ssh and clush read a leading - as an option" }, -- SEC-4
    { "HOSTS=" .. q("node1,-oProxyCommand=true"), "host -oProxyCommand=true starts with -" }, -- no blank
    { "HOSTS=" .. q("node1,#x"), "host #x starts with #" }, -- CR-4
    { "HOSTS=" .. q("node1,../../x"), "host ../../x starts with ." }, -- outside clush's outdir
    { "HOSTS=" .. q("node1,a/b"), "host a/b holds /" }, -- UM-5
    { "HOSTS=" .. q("node1,x*"), "without the patterns * and ?" }, -- UM-5: dropped silently
    { "HOSTS=" .. q("node1,a;touch PWN"), "host a;touch PWN holds ;" },
    { "HOSTS=node1 " .. run .. " " .. q("README=$(cd;touch PWN_knob)"), "README=$(cd;touch PWN_knob): expected" },
    { "HOSTS=node1 " .. run .. " " .. q("SLOW_NS=`cd;touch PWN`"), "without `" }, -- SEC-5
    { "HOSTS=node1 " .. run .. " " .. q("README=a\\b"), "without \\" },
    { "HOSTS=node1 " .. run .. " " .. q("README=a\tb"), "without \\9" },
    { "HOSTS=node1 REMOTE=../up " .. run, "REMOTE=../up: expected" },
    { "HOSTS=node1 REMOTE=" .. q("a/../b") .. " " .. run, "without . or .. components" },
    { "HOSTS=node1 REMOTE=" .. q("$(id)") .. " " .. run, "(it holds $)" },
    { "HOSTS=node1 REMOTE=-x " .. run, "REMOTE=-x: expected" },
  } do
    local args = c[1]:find(" -- ", 1, true) and c[1] or (c[1] .. " " .. run)
    out, code = t.ftrun_run("fleet.lua " .. args, env)
    t.is(code, 2, "fleet.lua " .. args .. ": exit 2", out)
    t.like(out, c[2], "naming it")
    if c[3] then t.like(out, c[3], "and saying why") end
    t.ok(not io.open(marker), "no host contacted")
    t.is(pwned(), "", "no command ran")
  end
end

t.done()
