-- populate.lua: where the faults go. Demand faulting against MAP_POPULATE,
-- madvise(MADV_POPULATE_WRITE), mlock and a pre-touch loop: the mapping
-- call, the populate step and the first pass after it, each with its faults.
local ft = require "ft"
local harness = require "harness"

local h = harness.start({ script = "populate", shuffle = true, mib = 512, reps = 5,
  about = "where the faults go (demand, MAP_POPULATE, MADV_POPULATE_WRITE, mlock, pre-touch)",
}, { ... })
-- Only an advice this kernel does not know is "not supported": other refusals fail the run.
local NOT_SUPPORTED = { [22] = "EINVAL", [38] = "ENOSYS", [95] = "EOPNOTSUPP" }
local METHODS = { -- name, map options, the populate step (b -> ns or nil, message, errno)
  { "demand faulting", {} },
  { "MAP_POPULATE", { populate = true } },
  { "madvise(MADV_POPULATE_WRITE)", {}, function(b) return b:madvise("populate_write") end },
  { "mlock", {}, function(b) return b:mlock() end },
  { "pre-touch loop", {}, function(b) return b:touch(7) end },
}
for _, m in ipairs(METHODS) do
  h:case(m[1], function(r)
    local b <close> = r:map("map", m[2])
    if m[3] then
      local f0 = ft.faults()
      local ns, err, errno = m[3](b)
      if not ns and not NOT_SUPPORTED[errno] then error(err, 0) end
      if not ns then return false, ("%s (%s)"):format(err, NOT_SUPPORTED[errno]) end
      r.step, r.step_faults = ns, ft.faults() - f0
    end
    r:pass("pass", b, "touch", 1)
    r:check_bytes(b, 1, m[1])
    r.total = r.map + (r.step or 0) + r.pass
  end)
end
h:columns {
  { "map", "mapping call", "ns/page" }, { "map_faults", "its faults", "faults" },
  { "step", "populate step", "ns/page" }, { "step_faults", "its faults", "faults" },
  { "pass", "first pass", "ns/page" }, { "pass_faults", "its faults", "faults" },
  { "total", "all three", "ns/page" },
}
h:finish()
