-- Machines as a level of the measurement. A first-touch figure belongs to
-- one machine (the same machine kind came up as a KVM guest at 1.8 us a
-- first touch and as a PVM guest at 12.5 us), so runs of different
-- machines are no replicates of one configuration: they are grouped by
-- machine, pooled only when asked, and resampled machine -> run ->
-- repetition when they are.
local inference = require "inference"
local stats = require "stats"

local machines = {}

-- What names a machine, in the order a fingerprint prints.
machines.FIELDS = { "host", "hypervisor", "kernel", "kernel_build", "cpu", "thp" }

local function trim(s)
  s = s and tostring(s):gsub("^%s+", ""):gsub("%s+$", ""):gsub("%s+", " ")
  return s ~= "" and s or nil
end

-- A results JSON's machine: the hypervisor (as the kernel names it, PVM or
-- KVM, in runs that record CPUID's string apart as cpuid_hypervisor; older
-- runs have CPUID's string there), the kernel release and build, the CPU,
-- the THP setting and the hostname. A field a run did not record is nil,
-- and matches anything; so does a hypervisor "unknown" (a run without
-- CAP_SYSLOG cannot read the kernel log that names it).
function machines.fingerprint(doc)
  local m, p = doc.machine or {}, doc.provenance or {}
  local cpu = trim(m.cpu)
  if cpu and p.cpu_family then
    cpu = ("%s (family %s model %s stepping %s)"):format(cpu, tostring(p.cpu_family), tostring(p.cpu_model),
      tostring(p.cpu_stepping))
  end
  local thp = trim(m.thp_enabled or p.thp_enabled)
  if thp and (m.thp_defrag or p.thp_defrag) then thp = thp .. ", defrag " .. (m.thp_defrag or p.thp_defrag) end
  return {
    host = trim(p.hostname or m.hostname),
    hypervisor = m.hypervisor ~= "unknown" and trim(m.hypervisor) or (m.hypervisor == "" and "none" or nil),
    cpuid = trim(m.cpuid_hypervisor),
    kernel = trim(m.kernel or p.kernel),
    kernel_build = trim(p.kernel_version or m.kernel_version),
    cpu = cpu,
    thp = thp,
  }
end

function machines.describe(fp)
  local out = {}
  for _, k in ipairs(machines.FIELDS) do out[#out + 1] = ("%s %s"):format(k, fp[k] or "?") end
  return table.concat(out, "; ")
end

-- The fields two fingerprints disagree on (both recorded), or nil. A run
-- from before the kernel's name was recorded has CPUID's string as its
-- hypervisor: it is held against the other run's CPUID string.
function machines.conflict(a, b)
  local diff = {}
  for _, k in ipairs(machines.FIELDS) do
    local x, y = a[k], b[k]
    if k == "hypervisor" and (a.cpuid == nil) ~= (b.cpuid == nil) then
      x, y = a.cpuid or x, b.cpuid or y
    end
    if x and y and x ~= y then diff[#diff + 1] = k end
  end
  return #diff > 0 and diff or nil
end

-- The machines of some runs: a list of { fp, label, docs }, in the order
-- first seen; a run joins the first machine it does not conflict with.
function machines.group(docs)
  local groups = {}
  for _, d in ipairs(docs) do
    local fp, home = machines.fingerprint(d), nil
    for _, g in ipairs(groups) do
      if not machines.conflict(g.fp, fp) then home = g; break end
    end
    if not home then
      home = { fp = fp, docs = {} }
      groups[#groups + 1] = home
    end
    if fp.cpuid and not home.fp.cpuid then home.fp.hypervisor = fp.hypervisor end -- the kernel's name wins
    for k, v in pairs(fp) do home.fp[k] = home.fp[k] or v end
    home.docs[#home.docs + 1] = d
  end
  -- a machine is its whole fingerprint: one host booted into two kernels
  -- is two machines, labelled by the first field they differ in
  for i, g in ipairs(groups) do
    g.label = g.fp.host or ("machine " .. i)
    for j, o in ipairs(groups) do
      if j ~= i and (o.fp.host or ("machine " .. j)) == g.label then
        local k = (machines.conflict(g.fp, o.fp) or {})[1]
        g.label = ("%s (%s)"):format(g.label, k and k .. " " .. g.fp[k] or "#" .. i)
        break
      end
    end
    for _, d in ipairs(g.docs) do d.machine_label = g.label end
  end
  return groups
end

-- Why the runs of one side may not be pooled, or nil: they ran on
-- machines with different fingerprints. pool: the user pooled them anyway.
function machines.check_side(docs, side, pool)
  local groups = machines.group(docs)
  if pool then return nil, groups end
  -- a run that recorded no field at all would join any machine (SW-5)
  for _, d in ipairs(#docs > 1 and docs or {}) do
    if next(machines.fingerprint(d)) == nil then
      return ("%s side: %s records no machine (no machine or provenance fields), so nothing tells it a "
        .. "replicate of the others' machine (POOL=1 pools it anyway)"):format(side, tostring(d.path)), groups
    end
  end
  if #groups < 2 then return nil, groups end
  local a, b = groups[1], groups[2]
  return ("%s side: %s ran on [%s] and %s on [%s]; they differ in %s: runs of different machines are not "
    .. "replicates of one (POOL=1 pools them, the machine a level of the bootstrap)"):format(side, a.docs[1].path,
    machines.describe(a.fp), b.docs[1].path, machines.describe(b.fp),
    table.concat(machines.conflict(a.fp, b.fp), ", ")), groups
end

-- How the two sides' machines relate: "same" (each machine on both sides),
-- "differ" (no machine on both sides) or "mixed", with lines saying so.
function machines.relation(old_docs, new_docs)
  local all = {}
  table.move(old_docs, 1, #old_docs, 1, all)
  table.move(new_docs, 1, #new_docs, #all + 1, all)
  local groups = machines.group(all)
  local on = {}
  for _, g in ipairs(groups) do on[g.label] = { old = 0, new = 0, fp = g.fp } end
  for _, d in ipairs(old_docs) do on[d.machine_label].old = on[d.machine_label].old + 1 end
  for _, d in ipairs(new_docs) do on[d.machine_label].new = on[d.machine_label].new + 1 end
  local both, only = 0, 0
  for _, g in ipairs(groups) do
    if on[g.label].old > 0 and on[g.label].new > 0 then both = both + 1 else only = only + 1 end
  end
  local kind = only == 0 and "same" or (both == 0 and "differ" or "mixed")
  local lines = {}
  if kind == "differ" then
    local o, n = machines.group(old_docs)[1], machines.group(new_docs)[1]
    lines[1] = ("the machines differ: old on [%s], new on [%s] (they differ in %s): the change includes the "
      .. "difference between machines"):format(machines.describe(o.fp), machines.describe(n.fp),
      table.concat(machines.conflict(o.fp, n.fp) or { "nothing recorded" }, ", "))
  elseif #groups > 1 then
    for _, g in ipairs(groups) do
      lines[#lines + 1] = ("machine %s: %d old run(s), %d new run(s) [%s]"):format(g.label, on[g.label].old,
        on[g.label].new, machines.describe(g.fp))
    end
    if kind == "same" then
      lines[#lines + 1] = "both sides on the same machines: the change is paired by machine (machines drawn "
        .. "together for both sides, then runs, then repetitions)"
    end
  end
  return kind, lines, #groups
end

-- Runs (lists of values) by the machine their .machine field names.
local function by_machine(runs)
  local order, of = {}, {}
  for _, r in ipairs(runs) do
    local k = r.machine or "?"
    if not of[k] then of[k] = {}; order[#order + 1] = k end
    table.insert(of[k], r)
  end
  return order, of
end

-- One resample: for each drawn machine its runs drawn, in each its
-- repetitions drawn; the median of them all.
local function draw(machine_runs, rng)
  local all = {}
  for _, runs in ipairs(machine_runs) do inference.resample_into(all, runs, rng) end
  return stats.median(all)
end

local pooled = inference.pooled

-- The ratio of pooled medians new / old with its interval from a bootstrap
-- machine -> run -> repetition. old and new are lists of runs, each tagged
-- with .machine. When both sides hold the same machines the draw of
-- machines is shared (paired by machine), else each side draws its own.
-- Returns ratio, lo, hi, paired; nil when the old median is 0.
function machines.bootstrap_ratio(old, new, opts)
  opts = opts or {}
  local B, level = opts.B or 2000, opts.level or 0.95
  local rng = inference.rng(opts.seed or 1)
  local m_old, m_new = stats.median(pooled(old)), stats.median(pooled(new))
  if m_old == 0 then return nil end
  local ko, of_old = by_machine(old)
  local kn, of_new = by_machine(new)
  local paired = #ko == #kn
  for _, k in ipairs(ko) do if not of_new[k] then paired = false end end
  local ratios = {}
  for b = 1, B do
    local mo, mn = {}, {}
    for i = 1, #ko do
      local k = ko[rng(#ko)]
      mo[i] = of_old[k]
      if paired then mn[i] = of_new[k] end
    end
    if not paired then
      for i = 1, #kn do mn[i] = of_new[kn[rng(#kn)]] end
    end
    local o, n = draw(mo, rng), draw(mn, rng)
    ratios[b] = o ~= 0 and n / o or (n == 0 and 1 or math.huge)
  end
  table.sort(ratios)
  return m_new / m_old, inference.quantile(ratios, (1 - level) / 2),
    inference.quantile(ratios, 1 - (1 - level) / 2), paired
end

-- Each machine's median of its runs' medians, as logs. hosts: a list of
-- { name, runs = { {values}, ... } }. Returns a list of { name, log_median,
-- runs }, with the machines that have no positive values left out.
local function machine_logs(hosts)
  local out = {}
  for _, h in ipairs(hosts) do
    local meds = {}
    for _, r in ipairs(h.runs) do
      local m = #r > 0 and stats.median(r)
      if m and m > 0 then meds[#meds + 1] = math.log(m) end
    end
    if #meds > 0 then out[#out + 1] = { name = h.name, log_median = stats.median(meds), run_logs = meds } end
  end
  return out
end

local function sd(xs)
  if #xs < 2 then return nil end
  local m, s = stats.mean(xs), 0
  for _, x in ipairs(xs) do s = s + (x - m) ^ 2 end
  return math.sqrt(s / (#xs - 1))
end

-- The spread of one row over a fleet: between machines (sd of the
-- machines' log medians less what the runs' own spread puts there, in %)
-- and between runs on one machine (pooled sd of the runs' log medians, in
-- %). A spread that the runs explain comes out 0.
function machines.spread(hosts)
  local logs = machine_logs(hosts)
  local ms, within, df, k = {}, 0, 0, 0
  for _, h in ipairs(logs) do
    ms[#ms + 1] = h.log_median
    local s = sd(h.run_logs)
    if s then within = within + s ^ 2 * (#h.run_logs - 1); df = df + #h.run_logs - 1 end
    k = k + #h.run_logs
  end
  local raw = sd(ms)
  local w = df > 0 and math.sqrt(within / df) or nil
  local per = #logs > 0 and k / #logs or 1
  local between = raw and math.sqrt(math.max(0, raw ^ 2 - (w or 0) ^ 2 / per)) or nil
  return { between = between and 100 * between, raw = raw and 100 * raw, within = w and 100 * w,
    machines = #logs, logs = logs }
end

-- Machines whose median lies beyond the others' by more than the bar:
-- each machine against the median of the others, the bar the larger of
-- min_pct and z times the spread the others show (between their machines
-- and between runs on one machine, as sd of logs), and a gap of min_pct
-- between every run of the machine and every run of the others: a machine
-- whose runs all fell into a regime that another machine's runs also
-- visit is no outlier. The bar needs the runs' own spread: with fewer than
-- two runs on every machine nothing is named. Returns a list of { name,
-- pct, threshold } (pct: this machine against the others' median; the
-- threshold as a percent) and, when nothing could be judged, why.
function machines.outliers(hosts, opts)
  opts = opts or {}
  local z, least = opts.z or 3, math.log(1 + (opts.min_pct or 10) / 100)
  local logs, out = machine_logs(hosts), {}
  if #logs < 3 then return out, "fewer than 3 machines" end
  if not machines.spread(hosts).within then
    return out, "one run a machine: no spread between runs to set the bar by"
  end
  for i, h in ipairs(logs) do
    local others, lo, hi = {}, math.huge, -math.huge
    for j, o in ipairs(logs) do
      if j ~= i then
        others[#others + 1] = { name = o.name, runs = stats.map(o.run_logs, function(l) return { math.exp(l) } end) }
        for _, l in ipairs(o.run_logs) do lo, hi = math.min(lo, l), math.max(hi, l) end
      end
    end
    local s = machines.spread(others)
    local om = stats.median(stats.map(s.logs, function(o) return o.log_median end))
    local bar = math.max(least, z * math.sqrt(((s.raw or 0) / 100) ^ 2 + ((s.within or 0) / 100) ^ 2))
    local d = h.log_median - om
    local gap = math.max(stats.min(h.run_logs) - hi, lo - stats.max(h.run_logs))
    if gap > least and math.abs(d) > bar then
      out[#out + 1] = { name = h.name, pct = 100 * (math.exp(d) - 1), threshold = 100 * (math.exp(bar) - 1) }
    end
  end
  return out
end

-- Whether the machines differ at all on one row: a permutation test of the
-- between-machine variance of the runs' log medians (runs shuffled over
-- machines, the machines' run counts kept). Returns p, or nil with fewer
-- than two machines or no machine with two runs.
function machines.machine_effect(hosts, opts)
  opts = opts or {}
  local logs = machine_logs(hosts)
  local values, sizes, any2 = {}, {}, false
  for i, h in ipairs(logs) do
    table.move(h.run_logs, 1, #h.run_logs, #values + 1, values)
    sizes[i] = #h.run_logs
    if #h.run_logs >= 2 then any2 = true end
  end
  if #logs < 2 or not any2 then return nil end
  local function statistic(v)
    local grand, s, at = stats.mean(v), 0, 0
    for _, n in ipairs(sizes) do
      local m = 0
      for j = at + 1, at + n do m = m + v[j] end
      m = m / n
      s = s + n * (m - grand) ^ 2
      at = at + n
    end
    return s
  end
  local observed = statistic(values)
  local draws, hits = opts.draws or 4000, 0
  local rng = inference.rng(opts.seed or 1)
  local v = table.move(values, 1, #values, 1, {})
  for _ = 1, draws do
    for i = #v, 2, -1 do
      local j = rng(i)
      v[i], v[j] = v[j], v[i]
    end
    if statistic(v) >= observed * (1 - 1e-12) then hits = hits + 1 end
  end
  return (hits + 1) / (draws + 1)
end

return machines
