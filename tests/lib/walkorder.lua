-- The order ft.touch_timed_walk visits n pages in, written out by hand:
-- the residues of the stride in turn, reversed when backward. The page of
-- each step, from 0. Stride 0: page 0 at every step. span (default n):
-- that order over pages 0 to span - 1, repeated until n steps.
return function(n, stride, backward, span)
  span = span or n
  local one = {}
  if stride == 0 then
    for j = 1, span do one[j] = 0 end
  else
    for r = 0, stride - 1 do
      for p = r, span - 1, stride do one[#one + 1] = p end
    end
  end
  if backward then
    local rev = {}
    for i = #one, 1, -1 do rev[#rev + 1] = one[i] end
    one = rev
  end
  local out = {}
  for j = 1, n do out[j] = one[(j - 1) % #one + 1] end
  return out
end
