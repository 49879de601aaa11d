-- Pictures of a run, drawn by gnuplot from the run's files alone: for each
-- plot a data file (NAME.dat), the gnuplot script (NAME.gp) and the SVG,
-- side by side, so anyone can restyle one without running anything again.
-- plots.draw(dir, prefix) draws a run's plots; scripts/plot.lua and `make
-- plots` call it on any directory of results. Which plots a run has is its
-- script's report module's say (reports.lua), with plots.generic for a
-- script that has none; this module knows no script.
local ft = require "ft"
local json = require "json"
local provenance = require "provenance"
local reports = require "reports"
local stats = require "stats"
local units = require "units"

local plots = {}

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end
plots.read = read

local STYLE = [[
set terminal svg size %d,%d dynamic enhanced font "Sans,11" background rgb "white"
set output "%s.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "%s" noenhanced
]]

function plots.quoted(s) return '"' .. tostring(s):gsub('"', "'") .. '"' end

-- A plot: name, title, its data text and the gnuplot lines after the style.
function plots.add(list, name, title, data, body, w, h)
  list[#list + 1] = { name = name, data = data,
    script = STYLE:format(w or 800, h or 480, name, title:gsub('"', "'")) .. body .. "\n" }
end

-- The row of a case and column in a run's JSON.
function plots.row(doc, case, column)
  for _, r in ipairs(doc.rows) do
    if r.case == case and r.column == column then return r end
  end
end

-- The records of a case, and its params.
function plots.records(doc, case)
  for _, c in ipairs(doc.reps or {}) do -- a JSON from before the harness has none
    if c.case == case then return c.records, c.params or {} end
  end
  return {}
end

-- Medians with their intervals as bars, a group per case and a bar per
-- column; cases that did not run are left out.
function plots.bars(list, doc, prefix, columns, ylabel, title)
  local lines = { "# case  " .. table.concat(stats.map(columns, function(c) return c .. "_median lo hi" end), "  ") }
  for _, c in ipairs(doc.reps) do
    if not c.unsupported then
      local cells = { plots.quoted(c.case) }
      for _, col in ipairs(columns) do
        local r = plots.row(doc, c.case, col)
        cells[#cells + 1] = r and ("%s %s %s"):format(units.exact(r.median), units.exact(r.lo), units.exact(r.hi))
          or "0 0 0"
      end
      lines[#lines + 1] = table.concat(cells, " ")
    end
  end
  local using = {}
  for i, col in ipairs(columns) do
    local first = plots.row(doc, doc.reps[1].case, col) or {}
    using[#using + 1] = ('"%s.dat" using %d:%d:%d%s title %s'):format(prefix .. "plot", 3 * i - 1, 3 * i, 3 * i + 1,
      i == 1 and ":xtic(1)" or "", plots.quoted(first.label or col))
  end
  plots.add(list, prefix .. "plot", title, table.concat(lines, "\n") .. "\n", ([[
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.7 border -1
set ylabel %s
set xtics rotate by -20 noenhanced
set yrange [0:*]
set key top right
plot ]]):format(plots.quoted(ylabel)) .. table.concat(using, ", \\\n  "), 900, 500)
end

-- The columns of a run in a unit, in the order of its rows.
function plots.columns_in(doc, unit)
  local out, seen = {}, {}
  for _, r in ipairs(doc.rows) do
    if r.unit == unit and not seen[r.column] then seen[r.column] = true; out[#out + 1] = r.column end
  end
  return out
end


-- A run whose script's report draws nothing of its own: its ns/page
-- columns (or its page counts) as bars.
function plots.generic(list, doc, _, prefix)
  local cols = plots.columns_in(doc, "ns/page")
  local ylabel = "ns per page (median and interval)"
  if #cols == 0 then cols, ylabel = plots.columns_in(doc, "pages"), "pages (median and interval)" end
  if #cols > 0 then plots.bars(list, doc, prefix, cols, ylabel, doc.about .. " (" .. doc.run .. ")") end
end

-- The plots a run's JSON gives.
function plots.specs(doc, dir, prefix)
  local list = {}
  local rep = reports.of(doc.script)
  if rep.plots then rep.plots(list, doc, dir, prefix) else plots.generic(list, doc, dir, prefix) end
  return list
end

local warned = false

-- Draws a run's plots into dir: writes each data file and gnuplot script,
-- then runs gnuplot on it. Without gnuplot, says so once and returns.
function plots.draw(dir, prefix)
  local path = ("%s/%sresults.json"):format(dir, prefix)
  local doc = json.decode(read(path) or "null")
  if type(doc) ~= "table" or type(doc.script) ~= "string" then return nil, path .. ": not a results JSON" end
  if type(doc.rows) ~= "table" then return 0 end -- a run that failed its checksums: nothing to draw
  local list = plots.specs(doc, dir, prefix)
  if not os.execute("command -v gnuplot >/dev/null 2>&1") then
    if not warned then
      io.stderr:write("ftrun: plots skipped: gnuplot is not installed (apt-get install gnuplot-nox, "
        .. "then ./ftrun plot.lua " .. dir .. ")\n")
      warned = true
    end
    return 0
  end
  local files, stamp = {}, "# " .. provenance.describe(doc.provenance) .. "\n"
  for _, p in ipairs(list) do
    files[#files + 1] = { ("%s/%s.dat"):format(dir, p.name), stamp .. p.data }
    files[#files + 1] = { ("%s/%s.gp"):format(dir, p.name), stamp .. p.script }
  end
  local ok, err = ft.write_files(files)
  if not ok then error("plots not written: " .. err, 0) end
  local q = "'" .. dir:gsub("'", "'\\''") .. "'"
  for _, p in ipairs(list) do
    if not os.execute(("cd %s && gnuplot %s.gp"):format(q, p.name)) then
      error(("gnuplot failed on %s/%s.gp"):format(dir, p.name), 0)
    end
  end
  return #list
end

return plots
