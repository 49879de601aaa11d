-- compare.lua: two or more runs of a script, benchstat's way. For every row
-- both runs have: the old and the new median with their intervals, the
-- change in %, and the p-value of a Mann-Whitney U test on the repetitions;
-- "~" when p >= ALPHA (no difference shown). A geometric mean of the
-- changes closes each table.
--   ./ftrun compare.lua OLD.json NEW.json [MORE.json ...] [ALPHA=0.05] [FAIL_ABOVE=5] [FORCE=1]
-- FAIL_ABOVE=p: exit 1 when a row got significantly worse by more than p %.
-- Runs of different scripts or page sizes are refused unless FORCE=1.
local json = require "json"
local knobs = require "knobs"
local provenance = require "provenance"
local stats = require "stats"
local units = require "units"

local SCRIPT = "compare.lua"
local USAGE = "usage: ./ftrun compare.lua OLD.json NEW.json [MORE.json ...] [ALPHA=0.05] [FAIL_ABOVE=percent] [FORCE=1]"
local function fail(msg) knobs.fail(SCRIPT, msg) end

local opts, files = { ALPHA = 0.05, FORCE = false }, {}
for _, a in ipairs { ... } do
  local name, value = a:match("^([%u_]+)=(.*)$")
  if a == "--help" or a == "-h" then
    print(USAGE)
    os.exit(0, true)
  elseif name == "ALPHA" or name == "FAIL_ABOVE" then
    local v = tonumber(value)
    if not v or v <= 0 or (name == "ALPHA" and v >= 1) then
      local expected = name == "ALPHA" and "a level between 0 and 1" or "a percent above 0"
      fail(("%s=%s: expected %s"):format(name, value, expected))
    end
    opts[name] = v
  elseif name == "FORCE" then
    opts.FORCE = knobs.parsers.flag(value)
    if opts.FORCE == nil then fail(("FORCE=%s: expected 0 or 1"):format(value)) end
  elseif name then
    fail(("%s: not a knob of compare.lua (ALPHA, FAIL_ABOVE, FORCE)"):format(a))
  else
    files[#files + 1] = a
  end
end
if #files < 2 then fail("needs at least two results JSON files\n" .. USAGE) end

-- A results JSON, its rows the ones with a case, a column, a unit and values.
local function load(path)
  local f, err = io.open(path)
  local text = f and f:read("a")
  if f then f:close() end
  if not text then fail(("cannot read %s: %s"):format(path, err or "not a file")) end
  local doc, why = json.decode(text)
  if type(doc) ~= "table" or type(doc.rows) ~= "table" or type(doc.script) ~= "string" then
    fail(("%s: not an ftrun results JSON (%s)"):format(path, why or "no script or no rows"))
  end
  local rows = {}
  for _, r in ipairs(doc.rows) do
    if type(r) == "table" and type(r.case) == "string" and type(r.column) == "string"
      and type(r.unit) == "string" and type(r.values) == "table" then rows[#rows + 1] = r end
  end
  doc.rows, doc.path = rows, path
  for _, k in ipairs { "knobs", "machine", "provenance" } do
    if type(doc[k]) ~= "table" then doc[k] = {} end
  end
  return doc
end

-- Which way is worse, by unit; counts and shares have no better side.
local LOWER_BETTER = { ["ns/page"] = true, ns = true, us = true, ms = true, cycles = true }
local HIGHER_BETTER = { ["GB/s"] = true, ["faults/s"] = true }

local function finite(values)
  local out = {}
  for _, v in ipairs(values or {}) do
    if type(v) == "number" and not units.nonfinite(v) then out[#out + 1] = v end
  end
  return out
end

local function describe(doc)
  local p = doc.provenance or {}
  return ("%s (%s %s, %s, commit %s%s)"):format(doc.path, doc.script, doc.run or "", doc.date or "?",
    tostring(p.git_commit):sub(1, 12),
    p.git_dirty and ", dirty" .. (p.git_diff_sha256 and ", diff " .. p.git_diff_sha256:sub(1, 16) or "") or "")
end

-- What differs between the two runs' knobs and machines, as lines; where
-- the files went and the shuffling seed are no difference in what ran.
local WHERE = { RESULTS = true, README = true, PUBLISH = true, SEED = true }
local function differences(old, new)
  local out = {}
  local function diff(what, a, b)
    local keys, seen = {}, {}
    for k in pairs(a or {}) do keys[#keys + 1] = k; seen[k] = true end
    for k in pairs(b or {}) do if not seen[k] then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local x, y = (a or {})[k], (b or {})[k]
      if type(x) ~= "table" and type(y) ~= "table" and x ~= y and not (what == "knob" and WHERE[k]) then
        out[#out + 1] = ("%s %s: %s -> %s"):format(what, k, tostring(x), tostring(y))
      end
    end
  end
  diff("knob", old.knobs, new.knobs)
  diff("machine", old.machine, new.machine)
  diff("provenance", old.provenance, new.provenance)
  return out
end

local function binomial(n, k)
  local c = 1
  for i = 1, k do c = c * (n - k + i) / i end
  return c
end

local function cell(d, unit)
  if d.n == 0 then return "–" end
  return ("%s [%s, %s] (n=%d)"):format(units.cell(d.median, unit), units.cell(d.lo, unit), units.cell(d.hi, unit), d.n)
end

local worst = {}
local function compare(old, new)
  print(("old: %s\nnew: %s"):format(describe(old), describe(new)))
  if (old.script ~= new.script or old.page_size ~= new.page_size) and not opts.FORCE then
    fail(("%s is %s with %s-byte pages, %s is %s with %s-byte pages: not the same measurement "
      .. "(FORCE=1 compares them anyway)"):format(old.path, old.script, tostring(old.page_size), new.path,
      new.script, tostring(new.page_size)))
  end
  for _, l in ipairs(differences(old, new)) do print("  " .. l) end
  print("")
  local new_rows = {}
  for _, r in ipairs(new.rows) do new_rows[r.case .. "\0" .. r.column] = r end
  print("| case | column | unit | old median [lo, hi] | new median [lo, hi] | change | p |")
  print("|---|---|---|---|---|---|---|")
  local logs, compared, smallest = {}, 0, nil
  for _, o in ipairs(old.rows) do
    local n = new_rows[o.case .. "\0" .. o.column]
    local a, b = finite(o.values), finite(n and n.values)
    if n and #a > 0 and #b > 0 then
      compared = compared + 1
      local floor = 2 / binomial(#a + #b, #a) -- the smallest p the U test can give these sizes
      if not smallest or floor > smallest.p then smallest = { p = floor, n1 = #a, n2 = #b } end
      local da, db = stats.describe(a), stats.describe(b)
      local p = stats.mann_whitney(a, b)
      local change = da.median ~= 0 and 100 * (db.median - da.median) / math.abs(da.median)
        or (db.median == 0 and 0 or (db.median > 0 and math.huge or -math.huge)) -- from 0: infinitely
      local significant = p < opts.ALPHA
      local better_lower = LOWER_BETTER[o.unit] and true or (HIGHER_BETTER[o.unit] and false)
      local verdict = "~"
      if significant then
        verdict = ("%+.1f %%"):format(change)
        if better_lower ~= nil and change ~= 0 then
          local worse = (change > 0) == better_lower
          verdict = verdict .. (worse and " (worse)" or " (better)")
          if worse and opts.FAIL_ABOVE and math.abs(change) > opts.FAIL_ABOVE then
            worst[#worst + 1] = ("%s %s %s: %+.1f %% (p=%.3g)"):format(new.path, o.case, o.column, change, p)
          end
        end
      end
      if better_lower ~= nil and da.median > 0 and db.median > 0 then
        logs[#logs + 1] = math.log(db.median / da.median)
      end
      print(("| %s | %s | %s | %s | %s | %s | %.3g |"):format(o.case, o.column, o.unit, cell(da, o.unit),
        cell(db, o.unit), verdict, p))
    end
  end
  if compared == 0 then fail(("%s and %s have no row in common"):format(old.path, new.path)) end
  if smallest.p >= opts.ALPHA then
    local msg = ("with %d against %d repetitions the U test cannot reach p < %g (its smallest p is %.3g): "
      .. "no row can show a difference; run with more REPS"):format(smallest.n1, smallest.n2, opts.ALPHA, smallest.p)
    print("warning: " .. msg)
    if opts.FAIL_ABOVE then fail("FAIL_ABOVE cannot gate: " .. msg) end
  end
  if #logs > 0 then
    print(("\ngeomean of new / old over the %d timed and throughput rows: %.4f (%+.1f %%)"):format(#logs,
      math.exp(stats.mean(logs)), 100 * (math.exp(stats.mean(logs)) - 1)))
  end
  print(("p: two-sided Mann-Whitney U test on the repetitions (exact without ties and n1*n2 <= 2500, "
    .. "else normal with tie correction); ~: p >= %g, no difference shown.\n"):format(opts.ALPHA))
end

local docs = {} -- every file read and checked before anything is printed
for i, f in ipairs(files) do docs[i] = load(f) end
print("compared by " .. provenance.describe(provenance.collect()) .. "\n")
for i = 2, #docs do compare(docs[1], docs[i]) end
if #worst > 0 then
  io.stderr:write(("compare.lua: %d row(s) significantly worse by more than FAIL_ABOVE=%g %%:\n  %s\n"):format(
    #worst, opts.FAIL_ABOVE, table.concat(worst, "\n  ")))
  os.exit(1, true)
end
