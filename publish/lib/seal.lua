-- What cannot be made again: each published kind's measurements (raw
-- files, JSON, samples, calibrations, the NUMA guest's files) as its
-- publish wrote them, in <dir>/SHA256SUMS, sha256sum's own format; and
-- results/archive/, files the code no longer makes, under its own. Files
-- the registry makes are left out: make docs-check makes them again.
local ev = require "evidence"
local kinds = require "kinds"
local shell = require "shell"
local stats = require "stats"
local read = require("textfile").read

local seal = {}

-- The sealed directories: each published kind's and the archive.
function seal.dirs(root)
  local out = {}
  for _, p in ipairs(kinds.published(root)) do out[#out + 1] = p.dir end
  if read(root .. "/results/archive/SHA256SUMS") then out[#out + 1] = "results/archive" end
  return out
end

-- dir's files (relative to it) that its seal covers: all but README.md,
-- SHA256SUMS, generated files, a user's runs and another sealed directory.
function seal.files(root, dir, generated)
  local inner = {}
  for _, d in ipairs(seal.dirs(root)) do
    if d ~= dir and d:sub(1, #dir + 1) == dir .. "/" then inner[#inner + 1] = d:sub(#dir + 2) .. "/" end
  end
  local base, names = root .. "/" .. dir .. "/", {}
  for _, path in ipairs((shell.find(base, "."))) do
    local rel = path:sub(#base + 1)
    local made = generated[dir .. "/" .. rel] -- an SVG stays sealed: without gnuplot it cannot be drawn again
    local skip = rel == "README.md" or rel == "SHA256SUMS" or made and not made.drawn or rel:match("^runs/")
    for _, d in ipairs(inner) do skip = skip or rel:sub(1, #d) == d end
    if not skip then names[#names + 1] = rel end
  end
  table.sort(names)
  return names
end

-- SHA256SUMS's text for dir.
function seal.sums(root, dir, generated)
  local names = seal.files(root, dir, generated)
  if #names == 0 then return "" end
  local text, ok = ev.output(("cd %s && sha256sum -- %s"):format(shell.path(root .. "/" .. dir),
    table.concat(stats.map(names, shell.path), " ")))
  if not ok then error("publish: sha256sum failed in " .. dir, 0) end
  return (text:gsub("(%x+  )%./", "%1"))
end

-- Every problem with the seals: sha256sum -c's complaints, and a file no
-- seal lists that the registry does not make.
function seal.check(root, generated)
  local problems = {}
  for _, dir in ipairs(seal.dirs(root)) do
    local sums = read(root .. "/" .. dir .. "/SHA256SUMS")
    if not sums then
      problems[#problems + 1] = dir .. "/SHA256SUMS: missing"
    else
      local said = ev.output(("cd %s && sha256sum --quiet -c SHA256SUMS 2>&1"):format(shell.path(root .. "/" .. dir)))
      for l in said:gmatch("[^\n]+") do
        if not l:match("^sha256sum: WARNING") then problems[#problems + 1] = dir .. "/" .. l end
      end
      local listed = {}
      for name in sums:gmatch("%x+  ([^\n]+)") do listed[name] = true end
      for _, name in ipairs(seal.files(root, dir, generated)) do
        if not listed[name] then
          problems[#problems + 1] = ("%s/%s: neither generated nor in %s/SHA256SUMS"):format(dir, name, dir)
        end
      end
    end
  end
  return problems
end

return seal
