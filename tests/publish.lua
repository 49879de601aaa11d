-- The publish wing (publish/): on a scratch copy of the tree, make docs-check
-- passes with six ordinary hand edits of README.md and fails, naming each
-- file, on edits of a generated block, a derived file or a measurement and
-- on a new page with an unmarked figure; then the conclusions that matter
-- most (the headline, the experiments' findings, effects --help states),
-- each held to the committed JSON.
local t = require "tap"
package.path = ft.project_dir .. "/publish/lib/?.lua;" .. package.path
local inference = require "inference"
local lint = require "lint"
local reference = require "reference"
local registry = require "registry"
local q = t.quote

local ROOT = ft.project_dir
local FTRUN = q(ROOT .. "/ftrun")
local copy = t.tmpdir() .. "/tree"
t.run(("mkdir -p %s && cd %s && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t %s "
  .. "2>/dev/null; cd %s && git init -q && git add -A"):format(q(copy), q(ROOT), q(copy), q(copy)))

local function edit(file, from, to)
  local text = t.read(copy .. "/" .. file) or ""
  local new = text:gsub(from, to, 1)
  t.ok(new ~= text, ("the edit of %s applies"):format(file), from)
  t.write(copy .. "/" .. file, new)
  return new
end
local function check()
  return t.run(("cd %s && %s publish/docs.lua CHECK=1 ROOT=%s 2>&1"):format(q(ROOT), FTRUN, q(copy)))
end

-- Each benign edit alone leaves every generated block of README.md as it was (the run below shows
-- them as make docs makes them) and gives the figure rule nothing to find.
local README = t.read(copy .. "/README.md") or ""
local function reflowed(text)
  local para = text:match("\n\n(Medians over the repetitions[^\n]*\n[^\n]*\n[^\n]*)\n") or ""
  local words = {}
  for w in para:gmatch("%S+") do words[#words + 1] = w end
  local half = #words // 2
  return text:gsub(para:gsub("%p", "%%%0"), (table.concat(words, " ", 1, half) .. "\n" .. table.concat(words,
    " ", half + 1)):gsub("%%", "%%%%"), 1)
end
local BENIGN = {
  { "a typo fixed", function(s) return (s:gsub("`make` alone only builds", "`make` alone just builds", 1)) end },
  { "the install sentence reworded", function(s)
    return (s:gsub("As root, both install with apt%-get", "Run as root, both install with apt-get", 1)) end },
  { "a paragraph on UNTIL=decided", function(s) return (s:gsub("\n## ", "\n`UNTIL=decided` keeps running until "
    .. "the comparison with `BASELINE` is decided, and says what it decided.\n\n## ", 1)) end },
  { "See the man page for every knob.", function(s)
    return (s:gsub("\n## ", "\nSee the man page for every knob.\n\n## ", 1)) end },
  { "a paragraph reflowed", reflowed },
  { "to get a result faster, use QUICK=1", function(s) return (s:gsub("\n## ", "\nA new experiment: to get a "
    .. "result faster, use `QUICK=1`.\n\n## ", 1)) end },
}
local all = README
for _, b in ipairs(BENIGN) do
  local edited = b[2](README)
  t.ok(edited ~= README, "benign: " .. b[1] .. " applies")
  local same = true
  for _, name in ipairs { "headline", "layout", "run-output", "example" } do
    same = same and registry.block(edited, name) == registry.block(README, name)
  end
  t.ok(same, "benign: " .. b[1] .. ": README.md's generated blocks are untouched")
  t.is(table.concat(lint.page(edited), "; "), "", "benign: " .. b[1] .. ": no unmarked figure")
  all = b[2](all)
end
t.write(copy .. "/README.md", all)
local out, code = check()
t.is(code, 0, "the six benign edits together pass make docs-check", out)
t.write(copy .. "/README.md", README)

-- Hostile edits, one file each, all in one check: each fails, named.
local function digit(s) return s == "9" and "1" or tostring(tonumber(s) + 1) end
local headline = registry.block(README, "headline") or ""
edit("README.md", headline:gsub("%p", "%%%0"), (headline:gsub("%*%*(%d)", function(d) return "**" .. digit(d) end,
  1):gsub("%%", "%%%%")))
edit("results/README.md", "(\n1%. A GiB takes [^\n]-): held %(", "%1: did not hold (")
edit("results/pvm/README.md", "(\n| A | pass 1: first touch | ns/page | )(%d)", function(a, d) return a .. digit(d) end)
edit("results/exp-thp-summary.md", "(\n| [^\n]-| )(%d)", function(a, d) return a .. digit(d) end)
edit("results/reps.svg", "</svg>", "</svg> ")
edit("results/C-cdf.dat", "\n(%d)", function(d) return "\n" .. digit(d) end)
edit("results/exp-recycle-raw.txt", "(\nRESULT case=[^\n]- median=)(%d)", function(a, d) return a .. digit(d) end)
edit("results/exp-zeropage-results.json", '("median":)(%d)', function(a, d) return a .. digit(d) end)
edit("doc/ftrun.1", "tracing changes what a first touch costs", "tracing makes a first touch cheaper")
t.write(copy .. "/doc/notes.md", "# Notes\n\nOn the KVM guest the first touch of a page costs 900 ns, ten times "
  .. "less than on the PVM guest.\n")
out, code = check()
t.is(code, 1, "make docs-check fails on the hostile edits")
t.like(out, "run make docs", "saying what to do")
for _, named in ipairs { "--- a/README.md", "--- a/results/README.md", "--- a/results/pvm/README.md",
  "--- a/results/exp-thp-summary.md", "results/reps.svg", "--- a/results/C-cdf.dat", "results/exp-recycle-raw.txt",
  "results/exp-zeropage-results.json: FAILED", "--- a/doc/ftrun.1", "doc/notes.md: line 3: 900 ns" } do
  t.like(out, named, "the failure names " .. named)
end

-- The figure rule: a unit after a number, outside code; a marker in the paragraph covers it.
t.is(table.concat(lint.page("It took 1.2 µs, 5 % more, 3 times.\n"), "; "),
  "line 1: 1.2 µs; line 1: 5 %; line 1: 3 times", "figures with units are found")
t.is(#lint.page("It took 1.2 µs. <!-- figure: a run -->\n"), 0, "a marker on the paragraph covers them")
t.is(#lint.page("Run `MIB=64 ns` and\n```\n64 MiB\n```\n"), 0, "code spans and fences are not prose")
t.is(#lint.page("the fifteen runs were faster\n"), 0, "words are not scanned")

-- Conclusions over the committed JSON, each found again here from the runs.
local ev = require "evidence"
local function matches(text, pattern, name) return t.ok(text:find(pattern) ~= nil, name, pattern) end
local function load(path) return ev.load(ROOT .. "/" .. path) end
local row, runs = ev.row, ev.runs(ROOT)
local function values_of(doc, name) -- the run's values called name
  local found = {}
  for _, v in ipairs(doc.values) do if v.value == name then found[#found + 1] = v end end
  return found
end
local function any(xs, pred) return ev.count(xs, pred) > 0 end
local counts, shown = {}, 0
for i, d in ipairs(runs) do
  local a, c, lower = row(d, "A", "pass1").values, row(d, "C", "pass1").values, 0
  for k = 1, #a do if c[k] < a[k] then lower = lower + 1 end end
  counts[i] = ("%d of %d"):format(lower, #a)
  if inference.sign_test(lower, #a) < 0.05 and lower > #a / 2 then shown = shown + 1 end
end
local head = registry.block(README, "headline") or ""
t.like(head, ("in the published run C was lower in %s repetitions; in the repeats %s"):format(counts[1],
  table.concat(counts, " and ", 2)), "the headline: the published run's count, the repeats' beside it")
t.like(head, shown == #runs and "for a reason not explained" or shown == 0 and "no difference shown"
  or ("in %d of the %d runs only"):format(shown, #runs), "and the conclusion a sign test per run allows")

local trace = {}
for _, path in ipairs { "results/exp-slowpages-results.json", "results/pvm/exp-slowpages-results.json" } do
  for _, v in ipairs(values_of(load(path), "trace_cost")) do trace[#trace + 1] = v.pass == 1 and v.x or nil end
end
local dearer, cheaper = ev.count(trace, function(x) return x > 0 end), ev.count(trace, function(x) return x < 0 end)
t.ok(#trace >= 2, "the committed slowpages runs measure tracing's cost", tostring(#trace))
-- an effect stated in --help: each direction word must hold on every committed run that measures it
local EFFECTS = { ["cycles.lua CAUSES"] = { dearer = dearer == #trace, cheaper = cheaper == #trace } }
local UNMEASURED = {} -- a knob whose effect no committed run measures states none (COUNTERS says how to measure it)
for _, s in ipairs(reference.script_help(copy, FTRUN)) do
  for _, k in ipairs(s.knobs) do
    local word = k[2]:match("dearer") or k[2]:match("cheaper")
    local key = s.script .. " " .. k[1]
    if word and UNMEASURED[k[1]] then
      t.skip(key .. " states an effect", UNMEASURED[k[1]])
    elseif word then
      t.ok(EFFECTS[key] and EFFECTS[key][word], key .. ": \"" .. word .. "\" holds on the committed runs", k[2])
    end
  end
end
local results_md = t.read(ROOT .. "/results/README.md") or ""
for _, v in ipairs(values_of(load("results/exp-slowpages-results.json"), "trace_cost")) do
  if v.pass == 1 and v.thp == "never" then
    matches(registry.block(results_md, "slowpages") or "", "Tracing made pass 1 [%d.]+ %% "
      .. (v.x >= 0 and "dearer" or "cheaper"), "the slowpages finding's direction is the run's")
  end
end

local pop = load("results/exp-populate-results.json")
local moved = row(pop, "MAP_POPULATE", "map_faults").min == pop.pages
  and row(pop, "MAP_POPULATE", "pass_faults").max == 0
matches(results_md, "4%. MAP_POPULATE moves the faults into the mmap call: " .. (moved and "held" or "did not hold"),
  "prediction 4 as populate.lua's run gives it")
local always = load("results/thp-always-results.json")
local f4k, f2m = row(runs[1], "A", "pass1_faults").median, row(always, "A", "pass1_faults").median
matches(results_md, "2%. With THP the fault count drops by 512: " .. (f4k // f2m == 512 and "held" or "did not hold"),
  "prediction 2 as the THP=always run gives it")
local function in_all(pred) return ev.count(runs, pred) == #runs end
local one_fault = in_all(function(d)
  local p1 = row(d, "A", "pass1_faults")
  return p1.min == d.pages and p1.max == d.pages
end)
local minus_one = in_all(function(d)
  local touch, call = row(d, "D", "touch1_faults"), row(d, "D", "malloc_faults")
  return touch.min == d.pages - 1 and touch.max == d.pages - 1 and call.min == 1 and call.max == 1
end)
local holds_one = in_all(function(d)
  return any(values_of(d, "malloc_first_touch"), function(v) return v.lo <= 1 and v.hi >= 1 end)
end)
matches(results_md, "\n1%. A GiB takes %d+ faults with %d+ KiB pages: " .. (one_fault and "held" or "did not hold"),
  "prediction 1 as the default runs give it")
matches(results_md, "3%. glibc returns the block on free, [^:]*: " .. ((minus_one and holds_one) and "held"
  or "held only in part"), "prediction 3 as the default runs give it")
local rec = load("results/exp-recycle-results.json")
local again = row(rec, "munmap, then a fresh mmap", "second_faults").min == rec.pages
  and row(rec, "madvise(MADV_DONTNEED)", "second_faults").min == rec.pages
t.is(registry.block(results_md, "recycle"):find("(every page again, in every repetition)", 1, true) ~= nil, again,
  "recycle.lua: every page faults again after munmap and after MADV_DONTNEED, as its run gives it")
local below = ev.count(runs, function(d)
  return any(values_of(d, "fresh_fill_time"), function(v) return v.hi < 1 end)
end)
matches(results_md, "faulting while writing is cheaper than faulting first and writing after%) "
  .. (below == #runs and "in all " .. #runs .. " runs" or "in " .. below .. " of"), "the fill finding, run by run")
local pvm = t.read(ROOT .. "/results/pvm/README.md") or ""
for _, v in ipairs(values_of(load("results/pvm/exp-slowperiod-results.json"), "period_unexplained")) do
  matches(pvm, ("not explained %s %%%% %%(the target: at most 10 %%%%, %s%%)"):format(ev.round(v.x):gsub("%.", "%%."),
    v.x <= 10 and "met" or "not met"), "the period's target, THP=" .. v.thp)
end
-- README's hand sentence "a PVM guest ... pays several times more a first touch": the kinds' factor
local lower_end = (t.read(ROOT .. "/README.md") or "")
  :match("the first touch cost [%d.]+ %[[%d., ]+%] ns, [%d.]+ %[([%d.]+),")
t.ok(tonumber(lower_end or "") and tonumber(lower_end) >= 2,
  "the PVM guest's first touch costs several times the KVM guest's (the factor's lower end is 2 or more)")
t.done()
