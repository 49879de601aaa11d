-- attribution.lua's report: one table, a line per case and a column per
-- stage, then the top five kernel symbols of each case; from the raw file alone.
local stages = require "stages"
local summary = require "summary"
local units = require "units"

local report = {}

-- Pooled over the repetitions, before the files are written: each stage's
-- share of all the case's samples, the kernel symbols with the most
-- samples, and the symbols no rule names.
local TOP = 10

function report.derive(h)
  local ungrouped = {}
  for _, case in ipairs(h.cases) do
    if #case.records > 0 then
      local p = stages.pool(case.records)
      h:value("samples", p.samples, "count", { { "case", case.name }, { "kernel", p.kernel }, { "user", p.user },
        { "lost", p.lost }, { "reps", #case.records } })
      for _, key in ipairs(stages.KEYS) do
        h:value("stage", p.total > 0 and 100 * (p.stages[key] or 0) / p.total or 0, "%",
          { { "case", case.name }, { "stage", key }, { "samples", p.stages[key] or 0 }, { "of", p.total } })
      end
      for k = 1, math.min(TOP, #p.kernel_symbols) do
        local s = p.kernel_symbols[k]
        h:value("top", 100 * s.samples / p.total, "%", { { "case", case.name }, { "symbol", s.name }, { "rank", k },
          { "samples", s.samples }, { "stage", s.stage } })
      end
      for name, s in pairs(p.symbols) do
        local n = s.stages[stages.UNGROUPED]
        if n then ungrouped[name] = (ungrouped[name] or 0) + n end
      end
    end
  end

  local left = {}
  for name, n in pairs(ungrouped) do left[#left + 1] = { name, n } end
  table.sort(left, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  for i = 1, #left do left[i] = ("%s (%d)"):format(left[i][1], left[i][2]) end
  h:note("Ungrouped, all cases, samples: " .. (#left > 0 and table.concat(left, ", ", 1, math.min(12, #left))
    .. (#left > 12 and (", and %d more"):format(#left - 12) or "") or "none") .. ".")
end

function report.table(raw)
  local ix = summary.index(raw)
  local out = summary.head(ix)
  local function put(s) out[#out + 1] = s end
  local stage, top = {}, {}
  for _, v in ipairs(ix.values.stage or {}) do stage[v.case .. "\0" .. v.stage] = v.x end
  for _, v in ipairs(ix.values.top or {}) do
    top[v.case] = top[v.case] or {}
    top[v.case][v.rank] = v
  end
  local pooled = {}
  for _, v in ipairs(ix.values.samples or {}) do pooled[v.case] = v end
  local head, rule = { "case", "samples (kernel / user)" }, { "---", "---" }
  for _, key in ipairs(stages.KEYS) do head[#head + 1] = stages.NAMES[key] .. " %"; rule[#rule + 1] = "---" end
  for _, c in ipairs { "lost", "sampled share of the wall (median) %", "ns/page, sampled (median)",
    "faults (median)" } do
    head[#head + 1] = c; rule[#rule + 1] = "---"
  end
  put("| " .. table.concat(head, " | ") .. " |")
  put("|" .. table.concat(rule, "|") .. "|")
  local function median(case, col)
    local row = ix.row(case, col)
    return row and row.n > 0 and units.cell(row.median, row.unit) or "–"
  end
  for _, case in ipairs(ix.cases) do
    local cells = { case }
    local p = pooled[case]
    if ix.unsupported[case] then
      cells[2] = "not supported: " .. ix.unsupported[case]
      for i = 3, #head do cells[i] = "" end
    elseif p then
      cells[2] = ("%s (%s / %s)"):format(units.cell(p.x, "count"), units.cell(p.kernel, "count"),
        units.cell(p.user, "count"))
      for _, key in ipairs(stages.KEYS) do
        cells[#cells + 1] = units.cell(stage[case .. "\0" .. key] or 0, "%")
      end
      cells[#cells + 1] = units.cell(p.lost, "count")
      cells[#cells + 1] = median(case, "sampled")
      cells[#cells + 1] = median(case, "ns_per_page")
      cells[#cells + 1] = median(case, "ns_faults")
    end
    put("| " .. table.concat(cells, " | ") .. " |")
  end
  put("")
  if next(top) then
    put("Top kernel symbols by samples (share of all the case's samples; → the stage they count toward):")
    put("")
    put("| case | 1 | 2 | 3 | 4 | 5 |")
    put("|---|---|---|---|---|---|")
  end
  for _, case in ipairs(ix.cases) do
    if pooled[case] and next(top) then
      local cells = { case }
      for k = 1, 5 do
        local v = (top[case] or {})[k]
        cells[k + 1] = v and ("%s %s %% → %s"):format(v.symbol, units.cell(v.x, "%"), stages.NAMES[v.stage] or v.stage)
          or (k == 1 and "no kernel sample" or "–")
      end
      put("| " .. table.concat(cells, " | ") .. " |")
    end
  end
  if next(top) then put("") end
  for _, n in ipairs(ix.meta.note) do put(n.text); put("") end
  for _, w in ipairs(ix.meta.warning) do put("**Warning:** " .. w.text); put("") end
  local own = ix.value("own_time")
  put(("Wall time %s s, %s %% of it in the runner itself."):format(units.cell(own.wall_ms / 1000, "ratio"),
    units.cell(own.x, "%")))
  put("")
  put(ix.verdict .. ".")
  return table.concat(out, "\n") .. "\n"
end


-- The finding: every case's stage shares, as its values give them. say: the
-- published pages' wording (round, value), given by whoever prints it.
function report.finding(doc, say)
  local shares, order = {}, {}
  for _, x in ipairs(doc.values) do
    if x.value == "stage" then
      if not shares[x.case] then shares[x.case] = {}; order[#order + 1] = x.case end
      if x.x > 0 then table.insert(shares[x.case], ("%s %s %%"):format(x.stage, say.round(x.x))) end
    end
  end
  local lines = {}
  for _, case in ipairs(order) do
    lines[#lines + 1] = ("- %s (%d samples): %s"):format(case, say.value(doc, "samples", "case", case).x,
      table.concat(shares[case], ", "))
  end
  return ("The share of each stage in each case's samples, pooled over the %s repetitions of one run "
    .. "(cpu-clock samples, so time with interrupts off lands where they come back on):\n\n%s")
    :format(tostring(doc.knobs and doc.knobs.REPS or "?"), table.concat(lines, "\n"))
end


-- One case's three largest stages, as a clause of a kind's page. say: the
-- published pages' wording (round, value), given by whoever prints it.
function report.top_stages(doc, say, case)
  local largest = {}
  for _, x in ipairs(doc.values) do
    if x.value == "stage" and x.case == case and x.x > 0 then largest[#largest + 1] = x end
  end
  table.sort(largest, function(a, b) return a.x > b.x end)
  local top = {}
  for i = 1, math.min(3, #largest) do top[i] = ("%s %s %%"):format(largest[i].stage, say.round(largest[i].x)) end
  return ("its profile (attribution.lua, %s samples of a 4 KiB first touch) puts %s first")
    :format(say.value(doc, "samples", "case", case).x, table.concat(top, ", "))
end
return report
