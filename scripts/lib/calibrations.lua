-- Calibrations: how far runs of one script and knobs differ by chance on
-- one machine, stored per (machine fingerprint, script, knobs) in
-- $CALIBRATIONS (default ~/.cache/ftrun/calibrations). A calibration is
-- only worth what its fingerprint is: the same script on a PVM guest and on
-- a KVM guest differ by a factor of six in a first touch, and by more than
-- that in their run-to-run spread.
local covariates = require "covariates"
local json = require "json"
local textfile = require "textfile"

local ENOENT = 2

local calibrations = {}

calibrations.KIND = "ftrun calibration"

-- Knobs that say where files go, how cases are shuffled or how many runs
-- to add: no difference in what ran.
calibrations.WHERE = { RESULTS = true, README = true, PUBLISH = true, SEED = true, UNTIL = true, BASELINE = true,
  MAX_RUNS = true }

-- What must match, from a results JSON: the machine's fields (any field
-- naming the hypervisor, whatever ft.machine() calls it, but not how it was
-- found out), and the provenance's kernel build, CPU model and THP sizes.
local MACHINE = { "cpu", "cpus", "kernel", "page_size", "thp_enabled", "thp_defrag" }
local PROVENANCE = { "kernel", "cpu_vendor", "cpu_family", "cpu_model", "thp_sizes" }

function calibrations.fingerprint(doc)
  local fp, m, p = {}, doc.machine or {}, doc.provenance or {}
  for _, k in ipairs(MACHINE) do fp["machine." .. k] = m[k] end
  for k, v in pairs(m) do
    if k:match("^hypervisor") and k ~= "hypervisor_source" and type(v) ~= "table" then fp["machine." .. k] = v end
  end
  for _, k in ipairs(PROVENANCE) do fp["provenance." .. k] = p[k] end
  return fp
end

-- The knobs that define the measurement.
function calibrations.knobs(doc)
  local out = {}
  for k, v in pairs(doc.knobs or {}) do
    if not calibrations.WHERE[k] and type(v) ~= "table" then out[k] = v end
  end
  return out
end

local function canonical(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. tostring(t[k]) end
  return table.concat(parts, "\n")
end

-- FNV-1a, 64 bits: a file name per key, not a defence against anyone.
local function fnv(s)
  local h = -3750763034362895579 -- 0xcbf29ce484222325
  for i = 1, #s do
    h = h ~ s:byte(i)
    h = h * 1099511628211
  end
  return ("%016x"):format(h)
end

function calibrations.dir()
  local d = os.getenv("CALIBRATIONS")
  if d and d ~= "" then return d end
  return (os.getenv("HOME") or "/tmp") .. "/.cache/ftrun/calibrations"
end

-- The file a run's calibration lives in.
function calibrations.path(doc, dir)
  local key = canonical(calibrations.fingerprint(doc)) .. "\n--\n" .. doc.script .. "\n--\n"
    .. canonical(calibrations.knobs(doc))
  return ("%s/%s-%s.json"):format(dir or calibrations.dir(), (doc.script:gsub("%.lua$", "")), fnv(key))
end

-- The calibration file that applies to a run: the one at its path, else
-- any of its script's in dir that matches (one made where the hypervisor
-- was known, or before the fingerprint dropped hypervisor_source); nil
-- when none does.
function calibrations.find(doc, dir)
  local path = calibrations.path(doc, dir)
  -- anything at its own path is its calibration, to be read or refused
  -- (a FIFO there is refused by load, never opened to wait on)
  local _, _, code = textfile.regular(path)
  if code ~= ENOENT then return path end
  dir = dir or calibrations.dir()
  local prefix = (doc.script:gsub("%.lua$", "")) .. "-"
  for _, name in ipairs(require("ft").list_dir(dir) or {}) do
    if name:sub(1, #prefix) == prefix and name:sub(#prefix + 1):match("^%x+%.json$") then
      local cal = calibrations.load(dir .. "/" .. name)
      if cal and not calibrations.mismatch(cal, doc) then return cal.path end
    end
  end
end

-- A spread wider than a factor of 2^53 between runs is no measurement of
-- ftrun (compare refuses values beyond 2^53), and one above 0 but below a
-- double's precision cannot come from measured values; 0 is a count that
-- came out the same in every run.
local MAX_SD_LOG, MIN_SD_LOG = math.log(2 ^ 53), 2 ^ -52

-- Why a calibration row cannot be trusted, or nil: a df no run count gives
-- (at most runs - 1) or a spread outside what runs can show.
local function row_invalid(r, runs)
  if type(r) ~= "table" or type(r.case) ~= "string" or type(r.column) ~= "string" then
    return "no case or column"
  end
  local sd = r.between_run_sd_log
  if type(sd) ~= "number" or not (sd == 0 or sd >= MIN_SD_LOG and sd <= MAX_SD_LOG) then
    return ("between_run_sd_log is %s, expected a finite between_run_sd_log: 0, or from 2^-52 to ln(2^53)")
      :format(tostring(sd))
  end
  if math.type(r.df) ~= "integer" or r.df < 1 or r.df > runs - 1 then
    return ("df is %s, expected a whole number from 1 to runs - 1 = %d"):format(tostring(r.df), runs - 1)
  end
  if type(r.adjust) == "table" and math.type(r.adjust.df) == "integer" and r.adjust.df > runs - 1 then
    return ("adjust.df is %d, more than runs - 1 = %d"):format(r.adjust.df, runs - 1)
  end
end

-- A calibration file read and checked whole; nil and why when it is no
-- calibration (truncated, another kind of file).
function calibrations.load(path)
  local text, err = textfile.read(path)
  -- the caller names the path: "is a FIFO, ...", not the path again
  if not text then return nil, err:sub(1, #path + 4) == path .. " is " and err:sub(#path + 2) or err end
  local cal = json.decode(text)
  if type(cal) ~= "table" or cal.kind ~= calibrations.KIND or type(cal.rows) ~= "table"
    or type(cal.script) ~= "string" then
    return nil, #text == 0 and "empty" or "not a calibration file of ftrun (truncated, or another file)"
  end
  -- a row's df is bounded by the runs it came from
  if #cal.rows > 0 and (math.type(cal.runs) ~= "integer" or cal.runs < 2) then
    return nil, ("runs is %s, not a whole number of at least 2"):format(tostring(cal.runs))
  end
  for i, r in ipairs(cal.rows) do
    local bad = row_invalid(r, cal.runs)
    if bad then return nil, ("row %d%s: %s"):format(i, type(r) == "table" and type(r.case) == "string"
      and type(r.column) == "string" and (" (%s %s)"):format(r.case, r.column) or "", bad) end
    bad = r.adjust ~= nil and covariates.invalid(r.adjust)
    if bad then return nil, ("row %d (%s %s): %s"):format(i, r.case, r.column, bad) end
  end
  local rows = {}
  for _, r in ipairs(cal.rows) do rows[r.case .. "\0" .. r.column] = r end
  cal.by_row, cal.path = rows, path
  return cal
end

-- Whether cal was made on a run's machine: nil when it was, else why not.
local function machine_mismatch(cal, doc)
  local fp, want = calibrations.fingerprint(doc), cal.fingerprint or {}
  local keys = {}
  for k in pairs(fp) do keys[#keys + 1] = k end
  for k in pairs(want) do if fp[k] == nil then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    -- a hypervisor not recorded, or unknown (a run without CAP_SYSLOG),
    -- matches any; calibrations from before kept how it was found out
    local any = k:match("^machine%.hypervisor") and (want[k] == nil or want[k] == "unknown" or fp[k] == nil
      or fp[k] == "unknown")
    if want[k] ~= fp[k] and not any and k ~= "machine.hypervisor_source" then
      return ("it was made on another machine (%s %s, %s has %s)"):format(k, tostring(want[k]), doc.path or "the run",
        tostring(fp[k]))
    end
  end
end

-- Whether cal applies to a run: nil when it does, else why not.
function calibrations.mismatch(cal, doc)
  if cal.script ~= doc.script then
    return ("it calibrates %s, not %s"):format(tostring(cal.script), doc.script)
  end
  local other = machine_mismatch(cal, doc)
  if other then return other end
  local mine = calibrations.knobs(doc)
  for _, t in ipairs { cal.knobs or {}, mine } do
    for k in pairs(t) do
      if (cal.knobs or {})[k] ~= mine[k] then
        return ("it was made with %s=%s, %s has %s"):format(k, tostring((cal.knobs or {})[k]), doc.path or "the run",
          tostring(mine[k]))
      end
    end
  end
end

-- The conservative between-run spread (sd of the log run medians) where no
-- calibration matches a run: per kind of unit, on a guest and on bare
-- metal. On a KVM guest shared with other work, 12 runs of CYCLES=A MIB=128
-- REPS=9 gave pass 1's run medians an sd of 9.3 % and pass 1 / canary 17.4 %
-- (issue 42); the default takes 25 % for times and rates, above both, so a
-- change it calls is one no drift seen there explains.
calibrations.DEFAULT_SD = { guest = { time = 0.25, rate = 0.25 }, metal = { time = 0.10, rate = 0.10 } }
calibrations.DEFAULT_DF = 1000000 -- a stated spread, not an estimate: its t is the normal
calibrations.OTHER_KNOBS_WIDEN = 1.5 -- another configuration's spread, widened: its knobs are not these

-- The bound for runs no calibration matches: a calibration of the same
-- machine and script with other knobs (each row's spread widened), else the
-- default for the machine's kind. Returns {by_row = {key -> {between_run_sd_log, df}}, default =
-- {unit -> sd}, text = what it is}.
function calibrations.bound(doc, dir)
  dir = dir or calibrations.dir()
  local prefix = (doc.script:gsub("%.lua$", "")) .. "-"
  local names = require("ft").list_dir(dir) or {}
  table.sort(names)
  local h = type(doc.machine) == "table" and doc.machine.hypervisor or nil
  local guest = h ~= nil and h ~= "" and h ~= "none" -- "unknown" counts as a guest: the wider spread
  local kind = guest and "guest" or "metal"
  local out = { by_row = {}, default = calibrations.DEFAULT_SD[kind] }
  for _, name in ipairs(names) do
    if name:sub(1, #prefix) == prefix and name:sub(#prefix + 1):match("^%x+%.json$") then
      local cal = calibrations.load(dir .. "/" .. name)
      if cal and cal.script == doc.script and not machine_mismatch(cal, doc) then
        for key, r in pairs(cal.by_row) do
          out.by_row[key] = { between_run_sd_log = r.between_run_sd_log * calibrations.OTHER_KNOBS_WIDEN, df = r.df }
        end
        out.text = ("the calibration of this machine and script with other knobs %s (its spread widened %g times)")
          :format(cal.path, calibrations.OTHER_KNOBS_WIDEN)
        return out
      end
    end
  end
  out.text = ("the stated default between-run spread for a %s: %g %% for times and rates (no calibration of this "
    .. "machine and script)"):format(guest and "virtual machine" or "bare-metal machine", 100 * out.default.time)
  return out
end

-- A run's wall time in s, from its own record (nil when it has none).
function calibrations.run_seconds(doc)
  for _, v in ipairs(doc.values or {}) do
    if type(v) == "table" and v.value == "own_time" and type(v.wall_ms) == "number" then return v.wall_ms / 1000 end
  end
end

return calibrations
