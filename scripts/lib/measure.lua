-- The bracket around a timed pass, and the read-back checks. The fault
-- counter is read just outside the C window the pass times itself; nothing
-- between the two reads allocates, so the count is the pass's own.
local ft = require "ft"

local measure = {}

-- b:method(...) timed in C; returns ns and the faults the pass took.
function measure.pass(b, method, ...)
  local f0 = ft.faults()
  local ns = b[method](b, ...)
  local f1 = ft.faults()
  return ns, f1 - f0
end

-- k * n(n-1)/2 mod 2^64, the sum of p[i] = i*k over n words: Lua integers
-- wrap, and halving the even factor first keeps the product exact mod 2^64.
function measure.fill_sum(words, k)
  local n = words
  local half = n % 2 == 0 and (n // 2) * (n - 1) or n * ((n - 1) // 2)
  return half * k
end

-- Checks run and passed, for the verdict line.
measure.checks = 0

-- Called with the message before a mismatch is raised, so a script can put
-- the failed verdict on record.
measure.on_mismatch = function(_) end

local function check(what, got, want)
  ft.sink(got)
  if got ~= want then
    local msg = ("checksum mismatch in %s: read back %d, expected %d"):format(what, got, want)
    measure.on_mismatch(msg)
    error(msg, 3)
  end
  measure.checks = measure.checks + 1
end

-- After the last touch of a buffer: one byte per page, each equal to value.
function measure.check_bytes(b, value, what)
  check(what, b:sum_bytes(), value * b.pages)
end

-- After a fill: every word, against the closed form.
function measure.check_words(b, k, what)
  check(what, b:sum_words(), measure.fill_sum(b.bytes // 8, k))
end

return measure
