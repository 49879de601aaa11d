-- floor.lua: what a first touch would cost with no bookkeeping and no
-- host. In one run, interleaved (the cases shuffled in every repetition):
-- zeroing 4 KiB with the instructions the kernel uses (rep stosb; clzero
-- and non-temporal stores where the CPU has them) into cache-cold and
-- cache-warm memory; minor faults that reach the fault handler and set one
-- PTE with nothing to allocate or zero; and a system call, the kernel's
-- entry and exit alone. The floor is zeroing (rep stosb, cold: the
-- kernel's clear_page on an ERMS CPU, into memory a first touch streams
-- through) plus the cheapest such fault (the trap and its one page-table
-- update: no cheaper way to update a PTE exists from user space, since
-- mprotect or madvise of one page add a system call, a VMA walk and a TLB
-- flush to it). Every measurement is one entry of ENTRIES: its test, its
-- control (what shows it measured what it says) and its sentence.
local ft = require "ft"
local harness = require "harness"

-- A CPU cache's size in bytes from sysfs (index: 0 is L1d, the last the
-- last level), or nil where the kernel does not say.
local function cache_bytes(level_max)
  local best
  for i = 0, 9 do
    local dir = "/sys/devices/system/cpu/cpu0/cache/index" .. i .. "/"
    local f = io.open(dir .. "size")
    if not f then break end
    local size = f:read("l")
    f:close()
    local lf, tf = io.open(dir .. "level"), io.open(dir .. "type")
    local level, kind = lf and tonumber(lf:read("l")), tf and tf:read("l")
    if lf then lf:close() end
    if tf then tf:close() end
    local n, unit = (size or ""):match("^(%d+)([KMG]?)$")
    local bytes = n and tonumber(n) * ({ [""] = 1, K = 1024, M = 1 << 20, G = 1 << 30 })[unit]
    if bytes and level and kind ~= "Instruction" and level <= level_max and (not best or level > best[1]) then
      best = { level, bytes }
    end
  end
  return best and best[2], best and best[1]
end
local LLC, LLC_LEVEL = cache_bytes(9)
local L1D = cache_bytes(1)
local function kib(bytes) return bytes and ("%d KiB"):format(bytes // 1024) or "unknown" end

local h = harness.start({ script = "floor", shuffle = true, mib = 256, reps = 15,
  quick = { MIB = 128, REPS = 3 },
  about = "the floor under a first touch: zeroing 4 KiB, a trap into the fault handler, one PTE update",
  -- the floor's zeroing is into cold memory: a region within a few times the last-level cache is
  -- partly in it, and its figure no floor
  check = function(cfg)
    if LLC and cfg.MIB << 20 < 4 * LLC then
      return ("MIB=%d: the cold zeroing region must be at least 4 times the last-level cache (L%d, %s): "
        .. "expected MIB=%d or more"):format(cfg.MIB, LLC_LEVEL, kib(LLC), (4 * LLC + (1 << 20) - 1) >> 20)
    end
  end,
}, { ... })

local BLOCK = 4096 -- the floor is stated per 4 KiB, the anchors' unit
local BLOCKS = h.bytes // BLOCK
local ENOTSUP = 95

-- The tests: each measures one repetition into r (r.ns: ns per
-- operation) or returns false and why this machine cannot.
local function zeroing(r, p)
  local ns, why, errno = ft.zero_blocks(p.method, p.where, BLOCKS)
  if not ns and errno == ENOTSUP then return false, "not available: " .. why end
  r:work(assert(ns, why))
  r.ns = ns / BLOCKS
  r.gbps = BLOCK / r.ns
end

local function faulting(r, p)
  if p.kind == "zero_page" and h.machine.zero_page == false then -- the read fault would allocate and zero a page
    return false, ("this kernel withholds the zero page (%s)"):format(h.machine.zero_page_why or "?")
  end
  local res = assert(ft.minor_faults(p.kind, h.pages))
  r:work(res.ns)
  r.ns, r.faults, r.resident = res.ns / res.pages, res.faults, res.resident
  r.ns_per_fault = res.ns / math.max(1, res.faults)
end

local function entering(r)
  local f0 = ft.faults()
  local ns = ft.syscalls(h.pages)
  r.faults = ft.faults() - f0
  r:work(ns)
  r.ns = ns / h.pages
end

-- The whole the floor is set against, in the same repetitions: a first
-- touch of fresh anonymous 4 KiB pages, timed and read back as every
-- script's pass 1 is.
local function first_touch(r)
  local b <close> = r:map(nil, { thp = "never" })
  local ns, faults = r:pass(nil, b, "touch", 1)
  r:check_bytes(b, 1, "first touch")
  r.ns, r.faults = ns / h.pages, faults
end

-- The controls: whether the test measured what it says, and the evidence.
local function cold_control()
  return LLC ~= nil and h.bytes >= 4 * LLC, ("the region, %d MiB, is at least 4 times the last-level cache "
    .. "(L%s, %s), so each block's lines were evicted since it was last written"):format(h.cfg.MIB,
    LLC_LEVEL or "?", kib(LLC))
end
local function warm_control()
  return L1D ~= nil and BLOCK <= L1D, ("one 4 KiB block, zeroed before the timed loop, fits the L1 data "
    .. "cache (%s)"):format(kib(L1D))
end
-- Non-temporal stores (movnti) write around the cache and clzero's are weakly ordered as theirs
-- are: a block they zeroed before the loop is not shown to be in any cache.
local function no_warm_control()
  return false, "none: this instruction's stores may write around the cache, so the block zeroed before the loop "
    .. "is not shown to be in it; the figure is its rate on one 4 KiB block over and over"
end
local function one_fault_per_page(r)
  return r.faults == h.pages, ("getrusage counted %d minor faults for %d pages: one per page, so every access "
    .. "reached the fault handler"):format(r.faults, h.pages)
end
-- The zero page's: one fault per page, and the process's resident pages did not grow with
-- them (the shared zero page is not counted; a page allocated is).
local function zero_page_control(r)
  local faulted, why = one_fault_per_page(r)
  local kept = r.resident ~= nil and r.resident * 100 < h.pages
  return faulted and kept, ("%s; the process's resident pages grew by %s over the loop: %s"):format(why,
    r.resident or "an unknown count (/proc/self/statm unread)", kept and "no page was allocated"
    or "not shown that no page was allocated")
end
local function fault_around(r)
  return r.faults > 0 and r.faults < h.pages, ("getrusage counted %d minor faults for %d pages: fault-around "
    .. "maps several pages per fault"):format(r.faults, h.pages)
end
local function whole_control(r)
  return r.faults == h.pages, ("getrusage counted %d faults for %d pages of 4 KiB (MADV_NOHUGEPAGE): one fault "
    .. "per page, each allocating and zeroing it"):format(r.faults, h.pages)
end
local function no_fault(r)
  return r.faults == 0, ("getrusage counted %d faults over %d system calls: the handler was not entered")
    :format(r.faults, h.pages)
end

-- The entries. params.part says what an entry stands for in the floor
-- (lib/reports/floor.lua reads it): zero, fault (floor = true: a candidate
-- for its trap and PTE update), entry, whole (the first touch); sentence
-- gets the median [lo, hi].
local ENTRIES = {}
local METHOD_TEXT = { rep_stosb = "rep stosb (clear_page_erms)", clzero = "clzero (one cache line per instruction)",
  movnti = "movnti (non-temporal 8-byte stores)" }
for _, method in ipairs { "rep_stosb", "clzero", "movnti" } do
  for _, where in ipairs { "cold", "warm" } do
    ENTRIES[#ENTRIES + 1] = { case = ("zero 4 KiB, %s, cache-%s"):format(method, where),
      params = { part = "zero", method = method, where = where, floor = method == "rep_stosb" and where == "cold" },
      test = zeroing, control = where == "cold" and cold_control or method == "rep_stosb" and warm_control
        or no_warm_control,
      sentence = ("Zeroing 4 KiB with %s into cache-%s memory: %%s ns."):format(METHOD_TEXT[method], where) }
  end
end
ENTRIES[#ENTRIES + 1] = { case = "minor fault, zero page (read)", params = { part = "fault", kind = "zero_page",
  floor = true }, test = faulting, control = zero_page_control,
  sentence = "A read fault that maps the shared zero page (one read-only PTE, no allocation, no zeroing): %s ns." }
ENTRIES[#ENTRIES + 1] = { case = "minor fault, memfd page (write)", params = { part = "fault", kind = "shmem_write",
  floor = true }, test = faulting, control = one_fault_per_page,
  sentence = "A write fault that maps a memfd page already in the page cache (one PTE, the page marked dirty): %s ns." }
ENTRIES[#ENTRIES + 1] = { case = "minor fault, memfd page (read)", params = { part = "fault", kind = "shmem_read" },
  test = faulting, control = fault_around,
  sentence = "A read of a memfd page already in the page cache, whose fault maps its neighbours too: %s ns per page." }
ENTRIES[#ENTRIES + 1] = { case = "system call (getppid)", params = { part = "entry" }, test = entering,
  control = no_fault, sentence = "A getppid round trip, the kernel's entry and exit with no fault handler: %s ns." }
ENTRIES[#ENTRIES + 1] = { case = "first touch, anonymous 4 KiB", params = { part = "whole" }, test = first_touch,
  control = whole_control, sentence = "The first touch itself, in the same repetitions: %s ns per page." }

for _, e in ipairs(ENTRIES) do
  h:case(e.case, function(r)
    local ok, why = e.test(r, e.params)
    if ok == false then return false, why end
    local held, evidence = e.control(r)
    r.control = held and 1 or 0
    e.evidence = evidence
    e.held = (e.held or 0) + (held and 1 or 0)
  end, { params = e.params })
end

h:columns {
  { "ns", "ns per operation (4 KiB zeroed, page faulted, call made)", "ns" },
  { "gbps", "zeroing rate", "GB/s", function(r) return r.gbps end, optional = true },
  { "faults", "faults counted", "faults" },
  { "ns_per_fault", "ns per counted fault", "ns" },
  { "control", "control held (1) or not (0)", "count" },
}
h:run()

local units = require "units"
for _, e in ipairs(ENTRIES) do
  local row = h:row(e.case, "ns")
  if row then
    h:note(e.sentence:format(("%s [%s, %s]"):format(units.cell(row.median, "ns"), units.cell(row.lo, "ns"),
      units.cell(row.hi, "ns"))) .. (" Control (held in %d of %d repetitions): %s."):format(e.held or 0, row.n,
      e.evidence))
  end
end
h:note(("Machine: %s, %d CPUs, page size %d. Each case's figure is one timed loop over %d operations divided by "
  .. "their count (a clock read costs tens of ns against the loop's ms)."):format(h.machine.cpu or "?",
  h.machine.cpus or 0, h.page, BLOCKS))
h:finish()
