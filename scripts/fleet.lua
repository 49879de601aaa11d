-- fleet.lua: one script on every host of a node set, through ClusterShell
-- over ssh, the runs gathered into one folder per host and the machines
-- compared as a level of the measurement.
--   ./ftrun fleet.lua HOSTS='node[1-4]' [RUNS=k] [SERIAL=1] -- SCRIPT KNOBS...
-- clush does the fan-out, the node sets and the copying both ways; this
-- script only checks, runs, gathers and judges. SERIAL=1 runs one host at
-- a time in rounds (run 1 on each host in turn, then run 2, ...), so that
-- the drift of a machine's speed over minutes falls on every host alike.
local ft = require "ft"
local knobs = require "knobs"
local reports = require "reports"
local shell = require "shell"

local SCRIPT = "fleet.lua"
local function fail(msg) knobs.fail(SCRIPT, msg) end
local q = shell.quote

local function run(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

-- What is wrong with a host name, or nil: a name reaches ssh (which takes
-- a leading - as an option, as in -oProxyCommand=...), clush's --outdir
-- (which writes a file named after it, so / or .. writes elsewhere), the
-- results folder named after it, and the fleet's scripts. A host is named
-- as DNS names one (RFC 1123, as OpenSSH's valid_hostname and ClusterShell
-- read it): letters, digits, - and ., a letter or digit first, _ allowed.
local function host_name_refused(h)
  -- the gather names files and folders the name plus up to 40 characters
  -- (clush's <runs>.<host>, host.<i>.<host>), within a file name's 255
  if #h > 200 then return ("is %d characters long, above the 200 the fleet's file names can carry"):format(#h) end
  local label = h:match("[^.]" .. ("[^.]"):rep(63) .. "+")
  if label then return ("has a part of %d characters between dots, above DNS's 63"):format(#label) end
  if h == "fleet-summary.md" then return "is the name of the fleet's summary, written beside the hosts' folders" end
  if h:match("^[^%w]") then
    return ("starts with %s: a name starts with a letter or a digit%s"):format(knobs.shown(h:sub(1, 1)),
      h:match("^%-") and " (ssh and clush read a leading - as an option)" or "")
  end
  local bad = h:match("[^%w._-]")
  if bad then
    -- a byte of a UTF-8 character shown alone would print as garbage: the
    -- name looks like another (a Cyrillic o) or reads backwards (U+202E)
    local shown = bad == " " and "a blank" or bad:byte() > 127 and ("the byte \\%d, outside ASCII (a lookalike "
      .. "letter or a direction mark?)"):format(bad:byte()) or knobs.shown(bad)
    return ("holds %s: only letters, digits and . _ - are taken (a /, blank, # or shell character would reach "
      .. "clush's file names and the fleet's scripts)"):format(shown)
  end
  if h:find("..", 1, true) then return "holds '..': only letters, digits and single dots between them" end
  return nil
end

-- A node set as ClusterShell reads it (node[1-4], a,b, @group), expanded
-- by nodeset itself so that no host is contacted to check it. The hosts
-- checked are the hosts used: a group's source (a script, a file others
-- edit) could answer a second expansion with other names.
local checked_hosts
knobs.parsers.nodeset = function(value)
  if value:match("^%s*$") then return nil, "a non-empty ClusterShell node set such as node[1-4]" end
  -- nodeset expands a * or ? against the names it knows and drops a pattern
  -- that matches none, so a host would be left out without a word
  if value:find("[*?]") then return nil, "a node set naming its hosts, without the patterns * and ?" end
  local out, code = run("nodeset -e -S '\\n' -- " .. q(value))
  if code ~= 0 then
    if code == 127 then return nil, "a node set, but nodeset is missing (apt-get install clustershell)" end
    return nil, "a ClusterShell node set such as node[1-4] (nodeset: " .. out:gsub("%s+$", "") .. ")"
  end
  local hosts = {}
  for h in out:gmatch("[^\n]+") do hosts[#hosts + 1] = h end
  if #hosts == 0 then return nil, "a node set naming at least one host" end
  local machine = {} -- DNS ignores case and a final dot: Node1, node1 and node1. are one machine
  for _, h in ipairs(hosts) do
    local bad = host_name_refused(h)
    if bad then return nil, ("host names that ssh, clush and a shell all take as data; host %s %s"):format(
      knobs.shown(h), bad) end
    local key = h:lower():gsub("%.$", "")
    if machine[key] then
      return nil, ("each host once; %s and %s name one machine (DNS ignores case and a final dot), whose runs "
        .. "would overlap"):format(machine[key], h)
    end
    machine[key] = h
  end
  checked_hosts = hosts
  return value
end
knobs.parsers.percent = function(value)
  local v = tonumber(value)
  if not v or v <= 0 or v ~= v or v == math.huge then return nil, "a percent above 0" end
  return v
end
knobs.parsers.level = function(value)
  local v = tonumber(value)
  if not v or v <= 0 or v >= 1 then return nil, "a level between 0 and 1" end
  return v
end

local SPEC = {
  { name = "HOSTS", kind = "nodeset", default = "(none: required)",
    desc = "the hosts, as a ClusterShell node set (node[1-4], a,b, @group); ssh reaches them as clush does" },
  { name = "RUNS", kind = "count", default = 1, max = 1000,
    desc = "runs of SCRIPT on each host, one after another (a host's runs never overlap)" },
  { name = "SERIAL", kind = "flag", default = false,
    desc = "1: one host at a time, in rounds: round i is run i on each host in turn, so that no two hosts "
      .. "share a noisy host machine's time and a machine whose speed drifts spreads the drift over every host" },
  { name = "RESULTS", kind = "path", default = "results/runs/<time>-fleet",
    desc = "folder the runs are gathered into, one folder per host" },
  { name = "REMOTE", kind = "path", default = ".ftrun-fleet",
    desc = "where the hosts keep the installed ftrun (REMOTE/bin/ftrun) and their runs until gathered; a relative "
      .. "path is in the ssh user's home. Made 0700 when missing; refused (the host named, nothing run) when it or "
      .. "anything in it is not the ssh user's or is writable by others, or a directory above it is writable by "
      .. "others without the sticky bit or owned by another user" },
  { name = "INSTALL", kind = "choice", default = "auto", choices = { "auto", "never" },
    desc = "auto: a host without a usable ftrun gets this build (make install DESTDIR, then clush --copy); "
      .. "never: such a host fails" },
  { name = "OUTLIER_PCT", kind = "percent", default = 10,
    desc = "least distance of a host's median from the others' median, in %, for it to be named an outlier "
      .. "(the bar is also at least 3 times the spread the other hosts show)" },
  { name = "ALPHA", kind = "level", default = 0.05,
    desc = "false discovery rate of the rows whose hosts are called different (Benjamini-Hochberg)" },
  { name = "SUMMARY", kind = "path", default = "(none)",
    desc = "a folder already gathered (one folder of runs per host, as a Slurm array writes it): its fleet "
      .. "summary, running nothing and contacting no host" },
}
local ABOUT = [[
fleet.lua runs one ftrun script on every host of a node set (clush over ssh)
RUNS times a host, hosts in parallel unless SERIAL=1 (one host at a time, in
rounds: run 1 on each host, then run 2, ...), and gathers every run's
files into RESULTS/<host>/run-<i>/. A host without a usable ftrun
gets the current build. The fleet summary (RESULTS/fleet-summary.md, also
printed) gives each host's machine and status, and for every timed row each
host's median, the spread between machines beside the spread between runs on
one machine, whether the hosts differ (a permutation test over the runs,
Benjamini-Hochberg over the rows) and the outlier hosts with their distance.
Exit status: 0 every host ran every run clean, 1 some host did not (each named),
2 bad input (nothing contacted), 130 interrupted.]]

-- The fleet's knobs come before `--`, the script and its knobs after.
local mine, theirs, at = {}, {}, nil
for i, a in ipairs { ... } do
  if at then theirs[#theirs + 1] = a
  elseif a == "--" then at = i
  else mine[#mine + 1] = a end
end
local cfg = knobs.setup(SCRIPT, ABOUT, SPEC, {}, mine, "fleet.lua HOSTS='node[1-4]' [RUNS=k] [SERIAL=1] "
  .. "[KNOB=value ...] -- SCRIPT [KNOB=value ...]")
-- The fleet summary, from the gathered JSON alone.
local function results_of(dir)
  local docs = {}
  -- a host's folder may be another's (SUMMARY=): a link in it is not entered
  for _, path in ipairs(shell.find(dir, "results%.json$", true)) do
    local doc, why = require("resultsjson").read(path)
    if doc and type(doc.rows) == "table" then
      doc.path = path
      docs[#docs + 1] = doc
    elseif not doc then
      io.stderr:write(("%s: not summarised: %s\n"):format(SCRIPT, why))
    end
  end
  return docs
end

if cfg.given.SUMMARY then
  if #theirs > 0 or cfg.given.HOSTS then fail("SUMMARY=DIR summarises runs already gathered: no HOSTS, no SCRIPT") end
  local names = {}
  for _, n in ipairs(shell.list(cfg.SUMMARY)) do
    if ft.list_dir(cfg.SUMMARY .. "/" .. n) then names[#names + 1] = n end
  end
  if #names == 0 then fail(("SUMMARY=%s: expected a folder with one folder of runs per host"):format(cfg.SUMMARY)) end
  local fleet, script, knob_list, runs = {}, nil, {}, 0
  for _, n in ipairs(names) do
    local docs = results_of(cfg.SUMMARY .. "/" .. n)
    fleet[#fleet + 1] = { name = n, docs = docs,
      status = #docs > 0 and { state = "ok", why = ("%d run(s)"):format(#docs) } or { state = "no runs" } }
    script = script or (docs[1] and docs[1].script)
    runs = math.max(runs, #docs)
  end
  local text = reports.of(SCRIPT).summary(fleet, { script = script or "?", knobs = knob_list, runs = runs,
    hosts = table.concat(names, ","), alpha = cfg.ALPHA, outlier_pct = cfg.OUTLIER_PCT, dir = cfg.SUMMARY })
  assert(ft.write_files { { cfg.SUMMARY .. "/fleet-summary.md", text } })
  io.write(text)
  os.exit(0, true)
end

if not cfg.given.HOSTS then fail("HOSTS: expected a node set such as HOSTS='node[1-4]' (--help explains)") end
local target = theirs[1]
if not target then fail("no SCRIPT: expected fleet.lua HOSTS=... -- SCRIPT [KNOB=value ...]") end
if not target:match("^[%w_]+%.lua$") then
  fail(("SCRIPT=%s: expected the name of one of ftrun's scripts (cycles.lua), which every host has installed")
    :format(target))
end
if target == SCRIPT then fail("SCRIPT=fleet.lua: a fleet does not run fleets") end
local here = io.open(ft.project_dir .. "/scripts/" .. target)
if not here then
  fail(("SCRIPT=%s: no such script in %s/scripts, so none the hosts could be given"):format(target, ft.project_dir))
end
here:close()
local script_knobs = {}
for i = 2, #theirs do
  local a = theirs[i]
  -- quoted into the hosts' shells as data (shell.quote); what a value can
  -- only mean to a shell ($, `, \, ') or cannot carry on a line is refused
  local bad = a:match("^[%u_][%u%d_]*=.-([%c'$`\\])")
  if not a:match("^[%u_][%u%d_]*=") or bad then
    fail(("%s: expected KNOB=value for %s%s"):format(knobs.shown(a), target, bad
      and (" without %s (a value is given to every host's shell as data; $, `, \\, ' and control characters "
      .. "are not taken)"):format(knobs.shown(bad)) or ""))
  end
  if a:match("^RESULTS=") then fail(("%s: the fleet chooses where each host's runs go"):format(a)) end
  script_knobs[#script_knobs + 1] = a
end
local quoted_knobs = {}
for i, a in ipairs(script_knobs) do quoted_knobs[i] = q(a) end
-- REMOTE reaches the hosts' shells, make's PREFIX and scp: plain path
-- characters only, no .. (it is the fleet's own directory on each host)
do
  local r = cfg.REMOTE
  local bad = r:match("[^%w/._+@%%,:-]")
  if bad or r:match("^%-") or ("/" .. r .. "/"):find("/%.%.?/") or r:match("^/*$") then
    fail(("REMOTE=%s: expected a directory for the fleet alone, absolute or in the ssh user's home, of letters, "
      .. "digits and / . _ + @ %% , : - without . or .. components%s"):format(knobs.shown(r),
      bad and (" (it holds %s)"):format(knobs.shown(bad)) or ""))
  end
end
-- the script's own knob check, here, so a bad knob contacts no host; the
-- fleet's knobs are no knobs of the script's, so out of its environment
do
  local unset = {}
  for _, k in ipairs(SPEC) do unset[#unset + 1] = "-u " .. k.name end
  local words = {}
  for i, a in ipairs(script_knobs) do words[i] = q(a) end
  local out, code = run(("env %s %s %s --check %s"):format(table.concat(unset, " "),
    q(os.getenv("FTRUN") or arg[-1]), q(target), table.concat(words, " ")))
  if code ~= 0 then fail((out:gsub("ftrun: warning: [^\n]*\n", ""):gsub("^%s+", ""):gsub("%s+$", ""))) end
end
local installable = io.open(ft.project_dir .. "/Makefile")
if installable then installable:close() end
if cfg.INSTALL == "auto" and not installable then
  fail(("INSTALL=auto: %s is no checkout with a Makefile, so a host without ftrun could not be given this "
    .. "build (INSTALL=never runs only on hosts with their own ftrun)"):format(ft.project_dir))
end
if run("command -v clush") == "" then fail("clush is missing: apt-get install clustershell") end

local hosts = assert(checked_hosts)
local stamp = os.date("!%Y%m%dT%H%M%SZ")
-- as a plain run's: under the checkout's results/runs/, else ./ftrun-runs/
local out_dir = cfg.given.RESULTS and cfg.RESULTS or ("%s/%s-fleet"):format(installable
  and ft.project_dir .. "/results/runs" or "ftrun-runs", stamp)
-- an operand of mkdir, cat and mv in run.sh: a leading - would be an option
if out_dir:match("^%-") then out_dir = "./" .. out_dir end
-- RESULTS holds the fleet's work folder: run.sh, which runs, and the build
-- copied to every host. In a folder another user owns, or may rename in
-- (writable without the sticky bit), they could swap either in between:
-- each folder on its path, as written and as it resolves, must be the
-- user's or root's and, when others may write it, sticky (as /tmp); a
-- group may write it when that is the user's own group (a umask of 002
-- with a group per user makes every folder so).
do
  local check = [[
me=$(id -u); mine=$(id -g); set -f
above() {
  p=; old=$IFS; IFS=/; set -- ${1#/}; IFS=$old
  for c in "$@"; do
    p=$p/$c; [ -e "$p" ] || [ -L "$p" ] || return 0
    u=$(stat -c %u -- "$p") || { echo "$p cannot be read"; exit 0; }
    [ "$u" = 0 ] || [ "$u" = "$me" ] || { echo "$p is owned by uid $u, neither root nor you"; exit 0; }
    [ -L "$p" ] && continue
    m=$(stat -c %a -- "$p"); g=$(stat -c %g -- "$p"); w=022; [ "$g" = "$mine" ] && w=002
    [ $(( 0$m & w )) = 0 ] || [ $(( 0$m & 01000 )) != 0 ] ||
      { echo "$p is writable by others (mode $m, group $g)"; exit 0; }
  done
}
R=$1; case $R in /*) ;; *) R=$PWD/$R ;; esac
above "$R"; above "$(realpath -m -- "$R")"]]
  local bad = run(("sh -c %s sh %s"):format(q(check), q(out_dir))):gsub("%s+$", "")
  if bad ~= "" then
    fail(("RESULTS=%s: %s: the fleet's work folder (run.sh, which runs, and the build it copies to the hosts) "
      .. "would be where another user could change it; expected a folder of your own"):format(knobs.shown(out_dir),
      knobs.shown(bad)))
  end
end
local remote_ft = cfg.REMOTE:gsub("/+$", "") .. "/bin/ftrun"
local remote_runs = ("%s/runs/%s-%d"):format(cfg.REMOTE, stamp, math.random(1 << 30))
-- each host's runs are moved to RESULTS/<host>, which must not be there:
-- an earlier fleet's runs would be judged as this one's, and a link made
-- by another user would lead the judging (and its clean-up) elsewhere
for _, h in ipairs(hosts) do
  local p = out_dir .. "/" .. h
  if os.execute(("test -e %s || test -L %s"):format(shell.path(p), shell.path(p))) then
    fail(("RESULTS=%s already holds %s (an earlier fleet's runs?): expected a new or empty folder for this "
      .. "fleet's runs"):format(knobs.shown(out_dir), knobs.shown(h)))
  end
end
assert(ft.mkdir(out_dir))
-- made fresh (0700): a .clush left in a RESULTS others can write could be
-- their directory or a link to one, and run.sh, which runs, is written here
local work = shell.mkdtemp(".clush", out_dir)
if not work then
  fail(("RESULTS=%s: cannot make a work folder of the fleet's own there"):format(knobs.shown(out_dir)))
end

local report = reports.of(SCRIPT)
local status = {} -- host -> { state, why }
local function note(h, state, why)
  status[h] = { state = state, why = why }
  io.stderr:write(("fleet: %s: %s%s\n"):format(h, state, why and (": " .. why) or ""))
end

-- What a host wrote (clush's per-host output, a run's log): at most
-- 64 KiB of it, from its start or its end, since a host may write
-- gigabytes and what is read here is one line.
local READ_MAX = 64 * 1024
local function read_part(path, from_end)
  local f = io.open(path)
  if not f then return nil end
  local size = f:seek("end") or 0
  f:seek("set", from_end and math.max(0, size - READ_MAX) or 0)
  local s = f:read(READ_MAX) or ""
  f:close()
  return s
end

-- clush over some hosts; its per-host stdout and stderr land in files
-- (--outdir, --errdir) beside its labelled lines on the terminal.
local function clush(nodes, args, tag, quiet)
  local o, e = work .. "/" .. tag .. ".out", work .. "/" .. tag .. ".err"
  local cmd = ("clush -w %s --outdir=%s --errdir=%s %s </dev/null"):format(q(table.concat(nodes, ",")), q(o), q(e),
    args)
  local _, code = run(("mkdir -p %s %s && %s%s"):format(q(o), q(e), cmd, quiet and " >/dev/null 2>&1" or ""))
  local function read(dir, h) return read_part(dir .. "/" .. h) or "" end
  return function(h) return read(o, h), read(e, h) end, code
end

local function last_line(s)
  local l
  for x in s:gmatch("[^\n]+") do l = x end
  return l
end

-- 1. Which hosts answer, and which have an ftrun that has the script.
-- REMOTE first: made private (umask 077) when missing, and refused when
-- anyone but the ssh user (and root) could have put or changed a file in
-- it, since the fleet runs REMOTE/bin/ftrun as that user: each directory
-- above it the user's or root's and not writable by others unless sticky
-- (as /tmp), it and all it holds the user's and writable by no one else;
-- the path as written (a symbolic link on the way the user's or root's)
-- and as it resolves.
local private = [[
R=%s; me=$(id -u); set -f
refuse() { echo "fleet-remote refused $*"; exit 0; }
case $R in /*) ;; *) R=$HOME/$R ;; esac
(umask 077 && mkdir -p -- "$R/runs") 2>/dev/null || refuse "cannot make $R/runs"
above() {
  p=; old=$IFS; IFS=/; set -- ${1#/}; IFS=$old
  for c in "$@"; do
    p=$p/$c; [ "$p" = "$R" ] && return 0
    u=$(stat -c %%u -- "$p") || refuse "cannot stat $p"
    [ "$u" = 0 ] || [ "$u" = "$me" ] || refuse "$p is owned by uid $u, neither root nor the ssh user"
    [ -L "$p" ] && continue
    m=$(stat -c %%a -- "$p")
    [ $(( 0$m & 022 )) = 0 ] || [ $(( 0$m & 01000 )) != 0 ] || refuse "$p is writable by others (mode $m)"
  done
}
above "$R"
P=$(cd -P -- "$R" && pwd -P) || refuse "cannot enter $R"
R=$P; above "$P"
bad=$(find "$P" \( ! -user "$me" -o \( ! -type l -perm /022 \) \) -print 2>&1 | head -n 1)
[ -z "$bad" ] || refuse "$bad is another user's or writable by others (REMOTE must be the ssh user's alone)"
]]
local probe = ("for f in %s \"$(command -v ftrun)\"; do [ -x \"$f\" ] && \"$f\" %s --help >/dev/null 2>&1 && "
  .. "{ echo \"fleet-ftrun $f $(\"$f\" --version 2>&1 | head -n 1)\"; exit 0; }; done; echo fleet-ftrun none")
  :format(q(remote_ft), q(target))
probe = private:format(q(cfg.REMOTE)) .. probe
local function check(nodes)
  local read = clush(nodes, q(probe), "probe-" .. #nodes, true)
  local have, lack = {}, {}
  for _, h in ipairs(nodes) do
    local out, err = read(h)
    local path, version = out:match("fleet%-ftrun (%S+) ?([^\n]*)")
    local refused = out:match("fleet%-remote refused ([^\n]*)")
    if refused then note(h, "refused", ("REMOTE=%s: %s"):format(cfg.REMOTE, knobs.shown(refused)))
    elseif path == "none" then lack[#lack + 1] = h
    elseif path then have[h] = { path = path, version = version }
    else note(h, "unreachable", last_line(err) or "no answer through clush") end
  end
  return have, lack
end
-- one line, however long the knobs (the summary keeps them whole)
io.stderr:write(("fleet: %d host(s) %s; %s %s, %d run(s) each, %s; gathered into %s\n"):format(#hosts,
  knobs.shown(cfg.HOSTS), target, knobs.shown(table.concat(script_knobs, " ")), cfg.RUNS, cfg.SERIAL
  and "one host at a time, in rounds" or "hosts in parallel", knobs.shown(out_dir)))
local have, lack = check(hosts)

-- 2. This build onto the hosts that lack one: installed into a staging
-- root, then copied one host at a time (hosts sharing a file system would
-- otherwise write the same files at once).
if #lack > 0 then
  if cfg.INSTALL == "never" then
    for _, h in ipairs(lack) do note(h, "failed", ("no ftrun with %s (INSTALL=never)"):format(target)) end
  else
    local stage = work .. "/stage"
    -- the runner finds its scripts beside its executable, so the staging
    -- PREFIX need not be REMOTE (which may be in each host's home)
    local out, code = run(("make -s -C %s install DESTDIR=%s PREFIX=/ftrun-fleet"):format(q(ft.project_dir),
      q(stage)))
    if code ~= 0 then
      for _, h in ipairs(lack) do note(h, "failed", "make install of this build failed: " .. (last_line(out) or "")) end
    else
      io.stderr:write(("fleet: installing this build to %s on %s\n"):format(cfg.REMOTE, table.concat(lack, ",")))
      for _, part in ipairs { "bin", "share" } do
        clush(lack, ("-f 1 -c %s --dest %s"):format(q(stage .. "/ftrun-fleet/" .. part), q(cfg.REMOTE)), "copy", true)
      end
      local now_have, still = check(lack)
      for h, v in pairs(now_have) do have[h] = v end
      for _, h in ipairs(still) do note(h, "failed", "installed, but its ftrun still cannot run " .. target) end
    end
  end
end
local ready = {}
for _, h in ipairs(hosts) do
  if have[h] then
    ready[#ready + 1] = h
    io.stderr:write(("fleet: %s: %s (%s)\n"):format(h, knobs.shown(have[h].path), knobs.shown(have[h].version)))
  end
end

-- 3. RUNS runs on every ready host, and no host's runs overlap. Each host
-- writes into a folder the fleet names (host.<index>.<name>), never one
-- the host chooses: the gather moves that folder into RESULTS, and a name
-- taken from a host's output could be ../ anything (hosts may share a
-- file system, so the names differ by host). In parallel each host has a
-- clush call of its own, all at once; with SERIAL the runs go in rounds,
-- round i being run i on each host in turn, one clush call a run, so that
-- a machine whose speed drifts over minutes spreads the drift over every
-- host instead of giving each host a block of time of its own. An
-- interrupt stops the runs on every host, and what they wrote is gathered
-- all the same.
local gathered = {}
local interrupted = false
local folder_of = {} -- host -> its folder's name, chosen here
for k, h in ipairs(ready) do folder_of[h] = ("host.%d.%s"):format(k, (h:gsub("[^%w]", "_"))) end
-- a background job of sh ignores SIGINT; env gives clush its default back,
-- so that a Ctrl-C reaches every host's clush as it reaches a foreground one
local default_int = select(2, run("env --default-signal=INT true")) == 0 and "env --default-signal=INT " or ""

-- The shell lines that run every ready host's runs (run.sh's middle).
local function run_lines()
  -- one run, run $i, into "$d": its log, its exit status, and the line
  -- that says it ended (the status written first: an interrupted clush
  -- may have closed the pipe the line goes to)
  local one_run = ("s=$(date +%%s); echo \"fleet: run $i of %d started\"; %s %s %s RESULTS=\"$d/run-$i\" "
    .. ">\"$d/run-$i.log\" 2>&1; rc=$?; echo $rc >\"$d/run-$i.rc\"; ")
    :format(cfg.RUNS, "\"$f\"", q(target), table.concat(quoted_knobs, " "))
  local ended = ("echo \"fleet: run $i of %d exit $rc in $(( $(date +%%s) - s )) s\""):format(cfg.RUNS)
  local function start(h) -- a host's folder, made and said
    return ("f=%s; d=%s; mkdir -p \"$d\" || exit 97; echo $$ > \"$d/pid\"; stop=0; trap 'stop=1' INT TERM HUP; "
      .. "echo \"fleet: folder %s\"; "):format(q(have[h].path), q(remote_runs .. "/" .. folder_of[h]), folder_of[h])
  end
  local sh = {}
  if not cfg.SERIAL then
    local per_host = ("i=1; while [ $i -le %d ] && [ $stop = 0 ]; do %s%s; i=$((i + 1)); done; "
      .. "[ $stop = 0 ] || echo interrupted >\"$d/stopped\""):format(cfg.RUNS, one_run, ended)
    -- made here: clush calls started at once would race to make them
    sh[#sh + 1] = ("mkdir -p %s %s || exit 1"):format(q(work .. "/run.out"), q(work .. "/run.err"))
    for k, h in ipairs(ready) do
      sh[#sh + 1] = ("%sclush -w %s --outdir=%s --errdir=%s </dev/null %s &\np%d=$!"):format(default_int, q(h),
        q(work .. "/run.out"), q(work .. "/run.err"), q(start(h) .. per_host), k)
    end
    -- wait for each; a trapped interrupt ends a wait early, so wait again while the job lives
    for k = 1, #ready do
      sh[#sh + 1] = ("while :; do wait $p%d; c=$?; [ $c -gt 128 ] && kill -0 $p%d 2>/dev/null || break; done; "
        .. "[ $c = 0 ] || rc=$c"):format(k, k)
    end
    return sh
  end
  -- a call's clush output is written afresh each call, so each is added
  -- to the host's file under run.out and run.err, which then read as in
  -- parallel; a host whose call fails (ssh, or no folder) gets no more
  local out, err = work .. "/round.out", work .. "/round.err"
  sh[#sh + 1] = ("mkdir -p %s %s %s %s || exit 1"):format(q(work .. "/run.out"), q(work .. "/run.err"), q(out),
    q(err))
  sh[#sh + 1] = "i=1"
  local calls = {}
  for k, h in ipairs(ready) do
    sh[#sh + 1] = ("gone%d=0"):format(k)
    local call = start(h) .. one_run .. "rm -f \"$d/pid\"; [ $stop = 0 ] || echo interrupted >\"$d/stopped\"; "
      .. ended
    calls[#calls + 1] = ("  if [ $int = 0 ] && [ $gone%d = 0 ]; then rm -f %s %s; "
      .. "clush -w %s --outdir=%s --errdir=%s </dev/null %s\"$i\"%s; c=$?; "
      .. "cat %s >>%s 2>/dev/null; cat %s >>%s 2>/dev/null; [ $c = 0 ] || { rc=$c; gone%d=1; }; fi"):format(
      k, q(out .. "/" .. h), q(err .. "/" .. h), q(h), q(out), q(err), q("i="), q("; " .. call),
      q(out .. "/" .. h), q(work .. "/run.out/" .. h), q(err .. "/" .. h), q(work .. "/run.err/" .. h), k)
  end
  sh[#sh + 1] = ("while [ $i -le %d ] && [ $int = 0 ]; do"):format(cfg.RUNS)
  for _, l in ipairs(calls) do sh[#sh + 1] = l end
  sh[#sh + 1] = "  i=$((i + 1))"
  sh[#sh + 1] = "done"
  return sh
end

-- The shell lines that check each host's gathered folder and move it into
-- RESULTS under the host's name (run.sh's end: after an interrupt ftrun
-- stops as run.sh returns, so the gather and what it says are run.sh's).
-- A folder goes in only as a plain tree: a real directory (not a link) of
-- files and directories alone (no link out of RESULTS, no FIFO or device)
-- whose names a shell, gnuplot and make plots take as data (letters,
-- digits and . _ + -, no leading -; a leading dot, as a killed write's
-- temporary has, is taken). Else the first name at fault is written to
-- refused.HOST and nothing of the host's is kept. With a shared file
-- system every host's copy holds every host's folder; each takes its own.
local function gather_lines()
  local sh = { "LC_ALL=C; export LC_ALL" }
  local cases = {}
  for _, h in ipairs(ready) do cases[#cases + 1] = ("%s) fo=%s ;;"):format(q(h), folder_of[h]) end
  local quoted = {}
  for i, h in ipairs(ready) do quoted[i] = q(h) end
  sh[#sh + 1] = ("for h in %s; do case $h in %s esac; src=%s/gather/%s.$h/$fo; dst=%s/$h; "):format(
    table.concat(quoted, " "), table.concat(cases, " "), q(work), remote_runs:match("[^/]+$"), q(out_dir))
    .. "if [ -d \"$src\" ] && [ ! -L \"$src\" ]; then "
    .. "bad=$(find \"$src\" -mindepth 1 \\( \\( ! -type f ! -type d \\) -o -name '*[!A-Za-z0-9._+-]*' -o -name '-*' "
    .. "\\) -print -quit 2>&1); "
    .. ("if [ -n \"$bad\" ]; then printf '%%s' \"${bad#\"$src\"/}\" >%s/refused.$h; "):format(q(work))
    .. "[ $int = 1 ] && echo \"fleet: $h: refused: its runs were not kept (a file name or a file that is not "
    .. "plain)\" >&2; "
    .. "elif mv -T -- \"$src\" \"$dst\"; then rm -f \"$dst/pid\"; "
    .. (": >%s/kept.$h; "):format(q(work))
    .. ("[ $int = 1 ] && echo \"fleet: $h: interrupted: $(ls \"$dst\" | grep -c '^run-.*\\.rc$') of %d run(s) "
    .. "ended, kept in $dst\" >&2; fi; "):format(cfg.RUNS)
    .. "else [ $int = 1 ] && echo \"fleet: $h: interrupted: nothing gathered\" >&2; fi; done"
  return sh
end

-- Why run.sh refused a host's gathered folder, or nil: the path it found
-- at fault, and what is wrong with it.
local function refusal(h)
  local f = io.open(("%s/refused.%s"):format(work, h))
  if not f then return nil end
  local path = f:read(READ_MAX) or ""
  f:close()
  local bad = shell.unsafe_name(((path:match("[^/]*$") or ""):gsub("^%.", "x")))
  return ("its runs were not kept: %s %s"):format(knobs.shown(path), bad and ("holds " .. bad)
    or "is neither a file nor a directory (a link, a FIFO or a device)")
end

-- A host's runs, from its gathered folder: "ok" only when every run exited
-- 0 and left its results JSON.
local function judge(h, dst)
  local runs_ok, why = 0, nil
  for i = 1, cfg.RUNS do
    local rcf = io.open(("%s/run-%d.rc"):format(dst, i))
    local rc = rcf and tonumber(rcf:read(64))
    if rcf then rcf:close() end
    if rc == 0 and #shell.find(("%s/run-%d"):format(dst, i), "results%.json$", true) == 0 then
      why = why or ("run %d exited 0 but left no results JSON (its log: %s/run-%d.log)"):format(i, dst, i)
    elseif rc == 0 then runs_ok = runs_ok + 1
    elseif not why then
      local log = read_part(("%s/run-%d.log"):format(dst, i), true)
      local l = log and last_line(log) or nil
      why = rc and ("run %d exited %d: %s"):format(i, rc, knobs.shown(l or "")) or ("run %d never ran"):format(i)
    end
  end
  os.remove(dst .. "/pid")
  local stopped = io.open(dst .. "/stopped")
  if stopped then stopped:close() end
  if runs_ok == cfg.RUNS then note(h, "ok", ("%d run(s) in %s"):format(runs_ok, dst))
  elseif stopped or interrupted then note(h, "interrupted", ("%d of %d run(s) done, kept in %s; %s"):format(
    runs_ok, cfg.RUNS, dst, why or ""))
  else note(h, "failed", ("%d of %d run(s) clean, kept in %s; %s"):format(runs_ok, cfg.RUNS, dst, why)) end
end

if #ready > 0 then
  local sh = { "#!/bin/sh", "int=0", "trap 'int=1' INT TERM", "rc=0" }
  for _, l in ipairs(run_lines()) do sh[#sh + 1] = l end
  local hostlist = q(table.concat(ready, ","))
  sh[#sh + 1] = ("if [ $int = 1 ]; then echo 'fleet: interrupted: stopping the runs on every host' >&2; "
    .. "clush -w %s </dev/null %s >/dev/null 2>&1; fi"):format(hostlist,
    q(("for p in %s/*/pid; do kill -INT -- -$(cat \"$p\") 2>/dev/null; done; sleep 2"):format(q(remote_runs))))
  sh[#sh + 1] = ("clush -w %s --rcopy %s --dest %s </dev/null >/dev/null 2>%s"):format(hostlist,
    q(remote_runs), q(work .. "/gather"), q(work .. "/gather.err"))
  for _, l in ipairs(gather_lines()) do sh[#sh + 1] = l end
  sh[#sh + 1] = ("clush -w %s </dev/null %s >/dev/null 2>&1"):format(hostlist, q("rm -rf -- " .. q(remote_runs)))
  sh[#sh + 1] = ("[ $int = 1 ] && { rm -rf %s; exit 130; }"):format(shell.path(work))
  sh[#sh + 1] = "exit $rc"
  local path = work .. "/run.sh"
  local f = assert(io.open(path, "w"))
  f:write(table.concat(sh, "\n") .. "\n")
  f:close()
  assert(ft.mkdir(work .. "/gather"))
  local _, _, code = os.execute("sh " .. q(path))
  interrupted = code == 130

  -- 4. Each host's runs, as run.sh gathered them.
  for _, h in ipairs(ready) do
    local said = (read_part(work .. "/run.out/" .. h) or ""):find("fleet: folder ", 1, true)
    local dst = out_dir .. "/" .. h
    local refused = refusal(h)
    local kept = io.open(work .. "/kept." .. h) -- run.sh moved its runs there, and nothing else was
    if kept then kept:close() end
    if refused then
      note(h, "refused", refused)
    elseif kept then
      gathered[h] = dst
      judge(h, dst)
    else
      local err = read_part(work .. "/run.err/" .. h, true)
      local e = err and last_line(err) or nil
      local taken = os.execute(("test -e %s || test -L %s"):format(shell.path(dst), shell.path(dst)))
      note(h, interrupted and "interrupted" or "failed", taken and ("its runs were not kept: %s was made by "
        .. "someone else during the fleet"):format(knobs.shown(dst)) or said and "its runs could not be gathered"
        or ("no run started%s"):format(e and (": " .. knobs.shown(e)) or ""))
    end
  end
end
os.execute("rm -rf " .. shell.path(work))

-- 5. The fleet summary.
local fleet = {}
for _, h in ipairs(hosts) do
  fleet[#fleet + 1] = { name = h, status = status[h] or { state = "failed" },
    docs = gathered[h] and results_of(gathered[h]) or {} }
end
local text = report.summary(fleet, { script = target, knobs = script_knobs, runs = cfg.RUNS, hosts = cfg.HOSTS,
  alpha = cfg.ALPHA, outlier_pct = cfg.OUTLIER_PCT, dir = out_dir, interrupted = interrupted })
local ok, err = ft.write_files { { out_dir .. "/fleet-summary.md", text } }
if not ok then io.stderr:write(("fleet.lua: the summary was not written: %s\n"):format(err)) end
io.write(text)

local all = true
for _, h in ipairs(fleet) do if h.status.state ~= "ok" then all = false end end
if interrupted then os.exit(130, true) end
os.exit(all and 0 or 1, true)
