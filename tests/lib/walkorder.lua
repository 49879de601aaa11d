-- The order ft.touch_timed_walk visits n pages in, written out by hand:
-- the residues of the stride in turn, reversed when backward. The page of
-- each step, from 0. Stride 0: page 0 at every step.
return function(n, stride, backward)
  local out = {}
  if stride == 0 then
    for j = 1, n do out[j] = 0 end
    return out
  end
  for r = 0, stride - 1 do
    for p = r, n - 1, stride do out[#out + 1] = p end
  end
  if backward then
    local rev = {}
    for i = #out, 1, -1 do rev[#rev + 1] = out[i] end
    out = rev
  end
  return out
end
