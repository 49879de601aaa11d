-- The results prose's claims, computed from the committed JSON. Each claim
-- is a block of sentences between two marker lines
--   <!-- ftrun claims NAME: begin --> ... <!-- ftrun claims NAME: end -->
-- in results/README.md (and README.md's headline); claims.write puts
-- them there, claims.check recomputes them and lists every block that
-- differs, and every digit typed by hand outside the generated blocks.
--
-- One rounding rule for every measured figure: three significant digits,
-- half away from zero (counts of pages, faults and repetitions are exact).
-- Each claim says in how many runs it held, and where runs are compared,
-- what compare.lua said.
local inference = require "inference"
local guesttable = require "guesttable"
local calibrations = require "calibrations"
local calreport = require "calreport"
local json = require "json"
local kinds = require "kinds"
local plots = require "plots"
local provenance = require "provenance"
local prosefacts = require "prosefacts"
local regimes = require "regimes"
local report = require "report"
local reports = require "reports"
local results = require "results"
local runfiles = require "runfiles"
local seal = require "seal"
local stats = require "stats"
local summary = require "summary"
local verdicts = require "verdicts"

local claims = {}

function claims.round(x)
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
local R = claims.round

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
claims.held = held

local textfile = require "textfile"
local units = require "units"
local read = textfile.read

-- Each JSON decoded once per text: a check reads a published run's JSON
-- from several of its parts (the 18 MB slow-period run ten times), and
-- decoding was half its time. No part changes a decoded document.
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
  if not text then error(("claims: %s: cannot read it"):format(path), 0) end
  local ok, doc = decode(path, text)
  if not ok or type(doc) ~= "table" or type(doc.rows) ~= "table" then
    error(("claims: %s: not an ftrun results JSON"):format(path), 0)
  end
  doc.path = path
  return doc
end

local function row(doc, case, column)
  for _, r in ipairs(doc.rows) do
    if r.case == case and r.column == column then return r end
  end
  error(("claims: %s has no row %s %s"):format(doc.path, case, column), 0)
end

local function value(doc, name, key, want)
  for _, v in ipairs(doc.values) do
    if v.value == name and (not key or v[key] == want) then return v end
  end
  error(("claims: %s has no value %s%s"):format(doc.path, name, key and " " .. key .. "=" .. tostring(want) or ""), 0)
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

-- The published files under root's results/ whose names match pattern,
-- at any depth, sorted: results/runs/ holds a user's own runs, git-ignored,
-- which no claim reads.
local function published_files(root, pattern)
  local runs_dir = root .. "/results/runs/"
  local out = {}
  for _, path in ipairs(shell.find(root .. "/results", pattern)) do
    if path:sub(1, #runs_dir) ~= runs_dir then out[#out + 1] = path end
  end
  return out
end

-- The object a JSON file holds, or nil: no file, not JSON, or not an object.
local function json_file(path)
  local ok, doc = decode(path, read(path) or "")
  return ok and type(doc) == "table" and doc or nil
end

-- Every results JSON in dir, or published under root's results/ at any
-- depth when dir is nil, sorted by path, decoded: { path, file (from root), prefix
-- (the path its run's other files share: raw.txt, summary.md, plots),
-- name (its file name), doc (nil where it is not a JSON object) }.
local function published_runs(root, dir)
  local out = {}
  local paths = dir and stats.map(ls(dir, "results%.json$"), function(n) return dir .. "/" .. n end)
    or published_files(root, "results%.json$")
  table.sort(paths)
  for _, path in ipairs(paths) do
    out[#out + 1] = { path = path, file = path:sub(#root + 2), name = path:match("[^/]*$"),
      prefix = path:sub(1, -#"results.json" - 1), doc = json_file(path) }
  end
  return out
end

-- Two separated groups among one row's repetitions, or nil. The rule: sort
-- the values and take their logarithms (a factor is the same distance at
-- 400 ns as at 4000 ns, and a rate splits as its time does), then cut at
-- the largest gap between neighbours. The cut counts as two groups when
--   * each side holds at least GROUPS.min_reps repetitions: one or two far
--     values are stalls, which the tables' cv and stall counts already show;
--   * the sides' nearest values are GROUPS.min_factor or more apart, so that
--     the clock's tick (20 against 30 ns) and ordinary spread never count;
--   * the gap is GROUPS.min_spreads times or more each side's median
--     absolute deviation from its own median: much wider than the spread
--     within either group, measured robustly, so a straggler inside a
--     group does not hide the split. Of 20000 made-up unimodal samples of
--     15 (normal, exponential and heavy-tailed logarithms) at most 0.5 %
--     reach 8 deviations.
-- regimes.lua answers another question (does the level shift for a
-- stretch of consecutive repetitions, on ranks): groups that alternate
-- through a run shift nothing, and ranks do not say how far apart values
-- are. Each group: {n, median, min, max, reps = the repetitions, in order}.
claims.GROUPS = { min_reps = 3, min_factor = 2, min_spreads = 8 }

local function mad(xs)
  local m, d = stats.median(xs), {}
  for i, x in ipairs(xs) do d[i] = math.abs(x - m) end
  return stats.median(d)
end

function claims.groups(values)
  local sorted = {}
  for i, x in ipairs(values) do
    -- a logarithm needs a finite positive value (NaN fails x == x)
    if type(x) ~= "number" or x ~= x or x <= 0 or x == math.huge then return nil end
    sorted[i] = { x = x, rep = i, log = math.log(x) }
  end
  local g = claims.GROUPS
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

-- 1, 3, 6, 7, 8 as "1, 3 and 6–8".
local function rep_spans(reps)
  local spans = {}
  for _, r in ipairs(reps) do
    local last = spans[#spans]
    if last and last[2] == r - 1 then last[2] = r else spans[#spans + 1] = { r, r } end
  end
  return inference.spans(spans)
end

-- The run's other rows whose values put the same repetitions apart (every
-- value of one group below every value of the other): a coincidence or a
-- common cause, which one run cannot tell, but worth naming.
local function same_apart(doc, r, lower)
  local in_lower, out = {}, {}
  for _, rep in ipairs(lower.reps) do in_lower[rep] = true end
  for _, o in ipairs(doc.rows) do
    if o ~= r and type(o.values) == "table" then
      local a, b = { math.huge, -math.huge }, { math.huge, -math.huge }
      for i, x in ipairs(o.values) do
        local t = in_lower[i] and a or b
        if type(x) == "number" then t[1], t[2] = math.min(t[1], x), math.max(t[2], x) end
      end
      if a[2] < b[1] or b[2] < a[1] then
        out[#out + 1] = ("%s's \"%s\" (the lower group's repetitions from %s to %s, the upper's from %s to %s %s)")
          :format(o.case, o.label, R(a[1]), R(a[2]), R(b[1]), R(b[2]), o.unit)
      end
    end
  end
  return out
end

-- One row's split, in words: the groups, where the table's median sits,
-- what else in the run (faults, other rows, the regime test) goes with it.
local function split_sentence(lead, doc, r, split)
  local lo, hi = split[1], split[2]
  local unit = r.unit == "ns/page" and ("ns per %d KiB"):format(doc.page_size // 1024) or r.unit
  local few = lo.n <= hi.n and lo or hi
  local function side(g, with_unit)
    return ("%d at a median of %s%s (from %s to %s%s)"):format(g.n, R(g.median), with_unit and " " .. unit or "",
      R(g.min), R(g.max), g == few and "; repetitions " .. rep_spans(g.reps) or "")
  end
  local where = r.median < lo.min and "lies below both groups" or r.median <= lo.max and "lies within the lower group"
    or r.median < hi.min and "falls between the groups" or r.median <= hi.max and "lies within the upper group"
    or "lies above both groups"
  local out = { ("%s, cycle %s's row \"%s\": its %d repetitions fall into two separated groups, %s and %s, %s times "
    .. "apart where they are nearest. The table's median, %s, %s%s.")
    :format(lead, r.case, r.label, #r.values, side(lo, true), side(hi, false), R(split.factor), interval(r), where,
      (r.lo <= lo.max and r.hi >= hi.min) and ", and its interval spans the gap between them" or "") }
  local same = same_apart(doc, r, lo)
  out[#out + 1] = #same == 0 and "No other row of the run puts the same repetitions apart."
    or ("Other rows of the run that put the same repetitions apart: %s; a coincidence or a common cause, which "
      .. "one run cannot tell."):format(table.concat(same, "; "))
  for _, f in ipairs(doc.rows) do
    if f.case == r.case and f.column == r.column .. "_faults" and f.min == f.max then
      out[#out + 1] = ("Every repetition took %d fault%s in it, in both groups alike."):format(f.min,
        f.min == 1 and "" or "s")
    end
  end
  out[#out + 1] = regimes.of(r.unit, r.values) and "The regime test (in time order) also finds a lasting shift in it."
    or "The regime test (in time order) finds no lasting shift in it."
  return table.concat(out, " ")
end

-- The claim: every timed row of the published runs whose repetitions split
-- by claims.groups, then the rule. published: { {name, doc, lead = "With ..."}, ... }.
function claims.bimodal(published)
  local out, looked, names = {}, 0, {}
  for i, p in ipairs(published) do
    names[i] = p[1]
    for _, r in ipairs(p[2].rows) do
      if regimes.testable(r) and type(r.values) == "table" then
        looked = looked + 1
        local split = claims.groups(r.values)
        if split then out[#out + 1] = split_sentence(p.lead, p[2], r, split) end
      end
    end
  end
  local g = claims.GROUPS
  out[#out + 1] = ((#out > 0 and "What puts a repetition in one group or the other is not explained. " or "")
    .. "The rule (claims.groups in scripts/lib/claims.lua): sort a row's repetitions and cut at the largest ratio "
    .. "between neighbours; that makes two groups when each side has %d repetitions or more, the ratio is %d or "
    .. "more, and its logarithm is %d times or more the median absolute deviation of either side's logarithms. "
    .. "Looked for in the %d timed rows of the published runs (%s); %s.")
    :format(g.min_reps, g.min_factor, g.min_spreads, looked, table.concat(names, ", "),
      #out == 0 and "no row splits" or ("%d split%s"):format(#out, #out == 1 and "s" or ""))
  return table.concat(out, "\n\n") -- a paragraph a row, then the rule
end

-- The default runs: the published one first, then every repeat. dir: the
-- kind's directory under root (results/, or results/pvm/ for another kind).
function claims.runs(root, dir)
  dir = ("%s/%s"):format(root, dir or "results")
  local runs = { load(dir .. "/results.json") }
  local kind = kinds.of(runs[1].machine)
  for _, d in ipairs(ls(dir .. "/repeats", "^%d+T%d+Z$")) do
    local run = load(("%s/repeats/%s/results.json"):format(dir, d))
    if kinds.of(run.machine) ~= kind then -- a repeat is pooled with its published run: one kind only
      error(("claims: %s was made on %s, the published run beside it on %s"):format(run.path,
        tostring(kinds.of(run.machine) or "an unknown kind"), tostring(kind)), 0)
    end
    -- and one configuration: the same knobs (where the files went aside)
    local mine, theirs = calibrations.knobs(run), calibrations.knobs(runs[1])
    for _, t in ipairs { mine, theirs } do
      for k in pairs(t) do
        if tostring(mine[k]) ~= tostring(theirs[k]) then
          error(("claims: %s was run with %s=%s, the published run beside it with %s=%s"):format(run.path, k,
            tostring(mine[k]), k, tostring(theirs[k])), 0)
        end
      end
    end
    runs[#runs + 1] = run
  end
  return runs
end

-- One kind's figures: its runs, pass 1 and pass 2 repeated of cycle A in
-- each, and where its attribution.lua run is published, the stages of a
-- 4 KiB first touch by their share of the samples.
local function kind_figures(root, p)
  local f = { kind = p.kind, dir = p.dir, runs = claims.runs(root, p.dir) }
  f.pub, f.p1, f.p2r = f.runs[1], {}, {}
  for i, d in ipairs(f.runs) do f.p1[i], f.p2r[i] = row(d, "A", "pass1").values, row(d, "A", "pass2r").values end
  local text = read(("%s/%s/exp-attribution-results.json"):format(root, p.dir))
  if text then
    local attr, stages = load(("%s/%s/exp-attribution-results.json"):format(root, p.dir)), {}
    local case = "pass 1, 4 KiB pages"
    for _, x in ipairs(attr.values) do
      if x.value == "stage" and x.case == case and x.x > 0 then stages[#stages + 1] = x end
    end
    table.sort(stages, function(a, b) return a.x > b.x end)
    local top = {}
    for i = 1, math.min(3, #stages) do top[i] = ("%s %s %%"):format(stages[i].stage, R(stages[i].x)) end
    f.attribution = ("its profile (attribution.lua, %s samples of a 4 KiB first touch) puts %s first")
      :format(value(attr, "samples", "case", case).x, table.concat(top, ", "))
  end
  return f
end

-- Both machine kinds side by side: each published kind's default run and
-- the factor between its first touch and the home kind's, the run as the
-- unit. Returns the block and the factors ({kind, dir, p1 = {x, lo, hi}}).
function claims.kinds(root)
  local published = kinds.published(root)
  if #published < 2 then
    return ("Runs of one machine kind are published (%s); a machine of another kind publishes into "
      .. "`results/<kind>/` and its figures appear here beside these."):format(published[1] and published[1].kind
      or "none"), {}
  end
  local all = {}
  for i, p in ipairs(published) do all[i] = kind_figures(root, p) end
  local out = {}
  for _, f in ipairs(all) do
    local m = f.pub.machine or {}
    out[#out + 1] = ("- **%s guest** (`%s/`, kernel %s, clocksource %s, %d MiB, %d repetitions a run, %d run%s): "
      .. "pass 1 cost %s ns per %d KiB page in the published run, pass 2 repeated %s ns, %s times apart within each "
      .. "repetition%s.")
      :format(f.kind, f.dir, tostring(m.kernel), tostring(m.clocksource), f.pub.bytes >> 20,
        row(f.pub, "A", "pass1").n, #f.runs, #f.runs == 1 and "" or "s",
        interval(row(f.pub, "A", "pass1")), f.pub.page_size // 1024, interval(row(f.pub, "A", "pass2r")),
        vinterval(value(f.pub, "first_touch")), f.attribution and "; " .. f.attribution or "")
  end
  local home, sentences, factors = all[1], {}, {}
  for i = 2, #all do
    local f = all[i]
    local differ = {}
    for _, k in ipairs { "MIB", "THP", "CYCLES", "COUNTERS", "REPORTING" } do
      -- a run from before REPORTING existed left page reporting as booted, the knob's default
      local absent = k == "REPORTING" and "as-booted" or nil
      local a, b = (home.pub.knobs or {})[k] or absent, (f.pub.knobs or {})[k] or absent
      if tostring(a) ~= tostring(b) then differ[#differ + 1] = ("%s (%s against %s)"):format(k, tostring(b),
        tostring(a)) end
    end
    if #differ > 0 then
      sentences[#sentences + 1] = ("The %s guest's default run and the %s guest's differ in %s, so no factor "
        .. "between them is computed."):format(f.kind, home.kind, table.concat(differ, ", "))
      goto next_kind
    end
    local r1, lo1, hi1 = inference.bootstrap_ratio(home.p1, f.p1, { seed = 1 })
    local r2, lo2, hi2 = inference.bootstrap_ratio(home.p2r, f.p2r, { seed = 1 })
    factors[#factors + 1] = { kind = f.kind, dir = f.dir, home = home.kind, p1 = { x = r1, lo = lo1, hi = hi1 },
      median = row(f.pub, "A", "pass1") }
    sentences[#sentences + 1] = ("A first touch on the %s guest cost **%s [%s, %s] times** the %s guest's, and a "
      .. "later pass over touched pages %s [%s, %s] times: the ratios of the medians pooled over each kind's runs "
      .. "(%d against %d), the intervals from a bootstrap of runs, then repetitions. The two kinds ran on different "
      .. "machines at different times, so the factor belongs to these machines; what makes it is not explained by "
      .. "these runs alone.")
      :format(f.kind, R(r1), R(lo1), R(hi1), home.kind, R(r2), R(lo2), R(hi2), #f.runs, #home.runs)
    ::next_kind::
  end
  return table.concat(out, "\n") .. "\n\n" .. table.concat(sentences, " "), factors
end

-- A markdown table line's cells, trimmed; nil for a line that is not one.
local function cells_of(l)
  if not l:match("^|.*|$") then return nil end
  local out = {}
  for c in l:sub(2, -2):gmatch("([^|]*)|?") do out[#out + 1] = c:match("^%s*(.-)%s*$") end
  if out[#out] == "" then out[#out] = nil end
  return out
end

-- The calibration of the published configuration that make publish keeps
-- beside the runs (dir/calibrations, made by calibrate.lua on the kind's
-- machine), when every run matches it: the path, the file, and the folder.
-- Never the reader's own $CALIBRATIONS: a published claim must not depend
-- on what the machine reading it has calibrated.
function claims.calibration(root, dir, runs)
  local folder = ("%s/%s/calibrations"):format(root, dir or "results")
  local names = ls(folder, "%.json$")
  if #names == 0 then return nil, folder end
  -- a calibration kept beside the runs that cannot judge them is a broken publish, not "not judged"
  table.sort(names)
  local why = {}
  for _, name in ipairs(names) do
    local cal, bad = calibrations.load(folder .. "/" .. name)
    if not cal then error(("claims: %s/calibrations/%s: %s"):format(dir or "results", name, bad), 0) end
    for _, d in ipairs(runs) do
      bad = bad or calibrations.mismatch(cal, d)
    end
    if not bad then return cal, folder end
    why[#why + 1] = name .. ": " .. bad
  end
  error(("claims: no calibration in %s/calibrations/ applies to every published run (%s)"):format(dir or "results",
    table.concat(why, "; ")), 0)
end

-- compare.lua's verdicts, the published run against each repeat, from
-- the library that judges them for compare.lua, against the published
-- calibration when there is one: for "case column", a list of { verdict =
-- "~" or "+12.3 % (worse)" ..., p = 0.03 }. With ftrun, text: compare.lua's
-- own output (run under the same calibration), for the block that quotes it.
function claims.verdicts(root, runs, ftrun, dir)
  local cal, folder = claims.calibration(root, dir, runs)
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
  for i, r in ipairs(runs) do paths[i] = sh(r.path:sub(#root + 2)) end
  -- the options claims.lua was given stay its own (compare.lua refuses a knob it does not take)
  local p = assert(io.popen(("cd %s && env -u CHECK -u ROOT CALIBRATIONS=%s %s compare.lua %s 2>&1"):format(
    shell.path(root), cal and sh(folder) or "/nonexistent", ftrun, table.concat(paths, " "))))
  out.text = p:read("a")
  if not p:close() then error("claims: compare.lua failed: " .. (out.text:match("[^\n]*") or ""), 0) end
  return out
end

local function significant(verdict)
  return verdicts.kind(verdict) == "different"
end

-- "compare.lua, the published run against each repeat: no significant
-- difference (p 0.137; p 0.0613)".
local function verdict(v, key)
  local rows = v[key]
  if v.pairs == 0 then return "one run: nothing to compare" end
  if not rows then error("claims: compare.lua has no row " .. key, 0) end
  local same = count(rows, function(r)
    local kind = verdicts.kind(r.verdict)
    return kind == "same" or kind == "undecided"
  end)
  local unjudged = count(rows, function(r) return verdicts.kind(r.verdict) == "unjudged" end)
  local details = {}
  for _, r in ipairs(rows) do
    local p = r.p and "p " .. R(r.p) or "no p"
    details[#details + 1] = significant(r.verdict)
      and ("%s, %s"):format(r.verdict:gsub("(%d+%.?%d*)", function(n) return R(tonumber(n)) end), p)
      or r.verdict:match("^%?") and r.verdict or p
  end
  local phrase = unjudged == #rows and "not judged"
    or same == #rows and "no significant difference"
    or same + unjudged == 0 and "a significant difference"
    or ("no significant difference in %d of %d"):format(same, #rows)
  return ("compare.lua, the published run against each repeat: %s (%s)"):format(phrase, table.concat(details, "; "))
end

-- The seed's figures (macOS, 16 KiB pages), quoted from its write-up: the
-- first touch / second pass ratio and the touched / fresh fill ratio.
claims.SEED = { first_touch_ratio = 155, fill_ratio = 5.0 }

-- The claims, one function a paragraph of results/README.md (or a block of
-- README.md), each given the context c: the runs (c.pub the published one,
-- c.others the repeats), compare.lua's verdicts (c.v) and the figures
-- derived once (c.pages, c.kib, c.mib); a paragraph that finds a figure
-- another one needs keeps it in c (c.one_fault, c.always, ...), so the
-- order below matters.
local P = {}

-- Cycle C's first touch against cycle A's in the same repetitions: the
-- headline quotes cycle A (the seed's pass 1, untimed per page), and C, which
-- times every page, measures the same first touch differently.
local function a_against_c(doc)
  local a, cc = row(doc, "A", "pass1").values, row(doc, "C", "pass1").values
  local lower, n = 0, 0
  for i = 1, math.min(#a, #cc) do
    if type(a[i]) == "number" and type(cc[i]) == "number" then
      n = n + 1
      if cc[i] < a[i] then lower = lower + 1 end
    end
  end
  return lower, n
end

local function c_sentence(doc, runs)
  local lower, n = a_against_c(doc)
  local all_lower = runs and count(runs, function(d) local k, m = a_against_c(d); return k == m end)
  local p = inference.sign_test(lower, n)
  return ("Cycle C's first touch, each page timed, cost %s ns per %d KiB in the same repetitions, below cycle A's "
    .. "in %d of %d%s; %s.")
    :format(interval(row(doc, "C", "pass1")), doc.page_size // 1024, lower, n,
      runs and (", and in every repetition %s"):format(held(all_lower, #runs)) or "",
      p < 0.05 and ("why the two cycles differ is not explained (sign test p = %.2g)"):format(p)
        or ("no difference between them shown (sign test p = %.2g)"):format(p))
end

function P.first_touch(c)
  local p1 = row(c.pub, "A", "pass1")
  c.p1 = p1
  c.one_fault = count(c.runs, function(d)
    local r = row(d, "A", "pass1_faults")
    return r.min == d.pages and r.max == d.pages
  end)
  return ("Pass 1 took one fault per page, %d faults for the %d MiB, in every repetition, %s. "
    .. "Its median cost was **%s ns per %d KiB page** in the published run%s, the interval in brackets; "
    .. "%s s to bring in the whole buffer at the median. %s. This is cycle A's pass 1, which every figure "
    .. "called the first touch on this page quotes. %s")
    :format(c.pages, c.mib, held(c.one_fault, c.n), interval(p1), c.kib, c.medians("A", "pass1"),
      R(p1.median * c.pages / 1e9), verdict(c.v, "A pass1"), c_sentence(c.pub, c.runs))
end

function P.headline_ratio(c)
  c.ft_ratio = value(c.pub, "first_touch")
  c.above = count(c.runs, function(d) return value(d, "first_touch").lo > 100 end)
  local seed_in = count(c.runs, function(d)
    local x = value(d, "first_touch")
    return x.lo <= claims.SEED.first_touch_ratio and claims.SEED.first_touch_ratio <= x.hi
  end)
  return ("Taken within each repetition, pass 1 cost **%s times** pass 2 repeated in the "
    .. "published run%s: more than a hundred later passes at the interval's lower end %s. The seed's %s lies "
    .. "inside the interval %s. Pass 2 repeated: %s ns per page; %s.")
    :format(vinterval(c.ft_ratio), c.vmedians("first_touch"), held(c.above, c.n), R(claims.SEED.first_touch_ratio),
      held(seed_in, c.n), interval(row(c.pub, "A", "pass2r")), verdict(c.v, "A pass2r"))
end

function P.fill(c)
  local pub, n = c.pub, c.n
  local fill = value(pub, "fill_bandwidth")
  local fill_above = count(c.runs, function(d) return value(d, "fill_bandwidth").lo > 1 end)
  local fresh = value(pub, "fresh_fill_time")
  local fresh_below = count(c.runs, function(d) return value(d, "fresh_fill_time").hi < 1 end)
  return ("Filling touched pages ran at %s GB/s, filling a fresh mapping (its %d faults inside) at %s "
    .. "GB/s; within each repetition the touched fill was **%s times** the fresh one%s, above 1 %s "
    .. "(the seed: %s). The fresh fill took %s of the time of pass 1 plus the touched fill%s: below 1 "
    .. "(faulting while writing is cheaper than faulting first and writing after) %s. Touched fill: %s; "
    .. "fresh fill: %s.")
    :format(interval(row(pub, "A", "fill")), row(pub, "B", "fill_faults").median, interval(row(pub, "B", "fill")),
      vinterval(fill), c.vmedians("fill_bandwidth"), held(fill_above, n), R(claims.SEED.fill_ratio),
      vinterval(fresh), c.vmedians("fresh_fill_time"), held(fresh_below, n), verdict(c.v, "A fill"),
      verdict(c.v, "B fill"))
end

-- A run's repetitions of one row on either side of its stall threshold, and
-- in how many of each the guest counted a CPU migration (the count covers
-- the whole repetition of the case, not the one pass).
local function stalls_migrated(doc, case, column)
  local threshold, records = value(doc, "stall_threshold").x, {}
  for _, c in ipairs(doc.reps) do if c.case == case then records = c.records end end
  local out = { stalled = 0, with = 0, other = 0, other_with = 0 }
  for i, x in ipairs(row(doc, case, column).values) do
    local moved = (((records[i] or {}).noise or {}).migrations or 0) > 0 and 1 or 0
    if x > threshold then out.stalled, out.with = out.stalled + 1, out.with + moved
    else out.other, out.other_with = out.other + 1, out.other_with + moved end
  end
  local counted = value(doc, "stalls", "column", column).x
  if out.stalled ~= counted then
    error(("claims: %s: %s %s: %d repetitions above the threshold, the run counted %d stalls"):format(doc.path, case,
      column, out.stalled, counted), 0)
  end
  return out
end

-- What the guest counted in THP=always's stalled repetitions.
local function stalls_always(root)
  local doc = load(root .. "/results/thp-always-results.json")
  local a, d = stalls_migrated(doc, "A", "pass2"), stalls_migrated(doc, "D", "touch2")
  return (" With `THP=always` (its threshold at %s ns per page) pass 2 stalled in %d of %d repetitions and the "
    .. "second touch in %d: the guest counted a CPU migration in %d of the %d stalled repetitions of cycle A and in "
    .. "%d of its %d others, in %d of the %d stalled of cycle D and in %d of its %d others (a count covers the "
    .. "repetition of the cycle, not the pass). Why they stalled is not explained.")
    :format(R(value(doc, "stall_threshold").x), a.stalled, a.stalled + a.other, d.stalled, a.with, a.stalled,
      a.other_with, a.other, d.with, d.stalled, d.other_with, d.other)
end

function P.stalls(c)
  local pub, n, runs = c.pub, c.n, c.runs
  local function stalls(d, column) return value(d, "stalls", "column", column) end
  local threshold = value(pub, "stall_threshold")
  local stalled = count(runs, function(d) return stalls(d, "pass2").x > 0 end)
  local clean2r = count(runs, function(d) return stalls(d, "pass2r").x == 0 end)
  return ("With the stall threshold at %s ns per page, pass 2 had a stalled repetition %s (%s of %d; "
    .. "the worst at %s ns per page), the second touch after malloc %s (%s; the worst at %s), and pass 2 "
    .. "repeated stayed below it in every repetition, %s. Passes 2 and the second touch took no counted fault "
    .. "in any repetition %s. Cycle C: %s %% of "
    .. "pass 2's pages took more than %d ns, %s ns on average.")
    :format(R(threshold.x), held(stalled, n), list(runs, function(d) return tostring(stalls(d, "pass2").x) end),
      stalls(pub, "pass2").of, list(runs, function(d) return R(stalls(d, "pass2").worst) end),
      held(count(runs, function(d) return stalls(d, "touch2").x > 0 end), n),
      list(runs, function(d) return tostring(stalls(d, "touch2").x) end),
      list(runs, function(d) return R(stalls(d, "touch2").worst) end), held(clean2r, n),
      held(count(runs, function(d) return row(d, "A", "pass2_faults").max == 0 and row(d, "D", "touch2_faults").max == 0
        end), n),
      interval(row(pub, "C", "pass2_slow_pct")), value(pub, "slow_ns").x, interval(row(pub, "C", "pass2_slow_mean")))
    .. stalls_always(c.root)
end

function P.malloc(c)
  local pub, n, runs = c.pub, c.n, c.runs
  local same = value(pub, "same_block")
  local all_same = count(runs, function(d) local s = value(d, "same_block"); return s.x == s.of end)
  -- every page faulted in once: all but one in the first touch, the other in the malloc call
  c.minus_one = count(runs, function(d)
    local r, m = row(d, "D", "touch1_faults"), row(d, "D", "malloc_faults")
    return r.min == d.pages - 1 and r.max == d.pages - 1 and m.min == 1 and m.max == 1
  end)
  local mft = value(pub, "malloc_first_touch")
  local tf, mf = row(pub, "D", "touch1_faults").median, row(pub, "D", "malloc_faults").median
  c.contains_one = count(runs, function(d)
    local x = value(d, "malloc_first_touch")
    return x.lo <= 1 and 1 <= x.hi
  end)
  return ("malloc returned the address just freed in %d of %d repetitions of the published run, and in "
    .. "every repetition, %s; the first touch after it took %d faults and the malloc call %d%s in every "
    .. "repetition, %s, and cost **%s times** the first touch after mmap "
    .. "in the same repetition%s, an interval holding 1 %s. free took %s ms. %s.")
    :format(same.x, same.of, held(all_same, n), tf, mf,
      tf + mf == c.pages and (" (one fault for each of the %d pages between them)"):format(c.pages) or "",
      held(c.minus_one, n), vinterval(mft),
      c.vmedians("malloc_first_touch"), held(c.contains_one, n), interval(ms(row(pub, "D", "free"))),
      verdict(c.v, "D touch1"))
end

function P.munmap(c)
  local mun = value(c.pub, "munmap_share")
  return ("munmap returned the pages at %s ns per page, %s of what pass 1 cost per page%s.")
    :format(interval(row(c.pub, "A", "munmap")), vinterval(mun), c.vmedians("munmap_share"))
end

function P.runner(c)
  local own = value(c.pub, "own_time")
  return ("The runner itself took %s %% of the published run's %s s (the rest: the timed windows, the "
    .. "map and release calls and the read-backs)%s.")
    :format(R(own.x), R(own.wall_ms / 1e3), #c.others == 0 and "" or (", %s %% in the repeats"):format(list(c.others,
      function(d) return R(value(d, "own_time").x) end)))
end

-- compare.lua's table cut to what it found: every row significant in any
-- comparison, and pass 1's.
function P.compare(c)
  local keep, shown = {}, 0
  for _, r in ipairs(c.v.rows) do
    if significant(r.verdict) then shown = shown + 1 end
    if significant(r.verdict) or (r.case == "A" and r.column == "pass1") then
      keep[r.case .. " " .. r.column] = true
    end
  end
  local lines = {}
  for l in c.v.text:gmatch("[^\n]+") do
    local cells = cells_of(l)
    if l:match("^old: ") or l:match("^new: ") or l:match("^geomean")
      or (cells and keep[cells[1] .. " " .. tostring(cells[2])])
      or (cells_of(l) or {})[1] == "case" then
      lines[#lines + 1] = l
    end
  end
  local unjudged = count(c.v.rows, function(r) return verdicts.kind(r.verdict) == "unjudged" end)
  local constant = count(c.v.rows, function(r) return r.verdict:match("^= %(one value%)") ~= nil end)
  local found = ("%d with a significant change; of the %d rows over the comparisons, %d could not be judged (%s), "
    .. "so they say nothing on whether the runs differ, and %d held one value"):format(shown, #c.v.rows, unjudged,
      c.v.cal and "the calibration has no spread for them" or "one run a side, and no calibration applies", constant)
  return ("`%s./ftrun compare.lua results/results.json results/repeats/*/results.json`, cut to pass 1's "
    .. "rows and every row with a significant change: %s (the whole output: "
    .. "`results/repeats/compare.txt`):\n\n"
    .. "```\n%s\n```"):format(c.v.cal and "CALIBRATIONS=results/calibrations " or "", found,
      table.concat(lines, "\n"))
end

-- THP, and the seed's page size.
function P.thp(c)
  c.always = load(c.root .. "/results/thp-always-results.json")
  c.k16 = load(c.root .. "/results/thp-16K-results.json")
  local always, k16 = c.always, c.k16
  c.f4k, c.f2m = row(c.pub, "A", "pass1_faults").median, row(always, "A", "pass1_faults").median
  local f16 = row(k16, "A", "pass1_faults").median
  return ("With `THP=always` pass 1 took %d faults for the %d MiB (%d KiB pages obtained; %d times fewer "
    .. "than with 4 KiB pages) and cost %s ns per 4 KiB of memory; within each repetition, %s times pass 2 "
    .. "repeated. With `THP=16K` (the seed's page size): %d faults, %s ns per 4 KiB, %s times pass 2 repeated. "
    .. "Each from one run, cycle A's pass 1. Whether a bigger page makes a first touch cheaper depends on the "
    .. "cycle: %s With `THP=16K`, cycle C: %s ns per 4 KiB, below cycle A's in %d of %d repetitions.")
    :format(c.f2m, always.bytes >> 20, value(always, "thp_page").x // 1024, c.f4k // c.f2m,
      interval(row(always, "A", "pass1")), vinterval(value(always, "first_touch")), f16,
      interval(row(k16, "A", "pass1")), vinterval(value(k16, "first_touch")),
      c_sentence(always):gsub("^Cycle C's", "with `THP=always`, cycle C's"), interval(row(k16, "C", "pass1")),
      a_against_c(k16))
end

function P.bimodal(c)
  return claims.bimodal { { "the default run", c.pub, lead = "In the default run" },
    { "`THP=always`", c.always, lead = "With `THP=always`" }, { "`THP=16K`", c.k16, lead = "With `THP=16K`" } }
end

-- The seed's predictions for Linux, each held or not by the runs.
function P.predictions(c)
  local pop = load(c.root .. "/results/exp-populate-results.json")
  local pop_map, pop_pass = row(pop, "MAP_POPULATE", "map_faults"), row(pop, "MAP_POPULATE", "pass_faults")
  local moved = pop_map.min == pop.pages and pop_pass.max == 0
  local gib_faults = (1 << 30) // c.pub.page_size
  local n, f4k, f2m = c.n, c.f4k, c.f2m
  return table.concat({
    ("1. A GiB takes %d faults with %d KiB pages: %s (pass 1 took %d for %d MiB, %s)."):format(gib_faults, c.kib,
      c.one_fault == n and f4k * (1024 // c.mib) == gib_faults and "held" or "did not hold", f4k, c.mib,
      held(c.one_fault, n)),
    ("2. With THP the fault count drops by 512: %s (%d faults against %d, a factor of %d; one run)."):format(
      f4k // f2m == 512 and "held" or "did not hold", f2m, f4k, f4k // f2m),
    ("3. glibc returns the block on free, so the first touch after malloc costs what pass 1 costs: %s "
      .. "(every page faulted again, one in the malloc call and the rest in the first touch, %s; "
      .. "the ratio's interval holds 1 %s)."):format(
      (c.minus_one == n and c.contains_one == n) and "held" or "held only in part", held(c.minus_one, n),
      held(c.contains_one, n)),
    ("4. MAP_POPULATE moves the faults into the mmap call: %s (%d faults in the call, %d in the pass after; "
      .. "one run of populate.lua)."):format(moved and "held" or "did not hold", pop_map.median, pop_pass.max),
    claims.placement(c.root),
  }, "\n")
end

-- attribution.lua: every case's stage shares, as its values give them.
function P.attribution(c)
  local attr = load(c.root .. "/results/exp-attribution-results.json")
  local stages, order = {}, {}
  for _, x in ipairs(attr.values) do
    if x.value == "stage" then
      if not stages[x.case] then stages[x.case] = {}; order[#order + 1] = x.case end
      if x.x > 0 then table.insert(stages[x.case], ("%s %s %%"):format(x.stage, R(x.x))) end
    end
  end
  local attr_lines = {}
  for _, case in ipairs(order) do
    attr_lines[#attr_lines + 1] = ("- %s (%d samples): %s"):format(case, value(attr, "samples", "case", case).x,
      table.concat(stages[case], ", "))
  end
  return ("The share of each stage in each case's samples, pooled over the %s repetitions of one run "
    .. "(cpu-clock samples, so time with interrupts off lands where they come back on):\n\n%s")
    :format(tostring(attr.knobs and attr.knobs.REPS or "?"), table.concat(attr_lines, "\n"))
end

-- pagesize.lua: the line through each size's cost per fault, over the minima and over the medians.
function P.pagesize(c)
  local ps = load(c.root .. "/results/exp-pagesize-results.json")
  local function fit(stat)
    local fixed, zero = value(ps, "fit_fixed", "stat", stat), value(ps, "fit_zeroing", "stat", stat)
    local worst, at = 0, "none"
    for _, x in ipairs(ps.values) do
      if x.value == "fit_residual" and x.stat == stat and x.in_fit and math.abs(x.pct) > math.abs(worst) then
        worst, at = x.pct, x.case
      end
    end
    return ("%s ns + bytes / %s GB/s (the largest residual of a size in the fit: %s %% at %s)"):format(R(fixed.x),
      R(zero.x), R(worst), at)
  end
  local k4 = value(ps, "fit_fixed", "stat", "min")
  local base = k4.x + ps.page_size * k4.per_byte_ns
  return ("Over the minima a fault cost %s; over the medians, %s. By the minima's line a %d KiB fault "
    .. "costs %s ns, %s %% of it the fixed part. One run, %s repetitions.")
    :format(fit("min"), fit("median"), c.kib, R(base), R(100 * k4.x / base),
      tostring(ps.knobs and ps.knobs.REPS or "?"))
end

function P.recycle(c)
  local rec = load(c.root .. "/results/exp-recycle-results.json")
  local function rrow(case, column) return row(rec, case, column) end
  local free2, plain2 = rrow("madvise(MADV_FREE)", "second"), rrow("nothing released (a plain second pass)", "second")
  local again = rrow("munmap, then a fresh mmap", "second_faults").min == rec.pages
    and rrow("madvise(MADV_DONTNEED)", "second_faults").min == rec.pages
  return ("After munmap and a fresh mmap, and after MADV_DONTNEED, the second touch took %d and %d faults "
    .. (again and "(every page again, in every repetition) " or "")
    .. "and cost %s and %s ns per page, against %s for the first. After MADV_FREE it took %d "
    .. "faults and cost %s ns per page, %s times a plain second pass (%s). One run, %d repetitions.")
    :format(rrow("munmap, then a fresh mmap", "second_faults").median,
      rrow("madvise(MADV_DONTNEED)", "second_faults").median, interval(rrow("munmap, then a fresh mmap", "second")),
      interval(rrow("madvise(MADV_DONTNEED)", "second")), interval(rrow("munmap, then a fresh mmap", "first")),
      rrow("madvise(MADV_FREE)", "second_faults").max, interval(free2), R(free2.median / plain2.median),
      interval(plain2), free2.n)
end

-- slowpages.lua: the seed's open question, pass 2's slow pages, by the guest's events in their windows.
function P.slowpages(c)
  local sp = load(c.root .. "/results/exp-slowpages-results.json")
  local function spv(name, want)
    for _, item in ipairs(sp.values) do
      local ok = item.value == name
      for k, x in pairs(want) do ok = ok and item[k] == x end
      if ok then return item end
    end
    error(("claims: %s has no value %s"):format(sp.path, name), 0)
  end
  local slow2 = spv("slow_pages", { case = "THP=never", pass = 2 })
  -- each cause's pages with their ns, from the plot data beside the JSON: the
  -- JSON's median_ns takes the lower middle value of an even count
  local ns, cause = {}, nil
  local dat = c.root .. "/results/exp-slowpages-pass2-thp-never-causes.dat"
  for l in (read(dat) or error("claims: " .. dat .. ": cannot read it", 0)):gmatch("[^\n]+") do
    local name = l:match("^# (.-): page index, ns, repetition$")
    if name then cause = name; ns[cause] = {}
    elseif cause and not l:match("^#") then ns[cause][#ns[cause] + 1] = tonumber(l:match("^%S+%s+(%S+)")) end
  end
  local shares, lower = {}, {}
  for _, item in ipairs(sp.values) do
    if item.value == "slow_share" and item.case == "THP=never" and item.pass == 2 then
      local mine = ns[item.cause]
      if not mine or #mine ~= item.pages then
        error(("claims: %s: %s holds %s pages, the JSON %d"):format(dat, item.cause, mine and #mine or "no",
          item.pages), 0)
      end
      local median = stats.median(mine)
      shares[#shares + 1] = ("%s %s %% (%d pages, median %s ns)"):format(item.cause, R(item.x), item.pages,
        R(median))
      if median ~= item.median_ns then
        lower[#lower + 1] = ("%.0f ns for the %s"):format(item.median_ns, item.cause)
      end
    end
  end
  local note = #lower == 0 and "" or (" The run's table gives %s: the lower of the two middle values; the "
    .. "median here is their mean, as everywhere else on this page."):format(table.concat(lower, ", "))
  local runs2 = spv("runs", { case = "THP=never", pass = 2 })
  local cost = spv("trace_cost", { thp = "never", pass = 1 })
  return ("Pass 2 after pass 1 (THP never, %d MiB, %d repetitions of one run): %d of %d page stores "
    .. "(%s %%) took more than %d ns, with %d events lost. By the guest's events in their windows: %s.%s Of the %d "
    .. "runs of slow pages that span two pages or more, %d have one cause throughout. The cause `host` is a "
    .. "pass's, not a page's: every slow page without a guest event is called `host` when the steal counter moved "
    .. "during its pass. Tracing made pass 1 %s than the untraced case interleaved with it (median of the "
    .. "per-repetition ratios). `cycles.lua` traces its cycle C only with `CAUSES=1`.")
    :format(sp.bytes >> 20, slow2.reps, slow2.x, slow2.reps * sp.pages, R(100 * slow2.x / (slow2.reps * sp.pages)),
      slow2.slow_ns, slow2.lost, table.concat(shares, "; "), note, runs2.multi, runs2.single_cause,
      ("%s %% %s"):format(R(math.abs(cost.x)), cost.x >= 0 and "dearer" or "cheaper"))
end

-- A kind's own page: what its runs say, from the files it published (the
-- default runs; actouch.lua and host.lua where published).
-- slowpages.lua EXPERIMENT=period: what pass 2's slow pages follow, by
-- THP mode, each class with the share it covers and the repetitions whose
-- control went its way, and the share left not explained.
function claims.period(doc, home)
  local by, order = {}, {}
  for _, v in ipairs(doc.values) do
    if type(v.value) == "string" and v.value:match("^period_") and v.thp then
      if not by[v.thp] then by[v.thp] = { classes = {}, guest = 0 }; order[#order + 1] = v.thp end
      local m = by[v.thp]
      if v.value == "period_total" then m.total = v
      elseif v.value == "period_class" then m.classes[#m.classes + 1] = v
      elseif v.value == "period_guest" then m.guest = m.guest + v.x
      elseif v.value == "period_unexplained" then m.unexplained = v end
    end
  end
  local parts = {}
  for _, thp in ipairs(order) do
    local m = by[thp]
    if m.total and m.unexplained then
      local named = stats.map(m.classes, function(c)
        return ("%s, %s %% (its control went its way in %d of %d repetitions)"):format(c.class, R(c.x), c.agreed,
          c.reps)
      end)
      parts[#parts + 1] = ("with THP=%s, of %d slow pages %s; guest events %s %%; not explained %s %% (the target: "
        .. "at most 10 %%, %s)")
        :format(thp, m.total.x, #named == 0 and "no class is named" or "named: " .. table.concat(named, "; "),
          R(m.guest), R(m.unexplained.x), m.unexplained.x <= 10 and "met" or "not met")
    end
  end
  return ("`slowpages.lua EXPERIMENT=period` (%d repetitions of one run; forward, samples shifted 4 bytes, backward, "
    .. "stride 7, a 50 ms pause, the null walk (one page stored again and again) and a small set of pages walked "
    .. "again and again, each walk with pass 3 over the same pages, shuffled in every repetition), pass "
    .. "2's slow pages of the forward walk by what covers them, a class named only where its control removed, "
    .. "moved or showed it (the null walk's and the small set's classes by rate, not page by page): %s.%s")
    :format(row(doc, doc.rows[1].case, doc.rows[1].column).n, table.concat(parts, "; "),
      home and (" The %s guest's slow pages were not re-measured with these walks."):format(home) or "")
end

-- The published run against each repeat, every row judged against the
-- calibration of the published configuration kept beside them.
local function repeats_judged(root, dir, runs)
  if #runs < 2 then return nil end
  local v = claims.verdicts(root, runs, nil, dir)
  if not v.cal then
    return ("The %d repeats are not judged against the published run: `%s/calibrations/` holds no calibration of "
      .. "the published configuration that every run matches (`make publish-kind` makes one)."):format(#runs - 1, dir)
  end
  local judged, called, seen = {}, {}, {}
  for _, r in ipairs(v.rows) do if r.p then judged[#judged + 1] = r end end
  for _, r in ipairs(judged) do
    local k = r.case .. " " .. r.column
    if verdicts.kind(r.verdict) == "different" and not seen[k] then
      seen[k] = true
      called[#called + 1] = ("%s in %d of %d"):format(k, count(v[k], function(x)
        return verdicts.kind(x.verdict) == "different" end), #runs - 1)
    end
  end
  local function n(kind) return count(judged, function(r) return verdicts.kind(r.verdict) == kind end) end
  return ("The published run against each of its %d repeats, one run a side judged against the published "
    .. "configuration's calibration (`%s`, %d A/A runs of `%s` made %s; a t test per row with the calibration's "
    .. "run-to-run spread, Benjamini-Hochberg over each comparison's rows): of %d judged rows, %d called different, "
    .. "%d the same within ±δ, %d undecided; pass 1: %s. Every one of these runs is of one tree and one "
    .. "configuration, so a row called different is a false call: %s.")
    :format(#runs - 1, v.cal.path:sub(#root + 2), v.cal.runs or 0, tostring(v.cal.script), tostring(v.cal.date),
      #judged, n("different"), n("same"), n("undecided"),
      (verdict(v, "A pass1"):gsub("^compare%.lua, the published run against each repeat: ", "")),
      #called == 0 and "none was made" or table.concat(called, ", ")
        .. "; the calibration's runs, made at another time, spread less than these did")
end

function claims.kind_findings(root, dir)
  local runs = claims.runs(root, dir)
  local out = { c_sentence(runs[1], runs), repeats_judged(root, dir, runs) }
  local function doc(name)
    local path = ("%s/%s/exp-%s-results.json"):format(root, dir, name)
    return read(path) and load(path)
  end
  local ac = doc("actouch")
  if ac then
    local function effect(name, what)
      local v = value(ac, name)
      return ("%s changed it by a factor of %s (%s)"):format(what, vinterval(v), (v.lo <= 1 and v.hi >= 1)
        and "an interval holding 1: no effect shown" or "an interval without 1")
    end
    out[#out + 1] = ("`actouch.lua` takes the cycles' two differences apart on fresh mappings, shuffled in every "
      .. "repetition (%d repetitions of one run, time on the CPU): %s; %s.")
      :format(row(ac, "plain (A)", "oncpu").n, effect("timed_over_plain", "timing every page as cycle C does"),
        effect("after_munmap_over_fresh", "a munmap of another buffer just before (as cycle C has)"))
  end
  local cal_path = ("%s/%s/calibration-cycles.json"):format(root, dir)
  for _, r in ipairs(read(cal_path) and load(cal_path).rows or {}) do
    if r.case == "A" and r.column == "pass1" and type(r.explained) == "table" then
      local cal, a = load(cal_path), r.adjust
      local e = type(r.explained.canary) == "number" and r.explained.canary or nil
      out[#out + 1] = ("`make calibrate` ([calibration.md](calibration.md), %d A/A runs of `cycles.lua %s`): pass 1's "
        .. "run median varied by %s %% (sd of the logs) from run to run; %s, %s.")
        :format(cal.runs, tostring(cal.config), R(100 * r.between_run_sd_log),
          e and ("the canary explains %s %% of that spread (each run left out and predicted from the others)")
            :format(R(100 * e)) or ("the canary explains none of it (%s)"):format(tostring(r.explained.canary)),
          a and ("adjusted for the %s, %s %% remains, and compare.lua shows pass 1 adjusted beside the raw change")
            :format(a.covariate, R(100 * a.sd_log)) or "too little for compare.lua to adjust pass 1")
    end
  end
  local sp = doc("slowperiod")
  if sp then out[#out + 1] = claims.period(sp, (kinds.published(root)[1] or {}).kind) end
  local host = doc("host")
  if host then
    for _, v in ipairs(host.values) do
      if v.value == "host_share_4K" then
        out[#out + 1] = ("`host.lua`: of a 4 KiB first touch's time on the CPU, %s [%s, %s] %% lies outside the "
          .. "guest kernel's account (%d repetitions of one run).")
          :format(R(v.measured), R(v.lo), R(v.hi), v.n)
      end
    end
  end
  return table.concat(out, " ")
end

-- README.md's headline: the sentence, the machine, and a column per run.
local function headline(c)
  local pub, runs, n = c.pub, c.runs, c.n
  local m = pub.machine or {}
  local machine = ("Measured on %s (%s CPUs, hypervisor %s), kernel %s, %d KiB pages, THP %s, %s NUMA node(s), "
    .. "clocksource %s."):format(tostring(m.cpu), tostring(m.cpus), tostring(m.hypervisor), tostring(m.kernel), c.kib,
    tostring(m.thp_enabled), tostring(m.numa_nodes), tostring(m.clocksource))
  local lower, of = a_against_c(pub)
  local text = ("On this machine the first touch of a page cost **%s ns** (median [95 %% interval], %d KiB "
    .. "pages, %d MiB, %d repetitions, cycle A), **%s times** a later pass over the same page, taken within each "
    .. "repetition. The ratio's lower end was above a hundred %s; the absolute cost moves with the host "
    .. "(pass 1's medians: %s ns). Cycle C, which times each page, measured %s ns in the same repetitions, "
    .. "lower in %d of %d (not explained).")
    :format(interval(c.p1), c.kib, c.mib, c.p1.n, vinterval(c.ft_ratio), held(c.above, n), list(runs, function(d)
      return R(row(d, "A", "pass1").median) end), interval(row(pub, "C", "pass1")), lower, of)
  local function cells(f)
    local out = {}
    for i, d in ipairs(runs) do out[i] = f(d) end
    return table.concat(out, " | ")
  end
  local head = { "| row | unit | " .. cells(function(d)
    return (d == pub and "published run, %s UTC" or "repeat, %s UTC"):format(tostring(d.date):match("T(%d+:%d+)"))
  end)
    .. " |", "|---|---|" .. ("---|"):rep(n) }
  local function trow(label, unit, f)
    head[#head + 1] = ("| %s | %s | %s |"):format(label, unit, cells(f))
  end
  trow("pass 1: first touch", "ns/page", function(d) return interval(row(d, "A", "pass1")) end)
  trow("pass 2 repeated", "ns/page", function(d) return interval(row(d, "A", "pass2r")) end)
  trow("pass 1 / pass 2 repeated", "ratio", function(d) return vinterval(value(d, "first_touch")) end)
  trow("fill of touched pages", "GB/s", function(d) return interval(row(d, "A", "fill")) end)
  trow("fill of a fresh mapping", "GB/s", function(d) return interval(row(d, "B", "fill")) end)
  trow("munmap", "ns/page", function(d) return interval(row(d, "A", "munmap")) end)
  for _, k in ipairs(c.kinds) do
    text = text .. (" On a %s guest (`%s/`) the first touch cost %s ns, %s times this %s guest's.")
      :format(k.kind, k.dir, interval(k.median), vinterval(k.p1), k.home)
  end
  return text .. " " .. machine .. "\n\n" .. table.concat(head, "\n")
end

-- results/README.md's paragraphs, by marker name, in the order computed.
local ORDER = { { "first-touch", P.first_touch }, { "headline-ratio", P.headline_ratio }, { "fill", P.fill },
  { "stalls", P.stalls }, { "malloc", P.malloc }, { "munmap", P.munmap }, { "runner", P.runner },
  { "compare", P.compare }, { "thp", P.thp }, { "bimodal", P.bimodal }, { "predictions", P.predictions },
  { "attribution", P.attribution }, { "pagesize", P.pagesize }, { "recycle", P.recycle },
  { "slowpages", P.slowpages } }

-- Every block, by file and marker name.
function claims.compute(root, ftrun)
  local runs = claims.runs(root)
  local pub = runs[1]
  local c = { root = root, runs = runs, pub = pub, n = #runs, v = claims.verdicts(root, runs, ftrun),
    others = { table.unpack(runs, 2) }, pages = pub.pages, kib = pub.page_size // 1024, mib = pub.bytes >> 20 }
  function c.medians(case, column)
    return #c.others == 0 and "" or (" (%s in the repeats)"):format(list(c.others, function(d)
      return R(row(d, case, column).median) end))
  end
  function c.vmedians(name)
    return #c.others == 0 and "" or (" (%s in the repeats)"):format(list(c.others, function(d)
      return R(value(d, name).x) end))
  end
  local R_ = {}
  for _, p in ipairs(ORDER) do R_[p[1]] = p[2](c) end
  local factors
  R_.kinds, factors = claims.kinds(root)
  c.kinds = factors
  local out = {
    ["results/README.md"] = R_,
    ["README.md"] = { headline = headline(c),
      layout = claims.layout(root),
      ["run-output"] = claims.run_output(root),
      example = "```lua\n" .. (read(root .. "/scripts/first_touch.lua")
        or error("claims: scripts/first_touch.lua: cannot read it", 0)) .. "```" },
    ["doc/ftrun.1"] = { scripts = claims.man_scripts(root, ftrun), options = claims.man_options(ftrun),
      examples = claims.man_examples(root, ftrun) },
  }
  -- every kind's page: one whose default run is gone says so, rather than keep its old figures
  local published = {}
  for i, p in ipairs(kinds.published(root)) do if i > 1 then published[p.dir] = true end end
  for _, dir in ipairs(kinds.pages(root)) do
    out[dir .. "/README.md"] = { kinds = R_.kinds, findings = published[dir] and claims.kind_findings(root, dir)
      or ("No default run of this kind is published in `%s/`."):format(dir) }
  end
  return out
end

-- Generated reference: the layout of the tree, the man page's scripts and
-- knobs (from every script's --help), the README's sample output (from the
-- published summary). The same write and check as the claims.

-- Each directory's one line; a directory missing here fails the check, so
-- a new one gets its description when it gets its first file.
claims.DIRS = {
  ["."] = "the build, the tests' and lint's configuration, and the documents",
  [".ci"] = "what CI runs",
  bench = "`make bench`: the C reference and the script that compares the runner against it",
  core = "the measured C, no Lua, the only code that calls mmap; one header per module",
  doc = "the man page and the `ft` module's reference",
  numa = "`make numa`: a qemu guest with several NUMA nodes that runs placement.lua and checks its claims",
  runner = "the executable: arguments, the Lua state, the REPL, one file per group of bindings",
  scripts = "the benchmark (`cycles.lua`), the experiments, and the tools that read results",
  ["scripts/lib"] = "the Lua the scripts share: harness, knobs, statistics, reports, plots, files, provenance, claims",
  ["scripts/lib/reports"] = "each script's presentation: its tables and plots, found by the script's name",
  tests = "the TAP suite, one file per subject, run by `make test`",
  ["tests/lib"] = "the tests' helpers",
  ["tests/fuzz"] = "the API fuzz (`make fuzz`)",
}

local function lines_of(cmd)
  local p = assert(io.popen(cmd))
  local out = {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

-- The tracked files outside results/, by directory; results/ in one line.
function claims.layout(root)
  local files = lines_of("git -C " .. sh(root) .. " ls-files 2>/dev/null")
  if #files == 0 then error("claims: " .. root .. " is not a git checkout: the layout lists its tracked files", 0) end
  local by_dir, dirs = {}, {}
  for _, f in ipairs(files) do
    if not f:match("^results/") then
      local dir, name = f:match("^(.*)/([^/]+)$")
      dir, name = dir or ".", name or f
      if not by_dir[dir] then by_dir[dir] = {}; dirs[#dirs + 1] = dir end
      table.insert(by_dir[dir], name)
    end
  end
  table.sort(dirs)
  local out = { "```" }
  for _, dir in ipairs(dirs) do
    local names, seen = {}, {}
    for _, n in ipairs(by_dir[dir]) do -- core/x.c and core/x.h as x.{c,h}
      local stem = n:match("^(.+)%.c$")
      if stem and seen[stem .. ".h"] == nil and table.concat(by_dir[dir], "\0"):find(stem .. ".h", 1, true) then
        names[#names + 1] = stem .. ".{c,h}"
        seen[stem .. ".h"] = true
      elseif not seen[n] then
        names[#names + 1] = n
      end
    end
    local about = claims.DIRS[dir] or error(("claims: the layout has no description for the directory %s/ "
      .. "(add it to claims.DIRS in scripts/lib/claims.lua)"):format(dir), 0)
    out[#out + 1] = ("%s  %s"):format(dir == "." and "./" or dir .. "/", about)
    local line = "    "
    for i, n in ipairs(names) do
      local piece = n .. (i < #names and ", " or "")
      if #line + #piece > 96 then out[#out + 1] = line:gsub("%s+$", ""); line = "    " end
      line = line .. piece
    end
    out[#out + 1] = line
  end
  out[#out + 1] = "results/  the published runs: raw files, summaries, JSON, plots with their data and gnuplot"
  out[#out + 1] = "    scripts, cycle C's samples, bench.txt, repeats/ (more default runs) and README.md"
  out[#out + 1] = "```"
  return table.concat(out, "\n")
end

-- Prediction 5 from the multi-node guest's published run (make numa-publish,
-- results/numa/), else from this machine's placement.lua run.
function claims.placement(root)
  local head = "5. Neither a free/malloc round trip nor a policy set afterwards moves placed pages: "
  local path = root .. "/results/numa/exp-placement-results.json"
  if not read(path) then
    local place = load(root .. "/results/exp-placement-results.json")
    local nodes = place.machine and place.machine.numa_nodes
    return head .. ("%s (placement.lua ran on %s NUMA node%s)."):format(nodes == 1 and "not decidable here, every "
      .. "page is on the one node whoever touches it" or "see placement.lua's table", tostring(nodes),
      nodes == 1 and "" or "s")
  end
  local g = load(path)
  local function find(pattern, column)
    for _, r in ipairs(g.rows) do
      if r.case:find(pattern) and r.column == column then return r.median end
    end
    error(("claims: %s has no row matching '%s' %s"):format(path, pattern, column), 0)
  end
  local pages = g.pages
  local stay, moved = find("without move flags", "node_0"), find("with MPOL_MF_MOVE", "node_1")
  local kept, faults = find("^pool: a mapping", "node_0"), find("^pool: a mapping", "reuse_faults")
  local reset = find("^pool: a mapping", "after_node_1")
  local mkept, mfirst = find("malloc block", "node_0"), find("malloc block", "first_on_A")
  local mreset = find("malloc block", "after_node_1")
  local split0, split1 = find("split over", "node_0"), find("split over", "node_1")
  local decided = stay == pages and moved == pages and kept == pages and faults == 0 and mkept == mfirst
  local m = g.machine or {}
  return head .. ("%s in a %s-node qemu guest (TCG, kernel %s; results/numa/, %d pages of 4 KiB, one run): "
    .. "mbind to another node without move flags left %d of %d pages where the first touch put them, with "
    .. "MPOL_MF_MOVE it moved %d; a mapping reused from a CPU of the other node took %d faults and kept %d of %d "
    .. "pages on its first toucher's node, and after MADV_DONTNEED the reuser's node got %d; a malloc block glibc "
    .. "handed back kept %d of the %d its first toucher had placed (%d on the reuser's node after MADV_DONTNEED). "
    .. "Two pinned threads put %d and %d pages on their own nodes. `make numa` runs the same checks, adapted to "
    .. "each layout, in its other default layouts too (four nodes, two nodes of unequal memory, a node without "
    .. "memory); only this guest's run is committed.")
    :format(decided and "held" or "did not hold", tostring(m.numa_nodes), tostring(m.kernel), pages, stay, pages,
      moved, faults, kept, pages, reset, mkept, mfirst, mreset, split0, split1)
end

-- Every script's --help, parsed: { {script, usage, about, knobs = {{name, text}}} }.
local help_cache = {}
function claims.script_help(root, ftrun)
  if help_cache[root .. "\0" .. ftrun] then return help_cache[root .. "\0" .. ftrun] end
  local out = {}
  help_cache[root .. "\0" .. ftrun] = out
  for _, f in ipairs(ls(root .. "/scripts")) do
    if f:match("%.lua$") then
      -- stdout alone: a start-up warning on stderr is no part of the help
      local help = lines_of(("%s %s --help 2>/dev/null"):format(ftrun, sh(root .. "/scripts/" .. f)))
      local s = { script = f, usage = help[1] or "", about = help[3], knobs = {} }
      local in_knobs = false
      for _, l in ipairs(help) do
        if l == "knobs:" then in_knobs = true
        elseif in_knobs and l:match("^  %u") then
          local name, text = l:match("^  ([%u%d_]+)%s+(.*)$")
          s.knobs[#s.knobs + 1] = { name, text }
        elseif l == "" then in_knobs = false end
      end
      out[#out + 1] = s
    end
  end
  return out
end

-- Text as roff input lines of at most 80 bytes, none starting with a control character.
local function roff(text)
  text = text:gsub("\\", "\\e"):gsub("%-", "\\-")
  local out, line = {}, ""
  for word in text:gmatch("%S+") do
    if line ~= "" and #line + 1 + #word > 80 then out[#out + 1] = line; line = word
    else line = line == "" and word or line .. " " .. word end
  end
  out[#out + 1] = line
  for i, l in ipairs(out) do
    if l:match("^[.']") then out[i] = "\\&" .. l end
  end
  return table.concat(out, "\n")
end

-- The man page's SCRIPTS section.
function claims.man_scripts(root, ftrun)
  local out = {}
  for _, s in ipairs(claims.script_help(root, ftrun)) do
    out[#out + 1] = ".SS " .. s.script
    if #s.knobs == 0 then
      out[#out + 1] = roff(s.usage:gsub("^usage: ", ""))
    else
      out[#out + 1] = roff(((s.about or ""):gsub("%.?$", ".", 1)))
      for _, k in ipairs(s.knobs) do
        out[#out + 1] = ".TP"
        out[#out + 1] = ".B " .. k[1]
        out[#out + 1] = roff(k[2])
      end
    end
  end
  return table.concat(out, "\n")
end

-- The man page's EXAMPLES, the sizes in their comments from cycles.lua's knobs.
function claims.man_examples(root, ftrun)
  local k = {}
  for _, s in ipairs(claims.script_help(root, ftrun)) do
    if s.script == "cycles.lua" then for _, x in ipairs(s.knobs) do k[x[1]] = x[2] end end
  end
  local mib, reps = (k.MIB or ""):match("%(default (%d+)%)"), (k.REPS or ""):match("%(default (%d+)%)")
  local quick_mib, quick_reps = (k.QUICK or ""):match("(%d+) MiB and (%d+) reps")
  if not (mib and reps and quick_mib) then error("claims: cycles.lua's --help gives no MIB, REPS or QUICK size", 0) end
  local function ex(command, comment)
    return comment and ("%-34s# %s"):format(command, comment) or command
  end
  return table.concat({ ".EX",
    ex("ftrun cycles.lua", ("the benchmark: %s MiB, %s repetitions"):format(mib, reps)),
    ex("ftrun cycles.lua QUICK=1", ("%s MiB, %s repetitions"):format(quick_mib, quick_reps)),
    ex("ftrun cycles.lua THP=always REPS=31"),
    ex("ftrun thp.lua \\-\\-help", "an experiment's knobs"),
    ex("ftrun compare.lua a.json b.json", "two runs, benchstat's way"),
    ex("ftrun compare.lua OLD/ \\-\\- NEW/", "several runs a side"),
    ex("ftrun \\-e \\(aqprint(ft.page_size())\\(aq"),
    ".EE" }, "\n")
end

-- The man page's OPTIONS, from the runner's --help: "  -e CODE      run CODE".
function claims.man_options(ftrun)
  local out, inside = {}, false
  for _, l in ipairs(lines_of(ftrun .. " --help 2>/dev/null")) do
    if l == "options:" then inside = true
    elseif inside and l == "" then break
    elseif inside then
      local opt, text = l:match("^  (%S.-)%s%s+(%S.*)$")
      opt = opt or l:match("^  (%S.-)%s*$")
      local sentence = function(s) return roff(s:sub(1, 1):upper() .. s:sub(2) .. ".") end
      if opt then
        out[#out + 1] = ".TP"
        out[#out + 1] = ".B " .. opt:gsub("%-", "\\-")
        out[#out + 1] = text and sentence(text) or false -- its text on the next line
      elseif #out > 0 and not out[#out] then
        out[#out] = sentence(l:match("^%s*(.-)%s*$"))
      elseif #out > 0 then
        out[#out] = out[#out]:gsub("%.$", "") .. "\n" .. roff(l:match("^%s*(.-)%s*$") .. ".")
      end
    end
  end
  if #out == 0 then error("claims: the runner's --help lists no options", 0) end
  return table.concat(out, "\n")
end

-- The README's sample of `make run`: the published run's title, its first
-- table and its headline lines, as cycles.lua printed them.
function claims.run_output(root)
  local text -- the summary as make claims makes it again from its raw file (a hand edit cannot reach here)
  for _, r in ipairs(claims.rendered(root)) do
    if r.file == "results/summary.md" then text = r.text end
  end
  -- else the committed one; the check names why it could not be made
  text = text or read(root .. "/results/summary.md") or error("claims: results/summary.md: cannot read it", 0)
  local out, state = { "```" }, "title"
  for l in text:gmatch("[^\n]+") do
    if state == "title" then
      out[#out + 1] = l:gsub("%*%*", ""):gsub("%s+$", "")
      state = "table"
    elseif state == "table" and l:match("^|") then
      out[#out + 1] = l
    elseif state == "table" and #out > 3 then
      out[#out + 1] = "..."
      state = "rest"
    elseif state == "rest" and l:match("^Headline") then
      out[#out + 1] = l
      state = "headline"
    elseif state == "headline" then
      if not l:match("^%- ") then break end
      out[#out + 1] = l
    end
  end
  out[#out + 1] = "```"
  return table.concat(out, "\n")
end

local function marks(name)
  return ("<!-- ftrun claims %s: begin -->"):format(name), ("<!-- ftrun claims %s: end -->"):format(name)
end
claims.markers = marks

-- Where a block's body starts (after its begin line) and ends (before its
-- end line: in a man page the marker follows a comment's .\"), or nil.
local function span(text, name)
  local b, e = marks(name)
  local i = text:find(b, 1, true)
  local j = i and text:find(e, i, true)
  if not j then return nil end
  local line_start = j
  while line_start > 1 and text:sub(line_start - 1, line_start - 1) ~= "\n" do line_start = line_start - 1 end
  return i + #b + 1, line_start
end

-- The text between a block's markers, or nil.
function claims.block(text, name)
  local from, to = span(text, name)
  return from and text:sub(from, to - 2)
end

-- text with every block replaced; nil and the missing marker's name when one is absent.
function claims.apply(text, blocks)
  for name, body in pairs(blocks) do
    local from, to = span(text, name)
    if not from then return nil, name end
    text = text:sub(1, from - 1) .. body .. "\n" .. text:sub(to)
  end
  return text
end

-- Number words a figure can be written in ("fifteen runs", "a fifth",
-- "ran once", "tenfold", "dozens"); "one" is left out, a pronoun as often
-- as a count. A word counts by its stem: a plural, or -fold.
local NUMBER_WORDS = {}
for w in ([[once zero two three four five six seven eight nine ten eleven twelve thirteen fourteen
  fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
  hundred thousand million billion twice thrice half halves third quarter fifth sixth seventh eighth
  ninth tenth twentieth hundredth thousandth fortieth dozen score double triple]]):gmatch("%a+") do
  NUMBER_WORDS[w] = true
end
local function number_word(w)
  w = w:lower()
  local stem = w:match("^(%a+)fold$") or w
  return NUMBER_WORDS[stem] or NUMBER_WORDS[stem:match("^(.-)e?s$") or ""] or NUMBER_WORDS[stem:match("^(.-)s$") or ""]
end

-- Words that state a comparison's outcome with no digit ("C is cheaper",
-- "no difference"): a conclusion typed by hand is a figure like any other,
-- so it stands only in a generated block or vetted with its check.
local CONCLUSION_WORDS = {}
for w in ([[cheaper dearer costlier faster slower quicker lower higher fewer smaller larger bigger
  improves improved improvement regresses regressed regression outperforms speedup slowdown unchanged
  doubled halved wins loses]]):gmatch("%a+") do
  CONCLUSION_WORDS[w] = true
end
local CONCLUSION_PHRASES = { "no difference", "no effect", "no change", "the same cost" }

-- Digits that are not ASCII: fullwidth, mathematical, super- and
-- subscripts, vulgar fractions, roman numerals (as UTF-8).
local UNICODE_NUMBERS = { "\xEF\xBC[\x90-\x99]", "\xF0\x9D\x9F[\x8E-\xBF]", "\xC2[\xB2\xB3\xB9\xBC-\xBE]",
  "\xE2\x81[\xB0-\xB9]", "\xE2\x82[\x80-\x89]", "\xE2\x85[\x90-\xBF]", "\xE2\x86[\x80-\x89]" }

local function plain(s) return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end

-- A marker line's kind, name and end: "claims", "headline", "begin".
local function marker(l)
  local kind, name, edge = l:gsub('^%.\\" ', ""):match("^<!%-%- ftrun (%a+) ([^:]+): (%a+) %-%->$")
  return kind, name, edge
end

-- Lines of prose with a figure typed by hand, a digit, a number word or a
-- comparison's outcome, outside the blocks a claim or a publish makes
-- (`blocks`: the names this file may hold; a marker naming another, or a
-- begin without its end, is itself a finding) and outside code. Code is a
-- fenced block (but a `#` comment in one is prose) or a code span that is
-- not a bare number; roff has no code spans. Taken out first: link
-- targets, CommonMark comments, inline tags and roff escapes, a switch
-- turned on or off (`QUICK=1`; any other knob's value and any date are
-- figures), man page references, the passes' names, list numbers (one or
-- two digits at a line's start) and the vetted phrases (prosefacts.lua,
-- each checked on its own; `seen` counts each where the scan took it out).
function claims.hand_numbers(text, vetted, blocks)
  local out, seen, open, fence, opened = {}, {}, nil, false, {}
  local man = text:match('^%.\\"') ~= nil
  local n = 0
  local function scan(prose)
    prose = prose:gsub("%]%([^)]*%)", "]"):gsub("!%[", "["):gsub("<!%-%-[^>%-].-%-%->", "")
      :gsub("</?%a[^>]*>", ""):gsub("\\[&%%:c/,)|^]", ""):gsub("\\f.", ""):gsub("\\%-", "-")
      -- characters that show nothing but would split a word from the lists
      :gsub("\xE2\x80[\x8B-\x8D]", ""):gsub("\xE2\x81\xA0", ""):gsub("\xEF\xBB\xBF", ""):gsub("\xC2\xAD", "")
      :gsub("[Pp]asses [123] and [123]%f[%D]", "passes"):gsub("[Pp]ass [123]%f[%D]", "pass")
      :gsub("^ ? ? ?%d%d?%.%s", ""):gsub("%f[%w][%u_]+=[01]%f[%D]", "")
      :gsub("^%.BR [%w_]+ %(%d%)", "")
    for _, p in ipairs(vetted or {}) do
      local k
      prose, k = prose:gsub(plain(p), "")
      seen[p] = (seen[p] or 0) + k
    end
    if prose:match("%d") then return true end
    for _, u in ipairs(UNICODE_NUMBERS) do if prose:find(u) then return true end end
    for w in prose:gmatch("%a+") do if number_word(w) or CONCLUSION_WORDS[w:lower()] then return true end end
    local lower = prose:lower()
    for _, p in ipairs(CONCLUSION_PHRASES) do if lower:find(p, 1, true) then return true end end
  end
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local kind, name, edge = marker(l)
    local inline = not kind and l:match("<!%-%- ftrun %a+ [^:\n]-: %a+ %-%->")
    if inline then
      -- the blocks are found by their first marker wherever it stands in a line (span, pasted),
      -- this scan and the vetting by whole lines: each would read another block than the other
      out[#out + 1] = ("line %d: a block marker that is not a line of its own (%s): %s"):format(n, inline, l)
    elseif kind then
      if blocks and not blocks[name] then
        out[#out + 1] = ("line %d: a marker of a block nothing makes here (%s): %s"):format(n, name, l)
      elseif edge == "begin" and not open and opened[name] then
        out[#out + 1] = ("line %d: a second block named %s (a copy's prose would go unread): %s"):format(n, name, l)
        open = name
      elseif edge == "begin" and not open then open, opened[name] = name, true
      elseif edge == "end" and open == name then open = nil
      else out[#out + 1] = ("line %d: a marker out of place: %s"):format(n, l) end
    elseif open then
      -- a block made by code: checked against what makes it
      fence = false
    elseif not man and l:match("^ ? ? ?```+[^`]*$") then fence = not fence
    elseif fence then
      local comment = l:match("%s#%s(.*)$") or l:match("^#%s(.*)$")
      if comment and scan(comment) then out[#out + 1] = ("line %d: %s"):format(n, l) end
    elseif not (man and l:match('^[.\']\\"')) then -- a roff comment; in markdown such a line is text
      local prose = man and l or l:gsub("`([^`]*)`", function(code)
        return code:match("^[%d%.,%s%%]+$") and code or ""
      end)
      if scan(prose) then out[#out + 1] = ("line %d: %s"):format(n, l) end
    end
  end
  if open then out[#out + 1] = ("line %d: the block %s has no end marker"):format(n, open) end
  return out, seen
end

-- The documents where no figure may be typed by hand but a vetted one
-- (prosefacts.lua); a kind's page is added to them.
claims.PROSE = { "README.md", "results/README.md", "bench/README.md", "CHANGELOG.md", "doc/ftrun.1" }

-- The documents claims.PROSE names and every kind's page but the first's.
function claims.prose_files(root)
  local prose = { table.unpack(claims.PROSE) }
  for i, p in ipairs(kinds.published(root)) do
    if i > 1 then prose[#prose + 1] = p.dir .. "/README.md" end
  end
  return prose
end

-- For each published kind: its directory, the files claims.lua makes (left
-- out of its seal) and the other kinds' directories inside it (results/pvm
-- inside results).
local function kind_seals(root, rendered)
  local made, dirs = {}, {}
  for _, r in ipairs(claims.generated(rendered or claims.rendered(root), root)) do made[#made + 1] = r.file end
  for _, p in ipairs(kinds.published(root)) do dirs[#dirs + 1] = p.dir end
  local out = {}
  for _, d in ipairs(dirs) do
    local others = {}
    for _, o in ipairs(dirs) do if o:sub(1, #d + 1) == d .. "/" then others[#others + 1] = o end end
    out[#out + 1] = { dir = d, made = made, others = others }
  end
  return out
end

-- Every published file not as its kind's publish sealed it (seal.lua), and
-- any file committed under results/runs/, where only a user's own runs go
-- (git-ignored, so no seal covers them).
function claims.sealed(root, rendered)
  local problems = {}
  for _, f in ipairs(lines_of("git -C " .. sh(root) .. " ls-files results/runs 2>/dev/null")) do
    problems[#problems + 1] = f .. ": committed under results/runs/, which holds a user's own runs and no publish"
  end
  for _, k in ipairs(kind_seals(root, rendered)) do
    for _, p in ipairs(seal.check_sums(root, k.dir, k.made, k.others)) do problems[#problems + 1] = p end
  end
  return problems
end

-- SHA256SUMS's path and text for the published kind in dir, or nil and why.
function claims.seal(root, dir)
  for _, k in ipairs(kind_seals(root)) do
    if k.dir == dir then return k.dir .. "/" .. seal.SUMS, seal.sums(root, k.dir, k.made, k.others) end
  end
  local names = {}
  for _, p in ipairs(kinds.published(root)) do names[#names + 1] = p.dir end
  return nil, ("expected a published kind's directory (%s)"):format(#names > 0 and table.concat(names, ", ")
    or "none: no results.json under results/")
end

-- Every published kind's SHA256SUMS, from root.
function claims.sums_files(root)
  local out = {}
  for _, p in ipairs(kinds.published(root)) do out[#out + 1] = p.dir .. "/" .. seal.SUMS end
  return out
end

-- The documents whose hand-written paragraphs a person vets: the prose
-- documents, and the scripting reference an install ships (its figures are
-- the API's, not the runs', so only its vetting holds them; no code writes
-- a block into it, so a marker there is prose to vet like the rest).
claims.UNBLOCKED = { ["doc/ft.md"] = true }
function claims.vetted_files(root)
  local files = claims.prose_files(root)
  for f in pairs(claims.UNBLOCKED) do files[#files + 1] = f end
  return files
end

-- doc/vetted-prose.sha256's path and text for the documents as they stand.
function claims.vet(root)
  return seal.VETTED, seal.vet(root, claims.vetted_files(root), claims.sums_files(root), claims.UNBLOCKED)
end

-- What prosefacts' checks read: the tree's files, the scripts' knobs, the
-- runner's --help, and the history of the checkout this ftrun runs from
-- (a copy of the tree has none).
function claims.facts_context(root, ftrun)
  local knobs_of
  local function show(commit, path)
    if not commit:match("^%x+$") then return nil end
    local p = io.popen(("git -C %s show %s:%s 2>/dev/null"):format(sh(ft.project_dir), commit, sh(path)))
    local text = p:read("a")
    return p:close() and text or nil
  end
  return {
    root = root, show = show, round = claims.round, ftrun = ftrun,
    source = function(path) return read(root .. "/" .. path) end,
    -- the days (YYYY-MM-DD) of the commits that added or removed `literal` in path
    dates = function(path, literal)
      return lines_of(("git -C %s log --format=%%cs -S %s -- %s 2>/dev/null"):format(sh(ft.project_dir), sh(literal),
        sh(path)))
    end,
    runner = table.concat(lines_of(ftrun .. " --help 2>/dev/null"), "\n"),
    knob = function(script, name)
      if not knobs_of then
        knobs_of = {}
        for _, s in ipairs(claims.script_help(root, ftrun)) do
          knobs_of[s.script] = {}
          for _, k in ipairs(s.knobs) do knobs_of[s.script][k[1]] = k[2] end
        end
      end
      return (knobs_of[script] or {})[name]
    end,
  }
end

-- Files a publish made before the code could make them again (the KVM
-- guest's, make publish at 5663d94): a calibration.md from before its
-- calibration file kept the figures it shows, and a compare.txt from before
-- the published configuration was calibrated. Each is held to its hash
-- until a publish on that kind makes it again.
claims.UNRENDERED = {
  ["results/calibration.md"] = "f0a58b27b1c96140c5d363d4421d43a480ae9a2ec9ea71564f95745828701dc0",
  ["results/repeats/compare.txt"] = "7405619e66a8810c541a2d1dcd25dd639b44b08f821a133c6e6f86a74a8662a6",
  ["results/bench.txt"] = "0dd4b06fa994e5f0c06bf11cf5caff933a3077f7305ff06803987dea6bdd1cb6",
}

-- results/bench.txt as make bench wrote it: sealed by its own hash (one
-- from before the seal: pinned by its hash). Its figures have no data
-- file to be made again from; the seal shows an edit by hand.
function claims.bench_sealed(root)
  local file = "results/bench.txt"
  local text = read(root .. "/" .. file)
  if not text then return {} end
  if claims.UNRENDERED[file] and textfile.sha256(text) == claims.UNRENDERED[file] then return {} end
  local ok, why = textfile.sealed(text)
  return ok and {} or { ("%s: %s (make bench with PUBLISH=1 writes it again)"):format(file, why) }
end

-- Each published raw file's lines its JSON cannot make (claims.raw_unmade),
-- held to the first 32 hex digits of their sha256 as published: every run
-- here is from before its JSON kept `before` (the start's date, meminfo and
-- vmstat), and the KVM guest's from before the head's hypervisor line and
-- the provenance's newer keys. A file published again needs no pin.
claims.HEADS = {
  ["results/exp-attribution-raw.txt"] = "dc76fe46c4951d1aaad4e4b1e38884b7",
  ["results/exp-coldness-raw.txt"] = "a8fee2bfb3c4733c07dfe49280f47600",
  ["results/exp-faults-raw.txt"] = "33ca3f7abd8b0268044b175e024ccb3e",
  ["results/exp-pagesize-raw.txt"] = "25a3553c0b2d2bfcbe8b10d06f73d904",
  ["results/exp-placement-raw.txt"] = "1906d037547adf1b73547aa4e47cb108",
  ["results/exp-populate-raw.txt"] = "ed50d4b7a3c870299d141e96d18d7ae9",
  ["results/exp-recycle-raw.txt"] = "be973123b1d8bfb8c2f46f25ae9e08e3",
  ["results/exp-scaling-raw.txt"] = "62063df154e5c3c7c7ca6ace70f67fd8",
  ["results/exp-slowpages-raw.txt"] = "559e5bf31c259685830dc67135259726",
  ["results/exp-thp-raw.txt"] = "9271457a9ddadb755b519a7129576bc2",
  ["results/exp-zeropage-raw.txt"] = "b316bf8e9e2b073f9e2e04d15a8d158c",
  ["results/pvm/exp-actouch-raw.txt"] = "4d917b4d1b084acc8967b7a795392a9b",
  ["results/pvm/exp-attribution-raw.txt"] = "72815c720b0b553e60f6908c8a83c80e",
  ["results/pvm/exp-host-raw.txt"] = "cd68ca729b7de6c15e74eb9a86593cd8",
  ["results/pvm/exp-slowpages-raw.txt"] = "3453eb4a86e932ae8c3c117ef31049bd",
  ["results/pvm/exp-slowperiod-raw.txt"] = "e895f53aebd867636469ea7dce5c81f0",
  ["results/pvm/raw.txt"] = "e73e9660b3183eb41c3d31afc9858100",
  ["results/pvm/repeats/20261204T130753Z/raw.txt"] = "ee18f266894d364dc9dad5e4e59dbe04",
  ["results/pvm/repeats/20261204T131127Z/raw.txt"] = "c7b70bb767db344ef7c18bf6ce17396a",
  ["results/pvm/thp-16K-raw.txt"] = "0e509252ffce75401bec1f766ba84cfa",
  ["results/pvm/thp-always-raw.txt"] = "f3777f45bfc0b82440e09abf693a405f",
  ["results/raw.txt"] = "65a94355e62d67754ff8464f55827c5b",
  ["results/repeats/20261203T165408Z/raw.txt"] = "7541601de85a01e43b1b5b6b97e48167",
  ["results/repeats/20261203T165450Z/raw.txt"] = "f82c5db890fc22a49127f7ef688137bf",
  ["results/thp-16K-raw.txt"] = "f3ce68721068efdbac57c59b8c2c182c",
  ["results/thp-always-raw.txt"] = "802aeece0c556b775e8485b2ebc18dfa",
}

local function sha256(path)
  local text = read(path)
  return text and textfile.sha256(text)
end

-- Every kind's repeats/compare.txt against compare.lua run again as
-- make judge-repeats ran it (the published run against each repeat, with
-- the kind's calibration); its first line names the tree and machine that
-- compared, which are the comparer's own.
function claims.judged(root, ftrun)
  local problems = {}
  for _, p in ipairs(kinds.published(root)) do
    local file = p.dir .. "/repeats/compare.txt"
    local text = read(root .. "/" .. file)
    if text and claims.UNRENDERED[file] then
      if sha256(root .. "/" .. file) ~= claims.UNRENDERED[file] then
        problems[#problems + 1] = file .. " differs from the file pinned by its hash"
          .. " (make judge-repeats makes it again)"
      end
    elseif text then
      local paths = { sh(p.dir .. "/results.json") }
      for _, d in ipairs(ls(root .. "/" .. p.dir .. "/repeats", "^%d")) do
        paths[#paths + 1] = sh(("%s/repeats/%s/results.json"):format(p.dir, d))
      end
      local c = assert(io.popen(("cd %s && env -u CHECK -u ROOT CALIBRATIONS=%s %s compare.lua %s 2>&1"):format(
        shell.path(root), sh(p.dir .. "/calibrations"), ftrun, table.concat(paths, " "))))
      local again = c:read("a")
      c:close()
      if text:gsub("^[^\n]*\n", "", 1) ~= again:gsub("^[^\n]*\n", "", 1) then
        problems[#problems + 1] = file .. " differs from what compare.lua says of the same runs with the same "
          .. "calibration (make judge-repeats makes it again)"
      end
    end
  end
  return problems
end

-- Where a make calibrate file's report (the figures calibration.md shows)
-- differs from what the rest of the file gives, or nil: the file keeps
-- each row's spreads, the machine, the runs' count, date and wall time, and
-- the report's rows, heading and designs (calreport.designs) follow from
-- them; its counts of tests and splits follow from the runs and rows. The
-- file keeps no run's values, so what was measured or drawn from them (the
-- medians, the false calls counted, the random splits' calls though their
-- seed is in the code, the AB runs' figures but their sd, the noise marks,
-- the minutes) has nothing to be made again from, and is not checked.
local function close(a, b)
  return a == b or type(a) == "number" and type(b) == "number" and math.abs(a - b) <= 1e-9 * math.max(1, math.abs(b))
end
local function same_tree(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return close(a, b) end
  for k, v in pairs(a) do if not same_tree(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end
function claims.calreport(cal)
  local f, m = cal.report, type(cal.machine) == "table" and cal.machine or {}
  local date = type(cal.date) == "string" and cal.date:gsub("T", " "):sub(1, 16)
  for _, c in ipairs { { "script", cal.script }, { "runs", cal.runs }, { "config", cal.config }, { "cpu", m.cpu },
    { "cpus", m.cpus }, { "kernel", m.kernel }, { "date", date },
    { "provenance_line", type(cal.provenance) == "table" and provenance.describe(cal.provenance) } } do
    if not close(f[c[1]], c[2]) then
      return ("its report's %s is %s, the file's %s"):format(c[1], tostring(f[c[1]]), tostring(c[2]))
    end
  end
  local rows, kept = type(f.rows) == "table" and f.rows or {}, type(cal.rows) == "table" and cal.rows or {}
  if #rows ~= #kept then return ("its report has %d rows, the file %d"):format(#rows, #kept) end
  local pass1
  for i, r in ipairs(rows) do
    local k = kept[i]
    local want = { key = k.case .. " " .. k.column, unit = k.unit, sd_medians = k.between_run_sd_log,
      between = k.var_between_log and math.sqrt(k.var_between_log), within = k.var_within_log
      and math.sqrt(k.var_within_log), explained = k.explained, adjust = k.adjust }
    for name, x in pairs(want) do
      if not same_tree(r[name], x) then
        return ("row %d (%s): its report's %s is %s, the file's %s"):format(i, tostring(r.key), name,
          type(r[name]) == "table" and json.encode(r[name]) or tostring(r[name]),
          type(x) == "table" and json.encode(x) or tostring(x))
      end
    end
    if want.key == "A pass1" then pass1 = k end
  end
  local pairs_n = cal.runs * (cal.runs - 1) // 2
  local splits = pass1 and f.splits or 0
  for _, c in ipairs { { "pairs", pairs_n }, { "tests", pairs_n * #rows }, { "k", math.min(4, cal.runs // 2) },
    { "split_tests", f.splits * #rows }, { "planted_tries", splits } } do
    if not close(f[c[1]], c[2]) then
      return ("its report's %s is %s, its runs and rows give %s"):format(c[1], tostring(f[c[1]]), tostring(c[2]))
    end
  end
  if pass1 then
    local ab
    for _, d in ipairs(f.designs or {}) do
      local reps = tostring(d.what):match("^an AB run of (%d+) repetitions")
      if reps and f.ab_for_3 then ab = { sd = f.ab_for_3.sd, wall = d.wall, reps = tonumber(reps) } end
    end
    local want = calreport.designs(pass1.between_run_sd_log, cal.runs, cal.run_wall_s, f.alpha, f.power, ab)
    local got = { table.unpack(f.designs or {}) }
    got.ab_for_3 = f.ab_for_3
    if not same_tree(got, want) then
      return ("its report's designs %s, the file's spreads and wall time give %s"):format(json.encode(got),
        json.encode(want))
    end
  end
end

-- Every table a publish pasted, against the file it was pasted from: a
-- run's block in results/README.md (or a kind's page) is its summary.md,
-- the bench's block in bench/README.md its bench.txt in a code fence; and
-- every calibration.md against its calibration file's figures.
function claims.pasted(root)
  local pages = { { "results/README.md", "results" } }
  for i, p in ipairs(kinds.published(root)) do
    if i > 1 then pages[#pages + 1] = { p.dir .. "/README.md", p.dir } end
  end
  local problems = {}
  local function against(page, name, file, wrap)
    local text = read(root .. "/" .. page) or ""
    local b, e = runfiles.markers(name)
    local i, j = text:find(b, 1, true)
    local k = j and text:find(e, j, true)
    local pasted = k and text:sub(j + 2, k - 1)
    local source = read(root .. "/" .. file)
    if not source then
      problems[#problems + 1] = ("%s: the block %s was pasted from %s, which cannot be read"):format(page, name, file)
    elseif pasted ~= wrap(source):gsub("([^\n])$", "%1\n") then -- a paste ends its line, as runfiles does
      problems[#problems + 1] = ("%s: the pasted block %s differs from %s, the file it was pasted from")
        :format(page, name, file)
    end
    return i
  end
  local function same(x) return x end
  for i, p in ipairs(pages) do
    local text = read(root .. "/" .. p[1]) or ""
    -- a kind's page opens as its first publish made it, naming the kind
    local kind = i > 1 and kinds.published(root)[i].kind
    local head = kind and kinds.page(kind):match("^(.-\n)## ")
    if head and text:sub(1, #head) ~= head then
      problems[#problems + 1] = ("%s: its opening differs from what kinds.page makes for the kind %s"):format(p[1],
        kind)
    end
    for name in text:gmatch("<!%-%- ftrun results ([^:\n]+): begin %-%->") do
      against(p[1], name, ("%s/%ssummary.md"):format(p[2], name == "main" and "" or name .. "-"), same)
      -- a kind's page heads each run's block with the run's name, the only label a reader sees
      if i > 1 and not text:find(("\n## `%s`\n\n<!-- ftrun results %s: begin -->"):format(name, name), 1, true) then
        problems[#problems + 1] = ("%s: the block of run %s is not under its heading ## `%s`"):format(p[1], name, name)
      end
      -- results/README.md heads each with what makes the run: its script, or the THP setting of a cycles.lua run
      local heading = i == 1 and text:match("\n(#+ [^\n]*)\n\n<!%-%- ftrun results " .. name:gsub("%p", "%%%0")
        .. ": begin %-%->")
      local names = name == "main" and "cycles.lua`" or name:match("^exp%-(.+)$") and "`" .. name:sub(5) .. ".lua`"
        or name:match("^thp%-(.+)$") and "`THP=" .. name:sub(5) .. "`" or name
      if i == 1 and not (heading and heading:find(names, 1, true)) then
        problems[#problems + 1] = ("%s: the block of run %s is not under a heading that names %s"):format(p[1], name,
          names)
      end
    end
    -- every run published beside the page is pasted on it: a block deleted whole is a run gone from view
    for _, f in ipairs(ls(root .. "/" .. p[2], "summary%.md$")) do
      local name = f == "summary.md" and "main" or f:sub(1, -#"-summary.md" - 1)
      if not text:find(("<!-- ftrun results %s: begin -->"):format(name), 1, true) then
        problems[#problems + 1] = ("%s: the run %s is published (%s/%s) and its block is not on the page"):format(
          p[1], name, p[2], f)
      end
    end
  end
  against("bench/README.md", "bench", "results/bench.txt", function(x) return "```\n" .. x .. "```" end)
  -- make calibrate's page, rendered again from the figures its calibration file keeps (a file
  -- made before it kept them cannot be checked, and is not)
  for _, dir in ipairs(stats.map(pages, function(p) return p[2] end)) do
    local cal = read(root .. "/" .. dir .. "/calibration-cycles.json") and load(root .. "/" .. dir
      .. "/calibration-cycles.json")
    if cal and type(cal.report) == "table" then
      local ok, md = pcall(calreport.render, cal.report)
      local why = claims.calreport(cal)
      if why then
        problems[#problems + 1] = ("%s/calibration-cycles.json: its report (what calibration.md shows) and its "
          .. "calibration disagree: %s"):format(dir, why)
      end
      if not ok then
        problems[#problems + 1] = ("%s/calibration-cycles.json: its report cannot be rendered: %s"):format(dir, md)
      elseif read(root .. "/" .. dir .. "/calibration.md") ~= md then
        problems[#problems + 1] = ("%s/calibration.md differs from what its calibration file's figures render "
          .. "(calibration-cycles.json)"):format(dir)
      end
    elseif not cal and read(root .. "/" .. dir .. "/calibration.md") then
      problems[#problems + 1] = ("%s/calibration.md: its calibration file (calibration-cycles.json) is gone")
        :format(dir)
    elseif cal then
      local page = dir .. "/calibration.md"
      if not claims.UNRENDERED[page] or sha256(root .. "/" .. page) ~= claims.UNRENDERED[page] then
        problems[#problems + 1] = ("%s cannot be checked: its calibration file keeps no figures to render it from "
          .. "(no report in %s/calibration-cycles.json), and it is not the page pinned from before they were kept")
          :format(page, dir)
      end
    end
  end
  return problems
end

-- Every published run's summary.md (a repeat's too) made again from its raw file and its
-- provenance, as results.finish made it: the table is a rendering of the
-- raw file, so the code's present rendering is the summary's, and a summary
-- edited by hand (with the block pasted from it) differs. A list of {dir,
-- name (the run's block), file, text, differs (the check's words)} or {..., problem}. An AB run
-- cannot be made again from these two files, and none is published.
function claims.rendered(root)
  local out, dirs = {}, {}
  for _, p in ipairs(kinds.published(root)) do
    dirs[#dirs + 1] = { dir = p.dir }
    for _, d in ipairs(ls(root .. "/" .. p.dir .. "/repeats", "^%d")) do -- a repeat is pasted nowhere
      dirs[#dirs + 1] = { dir = ("%s/repeats/%s"):format(p.dir, d), unpasted = true }
    end
  end
  for _, p in ipairs(dirs) do
    local names = ls(root .. "/" .. p.dir, "raw%.txt$")
    table.sort(names)
    for _, name in ipairs(names) do
      local prefix = name:sub(1, -#"raw.txt" - 1)
      local r = { dir = p.dir, name = prefix == "" and "main" or prefix:sub(1, -2),
        file = ("%s/%ssummary.md"):format(p.dir, prefix), unpasted = p.unpasted }
      r.differs = ("%s differs from what its run's %s and provenance make (make claims makes it again)"):format(r.file,
        name)
      local raw = read(("%s/%s/%sraw.txt"):format(root, p.dir, prefix))
      local doc = json_file(("%s/%s/%sresults.json"):format(root, p.dir, prefix))
      local readable = raw and doc and type(doc.provenance) == "table" and type(doc.rows) == "table"
      local disagree = readable and claims.raw_rows(raw, doc)
      if not readable then
        r.problem = ("its run's %sraw.txt and %sresults.json cannot both be read"):format(prefix, prefix)
      elseif disagree then
        r.problem = ("%sraw.txt and %sresults.json disagree: %s"):format(prefix, prefix, disagree)
      elseif doc.ab then
        r.problem = "an AB run's summary is not published (it cannot be checked)"
      else
        local ok, md = pcall(function()
          return (reports.of(doc.script).table or summary.table)(raw) .. "\n" .. provenance.describe(doc.provenance)
            .. "\n"
        end)
        if ok then r.text = md else r.problem = ("its raw file cannot be rendered: %s"):format(md) end
      end
      out[#out + 1] = r
    end
  end
  return out
end

-- Every published samples file's sidecar, as harness attach writes it: what
-- the bytes are and the provenance of the run that made them (its
-- results.json). A list of {file, text} or {file, problem}.
function claims.sidecars(root)
  local out = {}
  for _, p in ipairs(kinds.published(root)) do
    local names, have = ls(root .. "/" .. p.dir, "%.i32$"), {}
    for _, name in ipairs(names) do have[name] = true end
    for _, name in ipairs(ls(root .. "/" .. p.dir, "%.i32%.txt$")) do
      if not have[name:sub(1, -5)] then
        out[#out + 1] = { file = p.dir .. "/" .. name, problem = "a sidecar whose samples file is gone" }
      end
    end
    -- a published cycles.lua run with cycle C keeps its two passes' samples
    for _, run in ipairs(published_runs(root, root .. "/" .. p.dir)) do
      local doc = run.doc
      local cycles = doc and doc.script == "cycles.lua" and type(doc.knobs) == "table" and doc.knobs.CYCLES
      if type(cycles) == "string" and cycles:find("C", 1, true) then
        for _, pass in ipairs { "pass1", "pass2" } do
          local want = ("%sC-%s-samples.i32"):format(run.name:sub(1, -#"results.json" - 1), pass)
          if not have[want] then
            out[#out + 1] = { file = p.dir .. "/" .. want,
              problem = ("missing: its run (%s) has cycle C"):format(run.name) }
          end
        end
      end
    end
    table.sort(names)
    for _, name in ipairs(names) do
      local prefix, pass = name:match("^(.-)C%-(pass%d)%-samples%.i32$")
      local r = { file = p.dir .. "/" .. name .. ".txt" }
      r.differs = ("%s is missing or differs from what its samples file is and its run's provenance (make claims "
        .. "makes it again)"):format(r.file)
      local doc = prefix and json_file(("%s/%s/%sresults.json"):format(root, p.dir, prefix))
      local bytes = read(("%s/%s/%s"):format(root, p.dir, name))
      if not doc or type(doc.provenance) ~= "table" then
        r.problem = ("no run's results.json beside it says what made %s"):format(name)
      elseif not bytes then
        r.problem = ("%s cannot be read"):format(name)
      else
        r.text = provenance.sidecar(name, reports.of("cycles").samples_about(pass), bytes, doc.provenance)
      end
      out[#out + 1] = r
    end
  end
  return out
end

-- The samples files published from runs whose JSON did not yet keep each
-- attached file's sha256, as published (the KVM guest's by make publish at
-- 5663d94, the PVM guest's by make publish-kind at 4ff9939), so that a file
-- edited and its sidecar made again by make claims still fails.
claims.SAMPLES = {
  ["results/C-pass1-samples.i32"] =
    "18e2b21d0d9757d728d858ae6d625ebc3baaf6e4a605c4690d608ad17c1eabf4",
  ["results/C-pass2-samples.i32"] =
    "c8c36da63afb0f16ab158ab938a11b45cd7e11d49998c88084976e8482317cc1",
  ["results/pvm/C-pass1-samples.i32"] =
    "ddd6609d22a1e8ea6eece968bd43f8cc59a323b301585ec2331be1ebecb15636",
  ["results/pvm/C-pass2-samples.i32"] =
    "baaac052f563582603b1893d462df2e7a648dd0ee3ccc27049f5cb841b4af8f9",
  ["results/pvm/thp-16K-C-pass1-samples.i32"] =
    "8fbddf8674426a758daaec470ab2e2860d2be15acb9759016a03817aa1fba025",
  ["results/pvm/thp-16K-C-pass2-samples.i32"] =
    "6ede80083c3399160f6277ef4e34e9bd242fe710d6d970f9c906d7caf139f8ac",
  ["results/pvm/thp-always-C-pass1-samples.i32"] =
    "bd4a3f836246771bf90149c8fa9db579cc25fa960971dbc4005ec844ded86fac",
  ["results/pvm/thp-always-C-pass2-samples.i32"] =
    "76e9ca38d101f1247e1f24044333baaeb1071154644170d848517abf73ab9aba",
  ["results/thp-16K-C-pass1-samples.i32"] =
    "0a1200b41f2cd3ecf4afc7cc0e75139ad924e1c46b3bdcd60d34d3e3f224f1fa",
  ["results/thp-16K-C-pass2-samples.i32"] =
    "de69725a8201910dbbde0988e072624e376e1618db0fc420ff9b87fa5e146898",
  ["results/thp-always-C-pass1-samples.i32"] =
    "a81b82e7565a49ce5aff3c4604f389424741147e60d1f680a6db6ec18227770d",
  ["results/thp-always-C-pass2-samples.i32"] =
    "d5e6b954e632cf92954541e9b4797b82a8dbbed70cf7d4d22f28ced0d4faf1da",
}

-- Every published samples file against its run's own figures of it: cycle
-- C's last record keeps the median, percentiles, slow pages, their runs and
-- the histogram of each pass's samples (reports.cycles.sample_figures),
-- which the file's bytes must give again. A value edited without moving a
-- figure (two samples swapped within one histogram bin and one run of slow
-- pages) is left to the sidecar's hash.
function claims.samples(root)
  local problems, cycles = {}, reports.of("cycles")
  for _, p in ipairs(kinds.published(root)) do
    for _, name in ipairs(ls(root .. "/" .. p.dir, "%.i32$")) do
      local prefix, pass = name:match("^(.-)C%-(pass%d)%-samples%.i32$")
      local file = p.dir .. "/" .. name
      local doc = prefix and json_file(("%s/%s/%sresults.json"):format(root, p.dir, prefix))
      -- the bytes as the run wrote them: the hash its JSON keeps, or for a run from before it kept one, the pin
      local kept = doc and type(doc.attached) == "table" and doc.attached[name] or claims.SAMPLES[file]
      local hash = textfile.sha256(read(root .. "/" .. file) or "")
      if hash ~= kept then
        problems[#problems + 1] = ("%s: its bytes' sha256 %s, not the %s its run wrote (%s)"):format(file,
          tostring(hash), tostring(kept), doc and doc.attached and "its results.json" or "claims.SAMPLES")
      end
      local last
      for _, c in ipairs(doc and type(doc.reps) == "table" and doc.reps or {}) do
        if c.case == "C" and type(c.records) == "table" then last = c.records[#c.records] end
      end
      local s = cycles.unpack_samples(read(root .. "/" .. file) or "")
      local slow = doc and type(doc.knobs) == "table" and doc.knobs.SLOW_NS
      if not (last and s and math.type(slow) == "integer") then
        problems[#problems + 1] = file .. ": no cycle C record and SLOW_NS in its run's JSON, or not int32 samples"
      else
        local figures, wrong = cycles.sample_figures(s, slow), nil
        for _, k in ipairs { "median_page", "p90", "p99", "slow_pct", "slow_mean", "runs", "longest", "hist" } do
          local a, b = figures[k], last[pass .. "_" .. k]
          if type(a) == "table" then
            a, b = table.concat(a, ","), type(b) == "table" and table.concat(b, ",") or tostring(b)
          end
          local same = a == b or (type(a) == "number" and type(b) == "number"
            and math.abs(a - b) <= 1e-9 * math.max(1, math.abs(b)))
          if not same and not wrong then wrong = ("%s_%s is %s in its run's last record, its bytes give %s"):format(
            pass, k, tostring(b), tostring(a)) end
        end
        if wrong then problems[#problems + 1] = file .. ": " .. wrong end
      end
    end
  end
  return problems
end

local function same_value(x, y)
  return x == y or (type(x) == "number" and type(y) == "number" and x ~= x and y ~= y)
end

-- Where a raw file's derived values (RESULT value=, the headline ratios a
-- summary shows) or its title and date differ from its results.json's.
local function raw_values(raw, doc)
  local values, meta = {}, {}
  for l in raw:gmatch("[^\n]+") do
    if l:match("^RESULT value=") then values[#values + 1] = report.parse(l)
    elseif l:match("^RESULT meta=") then
      local m = report.parse(l)
      meta[m.meta] = meta[m.meta] or m.text
    end
  end
  local kept = type(doc.values) == "table" and doc.values or {}
  if #values ~= #kept then return ("the raw file holds %d values, the JSON %d"):format(#values, #kept) end
  for i, v in ipairs(kept) do
    local a = values[i]
    for _, k in ipairs(a._keys) do
      if not same_value(a[k], v[k]) then
        return ("value %d (%s), %s: %s in the raw file, %s in the JSON"):format(i, tostring(v.value), k,
          tostring(a[k]), tostring(v[k]))
      end
    end
  end
  if meta.title ~= doc.title then return ("its title %q, the JSON's %q"):format(tostring(meta.title), doc.title) end
  local head = raw:match("^# ([^\n]*)")
  if head ~= doc.title then return ("its first line %q, the JSON's title %q"):format(tostring(head), doc.title) end
  local date = type(doc.date) == "string" and doc.date:gsub("T", " "):match("^(%d+%-%d+%-%d+ %d+:%d+)")
  if meta.date ~= date then return ("its date %s, the JSON's %s"):format(tostring(meta.date), tostring(doc.date)) end
end

-- The lines of a raw file that say what ran, on what and with which clock
-- (its head with the knobs, the machine's and the clock's RESULT meta
-- lines, the verdict, the notes of the machine's limits), as the run's JSON
-- makes them with the code that wrote them: report.head, provenance.lines,
-- results.meta_lines, results.knobs_line, the JSON's count of read-backs
-- (and its own verdict, which must say the same), its limits, and its
-- title from its script, about, run, MIB, REPS and warm-up. The lines the
-- file holds and the JSON does not make, "+ line", and those it makes and
-- the file lacks, "- line". A run from before its JSON kept `before` (the
-- start's date and /proc/meminfo and /proc/vmstat then) leaves those three
-- lines unmade; a KVM guest's run from before the head took its present
-- shape leaves more. claims.HEADS holds each such file's unmade lines to
-- their hash as published, so an edit of any of them still shows.
function claims.raw_unmade(raw, doc)
  local got = {}
  for l in raw:gmatch("([^\n]*)\n") do
    if l:match("^knobs: ") or l == "" then break end
    got[#got + 1] = l
  end
  for l in raw:gmatch("[^\n]+") do
    if l:match("^RESULT meta=machine ") or l:match("^RESULT meta=clock ") then got[#got + 1] = l end
  end
  got[#got + 1] = raw:match("([^\n]*)\n?$")
  local head_got = table.move(got, 1, #got, 1, {})
  local prov = type(doc.provenance) == "table" and doc.provenance or {}
  -- the head as the harness writes it: its own lines, then the provenance record's
  local want = report.head(doc, ("%s (%s)"):format(tostring(prov.ftrun), tostring(prov.lua)), true)
  for _, l in ipairs(provenance.lines(prov)) do want[#want + 1] = l end
  local head_want = table.move(want, 1, #want, 1, {})
  -- an older JSON without a field these lines need makes neither: both are pinned then
  local ok, meta = pcall(results.meta_lines, doc.machine, doc.clock)
  for _, l in ipairs(ok and meta or {}) do want[#want + 1] = l end
  -- the verdict, as the JSON's count of read-backs gives it
  local checked = math.type(doc.checks) == "integer" and doc.checks > 0 and results.VERDICT_OK:format(doc.checks)
    or report.VERDICT_NONE
  want[#want + 1] = checked
  -- the limits this kind of machine puts on the figures, each a note of the raw file's
  for _, l in ipairs(type(doc.limits) == "table" and doc.limits or {}) do
    local note = report.line { { "meta", "note" }, { "text", tostring(l.text) } }
    if raw:find("\n" .. note .. "\n", 1, true) then got[#got + 1] = note end
    want[#want + 1] = note
  end
  -- the knobs, in the order the file has them, then any other the JSON has
  local knobs, order, named = type(doc.knobs) == "table" and doc.knobs or {}, {}, {}
  local line = raw:match("\nknobs: ([^\n]*)")
  for _, k in ipairs(line and report.parse("RESULT " .. line)._keys or {}) do
    if knobs[k] ~= nil then order[#order + 1] = k; named[k] = true end
  end
  local rest = {}
  for k in pairs(knobs) do if not named[k] then rest[#rest + 1] = k end end
  table.sort(rest)
  table.move(rest, 1, #rest, #order + 1, order)
  want[#want + 1] = results.knobs_line(stats.map(order, function(k) return { k, knobs[k] } end))
  got[#got + 1] = line and "knobs: " .. line
  if doc.verdict ~= checked then got[#got + 1] = "the JSON's verdict: " .. tostring(doc.verdict) end
  -- and the JSON's title, as the harness makes it from the fields it keeps beside it
  local ok_title, title = pcall(report.title, doc.script, doc.about, doc.run, knobs.MIB, knobs.REPS, doc.warmup)
  if not ok_title or title ~= doc.title then got[#got + 1] = "the JSON's title: " .. tostring(doc.title) end
  local left, out = {}, {}
  for _, l in ipairs(want) do left[l] = (left[l] or 0) + 1 end
  for _, l in ipairs(got) do
    if (left[l] or 0) > 0 then left[l] = left[l] - 1 else out[#out + 1] = "+ " .. l end
  end
  for _, l in ipairs(want) do
    if (left[l] or 0) > 0 then left[l] = left[l] - 1; out[#out + 1] = "- " .. l end
  end
  -- the lines both have, compared above as a count of each, in the order the harness writes them
  local function common(a, b)
    local set, kept = {}, {}
    for _, l in ipairs(b) do set[l] = true end
    for _, l in ipairs(a) do if set[l] then kept[#kept + 1] = l end end
    return kept
  end
  local a, b = common(head_got, head_want), common(head_want, head_got)
  for i = 1, math.max(#a, #b) do
    if a[i] ~= b[i] then
      out[#out + 1] = ("~ its head's line %q where its results.json makes %q"):format(tostring(a[i]), tostring(b[i]))
      break
    end
  end
  return out
end

-- Every published raw file's head, knobs, machine and clock lines and
-- verdict against its JSON (claims.raw_unmade), the unmade lines against
-- the file's pin.
function claims.raw_heads(root)
  local problems = {}
  for _, path in ipairs(published_files(root, "raw%.txt$")) do
    local file = path:sub(#root + 2)
    local raw = read(path) or ""
    local doc = json_file(path:sub(1, -#"raw.txt" - 1) .. "results.json")
    if not doc then
      problems[#problems + 1] = file .. ": no results.json beside it to check its head against"
    else
      local unmade = claims.raw_unmade(raw, doc)
      local pin = #unmade > 0 and textfile.sha256(table.concat(unmade, "\n")):sub(1, 32)
      if pin and pin ~= claims.HEADS[file] then
        problems[#problems + 1] = ("%s: lines its results.json does not make (+) or makes and it lacks (-), and "
          .. "not those pinned by their hash (claims.HEADS, %s):\n    %s"):format(file, pin,
          table.concat(stats.map(unmade, function(l) return #l > 100 and l:sub(1, 97) .. "..." or l end), "\n    "))
      end
    end
  end
  return problems
end

-- Where a raw file's rows and its results.json's differ, or nil: the
-- same rows in the same order, each field the same value (the JSON keeps
-- 1641.0 as 1641, so numbers are compared as numbers); then its values,
-- title and date.
function claims.raw_rows(raw, doc)
  local lines = {}
  for l in raw:gmatch("[^\n]+") do if l:match("^RESULT case=") then lines[#lines + 1] = report.parse(l) end end
  if #lines ~= #doc.rows then
    return ("the raw file holds %d rows, the JSON %d (a file cut short?)"):format(#lines, #doc.rows)
  end
  for i, r in ipairs(doc.rows) do
    local a, b = lines[i], report.parse(results.row_line(r))
    local name = ("row %d (%s %s)"):format(i, tostring(r.case), tostring(r.column))
    for _, k in ipairs(b._keys) do
      if not same_value(a[k], b[k]) then
        return ("%s, %s: %s in the raw file, %s in the JSON"):format(name, k, tostring(a[k]), tostring(b[k]))
      end
    end
    if #a._keys ~= #b._keys then return name .. ": other fields" end
  end
  return raw_values(raw, doc)
end

-- Every file make claims makes from the runs' own files: the summaries
-- (rendered, made once by the caller) and the samples' sidecars.
function claims.generated(rendered, root)
  local all = table.move(rendered, 1, #rendered, 1, {})
  for _, r in ipairs(claims.sidecars(root)) do all[#all + 1] = r end
  return all
end

function claims.summaries(root, rendered)
  local problems = {}
  for _, r in ipairs(claims.generated(rendered or claims.rendered(root), root)) do
    if r.problem then
      problems[#problems + 1] = r.file .. ": " .. r.problem
    elseif r.text ~= read(root .. "/" .. r.file) then
      problems[#problems + 1] = r.differs
    end
  end
  return problems
end

-- Every published run names the commit that made it: a results JSON whose
-- provenance has no commit (an ftrun that could not ask git, built before
-- the build kept its own) is a file nobody can trace.
function claims.commits(root)
  local problems = {}
  for _, run in ipairs(published_runs(root)) do
    local commit = run.doc and type(run.doc.provenance) == "table" and run.doc.provenance.git_commit
    if type(commit) ~= "string" or not commit:match("^%x+$") then
      problems[#problems + 1] = ("%s: records no commit (%s)"):format(run.file, tostring(commit))
    end
  end
  return problems
end

-- Where a row's values, repetition by repetition, differ from what its
-- case's records in the same JSON give (units.convert of the record's field
-- of the column's name, as results.rows made them), or nil. Statistics do
-- not see two repetitions swapped; this does. A column made by a function of
-- the record (no field of its name: some rows of attribution.lua,
-- pagesize.lua, thp.lua, zeropage.lua) has no field to be made again from.
local function against_records(doc, r, records)
  local first = records and records[1]
  if type(r.values) ~= "table" or type(first) ~= "table" or type(first[r.column]) ~= "number" then return nil end
  if #records ~= #r.values then return ("%d values, %d records"):format(#r.values, #records) end
  for i, rec in ipairs(records) do
    local want = type(rec[r.column]) == "number" and units.convert(r.unit, rec[r.column], doc.bytes, doc.pages)
    local x = r.values[i]
    local same = type(x) == "number" and type(want) == "number"
      and math.abs(x - want) <= 1e-9 * math.max(1, math.abs(want))
      or type(x) ~= "number" and (type(want) ~= "number" or units.nonfinite(want))
    if not same then
      return ("repetition %d is %s, its record gives %s"):format(i, tostring(x), tostring(want))
    end
  end
end

-- Every row's statistics made again from its values, as results.rows made
-- them (stats.describe): a median, interval, extreme, mean or cv that no
-- longer follows from the repetitions it summarises is named, and values
-- that no longer follow from their case's records. The claims read the
-- stored statistics, so this is what holds them to the data.
local DESCRIBED = { "n", "min", "median", "lo", "hi", "ci_ranks", "ci_coverage", "max", "mean", "cv" }
function claims.statistics(root)
  local problems = {}
  for _, run in ipairs(published_runs(root)) do
    local doc, records = run.doc, {}
    for _, c in ipairs(doc and type(doc.reps) == "table" and doc.reps or {}) do
      if type(c) == "table" and c.case then records[c.case] = c.records end
    end
    for i, r in ipairs(doc and type(doc.rows) == "table" and doc.rows or {}) do
      local moved = against_records(doc, r, records[r.case])
      if moved then
        problems[#problems + 1] = ("%s: row %d (%s %s): %s"):format(run.file, i, tostring(r.case),
          tostring(r.column), moved)
      end
      local finite = {}
      for _, v in ipairs(type(r.values) == "table" and r.values or {}) do
        if type(v) == "number" then finite[#finite + 1] = v end
      end
      if #finite > 0 then
        local again = stats.describe(finite)
        for _, k in ipairs(DESCRIBED) do
          local a, b = r[k], again[k]
          local same = a == b or (type(a) == "number" and type(b) == "number"
            and (a ~= a and b ~= b or math.abs(a - b) <= 1e-9 * math.max(1, math.abs(b))))
          if not same then
            problems[#problems + 1] = ("%s: row %d (%s %s): %s is %s, its values give %s"):format(run.file,
              i, tostring(r.case), tostring(r.column), k, tostring(a), tostring(b))
            break
          end
        end
      end
    end
  end
  return problems
end

-- Every published plot's data and script as plots.specs makes them from
-- its run's JSON and the files beside it (cycle C's samples), and its SVG
-- as plots.render draws it: a .dat, .gp or .svg edited by hand, or drawn
-- before a file it reads was published, differs; make plots draws them
-- again.
function claims.plot_sources(root)
  local problems = {}
  for _, p in ipairs(kinds.published(root)) do
    local dir = root .. "/" .. p.dir
    for _, run in ipairs(published_runs(root, dir)) do
      local name, doc = run.name, run.doc
      local prefix = name:sub(1, -#"results.json" - 1)
      local made, specs = false, nil
      if doc and type(doc.provenance) == "table" and type(doc.rows) == "table" then
        made, specs = pcall(plots.specs, doc, dir, prefix)
      end
      if not made then
        problems[#problems + 1] = ("%s/%s: its plots cannot be made again: %s"):format(p.dir, name, tostring(specs))
      else
        local stamp = "# " .. plots.text(provenance.describe(doc.provenance)) .. "\n"
        for _, spec in ipairs(specs) do
          for _, f in ipairs { { ".dat", spec.data }, { ".gp", spec.script } } do
            if read(("%s/%s%s"):format(dir, spec.name, f[1])) ~= stamp .. f[2] then
              problems[#problems + 1] = ("%s/%s%s differs from what its run's JSON and the files beside it make "
                .. "(make plots draws it again)"):format(p.dir, spec.name, f[1])
            end
          end
        end
        -- and each SVG as gnuplot draws it from them (the published ones were drawn by this gnuplot: another
        -- version draws other bytes; without gnuplot plots.render draws none and says so)
        local drawn, files = pcall(plots.render, doc, dir, prefix)
        if not drawn then
          problems[#problems + 1] = ("%s/%s: its plots cannot be drawn again: %s"):format(p.dir, name, tostring(files))
        end
        for _, f in ipairs(drawn and files or {}) do
          if f[1]:match("%.svg$") and read(f[1]) ~= f[2] then
            problems[#problems + 1] = ("%s differs from what gnuplot draws from its run's files (make plots draws "
              .. "it again)"):format(f[1]:sub(#root + 2))
          end
        end
      end
    end
  end
  return problems
end

-- results/numa/guest.md against what guesttable makes from the guest's
-- published JSON and numa/check.lua's record beside it (provenance.json):
-- its head and its table. The record's fields the guest's JSON gives must be
-- its; the host's own (qemu, the kernel image, the nodes' MiB, the host's
-- tree) have no other source and show in the head. A record from before it
-- kept the date the host checked leaves the head's host line held to its
-- hash (GUEST_HOST_LINE).
claims.GUEST_HOST_LINE = "37033981bdaefc93"
function claims.guest_table(root)
  local page = read(root .. "/results/numa/guest.md")
  if not page then return {} end
  local doc = json_file(root .. "/results/numa/exp-placement-results.json")
  if not doc or type(doc.rows) ~= "table" or type(doc.reps) ~= "table" then
    return { "results/numa/guest.md: its run's exp-placement-results.json cannot be read" }
  end
  local problems = {}
  local want = table.concat(guesttable.lines(doc), "\n")
  local got = page:match("\n(| case |.*)$")
  if not got or got:gsub("\n+$", "") ~= want then
    problems[#problems + 1] = "results/numa/guest.md: its table differs from what the guest's "
      .. "exp-placement-results.json makes"
  end
  local g = json_file(root .. "/results/numa/provenance.json")
  if not g or type(g.host_commit) ~= "string" then
    problems[#problems + 1] = "results/numa/provenance.json cannot be read"
    return problems
  end
  local record = guesttable.provenance(doc, g)
  local keys = {}
  for k in pairs(record) do keys[#keys + 1] = k end
  for k in pairs(g) do if record[k] == nil then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if not same_tree(g[k], record[k]) then
      problems[#problems + 1] = ("results/numa/provenance.json: its %s is %s, the guest's JSON gives %s"):format(k,
        type(g[k]) == "table" and json.encode(g[k]) or tostring(g[k]),
        type(record[k]) == "table" and json.encode(record[k]) or tostring(record[k]))
      break
    end
  end
  if g.host_commit ~= g.guest_commit then
    problems[#problems + 1] = "results/numa/provenance.json: the host's commit is not the guest's"
  end
  local head, lines = guesttable.head(doc, g), {}
  for l in (page .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  for i, l in ipairs(head) do
    local host = not g.date and l:match("^%- host: ")
    if host and textfile.sha256(lines[i] or ""):sub(1, 16) ~= claims.GUEST_HOST_LINE then
      problems[#problems + 1] = ("results/numa/guest.md: line %d is not the host line pinned by its hash"):format(i)
    elseif not host and lines[i] ~= l then
      problems[#problems + 1] = ("results/numa/guest.md: line %d is not what the guest's JSON and provenance.json "
        .. "make:\n  page: %s\n  made: %s"):format(i, tostring(lines[i]), l)
    end
  end
  return problems
end

-- Each kind's calibrations/calibrate.txt (calibrate.lua's output, kept
-- beside the calibration it wrote) against its report module's output for
-- that file.
-- Where it wrote the file is the calibration's own written_to, or for one
-- from before it kept that, the path as published (CALIBRATE_WRITTEN); a
-- calibration made before calibrate.lua kept each row's median has its
-- median cells taken from the page and held to their hash
-- (CALIBRATE_MEDIANS) instead.
claims.CALIBRATE_WRITTEN = {
  ["results/pvm/calibrations/calibrate.txt"] = "/tmp/pubcal/cycles-1f6fa860d94af977.json",
}
claims.CALIBRATE_MEDIANS = {
  ["results/pvm/calibrations/calibrate.txt"] = "2594b1631518ba9459967cca41f65d427c1d2e0d2df37477d5fc4429140e107e",
}
function claims.calibrate_txt(root)
  local problems = {}
  for _, p in ipairs(kinds.published(root)) do
    local file = p.dir .. "/calibrations/calibrate.txt"
    local text = read(root .. "/" .. file)
    local path = text and text:match("^[^\n]* written to (%S+)\n")
    local name = path and path:match("[^/]+$")
    local cal = name and calibrations.load(("%s/%s/calibrations/%s"):format(root, p.dir, name))
    local where = cal and (cal.written_to or claims.CALIBRATE_WRITTEN[file])
    if text and not cal then
      problems[#problems + 1] = ("%s: it names no calibration file beside it (%s)"):format(file, tostring(name))
    elseif text then
      if path ~= where then
        problems[#problems + 1] = ("%s: it says it wrote %s, its calibration says %s"):format(file, path,
          tostring(where))
      end
      local cells, inside, median = {}, false, nil
      for l in text:gmatch("[^\n]+") do
        local c = cells_of(l)
        if c and c[1] == "row" and c[2] == "median" then inside = true
        elseif inside and c and c[1] ~= "---" then cells[#cells + 1] = { c[1], c[2] }
        elseif inside and not c then break end
      end
      local whole = true
      for _, r in ipairs(cal.rows) do whole = whole and type(r.median) == "number" end
      if not whole then
        local by = {}
        for _, c in ipairs(cells) do by[c[1]] = c[2] end
        median = function(r) return by[r.case .. " " .. r.column] or "?" end
        local pin = textfile.sha256(table.concat(stats.map(cells, function(c) return c[1] .. " " .. c[2] end), "\n"))
        if pin ~= claims.CALIBRATE_MEDIANS[file] then
          problems[#problems + 1] = ("%s: its median cells differ from those pinned by their hash (its calibration "
            .. "file keeps no medians to make them from; sha256 %s)"):format(file, pin)
        end
      end
      local ok, want = pcall(reports.of("calibrate").output, cal, path, median)
      if not ok then
        problems[#problems + 1] = ("%s: %s cannot render it: %s"):format(file, name, want)
      elseif want ~= text then
        local n, a, b = 0, true, true
        local wl, tl = want:gmatch("([^\n]*)\n"), text:gmatch("([^\n]*)\n")
        while a == b and a ~= nil do n, a, b = n + 1, wl(), tl() end
        problems[#problems + 1] = ("%s differs from what calibrate.lua prints for %s, from line %d:\n  file: %s\n  "
          .. "made: %s"):format(file, name, n, tostring(b), tostring(a))
      end
    end
  end
  return problems
end

-- A summary published without its raw file (the NUMA guest's: numa/run.sh
-- brings back the summary and the JSON) against the summary made from a
-- raw file put together from its JSON: its first lines and its table. The
-- order of the columns is the page's (the JSON keeps the columns' rows, not
-- the order the script declared them in), every column it heads must be a
-- row's label; the notes under the table are the run's alone and not made.
function claims.unraw_summaries(root)
  local problems = {}
  for _, path in ipairs(published_files(root, "summary%.md$")) do
    local base = path:sub(1, -#"summary.md" - 1)
    local file = path:sub(#root + 2)
    local doc = json_file(base .. "results.json")
    if not read(base .. "raw.txt") and doc and type(doc.rows) == "table" then
      local page = read(path) or ""
      local heads = cells_of(page:match("\n(| case |[^\n]*)") or "") or {}
      local by_label, columns = {}, {}
      for _, r in ipairs(doc.rows) do by_label[r.label] = by_label[r.label] or r end
      for i = 2, #heads do
        local best
        for label, r in pairs(by_label) do
          if heads[i]:sub(1, #label) == label and (not best or #label > #best.label) then best = r end
        end
        -- a column no repetition recorded is all dashes, and the last one the runner's count of noisy repetitions
        local empty = heads[i]:match("^(.-) %(median %[lo, hi%]%)$")
        if best then columns[#columns + 1] = best
        elseif empty then columns[#columns + 1] = { column = "unrecorded_" .. i, label = empty, unit = "count",
          shown = "median" }
        elseif i == #heads then columns.noisy = heads[i] end
      end
      local lines = { report.line { { "meta", "title" }, { "text", doc.title } },
        report.line { { "meta", "date" }, { "text", tostring(doc.date):gsub("T", " "):sub(1, 16) } } }
      local made, md = pcall(function()
        for _, l in ipairs(results.meta_lines(doc.machine, doc.clock)) do lines[#lines + 1] = l end
        for _, r in ipairs(columns) do
          lines[#lines + 1] = report.line { { "meta", "column" }, { "name", r.column }, { "label", r.label },
            { "unit", r.unit }, { "shown", r.shown } }
        end
        for _, c in ipairs(doc.reps or {}) do
          if c.unsupported then
            lines[#lines + 1] = report.line { { "case", c.case }, { "unsupported", c.unsupported } }
          end
        end
        for _, r in ipairs(doc.rows) do lines[#lines + 1] = results.row_line(r) end
        for _, v in ipairs(doc.values or {}) do
          local fields = { { "value", v.value } }
          for k, x in pairs(v) do if k ~= "value" then fields[#fields + 1] = { k, x } end end
          table.sort(fields, function(a, b) return a[1] == "value" or b[1] ~= "value" and a[1] < b[1] end)
          lines[#lines + 1] = report.line(fields)
        end
        local raw = "# " .. doc.title .. "\n\n" .. table.concat(lines, "\n") .. "\n" .. tostring(doc.verdict) .. "\n"
        return (reports.of(doc.script).table or summary.table)(raw)
      end)
      local function table_of(text)
        local out = {}
        for l in text:gmatch("[^\n]+") do if l:match("^|") then out[#out + 1] = l end end
        return table.concat(out, "\n")
      end
      if #columns + (columns.noisy and 1 or 0) ~= #heads - 1 or not made then
        problems[#problems + 1] = ("%s: its columns are not its JSON's rows (%s)"):format(file,
          made and "a heading no row's label begins" or tostring(md))
      elseif table_of(md) ~= table_of(page) or md:match("^[^\n]*\n[^\n]*") ~= page:match("^[^\n]*\n[^\n]*") then
        problems[#problems + 1] = ("%s differs from the summary its results.json makes (its table or first lines)")
          :format(file)
      end
    end
  end
  return problems
end

-- Every problem: a block that differs from its recomputation, a marker
-- missing, a pasted table or a summary that differs from its source, a
-- digit typed by hand in the results prose.
function claims.check(root, ftrun)
  local problems, rendered, computed = claims.pasted(root), claims.rendered(root), claims.compute(root, ftrun)
  for _, p in ipairs(claims.summaries(root, rendered)) do problems[#problems + 1] = p end
  for _, p in ipairs(claims.commits(root)) do problems[#problems + 1] = p end
  for _, p in ipairs(claims.judged(root, ftrun)) do problems[#problems + 1] = p end
  for _, p in ipairs(claims.statistics(root)) do problems[#problems + 1] = p end
  for _, p in ipairs(claims.bench_sealed(root)) do problems[#problems + 1] = p end
  for _, p in ipairs(claims.plot_sources(root)) do problems[#problems + 1] = p end
  for _, p in ipairs(claims.guest_table(root)) do problems[#problems + 1] = p end
  for _, p in ipairs(claims.raw_heads(root)) do problems[#problems + 1] = p end
  for _, p in ipairs(claims.samples(root)) do problems[#problems + 1] = p end
  for _, p in ipairs(claims.calibrate_txt(root)) do problems[#problems + 1] = p end
  for _, p in ipairs(claims.unraw_summaries(root)) do problems[#problems + 1] = p end
  for file, blocks in pairs(computed) do
    local text = read(root .. "/" .. file)
    if not text then
      problems[#problems + 1] = file .. ": cannot read it"
    else
      local names = {}
      for name in pairs(blocks) do names[#names + 1] = name end
      table.sort(names)
      for _, name in ipairs(names) do
        local got = claims.block(text, name)
        if not got then
          problems[#problems + 1] = ("%s: no markers for the claim %s"):format(file, name)
        elseif got ~= blocks[name] then
          problems[#problems + 1] = ("%s: the claim %s differs from the data\n  prose: %s\n  data:  %s")
            :format(file, name, got:gsub("\n", "\n         "), blocks[name]:gsub("\n", "\n         "))
        end
      end
    end
  end
  for _, p in ipairs(claims.sealed(root, rendered)) do problems[#problems + 1] = p end
  local prose = claims.prose_files(root)
  for _, p in ipairs(seal.check_prose(root, claims.vetted_files(root), claims.sums_files(root), claims.UNBLOCKED)) do
    problems[#problems + 1] = p
  end
  -- the blocks each file may hold: its claims, the runs pasted into it, the bench's
  local known = { ["bench/README.md"] = { bench = true } }
  for file, blocks in pairs(computed) do
    known[file] = known[file] or {}
    for name in pairs(blocks) do known[file][name] = true end
  end
  for _, r in ipairs(rendered) do
    local page = r.dir .. "/README.md"
    known[page] = known[page] or {}
    known[page][r.name] = true
  end
  local ctx = claims.facts_context(root, ftrun)
  for _, file in ipairs(prose) do
    local text = read(root .. "/" .. file) or ""
    local typed, seen = claims.hand_numbers(text, prosefacts.phrases(file), known[file] or {})
    for _, l in ipairs(typed) do problems[#problems + 1] = file .. ": a number typed by hand, " .. l end
    for _, p in ipairs(prosefacts.problems(file, seen, ctx)) do problems[#problems + 1] = p end
  end
  return problems
end

-- Writes every block into its file, every published summary made again
-- from its raw file and pasted again where it was; raises naming a missing
-- marker or a summary that cannot be made.
function claims.write(root, ftrun)
  local files, pastes, rendered = {}, {}, claims.rendered(root)
  for _, r in ipairs(claims.generated(rendered, root)) do
    if r.problem then error(("claims: %s: %s"):format(r.file, r.problem), 0) end
    if r.text ~= read(root .. "/" .. r.file) then files[#files + 1] = { root .. "/" .. r.file, r.text } end
  end
  for _, r in ipairs(rendered) do
    local page = r.dir .. "/README.md"
    if not r.unpasted then
      pastes[page] = pastes[page] or {}
      pastes[page][#pastes[page] + 1] = r
    end
  end
  local computed = claims.compute(root, ftrun)
  for page in pairs(pastes) do computed[page] = computed[page] or {} end
  for file, blocks in pairs(computed) do
    local path = root .. "/" .. file
    local text = read(path) or error(("claims: %s: cannot read it"):format(path), 0)
    for _, r in ipairs(pastes[file] or {}) do -- only a run the page has a block for
      text = runfiles.replace_block(text, r.name, r.text) or text
    end
    local new, missing = claims.apply(text, blocks)
    if not new then error(("claims: %s has no markers for the claim %s (%s)"):format(path, missing,
      (marks(missing))), 0) end
    files[#files + 1] = { path, new }
  end
  return files
end

return claims
