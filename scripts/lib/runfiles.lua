-- Where a run's files go, and how they are written. A plain run writes a
-- directory of its own under results/runs/ (git-ignored) and points
-- results/runs/latest at it; only PUBLISH=1 writes the committed files in
-- results/ and pastes into results/README.md. Everything is decided and checked
-- before anything is mapped; at the end every file, README included, is
-- written to a temporary and renamed only when all are written
-- (ft.write_files), so a failed or interrupted run leaves nothing torn.
local ft = require "ft"
local knobs = require "knobs"

local runfiles = {}

-- The project: the directory of the executable (scripts/ and results/ sit beside it).
runfiles.root = ft.project_dir

-- Where a plain run goes. In a source tree (scripts/ beside the executable):
-- results/runs/, git-ignored. An installed ftrun (PREFIX/bin, its scripts in
-- PREFIX/share/ftrun): ./ftrun-runs/ in the current directory, since the
-- prefix is shared and usually not writable, and a run's results belong to
-- whoever ran it, where they ran it (as perf record's perf.data does).
function runfiles.runs_dir()
  local probe = io.open(runfiles.root .. "/scripts/lib/runfiles.lua")
  if probe then
    probe:close()
    return runfiles.root .. "/results/runs"
  end
  return (os.getenv("PWD") or ".") .. "/ftrun-runs"
end

-- The knobs every script takes for its output.
function runfiles.spec()
  return {
    { name = "PUBLISH", kind = "flag", default = false,
      desc = "1: write the committed files in results/ and paste into results/README.md" },
    { name = "RESULTS", kind = "path", default = "results/runs/<UTC time>-<run> (PUBLISH=1: results/)",
      desc = "directory for the results files" },
    { name = "README", kind = "path", default = "results/README.md", desc = "README pasted into on PUBLISH=1" },
  }
end

local function marker_lines(name)
  return ("<!-- ftrun results %s: begin -->"):format(name), ("<!-- ftrun results %s: end -->"):format(name)
end
runfiles.markers = marker_lines

local function read(path)
  local f, err = io.open(path)
  if not f then return nil, err end
  local text = f:read("a")
  f:close()
  return text
end

-- Replaces what stands between one run's marker lines; nil, why when absent.
local function replace_block(readme, name, text)
  local begin_mark, end_mark = marker_lines(name)
  local b = readme:find(begin_mark, 1, true)
  local e = readme:find(end_mark, 1, true)
  if not b or not e or e < b then
    return nil, ("no markers for this run (%s ... %s)"):format(begin_mark, end_mark)
  end
  if text:sub(-1) ~= "\n" then text = text .. "\n" end
  return readme:sub(1, b + #begin_mark - 1) .. "\n" .. text .. readme:sub(e)
end

-- script: "cycles.lua"; run: the run's name ("main", "thp-always", "exp-thp");
-- cfg: the knobs read. Returns the plan every later write follows.
function runfiles.plan(script, run, cfg)
  local plan = { script = script, run = run, publish = cfg.PUBLISH }
  if cfg.PUBLISH then
    plan.dir = cfg.given.RESULTS and cfg.RESULTS or runfiles.root .. "/results"
    plan.readme = cfg.given.README and cfg.README or runfiles.root .. "/results/README.md"
    local readme, err = read(plan.readme)
    if not readme then knobs.fail(script, ("PUBLISH=1: cannot read README=%s: %s"):format(plan.readme, err)) end
    local ok, why = replace_block(readme, run, "")
    if not ok then knobs.fail(script, ("PUBLISH=1: README=%s has %s"):format(plan.readme, why)) end
  elseif cfg.given.RESULTS then
    plan.dir = cfg.RESULTS
  else
    local runs = runfiles.runs_dir()
    plan.name = os.date("!%Y%m%dT%H%M%SZ") .. "-" .. run
    plan.dir, plan.latest = runs .. "/" .. plan.name, runs .. "/latest"
  end
  local ok, err = ft.mkdir(plan.dir)
  if not ok then knobs.fail(script, ("RESULTS=%s: cannot make the directory: %s"):format(plan.dir, err)) end
  local probe = ("%s/.ftrun-probe-%d"):format(plan.dir, ft.now_ns())
  local f, perr = io.open(probe, "w")
  if not f then knobs.fail(script, ("RESULTS=%s: cannot write there: %s"):format(plan.dir, perr)) end
  f:close()
  os.remove(probe)
  return plan
end

function runfiles.path(plan, file)
  return plan.dir .. "/" .. file
end

-- files: a list of {file name, text}; pastes: {run name = markdown} for the
-- README, used only when publishing. Raises on any failure (exit 1).
function runfiles.write(plan, files, pastes)
  if ft.interrupted() then error("interrupted", 0) end
  local list = {}
  for _, f in ipairs(files) do list[#list + 1] = { runfiles.path(plan, f[1]), f[2] } end
  if plan.publish and pastes then
    local readme = assert(read(plan.readme))
    for name, text in pairs(pastes) do
      readme = assert(replace_block(readme, name, text))
    end
    list[#list + 1] = { plan.readme, readme }
  end
  local ok, err = ft.write_files(list)
  if not ok then error(("%s: results not written: %s"):format(plan.script, err), 0) end
  if plan.latest then
    local linked, lerr = ft.symlink(plan.name, plan.latest)
    if not linked then io.stderr:write(plan.script, ": could not update ", plan.latest, ": ", lerr, "\n") end
  end
  local names = {}
  for _, f in ipairs(list) do names[#names + 1] = f[1] end
  io.stderr:write(plan.script, ": wrote ", table.concat(names, ", "), "\n")
end

return runfiles
