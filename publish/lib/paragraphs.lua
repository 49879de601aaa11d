-- The results pages' paragraphs and README's headline, each a function of
-- the committed runs: every conclusion a sentence states ("held", "lower in
-- N of M", "not explained", "dearer") is chosen here from the data.
local ev = require "evidence"
local kindpage = require "kindpage"
local reports = require "reports"

local R, interval, vinterval, load, row, value = ev.round, ev.interval, ev.vinterval, ev.load, ev.row, ev.value
local list, held, read = ev.list, ev.held, ev.read

local cycles = reports.of("cycles")
local paragraphs = {}

-- One function a paragraph, each given the context c (c.pub the published
-- run, c.others the repeats, c.v compare.lua's verdicts); order matters.
local P = {}

-- compare.lua's table cut to what it found, by compare.lua's report.
function P.compare(c)
  return reports.of("compare").cut_finding(c.v, ev, ("`%s./ftrun compare.lua results/results.json "
    .. "results/repeats/*/results.json`"):format(c.v.cal and "CALIBRATIONS=results/calibrations " or ""),
    "results/repeats/compare.txt")
end

-- THP, and the seed's page size.
function P.thp(c)
  c.k16 = load(c.root .. "/results/thp-16K-results.json")
  c.f4k, c.f2m = row(c.pub, "A", "pass1_faults").median, row(c.always, "A", "pass1_faults").median
  return cycles.thp_finding(c.pub, c.always, c.k16, ev)
end

function P.bimodal(c)
  return ev.bimodal { { "the default run", c.pub, lead = "In the default run" },
    { "`THP=always`", c.always, lead = "With `THP=always`" }, { "`THP=16K`", c.k16, lead = "With `THP=16K`" } }
end

-- Prediction 5 from the multi-node guest's published run (make numa-publish,
-- results/numa/), else from this machine's placement.lua run.
local function placement(root)
  local guest = root .. "/results/numa/exp-placement-results.json"
  local doc = load(read(guest) and guest or root .. "/results/exp-placement-results.json")
  return "5. Neither a free/malloc round trip nor a policy set afterwards moves placed pages: "
    .. reports.of("placement").finding(doc, ev, read(guest) ~= nil)
end

-- The seed's predictions for Linux, each held or not by the runs.
function P.predictions(c)
  local pop = load(c.root .. "/results/exp-populate-results.json")
  local pop_map, pop_pass = row(pop, "MAP_POPULATE", "map_faults"), row(pop, "MAP_POPULATE", "pass_faults")
  local moved = pop_map.min == pop.pages and pop_pass.max == 0
  local gib_faults = (1 << 30) // c.pub.page_size
  local n, f4k, f2m = c.n, c.f4k, c.f2m
  return table.concat({
    ("1. A GiB takes %d faults with %d KiB pages: %s (pass 1 took %d for %d MiB, %s)."):format(gib_faults, c.kib,
      c.one_fault == n and f4k * (1024 // c.mib) == gib_faults and "held" or "did not hold", f4k, c.mib,
      held(c.one_fault, n)),
    ("2. With THP the fault count drops by 512: %s (%d faults against %d, a factor of %d; one run)."):format(
      f4k // f2m == 512 and "held" or "did not hold", f2m, f4k, f4k // f2m),
    ("3. glibc returns the block on free, so the first touch after malloc costs what pass 1 costs: %s "
      .. "(every page faulted again, one in the malloc call and the rest in the first touch, %s; "
      .. "the ratio's interval holds 1 %s)."):format(
      (c.minus_one == n and c.contains_one == n) and "held" or "held only in part", held(c.minus_one, n),
      held(c.contains_one, n)),
    ("4. MAP_POPULATE moves the faults into the mmap call: %s (%d faults in the call, %d in the pass after; "
      .. "one run of populate.lua)."):format(moved and "held" or "did not hold", pop_map.median, pop_pass.max),
    placement(c.root),
  }, "\n")
end

-- The experiments' findings, each from its run by its script's report.
local function finding(c, script, ...)
  return reports.of(script).finding(load(("%s/results/exp-%s-results.json"):format(c.root, script)), ev, ...)
end
function P.attribution(c) return finding(c, "attribution") end
function P.pagesize(c) return finding(c, "pagesize") end
function P.recycle(c) return finding(c, "recycle") end
function P.slowpages(c)
  return finding(c, "slowpages", c.root .. "/results/exp-slowpages-pass2-thp-never-causes.dat")
end

-- README.md's headline: the sentence, the machine, and a column per run.
local function headline(c)
  local pub, runs, n = c.pub, c.runs, c.n
  local m = pub.machine or {}
  local machine = ("Measured on %s (%s CPUs, hypervisor %s), kernel %s, %d KiB pages, THP %s, %s NUMA node(s), "
    .. "clocksource %s."):format(tostring(m.cpu), tostring(m.cpus), tostring(m.hypervisor), tostring(m.kernel), c.kib,
    tostring(m.thp_enabled), tostring(m.numa_nodes), tostring(m.clocksource))
  local text = ("On this machine the first touch of a page cost **%s ns** (median [95 %% interval], %d KiB "
    .. "pages, %d MiB, %d repetitions, cycle A), **%s times** a later pass over the same page, taken within each "
    .. "repetition. The ratio's lower end was above a hundred %s; the absolute cost moves with the host "
    .. "(pass 1's medians: %s ns). Cycle C, which times each page, measured %s ns in the same repetitions; %s.")
    :format(interval(c.p1), c.kib, c.mib, c.p1.n, vinterval(c.ft_ratio), held(c.above, n), list(runs, function(d)
      return R(row(d, "A", "pass1").median) end), interval(row(pub, "C", "pass1")), cycles.c_against_a(runs, ev))
  local function cells(f)
    local out = {}
    for i, d in ipairs(runs) do out[i] = f(d) end
    return table.concat(out, " | ")
  end
  local head = { "| row | unit | " .. cells(function(d)
    return (d == pub and "published run, %s UTC" or "repeat, %s UTC"):format(tostring(d.date):match("T(%d+:%d+)"))
  end)
    .. " |", "|---|---|" .. ("---|"):rep(n) }
  local function trow(label, unit, f)
    head[#head + 1] = ("| %s | %s | %s |"):format(label, unit, cells(f))
  end
  trow("pass 1: first touch", "ns/page", function(d) return interval(row(d, "A", "pass1")) end)
  trow("pass 2 repeated", "ns/page", function(d) return interval(row(d, "A", "pass2r")) end)
  trow("pass 1 / pass 2 repeated", "ratio", function(d) return vinterval(value(d, "first_touch")) end)
  trow("fill of touched pages", "GB/s", function(d) return interval(row(d, "A", "fill")) end)
  trow("fill of a fresh mapping", "GB/s", function(d) return interval(row(d, "B", "fill")) end)
  trow("munmap", "ns/page", function(d) return interval(row(d, "A", "munmap")) end)
  for _, k in ipairs(c.kinds) do
    text = text .. (" On a %s guest (`%s/`) the first touch cost %s ns, %s times this %s guest's.")
      :format(k.kind, k.dir, interval(k.median), vinterval(k.p1), k.home)
  end
  return text .. " " .. machine .. "\n\n" .. table.concat(head, "\n")
end

-- results/README.md's paragraphs, by marker name, in the order computed.
local ORDER = { { "compare", P.compare }, { "thp", P.thp }, { "bimodal", P.bimodal },
  { "predictions", P.predictions }, { "attribution", P.attribution }, { "pagesize", P.pagesize },
  { "recycle", P.recycle }, { "slowpages", P.slowpages } }

-- Every block, by file and marker name.
-- compare_text: compare.lua's output on these runs where already made (results/repeats/compare.txt).
function paragraphs.compute(root, ftrun, compare_text)
  local runs = ev.runs(root)
  local pub = runs[1]
  local v = ev.verdicts(root, runs, not compare_text and ftrun)
  v.text = compare_text or v.text
  local c = { root = root, runs = runs, pub = pub, n = #runs, v = v,
    others = { table.unpack(runs, 2) }, pages = pub.pages, kib = pub.page_size // 1024, mib = pub.bytes >> 20 }
  c.always = load(root .. "/results/thp-always-results.json")
  local R_ = cycles.default_findings(c, ev)
  for _, p in ipairs(ORDER) do R_[p[1]] = p[2](c) end
  local factors
  R_.kinds, factors = kindpage.kinds(root)
  c.kinds = factors
  local out = { ["results/README.md"] = R_, ["README.md"] = { headline = headline(c) } }
  out.kinds = R_.kinds
  return out
end

return paragraphs
