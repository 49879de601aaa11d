-- The whole benchmark in a dozen lines: the first touch of fresh anonymous memory
-- against a second pass. ./ftrun first_touch.lua [MIB=256] [REPS=5] [QUICK=1]
local h = require("harness").start({ script = "first_touch", mib = 256, reps = 5,
  about = "first touch against a second pass" }, { ... })
h:case("fresh mmap", function(r)
  local b <close> = r:map()
  r:pass("first", b, "touch", 1)
  r:pass("second", b, "touch", 2)
  r:check_bytes(b, 2, "second pass")
end)
h:columns { { "first", "first touch", "ns/page" }, { "first_faults", "its faults", "faults" },
  { "second", "second pass", "ns/page" }, { "second_faults", "its faults", "faults" } }
h:finish()
