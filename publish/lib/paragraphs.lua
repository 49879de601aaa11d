-- The results pages' paragraphs and README's headline from the committed
-- runs: each script's report chooses its conclusions ("held", "lower in N of
-- M", "not explained", "dearer") from the data; this file loads and orders them.
local ev = require "evidence"
local kindpage = require "kindpage"
local reports = require "reports"

local load, row, held, read = ev.load, ev.row, ev.held, ev.read

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
  local out = { ["results/README.md"] = R_, ["README.md"] = { headline = cycles.headline(c, ev) } }
  out.kinds = R_.kinds
  return out
end

return paragraphs
