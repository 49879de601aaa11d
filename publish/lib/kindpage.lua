-- A machine kind's own page (results/<kind>/README.md) and the block that
-- puts the kinds side by side, from each kind's committed runs.
local ev = require "evidence"
local inference = require "inference"
local kinds = require "kinds"
local reports = require "reports"

local R, interval, vinterval, load, row, value = ev.round, ev.interval, ev.vinterval, ev.load, ev.row, ev.value
local read = ev.read

local kindpage = {}

-- One kind's figures: its runs, cycle A's pass 1 and pass 2 repeated, and
-- its attribution.lua run's top stages where one is published.
local function kind_figures(root, p)
  local f = { kind = p.kind, dir = p.dir, runs = ev.runs(root, p.dir) }
  f.pub, f.p1, f.p2r = f.runs[1], {}, {}
  for i, d in ipairs(f.runs) do f.p1[i], f.p2r[i] = row(d, "A", "pass1").values, row(d, "A", "pass2r").values end
  local path = ("%s/%s/exp-attribution-results.json"):format(root, p.dir)
  f.attribution = read(path) and reports.of("attribution").top_stages(load(path), ev, "pass 1, 4 KiB pages")
  return f
end

-- Both machine kinds side by side, and the factor between their first
-- touches (the run as the unit). Returns the block and the factors.
function kindpage.kinds(root)
  local published = kinds.published(root)
  if #published < 2 then
    return ("Runs of one machine kind are published (%s); a machine of another kind publishes into "
      .. "`results/<kind>/` and its figures appear here beside these."):format(published[1] and published[1].kind
      or "none"), {}
  end
  local all = {}
  for i, p in ipairs(published) do all[i] = kind_figures(root, p) end
  local out = {}
  for _, f in ipairs(all) do
    local m = f.pub.machine or {}
    out[#out + 1] = ("- **%s guest** (`%s/`, kernel %s, clocksource %s, %d MiB, %d repetitions a run, %d run%s): "
      .. "pass 1 cost %s ns per %d KiB page in the published run, pass 2 repeated %s ns, %s times apart within each "
      .. "repetition%s.")
      :format(f.kind, f.dir, tostring(m.kernel), tostring(m.clocksource), f.pub.bytes >> 20,
        row(f.pub, "A", "pass1").n, #f.runs, #f.runs == 1 and "" or "s",
        interval(row(f.pub, "A", "pass1")), f.pub.page_size // 1024, interval(row(f.pub, "A", "pass2r")),
        vinterval(value(f.pub, "first_touch")), f.attribution and "; " .. f.attribution or "")
  end
  local home, sentences, factors = all[1], {}, {}
  for i = 2, #all do
    local f = all[i]
    local differ = {}
    for _, k in ipairs { "MIB", "THP", "CYCLES", "COUNTERS", "REPORTING" } do
      -- a run from before REPORTING existed left page reporting as booted, the knob's default
      local absent = k == "REPORTING" and "as-booted" or nil
      local a, b = (home.pub.knobs or {})[k] or absent, (f.pub.knobs or {})[k] or absent
      if tostring(a) ~= tostring(b) then differ[#differ + 1] = ("%s (%s against %s)"):format(k, tostring(b),
        tostring(a)) end
    end
    if #differ > 0 then
      sentences[#sentences + 1] = ("The %s guest's default run and the %s guest's differ in %s, so no factor "
        .. "between them is computed."):format(f.kind, home.kind, table.concat(differ, ", "))
      goto next_kind
    end
    local r1, lo1, hi1 = inference.bootstrap_ratio(home.p1, f.p1, { seed = 1 })
    local r2, lo2, hi2 = inference.bootstrap_ratio(home.p2r, f.p2r, { seed = 1 })
    factors[#factors + 1] = { kind = f.kind, dir = f.dir, home = home.kind, p1 = { x = r1, lo = lo1, hi = hi1 },
      median = row(f.pub, "A", "pass1") }
    sentences[#sentences + 1] = ("A first touch on the %s guest cost **%s [%s, %s] times** the %s guest's, and a "
      .. "later pass over touched pages %s [%s, %s] times: the ratios of the medians pooled over each kind's runs "
      .. "(%d against %d), the intervals from a bootstrap of runs, then repetitions. The two kinds ran on different "
      .. "machines at different times, so the factor belongs to these machines; what makes it is not explained by "
      .. "these runs alone.")
      :format(f.kind, R(r1), R(lo1), R(hi1), home.kind, R(r2), R(lo2), R(hi2), #f.runs, #home.runs)
    ::next_kind::
  end
  return table.concat(out, "\n") .. "\n\n" .. table.concat(sentences, " "), factors
end

-- The published run against each repeat, every row judged against the
-- calibration of the published configuration kept beside them.
local function repeats_judged(root, dir, runs)
  if #runs < 2 then return nil end
  local v = ev.verdicts(root, runs, nil, dir)
  return reports.of("compare").repeats_finding(v, ev, dir, v.cal and v.cal.path:sub(#root + 2))
end

-- A kind's own findings: its default runs, and actouch.lua, host.lua, its
-- calibration and the period run where published, each in its report's words.
function kindpage.kind_findings(root, dir)
  local runs = ev.runs(root, dir)
  local out = { reports.of("cycles").c_sentence(runs[1], ev, runs) }
  local function add(text) out[#out + 1] = text end
  local function found(name, script, finding, ...)
    local path = ("%s/%s/%s.json"):format(root, dir, name)
    if read(path) then add(reports.of(script)[finding](load(path), ev, ...)) end
  end
  add(repeats_judged(root, dir, runs))
  found("exp-actouch-results", "actouch", "finding")
  found("calibration-cycles", "calibrate", "finding")
  found("exp-slowperiod-results", "slowpages", "period_finding", (kinds.published(root)[1] or {}).kind)
  found("exp-host-results", "host", "finding")
  return table.concat(out, " ")
end


-- A kind page's blocks: the kinds side by side, and its findings.
function kindpage.blocks(root, dir, side_by_side)
  for i, p in ipairs(kinds.published(root)) do
    if i > 1 and p.dir == dir then return { kinds = side_by_side, findings = kindpage.kind_findings(root, dir) } end
  end
  return { kinds = side_by_side, findings = ("No default run of this kind is published in `%s/`."):format(dir) }
end

return kindpage
