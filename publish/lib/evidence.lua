-- The committed runs, loaded and judged, for the pages publish/ writes:
-- the rounding rule (three significant digits, half away from zero; counts
-- exact), a kind's default runs, its calibration and compare.lua's verdicts.
local calibrations = require "calibrations"
local json = require "json"
local kinds = require "kinds"
local regimes = require "regimes"
local reports = require "reports"
local stats = require "stats"
local verdicts = require "verdicts"

local ev = {}

function ev.round(x)
  if x ~= x or x == math.huge or x == -math.huge then return tostring(x) end
  if x == 0 then return "0" end
  local e = math.floor(math.log(math.abs(x), 10))
  local decimals = 2 - e
  local m = 10.0 ^ -decimals
  local r = math.floor(math.abs(x) / m + 0.5) * m
  if r >= 10.0 ^ (e + 1) then decimals = decimals - 1 end -- 999.6 -> 1000
  local s = ("%." .. math.max(0, decimals) .. "f"):format(r)
  return (x < 0 and "-" or "") .. s
end
local R = ev.round

local function interval(row) return ("%s [%s, %s]"):format(R(row.median), R(row.lo), R(row.hi)) end
local function ms(us) return { median = us.median / 1e3, lo = us.lo / 1e3, hi = us.hi / 1e3 } end
local function vinterval(v) return ("%s [%s, %s]"):format(R(v.x), R(v.lo), R(v.hi)) end

-- "in all 3 runs", "in 2 of 3 runs", "in none of the 3 runs"; one run: "in the one run".
local function held(k, n)
  if n == 1 then return k == 1 and "in the one run" or "not in the one run" end
  if k == n then return ("in all %d runs"):format(n) end
  if k == 0 then return ("in none of the %d runs"):format(n) end
  return ("in %d of %d runs"):format(k, n)
end
ev.held = held

local read = require("textfile").read

-- Each JSON decoded once per text (the 18 MB slow-period run is read by several parts).
local decoded = {}
local function decode(path, text)
  local hit = decoded[path]
  if hit and hit.text == text then return true, hit.doc end
  local ok, doc = pcall(json.decode, text)
  decoded[path] = { text = text, doc = doc }
  return ok, doc
end

local function load(path)
  local text = read(path)
  if not text then error(("publish: %s: cannot read it"):format(path), 0) end
  local ok, doc = decode(path, text)
  if not ok or type(doc) ~= "table" or type(doc.rows) ~= "table" then
    error(("publish: %s: not an ftrun results JSON"):format(path), 0)
  end
  doc.path = path
  return doc
end

local function row(doc, case, column)
  for _, r in ipairs(doc.rows) do
    if r.case == case and r.column == column then return r end
  end
  error(("publish: %s has no row %s %s"):format(doc.path, case, column), 0)
end

local function value(doc, name, key, want)
  for _, v in ipairs(doc.values) do
    if v.value == name and (not key or v[key] == want) then return v end
  end
  error(("publish: %s has no value %s%s"):format(doc.path, name, key and " " .. key .. "=" .. tostring(want) or ""), 0)
end

local function list(xs, f)
  local out = {}
  for i, x in ipairs(xs) do out[i] = f(x) end
  return table.concat(out, ", ")
end

local function count(xs, pred)
  local k = 0
  for _, x in ipairs(xs) do if pred(x) then k = k + 1 end end
  return k
end

local shell = require "shell"
local ls, sh = shell.list, shell.quote

-- A command's standard output and whether it succeeded.
function ev.output(cmd)
  local p = assert(io.popen(cmd))
  local text = p:read("a")
  return text, p:close()
end

-- A command's output lines, empty ones kept (as a file's lines() gives them).
function ev.lines(cmd)
  local text, out = ev.output(cmd), {}
  for l in (text:sub(-1) == "\n" and text or text .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = l end
  return out
end

-- The object a JSON file holds, or nil: no file, not JSON, or not an object.
local function json_file(path)
  local ok, doc = decode(path, read(path) or "")
  return ok and type(doc) == "table" and doc or nil
end

-- Two separated groups among one row's repetitions, or nil: cut the sorted
-- logarithms at the largest gap, when each side holds min_reps or more, the
-- sides are min_factor apart and the gap is min_spreads times each side's MAD.
ev.GROUPS = { min_reps = 3, min_factor = 2, min_spreads = 8 }

local function mad(xs)
  local m, d = stats.median(xs), {}
  for i, x in ipairs(xs) do d[i] = math.abs(x - m) end
  return stats.median(d)
end

function ev.groups(values)
  local sorted = {}
  for i, x in ipairs(values) do
    -- a logarithm needs a finite positive value (NaN fails x == x)
    if type(x) ~= "number" or x ~= x or x <= 0 or x == math.huge then return nil end
    sorted[i] = { x = x, rep = i, log = math.log(x) }
  end
  local g = ev.GROUPS
  if #sorted < 2 * g.min_reps then return nil end
  table.sort(sorted, function(a, b) return a.x < b.x end)
  local cut, gap = nil, -1
  for i = g.min_reps, #sorted - g.min_reps do
    local d = sorted[i + 1].log - sorted[i].log
    if d > gap then cut, gap = i, d end
  end
  -- the largest gap of all must be the one between two groups of min_reps
  for i = 1, #sorted - 1 do
    if sorted[i + 1].log - sorted[i].log > gap then return nil end
  end
  if gap < math.log(g.min_factor) then return nil end
  local sides = {}
  for s, range in ipairs { { 1, cut }, { cut + 1, #sorted } } do
    local xs, logs, reps = {}, {}, {}
    for i = range[1], range[2] do
      xs[#xs + 1], logs[#logs + 1], reps[#reps + 1] = sorted[i].x, sorted[i].log, sorted[i].rep
    end
    if gap < g.min_spreads * mad(logs) then return nil end
    table.sort(reps)
    sides[s] = { n = #xs, median = stats.median(xs), min = xs[1], max = xs[#xs], reps = reps }
  end
  return { sides[1], sides[2], factor = sides[2].min / sides[1].max }
end

-- The claim: every timed row of the published runs whose repetitions split
-- by ev.groups, in cycles.lua's report's words, then the rule. published: { {name, doc, lead = "With ..."}, ... }.
function ev.bimodal(published)
  local out, looked, names = {}, 0, {}
  for i, p in ipairs(published) do
    names[i] = p[1]
    for _, r in ipairs(p[2].rows) do
      if regimes.testable(r) and type(r.values) == "table" then
        looked = looked + 1
        local split = ev.groups(r.values)
        if split then out[#out + 1] = reports.of("cycles").split_finding(p.lead, p[2], r, split, ev) end
      end
    end
  end
  local g = ev.GROUPS
  out[#out + 1] = ((#out > 0 and "What puts a repetition in one group or the other is not explained. " or "")
    .. "The rule (groups in publish/lib/evidence.lua): sort a row's repetitions and cut at the largest ratio "
    .. "between neighbours; that makes two groups when each side has %d repetitions or more, the ratio is %d or "
    .. "more, and its logarithm is %d times or more the median absolute deviation of either side's logarithms. "
    .. "Looked for in the %d timed rows of the published runs (%s); %s.")
    :format(g.min_reps, g.min_factor, g.min_spreads, looked, table.concat(names, ", "),
      #out == 0 and "no row splits" or ("%d split%s"):format(#out, #out == 1 and "s" or ""))
  return table.concat(out, "\n\n") -- a paragraph a row, then the rule
end

-- The default runs: the published one first, then every repeat. dir: the
-- kind's directory under root (results/, or results/pvm/ for another kind).
function ev.runs(root, dir)
  dir = ("%s/%s"):format(root, dir or "results")
  local runs = { load(dir .. "/results.json") }
  local kind = kinds.of(runs[1].machine)
  for _, d in ipairs(ls(dir .. "/repeats", "^%d+T%d+Z$")) do
    local run = load(("%s/repeats/%s/results.json"):format(dir, d))
    if kinds.of(run.machine) ~= kind then -- a repeat is pooled with its published run: one kind only
      error(("publish: %s was made on %s, the published run beside it on %s"):format(run.path,
        tostring(kinds.of(run.machine) or "an unknown kind"), tostring(kind)), 0)
    end
    -- and one configuration: the same knobs (where the files went aside)
    local mine, theirs = calibrations.knobs(run), calibrations.knobs(runs[1])
    for _, t in ipairs { mine, theirs } do
      for k in pairs(t) do
        if tostring(mine[k]) ~= tostring(theirs[k]) then
          error(("publish: %s was run with %s=%s, the published run beside it with %s=%s"):format(run.path, k,
            tostring(mine[k]), k, tostring(theirs[k])), 0)
        end
      end
    end
    runs[#runs + 1] = run
  end
  return runs
end

-- The calibration kept beside the runs (dir/calibrations) that every run
-- matches, never the reader's own $CALIBRATIONS: the cal and its folder.
function ev.calibration(root, dir, runs)
  local folder = ("%s/%s/calibrations"):format(root, dir or "results")
  local names = ls(folder, "%.json$")
  if #names == 0 then return nil, folder end
  -- a calibration kept beside the runs that cannot judge them is a broken publish, not "not judged"
  table.sort(names)
  local why = {}
  for _, name in ipairs(names) do
    local cal, bad = calibrations.load(folder .. "/" .. name)
    if not cal then error(("publish: %s/calibrations/%s: %s"):format(dir or "results", name, bad), 0) end
    for _, d in ipairs(runs) do
      bad = bad or calibrations.mismatch(cal, d)
    end
    if not bad then return cal, folder end
    why[#why + 1] = name .. ": " .. bad
  end
  error(("publish: no calibration in %s/calibrations/ applies to every published run (%s)"):format(dir or "results",
    table.concat(why, "; ")), 0)
end

-- compare.lua's verdicts, the published run against each repeat ({case column
-- = {verdict, p} per pair}); with ftrun, compare.lua's own output as text.
function ev.verdicts(root, runs, ftrun, dir)
  local cal, folder = ev.calibration(root, dir, runs)
  local out, all = { cal = cal }, {}
  for j = 2, #runs do
    local rows = verdicts.rows({ runs[1] }, { runs[j] })
    for i, r in ipairs(rows) do
      local c = cal and cal.by_row[r.case .. "\0" .. r.column]
      for k, v in pairs(verdicts.runs(r.old, r.new, c, { ALPHA = 0.05, SEED = 1, i = i })) do r[k] = v end
    end
    verdicts.judge(rows, { ALPHA = 0.05 })
    for _, r in ipairs(rows) do
      local k = r.case .. " " .. r.column
      out[k] = out[k] or {}
      out[k][j - 1] = { pair = j - 1, case = r.case, column = r.column, verdict = r.verdict, p = r.p }
      all[#all + 1] = out[k][j - 1]
    end
  end
  out.pairs, out.rows = #runs - 1, all
  if not ftrun then return out end
  local paths = {}
  -- the repo's own paths, as the block shows them
  for i, r in ipairs(runs) do paths[i] = r.path:sub(#root + 2) end
  out.text = ev.compare(root, ftrun, paths, cal and folder:sub(#root + 2) or "/nonexistent")
  return out
end

-- compare.lua's output on runs (paths from root) with CALIBRATIONS=folder;
-- a warning it prints goes to stderr, not into the text (another ftrun's
-- left settings would otherwise land in compare.txt).
function ev.compare(root, ftrun, paths, folder)
  -- the options docs.lua was given stay its own (compare.lua refuses a knob it does not take)
  local text, ok = ev.output(("cd %s && env -u CHECK -u ROOT CALIBRATIONS=%s %s compare.lua %s"):format(
    shell.path(root), sh(folder), ftrun, table.concat(stats.map(paths, sh), " ")))
  if not ok then error("publish: compare.lua failed on " .. table.concat(paths, " "), 0) end
  return text
end

-- compare.lua's verdicts on one row ("A pass1"), in its report's words.
function ev.verdict(v, key) return reports.of("compare").verdict(v, key, ev) end

ev.interval, ev.vinterval, ev.ms, ev.load, ev.row, ev.value, ev.list, ev.count = interval, vinterval, ms, load, row,
  value, list, count
ev.read, ev.json_file = read, json_file

return ev
