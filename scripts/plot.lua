-- plot.lua: redraws the plots of every run in a directory from its files
-- alone (results JSON, cycle C's samples), running nothing.
--   ./ftrun plot.lua RUN_DIR      (make plots: the published results/)
-- Options as every script takes them: NAME=value arguments or the
-- environment, unknown ones refused, --help.
local knobs = require "knobs"
local plots = require "plots"
local report = require "report"
local json = require "json"

local SCRIPT = "plot.lua"
local SPEC = {
  { name = "RUN_DIR", kind = "path", default = "(none: required)",
    desc = "directory whose *results.json runs are redrawn (also the first argument)" },
  { name = "FORCE", kind = "flag", default = false,
    desc = "1: draw a run whose verdict is not clean, each plot marked with its verdict" },
}
local ABOUT = "Redraws the SVGs (with their .dat and .gp files) of every run in RUN_DIR from its results\n"
  .. "JSON and samples alone; a run's plots are replaced together or not at all. A run whose\n"
  .. "verdict is not clean is refused (exit 2) unless FORCE=1."

local args = { ... }
if args[1] and not args[1]:find("=", 1, true) and not args[1]:match("^%-") then
  args[1] = "RUN_DIR=" .. args[1] -- the directory as a plain first argument
end
local cfg = knobs.setup(SCRIPT, ABOUT, SPEC, {}, args)
if not cfg.given.RUN_DIR then
  knobs.fail(SCRIPT, "RUN_DIR: expected a directory (./ftrun plot.lua RUN_DIR, or --help)")
end
local dir = cfg.RUN_DIR
local is_dir = io.open(dir .. "/.")
if not is_dir then knobs.fail(SCRIPT, ("RUN_DIR=%s: not a directory"):format(dir)) end
is_dir:close()

local read = require("textfile").read

-- Every run first: a JSON that is not one, lacks what the plots read, or has
-- a verdict that is not clean stops before anything is drawn.
local runs = {}
-- a run's plots are named after its file, and gnuplot is given those
-- names: a name it cannot carry (a " or newline, `...`, a leading |) stops
-- everything before anything is drawn
local shell = require "shell"
for _, name in ipairs(shell.list(dir, "results%.json$")) do
  local bad = shell.unsafe_name(name)
  if bad then
    knobs.fail(SCRIPT, ("%s/%s: this file name holds %s; its plots would be named after it and gnuplot cannot "
      .. "be given it safely: rename the file"):format(knobs.shown(dir), knobs.shown(name), bad))
  end
  runs[#runs + 1] = { prefix = name:match("^(.-)results%.json$"), path = dir .. "/" .. name }
end
if #runs == 0 then knobs.fail(SCRIPT, ("RUN_DIR=%s: no *results.json there"):format(dir)) end
for _, run in ipairs(runs) do
  local text = read(run.path) or ""
  local doc, why = json.decode(text)
  if type(doc) ~= "table" then
    knobs.fail(SCRIPT, ("%s: not a results JSON: %s"):format(run.path, #text == 0 and "the file is empty"
      or tostring(why):gsub("^.-:%d+: ", "")))
  end
  local bad = plots.check(doc)
  if bad then knobs.fail(SCRIPT, ("%s: %s"):format(run.path, bad)) end
  local verdict = tostring(doc.verdict)
  if not report.clean_verdict(doc.verdict) then
    if not cfg.FORCE then
      knobs.fail(SCRIPT, ("%s: its verdict is '%s', not a clean run (FORCE=1 draws it, marked)")
        :format(run.path, verdict))
    end
    run.mark = "verdict: " .. verdict
    io.stderr:write(("%s: FORCE=1: drawing %s, whose verdict is '%s'; its plots say so\n")
      :format(SCRIPT, run.path, verdict))
  end
end
local drawn, none = 0, {}
for _, run in ipairs(runs) do
  local n, why = plots.draw(dir, run.prefix, run.mark)
  if not n then knobs.fail(SCRIPT, why) end
  drawn = drawn + n
  if n == 0 then none[#none + 1] = run.path end
  io.stderr:write(("%s: %sresults.json: %d plot(s)\n"):format(SCRIPT, run.prefix, n))
end
if drawn == 0 then
  knobs.fail(SCRIPT, ("%s: no row a plot is drawn from (no plots)"):format(table.concat(none, ", ")))
end
