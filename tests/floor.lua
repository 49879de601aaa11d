-- The floor and the account: ft.zero_blocks, ft.minor_faults and
-- ft.syscalls (their misuse an error, a CPU without the instruction a
-- refusal, the faults counted one per page); floor.lua's floor is the sum
-- of its parts within each repetition; the account's arithmetic gives the
-- planted residue, through account.lua on planted results JSON.
local t = require "tap"
local ft = require "ft"
local json = require "json"
local q = t.quote

do -- misuse of the bindings is an error naming what was wrong
  t.errors(function() ft.zero_blocks("memset", "cold", 1) end, "invalid option 'memset'", "an unknown method")
  t.errors(function() ft.zero_blocks("rep_stosb", "tepid", 1) end, "invalid option 'tepid'", "an unknown state")
  t.errors(function() ft.zero_blocks("rep_stosb", "warm", 0) end,
    "count must be a positive number of 4 KiB blocks, got 0", "count 0")
  t.errors(function() ft.zero_blocks("rep_stosb", "warm", (1 << 24) + 1) end, "at most 16777216", "a count too large")
  t.errors(function() ft.zero_blocks("rep_stosb", "warm", 1.5) end, "number has no integer representation", "count 1.5")
  t.errors(function() ft.zero_blocks("rep_stosb", "warm") end, "number expected, got no value", "no count")
  t.errors(function() ft.zero_blocks("rep_stosb", "warm", 1, 2) end, "too many arguments", "an extra argument")
  t.errors(function() ft.minor_faults("anon", 1) end, "invalid option 'anon'", "an unknown fault kind")
  t.errors(function() ft.minor_faults("zero_page", -3) end, "pages must be a positive number of pages, got -3",
    "negative pages")
  t.errors(function() ft.minor_faults("zero_page") end, "number expected, got no value", "no page count")
  t.errors(function() ft.syscalls(0) end, "count must be a positive number of system calls, got 0", "no calls")
  t.errors(function() ft.syscalls("many") end, "number expected, got string", "a count that is no number")
end

do -- what they measure
  local cpuinfo = t.read("/proc/cpuinfo") or ""
  local x86 = cpuinfo:find("\nflags%s*:") ~= nil and (t.run("uname -m") or ""):find("x86_64") ~= nil
  for _, m in ipairs { "rep_stosb", "clzero", "movnti" } do
    local has = x86 and (m ~= "clzero" or cpuinfo:find("%f[%w]clzero%f[%W]") ~= nil)
    local ns, why, errno = ft.zero_blocks(m, "warm", 16)
    if has then
      t.ok(math.type(ns) == "integer" and ns > 0, m .. ": 16 warm blocks take some ns", why)
      local cold = ft.zero_blocks(m, "cold", 64)
      t.ok(math.type(cold) == "integer" and cold > 0, m .. ": 64 cold blocks too")
    else
      t.is(ns, nil, m .. ": not available on this CPU is a refusal")
      t.is(errno, 95, "with ENOTSUP")
      t.like(why or "", m .. ": not available", "naming the method")
    end
  end
  -- 32768 pages (128 MiB): enough that a sanitizer's own faults on its shadow would show (4096 more)
  for _, kind in ipairs { "zero_page", "shmem_write" } do
    local r = assert(ft.minor_faults(kind, 32768))
    t.is(r.faults, 32768, kind .. ": one fault per page, counted by getrusage")
    t.ok(r.ns > 0 and r.pages == 32768, kind .. ": timed")
  end
  -- the zero page's faults allocate nothing: the resident pages stay; a memfd page mapped is resident
  local zp, sw = assert(ft.minor_faults("zero_page", 32768)), assert(ft.minor_faults("shmem_write", 32768))
  t.ok(math.type(zp.resident) == "integer" and zp.resident * 100 < 32768,
    "zero_page: the resident pages grew by under 1 % of the pages", zp.resident)
  t.ok(math.type(sw.resident) == "integer" and sw.resident >= 32768 * 0.99,
    "shmem_write: by about the pages (so the zero page's count can fail)", sw.resident)
  local r = assert(ft.minor_faults("shmem_read", 64))
  t.ok(r.faults >= 1 and r.faults <= 64, "shmem_read: faults between 1 and one per page (fault-around)", r.faults)
  local free_kib = ft.meminfo().MemFree
  if free_kib < (64 << 20) then -- 2^24 blocks of 4 KiB: 64 GiB
    local ns, why, errno = ft.zero_blocks("rep_stosb", "cold", 1 << 24)
    t.ok(ns == nil and errno == 12, "a cold region beyond the free memory is a refusal (ENOMEM), not an OOM", why)
    local r2, why2, errno2 = ft.minor_faults("shmem_write", 1 << 24)
    t.ok(r2 == nil and errno2 == 12, "so is a memfd beyond it", why2)
  else
    t.skip("a region beyond the free memory", "more than 64 GiB free")
  end
  -- the faults read right around the call: t.ok's own strings may fault the heap in
  -- within 256 MiB of the free memory is refused as well (the zero page's reads: a count that,
  -- were it run, would take page tables only, not the memory it names)
  local near = ((ft.meminfo().MemFree << 10) - (128 << 20)) // 4096
  if near > 0 and near <= 1 << 24 then
    local r3, why3, errno3 = ft.minor_faults("zero_page", near)
    t.ok(r3 == nil and errno3 == 12, "a region within 256 MiB of the free memory is a refusal (ENOMEM)", why3)
  else
    t.skip("a region within 256 MiB of the free memory", "free memory under 128 MiB or over 64 GiB")
  end
  local f0 = ft.faults()
  local ns = ft.syscalls(1000)
  local f1 = ft.faults()
  t.ok(ns > 0, "1000 system calls take some ns")
  t.is(f1 - f0, 0, "and no fault")
end

do -- SIGINT ends a long call within a few hundred operations (the loops poll ft_interrupted), not
  -- when the call would have ended: an estimate of that from a short call, the check skipped
  -- where the whole call is too short to tell the two apart
  local dir = t.tmpdir()
  local calls = {
    { "ft.syscalls(1 << 24)", function() return ft.syscalls(1 << 16) * 256 end },
    { "ft.minor_faults('zero_page', 1 << 22)", function() return ft.minor_faults("zero_page", 1 << 14).ns * 256 end,
      (16 << 20) < ft.meminfo().MemFree },
  }
  for _, c in ipairs(calls) do
    local whole_ns = c[2]()
    if c[3] == false then
      t.skip(c[1] .. ": SIGINT ends it", "less than 16 GiB free")
    elseif whole_ns < 2e9 then
      t.skip(c[1] .. ": SIGINT ends it", ("the whole call takes %.1f s here, too short to tell"):format(whole_ns / 1e9))
    else
      local script = dir .. "/long.lua"
      t.write(script, ("io.stderr:write('started')\n%s\n"):format(c[1]))
      local log = dir .. "/log"
      os.remove(log)
      local t0 = ft.now_ns()
      local out = t.signal_when(("%s %s 2>%s"):format(q(t.ftrun), q(script), q(log)),
        ("grep -q started %s 2>/dev/null"):format(q(log)), "INT")
      local took = ft.now_ns() - t0
      t.is(out, "exit 130\n", c[1] .. ": SIGINT exits 130", t.read(log))
      t.ok(took < whole_ns / 4, c[1] .. ": and the call stops at once, not when it would have ended",
        ("%.2f s from start to exit, the whole call %.1f s"):format(took / 1e9, whole_ns / 1e9))
      t.like(t.read(log) or "", "/long.lua:2", c[1] .. ": naming the call's line")
    end
  end
end

-- The last-level cache's bytes as sysfs gives cpu0's (the largest level that is no
-- instruction cache), or nil.
local function llc_bytes()
  local best, bytes
  for i = 0, 9 do
    local dir = "/sys/devices/system/cpu/cpu0/cache/index" .. i .. "/"
    local size = t.read(dir .. "size")
    if not size then break end
    local level, n, unit = tonumber(t.read(dir .. "level") or ""), size:match("^(%d+)([KMG]?)")
    if level and n and not (t.read(dir .. "type") or ""):find("Instruction") and (not best or level > best) then
      best, bytes = level, tonumber(n) * ({ [""] = 1, K = 1 << 10, M = 1 << 20, G = 1 << 30 })[unit]
    end
  end
  return bytes
end
local LLC = llc_bytes()
-- the smallest region floor.lua takes: 4 times the last-level cache, so that its zeroing is cold
local MIB = LLC and math.max(16, (4 * LLC + (1 << 20) - 1) >> 20) or 16

do -- a region within 4 times the last-level cache is refused: its zeroing would not be cold
  if not LLC then
    t.skip("MIB below 4 times the last-level cache is refused", "sysfs gives no cache sizes")
  else
    local dir = t.tmpdir()
    local out, code = t.ftrun_run(("floor.lua MIB=%d RESULTS=%s"):format(MIB - 1, q(dir .. "/out")))
    t.is(code, 2, ("MIB=%d, below 4 times the last-level cache: exit 2"):format(MIB - 1), out)
    t.like(out, ("MIB=%d: the cold zeroing region must be at least 4 times the last-level cache"):format(MIB - 1),
      "naming the value and what was expected")
    t.is(t.run(("ls -A %s 2>/dev/null"):format(q(dir .. "/out"))), "", "and nothing is written")
  end
end

do -- floor.lua: runs, and its floor is the sum of zeroing and fault within each repetition
  local dir = t.tmpdir()
  local out, code = t.ftrun_run(("floor.lua QUICK=1 MIB=%d REPS=3 RESULTS=%s"):format(MIB, q(dir)))
  t.is(code, 0, "floor.lua QUICK=1 exits 0", out)
  local doc = json.decode(t.read(dir .. "/quick-floor-results.json") or "null") or { reps = {}, values = {} }
  local floor, by = nil, {}
  for _, v in ipairs(doc.values) do if v.value == "floor" then floor = v end end
  for _, c in ipairs(doc.reps) do by[c.case] = c end
  local zero, fault = floor and by[floor.zero_case], floor and by[floor.fault_case]
  if not t.ok(floor and zero and fault, "the floor value names its zeroing and fault cases") then t.done() end
  local sums = {}
  for i = 1, #zero.records do sums[i] = zero.records[i].ns + fault.records[i].ns end
  table.sort(sums)
  t.ok(math.abs(floor.x - sums[2]) < 1e-6 * floor.x, "the floor is the median of the sums within each repetition",
    ("%g against %g"):format(floor.x, sums[2]))
  t.is(zero.params.method, "rep_stosb", "its zeroing is the kernel's rep stosb")
  t.is(fault.params.part, "fault", "its fault is a one-PTE fault case")
  for _, c in ipairs(doc.reps) do
    if not c.unsupported and c.params.part == "fault" and c.params.kind ~= "shmem_read" then
      t.is(c.records[1].control, 1, c.case .. ": its control held (one fault per page)")
    end
  end
  for _, c in ipairs(doc.reps) do
    if not c.unsupported and c.params.part == "zero" then
      local warm_ok = c.params.where == "cold" or c.params.method == "rep_stosb"
      t.is(c.records[1].control, warm_ok and 1 or 0, c.case .. (warm_ok and ": its control held"
        or ": no control (its stores may write around the cache)"))
    end
  end
  local summary = t.read(dir .. "/quick-floor-summary.md") or ""
  t.like(summary, "times the floor (the ratio within each repetition)", "the first touch over the floor is said")
  t.like(summary, "Control (held in", "each entry's control is said")
  local _, bad = t.ftrun_run(("floor.lua MIB=0 RESULTS=%s"):format(q(dir)))
  t.is(bad, 2, "MIB=0 is refused with exit 2")
end

do -- a zeroing or a fault whose control failed in a repetition makes no floor
  local report = require "reports.floor"
  local function case(name, params, controls)
    local records = {}
    for i, held in ipairs(controls) do records[i] = { ns = 100 * i, control = held } end
    return { name = name, params = params, records = records }
  end
  for _, plant in ipairs {
    { { 1, 0, 1 }, { 1, 1, 1 }, "the control of zero did not hold", "a cold zeroing not shown to be cold" },
    { { 1, 1, 1 }, { 1, 1, 0 }, "no fault case ran with its control held", "a fault not shown to reach the handler" },
    { { 1, 1, 1 }, { 1, 1, 1 }, nil, "controls that held" } } do
    local notes, values = {}, {}
    local h = { cases = { case("zero", { part = "zero", floor = true, method = "rep_stosb", where = "cold" }, plant[1]),
      case("fault", { part = "fault", floor = true }, plant[2]) } }
    function h.note(_, text) notes[#notes + 1] = text end
    function h.value(_, name) values[name] = true end
    report.derive(h)
    if plant[3] then
      t.ok(not values.floor, plant[4] .. ": no floor value")
      t.like(table.concat(notes, "\n"), plant[3], "and the note says why")
    else
      t.ok(values.floor, plant[4] .. ": a floor value")
    end
  end
end

-- Planted results: a whole of 2000 ns, a profile with 10 % user samples, bookkeeping stages 54 %
-- of all (60 % of the kernel's), a zero-page fault of 500 ns with 40 % of its samples in them and
-- 20 % in user mode, a 20 ns loop. Parts: bookkeeping 1800 * 0.6 - 500 * 0.4 = 880, outside
-- 200 - 20 - 500 * 0.2 = 80 (the fault's own user share is in the floor already), own 20: 980 + the
-- floor. A floor of 1020 adds up; one of 820 leaves 200 not accounted.
local function planted(dir, floor_ns, over)
  local function r(case, column, v) return { case = case, column = column, median = v, lo = v, hi = v, values = { v, v, v } } end
  t.write(dir .. "/results.json", json.encode { page_size = 4096, date = "2026-12-07T00:00:00Z",
    machine = { hypervisor = "KVMKVMKVM" }, values = { { value = "thp_page", x = 4096 } },
    rows = { r("A", "pass1", 2000), r("A", "pass1_faults", 262144), r("A", "pass2", 20), r("A", "pass2_faults", 0) } })
  local rows = {}
  local stages = { "pass 1, 4 KiB pages", { entry = 16, pte = 40, alloc = 10, zero = 20, memcg = 4, lock = 0, tlb = 0,
    counting = 0, user = 10, ungrouped = 0 } }
  local fault = { "read fault onto the zero page", { entry = 40, pte = 30, alloc = 0, zero = 0, memcg = 0, lock = 10,
    tlb = 0, counting = 0, user = 20, ungrouped = 0 } }
  for _, s in ipairs { stages, fault } do
    for k, v in pairs(s[2]) do rows[#rows + 1] = r(s[1], "st_" .. k, v) end
  end
  t.write(dir .. "/exp-attribution-results.json", json.encode { date = "2026-12-07T00:00:00Z", rows = rows })
  local fc = "minor fault, zero page (read)"
  t.write(dir .. "/floor.json", json.encode { date = "2026-12-07T00:00:00Z", machine = { hypervisor = "KVMKVMKVM" },
    values = { { value = "floor", x = floor_ns, lo = floor_ns, hi = floor_ns, zero_case = "zero", fault_case = fc },
      over and { value = "first_touch_over_floor", x = over, lo = over, hi = over, first_touch = 4000 } or nil },
    reps = { { case = fc, params = { part = "fault", kind = "zero_page" } } }, rows = { r(fc, "ns", 500) } })
end

-- With the floor run's own first touch (4000 ns, twice its floor) the floor is half the whole,
-- 1000 ns, and its fault is scaled as the whole is to that first touch (500 -> 250 ns), so the
-- bookkeeping is 1080 - 100 = 980, the outside part 200 - 20 - 50 = 130, and 130 ns are counted
-- twice: -130 not accounted.
for _, plant in ipairs { { 1020, "0 [0, 0]", "within ±10 %" }, { 820, "200 [200, 200]", "within ±10 %" },
  { 620, "400 [400, 400]", "beyond ±10 %" },
  { 999, "-130 [-130, -130]", "within ±10 %", 2, "980 [980, 980]", "130 [130, 130]" } } do
  local dir = t.tmpdir()
  planted(dir, plant[1], plant[4])
  local out, code = t.ftrun_run(("account.lua %s FLOOR_JSON=%s ACCOUNT_OUT=%s"):format(q(dir), q(dir .. "/floor.json"),
    q(dir)))
  t.is(code, 0, ("account.lua on planted results, floor %d ns, exits 0"):format(plant[1]), out)
  t.like(out, "| **not accounted** | " .. plant[2] .. " |", ("a floor of %d ns leaves %s not accounted"):format(
    plant[1], plant[2]))
  t.like(out, plant[3], "and says whether it is within ±10 % of the whole")
  t.like(out, "| guest kernel bookkeeping | " .. (plant[5] or "880 [880, 880]") .. " |",
    "bookkeeping less the floor's fault's own share")
  t.like(out, "| user mode beyond the loop (host time not told apart) | " .. (plant[6] or "80 [80, 80]") .. " |",
    "the outside part less the loop and the floor's fault's own user share")
  t.like(t.read(dir .. "/account.md") or "", "Published elsewhere, not measured here", "the table, with its references")
  t.ok(t.read(dir .. "/account-waterfall.gp"), "and the waterfall's gnuplot script")
end

do -- the arithmetic's intervals are bounds over the inputs', and its inputs are checked
  local account = require "explain.account"
  local function f(m, lo, hi) return { median = m, lo = lo or m, hi = hi or m } end
  local acc = account.compute { whole = f(2000, 1900, 2100), floor = f(1020), outside_pct = f(10), book_pct = f(60),
    own = f(20), fault = f(500), fault_book_pct = f(40), fault_outside_pct = f(20) }
  t.ok(math.abs(acc.residue.median) < 1e-9, "parts that add up leave nothing", acc.residue.median)
  -- residue = whole * 0.9 * 0.4 - 920 + 200 - 20 + ... : linear in the whole, 0.36 per ns
  t.ok(math.abs(acc.residue.lo + 36) < 1e-9 and math.abs(acc.residue.hi - 36) < 1e-9,
    "the whole's ±100 ns moves the residue by ±36 ns", ("[%g, %g]"):format(acc.residue.lo, acc.residue.hi))
  t.errors(function() account.compute { whole = f(1), floor = f(1), outside_pct = f(1), book_pct = f(1) } end,
    "own must be a figure", "a missing part is an error")
  t.errors(function() account.compute { whole = f(5, 6, 7), floor = f(1), outside_pct = f(1), book_pct = f(1),
    own = f(1) } end, "are not in order", "an interval that does not hold its median")
  t.errors(function() account.compute { whole = f(1), floor = f(1), outside_pct = f(1), book_pct = f(1), own = f(1),
    fault = f(1) } end, "go together", "a fault without its profile")
end

do -- account.lua refuses what it cannot read
  local dir = t.tmpdir()
  local _, code = t.ftrun_run(("account.lua %s"):format(q(dir .. "/none")))
  t.is(code, 2, "a RUN_DIR that is not a directory: exit 2")
  t.write(dir .. "/results.json", "not json")
  local out
  out, code = t.ftrun_run(("account.lua %s FLOOR_JSON=%s"):format(q(dir), q(dir .. "/results.json")))
  t.is(code, 2, "a results.json that is not JSON: exit 2")
  t.like(out, "not a results JSON", "and says so")
end

do -- account.lua on hostile inputs: a clear refusal, exit 2, nothing on stdout and nothing written
  -- (bounded in time and memory: before, a FIFO blocked the open and /dev/zero was read for ever)
  -- (a sanitizer build reserves terabytes for its shadow: no ulimit -v for it, and no /dev/zero)
  local _, bounded_code = t.run(("ulimit -v 4000000; %s -e '' 2>&1"):format(q(t.ftrun)))
  local bound = bounded_code == 0 and "ulimit -v 4000000; " or ""
  local function account_run(dir, args)
    return t.run(("%stimeout 60 %s account.lua %s %s 2>%s"):format(bound, q(t.ftrun), q(dir), args,
      q(dir .. "/stderr")))
  end
  local dir = t.tmpdir()
  planted(dir, 1020)
  t.run("mkfifo " .. q(dir .. "/fifo"))
  for _, bad in ipairs { { "FLOOR_JSON=" .. q(dir .. "/fifo"), "a FIFO" }, { "FLOOR_JSON=/dev/zero", "/dev/zero" },
    { "FLOOR_JSON=" .. q(dir), "a directory" } } do
    if bad[2] == "/dev/zero" and bound == "" then
      t.skip("/dev/zero as FLOOR_JSON", "this ftrun cannot run under ulimit -v (a sanitizer build)")
    else
      local out, code = account_run(dir, bad[1])
      t.is(code, 2, bad[2] .. " as FLOOR_JSON: exit 2", out)
      t.like(t.read(dir .. "/stderr") or "", "not a regular file", "and says it is not a regular file")
    end
  end
  -- wrong types in the planted JSON, each naming the file and the entry
  local results = json.decode(t.read(dir .. "/results.json"))
  local attribution = json.decode(t.read(dir .. "/exp-attribution-results.json"))
  local function rewrite(name, doc, edit)
    local copy = json.decode(json.encode(doc))
    edit(copy)
    t.write(dir .. "/" .. name, json.encode(copy))
  end
  local function find(doc, case, column)
    for _, r in ipairs(doc.rows) do if r.case == case and r.column == column then return r end end
  end
  for _, bad in ipairs {
    { "results.json", results, function(d) find(d, "A", "pass1").median = "fast" end,
      'results.json: case "A", column "pass1": expected numbers', "a median that is a string" },
    { "results.json", results, function(d) find(d, "A", "pass1").lo = 1e9 end, "lo <= median <= hi",
      "an interval that does not hold its median" },
    { "exp-attribution-results.json", attribution, function(d) find(d, "pass 1, 4 KiB pages", "st_user").values =
      { 100, 100, 100 } end, "100 is no share", "a user share of 100 % (no kernel part to divide by)" },
    { "exp-attribution-results.json", attribution, function(d) find(d, "pass 1, 4 KiB pages", "st_pte").values =
      { 1 } end, "its stages hold 3 and 1 repetitions", "stages of different lengths" },
    { "exp-attribution-results.json", attribution, function(d) find(d, "pass 1, 4 KiB pages", "st_pte").values =
      { "a", "b", "c" } end, "per-repetition values must be a list of numbers", "values that are strings" },
  } do
    rewrite(bad[1], bad[2], bad[3])
    local out, code = account_run(dir, "FLOOR_JSON=" .. q(dir .. "/floor.json"))
    t.is(code, 2, bad[5] .. ": exit 2", out)
    t.like(t.read(dir .. "/stderr") or "", bad[4], "naming the entry")
    t.is(out, "", "and no table on stdout")
    rewrite(bad[1], bad[2], function() end)
  end
  -- a directory whose name holds an "=" is still the first argument
  local eq = dir .. "/runs/x=1"
  t.run(("mkdir -p %s && cp %s/*.json %s"):format(q(eq), q(dir), q(eq)))
  local _, eq_code = account_run(eq, "FLOOR_JSON=" .. q(dir .. "/floor.json"))
  t.is(eq_code, 0, "a RUN_DIR holding an '=' is taken as the directory", t.read(eq .. "/stderr"))
  -- an output directory where a file's name is taken by a directory: none of the three written
  local out_dir = dir .. "/out"
  t.run(("mkdir -p %s"):format(q(out_dir .. "/account-waterfall.dat")))
  local out, code = account_run(dir, ("FLOOR_JSON=%s ACCOUNT_OUT=%s"):format(q(dir .. "/floor.json"), q(out_dir)))
  t.is(code, 2, "ACCOUNT_OUT with a name taken by a directory: exit 2", out)
  t.like(t.read(dir .. "/stderr") or "", "nothing written", "and says nothing was written")
  t.is(out, "", "no table on stdout")
  t.is(t.run(("ls -A %s"):format(q(out_dir))), "account-waterfall.dat\n", "and no file in the directory")
end

t.done()
