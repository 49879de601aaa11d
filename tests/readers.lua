-- The readers of results JSON and calibrations take regular files only, of
-- bounded size, without blocking: a FIFO, a device, a link to one, a
-- directory and a sparse file of 2 GB are refused with a message (exit 2),
-- and an edited results JSON is refused naming its field, never met by a
-- traceback (reliability-2026-12-07c CR-1, CR-2, CR-3, SW-4, SW-6, SW-9,
-- UM-6). Every reader runs under timeout(1): a hang is a failure, not a wait.
local ft = require "ft"
local t = require "tap"
local json = require "json"
local q = t.quote

local dir = t.tmpdir()
local caldir = dir .. "/cal"
os.execute("mkdir -p " .. q(caldir))
local HANG = 124 -- timeout's status
local function compare(args)
  return t.run(("CALIBRATIONS=%s timeout 30 %s compare.lua %s"):format(q(caldir), q(t.ftrun), args))
end

do -- ft.read_file: regular files only, at most max bytes
  os.execute("mkfifo " .. q(dir .. "/fifo"))
  t.write(dir .. "/ten", "0123456789")
  t.is(ft.read_file(dir .. "/ten", 10), "0123456789", "a regular file of max bytes is read")
  local text, why, code = ft.read_file(dir .. "/ten", 9)
  t.is(text, nil, "one of more is refused")
  t.like(why or "", "larger than 9 bytes", "saying so")
  t.is(code, 27, "with EFBIG")
  text, why = ft.read_file(dir .. "/fifo", 100)
  t.ok(text == nil and why:find("is a FIFO, not a regular file", 1, true), "a FIFO is refused unopened", why)
  text, why = ft.read_file("/dev/zero", 100)
  t.ok(text == nil and why:find("character device", 1, true), "/dev/zero is refused", why)
  os.execute("ln -s /dev/zero " .. q(dir .. "/zero-link"))
  text, why = ft.read_file(dir .. "/zero-link", 100)
  t.ok(text == nil and why:find("character device", 1, true), "and a link to it", why)
  local _, _, dcode = ft.read_file(dir, 100)
  t.is(dcode, 21, "a directory: EISDIR")
  local stat = ft.read_file("/proc/self/stat", 1 << 20)
  t.ok((stat or ""):match("^%d+ %(") ~= nil, "a procfs file (size 0 in stat) is read whole", stat)
  t.is(select(3, ft.read_file("/proc/self/stat", 4)), 27, "and refused beyond max")
  t.is(select(3, ft.read_file(dir .. "/none", 4)), 2, "a missing file: ENOENT")
  t.ok(not pcall(ft.read_file, dir .. "/ten", -1), "a negative max is an error")
end

-- A small run to read, and its calibration's path.
local run_dir = dir .. "/run"
local out, code = t.ftrun_run("cycles.lua", "QUICK=1 MIB=8 REPS=3 CYCLES=A RESULTS=" .. q(run_dir))
t.is(code, 0, "a small cycles run to read", out)
local good = run_dir .. "/quick-results.json"
local text = t.read(good) or "null"
local calibrations = require "calibrations"
local doc0 = json.decode(text) or {}
doc0.path = good
local cal_path = calibrations.path(doc0, caldir)

-- A FIFO, /dev/zero (through a link) and a sparse file of 2 GB, each where a
-- reader looks: refused within timeout's limit, exit 2, saying what it is.
local HOSTILE = {
  { "a FIFO", function(p) os.execute("mkfifo " .. q(p)) end, "is a FIFO" },
  { "/dev/zero", function(p) os.execute("ln -s /dev/zero " .. q(p)) end, "is a character device" },
  { "a 2 GB sparse file", function(p) os.execute("truncate -s 2G " .. q(p)) end, "is larger than" },
}
for i, h in ipairs(HOSTILE) do
  local name, make, says = h[1], h[2], h[3]
  local p = ("%s/h%d-results.json"):format(dir, i)
  make(p)
  out, code = compare(q(good) .. " " .. q(p))
  t.is(code, 2, name .. " as a results JSON: exit 2, no hang", out)
  t.like(out, p .. " " .. says, "naming it and what it is")
  out, code = compare(q(good) .. " " .. q(good) .. " CALIBRATION=" .. q(p))
  t.is(code, 2, name .. " as CALIBRATION: exit 2", out)
  t.like(out, says, "saying what it is")
  make(cal_path)
  out, code = compare(q(good) .. " " .. q(good))
  t.is(code, 2, name .. " at the run's calibration path: exit 2", out)
  t.like(out, "the calibration " .. cal_path .. ": " .. says, "naming it once")
  os.remove(cal_path)
  local stray = caldir .. "/cycles-0123456789abcdef.json"
  make(stray)
  out, code = compare(q(good) .. " " .. q(good))
  t.ok(code ~= HANG and not out:find("traceback", 1, true), name .. " among the calibrations: no hang", out)
  os.remove(stray)
  -- plot.lua finds it in a directory: refused, no hang
  os.execute("mkdir -p " .. q(dir .. "/in" .. i))
  make(("%s/in%d/x-results.json"):format(dir, i))
  out, code = t.run(("timeout 30 %s plot.lua %s"):format(q(t.ftrun), q(dir .. "/in" .. i)))
  t.is(code, 2, name .. " in plot.lua's directory: exit 2, no hang", out)
end

do -- a directory as a calibration says so (UM-6)
  out, code = compare(q(good) .. " " .. q(good) .. " CALIBRATION=" .. q(dir))
  t.is(code, 2, "a directory as CALIBRATION: exit 2", out)
  t.like(out, "is a directory", "saying so")
end

-- Edited results JSON: exit 2 naming the field, never a traceback.
local function edited(name, edit, says)
  local doc = json.decode(text)
  edit(doc)
  local p = dir .. "/" .. name .. "-results.json"
  t.write(p, type(doc) == "table" and json.encode(doc) or doc)
  out, code = compare(q(good) .. " " .. q(p))
  t.is(code, 2, name .. ": exit 2", out)
  t.like(out, says, name .. ": the message names it")
  t.ok(not out:find("traceback", 1, true), name .. ": no traceback")
end
local function each_row(f) return function(doc) for _, r in ipairs(doc.rows) do f(r, doc) end end end
edited("knobs-list", function(d) d.knobs = { 1, 2, 3 } end, "field knobs is a list, expected an object")
edited("provenance-list", function(d) d.provenance = { "x" } end, "field provenance is a list")
edited("machine-string", function(d) d.machine = "x" end, "field machine is a string")
edited("records-numbers", function(d) d.reps[1].records = { 1, 2 } end, "reps[1].records[1] is a number")
edited("reps-object", function(d) d.reps = { x = 1 } end, "field reps is an object, expected a list")
edited("values-booleans", each_row(function(r) r.values[1] = true end), "values[1] is boolean")
edited("values-lists", each_row(function(r) r.values[2] = { 1 } end), "values[2] is table")
edited("verdict-number", function(d) d.verdict = 3 end, "field verdict is a number")
-- CR-2: more values than repetitions
edited("many-values", each_row(function(r) for i = 4, 2000 do r.values[i] = r.values[1] end end),
  "holds 2000 values, more than the run's 3 repetitions")
edited("no-reps", function(d) d.knobs.REPS = nil; d.reps = nil end, "has no knobs.REPS and no records")
-- SW-4: a row doubled under a side in a run that is not AB
edited("side", function(d)
  local n = #d.rows
  for i = 1, n do
    local copy = {}
    for k, v in pairs(d.rows[i]) do copy[k] = v end
    copy.side = "Z"
    d.rows[n + i] = copy
  end
end, "has side Z in a run that is not AB")
-- SW-9: a negative time
edited("negative", each_row(function(r) if r.unit == "ns/page" then r.values[1] = -5 end end),
  "= -5, but no ns/page is below 0")

do -- SW-9: what is not JSON (a hex number, NaN) is refused by the reader
  for _, bad in ipairs { "0x10", "NaN", "Infinity" } do
    t.is(json.decode("[" .. bad .. "]"), nil, "json.decode refuses " .. bad)
  end
  t.is(json.decode("[1e400]")[1], math.huge, "and still reads a number beyond a double as infinite (refused later)")
end

-- SW-6: a calibration's df beyond its runs, or a spread no runs give
local function calibration(edit)
  local cal = { kind = calibrations.KIND, script = doc0.script, fingerprint = calibrations.fingerprint(doc0),
    knobs = calibrations.knobs(doc0), runs = 10, date = "test", rows = {} }
  for _, r in ipairs(doc0.rows) do
    cal.rows[#cal.rows + 1] = { case = r.case, column = r.column, unit = r.unit, between_run_sd_log = 0.02, df = 9 }
  end
  edit(cal)
  t.write(cal_path, json.encode(cal))
  return calibrations.load(cal_path)
end
local CALS = {
  { "df 2^62", function(c) c.rows[1].df = 1 << 62 end, "df is 4611686018427387904, expected a whole number from 1 to" },
  { "df 10^6 with runs 10", function(c) c.rows[1].df = 1000000 end, "runs - 1 = 9" },
  { "a spread of 1e-300", function(c) c.rows[1].between_run_sd_log = 1e-300 end, "between_run_sd_log is 1e-300" },
  { "a spread of 1e308", function(c) c.rows[1].between_run_sd_log = 1e308 end, "between_run_sd_log is 1e+308" },
  { "no runs", function(c) c.runs = nil end, "runs is nil" },
}
for _, c in ipairs(CALS) do
  local cal, why = calibration(c[2])
  t.is(cal, nil, "a calibration with " .. c[1] .. " is refused")
  t.like(why or "", c[3], "naming the field", why)
end
t.ok(calibration(function(c) c.rows[1].between_run_sd_log = 0 end), "a spread of 0 (a count) is taken")
out, code = compare(q(good) .. " " .. q(good))
t.ok(code ~= 1 and not out:find("traceback", 1, true), "compare with such a calibration found: no traceback", out)

-- the published runs all pass the reader
local bad_published = {}
for line in t.run("find " .. q(ft.project_dir .. "/results") .. " -name '*results.json'"):gmatch("[^\n]+") do
  local doc, why = require("resultsjson").read(line)
  if not doc then bad_published[#bad_published + 1] = why end
end
t.is(table.concat(bad_published, "\n"), "", "every published results JSON passes the reader")

t.done()
