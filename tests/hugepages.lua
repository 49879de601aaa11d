-- Folio sizes (multi-size THP), hugetlb pools, ft.mmap{hugetlb=}, and the
-- restore of every sysfs change: normally, on an error, on os.exit, on
-- SIGINT, SIGTERM and SIGHUP. Sizes are 8-32 MiB; every change is undone
-- within the case that made it.
local t = require "tap"
local sysfs = require "sysfs"
local ft = require "ft"

local MiB = 1 << 20
local THP, HUGETLB = sysfs.THP, sysfs.HUGETLB
local root = t.run("id -u") == "0\n"
local function skip(name, why) t.ok(true, name .. " # SKIP " .. why) end

-- The settings as the files say; the lock held for the whole file, so that no other suite or
-- run changes them under its checks (the ftrun runs it starts share it).
local setting, snapshot = sysfs.setting, sysfs.snapshot
assert(sysfs.hold_lock())

local sizes = ft.folio_sizes()
local pmd_kb = tonumber(t.read(THP .. "/hpage_pmd_size") or "0") // 1024

do -- what the kernel offers, as read
  t.ok(type(sizes) == "table" and #sizes > 0, "folio_sizes lists the offered sizes")
  local ascending, fields, pmd = true, true, 0
  for i, f in ipairs(sizes) do
    if i > 1 and f.kb <= sizes[i - 1].kb then ascending = false end
    for _, k in ipairs { "kb", "bytes", "anon_fault_alloc", "anon_fault_fallback" } do
      if math.type(f[k]) ~= "integer" then fields = false end
    end
    if f.bytes ~= f.kb * 1024 or f.enabled ~= setting(("%s/hugepages-%dkB/enabled"):format(THP, f.kb)) then
      fields = false
    end
    local top = setting(THP .. "/enabled")
    if f.effective ~= (f.enabled == "inherit" and top or f.enabled) then fields = false end
    if f.pmd then pmd = f.kb end
  end
  t.ok(ascending, "folio sizes ascend")
  t.ok(fields, "every size: kb, bytes, enabled (as the file says), effective, counters as integers")
  t.is(pmd, pmd_kb, "the PMD size is flagged pmd (hpage_pmd_size)")
  t.diag("folio sizes: " .. table.concat((function()
    local s = {}
    for _, f in ipairs(sizes) do s[#s + 1] = ("%dkB=%s"):format(f.kb, f.enabled) end
    return s
  end)(), " "))
  local one = ft.folio(sizes[1].kb)
  t.is(one.kb, sizes[1].kb, "ft.folio(kb) is one entry")
  local ok, msg, errno = ft.folio(1 << 23)
  t.is(ok, nil, "a size the kernel lacks is nil")
  t.like(msg, THP .. "/hugepages-8388608kB/enabled: No such file or directory", "the message names the file and why")
  t.is(errno, 2, "errno ENOENT")
  ok, msg = ft.folio(8)
  t.like(msg, "hugepages-8kB/enabled", "8 kB (order 1, shmem only) is not offered for anonymous memory")
  local h = ft.hugetlb_sizes()
  t.ok(#h >= 1 and h[1].kb == 2048, "hugetlb_sizes lists 2 MiB")
  local p = ft.hugetlb_pages(2048)
  t.is(p.nr, tonumber(t.read(HUGETLB .. "/hugepages-2048kB/nr_hugepages")), "hugetlb_pages.nr is nr_hugepages")
  for _, k in ipairs { "free", "resv", "surplus", "overcommit" } do
    t.is(math.type(p[k]), "integer", "hugetlb_pages." .. k)
  end
  ok, msg, errno = ft.hugetlb_pages(4096)
  t.like(msg, HUGETLB .. "/hugepages-4096kB/nr_hugepages: No such file or directory", "no 4 MiB pool: nil, the file, why")
  t.is(errno, 2, "and ENOENT")
  t.is(#ft.sysfs_changes(), 0, "reading changes nothing")
end

do -- misuse is an error
  t.errors(function() ft.set_folio(12, "always") end, "power of two", "kb not a power of two")
  t.errors(function() ft.set_folio(4, "always") end, "above the base page", "kb of the base page")
  t.errors(function() ft.set_folio(16.5, "always") end, "number has no integer representation", "kb not an integer")
  t.errors(function() ft.set_folio(16, "alwyas") end, "invalid option 'alwyas'", "a misspelled setting")
  t.errors(function() ft.set_folio(16, "always\0") end, "embedded NUL", "a setting with a NUL")
  t.errors(function() ft.set_folio(16) end, "string expected", "a missing setting")
  t.errors(function() ft.set_folio(16, "always", 1) end, "too many arguments", "an extra argument")
  t.errors(function() ft.folio_sizes(1) end, "too many arguments", "folio_sizes takes none")
  t.errors(function() ft.folio("x") end, "number expected", "folio of a string")
  t.errors(function() ft.hugetlb_pages(2048, 1) end, "too many arguments", "hugetlb_pages takes one")
  t.errors(function() ft.set_hugetlb_pages(2048, -1) end, "expected 0 to", "a negative page count")
  t.errors(function() ft.set_hugetlb_pages(2048, 1 << 40) end, "what the machine's memory holds", "more pages than memory")
  t.errors(function() ft.set_hugetlb_pages(2048) end, "number expected", "a missing page count")
  t.errors(function() ft.sysfs_changes(1) end, "too many arguments", "sysfs_changes takes none")
  t.errors(function() ft.sysfs_restore(1) end, "too many arguments", "sysfs_restore takes none")
  t.errors(function() ft.mmap(4 * MiB, { hugetlb = "4M" }) end, 'expected "2M" or "1G"', "hugetlb size not offered")
  t.errors(function() ft.mmap(3 * MiB, { hugetlb = "2M" }) end, "needs a multiple of 2097152 bytes, got 3145728",
    "hugetlb bytes not a multiple of the size")
  t.errors(function() ft.mmap(4 * MiB, { hugetlb = "2M", thp = "always" }) end, "exclude each other",
    "hugetlb with thp advice")
  t.is(#ft.sysfs_changes(), 0, "misuse changes nothing")
end

-- Each offered size alone on a MADV_HUGEPAGE mapping, every other size
-- "never": one fault per folio, and the size's anon_fault_alloc rises by as
-- many. The counter is system-wide: under "always" any process faulting in
-- the window adds to it, so there it must rise by at least as many; under
-- "madvise" only MADV_HUGEPAGE mappings compete, and the equality gets
-- three tries.
local function one_size(f, bytes, value)
  for _, g in ipairs(sizes) do assert(ft.set_folio(g.kb, g.kb == f.kb and value or "never")) end
  local b <close> = assert(ft.mmap(bytes, { thp = "always" }))
  local a0 = ft.folio(f.kb).anon_fault_alloc
  local f0 = ft.faults()
  b:touch(1)
  local f1 = ft.faults()
  b:touch(2)
  local f2 = ft.faults()
  local a1 = ft.folio(f.kb).anon_fault_alloc
  local thp = b:thp_bytes()
  assert(ft.sysfs_restore())
  return { faults = f1 - f0, again = f2 - f1, alloc = a1 - a0, aligned = b.addr % f.bytes == 0, thp = thp }
end

if root then
  local before = snapshot()
  local bytes = 32 * MiB
  for _, f in ipairs(sizes) do
    local want = bytes // f.bytes
    local r = one_size(f, bytes, "always")
    t.diag(("%5d kB always: %d faults for %d MiB (want %d), anon_fault_alloc +%d, pass 2 %d faults, thp_bytes %d"):format(
      f.kb, r.faults, bytes // MiB, want, r.alloc, r.again, r.thp))
    t.ok(r.aligned, f.kb .. " kB: the 32 MiB mapping starts on a folio boundary")
    t.is(r.faults, want, f.kb .. " kB always: pass 1 takes bytes / size faults")
    t.ok(r.alloc >= want, f.kb .. " kB always: anon_fault_alloc rose by at least as many",
      ("rose by %d, want %d or more"):format(r.alloc, want))
    t.is(r.again, 0, f.kb .. " kB always: pass 2 takes none")
    -- PAGEMAP_SCAN's PAGE_IS_HUGE is a PMD mapping: smaller folios are PTE-mapped
    t.is(r.thp, f.pmd and bytes or 0, f.kb .. " kB: thp_bytes counts PMD-mapped memory only")
    local tries = 0
    repeat
      tries = tries + 1
      r = one_size(f, bytes, "madvise")
    until r.alloc == want or tries == 3
    t.is(r.faults, want, f.kb .. " kB madvise: pass 1 takes bytes / size faults")
    t.is(r.alloc, want, f.kb .. " kB madvise: anon_fault_alloc rose by exactly as many")
    if tries > 1 then t.diag(("%d kB madvise: %d tries for an undisturbed counter"):format(f.kb, tries)) end
  end
  sysfs.is_as_before(before, "every folio setting is back after the sizes")

  -- "madvise" only for MADV_HUGEPAGE mappings: without advice, base pages
  local f = sizes[1]
  for _, g in ipairs(sizes) do assert(ft.set_folio(g.kb, g.kb == f.kb and "madvise" or "never")) end
  local plain <close> = assert(ft.mmap(8 * MiB))
  local advised <close> = assert(ft.mmap(8 * MiB, { thp = "always" }))
  local f0 = ft.faults()
  plain:touch(1)
  local f1 = ft.faults()
  advised:touch(1)
  local f2 = ft.faults()
  assert(ft.sysfs_restore())
  t.is(f1 - f0, 8 * MiB // ft.page_size(), f.kb .. " kB madvise: a mapping without advice takes base pages")
  t.is(f2 - f1, 8 * MiB // f.bytes, f.kb .. " kB madvise: a MADV_HUGEPAGE mapping takes folios")

  -- the PMD size's "inherit" follows the top-level enabled file
  local top = setting(THP .. "/enabled")
  for _, g in ipairs(sizes) do assert(ft.set_folio(g.kb, g.pmd and "inherit" or "never")) end
  local inherits <close> = assert(ft.mmap(8 * MiB, { thp = "always" }))
  f0 = ft.faults()
  inherits:touch(1)
  f1 = ft.faults()
  assert(ft.sysfs_restore())
  t.is(f1 - f0, 8 * MiB // (top == "never" and ft.page_size() or pmd_kb * 1024),
    pmd_kb .. " kB inherit, top-level " .. top .. ": a MADV_HUGEPAGE mapping follows the top-level setting")

  local changes = ft.sysfs_changes()
  t.is(#changes, #sizes, "one record per file changed, however often")
  local all = true
  for _, c in ipairs(changes) do
    if not c.restored or c.before ~= setting(c.path) or c.error then all = false end
  end
  t.ok(all, "each record: restored, its before is the file's value now")
  sysfs.is_as_before(before, "the files read as before")

  local was = setting(("%s/hugepages-%dkB/enabled"):format(THP, sizes[1].kb))
  t.is(ft.set_folio(sizes[1].kb, "madvise"), was, "set_folio returns the previous setting")
  t.is(ft.set_folio(sizes[1].kb, "never"), "madvise", "and the next call returns the one just set")
  t.is(ft.sysfs_restore(), true, "sysfs_restore -> true")
  sysfs.is_as_before(before, "a change after a restore is restored too")
else
  skip("folio faults per size", "not root")
end

if root then -- hugetlb 2 MiB: reserve, map, touch, release
  local before = snapshot()
  local pool = ft.hugetlb_pages(2048)
  local prev, now = ft.set_hugetlb_pages(2048, pool.nr + 4)
  t.is(prev, pool.nr, "set_hugetlb_pages returns the previous count")
  t.is(now, pool.nr + 4, "and the count the kernel granted")
  do
    local b <close> = assert(ft.mmap(8 * MiB, { hugetlb = "2M" }))
    t.is(b.hugetlb_size, 2 * MiB, "b.hugetlb_size")
    t.is(b.page_size, ft.page_size(), "b.page_size stays the base page")
    t.is(b.pages, 8 * MiB // ft.page_size(), "b.pages counts base pages")
    t.is(ft.hugetlb_pages(2048).resv, pool.resv + 4, "the mapping reserves its 4 pages")
    local f0 = ft.faults()
    b:touch(1)
    local f1 = ft.faults()
    b:touch(2)
    local f2 = ft.faults()
    t.is(f1 - f0, 4, "touch: one fault per 2 MiB page")
    t.is(f2 - f1, 0, "pass 2: none")
    t.is(b:sum_bytes(), 2 * b.pages, "every base page was stored to")
    t.is(ft.hugetlb_pages(2048).free, pool.free, "the 4 pages are in use")
    t.is(b:thp_bytes(), 8 * MiB, "thp_bytes counts hugetlb pages (PAGEMAP_SCAN's PAGE_IS_HUGE)")
    local words = 8 * MiB // 8
    -- the bracket holds the fill alone: a sanitizer build's allocator takes
    -- faults of its own for the checks above
    local f3 = ft.faults()
    b:fill(3)
    local f4 = ft.faults()
    t.is(b:sum_words(), 3 * (words * (words - 1) // 2), "fill covers every word")
    t.is(f4 - f3, 0, "fill after the touch takes no fault")
    local n = b:nodes(512)
    t.is(n.sampled, 4, "nodes: one sample per huge page at step 512")
    local unmap_ns = b:unmap()
    t.ok(math.type(unmap_ns) == "integer" and unmap_ns > 0, "unmap of a hugetlb buffer returns its ns", unmap_ns)
    t.like(tostring(b), "released", "and the buffer is released")
    t.is(ft.hugetlb_pages(2048).free, pool.free + 4, "its 4 huge pages are free again")
    local p = assert(ft.mmap(4 * MiB, { hugetlb = "2M", populate = true }))
    f0 = ft.faults()
    p:touch(1)
    t.is(ft.faults() - f0, 0, "populate: the faults happened inside mmap")
    p:unmap()
  end
  t.ok(ft.sysfs_restore(), "restored")
  t.is(ft.hugetlb_pages(2048).nr, pool.nr, "nr_hugepages back")
  if pool.free == 0 then
    local ok, msg, errno = ft.mmap(2 * MiB, { hugetlb = "2M" })
    t.is(ok, nil, "no page reserved: mmap is nil")
    t.like(msg, "Cannot allocate memory", "with the reason")
    t.is(errno, 12, "ENOMEM")
  end
  sysfs.is_as_before(before, "the hugetlb files read as before")

  -- 1 GiB: a reservation of one page, mapped; touched only on request
  -- (FTRUN_TEST_1G_TOUCH=1): zeroing 1 GiB takes seconds in this guest.
  local giant = ft.hugetlb_pages(1 << 20)
  if not giant then
    skip("1 GiB hugetlb", "the kernel has no 1 GiB pool")
  else
    local _, got = ft.set_hugetlb_pages(1 << 20, giant.nr + 1)
    if got ~= giant.nr + 1 then
      skip("1 GiB hugetlb", "the kernel granted no 1 GiB page (nr " .. tostring(got) .. ")")
    else
      t.is(ft.hugetlb_pages(1 << 20).nr, giant.nr + 1, "a 1 GiB page reserved, as the pool reads back")
      local b <close> = assert(ft.mmap(1 << 30, { hugetlb = "1G" }))
      t.is(ft.hugetlb_pages(1 << 20).resv, giant.resv + 1, "a 1 GiB mapping reserves it")
      if os.getenv("FTRUN_TEST_1G_TOUCH") == "1" then
        local f0 = ft.faults()
        local ns = b:touch(1)
        t.is(ft.faults() - f0, 1, "1 GiB: one fault")
        t.diag(("1 GiB first touch: %.3f s"):format(ns / 1e9))
      end
      b:unmap()
    end
    t.ok(ft.sysfs_restore(), "1 GiB pool restored")
    t.is(ft.hugetlb_pages(1 << 20).nr, giant.nr, "1 GiB nr_hugepages back")
  end
  sysfs.is_as_before(before, "every hugetlb file reads as before")
else
  skip("hugetlb pools", "not root")
end

-- A child run that changes every folio setting and the 2 MiB pool, holds
-- two touched huge pages, then ends one way or another.
local dir = t.tmpdir()
os.execute("chmod 755 " .. t.quote(dir))
local child = dir .. "/child.lua"
t.write(child, [[
local ft = require "ft"
local mode, ready = ...
for _, f in ipairs(assert(ft.folio_sizes())) do
  -- madvise or never: either touches only mappings that ask
  assert(ft.set_folio(f.kb, f.enabled == "madvise" and "never" or "madvise"))
end
local pool = assert(ft.hugetlb_pages(2048))
local _, got = assert(ft.set_hugetlb_pages(2048, pool.nr + 2))
local b = got >= pool.nr + 2 and assert(ft.mmap(4 << 20, { hugetlb = "2M" }))
if b then b:touch(1) end
for _, c in ipairs(ft.sysfs_changes()) do -- stderr: stdout may be a pipe
  io.stderr:write(("change %s %s -> %s\n"):format(c.path, c.before, c.after))
end
if mode == "error" then error("injected mid-run") end
if mode == "exit" then os.exit(3) end
if ready then io.open(ready, "w"):close() end
if mode == "signal" then ft.sleep(60) end
if mode == "catch" then -- a script that swallows the interrupt: the second one kills
  while true do pcall(ft.sleep, 60) end
end
if mode == "pipe" then -- a reader that goes away: SIGPIPE
  while true do print("line") end
end
print("end of script")
]])

if root then
  local before = snapshot()
  local function run(mode, signal)
    local ready = dir .. "/ready-" .. mode .. (signal or "")
    local cmd = t.quote(t.ftrun) .. " " .. t.quote(child) .. " " .. mode .. " " .. t.quote(ready)
    if mode == "pipe" then
      cmd = "{ " .. cmd .. "; echo \"rc=$?\" >&2; } | head -n 1 >/dev/null"
    elseif signal then
      local kill = "kill -" .. signal .. " $pid; "
      -- a signal ignored on entry (nohup, a background job of sh) stays
      -- ignored by ftrun, as by any program: start the child with defaults
      -- the wait bounded by time, not by a count of polls that load stretches
      cmd = "env --default-signal=INT,TERM,HUP " .. cmd .. " & pid=$!; end=$(( $(date +%s) + 300 )); until [ -e "
        .. t.quote(ready) .. " ] || [ \"$(date +%s)\" -ge \"$end\" ]; do sleep 0.05; done; "
        .. kill .. (mode == "catch" and "sleep 0.3; " .. kill or "") .. "wait $pid; echo \"rc=$?\""
    else
      cmd = cmd .. "; echo \"rc=$?\""
    end
    local out = t.run(cmd)
    return out, tonumber(out:match("rc=(%d+)"))
  end
  local cases = {
    { "normal", nil, 0, "end of script" },
    { "error", nil, 1, "injected mid-run" },
    { "exit", nil, 3, "change " },
    { "signal", "INT", 130, "interrupted" },
    { "signal", "TERM", 128 + 15, "change " },
    { "signal", "HUP", 128 + 1, "change " },
    { "catch", "INT", 128 + 2, "change " },
    { "pipe", nil, 128 + 13, "change " },
  }
  for _, c in ipairs(cases) do
    local mode, signal, code, says = c[1], c[2], c[3], c[4]
    local name = mode == "catch" and "a second SIGINT" or mode == "pipe" and "SIGPIPE"
      or signal and ("SIG" .. signal .. " mid-run") or mode
    local out, rc = run(mode, signal)
    local changed = 0
    for _ in out:gmatch("change [^\n]+") do changed = changed + 1 end
    t.is(changed, #sizes + 1, name .. ": the child changed every folio setting and the pool", out)
    t.like(out, says, name .. ": the run ended as planned")
    t.is(rc, code, name .. ": exit status " .. code)
    sysfs.is_as_before(before, name .. ": every setting reads as before")
    t.ok(not out:find("could not restore", 1, true), name .. ": no alarm about huge pages freed at exit (D13)", out)
  end
else
  skip("restore in a child run", "not root")
end

-- Without root (setpriv to nobody), a change is refused with its reason.
local nobody = dir .. "/nobody.lua"
t.write(nobody, [[
local ft = require "ft"
local kb = ft.folio_sizes()[1].kb
print("sizes", #ft.folio_sizes())
print("set_folio", ft.set_folio(kb, "madvise"))
print("set_hugetlb_pages", ft.set_hugetlb_pages(2048, 1))
print("changes", #ft.sysfs_changes())
]])
local setpriv = t.run("command -v setpriv") ~= ""
if root and setpriv then
  local before = snapshot()
  local out, code = t.run(t.nobody() .. " " .. t.quote(nobody))
  t.is(code, 0, "as nobody the run goes on", out)
  t.like(out, "sizes\t" .. #sizes, "as nobody: folio_sizes reads")
  t.like(out, ("set_folio\tnil\tcannot set %s/hugepages-%dkB/enabled to madvise: Permission denied\t13")
    :format(THP, sizes[1].kb), "as nobody: set_folio is nil, the file, EACCES")
  t.like(out, "set_hugetlb_pages\tnil\tcannot set " .. HUGETLB
    .. "/hugepages-2048kB/nr_hugepages to 1: Permission denied\t13", "as nobody: set_hugetlb_pages too")
  t.like(out, "changes\t0", "as nobody: nothing recorded")
  sysfs.is_as_before(before, "as nobody: nothing changed")
elseif not root then
  local ok, msg, errno = ft.set_folio(sizes[1].kb, "madvise")
  t.is(ok, nil, "not root: set_folio is nil")
  t.like(msg, "Permission denied", "with the reason")
  t.is(errno, 13, "EACCES")
else
  skip("as nobody", "no setpriv (util-linux)")
end

os.execute("rm -rf " .. t.quote(dir))
t.done()
