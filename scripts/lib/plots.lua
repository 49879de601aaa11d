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
local textfile = require "textfile"
local units = require "units"

local plots = {}

-- Files about to be written with the plots (a run's samples), by path: read
-- as if they were on disk already, since the plots are drawn first.
local pending = {}

local function read(path)
  return pending[path] or textfile.read(path)
end
plots.read = read

local STYLE = [[
set terminal svg size %d,%d dynamic enhanced font "Sans,11" background rgb "white"
set output %s
set grid lc rgb "#dddddd"
set key top left opaque box
set title "%s" noenhanced
]]

-- Any text that goes into a .gp (titles, labels, the provenance comment):
-- JSON fields travel with a run, and gnuplot runs `...` inside double quotes
-- and a line that starts with !, so backquotes become quotes, control
-- characters (a newline above all) blanks, and the characters that would
-- end the string early (" and \) something that cannot.
function plots.text(s)
  return (tostring(s):gsub("[%c]", " "):gsub("[`\"]", "'"):gsub("\\", "/"))
end

function plots.quoted(s) return '"' .. plots.text(s) .. '"' end

-- A file name as a gnuplot string: "name". Text is made harmless by
-- plots.text, but a file name cannot be changed without naming another
-- file, and gnuplot runs `...` in a string, a name starting with | or <
-- as a pipe, and a " or newline ends the string: a name holding anything
-- but letters, digits and . _ + - is refused (an error naming it), never
-- drawn. Every plot's name goes through it (plots.add), and the data
-- files the plots read are named after it.
function plots.file_name(name)
  local bad = require("shell").unsafe_name(name)
  if bad then
    error(("plots not drawn: the file name %s holds %s, which gnuplot cannot be given safely")
      :format(require("knobs").shown(name), bad), 0)
  end
  return '"' .. name .. '"'
end

-- A plot: name, title, its data text and the gnuplot lines after the style.
function plots.add(list, name, title, data, body, w, h)
  list[#list + 1] = { name = name, data = data,
    script = STYLE:format(w or 800, h or 480, plots.file_name(name .. ".svg"), plots.text(title)) .. body .. "\n" }
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
set key below horizontal noenhanced
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

local function gnuplot_missing(dir)
  if os.execute("command -v gnuplot >/dev/null 2>&1") then return false end
  if not warned then
    io.stderr:write("ftrun: plots skipped: gnuplot is not installed (apt-get install gnuplot-nox, "
      .. "then redraw them from " .. dir .. " with the plot script ftrun --help lists)\n")
    warned = true
  end
  return true
end

local shell_quoted = require("shell").quote

-- The plot directories of runs killed while drawing (SIGKILL leaves them;
-- nothing else would remove them), this user's only: those named by a
-- process that is gone, and unnamed ones (from before the name held the
-- pid) an hour old.
local function sweep()
  local tmp = os.getenv("TMPDIR") or ""
  if tmp == "" then tmp = "/tmp" end
  local p = io.popen(("find %s -maxdepth 1 -type d -user \"$(id -u)\" -name 'ftrun-plots.*' "
    .. "\\( -name 'ftrun-plots.*.*' -o -mmin +60 \\) 2>/dev/null"):format(require("shell").path(tmp)))
  for path in p:lines() do
    local owner = path:match("/ftrun%-plots%.(%d+)%.[^/]+$")
    if not owner or not textfile.read("/proc/" .. owner .. "/stat") then
      os.execute("rm -rf -- " .. require("shell").path(path))
    end
  end
  p:close()
end

-- An SVG gnuplot finished: not empty, its last tag closed (a full disk or a
-- killed gnuplot leaves it short).
local function complete_svg(text)
  return text ~= nil and #text > 0 and text:match("</svg>%s*$") ~= nil
end

-- The SVG says which commit made its data, in a comment after the XML
-- declaration (a comment may not hold "--").
local function svg_stamped(svg, prov)
  local note = "<!-- ftrun " .. provenance.describe(prov):gsub("%-%-+", "-") .. " -->\n"
  local decl = svg:match("^<%?xml.-%?>\n")
  return decl and decl .. note .. svg:sub(#decl + 1) or note .. svg
end

-- Draws a run's plots without touching dir: returns every file they make
-- ({path, text}: data, gnuplot script and SVG of each) and their count, to be
-- renamed into dir in the same step as the run's other files. gnuplot runs in
-- a private temporary directory, each file of it named to the signal handler
-- (ft.temporary); through io.popen, so its warnings can be kept and shown
-- only when it fails. attached: files
-- the plots read that are not on disk yet ({path = text}); mark: a line
-- written across every plot (FORCE=1 on a run that is not clean).
function plots.render(doc, dir, prefix, attached, mark)
  if type(doc.rows) ~= "table" then return {}, 0 end -- a run that failed its checksums: nothing to draw
  pending = attached or {}
  local ok_specs, list = pcall(plots.specs, doc, dir, prefix)
  pending = {}
  if not ok_specs then error(list, 0) end
  local stamp = "# " .. plots.text(provenance.describe(doc.provenance)) .. "\n" -- where the plot sources came from
  for _, spec in ipairs(list) do
    plots.file_name(spec.name) -- a report module's own name, refused as add refuses it
    local label = mark and ('set label %s at screen 0.5, screen 0.97 center front tc rgb "#cc0000" noenhanced\n')
      :format(plots.quoted(mark)) or ""
    spec.data, spec.script = stamp .. spec.data, stamp .. label .. spec.script
    -- a report module that put JSON text into its lines without plots.text: refused, never run
    if spec.script:find("`", 1, true) then
      error(("plots not drawn: %s.gp would hold a backquote, which gnuplot runs as a command"):format(spec.name), 0)
    end
  end
  if #list == 0 or gnuplot_missing(dir) then return {}, 0 end
  local pid = textfile.read("/proc/self/stat"):match("^%d+")
  sweep()
  local p = io.popen("mktemp -d -t ftrun-plots." .. pid .. ".XXXXXX") -- in TMPDIR or /tmp
  local tmp = p and p:read("l")
  if p then p:close() end
  if not tmp then error("plots not drawn: cannot make a temporary directory", 0) end
  ft.temporary(tmp)
  local made = { tmp }
  local function clean()
    for i = #made, 1, -1 do
      os.remove(made[i])
      ft.temporary(made[i], false)
    end
  end
  local out = {}
  -- in a protected call: an interrupt raised anywhere in it still removes the temporaries
  local ok, err = pcall(function()
    for _, spec in ipairs(list) do
      local base = tmp .. "/" .. spec.name
      for _, f in ipairs { { ".dat", spec.data }, { ".gp", spec.script }, { ".svg", nil } } do
        made[#made + 1] = base .. f[1]
        ft.temporary(base .. f[1])
        if f[2] then
          local h = assert(io.open(base .. f[1], "wb"))
          assert(h:write(f[2]))
          assert(h:close())
        end
      end
      local g = io.popen(("cd %s && exec gnuplot %s 2>&1"):format(shell_quoted(tmp), shell_quoted(spec.name .. ".gp")))
      local said = g:read("a")
      local ran = g:close()
      if ft.interrupted() then error("interrupted", 0) end
      local svg = read(base .. ".svg")
      if not ran or not complete_svg(svg) then
        error(("gnuplot failed on %s/%s.gp%s%s"):format(dir, spec.name, ran and ": the SVG is incomplete" or "",
          said ~= "" and ":\n" .. said or ""), 0)
      end
      out[#out + 1] = { ("%s/%s.dat"):format(dir, spec.name), spec.data }
      out[#out + 1] = { ("%s/%s.gp"):format(dir, spec.name), spec.script }
      out[#out + 1] = { ("%s/%s.svg"):format(dir, spec.name), svg_stamped(svg, doc.provenance) }
    end
  end)
  local cleaned, why = pcall(clean)
  if not cleaned then -- an interrupt raised inside clean: the second pass finishes, then it goes on
    pcall(clean)
    error(why, 0)
  end
  if not ok then error(err, 0) end
  return out, #list
end

-- What the plots read of a results JSON: nil when it is all there, else
-- what is wrong, naming the field. A failed run's JSON (no rows) passes:
-- it has nothing to draw.
function plots.check(doc)
  local bad = require("resultsjson").invalid(doc)
  if bad then return bad end
  if type(doc.script) ~= "string" then return "not a results JSON: it has no script field" end
  if doc.rows == nil then return nil end
  if type(doc.run) ~= "string" then return "has no run name (field run)" end
  if type(doc.knobs) ~= "table" then return "has no knobs (field knobs)" end
  if type(doc.rows) ~= "table" then return ("field rows is a %s, expected a list"):format(type(doc.rows)) end
  for i, r in ipairs(doc.rows) do
    if type(r) ~= "table" or type(r.case) ~= "string" or type(r.column) ~= "string" then
      return ("rows[%d]: expected a case and a column name"):format(i)
    end
    if r.values ~= nil and type(r.values) ~= "table" then
      return ("rows[%d] (%s %s): field values is a %s, expected a list"):format(i, r.case, r.column, type(r.values))
    end
  end
  if type(doc.reps) ~= "table" then return "has no reps (every repetition's records), which the plots read" end
  for i, c in ipairs(doc.reps) do
    if type(c) ~= "table" or type(c.case) ~= "string" or (c.records ~= nil and type(c.records) ~= "table") then
      return ("reps[%d]: expected a case name and a list of records"):format(i)
    end
  end
  local check = reports.of(doc.script).check
  return check and check(doc) or nil
end

-- Redraws a run's plots in dir from its files (plot.lua): all of them
-- replaced together, or none. Returns the count, or nil and why.
function plots.draw(dir, prefix, mark)
  local path = ("%s/%sresults.json"):format(dir, prefix)
  local text = read(path)
  if not text then return nil, path .. ": cannot be read" end
  local doc, why = json.decode(text)
  if type(doc) ~= "table" then
    return nil, ("%s: not a results JSON: %s"):format(path, #text == 0 and "the file is empty"
      or tostring(why):gsub("^.-:%d+: ", ""))
  end
  local bad = plots.check(doc)
  if bad then return nil, path .. ": " .. bad end
  local files, n = plots.render(doc, dir, prefix, nil, mark)
  if n > 0 then
    local written, err = ft.write_files(files)
    if not written then error("plots not written: " .. err, 0) end
  end
  return n
end

return plots
