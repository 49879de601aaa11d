-- populate.lua: where the faults go. Demand faulting against MAP_POPULATE,
-- madvise(MADV_POPULATE_WRITE), mlock and a pre-touch loop: the mapping
-- call, the populate step and the first pass after it, each with its faults.
local ft = require "ft"
local experiment = require "experiment"
local measure = require "measure"
local stats = require "stats"

local exp = experiment.start("populate", "where the faults go (demand, MAP_POPULATE, MADV_POPULATE_WRITE, mlock, pre-touch)",
  { MIB = 512, REPS = 5 })
local fmt = experiment.fmt

-- Each method: map options, and the populate step (returns ns; nil = none).
local METHODS = {
  { "demand faulting", {}, nil },
  { "MAP_POPULATE", { populate = true }, nil },
  { "madvise(MADV_POPULATE_WRITE)", {}, function(b) return b:madvise("populate_write") end },
  { "mlock", {}, function(b) return b:mlock() end },
  { "pre-touch loop", {}, function(b) return b:touch(7) end },
}

-- Only an advice or call this kernel does not know may become a "not
-- supported" row; any other refusal, a checksum mismatch or an interrupt
-- fails the run.
local NOT_SUPPORTED = { [22] = "EINVAL", [38] = "ENOSYS", [95] = "EOPNOTSUPP" }

local function one_rep(label, options, populate)
  local b <close>, map_ns, map_faults = measure.map(exp.bytes, options)
  local step_ns, step_faults = 0, 0
  if populate then
    local f0 = ft.faults()
    local ns, err, errno = populate(b)
    if not ns then
      if NOT_SUPPORTED[errno] then return nil, ("%s (%s)"):format(err, NOT_SUPPORTED[errno]) end
      error(err, 0)
    end
    step_ns, step_faults = ns, ft.faults() - f0
  end
  local pass_ns, pass_faults = measure.pass(b, "touch", 1)
  measure.check_bytes(b, 1, label)
  measure.release(b)
  return { map = map_ns, map_faults = map_faults, step = step_ns, step_faults = step_faults,
    pass = pass_ns, pass_faults = pass_faults }
end

local rows = {}
for _, m in ipairs(METHODS) do
  local label, options, populate = m[1], m[2], m[3]
  local refused
  local runs = exp:repeat_(label, function()
    if refused then return nil end
    local r, why = one_rep(label, options, populate)
    refused = why
    return r
  end)
  if refused then
    exp:result { { "method", label }, { "not_supported", refused } }
    rows[#rows + 1] = { label, "not supported by this kernel: " .. refused, "", "", "", "" }
  else
    local col, pp = exp:columns(runs)
    exp:keep(label, runs)
    exp:result { { "method", label }, { "map_ns_per_page", pp("map") }, { "map_faults", stats.median(col("map_faults")) },
      { "step_ns_per_page", pp("step") }, { "step_faults", stats.median(col("step_faults")) },
      { "pass_ns_per_page", pp("pass") }, { "pass_faults", stats.median(col("pass_faults")) },
      { "total_ns_per_page", stats.min(stats.map(runs, function(r) return (r.map + r.step + r.pass) / exp.pages end)) } }
    rows[#rows + 1] = { label,
      fmt(pp("map")) .. " / " .. fmt(stats.median(col("map_faults"))),
      populate and (fmt(pp("step")) .. " / " .. fmt(stats.median(col("step_faults")))) or "–",
      fmt(pp("pass")) .. " / " .. fmt(stats.median(col("pass_faults"))),
      fmt(stats.min(stats.map(runs, function(r) return (r.map + r.step + r.pass) / exp.pages end))) }
  end
end

exp:table({ "method", "mapping call: ns/page (min) / faults", "populate step: ns/page / faults",
  "first pass: ns/page / faults", "all three: ns/page (min)" }, rows)
exp:finish()
