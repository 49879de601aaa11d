-- A publish says which kind of machine made it and never writes over another
-- kind's figures (scripts/lib/kinds.lua, runfiles.plan): the kind of a run
-- from its machine record, where each kind publishes, the refusal of a
-- directory holding another kind's runs, and whole publishes in a stand-in
-- project whose results/ was published on KVM, from a KVM and a PVM machine
-- given through FTRUN_MACHINE_ROOT (so every machine tests both).
local t = require "tap"
package.path = ft.project_dir .. "/publish/lib/?.lua;" .. package.path -- the publish wing's page makers
local kinds = require "kinds"
local json = require "json"
local runfiles = require "runfiles"
local q = t.quote

-- the kind of a machine record, old and new
t.is(kinds.of { hypervisor = "KVMKVMKVM" }, "KVM", "CPUID's KVMKVMKVM, recorded before the kernel log was read: KVM")
t.is(kinds.of { hypervisor = "KVM", cpuid_hypervisor = "KVMKVMKVM" }, "KVM", "the kernel log's KVM")
t.is(kinds.of { hypervisor = "PVM", cpuid_hypervisor = "bhyve bhyve " }, "PVM", "PVM, whatever CPUID says")
t.is(kinds.of { hypervisor = "bhyve bhyve", cpuid_hypervisor = "bhyve bhyve" }, "bhyve bhyve",
  "a name the kernel gave is kept as given")
t.is(kinds.of { hypervisor = "" }, "none", "no hypervisor: none")
t.is(kinds.of { hypervisor = "unknown" }, nil, "unknown (no CAP_SYSLOG): no kind")
t.is(kinds.of(nil), nil, "no machine record: no kind")
t.is(kinds.slug("Hyper-V"), "hyper-v", "a kind's directory name")

-- where each kind publishes, in a stand-in tree
local dir = t.tmpdir()
local function doc(hypervisor)
  return json.encode { machine = { hypervisor = hypervisor }, rows = {} }
end
t.is(select(1, kinds.publish_dir(dir, "PVM")), dir .. "/results", "no published run yet: results/")
os.execute(("mkdir -p %s/results/pvm %s/results/odd"):format(q(dir), q(dir)))
t.write(dir .. "/results/results.json", doc("KVMKVMKVM"))
t.is(kinds.home(dir), "KVM", "results/ was published on KVM")
local d, page = kinds.publish_dir(dir, "KVM")
t.is(d, dir .. "/results", "KVM publishes into results/")
t.is(page, false, "results/ is no kind's own page")
d, page = kinds.publish_dir(dir, "PVM")
t.is(d, dir .. "/results/pvm", "PVM publishes into results/pvm/")
t.is(page, true, "with a page of its own")
t.is(table.concat(kinds.others_in(dir .. "/results", "PVM"), ","), "results.json (KVM)",
  "results/ holds a run of another kind than PVM")
t.is(#kinds.others_in(dir .. "/results", "KVM"), 0, "and none of another kind than KVM")
t.write(dir .. "/results/pvm/results.json", doc("PVM"))
t.write(dir .. "/results/odd/results.json", doc("PVM")) -- not named after its kind: not a kind's directory
local listed = {}
for _, p in ipairs(kinds.published(dir)) do listed[#listed + 1] = p.kind .. "=" .. p.dir end
t.is(table.concat(listed, " "), "KVM=results PVM=results/pvm", "the kinds published, results/'s first")

-- the kinds side by side (publish/lib/kindpage.lua): each kind's figures and the factor between them
local function run_doc(hypervisor, p1, p2r)
  local function r(column, values, case)
    local sorted = { table.unpack(values) }
    table.sort(sorted)
    local m = sorted[(#sorted + 1) // 2]
    return { case = case or "A", column = column, values = values, median = m, lo = sorted[1], hi = sorted[#sorted],
      n = #values }
  end
  local c_row = r("pass1", { p1[1] * 0.8, p1[2] * 0.8, p1[3] * 1.2 }, "C")
  return json.encode { machine = { hypervisor = hypervisor, kernel = "6.18", clocksource = "tsc" }, page_size = 4096,
    bytes = 1 << 30,
    rows = { r("pass1", p1), r("pass2r", p2r), c_row }, values = { { value = "first_touch", x = 100, lo = 90, hi = 110 } } }
end
t.write(dir .. "/results/results.json", run_doc("KVMKVMKVM", { 1800, 1810, 1820 }, { 15, 15, 15 }))
t.write(dir .. "/results/pvm/results.json", run_doc("PVM", { 12600, 12670, 12740 }, { 15, 15, 15 }))
local text, factors = require("kindpage").kinds(dir)
t.like(text, "- **KVM guest** (`results/`", "the KVM guest's line")
t.like(text, "- **PVM guest** (`results/pvm/`", "the PVM guest's line")
t.like(text, "A first touch on the PVM guest cost **7.00 [", "the factor, from the medians (12670 / 1810)")
t.like(text, "a later pass over touched pages 1.00 [1.00, 1.00] times", "the later pass's factor")
t.is(factors[1] and factors[1].kind, "PVM", "the factor's kind")
-- the kind's own page: cycle C against A, actouch's two effects, host's share
t.write(dir .. "/results/pvm/exp-actouch-results.json", json.encode { rows = {
  { case = "plain (A)", column = "oncpu", n = 10, values = {} } }, values = {
  { value = "timed_over_plain", x = 1.004, lo = 0.99, hi = 1.02 },
  { value = "after_munmap_over_fresh", x = 0.93, lo = 0.9, hi = 0.95 } } })
t.write(dir .. "/results/pvm/exp-host-results.json", json.encode { rows = {}, values = {
  { value = "host_share_4K", x = 41, measured = 41.2, lo = 38, hi = 44, n = 12 } } })
local found = require("kindpage").kind_findings(dir, "results/pvm")
t.like(found, "below cycle A's in 2 of 3", "cycle C against A, repetition by repetition")
t.like(found, "timing every page as cycle C does changed it by a factor of 1.00 [0.990, 1.02] (an interval holding 1: "
  .. "no effect shown)", "actouch: the timer's effect, none shown")
t.like(found, "a munmap of another buffer just before (as cycle C has) changed it by a factor of 0.930 [0.900, 0.950] "
  .. "(an interval without 1)", "actouch: the munmap's effect")
t.like(found, "41.2 [38.0, 44.0] % lies outside the guest kernel's account (12 repetitions", "host.lua's share")
local small = json.decode(t.read(dir .. "/results/pvm/results.json"))
small.knobs = { MIB = 4 }
t.write(dir .. "/results/pvm/results.json", json.encode(small))
t.like((require("kindpage").kinds(dir)), "differ in MIB (4 against nil), so no factor between them is computed",
  "runs of other knobs: no factor, and why")
os.execute("rm -rf " .. q(dir .. "/results/pvm"))
t.like((require("kindpage").kinds(dir)), "Runs of one machine kind are published (KVM)", "one kind: said so")
os.execute("rm -rf " .. q(dir))

-- Whole publishes in a stand-in project: the executable copied (its directory is the
-- project), scripts/ linked, results/ holding a KVM run and a README with the run's markers.
local LOGS = { KVM = "Hypervisor detected: KVM", PVM = "Hypervisor detected: PVM", unknown = nil }
local project = t.tmpdir()
os.execute(("mkdir -p %s/results && cp %s %s/ftrun && ln -s %s/scripts %s/scripts"):format(q(project),
  q(t.ftrun), q(project), q(ft.project_dir), q(project)))
t.write(project .. "/results/results.json", doc("KVMKVMKVM"))
local readme = "# results\n\n" .. table.concat({ runfiles.markers("cycles-A") }, "\nold\n") .. "\n"
t.write(project .. "/results/README.md", readme)
local function machine_root(kind)
  local root = ("%s/machine-%s"):format(project, kind)
  os.execute(("mkdir -p %s/proc && cp /proc/cpuinfo /proc/cmdline %s/proc/"):format(q(root), q(root)))
  local log = LOGS[kind]
  if log then t.write(root .. "/kernel.log", "<6>[    0.000000] Linux version 6.18\n<6>[    0.0] " .. log .. "\n") end
  return root
end
local RUN = "cycles.lua MIB=4 REPS=1 CYCLES=A PUBLISH=1"
local function publish(kind, extra)
  return t.run(("cd / && FTRUN_MACHINE_ROOT=%s %s %s %s"):format(q(machine_root(kind)), q(project .. "/ftrun"), RUN,
    extra or ""))
end

local out, code = publish("PVM")
t.is(code, 0, "a PVM machine publishes", out)
t.like(out, project .. "/results/pvm/cycles-A-results.json", "into results/pvm/")
local pvm_page = t.read(project .. "/results/pvm/README.md") or ""
t.like(pvm_page, "# ftrun's results on a PVM guest", "a page of its own, made by its first publish")
t.like(pvm_page, "## `cycles-A`\n\n<!-- ftrun results cycles-A: begin -->", "with the run's section")
t.like(pvm_page, "hypervisor PVM", "whose block says which kind made it")
t.like(pvm_page, "<!-- ftrun claims kinds: begin -->", "and the claims block comparing the kinds")
t.is(t.read(project .. "/results/README.md"), readme, "results/README.md untouched")
t.is(t.read(project .. "/results/cycles-A-results.json"), nil, "nothing of PVM's in results/")
t.is(kinds.of(json.decode(t.read(project .. "/results/pvm/cycles-A-results.json") or "{}").machine), "PVM",
  "the run's JSON records PVM")

out, code = publish("PVM")
t.is(code, 0, "a second PVM publish", out)
local _, sections = (t.read(project .. "/results/pvm/README.md") or ""):gsub("## `cycles%-A`", "")
t.is(sections, 1, "replaces the run's block, no second section")

out, code = publish("PVM", "RESULTS=" .. q(project .. "/results"))
t.is(code, 2, "a PVM publish told to write into KVM's results/ exits 2", out)
t.like(out, "holds another kind's published runs (results.json (KVM)); this machine is PVM", "naming both kinds")
t.ok(not out:find("warm-up", 1, true), "before anything is measured", out)

out, code = publish("KVM")
t.is(code, 0, "a KVM machine publishes", out)
t.like(out, project .. "/results/cycles-A-results.json", "into results/")
t.like(t.read(project .. "/results/README.md") or "", "hypervisor KVM", "pasting into results/README.md")
t.like(t.read(project .. "/results/pvm/README.md") or "", "hypervisor PVM", "PVM's page untouched")

out, code = publish("unknown")
t.is(code, 2, "a machine whose kind is unknown does not publish", out)
t.like(out, "this machine's kind is unknown", "and says why")

-- the refusals, each before anything is measured, each leaving the pages as they were
local function refused(name, want, kind, extra)
  local before = { t.read(project .. "/results/README.md"), t.read(project .. "/results/pvm/README.md") }
  local o, c = publish(kind or "PVM", extra)
  t.is(c, 2, name .. ": exit 2", o)
  t.like(o, want, name .. ": says why")
  t.ok(not o:find("warm-up", 1, true), name .. ": before anything is measured", o)
  t.is(t.read(project .. "/results/README.md"), before[1], name .. ": results/README.md as it was")
  t.is(t.read(project .. "/results/pvm/README.md"), before[2], name .. ": PVM's page as it was")
end
refused("README= another kind's page", "holds another kind's published runs (cycles-A-results.json (KVM)",
  "PVM", "README=" .. q(project .. "/results/README.md"))
refused("a KVM run told to paste into PVM's page", "holds another kind's published runs (cycles-A-results.json (PVM)",
  "KVM", "README=" .. q(project .. "/results/pvm/README.md"))
local pvm_text = t.read(project .. "/results/pvm/README.md")
t.write(project .. "/results/pvm/README.md", pvm_text:gsub("<!%-%- ftrun results cycles%-A: end %-%->\n", "", 1)
  .. "\nnotes written by hand\n")
refused("a kind's page whose end marker is gone", "has no markers for this run")
t.like(t.read(project .. "/results/pvm/README.md") or "", "notes written by hand", "the notes kept")
t.write(project .. "/results/pvm/README.md", pvm_text)
out, code = publish("PVM", "README=" .. q(project .. "/results/pvm/README.md"))
t.is(code, 0, "README= naming the kind's own page: as without it", out)
os.rename(project .. "/results/results.json", project .. "/results/results.json.kept")
t.write(project .. "/results/results.json", "{\"machine\":")
refused("a results/results.json that is no JSON", "results/results.json is not a results JSON")
os.rename(project .. "/results/results.json.kept", project .. "/results/results.json")

-- RESULTS elsewhere on a kind's first publish: the page made beside the files
local elsewhere = project .. "/elsewhere"
out, code = publish("PVM", "RESULTS=" .. q(elsewhere))
t.is(code, 0, "a PVM publish with RESULTS elsewhere", out)
t.like(t.read(elsewhere .. "/README.md") or "", "<!-- ftrun results cycles-A: begin -->", "its page beside its files")

-- a kind whose name is one of results/'s own directories
local odd = machine_root("odd")
t.write(odd .. "/kernel.log", "<6>[    0.000000] Linux version 6.18\n<6>[    0.0] Hypervisor detected: repeats\n")
out, code = t.run(("cd / && FTRUN_MACHINE_ROOT=%s %s %s"):format(q(odd), q(project .. "/ftrun"), RUN))
t.is(code, 2, "a kind named repeats: exit 2", out)
t.like(out, "cannot name a directory of results/ (repeats/ is taken", "naming the directory")

-- publish: a repeat of another kind beside a kind's published run is refused
os.execute(("mkdir -p %s/results/pvm/repeats/20990101T000000Z && cp %s/results/cycles-A-results.json "
  .. "%s/results/pvm/repeats/20990101T000000Z/results.json && cp %s/results/pvm/cycles-A-results.json "
  .. "%s/results/pvm/results.json"):format(q(project), q(project), q(project), q(project), q(project)))
local ok, err = pcall(require("evidence").runs, project, "results/pvm")
t.ok(not ok, "publish: a KVM repeat beside PVM's published run is refused")
t.like(tostring(err), "was made on KVM, the published run beside it on PVM", "naming both kinds")
-- and a repeat of the same kind with other knobs: not pooled into the kind's figures
local repeat_json = project .. "/results/pvm/repeats/20990101T000000Z/results.json"
local other = require("json").decode(t.read(project .. "/results/pvm/results.json") or "null") or {}
other.knobs = other.knobs or {}
other.knobs.MIB = 12345
t.write(repeat_json, require("json").encode(other))
ok, err = pcall(require("evidence").runs, project, "results/pvm")
t.ok(not ok, "publish: a repeat with another MIB beside the published run is refused")
t.like(tostring(err), "was run with MIB=12345, the published run beside it with MIB=", "naming the knob")
do -- a FIFO named like a results JSON beside a publish is passed over, not waited on (CR-1)
  local fifo_dir = project .. "/fifo"
  os.execute("mkdir -p " .. q(fifo_dir) .. " && mkfifo " .. q(fifo_dir .. "/x-results.json"))
  local others = kinds.others_in(fifo_dir, "KVM")
  t.is(#others, 0, "kinds.others_in beside a FIFO returns, naming no other kind")
end
os.execute("rm -rf " .. q(project))
t.done()
