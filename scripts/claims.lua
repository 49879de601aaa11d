-- claims.lua: the results prose's claims, computed from the committed JSON
-- (results/results.json, results/repeats/*/results.json, the THP runs and
-- the experiments) and written between their markers in results/README.md
-- and README.md; `make publish` runs it after the runs. CHECK=1 writes
-- nothing and exits 1 naming every claim the prose states differently from
-- the data, and every number typed by hand in the results prose.
local claims = require "claims"
local ft = require "ft"
local knobs = require "knobs"
local read = require("textfile").read

local SCRIPT = "claims.lua"
local spec = {
  { name = "CHECK", kind = "flag", default = false,
    desc = "1: write nothing; exit 1 naming every claim the prose states differently from the data" },
  { name = "SEAL", kind = "path", default = "none",
    desc = "a published kind's directory (results, results/pvm): write its SHA256SUMS of the files a publish wrote "
      .. "there, and nothing else (make publish and make publish-kind end with it)" },
  { name = "VET", kind = "flag", default = false,
    desc = "1: write doc/vetted-prose.sha256 from the documents' hand-written paragraphs as they stand, once a "
      .. "person has read them against the data, and print each newly vetted one" },
  { name = "ROOT", kind = "path", default = "the project (beside ftrun)",
    desc = "the tree whose results/ is read and whose README files are written or checked" },
}
local cfg = knobs.setup(SCRIPT, "every claim of the results prose, computed from the committed JSON, and the "
  .. "documents' other generated blocks; the maintainers', run in a checkout (make install leaves it out)", spec, {},
  { ... })
local root = cfg.given.ROOT and cfg.ROOT or ft.project_dir
local self = arg and arg[-1] or "ftrun"
-- compare.lua runs from ROOT, under the ftrun running this script; a
-- relative path is taken from the real working directory (a parent may
-- leave $PWD naming another)
if not self:find("/", 1, true) then self = ft.project_dir .. "/ftrun"
elseif self:sub(1, 1) ~= "/" then
  local p = io.popen("pwd -P")
  self = (p and p:read("l") or ".") .. "/" .. self
  if p then p:close() end
end
local ftrun = require("shell").quote(self)

-- SEAL and VET each write one file, and only when asked: make claims
-- never seals what it could have been given edited.
local function write_one(path, text, also)
  local written, err = ft.write_files { { root .. "/" .. path, text } }
  if not written then
    io.stderr:write(SCRIPT, ": not written: ", err, "\n")
    os.exit(1, true)
  end
  for _, l in ipairs(also or {}) do io.stderr:write(SCRIPT, ": vetted: ", l, "\n") end
  io.stderr:write(SCRIPT, ": wrote ", root, "/", path, "\n")
  os.exit(0, true)
end
if cfg.given.SEAL then
  if cfg.CHECK or cfg.VET then
    knobs.fail(SCRIPT, "SEAL=" .. cfg.SEAL .. ": expected alone, without CHECK=1 or VET=1")
  end
  local dir = cfg.SEAL:gsub("/+$", "")
  local path, text = claims.seal(root, dir)
  if not path then knobs.fail(SCRIPT, "SEAL=" .. cfg.SEAL .. ": " .. text) end
  if text ~= read(root .. "/" .. path) then
    io.stderr:write(SCRIPT, ": ", path, " changes: the claims check fails until a person has read the documents' ",
      "prose against these files (then ./ftrun claims.lua VET=1)\n")
  end
  write_one(path, text)
end
if cfg.VET then
  if cfg.CHECK then knobs.fail(SCRIPT, "VET=1: expected without CHECK=1") end
  local path, text = claims.vet(root)
  local before, fresh = {}, {}
  for l in (read(root .. "/" .. path) or ""):gmatch("[^\n]+") do before[l] = true end
  for l in text:gmatch("[^\n]+") do if not before[l] then fresh[#fresh + 1] = l:match("^%x+  (.*)$") end end
  write_one(path, text, fresh)
end

local ok, result = pcall(cfg.CHECK and claims.check or claims.write, root, ftrun)
if not ok then
  io.stderr:write(SCRIPT .. ": " .. tostring(result) .. "\n")
  os.exit(1, true)
end
if cfg.CHECK then
  if #result > 0 then
    io.stderr:write(SCRIPT, ": the prose and the data disagree:\n  ", table.concat(result, "\n  "), "\n")
    os.exit(1, true)
  end
  print(SCRIPT .. ": every claim matches the data")
else
  local written, err = ft.write_files(result)
  if not written then
    io.stderr:write(SCRIPT, ": not written: ", err, "\n")
    os.exit(1, true)
  end
  for _, f in ipairs(result) do io.stderr:write(SCRIPT, ": wrote ", f[1], "\n") end
end
