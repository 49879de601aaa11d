-- ft.mmap / ft.malloc buffers: fault counts, checksums, and every misuse.
local t = require "tap"
-- What THP gives depends on machine-wide settings another suite may change:
-- the settings lock for the whole file (tests/lib/sysfs.lua).
assert(require("sysfs").hold_lock())
local ft = require "ft"

local MIB = 1 << 20
local page = ft.page_size()

do -- first touch of a 64 MiB mapping: one fault per page, then none
  local b <close> = ft.mmap(64 * MIB)
  t.is(b.pages, 64 * MIB // page, "pages = bytes / page size")
  t.is(b.page_size, page, "page_size field")
  t.is(b.kind, "mmap", "kind field")
  t.is(math.type(b.addr), "integer", "addr is an integer")
  t.ok(b.map_ns > 0, "map_ns is measured")
  local f0 = ft.faults()
  local ns = b:touch(1)
  local f1 = ft.faults()
  t.is(f1 - f0, b.pages, "pass 1 takes one fault per page")
  t.is(math.type(ns), "integer", "touch returns integer ns")
  b:touch(2)
  t.is(ft.faults() - f1, 0, "pass 2 takes no fault")
  t.is(b:sum_bytes(), 2 * b.pages, "sum_bytes reads the last value back")
  b:poke(5 * page, 3)
  t.is(b:sum_bytes(), 2 * b.pages + 1, "one wrong byte changes the sum")
  t.is(b:peek(5 * page), 3, "peek reads what poke wrote")
end

do -- fill: p[i] = i*k, compared with k*n(n-1)/2 mod 2^64
  local b <close> = ft.mmap(8 * MIB)
  local n = b.bytes // 8
  for _, k in ipairs { 1, 7, 0x9E3779B97F4A7C15 } do
    b:fill(k)
    local expect = (n // 2) * (n - 1) * k -- n is even; Lua integers wrap
    t.is(b:sum_words(), expect, ("fill sum matches closed form, k=%d"):format(k))
  end
  b:poke(8, 0xff)
  t.ok(b:sum_words() ~= (n // 2) * (n - 1) * 0x9E3779B97F4A7C15, "a wrong byte breaks the fill sum")
end

do -- populate moves the faults into the mmap call
  local f0 = ft.faults()
  local b <close> = ft.mmap(16 * MIB, { populate = true })
  local f1 = ft.faults()
  b:touch(1)
  t.is(ft.faults() - f1, 0, "populate: first touch takes no fault")
  t.ok(f1 - f0 >= b.pages, "populate: the mmap call took a fault per page",
    ("%d faults for %d pages"):format(f1 - f0, b.pages))
end

do -- THP never: exactly one fault per 4 KiB page, no huge pages
  local b <close> = ft.mmap(16 * MIB, { thp = "never" })
  local f0 = ft.faults()
  b:touch(1)
  t.is(ft.faults() - f0, b.pages, "thp=never: one fault per page")
  t.is(b:thp_bytes(), 0, "thp=never: no AnonHugePages")
end

do -- THP always: what the kernel grants is read back, not assumed
  local b <close> = ft.mmap(64 * MIB, { thp = "always" })
  local f0 = ft.faults()
  b:touch(1)
  local faults, huge = ft.faults() - f0, b:thp_bytes()
  t.diag(("thp=always: %d faults, %d bytes in huge pages"):format(faults, huge))
  local small_pages = (b.bytes - huge) // page
  local huge_pages = huge // (2 * MIB)
  t.ok(faults >= huge_pages + small_pages and faults <= huge_pages + small_pages + 2,
    "thp=always: faults follow the page sizes obtained")
end

do -- two adjacent thp="always" mappings merge into one VMA in smaps; each
  -- buffer still reports only its own huge pages
  local a <close> = ft.mmap(64 * MIB, { thp = "always" })
  local b <close> = ft.mmap(64 * MIB, { thp = "always" })
  t.diag(("adjacent mappings: %d bytes apart"):format(math.abs(a.addr - b.addr)))
  a:touch(1)
  b:touch(1)
  local ha, hb = a:thp_bytes(), b:thp_bytes()
  t.ok(ha and ha <= 64 * MIB, "first of two adjacent buffers: at most its own 64 MiB", tostring(ha))
  t.ok(hb and hb <= 64 * MIB, "second of two adjacent buffers: at most its own 64 MiB", tostring(hb))
  if ha == 0 and hb == 0 then
    t.diag("the kernel gave no huge pages: the exact 64 MiB check is skipped")
  else
    t.is(ha, 64 * MIB, "the kernel gave huge pages: the first buffer reports exactly 64 MiB")
    t.is(hb, 64 * MIB, "the kernel gave huge pages: the second buffer reports exactly 64 MiB")
  end
end

do -- malloc: the same object, released with free
  local b = ft.malloc(64 * MIB)
  t.is(b.kind, "malloc", "malloc kind")
  local f0 = ft.faults()
  b:touch(9)
  local faults = ft.faults() - f0
  -- glibc serves this size with its own mmap and writes its header into the
  -- first page (ASan's allocator into the first two)
  t.ok(faults >= b.pages - 2 and faults <= b.pages, "malloc block: a fault per page the allocator had not written",
    ("%d faults for %d pages"):format(faults, b.pages))
  t.is(b:sum_bytes(), 9 * b.pages, "malloc sum")
  t.errors(function() b:unmap() end, "a malloc buffer is released with free()", "unmap on malloc")
  t.is(math.type(b:free()), "integer", "free returns ns")
  t.errors(function() b:touch(1) end, "buffer is freed", "use after free")
  t.errors(function() b:free() end, "buffer is freed", "double free")
end

do -- misuse of a mapping
  local b = ft.mmap(MIB)
  t.errors(function() b:free() end, "a mmap buffer is released with unmap()", "free on mmap")
  t.errors(function() b:touch(256) end, "value must be a byte", "touch value 256")
  t.errors(function() b:touch(1.5) end, "number has no integer representation", "touch value 1.5")
  t.errors(function() b:touch("x") end, "number expected, got string", "touch value string")
  -- touch takes a byte and an optional spin (PLANT_NS's kernel): a third argument is one too many
  t.errors(function() b:touch(1, 2, 3) end, "too many arguments: got 3, expected 2", "touch extra argument, self not counted")
  t.errors(function() b:touch(1, -5) end, "0 to 1000000 ns", "touch's spin below zero")
  t.errors(function() b:sum_bytes(1) end, "got 1, expected 0", "sum_bytes takes no argument")
  t.errors(function() b:madvise("normal", 1) end, "got 2, expected 1", "madvise takes one argument")
  t.errors(function() b:peek(MIB) end, "outside the buffer", "peek out of range")
  t.errors(function() b:madvise("dontneed\0x") end, "embedded NUL", "advice with an embedded NUL")
  t.errors(function() b:madvise("hugepages") end, "invalid option 'hugepages'", "unknown advice")
  t.errors(function() b:madvise("hugepages") end, '(expected "normal", "random", ', "its refusal lists the advice taken")
  t.errors(function() b:madvise("hugepages") end, '"hugepage", "nohugepage", ', "the one meant among them")
  t.errors(function() b:touch_timed(1, ft.samples(10)) end,
    "samples hold 10 entries, the pass needs 256", "samples too small")
  t.errors(function() b:touch_timed(1, {}) end, "ft.samples expected", "samples of the wrong type")
  t.errors(function() return b.nonsense end, "no field or method 'nonsense'", "unknown field")
  t.errors(function() b.touch(42) end, "ft.buffer expected, got number", "method on a non-buffer")
  t.is(math.type(b:madvise("dontneed")), "integer", "madvise returns the call's ns")
  t.is(math.type(b:unmap()), "integer", "unmap returns ns")
  t.is(b.released, true, "released field")
  t.errors(function() b:touch(1) end, "buffer is unmapped", "use after unmap")
  t.errors(function() b:sum_bytes() end, "buffer is unmapped", "sum after unmap")
  t.errors(function() b:unmap() end, "buffer is unmapped", "double unmap")
  t.like(tostring(b), "released", "tostring of a released buffer")
end

do -- bad sizes and options
  t.errors(function() ft.mmap(0) end, "size must be a positive number of bytes, got 0", "size 0")
  t.errors(function() ft.mmap(-4096) end, "got -4096", "negative size")
  t.errors(function() ft.mmap(1.5) end, "number has no integer representation", "non-integer size")
  t.errors(function() ft.mmap("big") end, "number expected, got string", "string size")
  local v, msg, errno = ft.mmap(1 << 62)
  t.is(v, nil, "a refused mmap returns nil")
  t.like(msg, "Cannot allocate memory", "size beyond the address space: the message names errno's text")
  t.is(errno, 12, "and the errno (ENOMEM)")
  v, msg, errno = ft.malloc(1 << 62)
  t.is(v, nil, "a refused malloc returns nil")
  t.like(msg, "malloc of 4611686018427387904 bytes failed", "malloc too large: message")
  t.is(errno, 12, "malloc too large: ENOMEM")
  t.errors(function() ft.malloc(0) end, "got 0", "malloc size 0")
  t.errors(function() ft.mmap(MIB, { thp = "alwyas" }) end, "mmap option thp = alwyas", "misspelled thp value")
  t.errors(function() ft.mmap(MIB, { thp = "always\0x" }) end, "mmap option thp = always", "thp value with an embedded NUL")
  t.errors(function() ft.mmap(MIB, { tph = "always" }) end, "unknown mmap option 'tph'", "misspelled option name")
  t.errors(function() ft.mmap(MIB, { populate = "yes" }) end, "populate must be a boolean", "populate type")
  t.errors(function() ft.mmap(MIB, 5) end, "table expected", "options not a table")
end

do -- madvise on malloc memory reaches only the block's own whole pages
  local v repeat v = ft.malloc(100) until v.addr % page == 0
  local n = ft.malloc(100)
  n:poke(0, 7)
  t.errors(function() v:madvise("dontneed") end, "holds no whole page of its own",
    "madvise on a block without a whole page raises")
  t.is(n:peek(0), 7, "the neighbouring block keeps its byte")
  local b <close> = ft.malloc(3 * MIB + 5)
  b:touch(1)
  t.is(math.type(b:madvise("dontneed")), "integer", "madvise over the whole pages inside a malloc block")
  t.ok(b:peek(0) == 1 or b.addr % page == 0, "the block's first, shared page was left alone")
  v:free() n:free()
end

do -- the collector and <close> release what the script dropped: this
  -- process's own RssAnon, not the system-wide AnonPages others change
  local function rss_anon_kb()
    for line in io.lines("/proc/self/status") do
      local kb = line:match("^RssAnon:%s+(%d+) kB")
      if kb then return math.tointeger(kb) end
    end
  end
  collectgarbage()
  local before = rss_anon_kb()
  for _ = 1, 4 do
    local b = ft.mmap(64 * MIB)
    b:touch(1)
  end
  collectgarbage()
  collectgarbage()
  local after = rss_anon_kb()
  t.ok(after - before < 64 * 1024, "__gc unmapped the dropped buffers",
    ("RssAnon grew by %d kB"):format(after - before))
end

t.done()
