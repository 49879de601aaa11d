-- thp.lua: the same first touch, re-touch and fresh fill with THP never,
-- default and always, and the page size the kernel actually gave.
local ft = require "ft"
local experiment = require "experiment"
local measure = require "measure"
local stats = require "stats"

local exp = experiment.start("thp", "first touch by page size (THP never / default / always)", { MIB = 1024, REPS = 5 })
local fmt, bytes, page = experiment.fmt, exp.bytes, exp.page
local GIB = 1 << 30
local K = 0x9E3779B97F4A7C15

local rows = {}
for _, mode in ipairs { "never", "default", "always" } do
  local runs = exp:repeat_("THP=" .. mode, function()
    local vm0 = ft.vmstat()
    local b <close> = measure.map(bytes, { thp = mode })
    local pass1, faults1 = measure.pass(b, "touch", 1)
    local vm1 = ft.vmstat()
    local huge = assert(b:thp_bytes())
    local pass2, faults2 = measure.pass(b, "touch", 2)
    measure.check_bytes(b, 2, "THP=" .. mode .. " re-touch")
    measure.release(b)
    local f <close> = measure.map(bytes, { thp = mode })
    local fill, fill_faults = measure.pass(f, "fill", K)
    measure.check_words(f, K, "THP=" .. mode .. " fresh fill")
    measure.release(f)
    return { pass1 = pass1, faults1 = faults1, pass2 = pass2, faults2 = faults2, huge = huge,
      fill = fill, fill_faults = fill_faults,
      alloc = vm1.thp_fault_alloc - vm0.thp_fault_alloc, fallback = vm1.thp_fault_fallback - vm0.thp_fault_fallback }
  end)
  local col = exp:columns(runs)
  local p1_min = experiment.per_page(col("pass1"), exp.pages)
  local p2_min = experiment.per_page(col("pass2"), exp.pages)
  local faults = stats.median(col("faults1"))
  local huge = stats.median(col("huge"))
  local gbps = stats.median(stats.map(col("fill"), function(ns) return bytes / ns end))
  local per_fault = stats.min(stats.map(runs, function(r) return r.pass1 / r.faults1 end))
  exp:keep(mode, runs)
  exp:result { { "thp", mode }, { "huge_bytes", huge }, { "huge_pct", 100 * huge / bytes },
    { "pass1_faults", faults }, { "faults_per_gib", faults * GIB // bytes },
    { "pass1_ns_per_4k", p1_min }, { "ns_per_fault", per_fault }, { "retouch_ns_per_4k", p2_min },
    { "retouch_faults", stats.median(col("faults2")) }, { "fresh_fill_gbps", gbps },
    { "fresh_fill_faults", stats.median(col("fill_faults")) },
    { "thp_fault_alloc", stats.median(col("alloc")) }, { "thp_fault_fallback", stats.median(col("fallback")) } }
  rows[#rows + 1] = { mode, ("%s %% (%s bytes)"):format(fmt(100 * huge / bytes), fmt(huge)),
    fmt(stats.median(col("alloc"))) .. " / " .. fmt(stats.median(col("fallback"))),
    fmt(faults * GIB // bytes), fmt(p1_min), fmt(per_fault), fmt(p2_min), fmt(gbps) }
end

exp:table({ "THP", "in huge pages (smaps AnonHugePages)", "thp_fault_alloc / fallback", "pass-1 faults per GiB",
  "pass 1 ns per 4 KiB (min)", "ns per fault (min)", "re-touch ns per 4 KiB (min)", "fresh fill GB/s (median)" }, rows)
exp:finish()
