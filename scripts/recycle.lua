-- recycle.lua: reuse after release. Touch, release the pages with munmap
-- (and map again), madvise(MADV_DONTNEED) or madvise(MADV_FREE), then touch
-- again: what the second first touch costs, and its faults.
local harness = require "harness"

local h = harness.start({ script = "recycle", shuffle = true, mib = 512, reps = 5,
  about = "the second first touch, after munmap, MADV_DONTNEED or MADV_FREE" }, { ... })

-- Each release: the buffer the second touch goes to, and the ns the release took.
local RELEASES = {
  { "nothing released (a plain second pass)", function(_, b) return b, 0 end },
  { "munmap, then a fresh mmap", function(r, b)
    local ns = r:release(nil, b)
    local fresh, map_ns = r:map()
    return fresh, ns + map_ns
  end },
  { "madvise(MADV_DONTNEED)", function(_, b) return b, assert(b:madvise("dontneed")) end },
  { "madvise(MADV_FREE)", function(_, b) return b, assert(b:madvise("free")) end },
}
for _, rel in ipairs(RELEASES) do
  h:case(rel[1], function(r)
    local b <close> = r:map()
    r:pass("first", b, "touch", 1)
    local again <close>, release_ns = rel[2](r, b)
    r.release = release_ns
    r:pass("second", again, "touch", 2)
    r:check_bytes(again, 2, rel[1])
  end)
end
h:columns {
  { "first", "first touch", "ns/page" }, { "release", "release", "ns/page" },
  { "second", "second touch", "ns/page" }, { "second_faults", "second-touch faults", "faults" },
}
h:finish()
