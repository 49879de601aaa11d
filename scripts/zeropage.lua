-- zeropage.lua: read before write. A read of every page first maps the
-- shared zero page (the huge zero page under THP); the write pass after it
-- faults again to get a page of its own. Against a write-only first touch.
local experiment = require "experiment"
local measure = require "measure"
local stats = require "stats"

local exp = experiment.start("zeropage", "read before write: the zero page", { MIB = 512, REPS = 5 })
local fmt = experiment.fmt

local rows = {}
for _, thp in ipairs { "never", "always" } do
  local runs = exp:repeat_("THP=" .. thp, function()
    local b <close> = measure.map(exp.bytes, { thp = thp })
    local read_ns, read_faults = measure.pass(b, "read_touch")
    local zero = assert(b:nodes(64)).zero_page * 64
    local write_ns, write_faults = measure.pass(b, "touch", 3)
    measure.check_bytes(b, 3, "write after read")
    measure.release(b)
    local w <close> = measure.map(exp.bytes, { thp = thp })
    local only_ns, only_faults = measure.pass(w, "touch", 4)
    measure.check_bytes(w, 4, "write only")
    measure.release(w)
    return { read = read_ns, read_faults = read_faults, zero = zero, write = write_ns,
      write_faults = write_faults, only = only_ns, only_faults = only_faults }
  end)
  local col, pp = exp:columns(runs)
  local function f(k) return stats.median(col(k)) end
  exp:keep(thp, runs)
  exp:result { { "thp", thp }, { "read_ns_per_page", pp("read") }, { "read_faults", f("read_faults") },
    { "zero_page_pages", f("zero") }, { "write_after_read_ns_per_page", pp("write") },
    { "write_after_read_faults", f("write_faults") }, { "write_only_ns_per_page", pp("only") },
    { "write_only_faults", f("only_faults") } }
  rows[#rows + 1] = { thp, fmt(pp("read")) .. " / " .. fmt(f("read_faults")), fmt(f("zero")),
    fmt(pp("write")) .. " / " .. fmt(f("write_faults")),
    fmt((stats.min(col("read")) + stats.min(col("write"))) / exp.pages),
    fmt(pp("only")) .. " / " .. fmt(f("only_faults")) }
end

exp:table({ "THP", "read pass: ns/page (min) / faults", "pages on the zero page after it (move_pages, sampled)",
  "write pass after the read: ns/page / faults", "read + write ns/page", "write-only first touch: ns/page / faults" }, rows)
exp:finish()
