-- Pictures of a run, drawn by gnuplot from the run's files alone: for each
-- plot a data file (NAME.dat), the gnuplot script (NAME.gp) and the SVG,
-- side by side, so anyone can restyle one without running anything again.
-- plots.draw(dir, prefix) draws a run's plots; scripts/plot.lua and `make
-- plots` call it on any directory of results.
local ft = require "ft"
local json = require "json"
local stats = require "stats"
local units = require "units"

local plots = {}

-- Cycle C's per-page histograms: HIST_PER_OCTAVE bins per doubling from
-- 2^HIST_FROM ns (bin 1 holds everything below, the last everything above).
plots.HIST_PER_OCTAVE, plots.HIST_FROM, plots.HIST_BINS = 4, 3, 4 * 18 + 2

-- The histogram of a samples object: a list of HIST_BINS counts.
function plots.histogram(s)
  return s:histogram(plots.HIST_PER_OCTAVE, plots.HIST_FROM, plots.HIST_BINS)
end

-- The upper edge of histogram bin k in ns.
local function edge(k) return 2 ^ (plots.HIST_FROM + (k - 1) / plots.HIST_PER_OCTAVE) end

-- A samples object as little-endian int32 ns, one per page, in page order.
function plots.pack_samples(s)
  local parts = {}
  for i = 1, #s do parts[i] = string.pack("<i4", math.min(s[i], 0x7fffffff)) end
  return table.concat(parts)
end

local function unpack_samples(bytes)
  local out, n = {}, #bytes // 4
  for i = 1, n do out[i] = string.unpack("<i4", bytes, 4 * i - 3) end
  return out
end

-- Files about to be written with the plots (a run's samples), by path: read
-- as if they were on disk already, since the plots are drawn first.
local pending = {}

local function read(path)
  if pending[path] then return pending[path] end
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

local STYLE = [[
set terminal svg size %d,%d dynamic enhanced font "Sans,11" background rgb "white"
set output "%s.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "%s" noenhanced
]]

local function quoted(s) return '"' .. tostring(s):gsub('"', "'") .. '"' end

-- A plot: name, title, its data text and the gnuplot lines after the style.
local function plot(list, name, title, data, body, w, h)
  list[#list + 1] = { name = name, data = data,
    script = STYLE:format(w or 800, h or 480, name, title:gsub('"', "'")) .. body .. "\n" }
end

local function row_of(doc, case, column)
  for _, r in ipairs(doc.rows) do
    if r.case == case and r.column == column then return r end
  end
end

local function records_of(doc, case)
  for _, c in ipairs(doc.reps or {}) do -- a JSON from before the harness has none
    if c.case == case then return c.records end
  end
  return {}
end

-- cycles.lua ---------------------------------------------------------------

-- Where the slow pages sit: the pages cut into at most 1024 bins, each drawn
-- as its min, median and max, with the pages above SLOW_NS counted per bin.
local function page_map(list, doc, dir, prefix, pass)
  local path = ("%s/%sC-%s-samples.i32"):format(dir, prefix, pass)
  local bytes = read(path)
  if not bytes or #bytes ~= 4 * doc.pages then
    io.stderr:write(("plots: %s's page map skipped: %s %s\n"):format(pass, path,
      bytes and ("holds %d samples, the run had %d pages"):format(#bytes // 4, doc.pages) or "is missing"))
    return
  end
  local s = unpack_samples(bytes)
  local per_bin = math.max(1, -(-#s // 1024))
  local slow = doc.knobs.SLOW_NS
  local lines = { ("# page  min_ns  median_ns  max_ns  pages_above_%d_ns  (bins of %d pages, %d pages, the last "
    .. "repetition's samples)"):format(slow, per_bin, #s) }
  for first = 1, #s, per_bin do
    local bin = table.move(s, first, math.min(first + per_bin - 1, #s), 1, {})
    local above = 0
    for _, x in ipairs(bin) do if x > slow then above = above + 1 end end
    lines[#lines + 1] = ("%d %d %s %d %d"):format(first - 1, stats.min(bin), units.exact(stats.median(bin)),
      stats.max(bin), above)
  end
  local name = ("%sC-%s-pages"):format(prefix, pass)
  local title = ("cycle C, %s: ns per page against page index (%s)"):format(pass, doc.run)
  plot(list, name, title, table.concat(lines, "\n") .. "\n", ([[
set logscale y
set yrange [10:*]
set key below horizontal
set xlabel "page index"
set ylabel "ns per page (store + one timestamp)"
set y2label "pages above SLOW\\_NS per bin"
set y2tics
set ytics nomirror
set arrow from graph 0, first %d to graph 1, first %d nohead dt 2 lc rgb "#aa0000"
set label "SLOW\\_NS = %d ns" at graph 0.01, first %d offset 0,0.6 tc rgb "#aa0000"
plot "%s.dat" using 1:5 axes x1y2 with steps lw 0.8 lc rgb "#e8a060" title "pages above SLOW\\_NS (right)", \
  "" using 1:2:4 with filledcurves fs transparent solid 0.6 lc rgb "#9db4dd" title "min to max of each bin", \
  "" using 1:3 with lines lw 1.5 lc rgb "#1f4e99" title "median of each bin"]])
    :format(slow, slow, slow, slow, name))
end

-- The distribution of per-page time over all repetitions, from the
-- histograms, beside a THP=always run in the same directory.
local function page_cdf(list, doc, dir, prefix)
  local runs = { { doc, "" } }
  if prefix == "" then
    local thp = json.decode(read(dir .. "/thp-always-results.json") or "null")
    if thp then runs[2] = { thp, "THP=always " } end
  end
  local columns, titles = {}, {}
  for _, run in ipairs(runs) do
    for _, pass in ipairs { "pass1", "pass2" } do
      local total, counts = 0, {}
      for k = 1, plots.HIST_BINS do counts[k] = 0 end
      for _, r in ipairs(records_of(run[1], "C")) do
        for k, c in ipairs(r[pass .. "_hist"] or {}) do counts[k] = counts[k] + c; total = total + c end
      end
      if total > 0 then
        local cum, col = 0, {}
        for k = 1, plots.HIST_BINS do cum = cum + counts[k]; col[k] = cum / total end
        columns[#columns + 1] = col
        titles[#titles + 1] = run[2] .. pass
      end
    end
  end
  if #columns == 0 then return end
  local lines = { "# ns (upper edge of the bin)  " .. table.concat(titles, "  ") .. "  (share of pages at or below)" }
  for k = 1, plots.HIST_BINS - 1 do
    local cells = { units.exact(edge(k)) }
    for _, col in ipairs(columns) do cells[#cells + 1] = units.exact(col[k]) end
    lines[#lines + 1] = table.concat(cells, " ")
  end
  local curves = {}
  for i, t in ipairs(titles) do
    curves[#curves + 1] = ('"%s.dat" using 1:%d with steps lw 1.5 title %s'):format(prefix .. "C-cdf", i + 1, quoted(t))
  end
  plot(list, prefix .. "C-cdf", ("cycle C: distribution of per-page time, all repetitions (%s)"):format(doc.run),
    table.concat(lines, "\n") .. "\n", ([[
set logscale x
set xlabel "ns per page (store + one timestamp)"
set ylabel "share of pages at or below"
set yrange [0:1]
set key bottom right
plot ]]) .. table.concat(curves, ", \\\n  "))
end

local SERIES = { { "A", "mmap" }, { "A", "pass1" }, { "A", "pass2" }, { "A", "pass2r" }, { "A", "fill" },
  { "A", "munmap" }, { "B", "fill" }, { "C", "pass1" }, { "C", "pass2" }, { "D", "malloc" }, { "D", "touch1" },
  { "D", "touch2" }, { "D", "free" } }

-- Every pass over the repetitions in run order, noisy ones marked.
local function rep_series(list, doc, prefix)
  local blocks, panels = {}, {}
  for _, s in ipairs(SERIES) do
    local row = row_of(doc, s[1], s[2])
    if row then
      local records, lines = records_of(doc, s[1]), { ("# %s %s (%s): rep value noisy"):format(s[1], s[2], row.unit) }
      for i, v in ipairs(row.values) do
        lines[#lines + 1] = ("%d %s %d"):format(i, units.exact(v), records[i].noise.flagged and 1 or 0)
      end
      blocks[#blocks + 1] = table.concat(lines, "\n")
      panels[#panels + 1] = { title = ("%s %s, %s"):format(s[1], s[2], row.unit), index = #blocks - 1 }
    end
  end
  if #panels == 0 then return end
  local cols = 3
  local rows = -(-#panels // cols)
  local body = { ("set multiplot layout %d,%d title %s"):format(rows, cols,
    quoted("every pass over the repetitions in run order; red: flagged as noisy (" .. doc.run .. ")")),
    "unset key", "set xlabel \"repetition\"", "set xtics 1 format \"%g\"" }
  for _, p in ipairs(panels) do
    body[#body + 1] = ("set title %s"):format(quoted(p.title))
    body[#body + 1] = ('plot "%s.dat" index %d using 1:2 with linespoints pt 7 ps 0.5 lc rgb "#1f4e99", '
      .. '"" index %d using 1:($3 == 1 ? $2 : 1/0) with points pt 7 ps 0.9 lc rgb "#cc0000"'):format(
      prefix .. "reps", p.index, p.index)
  end
  body[#body + 1] = "unset multiplot"
  plot(list, prefix .. "reps", "repetitions", table.concat(blocks, "\n\n\n") .. "\n", table.concat(body, "\n"),
    1100, 260 * rows)
end

-- The experiments ------------------------------------------------------------

-- Medians with their intervals as bars, a group per case and a bar per
-- column; cases that did not run are left out.
local function bars(list, doc, prefix, columns, ylabel, title)
  local lines = { "# case  " .. table.concat(stats.map(columns, function(c) return c .. "_median lo hi" end), "  ") }
  for _, c in ipairs(doc.reps) do
    if not c.unsupported then
      local cells = { quoted(c.case) }
      for _, col in ipairs(columns) do
        local r = row_of(doc, c.case, col)
        cells[#cells + 1] = r and ("%s %s %s"):format(units.exact(r.median), units.exact(r.lo), units.exact(r.hi))
          or "0 0 0"
      end
      lines[#lines + 1] = table.concat(cells, " ")
    end
  end
  local using = {}
  for i, col in ipairs(columns) do
    local first = row_of(doc, doc.reps[1].case, col) or {}
    using[#using + 1] = ('"%s.dat" using %d:%d:%d%s title %s'):format(prefix .. "plot", 3 * i - 1, 3 * i, 3 * i + 1,
      i == 1 and ":xtic(1)" or "", quoted(first.label or col))
  end
  plot(list, prefix .. "plot", title, table.concat(lines, "\n") .. "\n", ([[
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.7 border -1
set ylabel %s
set xtics rotate by -20 noenhanced
set yrange [0:*]
set key top right
plot ]]):format(quoted(ylabel)) .. table.concat(using, ", \\\n  "), 900, 500)
end

local function columns_in(doc, unit)
  local out, seen = {}, {}
  for _, r in ipairs(doc.rows) do
    if r.unit == unit and not seen[r.column] then seen[r.column] = true; out[#out + 1] = r.column end
  end
  return out
end

local EXPERIMENT = {}

-- Scaling: faults per second against threads, beside the ideal line.
function EXPERIMENT.scaling(list, doc, prefix)
  local by = {}
  for _, c in ipairs(doc.reps) do
    local n, shape = c.case:match("^(%d+) thread%(s%), (.+)$")
    if n then
      by[shape] = by[shape] or {}
      by[shape][tonumber(n)] = { total = row_of(doc, c.case, "total"), per = row_of(doc, c.case, "per_thread") }
    end
  end
  local shapes, lines = { "one shared mapping", "a mapping per thread" }, {}
  lines[1] = "# threads  ideal  total_shared lo hi  per_thread_shared  total_per_thread lo hi  per_thread_per_thread"
  local one = by[shapes[1]] and by[shapes[1]][1]
  for n = 1, 64 do
    local a, b = by[shapes[1]] and by[shapes[1]][n], by[shapes[2]] and by[shapes[2]][n]
    if a and b and one then
      lines[#lines + 1] = ("%d %s %s %s %s %s %s %s %s %s"):format(n, units.exact(one.total.median * n),
        units.exact(a.total.median), units.exact(a.total.lo), units.exact(a.total.hi), units.exact(a.per.median),
        units.exact(b.total.median), units.exact(b.total.lo), units.exact(b.total.hi), units.exact(b.per.median))
    end
  end
  plot(list, prefix .. "plot", "first-touch faults per second against threads (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", ([[
set xlabel "threads"
set ylabel "faults per second"
set xtics 1
set yrange [0:*]
set key top left
plot "%s.dat" using 1:2 with lines dt 2 lc rgb "#888888" title "ideal: 1 thread x n", \
  "" using 1:3:4:5 with yerrorlines pt 7 lc rgb "#1f4e99" title "total, one shared mapping", \
  "" using 1:6 with linespoints pt 6 lc rgb "#1f4e99" title "per thread, one shared mapping", \
  "" using 1:7:8:9 with yerrorlines pt 5 lc rgb "#cc5500" title "total, a mapping per thread", \
  "" using 1:10 with linespoints pt 4 lc rgb "#cc5500" title "per thread, a mapping per thread"]]):format(
    prefix .. "plot"))
end

-- Populate: each method's time split into the call, the populate step and the first pass.
function EXPERIMENT.populate(list, doc, prefix)
  local lines = { "# method  mapping_call  populate_step  first_pass  (ns per page, medians)" }
  for _, c in ipairs(doc.reps) do
    if not c.unsupported then
      local function m(col) local r = row_of(doc, c.case, col); return r and units.exact(r.median) or "0" end
      lines[#lines + 1] = ("%s %s %s %s"):format(quoted(c.case), m("map"), m("step"), m("pass"))
    end
  end
  plot(list, prefix .. "plot", "where the faults go: ns per page, medians (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", ([[
set style data histogram
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel "ns per page"
set xtics rotate by -20 noenhanced
set key top right
plot "%s.dat" using 2:xtic(1) title "mapping call", "" using 3 title "populate step", "" using 4 title "first pass"]])
    :format(prefix .. "plot"), 900, 500)
end

-- Coldness: every repetition's first touch against the wait before it.
function EXPERIMENT.coldness(list, doc, prefix)
  local lines = { "# wait_s  pass1_ns_per_page  (one line per repetition; wait -1: the first mapping of the process)" }
  for _, c in ipairs(doc.reps) do
    local wait = c.case:match("waited ([%d.]+) s") or (c.case:match("fresh process") and "-1")
    local row = row_of(doc, c.case, "pass1")
    if wait and row then
      for _, v in ipairs(row.values) do lines[#lines + 1] = ("%s %s"):format(wait, units.exact(v)) end
    end
  end
  plot(list, prefix .. "plot", "first touch after a wait (" .. doc.run .. ")", table.concat(lines, "\n") .. "\n",
    ([[
set xlabel "seconds waited after the previous release (-1: the process's first mapping)"
set ylabel "pass 1, ns per page"
set key top left
plot "%s.dat" using 1:($1 >= 0 ? $2 : 1/0) with points pt 7 lc rgb "#1f4e99" title "a repetition", \
  "" using 1:($1 < 0 ? $2 : 1/0) with points pt 9 ps 1.5 lc rgb "#cc0000" title "first mapping of the process"]])
    :format(prefix .. "plot"))
end

-- thp: faults per GiB and ns per 4 KiB against the page the kernel gave.
function EXPERIMENT.thp(list, doc, prefix)
  local lines = { "# case  page_bytes  faults_per_GiB  pass1_ns_per_page lo hi  retouch_ns_per_page lo hi" }
  for _, c in ipairs(doc.reps) do
    local huge, faults = row_of(doc, c.case, "huge_bytes"), row_of(doc, c.case, "pass1_faults")
    local p1, p2 = row_of(doc, c.case, "pass1"), row_of(doc, c.case, "retouch")
    if huge and faults and p1 and p2 then
      local page = huge.median >= doc.bytes and doc.machine.thp_pmd_size or doc.page_size
      lines[#lines + 1] = ("%s %d %s %s %s %s %s %s %s"):format(quoted(c.case), page,
        units.exact(faults.median * (1 << 30) / doc.bytes), units.exact(p1.median), units.exact(p1.lo),
        units.exact(p1.hi), units.exact(p2.median), units.exact(p2.lo), units.exact(p2.hi))
    end
  end
  plot(list, prefix .. "plot", "faults and ns per 4 KiB against the page obtained (" .. doc.run .. ")",
    table.concat(lines, "\n") .. "\n", ([[
set logscale xy
set xlabel "bytes per page obtained (4096: base pages, 2097152: THP)"
set ylabel "ns per 4 KiB (median and interval)"
set y2label "pass-1 faults per GiB"
set logscale y2
set y2tics
set ytics nomirror
set offsets graph 0.1, graph 0.1, 0, 0
set key top right
plot "%s.dat" using 2:4:5:6 with yerrorbars pt 7 lc rgb "#1f4e99" title "pass 1", \
  "" using 2:7:8:9 with yerrorbars pt 5 lc rgb "#cc5500" title "re-touch", \
  "" using 2:3 axes x1y2 with points pt 4 ps 1.5 lc rgb "#228822" title "faults per GiB (right)"]]):format(
    prefix .. "plot"))
end

-- faults: will-it-scale's rate against tasks, a line per workload and mode,
-- beside each one's ideal (one task's rate times n).
function EXPERIMENT.faults(list, doc, prefix)
  local series, tasks = {}, {}
  for _, c in ipairs(doc.reps) do
    local workload, n, mode = c.case:match("^(.-), (%d+) (%a+)$")
    local row = row_of(doc, c.case, "total")
    if row then
      mode = mode:match("^thread") and "threads" or "processes"
      local key = workload .. " " .. mode
      if not series[key] then series[key] = {}; tasks[#tasks + 1] = key end
      series[key][tonumber(n)] = row
    end
  end
  table.sort(tasks)
  local blocks, curves = {}, {}
  for i, key in ipairs(tasks) do
    local lines, one = { "# " .. key .. ": tasks  ops_per_s lo hi  ideal" }, series[key][1]
    for n = 1, 64 do
      local r = series[key][n]
      if r then
        lines[#lines + 1] = ("%d %s %s %s %s"):format(n, units.exact(r.median), units.exact(r.lo), units.exact(r.hi),
          one and units.exact(one.median * n) or "NaN")
      end
    end
    blocks[#blocks + 1] = table.concat(lines, "\n")
    curves[#curves + 1] = ('"%s.dat" index %d using 1:2:3:4 with yerrorlines lc %d title %s'):format(prefix .. "plot",
      i - 1, i, quoted(key))
    curves[#curves + 1] = ('"" index %d using 1:5 with lines dt 2 lc %d notitle'):format(i - 1, i)
  end
  plot(list, prefix .. "plot", "will-it-scale's rate against tasks; dashed: n x one task (" .. doc.run .. ")",
    table.concat(blocks, "\n\n\n") .. "\n", [[
set xlabel "tasks"
set ylabel "ops per second in total (pages; mmap1: map/unmap pairs)"
set xtics 1
set yrange [0:*]
set key outside right noenhanced
plot ]] .. table.concat(curves, ", \\\n  "), 1000, 520)
end

-- Any other experiment: its ns/page columns (or its page counts) as bars.
local function generic(list, doc, prefix)
  local cols = columns_in(doc, "ns/page")
  local ylabel = "ns per page (median and interval)"
  if #cols == 0 then cols, ylabel = columns_in(doc, "pages"), "pages (median and interval)" end
  if #cols > 0 then bars(list, doc, prefix, cols, ylabel, doc.about .. " (" .. doc.run .. ")") end
end

-- The plots a run's JSON gives.
function plots.specs(doc, dir, prefix)
  local list = {}
  if doc.script == "cycles.lua" then
    page_map(list, doc, dir, prefix, "pass1")
    page_map(list, doc, dir, prefix, "pass2")
    page_cdf(list, doc, dir, prefix)
    rep_series(list, doc, prefix)
  else
    (EXPERIMENT[doc.script:match("^(.-)%.lua$")] or generic)(list, doc, prefix)
  end
  return list
end

local warned = false

local function gnuplot_missing(dir)
  if os.execute("command -v gnuplot >/dev/null 2>&1") then return false end
  if not warned then
    io.stderr:write("ftrun: plots skipped: gnuplot is not installed (apt-get install gnuplot-nox, "
      .. "then ./ftrun plot.lua " .. dir .. ")\n")
    warned = true
  end
  return true
end

local function shell_quoted(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- An SVG gnuplot finished: not empty, its last tag closed (a full disk or a
-- killed gnuplot leaves it short).
local function complete_svg(text)
  return text ~= nil and #text > 0 and text:match("</svg>%s*$") ~= nil
end

-- Draws a run's plots without touching dir: returns every file they make
-- ({path, text}: data, gnuplot script and SVG of each) and their count, to be
-- renamed into dir in the same step as the run's other files. gnuplot runs in
-- a private temporary directory, each file of it named to the signal handler
-- (ft.temporary); through io.popen, so SIGINT is not ignored as os.execute
-- ignores it, and its warnings are shown only when it fails. attached: files
-- the plots read that are not on disk yet ({path = text}).
function plots.render(doc, dir, prefix, attached)
  if type(doc.rows) ~= "table" then return {}, 0 end -- a run that failed its checksums: nothing to draw
  pending = attached or {}
  local ok_specs, list = pcall(plots.specs, doc, dir, prefix)
  pending = {}
  if not ok_specs then error(list, 0) end
  if #list == 0 or gnuplot_missing(dir) then return {}, 0 end
  local p = io.popen("mktemp -d -t ftrun-plots.XXXXXX") -- in TMPDIR or /tmp
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
      out[#out + 1] = { ("%s/%s.svg"):format(dir, spec.name), svg }
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

-- Redraws a run's plots in dir from its files (plot.lua): all of them
-- replaced together, or none. Returns the count, or nil and why.
function plots.draw(dir, prefix)
  local path = ("%s/%sresults.json"):format(dir, prefix)
  local text = read(path)
  if not text then return nil, path .. ": cannot be read" end
  local doc, why = json.decode(text)
  if type(doc) ~= "table" or type(doc.script) ~= "string" then
    return nil, ("%s: not a results JSON: %s"):format(path, #text == 0 and "the file is empty"
      or why and tostring(why):gsub("^.-:%d+: ", "") or "it has no script field")
  end
  local files, n = plots.render(doc, dir, prefix)
  if n > 0 then
    local written, err = ft.write_files(files)
    if not written then error("plots not written: " .. err, 0) end
  end
  return n
end

return plots
