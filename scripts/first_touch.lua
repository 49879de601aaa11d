-- The whole benchmark in ten lines: what the first touch of fresh anonymous
-- memory costs against a second pass. Usage: ./ftrun first_touch.lua [MiB]
local ft = require "ft"
local mib = math.tointeger(tonumber(arg[1] or "256")) or error("MiB must be an integer, got " .. arg[1])
local b <close> = assert(ft.mmap(mib << 20))
local f0 = ft.faults(); local first = b:touch(1)
local f1 = ft.faults(); local second = b:touch(2)
local f2 = ft.faults()
print(("first touch: %.1f ns/page, %d faults"):format(first / b.pages, f1 - f0))
print(("second pass: %.1f ns/page, %d faults"):format(second / b.pages, f2 - f1))
print(("ratio %.1f over %d pages of %d bytes"):format(first / second, b.pages, b.page_size))
