-- Machines as a level (scripts/lib/machines.lua): fingerprints and what
-- pools, the spread between machines, the outliers and the test of a
-- machine effect, on values made up so the answer is known.
local t = require "tap"
local machines = require "machines"

local function doc(hv, host, cpuid)
  return { machine = { hypervisor = hv, cpuid_hypervisor = cpuid, kernel = "6.1", cpu = "EPYC",
    thp_enabled = "madvise" }, provenance = { hostname = host } }
end

-- fingerprints
t.ok(machines.conflict(machines.fingerprint(doc("KVM", "a")), machines.fingerprint(doc("KVM", "a"))) == nil,
  "one machine: no conflict")
t.is(table.concat(machines.conflict(machines.fingerprint(doc("KVM", "a")), machines.fingerprint(doc("PVM", "b"))),
  ","), "host,hypervisor", "KVM on a against PVM on b: host and hypervisor differ")
t.ok(machines.conflict(machines.fingerprint(doc("KVM", "a")), machines.fingerprint(doc("KVM", nil))) == nil,
  "a hostname not recorded matches any")
t.ok(machines.conflict(machines.fingerprint(doc("bhyve bhyve", "a")),
  machines.fingerprint(doc("PVM", "a", "bhyve bhyve"))) == nil,
  "a run with CPUID's string as its hypervisor matches a later run's CPUID string")
local groups = machines.group { doc("KVM", "a"), doc("PVM", "b"), doc("KVM", "a") }
t.is(#groups, 2, "three runs on two machines: two groups")
t.is(#groups[1].docs, 2, "the first machine's two runs together")
local why = machines.check_side({ doc("KVM", "a"), doc("PVM", "b") }, "old")
t.like(why or "", "they differ in host, hypervisor", "a side on two machines is refused, saying why")
t.ok(machines.check_side({ doc("KVM", "a"), doc("PVM", "b") }, "old", true) == nil, "unless pooled")
-- SW-5: a run stripped of machine and provenance matches anything, so it is refused on a side of several
local stripped = { path = "stripped.json" }
why = machines.check_side({ doc("KVM", "a"), stripped }, "new")
t.like(why or "", "new side: stripped.json records no machine", "a run with no fingerprint is not pooled (SW-5)")
t.ok(machines.check_side({ doc("KVM", "a"), stripped }, "new", true) == nil, "unless pooled")
t.ok(machines.check_side({ stripped }, "new") == nil, "alone on its side it pools with nothing")

-- one host, two kernels: two machines, never paired as one
local function on(kernel, hv)
  local d = doc(hv or "KVM", "a")
  d.machine.kernel = kernel
  return d
end
local kind, lines = machines.relation({ on("6.1"), on("6.1") }, { on("6.9"), on("6.9") })
t.is(kind, "differ", "one host booted into two kernels: the machines differ")
t.like(lines[1] or "", "they differ in kernel", "saying in what", table.concat(lines, "\n"))
kind, lines = machines.relation({ on("6.1"), on("6.9") }, { on("6.1"), on("6.9"), on("6.9") })
t.is(kind, "same", "both kernels on both sides: the same machines")
t.like(table.concat(lines, "\n"), "a (kernel 6.9): 1 old run(s), 2 new run(s)", "each machine's runs counted apart",
  table.concat(lines, "\n"))
t.is(#machines.group { on("6.1", "unknown"), on("6.1", "KVM"), on("6.1") }, 1,
  "a hypervisor recorded as unknown (no CAP_SYSLOG) matches any")

-- fleet.lua checks host names, the script's knobs and REMOTE here, before
-- any host is contacted (clush and ssh stand-ins record a contact): a host
-- name ssh or clush would read as an option or a path, a knob a shell
-- would run (SEC-4, SEC-5 and CR-4 of review reliability-2026-12-07c), and
-- no command runs (no file in a HOME of the test's own)
do
  local dir = t.tmpdir()
  local marker = dir .. "/contacted"
  local home = dir .. "/home"
  os.execute("mkdir -p " .. t.quote(home))
  for _, tool in ipairs { "clush", "ssh" } do
    t.write(dir .. "/" .. tool, "#!/bin/sh\ntouch " .. t.quote(marker) .. "\nexit 1\n")
    os.execute("chmod +x " .. t.quote(dir .. "/" .. tool))
  end
  local q = t.quote
  local env = ("PATH=%s:\"$PATH\" HOME=%s"):format(q(dir), q(home))
  local run = "-- cycles.lua CYCLES=A MIB=8 REPS=2"
  os.execute("mkdir -p " .. t.quote(dir .. "/victim") .. " " .. t.quote(dir .. "/earlier"))
  os.execute("ln -s " .. t.quote(dir .. "/victim") .. " " .. t.quote(dir .. "/earlier/node2"))
  os.execute("mkdir -p " .. t.quote(dir .. "/open") .. " && chmod 777 " .. t.quote(dir .. "/open"))
  for _, c in ipairs {
    { "HOSTS=node1 -- cycles.lua MIB=abc", "MIB=abc: expected a positive integer" },
    { "HOSTS=node1 -- cycles.lua NOPE=1", "argument 'NOPE=1' is not one of this script's knobs" },
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
    { "HOSTS=node1 REMOTE=../up " .. run, "REMOTE=../up: expected a directory for the fleet alone" },
    { "HOSTS=node1 REMOTE=" .. q("a/../b") .. " " .. run, "without . or .. components" },
    { "HOSTS=node1 REMOTE=" .. q("$(id)") .. " " .. run, "(it holds $)" },
    { "HOSTS=node1 REMOTE=-x " .. run, "REMOTE=-x: expected" },
    -- a Cyrillic o, a right-to-left override: the byte at fault said as a number
    { "HOSTS=" .. q("n\xd0\xbede1"), "holds the byte \\208, outside ASCII" },
    { "HOSTS=" .. q("node\xe2\x80\xae1"), "holds the byte \\226, outside ASCII" },
    -- one machine twice (DNS ignores case and a final dot): its runs would overlap
    { "HOSTS=" .. q("node1,Node1"), "Node1 and node1 name one machine" },
    { "HOSTS=" .. q("node1,node1."), "node1 and node1. name one machine" },
    -- the name of a file the fleet writes beside the hosts' folders
    { "HOSTS=fleet-summary.md", "the name of the fleet's summary" },
    -- names the gather's file names (the host's plus 40 characters) cannot carry
    { "HOSTS=" .. ("a"):rep(64), "a part of 64 characters between dots, above DNS's 63" },
    { "HOSTS=" .. (("b"):rep(60) .. "."):rep(4) .. "b", "is 245 characters long, above the 200" },
    -- a RESULTS that holds a host's folder: an earlier fleet's runs would be
    -- judged as this one's, a link made by another user followed
    { "HOSTS=node1,node2 RESULTS=" .. q(dir .. "/earlier"), "already holds node2 (an earlier fleet's runs?)" },
    -- a RESULTS in a folder others may rename in: run.sh or the build could be swapped
    { "HOSTS=node1 RESULTS=" .. q(dir .. "/open/r"), "/open is writable by others (mode 777, group " },
  } do
    local args = c[1]:find(" -- ", 1, true) and c[1] or (c[1] .. " " .. run)
    local out, code = t.ftrun_run("fleet.lua " .. args, env)
    t.is(code, 2, "fleet.lua " .. args .. ": exit 2", out)
    t.like(out, c[2], "naming it")
    if c[3] then t.like(out, c[3], "and saying why") end
    t.ok(not io.open(marker), "and no host contacted")
    t.is(t.run("ls -A " .. q(home)), "", "no command ran")
  end
  t.is(t.run("ls -A " .. q(dir .. "/victim")), "", "nothing written through a host's folder made beforehand")

  -- a folder the user's own group may write (umask 002, a group per user)
  -- is the user's; another group's is not (made only where chgrp can)
  os.execute("mkdir -p " .. q(dir .. "/ours") .. " && chmod 775 " .. q(dir .. "/ours"))
  local said = t.ftrun_run("fleet.lua HOSTS=node1 RESULTS=" .. q(dir .. "/ours/r") .. " " .. run, env)
  t.ok(not said:find("writable by others", 1, true), "RESULTS in a folder of the user's group, mode 775: taken",
    said)
  os.execute("mkdir -p " .. q(dir .. "/theirs") .. " && chmod 775 " .. q(dir .. "/theirs"))
  if os.execute("chgrp 65534 " .. q(dir .. "/theirs") .. " 2>/dev/null") then
    said = t.ftrun_run("fleet.lua HOSTS=node1 RESULTS=" .. q(dir .. "/theirs/r") .. " " .. run, env)
    t.like(said, "/theirs is writable by others (mode 775, group 65534)", "in another group's, refused")
  else
    t.skip("RESULTS in another group's folder", "chgrp 65534 is not allowed here")
  end

  -- a 100 000-byte knob value (README, a path) is one short line on the terminal
  said = t.ftrun_run("fleet.lua HOSTS=node1 RESULTS=" .. q(dir .. "/long") .. " " .. run .. " README="
    .. ("x"):rep(100000), env)
  local line = said:match("fleet: 1 host%(s%)[^\n]*") or ""
  t.ok(#line > 0 and #line < 1000, "a long knob: the fleet's first line short", #line .. " bytes")

  -- a RESULTS where another user made .clush, the name the fleet's work
  -- folder (and run.sh, which runs) once had: a folder of the fleet's own
  -- is made beside it, nothing is written into theirs (the stand-in clush
  -- answers for no host, so the fleet ends there)
  local shared = dir .. "/shared"
  os.execute("mkdir -p " .. q(shared) .. " && ln -s " .. q(dir .. "/victim") .. " " .. q(shared .. "/.clush"))
  local out, code = t.ftrun_run("fleet.lua HOSTS=node1 RESULTS=" .. q(shared) .. " INSTALL=never " .. run, env)
  t.is(code, 1, "a RESULTS holding another's .clush link: the fleet runs, its host unreachable", out)
  t.is(t.run("ls -A " .. q(dir .. "/victim")), "", "and nothing is written through the link")
  t.is((t.run("ls -A " .. q(shared)):gsub("%s+$", "")), ".clush\nfleet-summary.md", "nor any work folder left in RESULTS")
  os.execute("rm -rf " .. t.quote(dir))
end

-- the fleet summary's tables from what hosts and their JSON say: a | or a
-- newline in a host's error, a folder's name or a CPU's would split a cell
-- or end the table
do
  local summary = require("reports").of("fleet.lua").summary
  local run_doc = { script = "cycles.lua", verdict = "CHECKSUMS OK", machine = { cpu = "EPYC | evil\nrow", kernel = "6.1" },
    rows = { { case = "A|B", column = "pass1\nx", unit = "ns/page", values = { 10, 11, 12 } } } }
  local text = summary({
    { name = "n|1", status = { state = "failed", why = "run 1 exited 2: a | b\nc" }, docs = { run_doc } },
    { name = "n2", status = { state = "ok" }, docs = { run_doc } } },
    { script = "cycles.lua", knobs = {}, runs = 1, hosts = "n|1,n2", alpha = 0.05, outlier_pct = 10, dir = "/r" })
  local bad, bars = {}, nil -- bars: the | a line of the table being read has, from its header
  for line in text:gmatch("[^\n]+") do
    if line:match("^|") then
      bars = line:match("^| host ") and 5 or line:match("^| case ") and 10 or bars
      if select(2, line:gsub("\\|", ""):gsub("|", "")) ~= bars then bad[#bad + 1] = line end
    elseif bars and not line:match("^[A-Z#]") then
      bad[#bad + 1] = line -- a table's line cut by a newline
    end
  end
  t.like(text, "| case |", "the test reaches the rows' table too", text)
  t.is(#bad, 0, "a | or newline from a host or its JSON stays inside its cell", table.concat(bad, "\n") .. "\n" .. text)
  t.like(text, "run 1 exited 2: a \\| b\\nc", "shown escaped")
end

-- A whole fleet through a clush stand-in that runs each host's commands
-- here, in a HOME of its own (and ftrun on its PATH): a folder another
-- user puts at RESULTS/<host> while the hosts run (the stand-in makes it,
-- a link, as it gathers) is not judged as the host's runs, nor is
-- anything in it touched
do
  local dir = t.tmpdir()
  local q = t.quote
  os.execute("mkdir -p " .. q(dir .. "/bin") .. " " .. q(dir .. "/hosts") .. " " .. q(dir .. "/theirs/run-1"))
  os.execute("ln -s " .. q(t.ftrun) .. " " .. q(dir .. "/bin/ftrun"))
  t.write(dir .. "/bin/clush", [[#!/bin/sh
nodes= out= err= rcopy= dest= cmd=
while [ $# -gt 0 ]; do
  case $1 in
    -w) nodes=$2; shift 2 ;;
    --outdir=*) out=${1#--outdir=}; shift ;;
    --errdir=*) err=${1#--errdir=}; shift ;;
    --rcopy) rcopy=$2; shift 2 ;;
    --dest) dest=$2; shift 2 ;;
    *) cmd=$1; shift ;;
  esac
done
for h in $(nodeset -e -S ' ' -- "$nodes"); do
  home=$FLEET_HOSTS/$h; mkdir -p "$home"
  if [ -n "$rcopy" ]; then
    [ -z "$FLEET_PLANT" ] || ln -s "$FLEET_PLANT" "$FLEET_RESULTS/$h"
    case $rcopy in /*) ;; *) rcopy=$home/$rcopy ;; esac
    cp -r "$rcopy" "$dest/${rcopy##*/}.$h"
  else
    (cd "$home" && HOME=$home sh -c "$cmd") >"${out:-/dev/stdout}${out:+/$h}" 2>"${err:-/dev/stderr}${err:+/$h}"
  fi
done
]])
  os.execute("chmod +x " .. q(dir .. "/bin/clush"))
  -- what they planted looks like a clean run of the host's
  t.write(dir .. "/theirs/run-1.rc", "0\n")
  t.write(dir .. "/theirs/pid", "1\n")
  t.write(dir .. "/theirs/run-1/cycles-A-results.json", '{"script": "cycles.lua", "rows": []}')
  local results = dir .. "/results"
  local env = ("PATH=%s:\"$PATH\" FLEET_HOSTS=%s FLEET_PLANT=%s FLEET_RESULTS=%s"):format(q(dir .. "/bin"),
    q(dir .. "/hosts"), q(dir .. "/theirs"), q(results))
  local out, code = t.ftrun_run("fleet.lua HOSTS=node1 INSTALL=never RESULTS=" .. q(results)
    .. " -- cycles.lua CYCLES=A MIB=8 REPS=2", env)
  t.is(code, 1, "a host's folder made by another during the fleet: the fleet fails", out)
  t.like(out, "node1: failed: its runs were not kept: " .. results .. "/node1 was made by someone else",
    "naming the folder")
  t.ok(io.open(dir .. "/theirs/pid") ~= nil, "and removes nothing in it")

  -- a host whose ftrun (REMOTE/bin/ftrun, the host's own) writes a 4 MiB
  -- line and fails: what the fleet reads of its log, and says, is short
  local remote = dir .. "/hosts/big/.ftrun-fleet/bin"
  os.execute("mkdir -p " .. q(remote) .. " && chmod -R 700 " .. q(dir .. "/hosts/big/.ftrun-fleet"))
  t.write(remote .. "/ftrun", ([[#!/bin/sh
case "$1$2" in *--help|--version) exec %s "$@" ;; esac
head -c 4194304 /dev/zero | tr '\0' x
exit 3
]]):format(q(t.ftrun)))
  os.execute("chmod 700 " .. q(remote .. "/ftrun"))
  env = ("PATH=%s:\"$PATH\" FLEET_HOSTS=%s"):format(q(dir .. "/bin"), q(dir .. "/hosts"))
  out, code = t.ftrun_run("fleet.lua HOSTS=big INSTALL=never RESULTS=" .. q(dir .. "/big")
    .. " -- cycles.lua CYCLES=A MIB=8 REPS=2", env)
  local line = out:match("fleet: big: failed[^\n]*") or ""
  t.is(code, 1, "a host whose run fails with a 4 MiB line: the fleet fails", #out < 5000 and out or "")
  t.ok(#line > 0 and #line < 1000, "saying why in one short line", #line .. " bytes")
  local summary = t.read(dir .. "/big/fleet-summary.md") or ""
  t.ok(#summary < 5000, "and so does its summary", #summary .. " bytes")
end

-- fleet.lua SUMMARY= on a folder someone else filled: a link to . in a
-- host's folder gave each results JSON once per depth (15 "runs" for one),
-- and a few of them made the walk endless
do
  local dir = t.tmpdir()
  local run_json = '{"script": "cycles.lua", "verdict": "CHECKSUMS OK", "rows": []}'
  for _, h in ipairs { "h1", "h2" } do
    os.execute("mkdir -p " .. t.quote(("%s/%s/run-1"):format(dir, h)))
    t.write(("%s/%s/run-1/cycles-A-results.json"):format(dir, h), run_json)
  end
  os.execute("ln -s . " .. t.quote(dir .. "/h2/loop"))
  local out, code = t.ftrun_run("fleet.lua SUMMARY=" .. t.quote(dir))
  t.is(code, 0, "SUMMARY of a folder with a link to . in a host's folder", out)
  t.like(out, "| h2 | ok: 1 run(s) | 1 |", "its run counted once, the link not entered")
end

-- the hosts contacted are the hosts checked: a group's source (here a
-- nodeset stand-in) answering a second expansion with another name never
-- reaches clush
do
  local dir = t.tmpdir()
  local q = t.quote
  local real = t.run("command -v nodeset"):gsub("%s+$", "")
  t.write(dir .. "/nodeset", ("#!/bin/sh\nif [ -e %s ]; then echo '-oProxyCommand=touch PWN'; exit 0; fi\n"
    .. "touch %s; exec %s \"$@\"\n"):format(q(dir .. "/asked"), q(dir .. "/asked"), q(real)))
  t.write(dir .. "/clush", ("#!/bin/sh\necho \"$@\" >>%s\nexit 1\n"):format(q(dir .. "/clush.args")))
  os.execute("chmod +x " .. q(dir .. "/nodeset") .. " " .. q(dir .. "/clush"))
  local out = t.ftrun_run("fleet.lua HOSTS=node1 INSTALL=never RESULTS=" .. q(dir .. "/r")
    .. " -- cycles.lua CYCLES=A MIB=8 REPS=2", ("PATH=%s:\"$PATH\""):format(q(dir)))
  t.like(out, "fleet: 1 host(s) node1;", "a node set expanded once", out)
  t.ok(not (t.read(dir .. "/clush.args") or ""):find("ProxyCommand", 1, true), "no other name reaches clush",
    t.read(dir .. "/clush.args"))
end

-- hosts: each a list of runs, each run a list of repetitions
local function host(name, level, k, wiggle)
  local runs = {}
  for i = 1, k do
    local f = level * (1 + wiggle * (i - (k + 1) / 2))
    runs[i] = { f * 0.99, f, f * 1.01 }
  end
  return { name = name, runs = runs }
end
local same = { host("n1", 100, 3, 0.05), host("n2", 100, 3, 0.05), host("n3", 100, 3, 0.05),
  host("n4", 100, 3, 0.05) }
local s = machines.spread(same)
t.ok(s.between == 0, "four machines with the same runs: no spread between machines", tostring(s.between))
t.ok(s.within > 0, "and the runs' own spread", tostring(s.within))
t.is(#machines.outliers(same), 0, "no outlier")
local p = machines.machine_effect(same, { seed = 1 })
t.ok(p > 0.5, "no machine effect", tostring(p))

local slow = { host("n1", 100, 3, 0.05), host("n2", 102, 3, 0.05), host("n3", 300, 3, 0.05),
  host("n4", 99, 3, 0.05) }
local out = machines.outliers(slow)
t.is(#out, 1, "one machine three times slower: one outlier")
t.is(out[1] and out[1].name, "n3", "named")
t.ok(out[1] and out[1].pct > 150, "with its distance from the others' median", out[1] and tostring(out[1].pct))
p = machines.machine_effect(slow, { seed = 1 })
t.ok(p < 0.05, "and a machine effect (12 runs over 4 machines)", tostring(p))

-- two regimes shared out between machines: n1's runs all slow, but n2 has
-- a slow run too, so n1 is within what one machine does
local regimes = { { name = "n1", runs = { { 10 }, { 10.2 }, { 9.9 } } }, { name = "n2", runs = { { 60 }, { 10.5 }, { 61 } } },
  { name = "n3", runs = { { 60 }, { 62 }, { 59 } } }, { name = "n4", runs = { { 61 }, { 60 }, { 58 } } } }
t.is(#machines.outliers(regimes), 0, "a regime another machine's runs visit too is no outlier")

local once = { host("n1", 100, 1, 0), host("n2", 100, 1, 0), host("n3", 300, 1, 0) }
local none, reason = machines.outliers(once)
t.is(#none, 0, "one run a machine: nothing named")
t.like(reason or "", "one run a machine", "and said why")

t.done()
