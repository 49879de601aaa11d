-- plot.lua: redraws the plots of every run in a directory from its files
-- alone (results JSON, cycle C's samples), running nothing.
--   ./ftrun plot.lua RUN_DIR      (make plots: the published results/)
local knobs = require "knobs"
local plots = require "plots"

local dir = ...
if not dir or dir == "--help" or dir == "-h" or select("#", ...) > 1 then
  print("usage: ./ftrun plot.lua RUN_DIR   (redraws every run's SVGs there from its results JSON)")
  os.exit(dir and dir:match("^%-") and 0 or 2, true)
end
local is_dir = io.open(dir .. "/.")
if not is_dir then knobs.fail("plot.lua", ("RUN_DIR=%s: not a directory"):format(dir)) end
is_dir:close()
local p = io.popen("ls -1 '" .. dir:gsub("'", "'\\''") .. "' 2>/dev/null")
local found = 0
for name in p:lines() do
  local prefix = name:match("^(.-)results%.json$")
  if prefix then
    local n, why = plots.draw(dir, prefix)
    if not n then knobs.fail("plot.lua", why) end
    io.stderr:write(("plot.lua: %s%s: %d plot(s)\n"):format(prefix, "results.json", n))
    found = found + 1
  end
end
p:close()
if found == 0 then knobs.fail("plot.lua", ("RUN_DIR=%s: no *results.json there"):format(dir)) end
