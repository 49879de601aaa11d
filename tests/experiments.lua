-- Every experiment script at a tiny size: it runs clean and its counts are
-- what the kernel must give.
local t = require "tap"
local report = dofile((arg[0]:match("^(.*)/tests/") or ".") .. "/scripts/lib/report.lua")
local q = t.quote

local dir = t.tmpdir()

-- Runs NAME.lua with the knobs; returns its RESULT lines keyed by key=value.
local function run(name, env)
  local out, code = t.ftrun_run(name .. ".lua", env .. " RESULTS=" .. q(dir) .. " README=/dev/null")
  t.is(code, 0, name .. ".lua runs clean")
  local f = io.open(dir .. "/" .. name .. ".txt")
  local text = f and f:read("a") or ""
  if f then f:close() end
  t.like(text, "CHECKSUMS OK", name .. ".lua: every read-back matched")
  if code ~= 0 then t.diag(out) end
  return report.parse_all(text)
end

local function find(results, key, value)
  for _, r in ipairs(results) do
    if r[key] == value then return r end
  end
  return {}
end

local PAGE = 4096

do
  local r = run("thp", "MIB=64 REPS=1")
  local pages = (64 << 20) // PAGE
  local never, always = find(r, "thp", "never"), find(r, "thp", "always")
  t.is(never.pass1_faults, pages, "thp never: one fault per 4 KiB page")
  t.is(never.huge_bytes, 0, "thp never: no huge pages")
  t.is(never.fresh_fill_faults, pages, "thp never: the fresh fill faults per page")
  local huge = always.huge_bytes or 0
  local expected = huge // (2 << 20) + ((64 << 20) - huge) // PAGE
  t.diag(("thp always: %d bytes in huge pages, %d faults"):format(huge, always.pass1_faults or -1))
  t.ok(always.pass1_faults >= expected and always.pass1_faults <= expected + 4,
    "thp always: the faults follow the pages granted (32 plus a few when all are huge)")
  if huge == 64 << 20 then
    t.ok(always.pass1_faults <= 32 + 4, "thp always on 64 MiB: at most 32 faults plus a few")
  else
    t.ok(true, "thp always: the kernel granted " .. huge .. " bytes of huge pages")
  end
end

do
  local r = run("populate", "MIB=8 REPS=1")
  local pages = (8 << 20) // PAGE
  local demand, pop = find(r, "method", "demand_faulting"), find(r, "method", "MAP_POPULATE")
  t.is(demand.pass_faults, pages, "demand: the first pass takes the faults")
  t.is(pop.map_faults, pages, "MAP_POPULATE: the mmap call takes them")
  t.is(pop.pass_faults, 0, "MAP_POPULATE: the first pass takes none")
  local pw = find(r, "method", "madvise(MADV_POPULATE_WRITE)")
  if pw.refused then
    t.ok(true, "MADV_POPULATE_WRITE refused by this kernel: " .. pw.refused)
  else
    t.is(pw.step_faults, pages, "MADV_POPULATE_WRITE: the madvise call takes them")
  end
  t.is(find(r, "method", "mlock").step_faults, pages, "mlock: the mlock call takes them")
  t.is(find(r, "method", "pre-touch_loop").pass_faults, 0, "pre-touch: the pass after it takes none")
end

do
  local r = run("zeropage", "MIB=8 REPS=1")
  local pages = (8 << 20) // PAGE
  local never = find(r, "thp", "never")
  t.is(never.read_faults, pages, "a read pass faults once per page")
  t.is(never.zero_page_pages, pages, "and leaves every page on the zero page")
  t.is(never.write_after_read_faults, pages, "the write after it faults again per page")
  t.is(never.write_only_faults, pages, "a write-only first touch faults once per page")
end

do
  local r = run("placement", "MIB=8 REPS=1")
  local untouched = find(r, "case", "mapped,_not_touched")
  t.is(untouched.absent, untouched.sampled, "untouched pages are not present")
  local main = find(r, "case", "first_touch_by_the_main_thread")
  t.is(main.node0 + main.node1, main.sampled, "touched pages are all on a node")
  t.is(main.faults, (8 << 20) // PAGE, "the main thread took a fault per page")
  local moved = find(r, "case", "mbind_to_node_" .. (main.node1 > 0 and 1 or 0) .. "_with_MPOL_MF_MOVE")
  t.ok(moved.sampled ~= nil, "the mbind case ran")
end

do
  local r = run("scaling", "MIB=8 REPS=1")
  local pages = (8 << 20) // PAGE
  local all = true
  for _, x in ipairs(r) do
    if x.faults ~= pages then all = false end
  end
  t.ok(#r >= 2 and all, "every thread count and shape took one fault per page in total")
end

do
  local r = run("recycle", "MIB=8 REPS=1")
  local pages = (8 << 20) // PAGE
  t.is(find(r, "release", "nothing_released_(a_plain_second_pass)").second_faults, 0, "no release: no faults")
  t.is(find(r, "release", "munmap,_then_a_fresh_mmap").second_faults, pages, "munmap: faults again per page")
  t.is(find(r, "release", "madvise(MADV_DONTNEED)").second_faults, pages, "MADV_DONTNEED: faults again per page")
  local free = find(r, "release", "madvise(MADV_FREE)").second_faults
  t.ok(free and free >= 0 and free <= pages, "MADV_FREE: at most a fault per page (none without memory pressure)")
end

do
  local r = run("coldness", "MIB=8 REPS=1 WAITS=0,0.1")
  local pages = (8 << 20) // PAGE
  t.is(find(r, "case", "first_repetition_of_a_fresh_process").faults, pages, "fresh process: a fault per page")
  t.is(find(r, "case", "released,_waited_0.100_s").faults or find(r, "case", "released,_waited_0.1_s").faults,
    pages, "after a wait: a fault per page")
  local _, code = t.ftrun_run("coldness.lua", "WAITS=soon RESULTS=" .. q(dir))
  t.is(code, 2, "a bad WAITS exits 2")
end

do -- a new experiment needs no rebuild: a script written here runs as is
  local path = dir .. "/mine.lua"
  local f = assert(io.open(path, "w"))
  f:write([[
local ft = require "ft"
local measure = require "measure"
local b <close> = ft.mmap(4 << 20)
local ns, faults = measure.pass(b, "touch", 1)
-- a first call may grow the Lua stack (a few faults more under ASan)
print(faults >= b.pages and faults <= b.pages + 16 and "ok" or "wrong: " .. faults)
]])
  f:close()
  local out, code = t.ftrun_run(q(path))
  t.is(code, 0, "a script outside the tree runs")
  t.like(out, "ok", "and reaches scripts/lib/ and ft")
end

os.execute("rm -rf " .. q(dir))
t.done()
