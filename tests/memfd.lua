-- ft.memfd and file-backed mappings: private and shared, their faults, a
-- closed memfd, and every misuse.
local t = require "tap"
local ft = require "ft"

local MIB = 1 << 20

-- The memfds this process holds open (ft.memfd names them "ftrun"):
-- counted by name, so a descriptor a sanitizer opens for itself does not count.
local function open_memfds() return t.open_fds("memfd:ftrun %(deleted%)") end

do -- the object
  local m <close> = ft.memfd(4 * MIB)
  t.is(m.bytes, 4 * MIB, "bytes field")
  t.is(math.type(m.fd), "integer", "fd is an integer")
  t.ok(m.fd >= 0, "fd is open")
  t.is(m.closed, false, "not closed")
  t.is(m.view, false, "not a view")
  t.like(tostring(m), "ft.memfd (4194304 bytes, fd ", "tostring")
  t.errors(function() return m.nope end, "ft.memfd has no field or method 'nope'", "unknown field")
end

do -- size and arguments
  t.errors(function() ft.memfd(0) end, "size must be a positive number of bytes, got 0", "size 0")
  t.errors(function() ft.memfd(-1) end, "got -1", "negative size")
  t.errors(function() ft.memfd(1.5) end, "number has no integer representation", "size 1.5")
  t.errors(function() ft.memfd(4096, 1) end, "too many arguments", "extra argument")
  local m = ft.memfd(1 << 40)
  t.is(m.bytes, 1 << 40, "a file is sparse: 1 TiB costs no memory until touched")
  m:close()
end

do -- a private mapping: one fault per page, the file unchanged
  local m <close> = ft.memfd(8 * MIB)
  local b <close> = ft.mmap(8 * MIB, { memfd = m, thp = "never" })
  t.is(b.kind, "mmap", "kind")
  t.is(b.backing, "memfd", "backing memfd")
  t.is(b.shared, false, "private by default")
  t.like(tostring(b), "mmap private memfd", "tostring names it")
  local f0 = ft.faults()
  b:touch(3)
  t.is(ft.faults() - f0, b.pages, "private memfd: first write takes one fault per page")
  t.is(b:sum_bytes(), 3 * b.pages, "and reads back what it wrote")
  local other <close> = ft.mmap(8 * MIB, { memfd = m, shared = true })
  t.is(other:sum_bytes(), 0, "a private write leaves the file as it was")
end

do -- shared: the pages are the file's, seen by every mapping of it
  local m <close> = ft.memfd(8 * MIB)
  local a <close> = ft.mmap(8 * MIB, { memfd = m, shared = true, thp = "never" })
  local b <close> = ft.mmap(8 * MIB, { memfd = m, shared = true, thp = "never" })
  t.is(a.shared, true, "shared field")
  local f0 = ft.faults()
  a:touch(5)
  local f1 = ft.faults()
  t.is(f1 - f0, a.pages, "shared memfd: first write takes one fault per page")
  local sum = b:sum_bytes()
  local f2 = ft.faults()
  t.is(sum, 5 * b.pages, "another shared mapping reads what the first wrote")
  t.ok(f2 - f1 <= b.pages, "its read faults map pages already in the page cache",
    ("%d faults for %d pages"):format(f2 - f1, b.pages))
  t.diag(("a read of %d page-cache pages took %d faults (fault-around maps several per fault)"):format(b.pages, f2 - f1))
  local p <close> = ft.mmap(8 * MIB, { memfd = m })
  t.is(p:sum_bytes(), 5 * p.pages, "a private mapping reads the file's pages")
  p:touch(6)
  t.is(a:sum_bytes(), 5 * a.pages, "its writes are its own copies")
  local n = a.bytes // 8
  a:fill(7)
  t.is(b:sum_words(), (n // 2) * (n - 1) * 7, "fill through one shared mapping, the closed form read through the other")
end

do -- an anonymous shared mapping
  local b <close> = ft.mmap(4 * MIB, { shared = true, thp = "never" })
  t.is(b.backing, "anonymous", "shared anonymous: backing")
  t.is(b.shared, true, "shared anonymous: shared")
  local f0 = ft.faults()
  b:touch(1)
  t.is(ft.faults() - f0, b.pages, "shared anonymous: one fault per page")
end

do -- closing: a closed memfd in use is an error; mappings outlive it
  local m = ft.memfd(4 * MIB)
  local b <close> = ft.mmap(4 * MIB, { memfd = m, shared = true })
  b:touch(2)
  t.is(m:close(), true, "close returns true")
  t.is(m.closed, true, "closed field")
  t.is(m.fd, -1, "no descriptor once closed")
  t.like(tostring(m), "closed", "tostring says closed")
  t.errors(function() m:close() end, "memfd is closed", "a second close")
  t.errors(function() ft.mmap(4096, { memfd = m }) end, "memfd is closed", "mapping a closed memfd")
  t.is(b:sum_bytes(), 2 * b.pages, "a mapping outlives the close of its memfd")
  b:touch(4)
  t.is(b:sum_bytes(), 4 * b.pages, "and stays writable")
end

do -- __close and __gc release the descriptor
  collectgarbage(); collectgarbage()
  local n0 = open_memfds()
  local kept
  do
    local m <close> = ft.memfd(MIB)
    kept = m
    t.is(open_memfds(), n0 + 1, "a memfd holds one descriptor")
  end
  t.is(kept.closed, true, "<close> closes it")
  t.is(open_memfds(), n0, "its descriptor is gone")
  for _ = 1, 10 do ft.memfd(MIB) end
  collectgarbage(); collectgarbage()
  t.is(open_memfds(), n0, "the collector closes forgotten memfds")
end

do -- mapping options
  local m <close> = ft.memfd(MIB)
  t.errors(function() ft.mmap(2 * MIB, { memfd = m }) end, "a page beyond its end would be SIGBUS", "mapping past the file's end")
  t.errors(function() ft.mmap(MIB, { memfd = 3 }) end, "mmap option memfd must be an ft.memfd, got number", "memfd not a memfd")
  t.errors(function() ft.mmap(MIB, { shared = 1 }) end, "mmap option shared must be a boolean, got number", "shared not a boolean")
  t.errors(function() ft.mmap(MIB, { sharde = true }) end, "unknown mmap option 'sharde'", "a misspelled option")
  local b <close> = ft.mmap(MIB // 2, { memfd = m, populate = true })
  local f0 = ft.faults()
  b:touch(1)
  t.ok(ft.faults() - f0 <= b.pages, "populate on a memfd mapping is accepted")
  t.is(b:unmap() >= 0, true, "unmap of a memfd mapping")
  t.errors(function() b:touch(1) end, "buffer is unmapped", "an unmapped memfd mapping is released")
end

do -- page-cache faults beside anonymous ones (16 MiB each, one pass)
  local function first_touch(opts)
    local best = math.huge
    for _ = 1, 3 do
      local m <close> = ft.memfd(16 * MIB)
      if opts.memfd then opts.memfd = m end
      local b <close> = ft.mmap(16 * MIB, opts)
      best = math.min(best, b:touch(1) / b.pages)
    end
    return best
  end
  local anon = first_touch { thp = "never" }
  local priv = first_touch { thp = "never", memfd = true }
  local shared = first_touch { thp = "never", memfd = true, shared = true }
  t.diag(("first write, ns/page (best of 3): anonymous %.0f, memfd private %.0f, memfd shared %.0f"):format(anon, priv, shared))
  t.ok(anon > 0 and priv > 0 and shared > 0, "every kind of first touch is measured")
end

t.done()
