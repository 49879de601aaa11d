-- The committed -O2 listing of the measured kernels: the touch loop is one
-- byte store per page and nothing else, the fill loop stores with no call.
local t = require "tap"

-- The listing of the compiler under test (make sets FTRUN_ASM), else the committed one.
local dir = arg[0]:match("^(.*)/tests/[^/]+$") or "."
local f = assert(io.open(os.getenv("FTRUN_ASM") or dir .. "/core/kernels_O2.s"))
local listing = f:read("a")
f:close()

local function body(name)
  -- gcc: "name:"; clang: "name:   # @name"
  return listing:match("\n" .. name .. ":[^\n]*\n(.-)%.size%s+" .. name .. ",")
end

-- An x86 instruction whose last operand is memory: a store.
local function stores(text)
  local n = 0
  for line in text:gmatch("[^\n]+") do
    if line:match("^%s+%a+%s+.-,%s*[%w%-%+]*%(%%[%w,%%]+%)%s*$") then n = n + 1 end
  end
  return n
end

local touch, fill = body("ft_touch"), body("ft_fill")
t.ok(touch ~= nil, "ft_touch is in the listing")
t.ok(fill ~= nil, "ft_fill is in the listing")
t.is(stores(touch or ""), 1, "touch: exactly one store")
t.like(touch or "", "movb", "touch: the store is one byte")
t.ok(not (touch or "call"):find("call"), "touch: no call")
t.ok(stores(fill or "") >= 1, "fill: plain stores")
t.ok(not (fill or "call"):find("call"), "fill: no call (so no memset)")
t.ok(not listing:find("memset"), "no memset anywhere in the kernels")
-- the checker itself must be able to fail
t.is(stores("\tmovb\t%cl, (%rdi)\n\tmovq\t%r8, 8(%rax)\n\tmovq\t(%rax), %r8\n"), 2,
  "the store counter counts stores and not loads")

t.done()
