-- The checks every binding shares (runner/ft_aux.c): option tables,
-- messages that name what was wrong, malloc blocks and whole pages.
local t = require "tap"
local ft = require "ft"

local page = ft.page_size()

do -- option tables: an integer may be written as an integral float
  local b <close> = assert(ft.mmap(4 * page))
  local r = ft.parallel("touch", b, { threads = 2.0 })
  t.is(#r.threads, 2, "ft.parallel threads = 2.0 is 2, as luaL_checkinteger takes it (U1)")
  t.errors(function() ft.parallel("touch", b, { threads = 1.5 }) end,
    "ft.parallel option threads must be an integer, got 1.5", "a fraction is refused with its value")
  t.errors(function() ft.parallel("touch", b, { value = 300 }) end, "value must be a byte, 0 to 255, got 300",
    "a value out of range is shown")
end

do -- a choice that is not a string is named by its type, not its __tostring
  local odd = setmetatable({}, { __tostring = function() return "always" end })
  t.errors(function() ft.mmap(page, { thp = odd }) end,
    'mmap option thp must be "default", "never" or "always", got table', "a table for thp is named a table (U2)")
  t.errors(function() ft.mmap(page, { thp = "alwyas" }) end,
    'mmap option thp = alwyas (expected "default", "never" or "always")', "a misspelled choice is shown")
  t.errors(function() ft.tasks(1, "return function() end", { mode = 1 }) end,
    'ft.tasks option mode must be "threads" or "processes", got number', "a number for mode")
  t.errors(function() ft.profile(print, { [true] = 1 }) end, "unknown ft.profile option 'boolean'",
    "a key that is not a string is named by its type")
end

do -- a method's bad argument names the method
  local c = ft.counters()
  if c then
    t.errors(function() c:read(5) end, "bad argument #1 to 'read' (table expected, got number)",
      "c:read(5) names read (U5)")
    t.errors(function() c.read(c, 5) end, "to 'read'", "called as c.read(c, 5) too")
    c:close()
  else
    t.ok(true, "# SKIP no perf counters here")
  end
end

do -- mbind on a malloc block covers its whole pages, as madvise does
  local m <close> = assert(ft.malloc(16 * page))
  local ok, msg = m:mbind(0)
  t.is(ok, true, "mbind of a malloc block of 16 pages binds the whole pages inside it (U9)", msg)
  local small <close> = assert(ft.malloc(64))
  t.errors(function() small:mbind(0) end, "mbind: the malloc buffer of 64 bytes", "a block with no whole page says so")
end

do -- percentiles come from a sorted copy (a radix sort): the same ranks as table.sort
  local s, r = ft.samples(50000), {}
  math.randomseed(7)
  for i = 1, #s do
    local v = i % 7 == 0 and -math.random(1, 1 << 40) or math.random(0, 1 << 50)
    s[i], r[i] = v, v
  end
  table.sort(r)
  local same = true
  for _, p in ipairs { 0.001, 1, 10, 50, 90, 99, 100 } do
    same = same and s:percentile(p) == r[math.max(1, math.ceil(p / 100 * #r))]
  end
  t.ok(same, "percentiles of negative and 50-bit values match table.sort's order")
  s[1] = math.mininteger
  t.is(s:percentile(0.001), math.mininteger, "a changed sample is sorted again (mininteger first)")
end

do -- ft.temporary counts its arguments, as every binding does
  t.errors(function() ft.temporary("/tmp/ftrun-none", false, 3) end, "too many arguments: got 3, expected at most 2",
    "ft.temporary refuses a third argument")
  t.ok(pcall(ft.temporary, "/tmp/ftrun-none", false), "and takes a path and a flag")
end

t.done()
