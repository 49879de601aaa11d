-- Every plot of a QUICK run of every script: the SVG parses as XML, renders
-- to a PNG of more than one colour, and its data file holds as many points
-- or bars as the JSON it was drawn from; plot.lua redraws the same files;
-- without gnuplot a run still completes and says so once.
local t = require "tap"
local json = require "json"
local q = t.quote

local dir = t.tmpdir()
local function ok_run(script, knobs)
  local out, code = t.ftrun_run(script, knobs .. " RESULTS=" .. q(dir))
  t.is(code, 0, script .. " " .. knobs .. " runs")
  if code ~= 0 then t.diag(out) end
end
ok_run("cycles.lua", "QUICK=1 MIB=8 REPS=6")
ok_run("cycles.lua", "MIB=8 REPS=2 THP=always")
ok_run("cycles.lua", "MIB=8 REPS=2 CYCLES=C") -- named cycles-C
ok_run("cycles.lua", "MIB=8 REPS=2") -- the default run: no prefix, and THP=always beside it
for _, e in ipairs { "thp", "populate", "zeropage", "recycle", "scaling", "placement" } do ok_run(e .. ".lua", "QUICK=1") end
ok_run("coldness.lua", "QUICK=1 WAITS=0,0.1")

-- The distinct colours of a PNG, from pngtopnm's binary PPM.
local function colours(png)
  local ppm = t.run("pngtopnm " .. q(png) .. " 2>/dev/null")
  local w, h, at = ppm:match("^P6%s+(%d+)%s+(%d+)%s+%d+%s()")
  if not w then return 0 end
  local seen, n = {}, 0
  for i = at, at + 3 * w * h - 3, 3 * 7 do -- every 7th pixel is enough to tell
    local c = ppm:sub(i, i + 2)
    if not seen[c] then seen[c] = true; n = n + 1 end
  end
  return n
end

local function data_lines(path) -- the data rows of a .dat, blocks apart
  local n = 0
  for l in (t.read(path) or ""):gmatch("[^\n]+") do
    if not l:match("^#") then n = n + 1 end
  end
  return n
end

local svgs = {}
for name in t.run("ls " .. q(dir)):gmatch("([^\n]+)%.svg") do svgs[#svgs + 1] = name end
t.is(#svgs, 4 * 4 + 7, "every plot was drawn: 4 for each cycles run, 1 per experiment")
for _, name in ipairs(svgs) do
  local svg = dir .. "/" .. name .. ".svg"
  local _, code = t.run("xmllint --noout " .. q(svg) .. " 2>&1")
  t.is(code, 0, name .. ".svg parses as XML")
  local _, rc = t.run(("rsvg-convert -w 600 %s -o %s 2>&1"):format(q(svg), q(dir .. "/" .. name .. ".png")))
  t.ok(rc == 0 and colours(dir .. "/" .. name .. ".png") > 1, name .. ".svg renders to a PNG of more than one colour")
  t.ok(t.read(dir .. "/" .. name .. ".dat") and t.read(dir .. "/" .. name .. ".gp"), name .. ": data and script beside it")
end

-- Points against the JSON.
local main = json.decode(t.read(dir .. "/quick-results.json") or "null") or {}
t.is(data_lines(dir .. "/quick-C-pass1-pages.dat"), math.min(main.pages or 0, 1024),
  "the page map has a line per bin of pages (one page per bin at 8 MiB)")
local reps = 0
for _, r in ipairs(main.rows or {}) do
  if ({ mmap = 1, pass1 = 1, pass2 = 1, pass2r = 1, fill = 1, munmap = 1, malloc = 1, touch1 = 1, touch2 = 1,
    free = 1 })[r.column] then reps = reps + #r.values end
end
t.is(data_lines(dir .. "/quick-reps.dat"), reps, "the repetition series has a point per repetition of every pass")
local cdf = t.read(dir .. "/quick-C-cdf.dat") or ""
t.like(cdf, "pass1  pass2", "the page-time distribution has pass 1 and pass 2")
local with_thp = t.read(dir .. "/thp-always-C-cdf.dat") or ""
t.ok(with_thp ~= "", "the THP=always run draws its own")
t.like(t.read(dir .. "/C-cdf.dat") or "", "pass1  pass2  THP=always pass1  THP=always pass2",
  "the default run's distribution has THP=always's beside it")
local scaling = json.decode(t.read(dir .. "/quick-scaling-results.json") or "null") or { reps = {} }
t.is(data_lines(dir .. "/quick-scaling-plot.dat"), #scaling.reps // 2, "scaling: a line per thread count")
local populate = json.decode(t.read(dir .. "/quick-populate-results.json") or "null") or { reps = {} }
t.is(data_lines(dir .. "/quick-populate-plot.dat"), #populate.reps, "populate: a bar per method")
local cold = json.decode(t.read(dir .. "/quick-coldness-results.json") or "null") or { rows = {} }
local points = 0
for _, r in ipairs(cold.rows) do if r.column == "pass1" then points = points + #r.values end end
t.is(data_lines(dir .. "/quick-coldness-plot.dat"), points, "coldness: a point per repetition")

-- plot.lua redraws the same files from the files alone.
local before = t.run("cd " .. q(dir) .. " && md5sum *.svg *.dat *.gp")
local out, code = t.ftrun_run("plot.lua " .. q(dir))
t.is(code, 0, "plot.lua RUN_DIR redraws")
t.is(t.run("cd " .. q(dir) .. " && md5sum *.svg *.dat *.gp"), before, "to the same bytes: the plots are deterministic")
out, code = t.ftrun_run("plot.lua /nonexistent")
t.is(code, 2, "plot.lua on a directory without results exits 2")
t.like(out, "RUN_DIR=/nonexistent: not a directory", "and says why")

-- plot.lua's options: as every script's, from arguments or the environment, unknown ones refused.
out, code = t.ftrun_run("plot.lua --help")
t.is(code, 0, "plot.lua --help exits 0")
t.like(out, "FORCE", "and explains FORCE")
out, code = t.ftrun_run("plot.lua " .. q(dir) .. " COLOUR=red")
t.is(code, 2, "plot.lua refuses an unknown option")
t.like(out, "argument 'COLOUR=red' is not one of this script's knobs", "naming it")
out, code = t.ftrun_run("plot.lua", "RUN_DIR=" .. q(dir))
t.is(code, 0, "RUN_DIR from the environment", out)
out, code = t.ftrun_run("plot.lua")
t.is(code, 2, "plot.lua without RUN_DIR exits 2")

-- What plot.lua refuses in a results JSON, each exit 2 naming the file and what is wrong.
local one = t.tmpdir()
local doc_text = t.read(dir .. "/quick-zeropage-results.json") or "{}"
local function try(text, knobs)
  t.write(one .. "/x-results.json", text)
  return t.ftrun_run("plot.lua " .. q(one) .. (knobs and " " .. knobs or ""))
end
out, code = try(doc_text:sub(1, 200))
t.is(code, 2, "a truncated JSON exits 2")
t.like(out, one .. "/x-results.json: not a results JSON: ", "naming the file")
t.ok(not out:find("traceback", 1, true) and out:find("Expected", 1, true) ~= nil, "with cjson's reason (U6)", out)
out, code = try("")
t.like(out, "x-results.json: not a results JSON: the file is empty", "an empty JSON is named as empty (U6)")
local doc = json.decode(doc_text) or {}
doc.reps = nil
out, code = try(json.encode(doc))
t.is(code, 2, "a JSON without reps exits 2, no traceback (U8)", out)
t.like(out, "x-results.json: has no reps", "naming the field")
doc = json.decode(doc_text) or {}
doc.verdict = "CHECKSUMS FAILED: injected"
out, code = try(json.encode(doc))
t.is(code, 2, "a JSON whose verdict is not clean is refused")
t.like(out, "x-results.json: its verdict is 'CHECKSUMS FAILED: injected', not a clean run", "naming file and verdict")
t.ok(not t.read(one .. "/x-plot.svg"), "nothing drawn")
out, code = try(json.encode(doc), "FORCE=1")
t.is(code, 0, "FORCE=1 draws it", out)
t.like(t.read(one .. "/x-plot.svg") or "", "verdict: CHECKSUMS FAILED: injected", "and the plot says its verdict")
os.execute("rm -f " .. q(one) .. "/x-*")
doc = json.decode(doc_text) or {}
doc.rows, doc.reps = {}, {}
out, code = try(json.encode(doc))
t.is(code, 2, "a JSON with no row a plot is drawn from exits 2", out)
t.like(out, "x-results.json: no row a plot is drawn from", "naming the file")
-- a TMPDIR that reads as an option is a directory to sweep, never find's action
do
  local cwd = one .. "/cwd"
  os.execute("mkdir -p " .. q(cwd) .. " && touch " .. q(cwd .. "/a"))
  out = t.run(("cd %s && TMPDIR=-delete %s plot.lua %s"):format(q(cwd),
    q(t.run("realpath " .. q(t.ftrun)):match("[^\n]+")), q(dir)))
  t.ok(io.open(cwd .. "/a"), "TMPDIR=-delete: the files where it ran are still there", out)
end
os.execute("rm -rf " .. q(one))

-- gnuplot's warnings (an empty y range on a tiny run) stay off stderr when it succeeds.
out = t.ftrun_run("cycles.lua MIB=4 REPS=1 RESULTS=" .. q(dir .. "/tiny"))
t.ok(not out:lower():find("empty %a range"), "no gnuplot warning ('empty y range') on stderr", out)

-- Without gnuplot: the run completes and says so, once.
local bare = t.tmpdir()
os.execute(("ln -s %s %s/ftrun"):format(q(t.ftrun), q(bare)))
out, code = t.run(("PATH=%s %s first_touch.lua MIB=4 REPS=1 RESULTS=%s 2>&1"):format(q(bare), q(t.ftrun), q(bare)))
t.is(code, 0, "a run without gnuplot on PATH completes")
local _, says = out:gsub("plots skipped: gnuplot is not installed", "")
t.is(says, 1, "and says once that the plots were skipped, and how to get them")

-- A results file's name is data (SEC-3 of review reliability-2026-12-07c):
-- gnuplot is never given one it would run (`...`, a leading | or <, a " or
-- a newline that ends its string), plot.lua refuses it naming the file,
-- and nothing runs (no file in a HOME of the test's own) or is drawn.
do
  local shell = require "shell"
  local hdir = t.tmpdir()
  local home = hdir .. "/home"
  t.run("mkdir -p " .. q(home))
  local function pwned() return (t.run("ls -A " .. q(home))) end
  -- the helper every name goes through
  t.ok(shell.unsafe_name("cycles-A-results.json") == nil, "a name ftrun writes passes")
  for _, n in ipairs { "x\"; system(\"touch PWN\"); \"", "a\nb", "`id`", "$(id)", "|cmd", "<cmd", "-x", ".hidden", "" } do
    t.ok(shell.unsafe_name(n) ~= nil, ("%q is refused"):format(n))
  end
  t.like(shell.unsafe_name("a\nb;c") or "", "newline ';'", "naming the characters")
  local plots = require "plots"
  t.errors(function() plots.file_name('x"plot') end, "the file name x\"plot holds '\"'",
    "plots.file_name refuses a name gnuplot cannot be given, naming it")
  t.is(plots.file_name("cycles-A-reps.svg"), '"cycles-A-reps.svg"', "and quotes one it can")

  -- one honest run to copy under hostile names
  local src = hdir .. "/src"
  out, code = t.ftrun_run("cycles.lua", "CYCLES=A MIB=8 REPS=2 RESULTS=" .. q(src))
  t.is(code, 0, "a run to copy", out)
  local json_path = src .. "/cycles-A-results.json"

  local names = {
    "|cd;touch PWN;results.json", -- the review's: gnuplot pipes set output to sh
    "x\"\n!cd;touch PWN_nl\n#results.json", -- the review's newline form: a ! line
    "x\"; system(\"cd;touch PWN_sys\"); \"results.json", -- the issue's
    "`cd;touch PWN_bq`results.json", -- gnuplot's backquotes
    "$(cd;touch PWN_dl)results.json", -- a shell's
    "<cd;touch PWN_lt;results.json", -- gnuplot reads a data file from a pipe
    "-results.json", -- an option to gnuplot
  }
  for i, name in ipairs(names) do
    local d = ("%s/d%d"):format(hdir, i)
    t.run(("mkdir -p %s && cp %s %s"):format(q(d), q(json_path), q(d .. "/" .. name)))
    out, code = t.ftrun_run("plot.lua " .. q(d), "HOME=" .. q(home))
    t.is(code, 2, ("plot.lua on %q: exit 2"):format(name), out)
    t.like(out, "this file name holds", "naming the file and what it holds")
    t.is(pwned(), "", "no command ran")
    t.is(#shell.list(d), 1, "nothing drawn beside it")
  end
  -- the same run under an honest name draws: the refusals are the names'
  local d = hdir .. "/honest"
  t.run(("mkdir -p %s && cp %s %s"):format(q(d), q(json_path), q(d .. "/cycles-A-results.json")))
  out, code = t.ftrun_run("plot.lua " .. q(d), "HOME=" .. q(home))
  t.is(code, 0, "the same file under its own name draws", out)
  os.execute("rm -rf " .. q(hdir))
end

-- The published results: plot.lua redraws them byte for byte (git status stays clean).
local root = t.ftrun:gsub("[^/]+$", "")
if t.run("git -C " .. q(root) .. " rev-parse --is-inside-work-tree 2>/dev/null") == "true\n" then
  local published = t.run("git -C " .. q(root) .. " status --porcelain results")
  out, code = t.ftrun_run("plot.lua " .. q(root .. "results"))
  t.is(code, 0, "plot.lua redraws the published results")
  t.is(t.run("git -C " .. q(root) .. " status --porcelain results"), published, "and git status is what it was")
else
  print("ok - plot.lua on the published results # SKIP not a git checkout")
end

os.execute("rm -rf " .. q(dir) .. " " .. q(bare))
t.done()
