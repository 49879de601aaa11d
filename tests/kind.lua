-- ft.machine() names the kind of guest as the kernel states it: each kind's signature
-- (kernel log, CPUID, command line, module parameter, cpuinfo flags) given through
-- FTRUN_MACHINE_ROOT, so every machine tests every kind's logic; then this machine.
local t = require "tap"
local ft = require "ft"
local q = t.quote

local LINUX = "<5>[    0.000000] Linux version 6.18.44-fc (builder@sandboxing) #1 SMP\n"
local KINDS = {
  PVM = {
    ["kernel.log"] = LINUX .. "<6>[    0.000000] Hypervisor detected: PVM\n"
      .. "<6>[    0.000026] pvm-pv: running under PVM (pv-lite)\n",
    cpuid = "bhyve bhyve \n",
    ["proc/cmdline"] = "console=ttyS0 clocksource=kvm-clock pvm_no_zero_page=1 tsc=unstable -- --init\n",
    ["sys/module/kernel/parameters/pvm_no_zero_page"] = "Y\n",
    ["proc/cpuinfo"] = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc hypervisor\n",
  },
  KVM = {
    ["kernel.log"] = LINUX .. "<6>[    0.000000] Hypervisor detected: KVM\n",
    cpuid = "KVMKVMKVM\n",
    ["proc/cmdline"] = "console=ttyS0 reboot=k -- pvm_no_zero_page=1\n",
    ["proc/cpuinfo"] = "processor\t: 0\nflags\t\t: fpu tsc rdtscp constant_tsc nonstop_tsc hypervisor\n",
  },
  metal = { ["kernel.log"] = LINUX, ["proc/cmdline"] = "ro quiet\n" },
  tcg = { ["kernel.log"] = LINUX, cpuid = "TCGTCGTCGTCG\n" },
  rotated = { ["kernel.log"] = "<6>[ 9000.1] eth0: link up\n", cpuid = "KVMKVMKVM\n" },
  unreadable = { cpuid = "KVMKVMKVM\n", ["proc/cmdline"] = "pvm_no_zero_page\n" },
  param_off = { ["proc/cmdline"] = "pvm_no_zero_page=1\n", ["sys/module/kernel/parameters/pvm_no_zero_page"] = "N\n" },
}

local dir = t.tmpdir()
local CODE = "local m = ft.machine() for _, k in ipairs{'hypervisor', 'hypervisor_source', 'cpuid_hypervisor', "
  .. "'shadow_page_tables', 'zero_page', 'zero_page_why', 'rdtscp'} do print(k .. '=' .. tostring(m[k])) end"
local function machine(name)
  local root = dir .. "/" .. name
  for path, text in pairs(KINDS[name]) do
    assert(os.execute("mkdir -p " .. q((root .. "/" .. path):match("(.*)/"))))
    t.write(root .. "/" .. path, text)
  end
  os.execute("mkdir -p " .. q(root))
  local out = t.run(("FTRUN_MACHINE_ROOT=%s %s -e %s"):format(q(root), q(t.ftrun), q(CODE)))
  local m = {}
  for k, v in out:gmatch("([%w_]+)=([^\n]*)") do m[k] = v end
  return m
end

local pvm = machine("PVM")
t.is(pvm.hypervisor, "PVM", "PVM: named from the kernel log, not CPUID")
t.is(pvm.hypervisor_source, "kernel log: Hypervisor detected: PVM", "PVM: the source is named")
t.is(pvm.cpuid_hypervisor, "bhyve bhyve ", "PVM: CPUID's string kept apart (the host beneath)")
t.is(pvm.shadow_page_tables, "true", "PVM: shadow page tables")
t.is(pvm.zero_page, "false", "PVM: no zero page")
t.is(pvm.zero_page_why, "pvm_no_zero_page=1 on the kernel command line", "PVM: the command line's word is the reason")
t.is(pvm.rdtscp, "false", "PVM: no rdtscp")

local kvm = machine("KVM")
t.is(kvm.hypervisor, "KVM", "KVM: named from the kernel log")
t.is(kvm.cpuid_hypervisor, "KVMKVMKVM", "KVM: CPUID's string")
t.is(kvm.shadow_page_tables, "nil", "KVM: whether the host shadows is not the guest's to see")
t.is(kvm.zero_page, "true", "KVM: a zero page (init's pvm_no_zero_page=1 after -- is not the kernel's)")
t.is(kvm.zero_page_why, "the kernel has no pvm_no_zero_page parameter", "KVM: why")
t.is(kvm.rdtscp, "true", "KVM: rdtscp")

local metal = machine("metal")
t.is(metal.hypervisor, "none", "bare metal: none")
t.is(metal.cpuid_hypervisor, "none", "bare metal: no CPUID hypervisor bit")
t.is(metal.shadow_page_tables, "false", "bare metal: no shadow tables")
local tcg = machine("tcg")
t.is(tcg.hypervisor, "unknown", "a hypervisor the kernel does not name: unknown")
t.like(tcg.hypervisor_source, 'CPUID says "TCGTCGTCGTCG"', "with CPUID's word")
local rotated = machine("rotated")
t.is(rotated.hypervisor, "unknown", "a log without its boot lines: unknown, not none")
t.is(rotated.hypervisor_source, "the kernel log no longer holds its boot lines", "and says why")
local unreadable = machine("unreadable")
t.is(unreadable.hypervisor, "unknown", "an unreadable log: unknown")
t.like(unreadable.hypervisor_source, "the kernel log is unreadable (No such file", "and why")
t.is(unreadable.zero_page, "false", "a bare pvm_no_zero_page on the command line withholds it")
-- a stand-in log that never ends or never opens is read no further than a regular file's MiB
for _, c in ipairs { { "a device", "ln -s /dev/zero %s" }, { "a FIFO", "mkfifo %s" } } do
  local root = dir .. "/odd"
  os.execute("rm -rf " .. q(root) .. " && mkdir -p " .. q(root))
  os.execute(c[2]:format(q(root .. "/kernel.log")))
  local out, code = t.run(("ulimit -v 1000000; FTRUN_MACHINE_ROOT=%s timeout 20 %s -e %s"):format(q(root),
    q(t.ftrun), q(CODE)))
  t.is(code, 0, "kernel.log " .. c[1] .. ": ft.machine() returns", out)
  t.like(out, "hypervisor_source=the kernel log is unreadable (Invalid argument", "and says the log is unreadable")
end
local off = machine("param_off")
t.is(off.zero_page, "true", "the kernel's parameter (N) over the command line")
t.is(off.zero_page_why, "pvm_no_zero_page=N in /sys/module/kernel/parameters/pvm_no_zero_page", "and names it")

-- What each kind cannot show (scripts/lib/limits.lua), from the same signatures.
local LIMITS = "local l = require('limits').of(ft.machine(), ft.clock(), { 'zero_page', 'profile', 'fault_cost' }) "
  .. "for _, x in ipairs(l) do print(x.topic .. '=' .. x.text) end"
local function limits_of(name)
  local out = t.run(("FTRUN_MACHINE_ROOT=%s %s -e %s"):format(q(dir .. "/" .. name), q(t.ftrun), q(LIMITS)))
  local l = {}
  for k, v in out:gmatch("([%w_]+)=([^\n]*)") do l[k] = v end
  return l
end
local pl = limits_of("PVM")
t.like(pl.zero_page, "No zero page on this kernel (pvm_no_zero_page=1 on the kernel command line)", "PVM: no zero page said")
t.like(pl.profile, "land on pvm_irq_enable", "PVM: the profile's pvm_irq_enable said")
t.like(pl.fault_cost, "PVM guest with shadow page tables", "PVM: the fault's cost is this kind's")
local kl = limits_of("KVM")
t.is(next(kl), nil, "KVM: nothing withheld on these topics", kl.zero_page or kl.profile or kl.fault_cost)
t.errors(function() require("limits").of(ft.machine(), nil, { "zero" }) end, "limits: unknown topic 'zero'",
  "an unknown topic is an error")

-- This machine: the name is the kernel log's, and the timer says why it is what it is.
local m = ft.machine()
t.diag("this machine: " .. require("kind").describe())
local log = t.run("dmesg 2>/dev/null | grep -m1 -o 'Hypervisor detected: .*'")
local said = log:match("Hypervisor detected: ([^\n]+)")
if said then
  t.is(m.hypervisor, said, "this machine: the name dmesg gives")
else
  t.ok(m.hypervisor == "none" or m.hypervisor == "unknown", "this machine: dmesg names none: " .. m.hypervisor)
end
t.ok(m.timer == "rdtscp" or m.timer_why ~= nil, "the timer's choice comes with its reason: " .. tostring(m.timer_why))
t.is(m.timer == "rdtscp", ft.clock().tsc.used, "the timer named is the one ft.clock uses")
t.is(m.shadow_page_tables, m.hypervisor == "PVM" or (m.hypervisor ~= "none" and nil), "shadow tables follow the name")

os.execute("rm -rf " .. q(dir))
t.done()
