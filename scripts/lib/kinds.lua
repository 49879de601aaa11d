-- The machine's kind (the hypervisor the kernel names: KVM, PVM, ...) and
-- where a kind's published runs live. The same benchmark costs seven times
-- more a first touch under one kind than another, so a publish never mixes
-- them: results/ holds the kind its results.json was made on, and every
-- other kind publishes into results/<kind>/ with its own README.md.
local json = require "json"
local shell = require "shell"
local read = require("textfile").read

local kinds = {}

-- CPUID's hypervisor strings, for runs that recorded that string as their
-- hypervisor (before the kernel log's name was read). A PVM guest answers
-- CPUID as bhyve, so bhyve is not mapped: only the kernel log names PVM.
local CPUID = { KVMKVMKVM = "KVM", ["Microsoft Hv"] = "Hyper-V", VMwareVMware = "VMware", XenVMMXenVMM = "Xen",
  TCGTCGTCGTCG = "TCG" }

-- A machine table's kind (ft.machine() or a results JSON's machine): "KVM",
-- "PVM", "none" (no hypervisor), or nil when it was not known.
function kinds.of(machine)
  local h = type(machine) == "table" and machine.hypervisor
  if type(h) ~= "string" or h == "unknown" then return nil end
  h = h:gsub("^%s+", ""):gsub("%s+$", "")
  if h == "" or h == "none" then return "none" end
  if machine.cpuid_hypervisor == nil and CPUID[h] then return CPUID[h] end
  return h
end

-- The directory name of a kind: results/pvm/ for PVM.
function kinds.slug(kind)
  return (kind:lower():gsub("[^%w]+", "-"))
end

-- A results JSON's kind: the kind, or nil and why (a file that cannot be
-- read, is no JSON, or records no kind); nil, nil when there is no file.
local ENOENT = 2
local function doc_kind(path)
  local text, why, code = read(path) -- a FIFO or a device named like a results JSON is refused, not waited on
  if not text and code == ENOENT then return nil end
  if not text then return nil, why end
  local ok, doc = pcall(json.decode, text)
  if not ok or type(doc) ~= "table" then return nil, path .. " is not a results JSON" end
  local kind = kinds.of(doc.machine)
  if not kind then return nil, path .. " records no machine kind" end
  return kind
end

-- The kind results/ was published on: its results.json's, or where that is
-- absent, the one kind its other results JSONs share; nil when nothing is
-- published there; nil and why when what is there names no single kind.
function kinds.home(root)
  local dir = root .. "/results"
  local kind, why = doc_kind(dir .. "/results.json")
  if kind or why then return kind, why end
  local found, named = nil, {}
  for _, f in ipairs(shell.list(dir, "results%.json$")) do
    local k, err = doc_kind(dir .. "/" .. f)
    if not k then return nil, err end
    if not named[k] then found, named[k] = k, f end
    if found ~= k then
      return nil, ("%s/ holds two kinds' runs (%s: %s, %s: %s)"):format(dir, named[found], found, f, k)
    end
  end
  return found
end

-- results/'s own directories, never a kind's.
kinds.RESERVED = { runs = true, repeats = true, numa = true }

-- Where a publish of this kind goes: results/ when it is the home kind (or
-- there is none yet), else results/<slug>/. Returns the directory and
-- whether it is a kind's own page; nil and why when results/ names no
-- single kind or the kind's name cannot be a directory.
function kinds.publish_dir(root, kind)
  local home, why = kinds.home(root)
  if why then return nil, why end
  if home == nil or home == kind then return root .. "/results", false end
  local slug = kinds.slug(kind)
  if kinds.RESERVED[slug] or not slug:match("%w") then
    return nil, ("the kind %q cannot name a directory of results/ (%s/ is taken, or has no letter)"):format(kind,
      slug)
  end
  return ("%s/results/%s"):format(root, slug), true
end

-- This machine's publish directory under root, relative ("results" or
-- "results/pvm"); nil and why when its kind is unknown.
function kinds.here(root)
  local kind = kinds.of(require("ft").machine())
  if not kind then
    return nil, "this machine's kind is unknown (the kernel log names it; reading it needs CAP_SYSLOG)"
  end
  local dir, why = kinds.publish_dir(root, kind)
  if not dir then return nil, why end
  return dir:sub(#root + 2)
end

-- Every published results JSON in dir made on another kind than kind, as
-- "file (KIND)"; a publish into dir would put two kinds' figures side by side.
function kinds.others_in(dir, kind)
  local out = {}
  for _, f in ipairs(shell.list(dir, "results%.json$")) do
    local k = doc_kind(dir .. "/" .. f)
    if k and k ~= kind then out[#out + 1] = ("%s (%s)"):format(f, k) end
  end
  return out
end

-- The kinds published under root: { {kind, dir, path of its default run} },
-- the home kind first, then the others by name.
function kinds.published(root)
  local out, home = {}, (kinds.home(root))
  if home then out[1] = { kind = home, dir = "results", path = root .. "/results/results.json" } end
  for _, d in ipairs(shell.list(root .. "/results", "^[%w-]+$")) do
    local path = ("%s/results/%s/results.json"):format(root, d)
    local k = doc_kind(path)
    if k and k ~= home and d == kinds.slug(k) then out[#out + 1] = { kind = k, dir = "results/" .. d, path = path } end
  end
  return out
end

-- Every kind's page under results/ (a README.md with the kinds' claims block),
-- as the directory relative to root, published default run or not.
function kinds.pages(root)
  local out = {}
  for _, d in ipairs(shell.list(root .. "/results", "^[%w-]+$")) do
    local text = read(("%s/results/%s/README.md"):format(root, d))
    if text and text:find("<!-- ftrun claims kinds: begin -->", 1, true) then out[#out + 1] = "results/" .. d end
  end
  return out
end

-- A kind's page, made by its first publish; each run's block is appended
-- under its own heading the first time that run is published.
function kinds.page(kind)
  local title = kind == "none" and "bare metal (no hypervisor)" or ("a %s guest"):format(kind)
  return ("# ftrun's results on %s\n\n"
    .. "The runs published on a machine of this kind (the kernel log's hypervisor: %s). The project's other\n"
    .. "published runs, and how to read a table, are in [results/README.md](../README.md); a publish on\n"
    .. "one kind writes none of another kind's runs, only generated blocks on its page.\n\n"
    .. "## Both kinds\n\n<!-- ftrun claims kinds: begin -->\n<!-- ftrun claims kinds: end -->\n\n"
    .. "## What this kind's runs say\n\n<!-- ftrun claims findings: begin -->\n<!-- ftrun claims findings: end -->\n")
    :format(title, kind)
end

function kinds.section(run, begin_mark, end_mark)
  return ("\n## `%s`\n\n%s\n%s\n"):format(run, begin_mark, end_mark) -- a code span: a run name is no figure
end

return kinds
