-- recycle.lua: reuse after release. Touch, release the pages with munmap
-- (and map again), madvise(MADV_DONTNEED) or madvise(MADV_FREE), then touch
-- again: what the second first touch costs, and its faults.
local experiment = require "experiment"
local measure = require "measure"
local stats = require "stats"

local exp = experiment.start("recycle", "the second first touch, after munmap, MADV_DONTNEED or MADV_FREE",
  { MIB = 512, REPS = 5 })
local fmt = experiment.fmt

-- Each release returns the buffer the second touch goes to, and the ns the release took.
local RELEASES = {
  { "nothing released (a plain second pass)", function(b) return b, 0 end },
  { "munmap, then a fresh mmap", function(b)
    local ns = measure.release(b)
    local fresh = measure.map(exp.bytes)
    return fresh, ns + fresh.map_ns
  end },
  { "madvise(MADV_DONTNEED)", function(b) return b, assert(b:madvise("dontneed")) end },
  { "madvise(MADV_FREE)", function(b) return b, assert(b:madvise("free")) end },
}

local rows = {}
for _, rel in ipairs(RELEASES) do
  local label, release = rel[1], rel[2]
  local runs = exp:repeat_(label, function()
    local b <close> = measure.map(exp.bytes)
    local first_ns, first_faults = measure.pass(b, "touch", 1)
    local again <close>, release_ns = release(b)
    local second_ns, second_faults = measure.pass(again, "touch", 2)
    measure.check_bytes(again, 2, label)
    return { first = first_ns, first_faults = first_faults, release = release_ns,
      second = second_ns, second_faults = second_faults }
  end)
  local col, pp = exp:columns(runs)
  exp:keep(label, runs)
  exp:result { { "release", label }, { "first_ns_per_page", pp("first") }, { "release_ns_per_page", pp("release") },
    { "second_ns_per_page", pp("second") }, { "second_faults", stats.median(col("second_faults")) },
    { "second_faults_max", stats.max(col("second_faults")) } }
  rows[#rows + 1] = { label, fmt(pp("first")), fmt(pp("release")),
    fmt(pp("second")) .. " / " .. fmt(stats.median(col("second_faults"))) }
end

exp:table({ "between the two touches", "first touch ns/page (min)", "release ns/page (min)",
  "second touch: ns/page (min) / faults (median)" }, rows)
exp:finish()
