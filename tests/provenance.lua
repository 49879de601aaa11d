-- What every file records about the tree and the machine it was made on,
-- and make publish's refusal of a tree with uncommitted changes.
local t = require "tap"
-- The record holds perf_event_paranoid and kptr_restrict, which tests/paranoid.lua
-- changes under the settings lock: held for the whole file.
assert(require("sysfs").hold_lock())
local provenance = require "provenance"
local q = t.quote

local ROOT = ft.project_dir

do -- the record's fields, read from the machine
  local p = provenance.collect()
  for _, k in ipairs { "git_commit", "glibc", "cpu_vendor", "cpu_family", "cpu_model", "cpu_stepping",
    "perf_event_paranoid", "kptr_restrict", "thp_enabled", "thp_defrag", "kernel" } do
    t.ok(p[k] ~= nil and p[k] ~= "", "provenance records " .. k, tostring(p[k]))
  end
  t.is(p.glibc, (t.run("getconf GNU_LIBC_VERSION")):match("glibc%s+(%S+)"), "glibc as getconf says")
  local cpuinfo = t.read("/proc/cpuinfo")
  t.is(p.cpu_family, tonumber(cpuinfo:match("cpu family%s*:%s*(%d+)")), "CPU family as /proc/cpuinfo says")
  t.is(p.perf_event_paranoid, tonumber(t.read("/proc/sys/kernel/perf_event_paranoid")), "perf_event_paranoid as /proc says")
  t.is(p.kptr_restrict, tonumber(t.read("/proc/sys/kernel/kptr_restrict")), "kptr_restrict as /proc says")
  for _, k in ipairs(p) do t.ok(false, "no array part in the record: " .. tostring(k)) end
  local seen = {}
  for _, k in ipairs(provenance.ORDER) do seen[k] = true end
  for k in pairs(p) do t.ok(seen[k], "provenance.ORDER lists " .. k) end
  t.like(provenance.describe(p), "commit " .. p.git_commit, "the one-line record names the commit")
end

do -- a binary built from another commit than the tree's (a commit made without a rebuild): both recorded
  local build = require("ft").build -- a local: the global's fields are read-only to luacheck
  local built = build.commit
  build.commit = ("a"):rep(40)
  local p = provenance.collect()
  build.commit = built
  t.is(p.binary_commit, ("a"):rep(40), "the binary's commit recorded beside the tree's")
  t.like(provenance.describe(p), ", the binary built from " .. ("a"):rep(40), "and in the one-line record")
  local listed = table.concat(provenance.lines(p), "\n")
  t.like(listed, "binary_commit: " .. ("a"):rep(40), "and in the raw file's head")
  p.binary_commit = nil
  t.ok(not table.concat(provenance.lines(p), "\n"):find("binary_commit", 1, true),
    "a binary of the tree's own commit adds no line, as the heads published before it")
end

do -- the one-line record of a dirty tree published with ALLOW_DIRTY=1, and of an old record
  local line = provenance.describe { git_commit = "abc", git_dirty = true, git_diff_sha256 = ("f"):rep(64),
    git_changed = "core/pass.c", allow_dirty = true }
  t.like(line, "commit abc + uncommitted changes (diff sha256 ffffffffffffffff, published with ALLOW_DIRTY=1) "
    .. "in core/pass.c", "a dirty tree: the hash, ALLOW_DIRTY and the files")
  t.like(provenance.describe { git_commit = "abc", git_dirty = true }, "abc + uncommitted changes (not recorded which)",
    "an old record without the diff says so")
  t.like(provenance.describe { git_commit = "abc" }, "glibc ?;", "a field not recorded shows as ?")
end

do -- a scratch repository: clean, dirty (tracked, untracked), results/ ignored, ALLOW_DIRTY
  local dir = t.tmpdir()
  local git = "git -C " .. q(dir) .. " -c user.name=t -c user.email=t@t "
  t.run(git .. "init -q && mkdir -p " .. q(dir .. "/results") .. " && echo a > " .. q(dir .. "/a.c")
    .. " && echo r > " .. q(dir .. "/results/r.txt") .. " && " .. git .. "add -A && " .. git .. "commit -qm one")
  local function gate(env)
    return t.ftrun_run("-e " .. q(("os.exit(require('provenance').check_clean(%q))"):format(dir)), env)
  end
  local clean = provenance.tree(dir)
  t.is(clean.dirty, false, "a fresh commit is clean")
  t.is(select(2, gate()), 0, "the gate lets a clean tree through")
  t.write(dir .. "/results/r.txt", "rewritten by a publish\n")
  t.is(provenance.tree(dir).dirty, false, "a change under results/ leaves the tree clean (publishing writes there)")
  t.write(dir .. "/a.c", "b\n")
  local d1 = provenance.tree(dir)
  t.is(d1.dirty, true, "a changed tracked file makes it dirty")
  t.is(d1.changed, "a.c", "and is named")
  t.ok((d1.diff_sha256 or ""):match("^%x+$") ~= nil, "with a hash of the diff")
  local out, code = gate()
  t.is(code, 2, "the gate refuses a dirty tree with exit 2")
  t.like(out, "uncommitted changes in a.c", "naming the file")
  out, code = gate("ALLOW_DIRTY=1")
  t.is(code, 0, "ALLOW_DIRTY=1 lets it through")
  t.like(out, "ALLOW_DIRTY=1", "and says so")
  t.write(dir .. "/a.c", "c\n")
  t.ok(provenance.tree(dir).diff_sha256 ~= d1.diff_sha256, "another diff, another hash")
  t.write(dir .. "/a.c", "b\n")
  t.is(provenance.tree(dir).diff_sha256, d1.diff_sha256, "the same diff, the same hash")
  t.write(dir .. "/new.lua", "x\n")
  local d2 = provenance.tree(dir)
  t.like(d2.changed, "new.lua", "an untracked file is named too")
  t.ok(d2.diff_sha256 ~= d1.diff_sha256, "and changes the hash")
  -- an untracked dangling symlink: hashed as the link (its target's text, as git would store it), in silence
  os.execute("ln -s nowhere " .. q(dir .. "/dangling"))
  local tree = ("-e %s"):format(q(("print(require('provenance').tree(%q).diff_sha256)"):format(dir)))
  local said = t.ftrun_run(tree)
  t.ok(said:match("^%x+\n$") ~= nil, "a dangling symlink among the untracked files: no message from git", said)
  os.execute("rm " .. q(dir .. "/dangling") .. " && ln -s elsewhere " .. q(dir .. "/dangling"))
  t.ok(t.ftrun_run(tree) ~= said, "and a link to another target, another hash")
  os.execute("rm -rf " .. q(dir))
  t.is(provenance.tree(dir).commit, "unknown (not a git checkout)", "no git checkout: said so")
end

do -- a checkout another user owns: git refuses it (safe.directory), and the build's record answers
  local dir = t.tmpdir()
  local clone = dir .. "/p"
  local built = ft.build.commit
  t.ok(built:match("^%x+$") ~= nil, "the build recorded the commit it was built from", built)
  t.run(("git clone -q --shared %s %s && cp %s %s/ && cp -r %s/scripts %s/"):format(q(ROOT), q(clone), q(t.ftrun),
    q(clone), q(ROOT), q(clone)))
  local exe = q(clone .. "/" .. t.ftrun:match("([^/]+)$"))
  local who = t.run("id -u"):match("%d+")
  if who ~= "0" then
    t.ok(true, "# SKIP chown needs root")
  else
    t.run("chown -R nobody " .. q(clone))
    local _, refused = t.run("git -C " .. q(clone) .. " rev-parse HEAD")
    t.ok(refused ~= 0, "git refuses the checkout another user owns")
    local out = t.run(exe .. [[ -e 'local p = require("provenance").collect()
      io.write(p.git_commit, "|", tostring(p.git_source), "|", require("provenance").describe(p))']])
    local commit, source, line = out:match("^([^|]*)|([^|]*)|(.*)$")
    t.is(commit, built, "its run records the commit the build recorded", out)
    t.like(source or "", "the build (git could not read " .. clone, "and says where it came from")
    t.like(line or "", "commit " .. built, "the one-line record names it")
  end
  os.execute("rm -rf " .. q(dir))
end

do -- make publish runs the gate before any run
  local out = t.run("make -s -n -C " .. q(ROOT) .. " publish 2>/dev/null")
  local gate_at = out:find("check_clean", 1, true)
  local run_at = out:find("PUBLISH=1", 1, true)
  t.ok(gate_at and run_at and gate_at < run_at, "make publish checks the tree before its first PUBLISH=1 run", out)
end

do -- every file of a run records the commit: raw, summary, JSON, plot data and script; and compare.lua's output
  local dir = t.tmpdir()
  local commit = provenance.collect().git_commit
  local _, code = t.ftrun_run("cycles.lua QUICK=1 MIB=4 REPS=3 CYCLES=AC SLOW_NS=2000 RESULTS=" .. q(dir))
  t.is(code, 0, "a quick run")
  for _, f in ipairs { "quick-raw.txt", "quick-summary.md", "quick-results.json", "quick-reps.dat", "quick-reps.gp",
    "quick-reps.svg", "quick-C-pass1-pages.svg", "quick-C-cdf.svg", "quick-C-pass1-samples.i32.txt",
    "quick-C-pass2-samples.i32.txt" } do
    t.like(t.read(dir .. "/" .. f) or "", commit, f .. " records the commit")
  end
  local _, bad = t.run("xmllint --noout " .. q(dir .. "/quick-reps.svg") .. " 2>&1")
  t.is(bad, 0, "the stamped SVG is still XML")
  t.like(t.read(dir .. "/quick-C-pass1-samples.i32.txt") or "", "little-endian int32",
    "the samples' sidecar says what the bytes are")
  local json = require "json"
  local doc = json.decode(t.read(dir .. "/quick-results.json") or "{}")
  t.is(doc.provenance and doc.provenance.cpu_model, provenance.collect().cpu_model, "the JSON has the CPU model")
  local out = t.ftrun_run("compare.lua " .. q(dir .. "/quick-results.json") .. " " .. q(dir .. "/quick-results.json"))
  t.like(out, "compared by provenance: commit " .. commit, "compare.lua's output records the tree it ran from")
  os.execute("rm -rf " .. q(dir))
end

t.done()
