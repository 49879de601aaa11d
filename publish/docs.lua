-- publish/docs.lua: every generated page, block and derived file, made from
-- the committed measurements by the registry (publish/lib/registry.lua).
--   ./ftrun publish/docs.lua            make docs: write what differs
--   ./ftrun publish/docs.lua CHECK=1    make docs-check: make them into a
--       scratch copy and diff, check the seals and the figure rule; exit 1
--   ./ftrun publish/docs.lua SEAL=DIR   write DIR/SHA256SUMS (make publish)
-- The maintainers' alone: nothing in core/, runner/ or scripts/ requires it.
local ev = require "evidence"
local ft = require "ft"
local knobs = require "knobs"
local lint = require "lint"
local registry = require "registry"
local seal = require "seal"
local shell = require "shell"

local SCRIPT = "docs.lua"
local cfg = knobs.setup(SCRIPT, "every generated document, made from the committed measurements", {
  { name = "CHECK", kind = "flag", default = false, desc = "1: write nothing; diff what make docs would write" },
  { name = "SEAL", kind = "path", default = "none", desc = "a published kind's directory or results/archive: "
    .. "write its SHA256SUMS of the files no registry entry makes" },
  { name = "ROOT", kind = "path", default = "the project", desc = "the tree read and written" },
}, {}, { ... })
local root = cfg.given.ROOT and cfg.ROOT:gsub("/+$", "") or ft.project_dir
-- compare.lua and every --help run under this ftrun, by absolute path
local self = ft.project_dir .. "/ftrun"
local ftrun = shell.quote(self)

local function fail(msg)
  io.stderr:write(SCRIPT, ": ", msg, "\n")
  os.exit(1, true)
end

if cfg.given.SEAL then
  local dir = cfg.SEAL:gsub("/+$", "")
  local ok = false
  for _, d in ipairs(seal.dirs(root)) do ok = ok or d == dir end
  if not ok and dir ~= "results/archive" then
    knobs.fail(SCRIPT, ("SEAL=%s: expected a sealed directory (%s)"):format(cfg.SEAL,
      table.concat(seal.dirs(root), ", ")))
  end
  local written, err = ft.write_files { { root .. "/" .. dir .. "/SHA256SUMS",
    seal.sums(root, dir, registry.generated(root, ftrun)) } }
  if not written then fail("not written: " .. err) end
  io.stderr:write(SCRIPT, ": wrote ", dir, "/SHA256SUMS\n")
  os.exit(0, true)
end

local ok, targets = pcall(registry.targets, root, ftrun)
if not ok then fail(tostring(targets) .. (cfg.CHECK and "\nrun make docs" or "")) end
local made, _, unmade
ok, made, _, unmade = pcall(registry.make, root, ftrun, targets, cfg.CHECK)
if not ok then fail(tostring(made)) end

if not cfg.CHECK then
  local files = {}
  for _, m in ipairs(made) do
    if m.new ~= m.old then files[#files + 1] = { root .. "/" .. m.file, m.new } end
  end
  local written, err = ft.write_files(files)
  if not written then fail("not written: " .. err) end
  for _, f in ipairs(files) do io.stderr:write(SCRIPT, ": wrote ", f[1]:sub(#root + 2), "\n") end
  os.exit(0, true)
end

-- The check: each differing file made into a scratch directory, then diff -u.
local problems, diffs = unmade, {}
local scratch = assert(shell.mkdtemp("ftrun-docs"))
ft.temporary(scratch)
for i, m in ipairs(made) do
  if m.new ~= m.old then
    local copy = ("%s/%d"):format(scratch, i)
    local h = assert(io.open(copy, "wb"))
    h:write(m.new)
    h:close()
    diffs[#diffs + 1] = ev.output(("diff -u --label %s --label %s %s %s 2>&1"):format(shell.quote("a/" .. m.file),
      shell.quote("b/" .. m.file), m.old and shell.path(root .. "/" .. m.file) or "/dev/null", shell.path(copy)))
    os.remove(copy)
  end
end
os.remove(scratch)
for _, p in ipairs(seal.check(root, registry.generated(root, ftrun, targets))) do problems[#problems + 1] = p end
for _, p in ipairs(lint.check(root)) do problems[#problems + 1] = p end
if #diffs > 0 then
  io.stderr:write(SCRIPT, ": the generated documents are not as the committed data make them: run make docs\n",
    table.concat(diffs))
end
if #problems > 0 then
  io.stderr:write(SCRIPT, ": ", table.concat(problems, "\n" .. SCRIPT .. ": "), "\n")
end
if #diffs + #problems > 0 then os.exit(1, true) end
print(SCRIPT .. ": every generated document is as the data make it")
