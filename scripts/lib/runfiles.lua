-- Where a run's files go, and how they are written. A plain run writes a
-- directory of its own under results/runs/ (git-ignored) and points
-- results/runs/latest at it; only PUBLISH=1 writes the committed files in
-- results/ and pastes into results/README.md (or, on a machine of another
-- kind than results/ holds, results/<kind>/: lib/kinds.lua). Everything is decided and checked
-- before anything is mapped; at the end every file, README included, is
-- written to a temporary and renamed only when all are written
-- (ft.write_files), so a failed or interrupted run leaves nothing torn.
local ft = require "ft"
local kinds = require "kinds"
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
      desc = "1: write the committed files in results/ and paste into results/README.md "
        .. "(a machine of another kind than results/ was published on: results/<kind>/ and its README.md)" },
    { name = "RESULTS", kind = "path",
      default = "results/runs/<UTC time>-<run> (PUBLISH=1: results/ or results/<kind>/)",
      desc = "directory for the results files" },
    { name = "README", kind = "path", default = "results/README.md (or results/<kind>/README.md)",
      desc = "README pasted into on PUBLISH=1" },
  }
end

local function marker_lines(name)
  return ("<!-- ftrun results %s: begin -->"):format(name), ("<!-- ftrun results %s: end -->"):format(name)
end
runfiles.markers = marker_lines

local read = require("textfile").read
local ENOENT = 2

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

runfiles.replace_block = replace_block

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

-- Every published results JSON of another kind in dir, as a refusal's words, or nil.
local function other_kinds(dir, kind, where)
  local others = kinds.others_in(dir, kind)
  if #others == 0 then return nil end
  return ("%s holds another kind's published runs (%s); this machine is %s, whose runs publish into %s")
    :format(dir, table.concat(others, ", "), kind, where)
end

-- PUBLISH=1: a publish says which kind made it and goes where that kind's
-- figures live (lib/kinds.lua); a directory or README beside another kind's
-- runs is refused. A kind's own page is made by its first publish, and a
-- run's section is added to it the first time; a page whose markers for
-- the run are damaged is refused, as results/README.md is.
local function publish_plan(script, run, cfg, plan)
  local function refuse(msg) knobs.fail(script, "PUBLISH=1: " .. msg) end
  local kind = kinds.of(ft.machine())
  if not kind then
    refuse("this machine's kind is unknown (the kernel log names the hypervisor, and reading it needs "
      .. "CAP_SYSLOG); a publish must say which kind made it")
  end
  local dir, kind_page = kinds.publish_dir(runfiles.root, kind)
  if not dir then refuse(kind_page) end
  plan.kind = kind
  plan.dir = cfg.given.RESULTS and cfg.RESULTS or dir
  -- a kind's page sits beside its files: RESULTS elsewhere has its page there
  local page_dir = kind_page and plan.dir or dir
  plan.readme = cfg.given.README and cfg.README or page_dir .. "/README.md"
  plan.page_ok = kind_page and dirname(plan.readme):gsub("/+$", "") == plan.dir:gsub("/+$", "")
  for _, d in ipairs { plan.dir, dirname(plan.readme) } do
    local why = other_kinds(d, kind, dir)
    if why then refuse(why) end
  end
  if ft.list_dir(plan.readme) then refuse(("README=%s is a directory"):format(plan.readme)) end
  local readme, err, code = read(plan.readme)
  if not readme and plan.page_ok and code == ENOENT then
    readme, plan.page = kinds.page(kind), true -- the kind's first publish
  end
  if not readme then refuse(("cannot read README=%s: %s"):format(plan.readme, tostring(err))) end
  -- only a kind's own page gains sections (a README of someone else's is refused as results/README.md is)
  plan.page_ok = plan.page_ok and readme:find("<!-- ftrun claims kinds: begin -->", 1, true) ~= nil
  local ok, why = replace_block(readme, run, "")
  local begin_mark, end_mark = marker_lines(run)
  if not ok and plan.page_ok and not readme:find(begin_mark, 1, true) and not readme:find(end_mark, 1, true) then
    ok, plan.page = true, true -- the run's first publish on this page: its section is added
  end
  if not ok then refuse(("README=%s has %s"):format(plan.readme, why)) end
  if plan.page and not ft.list_dir(plan.dir) and ft.list_dir(dirname(plan.dir)) then
    plan.make_dir = true -- made with its files, so a run that ends before leaves no empty directory
  end
end

-- script: "cycles.lua"; run: the run's name ("main", "thp-always", "exp-thp");
-- cfg: the knobs read. Returns the plan every later write follows.
-- NOWAIT=1 PUBLISH=1 is refused before the run takes any lock (a held lock would otherwise be
-- named first) and before measuring: the paste waits for the lock.
function runfiles.check_knobs(script, cfg)
  if cfg.PUBLISH and os.getenv("NOWAIT") == "1" then
    knobs.fail(script, "NOWAIT=1 PUBLISH=1: a publish pastes the README under the settings lock, "
      .. "waiting for it when another run holds it; unset NOWAIT to publish")
  end
end

function runfiles.plan(script, run, cfg)
  local plan = { script = script, run = run, publish = cfg.PUBLISH, quiet = cfg.QUIET }
  runfiles.check_knobs(script, cfg)
  if cfg.PUBLISH then
    publish_plan(script, run, cfg, plan)
  elseif cfg.given.RESULTS then
    plan.dir = cfg.RESULTS
  else -- the run's own directory is made when its files are written, exclusively
    local runs = runfiles.runs_dir()
    plan.name = os.date("!%Y%m%dT%H%M%SZ") .. "-" .. run
    plan.runs, plan.dir = runs, runs .. "/" .. plan.name
    plan.latest = { runs .. "/latest", runs .. "/latest-" .. script:gsub("%.lua$", "") }
  end
  local where = plan.runs or (plan.make_dir and dirname(plan.dir)) or plan.dir
  -- the path once, shortened (a RESULTS of 100 000 bytes would fill the screen twice): the reason
  -- is what follows the message's last ": "
  local function reason(err) return (tostring(err):match(".*: (.-)$") or tostring(err)) end
  local ok, err = ft.mkdir(where)
  if not ok then
    knobs.fail(script, ("RESULTS=%s: cannot make the directory: %s"):format(knobs.shown(where), reason(err)))
  end
  local probe = ("%s/.ftrun-probe-%d"):format(where, ft.now_ns())
  local f, perr = io.open(probe, "w")
  if not f then knobs.fail(script, ("RESULTS=%s: cannot write there: %s"):format(knobs.shown(where), reason(perr))) end
  f:close()
  os.remove(probe)
  -- the plots are drawn in TMPDIR (mktemp -t) after the measurement: checked now, as RESULTS is (WE-3)
  local tmp = os.getenv("TMPDIR")
  if not tmp or tmp == "" then tmp = "/tmp" end
  probe = ("%s/.ftrun-probe-%d"):format(tmp, ft.now_ns())
  f, perr = io.open(probe, "w")
  if not f then
    knobs.fail(script, ("TMPDIR=%s: cannot write there, where the plots are drawn: %s"):format(knobs.shown(tmp),
      reason(perr)))
  end
  f:close()
  os.remove(probe)
  return plan
end

-- A plain run's directory, made exclusively: a run started in the same
-- second as another gets <time>-<run>-2 (and so on), never the other's.
local function make_run_dir(plan)
  local base = plan.name
  for k = 1, 1000 do
    local name = k == 1 and base or ("%s-%d"):format(base, k)
    local path = plan.runs .. "/" .. name
    if os.execute("mkdir " .. require("shell").path(path) .. " 2>/dev/null") then
      plan.name, plan.dir = name, path
      return true
    end
    if ft.interrupted() then error("interrupted", 0) end
  end
  error(("%s: results not written: no free directory name under %s"):format(plan.script, plan.runs), 0)
end

function runfiles.path(plan, file)
  return plan.dir .. "/" .. file
end

-- A failure a run can meet (a full disk, a file in the way, the lock):
-- raised as an object whose text the message handler prints as it is, so
-- it exits 1 with its message and no traceback, which is for bugs.
local EXPECTED = { __tostring = function(e) return e.message end }
local function fail(msg) error(setmetatable({ message = msg }, EXPECTED), 0) end

-- files: a list of {file name, text}; pastes: {run name = markdown} for the
-- README, used only when publishing; draw(dir): the plots' {path, text} files
-- and their count, drawn before anything is published and renamed with the
-- rest in one step. Raises on any failure (exit 1); a run directory made
-- here is removed again when nothing could be written into it.
function runfiles.write(plan, files, pastes, draw)
  if ft.interrupted() then error("interrupted", 0) end
  local made = plan.runs and make_run_dir(plan)
  if plan.make_dir and not ft.list_dir(plan.dir) then
    local ok, err = ft.mkdir(plan.dir)
    if not ok then fail(("%s: results not written: %s"):format(plan.script, err)) end
    made = true
  end
  -- The directory made here goes again if the run ends before anything is in it (rmdir: only
  -- while empty): on any error or interrupt leaving this function, and on a fatal signal.
  if made then ft.temporary(plan.dir) end
  local _ <close> = setmetatable({}, { __close = function()
    if made then
      ft.temporary(plan.dir, false)
      os.remove(plan.dir)
    end
  end })
  local list = {}
  for _, f in ipairs(files) do list[#list + 1] = { runfiles.path(plan, f[1]), f[2] } end
  local drawn = 0
  if draw then
    local ok, plotted, n = pcall(draw, plan.dir)
    if not ok then error(plotted, 0) end -- an interrupt stays one, a bug keeps its message
    for _, f in ipairs(plotted) do list[#list + 1] = f end
    drawn = n
  end
  if plan.publish and pastes then
    -- the README is shared by every publishing run: read, paste and rename under the settings lock
    local locked, why = ft.lock_settings()
    if not locked then fail(("%s: results not written: %s"):format(plan.script, why)) end
    -- another kind may have published here since the plan was made
    local other = plan.kind and (other_kinds(plan.dir, plan.kind, plan.dir)
      or other_kinds(dirname(plan.readme), plan.kind, plan.dir))
    if other then fail(("%s: results not written: %s"):format(plan.script, other)) end
    local readme = read(plan.readme) or (plan.page_ok and kinds.page(plan.kind))
    if not readme then fail(("%s: results not written: cannot read %s"):format(plan.script, plan.readme)) end
    for name, text in pairs(pastes) do
      local b, e = marker_lines(name)
      if plan.page_ok and not readme:find(b, 1, true) and not readme:find(e, 1, true) then
        readme = readme .. kinds.section(name, b, e) -- a kind's page gains the run's section
      end
      local pasted, missing = replace_block(readme, name, text)
      if not pasted then fail(("%s: results not written: %s has %s"):format(plan.script, plan.readme, missing)) end
      readme = pasted
    end
    list[#list + 1] = { plan.readme, readme }
  end
  -- An interrupt can land after the renames (the hook raises when ft.write_files returns, or
  -- on any line below): what is on disk then says whether the set was published, and the
  -- run says so before it exits 130, rather than a bare "interrupted".
  local names = {}
  for i = 1, #files do names[#names + 1] = list[i][1] end
  if plan.publish and pastes then names[#names + 1] = plan.readme end
  local function link_latest()
    for _, link in ipairs(plan.latest or {}) do
      local linked, lerr = ft.symlink(plan.name, link)
      if not linked then
        io.stderr:write(plan.script .. ": could not update " .. link .. ": " .. tostring(lerr) .. "\n")
      end
    end
  end
  local function report()
    -- a test's SIGINT lands here, after the renames, raised by the hook as on the lines below
    -- (a spin: ft.sleep would raise it itself, and the hook again after the pcall)
    local pause = tonumber(os.getenv("FTRUN_TEST_PUBLISHED_PAUSE") or "")
    local until_ns = pause and ft.now_ns() + pause * 1e9
    if pause then io.stderr:write(plan.script .. ": paused after the renames (FTRUN_TEST_PUBLISHED_PAUSE)\n") end
    while until_ns and ft.now_ns() < until_ns do end
    link_latest()
    -- one write a line: the lines of two runs sharing a terminal do not interleave
    if not plan.quiet then
      io.stderr:write(plan.script .. ": wrote " .. table.concat(names, ", ") .. "\n")
      if drawn > 0 then io.stderr:write(("%s: drew %d plot(s) in %s\n"):format(plan.script, drawn, plan.dir)) end
    end
  end
  local called, ok, err = pcall(function()
    local written, why = ft.write_files(list)
    if written then report() end
    return written, why
  end)
  if not called then
    if not ft.interrupted() then error(ok, 0) end
    local new = 0
    for _, f in ipairs(list) do
      if read(f[1]) == f[2] then new = new + 1 end
    end
    if new == #list then
      link_latest() -- the whole set is on disk: latest names it, as after an uninterrupted write
      io.stderr:write(("%s: interrupted after the results were %s whole: %s%s\n"):format(plan.script,
        plan.publish and "published" or "written", table.concat(names, ", "),
        drawn > 0 and (" and %d plot(s)"):format(drawn) or ""))
    elseif new > 0 then
      io.stderr:write(("%s: interrupted while the results were renamed: %d of %d files in %s are new\n")
        :format(plan.script, new, #list, plan.dir))
    end
    error(ok, 0)
  end
  if not ok then fail(("%s: results not written: %s"):format(plan.script, err)) end
end

return runfiles
