-- A machine kind's own page (results/<kind>/README.md) and the block that
-- puts the kinds side by side, from each kind's committed runs.
local ev = require "evidence"
local inference = require "inference"
local kinds = require "kinds"
local reports = require "reports"
local stats = require "stats"
local verdicts = require "verdicts"

local R, interval, vinterval, load, row, value = ev.round, ev.interval, ev.vinterval, ev.load, ev.row, ev.value
local count, read, verdict = ev.count, ev.read, ev.verdict

local kindpage = {}

-- One kind's figures: its runs, cycle A's pass 1 and pass 2 repeated, and
-- its attribution.lua run's top stages where one is published.
local function kind_figures(root, p)
  local f = { kind = p.kind, dir = p.dir, runs = ev.runs(root, p.dir) }
  f.pub, f.p1, f.p2r = f.runs[1], {}, {}
  for i, d in ipairs(f.runs) do f.p1[i], f.p2r[i] = row(d, "A", "pass1").values, row(d, "A", "pass2r").values end
  local text = read(("%s/%s/exp-attribution-results.json"):format(root, p.dir))
  if text then
    local attr, stages = load(("%s/%s/exp-attribution-results.json"):format(root, p.dir)), {}
    local case = "pass 1, 4 KiB pages"
    for _, x in ipairs(attr.values) do
      if x.value == "stage" and x.case == case and x.x > 0 then stages[#stages + 1] = x end
    end
    table.sort(stages, function(a, b) return a.x > b.x end)
    local top = {}
    for i = 1, math.min(3, #stages) do top[i] = ("%s %s %%"):format(stages[i].stage, R(stages[i].x)) end
    f.attribution = ("its profile (attribution.lua, %s samples of a 4 KiB first touch) puts %s first")
      :format(value(attr, "samples", "case", case).x, table.concat(top, ", "))
  end
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

-- slowpages.lua EXPERIMENT=period: what pass 2's slow pages follow, by THP
-- mode, each class with its share, and the share left not explained.
function kindpage.period(doc, home)
  local by, order = {}, {}
  for _, v in ipairs(doc.values) do
    if type(v.value) == "string" and v.value:match("^period_") and v.thp then
      if not by[v.thp] then by[v.thp] = { classes = {}, guest = 0 }; order[#order + 1] = v.thp end
      local m = by[v.thp]
      if v.value == "period_total" then m.total = v
      elseif v.value == "period_class" then m.classes[#m.classes + 1] = v
      elseif v.value == "period_guest" then m.guest = m.guest + v.x
      elseif v.value == "period_unexplained" then m.unexplained = v end
    end
  end
  local parts = {}
  for _, thp in ipairs(order) do
    local m = by[thp]
    if m.total and m.unexplained then
      local named = stats.map(m.classes, function(c)
        return ("%s, %s %% (its control went its way in %d of %d repetitions)"):format(c.class, R(c.x), c.agreed,
          c.reps)
      end)
      parts[#parts + 1] = ("with THP=%s, of %d slow pages %s; guest events %s %%; not explained %s %% (the target: "
        .. "at most 10 %%, %s)")
        :format(thp, m.total.x, #named == 0 and "no class is named" or "named: " .. table.concat(named, "; "),
          R(m.guest), R(m.unexplained.x), m.unexplained.x <= 10 and "met" or "not met")
    end
  end
  return ("`slowpages.lua EXPERIMENT=period` (%d repetitions of one run; forward, samples shifted 4 bytes, backward, "
    .. "stride 7, a 50 ms pause, the null walk (one page stored again and again) and a small set of pages walked "
    .. "again and again, each walk with pass 3 over the same pages, shuffled in every repetition), pass "
    .. "2's slow pages of the forward walk by what covers them, a class named only where its control removed, "
    .. "moved or showed it (the null walk's and the small set's classes by rate, not page by page): %s.%s")
    :format(row(doc, doc.rows[1].case, doc.rows[1].column).n, table.concat(parts, "; "),
      home and (" The %s guest's slow pages were not re-measured with these walks."):format(home) or "")
end

-- The published run against each repeat, every row judged against the
-- calibration of the published configuration kept beside them.
local function repeats_judged(root, dir, runs)
  if #runs < 2 then return nil end
  local v = ev.verdicts(root, runs, nil, dir)
  if not v.cal then
    return ("The %d repeats are not judged against the published run: `%s/calibrations/` holds no calibration of "
      .. "the published configuration that every run matches (`make publish-kind` makes one)."):format(#runs - 1, dir)
  end
  local judged, called, seen = {}, {}, {}
  for _, r in ipairs(v.rows) do if r.p then judged[#judged + 1] = r end end
  for _, r in ipairs(judged) do
    local k = r.case .. " " .. r.column
    if verdicts.kind(r.verdict) == "different" and not seen[k] then
      seen[k] = true
      called[#called + 1] = ("%s in %d of %d"):format(k, count(v[k], function(x)
        return verdicts.kind(x.verdict) == "different" end), #runs - 1)
    end
  end
  local function n(kind) return count(judged, function(r) return verdicts.kind(r.verdict) == kind end) end
  return ("The published run against each of its %d repeats, one run a side judged against the published "
    .. "configuration's calibration (`%s`, %d A/A runs of `%s` made %s; a t test per row with the calibration's "
    .. "run-to-run spread, Benjamini-Hochberg over each comparison's rows): of %d judged rows, %d called different, "
    .. "%d the same within ±δ, %d undecided; pass 1: %s. Every one of these runs is of one tree and one "
    .. "configuration, so a row called different is a false call: %s.")
    :format(#runs - 1, v.cal.path:sub(#root + 2), v.cal.runs or 0, tostring(v.cal.script), tostring(v.cal.date),
      #judged, n("different"), n("same"), n("undecided"),
      (verdict(v, "A pass1"):gsub("^compare%.lua, the published run against each repeat: ", "")),
      #called == 0 and "none was made" or table.concat(called, ", ")
        .. "; the calibration's runs, made at another time, spread less than these did")
end

-- A kind's own findings: its default runs, and actouch.lua, host.lua, its
-- calibration and the period run where published.
function kindpage.kind_findings(root, dir)
  local runs = ev.runs(root, dir)
  local out = { reports.of("cycles").c_sentence(runs[1], ev, runs), repeats_judged(root, dir, runs) }
  local function doc(name)
    local path = ("%s/%s/exp-%s-results.json"):format(root, dir, name)
    return read(path) and load(path)
  end
  local ac = doc("actouch")
  if ac then
    local function effect(name, what)
      local v = value(ac, name)
      return ("%s changed it by a factor of %s (%s)"):format(what, vinterval(v), (v.lo <= 1 and v.hi >= 1)
        and "an interval holding 1: no effect shown" or "an interval without 1")
    end
    out[#out + 1] = ("`actouch.lua` takes the cycles' two differences apart on fresh mappings, shuffled in every "
      .. "repetition (%d repetitions of one run, time on the CPU): %s; %s.")
      :format(row(ac, "plain (A)", "oncpu").n, effect("timed_over_plain", "timing every page as cycle C does"),
        effect("after_munmap_over_fresh", "a munmap of another buffer just before (as cycle C has)"))
  end
  local cal_path = ("%s/%s/calibration-cycles.json"):format(root, dir)
  for _, r in ipairs(read(cal_path) and load(cal_path).rows or {}) do
    if r.case == "A" and r.column == "pass1" and type(r.explained) == "table" then
      local cal, a = load(cal_path), r.adjust
      local e = type(r.explained.canary) == "number" and r.explained.canary or nil
      out[#out + 1] = ("`make calibrate` ([calibration.md](calibration.md), %d A/A runs of `cycles.lua %s`): pass 1's "
        .. "run median varied by %s %% (sd of the logs) from run to run; %s, %s.")
        :format(cal.runs, tostring(cal.config), R(100 * r.between_run_sd_log),
          e and ("the canary explains %s %% of that spread (each run left out and predicted from the others)")
            :format(R(100 * e)) or ("the canary explains none of it (%s)"):format(tostring(r.explained.canary)),
          a and ("adjusted for the %s, %s %% remains, and compare.lua shows pass 1 adjusted beside the raw change")
            :format(a.covariate, R(100 * a.sd_log)) or "too little for compare.lua to adjust pass 1")
    end
  end
  local sp = doc("slowperiod")
  if sp then out[#out + 1] = kindpage.period(sp, (kinds.published(root)[1] or {}).kind) end
  local host = doc("host")
  if host then
    for _, v in ipairs(host.values) do
      if v.value == "host_share_4K" then
        out[#out + 1] = ("`host.lua`: of a 4 KiB first touch's time on the CPU, %s [%s, %s] %% lies outside the "
          .. "guest kernel's account (%d repetitions of one run).")
          :format(R(v.measured), R(v.lo), R(v.hi), v.n)
      end
    end
  end
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
