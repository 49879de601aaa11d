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

-- fleet.lua checks the script's knobs and REMOTE here, before any host is contacted
do
  local dir = t.tmpdir()
  local marker = dir .. "/contacted"
  for _, tool in ipairs { "clush", "ssh" } do
    t.write(dir .. "/" .. tool, "#!/bin/sh\ntouch " .. t.quote(marker) .. "\nexit 1\n")
    os.execute("chmod +x " .. t.quote(dir .. "/" .. tool))
  end
  local env = ("PATH=%s:\"$PATH\" HOSTS=node1"):format(t.quote(dir))
  for _, c in ipairs {
    { "-- cycles.lua MIB=abc", "MIB=abc: expected a positive integer" },
    { "-- cycles.lua NOPE=1", "argument 'NOPE=1' is not one of this script's knobs" },
    { "REMOTE=relative -- cycles.lua", "REMOTE=relative: expected an absolute path" },
  } do
    local out, code = t.ftrun_run("fleet.lua " .. c[1], env)
    t.is(code, 2, "fleet.lua " .. c[1] .. ": exit 2", out)
    t.like(out, c[2], "naming it")
    t.ok(not io.open(marker), "and no host contacted")
  end
  os.execute("rm -rf " .. t.quote(dir))
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
