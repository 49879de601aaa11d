-- numa/check.lua DIR MEMS KERNEL: on the host, after numa/boot.sh, checks what one guest sent
-- back (TAP): its layout check and tests/placement.lua passed, placement.lua ran clean, and every
-- prediction its records carry (expect_<field>) holds in every repetition. Writes DIR/guest.md:
-- the run's provenance and its table of page counts per node.
local ft = require "ft"
package.path = ft.project_dir .. "/tests/lib/?.lua;" .. package.path
local t = require "tap"
local json = require "json"

local dir, mems, kernel = ...
assert(dir and mems and kernel, "usage: ftrun numa/check.lua DIR MEMS KERNEL")

local read = require("textfile").read
local function command(cmd)
  local p = io.popen(cmd .. " 2>/dev/null")
  local out = p:read("a")
  p:close()
  return (out:gsub("%s+$", ""))
end

-- A TAP file from the guest: its exit code 0 and no "not ok" line.
local function guest_tap(name, what)
  local out, rc = read(("%s/%s.out"):format(dir, name)), read(("%s/%s.rc"):format(dir, name))
  local failing = {}
  for line in (out or ""):gmatch("[^\n]+") do
    if line:match("^not ok") then failing[#failing + 1] = line end
  end
  t.ok(out and tonumber(rc) == 0 and #failing == 0 and out:match("\n1%.%.%d+") ~= nil,
    ("%s (%s): %s"):format(what, mems, out and ("exit " .. tostring(rc):gsub("%s", "")) or "not sent back"),
    #failing > 0 and table.concat(failing, "\n") or (out or ""):sub(-400))
end
guest_tap("layout", "the guest's layout matches the one booted (checked against ft.machine() inside)")
guest_tap("tests", "tests/placement.lua passes in the guest")

local name = command(("ls %s/*-placement-results.json | head -n 1"):format(t.quote(dir)))
local doc = name ~= "" and json.decode(read(name))
t.ok(doc and tonumber(read(dir .. "/placement.rc")) == 0 and doc.verdict:match("^CHECKSUMS OK"),
  ("placement.lua ran in the guest (%s) and its read-backs matched"):format(mems),
  (read(dir .. "/placement.out") or "no placement.out"):sub(-600))
if not doc then t.done() end

-- Every prediction a record carries, in every repetition; node counts give or take the record's
-- slack (a malloc block's edge pages, shared with glibc's headers and neighbours).
local fields = {}
for _, case in ipairs(doc.reps) do
  if case.unsupported then
    t.ok(false, ("%s: not supported in the guest: %s"):format(case.case, case.unsupported))
  end
  for rep, r in ipairs(case.records) do
    local off, predicted = {}, false
    for key, want in pairs(r) do
      local field = type(key) == "string" and key:match("^expect_(.+)$")
      if field then
        local got, slack = r[field], field:match("^after_node_%d+$") and (r.after_slack or 0)
          or field:match("^node_%d+$") and (r.slack or 0) or 0
        if type(got) ~= "number" or math.abs(got - want) > slack then
          off[#off + 1] = ("%s %s, predicted %s%s"):format(field, tostring(got), want,
            slack > 0 and (" (give or take " .. slack .. ")") or "")
        end
        fields[field:gsub("%d+$", "N")], predicted = true, true
      end
    end
    table.sort(off)
    if not predicted then off[#off + 1] = "the record predicts nothing" end
    t.ok(#off == 0, ("%s (rep %d): as predicted"):format(case.case, rep), table.concat(off, "\n"))
  end
end
local missing = {}
for _, f in ipairs { "node_N", "after_node_N", "reuse_faults", "same_block", "numa_maps_off" } do
  if not fields[f] then missing[#missing + 1] = f end
end
t.ok(#missing == 0, "the records predict node counts, the pool's reuse and its reset, and numa_maps' agreement",
  "no prediction of " .. table.concat(missing, ", "))
if mems:find("[,]0$") or mems:find("^0,") or mems:find(",0,") then
  local said = false
  for _, case in ipairs(doc.reps) do if case.case:find("memoryless") then said = true end end
  t.ok(said, "the memoryless node has cases of its own")
end

-- The guest's provenance, and its table: page counts per node, no times.
local guesttable = require "guesttable"
local p = doc.provenance
-- the guest has no git: its ftrun records the commit its build did, which must be the host's
local host = require("provenance").built_tree(ft.project_dir)
t.is(p.git_commit, host.commit, "the guest's JSON records the commit the host's ftrun was built from")
local g = guesttable.provenance(doc, { qemu = command("qemu-system-x86_64 --version | head -n 1"),
  kernel_image = kernel:match("[^/]+$"), node_mib = mems, host_commit = host.commit, host_dirty = host.dirty,
  date = os.date("!%Y-%m-%d %H:%M UTC") })
local lines = guesttable.head(doc, g)
for _, l in ipairs(guesttable.lines(doc)) do lines[#lines + 1] = l end
local f = assert(io.open(dir .. "/provenance.json", "w"))
f:write(json.encode(g), "\n")
f:close()
f = assert(io.open(dir .. "/guest.md", "w"))
f:write(table.concat(lines, "\n"), "\n")
f:close()
print("# the guest's table: " .. dir .. "/guest.md")
t.done()
