-- fleet.lua's summary: each host's machine and status, then for every
-- timed row each host's median, the spread between machines beside the
-- spread between runs on one machine, whether the hosts differ, and the
-- hosts that lie beyond the others.
local inference = require "inference"
local machines = require "machines"
local report = require "report"
local stats = require "stats"
local units = require "units"

local fleet = {}

-- Rows with a better side: what a slow machine shows in.
local TIMED = { ["ns/page"] = true, ns = true, us = true, ms = true, cycles = true, ["GB/s"] = true,
  ["faults/s"] = true }

local function clean(doc) return report.clean_verdict(doc.verdict) end

-- Text as one cell of a markdown table: a host's error, a folder's or a
-- case's name and a CPU's come from hosts and their JSON, where a | would
-- split the cell and a newline end the table.
local function cell(s)
  return (tostring(s):gsub("%c", function(c) return c == "\n" and "\\n" or ("\\%d"):format(c:byte()) end)
    :gsub("|", "\\|"))
end

-- hosts: { name, status = { state, why }, docs = { results JSON, ... } }.
-- info: script, knobs, runs, hosts, alpha, outlier_pct, dir, interrupted.
function fleet.summary(hosts, info)
  local out = {}
  local function add(s) out[#out + 1] = s end
  add(("# Fleet: %s %s on %s, %d run(s) a host\n"):format(cell(info.script), cell(table.concat(info.knobs, " ")),
    cell(info.hosts), info.runs))
  add(("%s, gathered into %s.\n"):format(os.date("!%Y-%m-%d %H:%M UTC"), info.dir))
  add("| host | status | runs | machine |")
  add("|---|---|---|---|")
  local docs = {}
  for _, h in ipairs(hosts) do
    for _, d in ipairs(h.docs) do docs[#docs + 1] = d end
    local fp = h.docs[1] and machines.describe(machines.fingerprint(h.docs[1])) or "–"
    add(("| %s | %s%s | %d | %s |"):format(cell(h.name), h.status.state, h.status.why and cell(": " .. h.status.why)
      or "", #h.docs, cell(fp)))
  end
  add("")
  local groups = machines.group(docs)
  if #groups == 1 and #docs > 0 and #hosts > 1 then
    add(("The hosts share one fingerprint [%s]: they are one kind of machine, so the spread between them "
      .. "should come out near zero, and a host beyond the others is set up or loaded differently.\n"):format(
      machines.describe(groups[1].fp)))
  elseif #groups > 1 then
    add(("The hosts are %d machines by fingerprint (host, hypervisor, kernel, CPU, THP): their runs are no "
      .. "replicates of one machine, and the table below is the machines' spread, not a run's noise.\n"):format(
      #groups))
  end

  -- rows every host with runs has, each host's runs as lists of values
  local present, order, by = {}, {}, {}
  for _, h in ipairs(hosts) do
    if #h.docs > 0 then present[#present + 1] = h end
  end
  for hi, h in ipairs(present) do
    for _, d in ipairs(h.docs) do
      for _, r in ipairs(type(d.rows) == "table" and d.rows or {}) do
        if type(r) == "table" and TIMED[r.unit] and type(r.values) == "table" then
          local key = tostring(r.case) .. "\0" .. tostring(r.column)
          local row = by[key]
          if not row then
            row = { case = r.case, column = r.column, unit = r.unit, hosts = {} }
            by[key], order[#order + 1] = row, row
          end
          row.hosts[hi] = row.hosts[hi] or { name = h.name, runs = {} }
          local vals = {}
          for _, v in ipairs(r.values) do if type(v) == "number" and v > 0 then vals[#vals + 1] = v end end
          if #vals > 0 and clean(d) then table.insert(row.hosts[hi].runs, vals) end
        end
      end
    end
  end
  local rows = {}
  for _, row in ipairs(order) do
    local list = {}
    for hi = 1, #present do
      if row.hosts[hi] and #row.hosts[hi].runs > 0 then list[#list + 1] = row.hosts[hi] end
    end
    if #list == #present and #list >= 2 then
      row.list = list
      rows[#rows + 1] = row
    end
  end
  if #rows == 0 then
    add(#present < 2 and "Fewer than two hosts have runs: no machines to compare.\n"
      or "The hosts have no timed row in common: no machines to compare.\n")
    return table.concat(out, "\n")
  end

  local ps = {}
  for i, row in ipairs(rows) do
    row.spread = machines.spread(row.list)
    row.p = machines.machine_effect(row.list, { seed = i })
    if row.p then ps[#ps + 1] = row.p end
    row.outliers, row.no_outliers = machines.outliers(row.list, { min_pct = info.outlier_pct })
  end
  local q, k = inference.bh(ps), 0
  local called, between, within = {}, {}, {}
  for _, row in ipairs(rows) do
    if row.p then
      k = k + 1
      row.q = q[k]
      if row.q <= info.alpha then called[#called + 1] = row end
    end
    if row.spread.between then between[#between + 1] = row.spread.between end
    if row.spread.within then within[#within + 1] = row.spread.within end
  end

  add("| case | column | unit | each host's median | between machines sd % | between runs sd % | p | q | "
    .. "outliers (vs the others' median) |")
  add("|---|---|---|---|---|---|---|---|---|")
  local named = {}
  for _, row in ipairs(rows) do
    local cells = {}
    for _, h in ipairs(row.list) do
      local meds = stats.map(h.runs, stats.median)
      cells[#cells + 1] = ("%s %s"):format(cell(h.name), units.cell(stats.median(meds), row.unit))
    end
    local outs = {}
    for _, o in ipairs(row.outliers) do
      outs[#outs + 1] = ("%s %+.1f %% (bar %.1f %%)"):format(cell(o.name), o.pct, o.threshold)
      named[o.name] = named[o.name] or {}
      table.insert(named[o.name], ("%s %s %+.1f %% (bar %.1f %%)"):format(cell(row.case), cell(row.column), o.pct,
        o.threshold))
    end
    local function pct(x) return x and ("%.1f"):format(x) or "–" end
    add(("| %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(cell(row.case), cell(row.column), cell(row.unit),
      table.concat(cells, ", "), pct(row.spread.between), pct(row.spread.within),
      row.p and ("%.3g"):format(row.p) or "–", row.q and ("%.3g"):format(row.q) or "–",
      #outs > 0 and table.concat(outs, "; ") or "–"))
  end
  add("")
  add(("Between-machine spread: %.1f %% at the median of the %d timed rows (sd of the hosts' log medians less "
    .. "what the runs' own spread explains; 0 when the runs explain it all), against a spread between runs on one "
    .. "machine of %s."):format(#between > 0 and stats.median(between) or 0, #rows,
    #within > 0 and ("%.1f %%"):format(stats.median(within)) or "– (one run a host)"))
  if #ps == 0 then
    add(("Hosts differ: not judged (a permutation test over the runs needs two runs on a host; RUNS=%d)."):format(
      info.runs))
  elseif #called == 0 then
    add(("Hosts differ: on no row at ALPHA=%g (%d rows judged, permutation test of the runs' medians over the "
      .. "hosts, Benjamini-Hochberg).%s"):format(info.alpha, #ps,
      info.runs < 3 and " With fewer than 3 runs a host no row can reach p < 0.05 when the hosts are 4; give "
        .. "RUNS=3 or more." or ""))
  else
    add(("Hosts differ: on %d of %d rows at ALPHA=%g: %s."):format(#called, #ps, info.alpha,
      table.concat(stats.map(called, function(r) return r.case .. " " .. r.column end), ", ")))
  end
  local names = {}
  for n in pairs(named) do names[#names + 1] = n end
  table.sort(names)
  local unjudged = rows[1].no_outliers
  if #names == 0 and unjudged then
    add(("Outliers: not judged (%s; give RUNS=2 or more)."):format(unjudged))
  elseif #names == 0 then
    add(("Outliers: none (a host is one when its median lies beyond the others' by more than %g %% and 3 "
      .. "times the spread the others show between machines and runs, and each of its runs beyond every run of the "
      .. "others by %g %% too)."):format(info.outlier_pct, info.outlier_pct))
  else
    for _, n in ipairs(names) do
      add(("Outlier: %s: %s."):format(cell(n), table.concat(named[n], "; ")))
    end
  end
  if info.interrupted then add("Interrupted: the runs above are those that ended before the interrupt.") end
  add("")
  return table.concat(out, "\n")
end

return fleet
