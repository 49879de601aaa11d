-- The registry: every generated file and generated block of the tree, in
-- the order they are made, each with the function that makes it from the
-- committed measurements (results JSON, raw files, samples, provenance) and
-- the code. make docs writes what differs; make docs-check makes them into a
-- scratch copy and diffs. Nothing else in the tree is generated: results/
-- files no entry makes are the measurements, held by their SHA256SUMS.
local ev = require "evidence"
local kindpage = require "kindpage"
local kinds = require "kinds"
local paragraphs = require "paragraphs"
local plots = require "plots"
local provenance = require "provenance"
local reference = require "reference"
local report = require "report"
local reports = require "reports"
local results = require "results"
local runfiles = require "runfiles"
local shell = require "shell"
local stats = require "stats"
local summary = require "summary"
local calreport = require "calreport"

local read, ls, sh = ev.read, shell.list, shell.quote
local registry = {}

-- A block is the text between <!-- ftrun claims NAME: begin --> and its end
-- line (in a man page the marker follows a comment's .\").
local function marks(name)
  return ("<!-- ftrun claims %s: begin -->"):format(name), ("<!-- ftrun claims %s: end -->"):format(name)
end

local function span(text, name)
  local b, e = marks(name)
  local i = text:find(b, 1, true)
  local j = i and text:find(e, i, true)
  if not j then return nil end
  local line_start = j
  while line_start > 1 and text:sub(line_start - 1, line_start - 1) ~= "\n" do line_start = line_start - 1 end
  return i + #b + 1, line_start
end

function registry.block(text, name)
  local from, to = span(text, name)
  return from and text:sub(from, to - 2)
end

-- text with every block replaced; raises naming a missing marker.
function registry.apply(file, text, blocks)
  local names = {}
  for name in pairs(blocks) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local from, to = span(text, name)
    if not from then
      error(("publish: %s has no markers for the block %s (%s)"):format(file, name, (marks(name))), 0)
    end
    text = text:sub(1, from - 1) .. blocks[name] .. "\n" .. text:sub(to)
  end
  return text
end

local function same_value(x, y)
  return x == y or (type(x) == "number" and type(y) == "number" and x ~= x and y ~= y)
end

-- Where a raw file and its results.json disagree (rows, values, title), or nil.
function registry.raw_against_json(raw, doc)
  local lines, values = {}, {}
  for l in raw:gmatch("[^\n]+") do
    if l:match("^RESULT case=") then lines[#lines + 1] = report.parse(l)
    elseif l:match("^RESULT value=") then values[#values + 1] = report.parse(l) end
  end
  if #lines ~= #doc.rows then return ("the raw file holds %d rows, the JSON %d"):format(#lines, #doc.rows) end
  for i, r in ipairs(doc.rows) do
    local a, b = lines[i], report.parse(results.row_line(r))
    for _, k in ipairs(b._keys) do
      if not same_value(a[k], b[k]) or #a._keys ~= #b._keys then
        return ("row %d (%s %s), %s: %s in the raw file, %s in the JSON"):format(i, tostring(r.case),
          tostring(r.column), k, tostring(a[k]), tostring(b[k]))
      end
    end
  end
  local kept = type(doc.values) == "table" and doc.values or {}
  if #values ~= #kept then return ("the raw file holds %d values, the JSON %d"):format(#values, #kept) end
  for i, v in ipairs(kept) do
    for _, k in ipairs(values[i]._keys) do
      if not same_value(values[i][k], v[k]) then
        return ("value %d (%s), %s: %s in the raw file, %s in the JSON"):format(i, tostring(v.value), k,
          tostring(values[i][k]), tostring(v[k]))
      end
    end
  end
  if raw:match("^# ([^\n]*)") ~= doc.title then return "its title is not the JSON's" end
  for i, r in ipairs(doc.rows) do -- and each row's statistics are its values' (a median made up and sealed shows)
    local finite = {}
    for _, x in ipairs(type(r.values) == "table" and r.values or {}) do
      if type(x) == "number" then finite[#finite + 1] = x end
    end
    local again = #finite > 0 and stats.describe(finite)
    for _, k in ipairs(again and { "median", "lo", "hi", "min", "max" } or {}) do
      if not (r[k] == again[k] or math.abs(r[k] - again[k]) <= 1e-9 * math.max(1, math.abs(again[k]))) then
        return ("row %d (%s %s): its %s is %s, its values give %s"):format(i, tostring(r.case), tostring(r.column), k,
          tostring(r[k]), tostring(again[k]))
      end
    end
  end
end

-- A run's summary.md from its raw file and its JSON's provenance.
local function summary_of(root, dir, prefix)
  local raw = read(("%s/%s/%sraw.txt"):format(root, dir, prefix))
  local doc = ev.json_file(("%s/%s/%sresults.json"):format(root, dir, prefix))
  if not (raw and doc and type(doc.rows) == "table" and type(doc.provenance) == "table") then
    error(("publish: %s/%sraw.txt and its results.json cannot both be read"):format(dir, prefix), 0)
  end
  local why = registry.raw_against_json(raw, doc)
  if why then error(("publish: %s/%sraw.txt and its results.json disagree: %s"):format(dir, prefix, why), 0) end
  return (reports.of(doc.script).table or summary.table)(raw) .. "\n" .. provenance.describe(doc.provenance) .. "\n"
end

-- The files made from one kind's runs: summaries, samples' sidecars, plots, calibration.md.
local function run_files(root, dir, out, pasted)
  local dirs = { dir }
  for _, d in ipairs(ls(root .. "/" .. dir .. "/repeats", "^%d")) do dirs[#dirs + 1] = dir .. "/repeats/" .. d end
  for i, d in ipairs(dirs) do
    local names = ls(root .. "/" .. d, "raw%.txt$")
    table.sort(names)
    for _, name in ipairs(names) do
      local prefix = name:sub(1, -#"raw.txt" - 1)
      local file = ("%s/%ssummary.md"):format(d, prefix)
      out[#out + 1] = { file = file, make = function() return summary_of(root, d, prefix) end }
      if i == 1 then pasted[#pasted + 1] = { name = prefix == "" and "main" or prefix:sub(1, -2), file = file } end
    end
  end
  for _, name in ipairs(ls(root .. "/" .. dir, "%.i32$")) do
    local prefix, pass = name:match("^(.-)C%-(pass%d)%-samples%.i32$")
    out[#out + 1] = { file = ("%s/%s.txt"):format(dir, name), make = function()
      local doc = ev.json_file(("%s/%s/%sresults.json"):format(root, dir, prefix or ""))
      if not (prefix and doc) then error(("publish: %s/%s: no results.json beside it"):format(dir, name), 0) end
      return provenance.sidecar(name, reports.of("cycles").samples_about(pass), read(root .. "/" .. dir .. "/" .. name),
        doc.provenance)
    end }
  end
  local gnuplot = os.execute("command -v gnuplot >/dev/null 2>&1")
  local jsons = ls(root .. "/" .. dir, "results%.json$")
  table.sort(jsons)
  for _, name in ipairs(jsons) do
    local prefix, doc = name:sub(1, -#"results.json" - 1), ev.json_file(root .. "/" .. dir .. "/" .. name)
    local ok, specs = pcall(plots.specs, doc, root .. "/" .. dir, prefix)
    if not ok then error(("publish: %s/%s: its plots cannot be made: %s"):format(dir, name, tostring(specs)), 0) end
    local stamp = "# " .. plots.text(provenance.describe(doc.provenance)) .. "\n"
    local drawn -- gnuplot draws a run's plots in one go
    local function svg(path)
      if not drawn then
        drawn = {}
        for _, f in ipairs(plots.render(doc, root .. "/" .. dir, prefix)) do drawn[f[1]] = f[2] end
      end
      return drawn[path]
    end
    for _, spec in ipairs(specs) do
      local base = dir .. "/" .. spec.name
      out[#out + 1] = { file = base .. ".dat", make = function() return stamp .. spec.data end }
      out[#out + 1] = { file = base .. ".gp", make = function() return stamp .. spec.script end }
      out[#out + 1] = { file = base .. ".svg", drawn = true,
        make = gnuplot and function() return svg(root .. "/" .. base .. ".svg") end }
    end
  end
  local cal = ev.json_file(root .. "/" .. dir .. "/calibration-cycles.json")
  if cal and type(cal.report) == "table" then
    out[#out + 1] = { file = dir .. "/calibration.md", make = function() return calreport.render(cal.report) end }
  end
end

-- A kind's account of a first touch (account.lua), where a floor run is
-- published: its own kind's, else results/'s (the table says so).
local ACCOUNT = { "account.md", "account-waterfall.dat", "account-waterfall.gp", "account-waterfall.svg" }
local function account_files(root, ftrun, dir, out)
  local floor = read(root .. "/" .. dir .. "/exp-floor-results.json") and dir .. "/exp-floor-results.json"
    or "results/exp-floor-results.json"
  if not (read(root .. "/" .. floor) and read(root .. "/" .. dir .. "/exp-attribution-results.json")) then return end
  local made = {}
  local function run() -- once, into a temporary folder
    local tmp = ev.output("mktemp -d"):gsub("\n$", "")
    local text, ok = ev.output(("cd %s && %s account.lua %s FLOOR_JSON=%s ACCOUNT_OUT=%s 2>&1"):format(
      shell.path(root), ftrun, sh(dir), sh(floor), sh(tmp)))
    for _, f in ipairs(ACCOUNT) do made[f] = read(tmp .. "/" .. f) end
    os.execute("rm -rf " .. sh(tmp))
    if not (ok and made[ACCOUNT[1]]) then error(("publish: account.lua failed on %s: %s"):format(dir, text), 0) end
  end
  for _, name in ipairs(ACCOUNT) do
    out[#out + 1] = { file = dir .. "/" .. name, drawn = name:match("svg$") and true,
      make = function() if not next(made) then run() end return made[name] end }
  end
end

-- A kind's repeats/compare.txt: compare.lua on the published run and its
-- repeats with the kind's calibration; its first line (the comparer's tree
-- and machine) is kept.
local function compare_txt(root, ftrun, dir)
  return function(old)
    local paths = { dir .. "/results.json" }
    for _, d in ipairs(ls(root .. "/" .. dir .. "/repeats", "^%d")) do
      paths[#paths + 1] = ("%s/repeats/%s/results.json"):format(dir, d)
    end
    local again = ev.compare(root, ftrun, paths, dir .. "/calibrations")
    return (old or ""):match("^[^\n]*\n") .. again:gsub("^[^\n]*\n", "", 1)
  end
end

-- Every target, in order: { file, make = function(old_text, made) -> text }.
function registry.targets(root, ftrun)
  local out, pages = {}, {}
  for _, p in ipairs(kinds.published(root)) do
    local pasted = {}
    run_files(root, p.dir, out, pasted)
    account_files(root, ftrun, p.dir, out)
    pages[#pages + 1] = { file = p.dir .. "/README.md", dir = p.dir, pasted = pasted }
    if read(root .. "/" .. p.dir .. "/repeats/compare.txt") then
      out[#out + 1] = { file = p.dir .. "/repeats/compare.txt", make = compare_txt(root, ftrun, p.dir) }
    end
  end
  for _, dir in ipairs(kinds.pages(root)) do -- a kind's page whose default run is gone says so
    local listed = false
    for _, page in ipairs(pages) do listed = listed or page.dir == dir end
    if not listed then pages[#pages + 1] = { file = dir .. "/README.md", dir = dir, pasted = {} } end
  end
  local blocks
  local function computed(made) -- after compare.txt is made, whose text the compare block quotes
    blocks = blocks or paragraphs.compute(root, ftrun, made["results/repeats/compare.txt"])
    return blocks
  end
  for i, page in ipairs(pages) do
    out[#out + 1] = { file = page.file, make = function(old, made)
      for _, r in ipairs(page.pasted) do -- a run the page has a block for, whose summary could be made
        old = made[r.file] and runfiles.replace_block(old, r.name, made[r.file]) or old
      end
      local acc = made[page.dir .. "/account.md"] -- the page's account block, where the page has one
      old = acc and runfiles.replace_block(old, "account", acc) or old
      local b = i == 1 and computed(made)["results/README.md"] or kindpage.blocks(root, page.dir,
        computed(made).kinds)
      return registry.apply(page.file, old, b)
    end }
  end
  out[#out + 1] = { file = "README.md", make = function(old, made)
    local acc = made["results/account.md"]
    local floor = acc and acc:match("\n\n(The floor[^\n]*)\n$")
      or "No floor run (floor.lua) is published for this kind yet, so the account waits for one."
    return registry.apply("README.md", old, { headline = computed(made)["README.md"].headline, floor = floor,
      layout = reference.layout(root), ["run-output"] = reference.run_output(made["results/summary.md"]),
      example = "```lua\n" .. read(root .. "/scripts/first_touch.lua") .. "```" })
  end }
  out[#out + 1] = { file = "doc/ftrun.1", make = function(old)
    return registry.apply("doc/ftrun.1", old, { scripts = reference.man_scripts(root, ftrun),
      options = reference.man_options(ftrun), examples = reference.man_examples(root, ftrun) })
  end }
  out[#out + 1] = { file = "bench/README.md", make = function(old)
    return runfiles.replace_block(old, "bench", "```\n" .. read(root .. "/results/bench.txt") .. "```") or old
  end }
  return out
end

-- Every target made: a list of { file, old, new } in order, and the made
-- texts by file; a target that cannot be made here (an SVG without gnuplot)
-- is left out. keep_going: a target's error is a problem, third, not raised.
function registry.make(root, ftrun, targets, keep_going)
  local made, out, problems = {}, {}, {}
  for _, t in ipairs(targets or registry.targets(root, ftrun)) do
    local old = read(root .. "/" .. t.file)
    local ok, new = pcall(function() return t.make and t.make(old, made) end)
    if not ok and not keep_going then error(new, 0) end
    if not ok then problems[#problems + 1] = tostring(new)
    elseif new then
      made[t.file] = new
      out[#out + 1] = { file = t.file, old = old, new = new }
    end
  end
  return out, made, problems
end

-- Every generated file's path (from root), made or not here.
function registry.generated(root, ftrun, targets)
  local out = {}
  for _, t in ipairs(targets or registry.targets(root, ftrun)) do out[t.file] = t end
  return out
end

return registry
