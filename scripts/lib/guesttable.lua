-- The NUMA guest's table (numa/check.lua writes it into guest.md): every
-- case's page counts per node, fault counts and counts, one column per
-- such row of placement.lua's JSON, the repetitions' values side by side
-- and no times (TCG's mean nothing). claims.lua makes it again from the
-- published JSON, so a page count edited by hand in guest.md shows.
local guesttable = {}

function guesttable.lines(doc)
  local cols = {}
  for _, row in ipairs(doc.rows) do
    if row.unit == "pages" or row.unit == "faults" or row.unit == "count" then
      if not cols[row.column] then cols[#cols + 1], cols[row.column] = row.column, row.label end
    end
  end
  local labels = {}
  for _, c in ipairs(cols) do labels[#labels + 1] = cols[c] end
  local lines = { "| case | " .. table.concat(labels, " | ") .. " |", "|---" .. ("|---:"):rep(#cols) .. "|" }
  for _, case in ipairs(doc.reps) do
    local cells = { case.case }
    for _, c in ipairs(cols) do
      local v = {}
      for _, r in ipairs(case.records) do v[#v + 1] = r[c] ~= nil and tostring(r[c]) or nil end
      cells[#cells + 1] = #v > 0 and table.concat(v, ", ") or "–"
    end
    lines[#lines + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return lines
end

return guesttable
