-- make bench: does the scripting layer disturb what it measures? Six blocks,
-- each figure as min / median / max over rounds, measured side by side in
-- one run. Usage: ./ftrun bench/bench.lua PATH_TO_REF
local ft = require "ft"
local knobs = require "knobs"
local runfiles = require "runfiles"
local stats = require "stats"
local summary = require "summary"
local units = require "units"

local REF = arg[1] or knobs.fail("bench.lua", "usage: ftrun bench/bench.lua PATH_TO_REF [PUBLISH=1]")
local plan = runfiles.plan("bench.lua", "bench", knobs.read("bench.lua", runfiles.spec(), { select(2, ...) }))
local FTRUN = arg[-1]:sub(1, 1) == "/" and arg[-1] or os.getenv("PWD") .. "/" .. arg[-1]
local MIB, REPS, PAIRS = 256, 5, 10

local out = {}
local function say(fmt, ...)
  local line = fmt:format(...)
  out[#out + 1] = line
  print(line)
  io.stdout:flush()
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function run(cmd)
  local p = assert(io.popen(cmd))
  local text = p:read("a")
  local ok, _, code = p:close()
  if not ok then error(("command failed (exit %s): %s"):format(tostring(code), cmd), 0) end
  return text
end

local function mmm(xs, fmt)
  fmt = fmt or "%.3f"
  return (fmt .. " / " .. fmt .. " / " .. fmt):format(stats.min(xs), stats.median(xs), stats.max(xs))
end

local tmp = os.tmpname()
os.remove(tmp)
run("mkdir -p " .. quote(tmp))

local machine = ft.machine()
say("ftrun make bench, %s UTC, on %s (%d CPUs), kernel %s, hypervisor %s",
  os.date("!%Y-%m-%d %H:%M"), machine.cpu, machine.cpus, machine.kernel, machine.hypervisor)
say("every figure: min / median / max over rounds; block 1's ratios also as median [95 %% CI]")

-- 1. Lua-driven against C-driven ----------------------------------------
say("")
say("1. cycle A driven from Lua (CYCLES=A ./ftrun cycles.lua) against bench/ref.c, %d MiB, %d reps each,", MIB, REPS)
say("   %d pairs run alternately, ftrun first in odd pairs and C first in even ones (A B B A ...);", PAIRS)
say("   per pair the row's figure as cycles.lua shows it (min of ns/page and us; fill: median GB/s),")
say("   as the time ratio ftrun / C (fill: C GB/s / ftrun GB/s), so 1.00 is no difference")
local rows = { "mmap", "pass1", "pass2", "pass2r", "fill", "munmap" }
local ratios, lua_fig, c_fig, units_of = {}, {}, {}, {}
for _, r in ipairs(rows) do ratios[r], lua_fig[r], c_fig[r] = {}, {}, {} end
local pages = (MIB << 20) // ft.page_size()
for pair = 1, PAIRS do
  io.stderr:write(("bench: pair %d/%d\n"):format(pair, PAIRS))
  local lua_rows, reps = {}, {}
  local function lua_side()
    run(("CYCLES=A MIB=%d REPS=%d RESULTS=%s README=/dev/null %s cycles.lua 2>/dev/null"):format(
      MIB, REPS, quote(tmp), quote(FTRUN)))
    local f = assert(io.open(tmp .. "/cycles-A-raw.txt"))
    local ix = summary.index(f:read("a"))
    f:close()
    for _, r in ipairs(rows) do lua_rows[r] = ix.row("A", r) end
  end
  local function c_side()
    for rep, name, ns in run(("%s cycle %d %d"):format(quote(REF), MIB, REPS)):gmatch("REP (%d+) (%S+) (%d+)") do
      if tonumber(rep) > 0 then
        reps[name] = reps[name] or {}
        table.insert(reps[name], tonumber(ns))
      end
    end
  end
  if pair % 2 == 1 then lua_side(); c_side() else c_side(); lua_side() end
  for _, r in ipairs(rows) do -- the C side's figure in the row's unit and statistic
    local row = lua_rows[r]
    local shown = units.shown(row.unit)
    local l = row[shown]
    local c = stats[shown](stats.map(reps[r], function(ns) return units.convert(row.unit, ns, MIB << 20, pages) end))
    table.insert(ratios[r], row.unit == "GB/s" and c / l or l / c)
    table.insert(lua_fig[r], l)
    table.insert(c_fig[r], c)
    units_of[r] = row.unit
  end
end
say("   %-8s %-30s %-30s %-26s %s", "row", "ftrun", "C", "ratio ftrun / C", "median [95 % CI] of the ratio")
for _, r in ipairs(rows) do
  local unit = " " .. units_of[r]
  local d = stats.describe(ratios[r])
  say("   %-8s %-30s %-30s %-26s %.3f [%.3f, %.3f], %s", r, mmm(lua_fig[r], "%.2f") .. unit,
    mmm(c_fig[r], "%.2f") .. unit, mmm(ratios[r]), d.median, d.lo, d.hi,
    (d.lo <= 1 and d.hi >= 1) and "1.00 inside: no difference shown" or "1.00 outside: a difference")
end
local d = stats.describe(ratios.pass1)
say("   the interval: ranks %s of the %d sorted pair ratios (coverage %.1f %%)", d.ci_ranks, d.n, 100 * d.ci_coverage)

-- 2. The timed window's floor -------------------------------------------
say("")
say("2. the timed window's floor, 1000 rounds, ns")
local ROUNDS = 1000
local lua_empty, lua_touch, c_window = {}, {}, {}
do
  local b <close> = assert(ft.mmap(ft.page_size()))
  b:touch(0)
  for i = 1, ROUNDS do
    local t0 = ft.now_ns()
    local t1 = ft.now_ns()
    lua_empty[i] = t1 - t0
    t0 = ft.now_ns()
    local w = b:touch(i & 0xff)
    t1 = ft.now_ns()
    lua_touch[i], c_window[i] = t1 - t0, w
  end
end
local c_floor = { empty = {}, touch1 = {} }
for what, ns in run(("%s floor %d"):format(quote(REF), ROUNDS)):gmatch("FLOOR (%S+) (%d+)") do
  table.insert(c_floor[what], tonumber(ns))
end
say("   empty window, Lua  now_ns(); now_ns()        %s", mmm(lua_empty, "%d"))
say("   empty window, C    ft_now_ns(); ft_now_ns()  %s", mmm(c_floor.empty, "%d"))
say("   one-page touch timed from Lua around b:touch %s", mmm(lua_touch, "%d"))
say("   one-page touch, the C window b:touch returns %s", mmm(c_window, "%d"))
say("   one-page touch timed in C (bench/ref.c)      %s", mmm(c_floor.touch1, "%d"))

-- 3. The per-page timer --------------------------------------------------
say("")
say("3. touch_timed against touch on touched pages, %d MiB, 10 rounds, ns per page", MIB)
local clock = ft.clock()
local plain, timed, added, share, share_mean = {}, {}, {}, {}, {}
do
  local b <close> = assert(ft.mmap(MIB << 20))
  local s = ft.samples(b.pages)
  b:touch(1)
  for i = 1, 10 do
    plain[i] = b:touch(2) / b.pages
    timed[i] = b:touch_timed(3, s) / b.pages
    added[i] = timed[i] - plain[i]
    share[i] = 100 * added[i] / s:median()
    share_mean[i] = 100 * added[i] / timed[i]
  end
end
say("   touch                         %s", mmm(plain, "%.2f"))
say("   touch_timed                   %s", mmm(timed, "%.2f"))
say("   added per page by a timestamp %s   (clock tick %d ns, one reading %.1f ns)",
  mmm(added, "%.2f"), clock.timed.tick_ns, clock.read_ns)
say("   its share of the median page  %s %%   (the median sample sits on the clock's tick)", mmm(share, "%.1f"))
say("   its share of the mean page    %s %%", mmm(share_mean, "%.1f"))

-- 4. The fill against the machine's write limit -------------------------
say("")
say("4. fill against memset and non-temporal stores on one touched %d MiB buffer, 10 rounds, GB/s", MIB)
local gbps = { fill = {}, memset = {}, nt_store = {} }
for what, ns, bytes in run(("%s limits %d 10"):format(quote(REF), MIB)):gmatch("LIMIT (%S+) (%d+) (%d+)") do
  table.insert(gbps[what], tonumber(bytes) / tonumber(ns))
end
for _, w in ipairs { "fill", "memset", "nt_store" } do say("   %-10s %s", w, mmm(gbps[w], "%.2f")) end
local function ratio_of(a, b)
  local r = {}
  for i = 1, #a do r[i] = a[i] / b[i] end
  return r
end
say("   fill / memset    %s", mmm(ratio_of(gbps.fill, gbps.memset)))
say("   fill / nt_store  %s", mmm(ratio_of(gbps.fill, gbps.nt_store)))

-- 5. The runner's own share ---------------------------------------------
say("")
say("5. one full default run (./ftrun cycles.lua: 1024 MiB, 15 reps), one round")
io.stderr:write("bench: the full run\n")
local t0 = ft.now_ns()
run(("RESULTS=%s README=/dev/null %s cycles.lua 2>/dev/null"):format(quote(tmp), quote(FTRUN)))
local wall_ms = (ft.now_ns() - t0) / 1e6
local acc
do
  local f = assert(io.open(tmp .. "/raw.txt"))
  acc = summary.index(f:read("a")).value("own_time")
  f:close()
end
say("   wall time of the process                 %.0f ms", wall_ms)
say("   timed windows + map/release + read-backs %.0f ms", acc.work_ms)
say("   the runner's own (Lua, probes, statistics, reports, process start) %.0f ms = %.2f %% of the wall",
  wall_ms - acc.work_ms, 100 * (wall_ms - acc.work_ms) / wall_ms)

-- 6. The clock estimate -------------------------------------------------
say("")
local ghz = {}
for i = 1, 10 do ghz[i] = ft.clock_estimate() end
local _, source = ft.clock_estimate()
say("6. clock estimate over 10 tries: %s GHz, cv %.2f %% (%s)", mmm(ghz), stats.cv(ghz), source)
say("   /proc/cpuinfo cpu MHz (the TSC rate the kernel knows): %.0f; estimate / that: %.3f",
  machine.cpu_mhz, stats.median(ghz) * 1000 / machine.cpu_mhz)
say("   cycles per page in cycles.lua use the estimate (CLOCK_GHZ overrides it)")

run("rm -rf " .. quote(tmp))
local text = table.concat(out, "\n") .. "\n"
runfiles.write(plan, { { "bench.txt", text } }, { bench = "```\n" .. text .. "```" })
