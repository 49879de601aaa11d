-- ft.touch_timed_walk and b:frames: the walk's order page by page (forward,
-- backward, strided), every page stored into once, the samples in walk
-- order, the shift's bytes, stride 0 (page 0 only), a span (pages 0 to
-- k - 1 again and again), and bad arguments as Lua errors, never a crash.
local t = require "tap"
local q = t.quote
local ft = require "ft"

local PAGES = 64
local b = assert(ft.mmap(PAGES * ft.page_size()))
local s, ix = ft.samples(PAGES), ft.samples(PAGES)

local walkorder = require "walkorder"
local function expected(stride, backward) return walkorder(PAGES, stride, backward) end

local value = 0
for _, w in ipairs { { 1, false }, { 1, true }, { 7, false }, { 7, true }, { 16, false }, { PAGES, true } } do
  local stride, backward = w[1], w[2]
  value = value + 1
  local ns, start, scale, chunks, stop = ft.touch_timed_walk(b, value, s,
    { stride = stride, backward = backward, shift = value % 2 == 0 and 4 or 0, index = ix })
  local name = ("stride %d%s"):format(stride, backward and ", backward" or "")
  local want, got = expected(stride, backward), {}
  for j = 1, PAGES do got[j] = ix[j] end
  t.is(table.concat(got, ","), table.concat(want, ","), name .. ": index gives the page of each store, in order")
  t.is(b:sum_bytes(), value * PAGES, name .. ": every page stored into once, with the value")
  local positive = true
  for j = 1, PAGES do positive = positive and s[j] > 0 end
  t.ok(positive, name .. ": every sample written (above 0 ns)")
  t.ok(ns > 0 and math.type(start) == "integer" and stop >= start and scale > 0, name .. ": the timing")
  -- one piece per residue that has pages (no cut at 64 MiB here)
  local firsts, j = {}, 0
  for r = 0, math.min(stride, PAGES) - 1 do
    firsts[#firsts + 1] = j
    j = j + (PAGES - r + stride - 1) // stride
  end
  if backward then -- the pieces reversed: their lengths from the last residue down
    firsts, j = {}, 0
    for r = math.min(stride, PAGES) - 1, 0, -1 do
      firsts[#firsts + 1] = j
      j = j + (PAGES - r + stride - 1) // stride
    end
  end
  local gotf = {}
  for k, c in ipairs(chunks) do gotf[k] = c.first end
  t.is(table.concat(gotf, ","), table.concat(firsts, ","), name .. ": a chunk per residue, first = its j")
end

do -- without index or options: forward, stride 1
  local ns = ft.touch_timed_walk(b, 9, s)
  t.ok(ns > 0, "no options: a forward walk")
  t.is(b:sum_bytes(), 9 * PAGES, "which stores into every page")
end

do -- stride 0: every store into page 0, the same loop with no other page in it
  local m = assert(ft.mmap(PAGES * ft.page_size()))
  m:touch(1)
  for _, backward in ipairs { false, true } do
    local name = backward and "stride 0, backward" or "stride 0"
    local v = backward and 3 or 2
    for j = 1, PAGES do ix[j] = -1 end
    local ns, _, _, chunks = ft.touch_timed_walk(m, v, s, { stride = 0, backward = backward, index = ix })
    t.ok(ns > 0, name .. ": a timed walk")
    t.is(m:peek(0), v, name .. ": page 0 holds the value")
    t.is(m:peek(ft.page_size()), 1, name .. ": page 1 does not (it keeps pass 1's)")
    t.is(m:sum_bytes(), v + (PAGES - 1), name .. ": no other page stored into")
    local zeros, samples = true, 0
    for j = 1, PAGES do
      zeros = zeros and ix[j] == 0
      if s[j] > 0 then samples = samples + 1 end
    end
    t.ok(zeros, name .. ": its order is page 0 at every step")
    t.is(#s, PAGES, name .. ": one sample per page of the buffer")
    t.is(samples, PAGES, name .. ": every sample written")
    t.is(#chunks, 1, name .. ": one piece (no cut at 64 MiB here)")
  end
  m:unmap()
end

do -- pages = k: the order over pages 0 to k - 1 again and again, PAGES stores in all, only they written
  local m = assert(ft.mmap(PAGES * ft.page_size()))
  m:touch(1)
  local K = 5 -- PAGES is no multiple of it: the last run is cut short
  for _, w in ipairs { { 1, false }, { 1, true }, { 2, false }, { 2, true }, { 0, false } } do
    local stride, backward = w[1], w[2]
    local name = ("pages %d, stride %d%s"):format(K, stride, backward and ", backward" or "")
    for j = 1, PAGES do ix[j], s[j] = -1, 0 end
    local ns, _, _, chunks = ft.touch_timed_walk(m, 2, s, { pages = K, stride = stride, backward = backward,
      index = ix })
    local got = {}
    for j = 1, PAGES do got[j] = ix[j] end
    t.is(table.concat(got, ","), table.concat(walkorder(PAGES, stride, backward, K), ","),
      name .. ": index gives the page of each store, the span's order repeated")
    t.ok(ns > 0, name .. ": a timed walk")
    local samples = 0
    for j = 1, PAGES do if s[j] > 0 then samples = samples + 1 end end
    t.is(#s, PAGES, name .. ": one sample per page of the buffer")
    t.is(samples, PAGES, name .. ": every sample written")
    local runs = (PAGES + K - 1) // K
    t.ok(#chunks >= runs and chunks[1].first == 0, name .. ": a piece at least per run of the span", #chunks)
  end
  t.is(m:sum_bytes(), 2 * K + (PAGES - K), "pages 5: only pages 0 to 4 stored into")
  t.is(m:peek((K - 1) * ft.page_size()), 2, "page 4 holds the value")
  t.is(m:peek(K * ft.page_size()), 1, "page 5 does not (it keeps pass 1's)")
  do -- the whole buffer as the span is the walk without it
    for j = 1, PAGES do ix[j] = -1 end
    local _, _, _, chunks = ft.touch_timed_walk(m, 3, s, { pages = PAGES, stride = 7, index = ix })
    local got = {}
    for j = 1, PAGES do got[j] = ix[j] end
    t.is(table.concat(got, ","), table.concat(walkorder(PAGES, 7, false), ","), "pages = all: the plain walk")
    t.is(#chunks, 7, "one piece per residue")
    t.is(m:sum_bytes(), 3 * PAGES, "every page stored into")
  end
  t.errors(function() ft.touch_timed_walk(m, 1, s, { pages = 0 }) end,
    "option pages = 0: expected a number of pages from 1 to 64 (the buffer's)", "a span of 0 pages")
  t.errors(function() ft.touch_timed_walk(m, 1, s, { pages = PAGES + 1 }) end, "option pages = 65: expected",
    "a span past the buffer")
  t.errors(function() ft.touch_timed_walk(m, 1, s, { pages = -3 }) end, "option pages = -3", "a negative span")
  t.errors(function() ft.touch_timed_walk(m, 1, s, { pages = 4, stride = 5 }) end,
    "stride = 5: expected a number of pages from 0 (every store into page 0) to 4 (the walk's pages)",
    "a stride past the span")
  t.errors(function() ft.touch_timed_walk(m, 1, s, { pages = 2.5 }) end, "pages must be an integer",
    "a fractional span")
  m:unmap()
end

-- bad arguments: Lua errors naming the value
t.errors(function() ft.touch_timed_walk(b, 1, s, { stride = -1 }) end,
  "stride = -1: expected a number of pages from 0 (every store into page 0) to 64", "a negative stride")
t.errors(function() ft.touch_timed_walk(b, 1, s, { stride = PAGES + 1 }) end, "stride = 65", "a stride past the pages")
t.errors(function() ft.touch_timed_walk(b, 1, s, { shift = 64 }) end, "shift = 64: expected bytes from 0 to 63",
  "shift 64")
t.errors(function() ft.touch_timed_walk(b, 1, s, { shift = -1 }) end, "shift = -1", "a negative shift")
t.errors(function() ft.touch_timed_walk(b, 1, s, { strid = 2 }) end, "unknown ft.touch_timed_walk option 'strid'",
  "a misspelt option")
t.errors(function() ft.touch_timed_walk(b, 1, s, { stride = "two" }) end, "stride must be an integer",
  "a string stride")
t.errors(function() ft.touch_timed_walk(b, 1, ft.samples(3)) end, "samples hold 3 entries, the pass needs 64",
  "short samples")
t.errors(function() ft.touch_timed_walk(b, 1, s, { index = ft.samples(3) }) end, "option index: expected an ft.samples",
  "a short index")
t.errors(function() ft.touch_timed_walk(b, 1, s, { index = s }) end, "option index: the samples array itself",
  "the samples array as its own index is refused (the order would overwrite the times)")
t.errors(function() ft.touch_timed_walk(b, 1, s, { index = {} }) end, "option index: expected an ft.samples",
  "an index that is a table")
t.errors(function() ft.touch_timed_walk(b, 256, s) end, "", "a value past a byte")
t.errors(function() ft.touch_timed_walk(s, 1, s) end, "", "samples in place of a buffer")
t.errors(function() ft.touch_timed_walk(b, 1, s, {}, 5) end, "too many arguments", "a fifth argument")

do -- b:frames: a frame for every present page, -1 for the others
  local m = assert(ft.mmap(8 * ft.page_size()))
  local f = ft.samples(8)
  m:poke(0, 1)
  m:poke(3 * ft.page_size(), 1)
  local present, why, err = m:frames(f)
  if present then
    t.is(present, 2, "frames: two pages present")
    t.ok(f[1] > 0 and f[4] > 0 and f[1] ~= f[4], "each with its own frame")
    t.is(f[2], -1, "a page never touched has none")
  else
    t.is(err, 1, "frames refused only as hidden (EPERM)", why)
    t.like(why, "CAP_SYS_ADMIN", "saying what reading them needs")
  end
  -- refused as nobody (frames hidden): the samples say no frame, not frame 0
  local nobody = t.nobody()
  if nobody then
    local out = t.run(nobody .. " -e " .. q("local b = ft.mmap(4 * ft.page_size()) b:touch(1) local s = ft.samples(4) "
      .. "print(b:frames(s)) print(s[1], s[4])") .. " 2>&1")
    t.like(out, "nil\t/proc/self/pagemap hides the frames", "as nobody, frames are refused as hidden", out)
    t.like(out, "\n-1\t-1\n", "and the samples hold -1, no frame, not the 0 the kernel showed")
  else
    t.skip("as nobody, frames are refused as hidden", "cannot run as nobody here")
    t.skip("and the samples hold -1, no frame, not the 0 the kernel showed", "cannot run as nobody here")
  end
  t.errors(function() m:frames(ft.samples(2)) end, "samples hold 2 entries, the buffer has 8 pages", "short samples")
  t.errors(function() m:frames() end, "", "no samples")
  m:unmap()
  t.errors(function() m:frames(f) end, "", "an unmapped buffer")
end

t.done()
