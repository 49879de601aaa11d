-- Every claim of the results prose is recomputed from the committed files:
-- the committed prose must match, and a copy with one number changed by
-- hand, a figure typed into the prose, or data that moved must not.
local t = require "tap"
local claims = require "claims"
local q = t.quote

local ROOT = ft.project_dir

do -- one rounding rule: three significant digits, half away from zero
  for _, c in ipairs { { 2271.6258, "2270" }, { 178.59, "179" }, { 8.697, "8.70" }, { 0.78010, "0.780" },
    { 0.0637101, "0.0637" }, { 999.6, "1000" }, { 1.0051, "1.01" }, { 2.5, "2.50" }, { -12.25, "-12.3" }, { 0, "0" },
    { 262144, "262000" }, { 10.92738, "10.9" } } do
    t.is(claims.round(c[1]), c[2], ("round(%s)"):format(c[1]))
  end
  t.is(claims.held(3, 3), "in all 3 runs", "held: all")
  t.is(claims.held(2, 3), "in 2 of 3 runs", "held: some")
  t.is(claims.held(0, 3), "in none of the 3 runs", "held: none")
end

do -- hand-typed figures are found outside the generated blocks only
  local text = table.concat({ "Pass 2 is a name, `MIB=256` is code, ![a plot](a1.svg) an image.",
    "<!-- ftrun claims x: begin -->", "12.5 ns, generated", "<!-- ftrun claims x: end -->",
    "<!-- ftrun results main: begin -->", "| A | 2271.6 |", "<!-- ftrun results main: end -->",
    "```", "ftrun 0.1.0", "```", "It cost 2270 ns.", "In twelve runs.", "Run on 2026-12-04, `NOWAIT=1`.",
    "Vetted: 4 KiB.", "Turned on by QUICK=1 or NOWAIT=0.", "Run at MIB=512." }, "\n")
  local found = claims.hand_numbers(text, { "4 KiB" })
  t.is(#found, 4, "four lines with a figure typed by hand", table.concat(found, " | "))
  t.like(found[1] or "", "line 11: It cost 2270 ns.", "a digit, named by its line")
  t.like(found[2] or "", "line 12: In twelve runs.", "a number word")
  t.like(found[3] or "", "line 13: Run on 2026-12-04", "a date")
  t.like(found[4] or "", "line 16: Run at MIB=512.", "a knob's value other than a switch's 0 or 1")
end

do -- a comparison's outcome typed by hand is found like a figure: a word, a phrase, and a vetted one passes
  local text = table.concat({ "THP=always makes the first touch cheaper.", "The order has no effect.",
    "Every page slower than the threshold is counted.", "A mapping of the same size." }, "\n")
  local found = claims.hand_numbers(text, { "Every page slower than" })
  t.is(#found, 2, "two conclusions typed by hand", table.concat(found, " | "))
  t.like(found[1] or "", "line 1: THP=always makes the first touch cheaper.", "a word that says which is dearer")
  t.like(found[2] or "", "line 2: The order has no effect.", "a phrase that says nothing changed")
end

do -- words split by what renders as nothing, and roff's comment request in markdown, are still read
  local md = table.concat({ "Cycle C is fi\u{200b}ve times fast\u{00ad}er.", '.\\" It is 5 times faster.' }, "\n")
  local found = claims.hand_numbers(md, {})
  t.is(#found, 2, "a zero-width space or soft hyphen inside a word, and a .\\\" line of markdown", table.concat(found, " | "))
  found = claims.hand_numbers('.\\" a man page\n.SH X\nCycle C is fi\\%ve times fast\\:er.\n.\\" 5 times, a comment\n', {})
  t.is(#found, 1, "roff's empty escapes inside a word; a roff comment is not read", table.concat(found, " | "))
end

do -- two separated groups: the rule fires on a made-up bimodal sample, and not on unimodal ones
  -- five fast repetitions near 365 among ten slow ones, one straggler at 1500 among the slow
  local two = { 360, 4500, 365, 5000, 370, 4800, 4750, 380, 362, 5100, 4700, 1500, 4650, 4900, 4400 }
  local g = claims.groups(two)
  t.ok(g ~= nil, "groups: a bimodal sample splits")
  if g then
    t.is(g[1].n .. "/" .. g[2].n, "5/10", "groups: 5 low, 10 high")
    t.is(table.concat(g[1].reps, ","), "1,3,5,8,9", "groups: the low group's repetitions, in order")
    t.is(g[1].median, 365, "groups: the low group's median")
    t.is(g[1].min .. "/" .. g[1].max, "360/380", "groups: the low group's range")
    t.is(g[2].median, 4725.0, "groups: the high group's median (ten values)")
    t.is(g[2].min .. "/" .. g[2].max, "1500/5100", "groups: the straggler stays in the high group's range")
    t.is(claims.round(g.factor), "3.95", "groups: how far apart the nearest values are")
  end
  local lognormal, x = {}, 1000
  for i = 1, 15 do -- a fixed spread of about 10 % around 1000, no gap
    x = 1000 * math.exp(0.1 * math.sin(i * 2.3))
    lognormal[i] = x
  end
  t.is(claims.groups(lognormal), nil, "groups: a unimodal sample does not split")
  t.is(claims.groups { 100, 101, 99, 102, 98, 100, 103, 97, 101, 100, 99, 102, 1000, 100, 1100 }, nil,
    "groups: two stalls are not a group (fewer than GROUPS.min_reps)")
  t.is(claims.groups { 20, 20, 30, 20, 30, 30, 20, 30 }, nil,
    "groups: the clock's tick (20 against 30 ns, closer than GROUPS.min_factor) is no split")
  t.is(claims.groups { 100, 130, 170, 220, 290, 720, 940, 1200, 1600, 2100 }, nil,
    "groups: a gap of 2.5 times is no split when each side spreads about as widely")
  t.ok(claims.groups { 10, 10, 10, 10, 25, 25, 25, 25 } ~= nil,
    "groups: constant sides (no spread) split at a factor of 2.5")
  t.is(claims.groups { 360, 365, 370, 4500, 4800, 4900, "?" }, nil, "groups: a value that is no number: not judged")
  t.is(claims.groups { 0, 365, 370, 4500, 4800, 4900 }, nil, "groups: a value of 0 has no logarithm: not judged")
  t.is(claims.groups { 360, 365, 4500, 4800 }, nil, "groups: too few repetitions for two groups")
end

local function check(root, env)
  return t.ftrun_run("claims.lua CHECK=1" .. (root and " ROOT=" .. q(root) or ""), env)
end

do -- the committed prose, checked by a relative ftrun under a $PWD that names another directory: compare.lua is
  -- still found
  local relative = t.ftrun:sub(1, 1) ~= "/"
  local out, code = check(nil, relative and "cd " .. q(ROOT) .. " && PWD=/nonexistent" or nil)
  t.is(code, 0, "claims.lua CHECK=1: the committed prose matches the committed data"
    .. (relative and " (run under a wrong $PWD)" or ""), out)
end

-- A copy of the tracked tree (the layout is made from git's list of it).
-- Each step below edits it and puts it back as git's index of it holds it.
local dir = t.tmpdir()
t.run(("cd %s && git ls-files -z | xargs -0 cp --parents -t %s && cd %s && git init -q && git add -A")
  :format(q(ROOT), q(dir), q(dir)))
local tree = (t.run("cd " .. q(dir) .. " && git write-tree")):match("%x+")
local function restore()
  local out, code = t.run(("cd %s && git read-tree --reset -u %s && git clean -fdxq"):format(q(dir), tree))
  if code ~= 0 then error("the copy cannot be put back: " .. out) end
end
local readme = t.read(dir .. "/results/README.md")

-- Plain-text edits of the copy. replace: the first `from` in file made `to`, and where it stands; nil, with a
-- failed check, when the file does not hold it.
local function replace(file, from, to)
  local path = dir .. "/" .. file
  local text = t.read(path) or ""
  local at = text:find(from, 1, true)
  t.ok(at ~= nil, ("%s holds %q to edit"):format(file, from))
  if at then t.write(path, text:sub(1, at - 1) .. to .. text:sub(at + #from)) end
  return at
end

-- What the check says of the paragraph of file that holds byte `at`, once it is no longer as it was vetted.
local function unvetted(file, at)
  local text = t.read(dir .. "/" .. file) or ""
  local _, before = text:sub(1, at - 1):gsub("\n", "")
  for _, p in ipairs(require("seal").paragraphs(text, claims.UNBLOCKED[file])) do
    local _, lines = p.text:gsub("\n", "")
    if p.line <= before + 1 and before + 1 <= p.line + lines then
      return ("%s: line %d: a paragraph not vetted as it stands"):format(file, p.line)
    end
  end
  return file .. ": no paragraph holds byte " .. at
end

-- Hand edits made together, then one check: each finding the edits want must be in its output. Every finding
-- wanted is named in full, none inside another, and edits that could give the same finding go in different
-- batches. CLAIMS_LEAVE_ONE_OUT=1 shows it: each batch is checked again once without each of its edits, and that
-- edit's findings must then be absent (a check per edit: not in make test's time).
local function batch(what, cases)
  local function apply(skip)
    local wants = {}
    for i, c in ipairs(cases) do
      if i ~= skip then
        for _, w in ipairs(c[2]() or {}) do wants[#wants + 1] = { text = w, case = c[1], i = i } end
      end
    end
    return wants
  end
  local wants = apply()
  for _, a in ipairs(wants) do
    for _, b in ipairs(wants) do
      if a ~= b and b.text:find(a.text, 1, true) then error(("%s: %q stands inside %q"):format(what, a.text, b.text)) end
    end
  end
  local out, code = check(dir)
  t.is(code, 1, what .. ": CHECK=1 exits 1")
  for _, w in ipairs(wants) do t.like(out, w.text, ("%s: %s"):format(w.case, w.text)) end
  restore()
  if os.getenv("CLAIMS_LEAVE_ONE_OUT") == "1" then
    for i, c in ipairs(cases) do
      apply(i)
      local without = check(dir)
      for _, w in ipairs(wants) do
        if w.i == i then
          t.ok(not without:find(w.text, 1, true), ("%s, left out: %s is not said"):format(c[1], w.text))
        end
      end
      restore()
    end
  end
  return out
end

do -- the copy, with a user's own run under results/runs/ (git-ignored: no claim reads it) and CHECK=1 given in the
  -- environment as make and CI may give it (compare.lua, run inside, must not see it): clean
  local run = dir .. "/results/runs/20261205T000000Z-cycles"
  t.run("mkdir -p " .. q(run))
  t.write(run .. "/results.json", (t.read(dir .. "/results/pvm/results.json"):gsub('"git_commit":"%x+"',
    '"git_commit":"unknown (not a git checkout)"', 1)))
  t.write(run .. "/raw.txt", "date: 2026-12-05T00:00:00Z\n")
  t.write(run .. "/summary.md", "| case | a hand-made table |\n")
  local out, code = t.ftrun_run("claims.lua ROOT=" .. q(dir), "CHECK=1")
  t.is(code, 0, "the copy checks clean, with a run of a user's under results/runs/ and CHECK=1 in the environment", out)
  t.like(out, "claims.lua: every claim matches the data", "and it was a check")
  restore()
end

-- results/README.md with a number of the first-touch claim changed by hand.
local function claim_bumped()
  local body = claims.block(readme, "first-touch")
  t.ok(body ~= nil, "results/README.md has the first-touch claim")
  local n = body and body:match("%*%*(%d+)")
  local changed = body and body:gsub("%*%*" .. n, "**" .. tostring(tonumber(n) + 1), 1)
  t.write(dir .. "/results/README.md", (readme:gsub(body:gsub("%p", "%%%0"), (changed:gsub("%%", "%%%%")), 1)))
end

do -- a number of a claim changed by hand: make claims writes the claims again
  claim_bumped()
  local _, wcode = t.ftrun_run("claims.lua ROOT=" .. q(dir))
  t.is(wcode, 0, "claims.lua writes the claims again")
  t.is(t.read(dir .. "/results/README.md"), readme, "and the prose is what it was")
  -- a block without its marker: make claims refuses, naming it
  replace("results/README.md", "<!-- ftrun claims malloc: begin -->\n", "")
  local out, code = t.ftrun_run("claims.lua ROOT=" .. q(dir))
  t.is(code, 1, "a block without its marker: claims.lua exits 1")
  t.like(out, "no markers for the claim malloc", "and names it")
  restore()
end

-- A kind's page: two runs' headings swapped.
local function headings_swapped()
  local page = t.read(dir .. "/results/pvm/README.md")
  if not page then
    t.skip("two runs' headings swapped on a kind's page", "no results/pvm/README.md")
    return {}
  end
  t.write(dir .. "/results/pvm/README.md", (page:gsub("\n## `main`\n", "\n## `X`\n", 1)
    :gsub("\n## `thp%-always`\n", "\n## `main`\n", 1):gsub("\n## `X`\n", "\n## `thp-always`\n", 1)))
  return { "results/pvm/README.md: the block of run main is not under its heading ## `main`" }
end

-- results/README.md: two runs' blocks swapped under each other's headings, and the default run's block deleted.
local function blocks_moved()
  local text = t.read(dir .. "/results/README.md")
  local function block(name)
    local n = name:gsub("%p", "%%%0")
    return text:match("<!%-%- ftrun results " .. n .. ": begin %-%->.-<!%-%- ftrun results " .. n .. ": end %-%->")
  end
  local x, y = block("exp-populate"), block("exp-zeropage")
  local i, j = text:find(x, 1, true)
  text = text:sub(1, i - 1) .. "\0" .. text:sub(j + 1)
  i, j = text:find(y, 1, true)
  text = text:sub(1, i - 1) .. x .. text:sub(j + 1)
  i = text:find("\0", 1, true)
  text = text:sub(1, i - 1) .. y .. text:sub(i + 1)
  local main = text:match("<!%-%- ftrun results main: begin %-%->.-<!%-%- ftrun results main: end %-%->\n")
  i, j = text:find(main, 1, true)
  t.write(dir .. "/results/README.md", text:sub(1, i - 1) .. text:sub(j + 1))
  return { "the block of run exp-populate is not under a heading that names `populate.lua`",
    "results/README.md: the run main is published (results/summary.md) and its block is not on the page" }
end

-- Hand edits of the prose outside the blocks, in every document, and vetted facts made false.
local function prose_edits()
  local repeat_dir = require("shell").list(dir .. "/results/pvm/repeats", "^%d")[1]
  local edits = {
    { "README.md", "runs four cycles", "runs five cycles", "five cycles" },
    { "README.md", "\n## How to read a row\n", "\n## How to read a row\n\nA first touch costs 2.1 µs.\n", "2.1 µs" },
    { "README.md", "after a warm-up\n", "after twelve warm-ups\n", "twelve warm-ups" },
    { "CHANGELOG.md", "a 980 ns zero-page", "a 990 ns zero-page", "990 ns" },
    { "CHANGELOG.md", "between 126 and 310", "between 126 and 320", "126 and 320" },
    { "doc/ftrun.1", "143 for SIGTERM", "142 for SIGTERM", "142 for SIGTERM" },
    { "doc/ftrun.1", "# 64 MiB, 5 repetitions", "# 64 MiB, 6 repetitions", "doc/ftrun.1: the claim examples differs" },
    { "doc/ftrun.1", "\n.B 130\n", "\n.B 131\n", ".B 131" },
    { "bench/README.md", "in three rounds", "in four rounds", "four rounds" },
    { "results/README.md", "three significant digits", "four significant digits", "four significant digits" },
    { "Makefile", "REPEATS ?= 2", "REPEATS ?= 3", 'README.md: "two repeats" is not true' },
    { "results/numa/exp-placement-results.json", '"git_commit":"', '"git_commit":"unknown (not a git checkout)","x":"',
      "results/numa/exp-placement-results.json: records no commit (unknown (not a git checkout))" },
    { "results/pvm/results.json", '"values":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]', '"values":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,7]',
      "results/pvm/results.json: row " },
    { "results/bench.txt", "every figure: min /", "every figure: max /", "results/bench.txt: no seal" },
    { "results/pvm/raw.txt", "RESULT value=first_touch unit=ratio x=780.", "RESULT value=first_touch unit=ratio x=980.",
      "value 1 (first_touch), x: 980." },
    { "results/pvm/thp-always-raw.txt", 'MiB, 15 reps after 1 warm-up"', 'MiB, 31 reps after 1 warm-up"', "its title" },
    { "results/pvm/thp-16K-raw.txt", "MiB, 15 reps after", "MiB, 31 reps after", "its first line" },
    { "README.md", "(64 MiB, 5 reps)", "(`16` MiB, `2` reps)", "(`16` MiB, `2` reps)" },
    { "README.md", "make test    # build, lint,", "make test    # in ten seconds: build, lint,", "in ten seconds" },
    { "README.md", "\n## Comparing runs\n", "\n<!-- ftrun claims note: begin -->\nIt costs 900 ns.\n"
      .. "<!-- ftrun claims note: end -->\n## Comparing runs\n", "a marker of a block nothing makes here (note)" },
    { "README.md", "## Other targets\n", "## Other targets\nA first touch costs \xEF\xBC\x91\xEF\xBC\x98 µs.\n",
      "costs \xEF\xBC\x91" },
    { "README.md", "## How to read a row\n", "## How to read a row\nIt costs tenfold any later pass.\n",
      "tenfold" },
    { "README.md", "## How to read a row\n", "## How to read a row\nIn 95 % of runs.\n",
      'the vetted phrase "95 %" is there 2 times' },
    { "doc/ftrun.1", ".B 0\nSuccess.", ".B 0\nA usage error.", 'the line under .B 0 does not say "success"' },
    { "doc/ftrun.1", "141 for SIGPIPE", "141 for SIGALRM", "141 for SIGALRM" },
    { "doc/ftrun.1", ".SH SEE ALSO\n", ".SH SEE ALSO\n.EX\nftrun cycles.lua QUICK=1   # 16 MiB\n.EE\n", "# 16 MiB" },
    { ("results/pvm/repeats/%s/summary.md"):format(repeat_dir), "| A |", "| A* |",
      ("results/pvm/repeats/%s/summary.md differs"):format(repeat_dir) },
    { "results/exp-thp-plot.dat", "\n", "\n1 2 3\n", "results/exp-thp-plot.dat differs from what its run's JSON" },
    { "results/numa/guest.md", "| first touch on CPU 0 | 65536 | 65536 |", "| first touch on CPU 0 | 65536 | 65535 |",
      "results/numa/guest.md: its table differs" },
    { "results/pvm/repeats/compare.txt", "| A | pass1 |", "| A | pass 1 |", "results/pvm/repeats/compare.txt differs" },
    { "results/repeats/compare.txt", "| A | pass1 |", "| A | pass 1 |", "results/repeats/compare.txt differs" },
    { "doc/ftrun.1", "(the argument wins)", "(the environment wins)", "(the environment wins)" },
    { "CHANGELOG.md", "was slower still", "was faster still", "was faster still" },
    { "bench/README.md", '("no difference shown")', '("no difference")', '("no difference")' },
    { "results/README.md", "of a smaller run", "of a larger run", "of a larger run" },
    { ".ci/fleet-check", "HOSTS='node[1-4]' RUNS=3", "HOSTS='node[1-3]' RUNS=3", '"four loopback hosts" is not true' },
    { "CHANGELOG.md", '"a fifth" of the 4 KiB first touch, "about 260 µs per fault"',
      '"about 260 µs" of the 4 KiB first touch, "a fifth per fault"', 'CHANGELOG.md: "a fifth" is not true' },
    { "README.md", "## How to read a row\n", "## How to read a row\nCycle C's first touch is cheaper than A's.\n",
      "is cheaper than A's" },
    { "README.md", "## How to read a row\n", "## How to read a row\nRun it with MIB=512 for the full size.\n",
      "MIB=512 for the full size" },
    { "README.md", "## How to read a row\n", "## How to read a row\n11643. Why a line may start with a figure.\n",
      "11643. Why a line" },
    { "results/pvm/README.md", "(the kernel log's hypervisor: PVM)", "(the kernel log's hypervisor: KVM)",
      "results/pvm/README.md: its opening differs from what kinds.page makes for the kind PVM" },
    { "CHANGELOG.md", "in the 2026-12-03 runs", "in the 2026-12-02 runs", "line 13:   in the 2026-12-02 runs" },
    { "doc/ftrun.1", ".TH FTRUN 1 2026-12-03", ".TH FTRUN 1 2026-12-02", ".TH FTRUN 1 2026-12-02" },
  }
  local wants = {}
  for _, e in ipairs(edits) do
    replace(e[1], e[2], e[3])
    wants[#wants + 1] = e[4]
  end
  return wants
end

batch("the documents' prose, pasted blocks and headings edited by hand", {
  { "a number in a claim changed by hand", function()
    claim_bumped()
    return { "the claim first-touch differs from the data" }
  end },
  { "a figure typed into the prose around the blocks", function()
    replace("results/README.md", "\n**The fill.**\n", "\n**The fill**, about 9 times.\n")
    return { "about 9 times" }
  end },
  { "a digit changed in a pasted table", function()
    local text = t.read(dir .. "/results/README.md")
    t.write(dir .. "/results/README.md", (text:gsub("(<!%-%- ftrun results thp%-16K: begin %-%->\n[^\n]*\n[^\n]*)(%d)",
      function(head, d) return head .. tostring((tonumber(d) + 1) % 10) end, 1)))
    return { "results/README.md: the pasted block thp-16K differs from results/thp-16K-summary.md" }
  end },
  { "two runs' headings swapped on a kind's page", headings_swapped },
  { "two pasted blocks swapped, the default run's deleted", blocks_moved },
  { "prose edited by hand in every document", prose_edits },
  { "prose hidden before a block's end, behind a copy of its end marker", function()
    local e = "<!-- ftrun claims findings: end -->"
    replace("results/pvm/README.md", "\n" .. e .. "\n", "\nThe PVM guest is as fast as the KVM guest. " .. e .. "\n" .. e .. "\n")
    local me = '.\\" <!-- ftrun claims options: end -->'
    replace("doc/ftrun.1", "\n" .. me .. "\n", "\nEvery option is ignored. \\\" " .. me:sub(5) .. "\n" .. me .. "\n")
    return { "a block marker that is not a line of its own (<!-- ftrun claims findings: end -->)",
      "a block marker that is not a line of its own (<!-- ftrun claims options: end -->)" }
  end },
  { "a block's copy on lines of its own", function()
    local text = t.read(dir .. "/results/README.md")
    local b, e = "<!-- ftrun claims headline-ratio: begin -->\n", "<!-- ftrun claims headline-ratio: end -->\n"
    local i = text:find(b, 1, true)
    local block = text:sub(i, text:find(e, i, true) + #e - 1)
    replace("results/README.md", "# ftrun's results\n", "# ftrun's results\n\n" .. block)
    return { "a second block named headline-ratio (a copy's prose would go unread)" }
  end },
})

batch("the runs' files, and the pages' claims and exit statuses, edited by hand", {
  { "a line added to the bench's pasted block", function()
    local bench = t.read(dir .. "/bench/README.md")
    t.write(dir .. "/bench/README.md", (bench:gsub("(<!%-%- ftrun results bench: begin %-%->\n```\n[^\n]*\n)",
      "%1a line added by hand\n", 1)))
    return { "bench/README.md: the pasted block bench differs from results/bench.txt" }
  end },
  { "a pasted block whose file is gone", function()
    os.remove(dir .. "/results/exp-recycle-summary.md")
    return { "the block exp-recycle was pasted from results/exp-recycle-summary.md, which cannot be read" }
  end },
  { "the man page's .B 130 said to be SIGTERM's", function()
    replace("doc/ftrun.1", "Interrupted by SIGINT;", "Interrupted by SIGTERM;")
    return { 'the line under .B 130 does not say "interrupted by SIGINT"' }
  end },
  { "the headline changed by hand", function()
    local top = t.read(dir .. "/README.md")
    t.ok(claims.block(top, "headline") ~= nil, "README.md has the headline claim")
    t.write(dir .. "/README.md", (top:gsub("in all (%d) runs", "in all 9 runs", 1)))
    return { "README.md: the claim headline differs" }
  end },
  { "a raw file's head lines swapped (each made by its JSON, but not in that order)", function()
    local raw = t.read(dir .. "/results/pvm/raw.txt")
    local swapped = raw:gsub("\n(cpu: [^\n]*)\n(kernel: [^\n]*)\n", "\n%2\n%1\n", 1)
    t.ok(swapped ~= raw, "results/pvm/raw.txt has a cpu line and then a kernel line to swap")
    t.write(dir .. "/results/pvm/raw.txt", swapped)
    return { "its head's line \"kernel: " }
  end },
  { "THP=always pass 1's repetitions moved together (no longer two groups)", function()
    local path = dir .. "/results/thp-always-results.json"
    local json = require "json"
    local doc = json.decode(t.read(path))
    for _, r in ipairs(doc.rows) do
      if r.case == "A" and r.column == "pass1" then
        for i, x in ipairs(r.values) do if x < 1000 then r.values[i] = x * 12 end end
      end
    end
    t.write(path, json.encode(doc))
    return { "the claim bimodal differs" }
  end },
  { "a run's summary.md and its pasted block edited together", function()
    local path = dir .. "/results/thp-16K-summary.md"
    local saved = t.read(path)
    local function bump(text)
      return (text:gsub("(| A | [^\n]-)(%d)(%.%d)", function(head, d, tail)
        return head .. tostring((tonumber(d) + 1) % 10) .. tail
      end, 1))
    end
    t.write(path, bump(saved))
    local page = t.read(dir .. "/results/README.md")
    local edited = page:gsub(saved:gsub("%p", "%%%0"), (bump(saved):gsub("%%", "%%%%")), 1)
    t.ok(edited ~= page, "the pasted block was edited with its summary")
    t.write(dir .. "/results/README.md", edited)
    return { "results/thp-16K-summary.md differs from what its run's thp-16K-raw.txt and provenance make" }
  end },
  { "a row of the raw file edited", function()
    local path = dir .. "/results/raw.txt"
    t.write(path, (t.read(path):gsub("(RESULT case=A column=pass1 [^\n]- median=)(%d)", function(head, d)
      return head .. tostring((tonumber(d) % 9) + 1)
    end, 1)))
    return { "results/summary.md: raw.txt and results.json disagree: row" }
  end },
  { "a samples file gone, its sidecar left", function()
    os.remove(dir .. "/results/C-pass1-samples.i32")
    return { "results/C-pass1-samples.i32.txt: a sidecar whose samples file is gone",
      "results/C-pass1-samples.i32: missing: its run (results.json) has cycle C" }
  end },
  { "a samples file without its sidecar", function()
    os.remove(dir .. "/results/C-pass2-samples.i32.txt")
    return { "results/C-pass2-samples.i32.txt is missing or differs" }
  end },
  { "a calibration.md edited, its calibration file without a report", function()
    local wants = {}
    for _, kind_dir in ipairs { "results/pvm", "results" } do
      local path = dir .. "/" .. kind_dir .. "/calibration-cycles.json"
      local saved = t.read(path)
      if not saved then
        t.skip(kind_dir .. ": a calibration without its report", "no " .. kind_dir .. "/calibration-cycles.json")
      else
        local json = require "json"
        local doc = json.decode(saved)
        doc.report = nil
        t.write(path, json.encode(doc))
        local md = t.read(dir .. "/" .. kind_dir .. "/calibration.md")
        t.write(dir .. "/" .. kind_dir .. "/calibration.md", (md:gsub("(%d)%.(%d)", "%2.%1", 1)))
        wants[#wants + 1] = kind_dir .. "/calibration.md cannot be checked"
      end
    end
    return wants
  end },
  { "a block without its marker", function()
    replace("results/README.md", "<!-- ftrun claims malloc: begin -->\n", "")
    return { "results/README.md: no markers for the claim malloc" }
  end },
})

-- A broken calibration ends the check (no verdict can be given without it), so it is a batch of its own.
batch("a kept calibration broken", {
  { "a truncated calibration beside the runs", function()
    local kept = require("shell").list(dir .. "/results/pvm/calibrations", "%.json$")[1]
    if not kept then
      t.skip("a truncated calibration beside the runs", "no results/pvm/calibrations/")
      return {}
    end
    local path = dir .. "/results/pvm/calibrations/" .. kept
    t.write(path, t.read(path):sub(1, 300))
    return { "results/pvm/calibrations/" .. kept .. ": not a calibration file" }
  end },
})

-- The runs' own files edited by hand, one file each: a raw file's head, knobs, machine and clock lines and verdict;
-- a row's repetitions swapped; a samples file's bytes; a plot; the NUMA guest's page, record and summary; the
-- calibrations' pages.
local function runs_files()
  local json = require "json"
  local repeat_dir, repeat_two = table.unpack(require("shell").list(dir .. "/results/pvm/repeats", "^%d"))
  local function sub(find, repl)
    return function(text)
      local at = text:find(find, 1, true)
      return at and text:sub(1, at - 1) .. repl .. text:sub(at + #find)
    end
  end
  local function doc_edit(fn) -- the JSON decoded, edited and encoded again
    return function(text)
      local doc = json.decode(text)
      fn(doc)
      return json.encode(doc)
    end
  end
  local function swap_values(case, column)
    return doc_edit(function(doc)
      for _, r in ipairs(doc.rows) do
        if r.case == case and r.column == column then r.values[1], r.values[2] = r.values[2], r.values[1] end
      end
    end)
  end
  local function i32(fn) -- the samples as int32s, edited and packed again
    return function(bytes)
      local s = { string.unpack("<" .. ("i4"):rep(8), bytes) }
      fn(s)
      return string.pack("<" .. ("i4"):rep(8), table.unpack(s, 1, 8)) .. bytes:sub(33)
    end
  end
  local sidecar_again = "results/pvm/thp-always-C-pass1-samples.i32"
  local keeps_figures = "results/pvm/thp-16K-C-pass1-samples.i32"
  local edits = {
    { "results/pvm/raw.txt", sub("git_commit: 4ff99391493eb69ffb4a1aaea6794c308fff0f9d",
      "git_commit: 5663d94d7ef400b85ce1cad87016f77b855b2147"), "+ git_commit: 5663d94d7ef400b85ce1cad87016f77b855b2147" },
    { "results/pvm/thp-16K-raw.txt", sub("\nkernel: 6.18.44-fc-v1272\n", "\nkernel: 6.19.0-fc\n"), "+ kernel: 6.19.0-fc" },
    { "results/pvm/thp-always-raw.txt", sub("clock estimate: 3.620 GHz", "clock estimate: 2.900 GHz"),
      "+ clock estimate: 2.900 GHz" },
    { "results/pvm/exp-host-raw.txt", sub("knobs: MIB=256 REPS=5 ", "knobs: MIB=256 REPS=7 "),
      "+ knobs: MIB=256 REPS=7 " },
    { "results/pvm/exp-actouch-raw.txt", sub("CHECKSUMS OK: 40 read-backs", "CHECKSUMS OK: 41 read-backs"),
      "+ CHECKSUMS OK: 41 read-backs" },
    { "results/pvm/exp-slowpages-raw.txt", sub("(2 CPUs), kernel 6.18.44-fc-v1272,", "(2 CPUs), kernel 6.19.0,"),
      "(2 CPUs), kernel 6.19.0, 4096-byte pages" },
    -- lines no JSON field makes, held to their hash as published
    { "results/raw.txt", sub("date: 2026-12-03T16:45:29Z", "date: 2026-12-03T15:45:29Z"),
      "results/raw.txt: lines its results.json does not make" },
    { ("results/pvm/repeats/%s/raw.txt"):format(repeat_dir), sub(" MemFree=", " MemFree=1"),
      ("results/pvm/repeats/%s/raw.txt: lines its results.json does not make"):format(repeat_dir) },
    { "results/exp-thp-raw.txt", sub("hypervisor: KVMKVMKVM", "hypervisor: PVM"),
      "results/exp-thp-raw.txt: lines its results.json does not make" },
    -- a JSON's fields its raw file says too: the read-backs, a limit's note, the warm-up in the title
    { ("results/pvm/repeats/%s/results.json"):format(repeat_two), sub('"checks":80', '"checks":81'),
      "- CHECKSUMS OK: 81 read-backs" },
    { "results/pvm/thp-always-results.json", sub("a reading costs 24 ns", "a reading costs 25 ns"),
      '- RESULT meta=note text="The per-page timer' },
    { "results/exp-recycle-results.json", sub('"warmup":0', '"warmup":1'), "+ the JSON's title" },
    -- two repetitions swapped: in a row's values, and two records of a case
    { "results/pvm/thp-16K-results.json", swap_values("A", "pass1"), "(A pass1): repetition 1 is" },
    { "results/thp-always-results.json", doc_edit(function(doc)
      for _, c in ipairs(doc.reps) do
        if c.case == "D" then c.records[1], c.records[2] = c.records[2], c.records[1] end
      end
    end), "results/thp-always-results.json: row" },
    -- a samples file: one byte, two samples swapped, a sample changed with its sidecar made again
    { "results/pvm/C-pass1-samples.i32", function(b) return b:sub(1, 4000) .. string.char((b:byte(4001) + 1) % 256)
      .. b:sub(4002) end, "results/pvm/C-pass1-samples.i32.txt is missing or differs" },
    { "results/thp-16K-C-pass2-samples.i32", i32(function(x) x[1], x[2] = x[2], x[1] end),
      "results/thp-16K-C-pass2-samples.i32.txt is missing or differs" },
    { sidecar_again, i32(function(x) x[1] = 999999 end), sidecar_again .. ": pass1_" },
    -- two unequal neighbours on one side of SLOW_NS swapped, which no figure tells apart (the same values, the same
    -- pattern of slow pages); its sidecar made again below
    { keeps_figures, i32(function(x)
      local slow = json.decode(t.read(dir .. "/results/pvm/thp-16K-results.json")).knobs.SLOW_NS
      for i = 1, 7 do
        if x[i] ~= x[i + 1] and (x[i] > slow) == (x[i + 1] > slow) then x[i], x[i + 1] = x[i + 1], x[i]; return end
      end
      error("no two unequal neighbours on one side of SLOW_NS among the first 8")
    end), keeps_figures .. ": its bytes' sha256" },
    -- the NUMA guest's page: the head's host line (pinned), the record beside it, its run's summary
    { "results/numa/guest.md", sub("at 2026-12-04 19:31 UTC", "at 2026-12-04 18:31 UTC"),
      "results/numa/guest.md: line 6 is not the host line pinned" },
    { "results/numa/provenance.json", sub('"cpus":2', '"cpus":3'), "results/numa/provenance.json: its cpus is 3" },
    { "results/numa/exp-placement-summary.md", sub("| first touch on CPU 0 | 65536 | – | 65536 |",
      "| first touch on CPU 0 | 65537 | – | 65536 |"), "results/numa/exp-placement-summary.md differs from the summary" },
    -- a plot's picture: a tick label
    { "results/pvm/reps.svg", sub("> 17.5<", "> 17.6<"), "results/pvm/reps.svg differs from what gnuplot draws" },
    -- calibrate.lua's output beside the kind's calibration: a spread, a median
    { "results/pvm/calibrations/calibrate.txt", sub("| A pass1 | 11818.3 ns/page | 9.9 |",
      "| A pass1 | 11818.3 ns/page | 8.9 |"), "results/pvm/calibrations/calibrate.txt differs from what" },
    { "results/pvm/calibrations/calibrate.txt", sub("| A pass2 | 60.7 ns/page |", "| A pass2 | 50.7 ns/page |"),
      "results/pvm/calibrations/calibrate.txt: its median cells differ" },
    { "results/pvm/calibrations/calibrate.txt", sub("written to /tmp/pubcal/", "written to /tmp/other/"),
      "results/pvm/calibrations/calibrate.txt: it says it wrote /tmp/other/" },
  }
  -- make calibrate's page and its file's report edited together: pass 1's spread between runs
  local cal_path = "results/pvm/calibration-cycles.json"
  local cal = json.decode(t.read(dir .. "/" .. cal_path))
  local pass1 = cal.report.rows[2]
  local md_from, md_to = ("| A pass1 | %.1f %s | %.1f |"):format(pass1.median, pass1.unit, 100 * pass1.between),
    ("| A pass1 | %.1f %s | %.1f |"):format(pass1.median, pass1.unit, 100 * pass1.between + 1)
  edits[#edits + 1] = { "results/pvm/calibration.md", sub(md_from, md_to), cal_path .. ": its report" }
  edits[#edits + 1] = { cal_path, doc_edit(function(doc)
    doc.report.rows[2].between = doc.report.rows[2].between + 0.01
  end), "row 2 (A pass1): its report's between is" }
  local wants = {}
  for _, e in ipairs(edits) do
    local text = e[2](t.read(dir .. "/" .. e[1]))
    t.ok(text ~= nil, ("%s holds what the edit changes"):format(e[1]))
    if text then t.write(dir .. "/" .. e[1], text) end
    wants[#wants + 1] = e[3]
  end
  -- the sidecars made again for the changed samples: their hash then holds, the run's figures or its pin do not
  for _, f in ipairs { sidecar_again, keeps_figures } do
    local sidecar = t.read(dir .. "/" .. f .. ".txt")
    t.write(dir .. "/" .. f .. ".txt", (sidecar:gsub("sha256: %x+", "sha256: "
      .. require("textfile").sha256(t.read(dir .. "/" .. f)))))
  end
  return wants
end

do
  local out = batch("the runs' own files, and data that moved", {
    { "the runs' own files edited by hand", runs_files },
    { "the words beside a vetted hash", function()
      replace("doc/vetted-prose.sha256", "  README.md  # ftrun\n", "  README.md  # another project\n")
      return { "doc/vetted-prose.sha256: its hashes hold, but it is not as VET=1 writes it" }
    end },
    { "a changed median in the JSON", function()
      local path = dir .. "/results/results.json"
      local json = require "json"
      local doc = json.decode(t.read(path))
      for _, r in ipairs(doc.rows) do
        if r.case == "A" and r.column == "pass1" then r.median = r.median * 2 end
      end
      t.write(path, json.encode(doc))
      return { "the claim first-touch differs", "results/summary.md: raw.txt and results.json disagree: row" }
    end },
  })
  for _, f in ipairs { "results/pvm/thp-always-C-pass1-samples.i32", "results/pvm/thp-16K-C-pass1-samples.i32" } do
    t.ok(not out:find(f .. ".txt is missing or differs", 1, true),
      ("%s: a sidecar made again for its changed samples holds their hash"):format(f))
  end
  t.ok(not out:find("results/pvm/thp-16K-C-pass1-samples.i32: pass1_", 1, true),
    "two samples swapped move none of the run's figures")
end

do -- the published split: recomputed here from the JSON, plainly, and found in the prose
  local json = require "json"
  local doc = json.decode(t.read(ROOT .. "/results/thp-always-results.json"))
  local values
  for _, r in ipairs(doc.rows) do
    if r.case == "A" and r.column == "pass1" then values = r.values end
  end
  local sorted = { table.unpack(values) }
  table.sort(sorted)
  local at, widest = nil, 0
  for i = 1, #sorted - 1 do
    local w = sorted[i + 1] / sorted[i]
    if w > widest then at, widest = i, w end
  end
  local function median(a, b)
    local n = b - a + 1
    local m = a + n // 2
    return n % 2 == 1 and sorted[m] or (sorted[m - 1] + sorted[m]) / 2
  end
  local body = claims.block(t.read(ROOT .. "/results/README.md"), "bimodal") or ""
  t.like(body, ("With `THP=always`, cycle A's row \"pass 1: first touch\": its %d repetitions fall into two "
    .. "separated groups, %d at a median of %s ns per 4 KiB (from %s to %s"):format(#values, at,
    claims.round(median(1, at)), claims.round(sorted[1]), claims.round(sorted[at])),
    "the prose names THP=always pass 1's lower group as the JSON has it")
  t.like(body, ("and %d at a median of %s (from %s to %s), %s times apart"):format(#values - at,
    claims.round(median(at + 1, #sorted)), claims.round(sorted[at + 1]), claims.round(sorted[#sorted]),
    claims.round(widest)), "and its upper group")
  t.like(body, "is not explained", "and says the cause is not explained")
end

-- The seals: edits no claim can recompute, each failing until a publish seals again or a person vets the prose.
local function sealed(file, from, to)
  replace(file, from, to)
  return { ("%s: not as its publish wrote it (sha256 "):format(file) }
end
local function reworded(file, from, to)
  local at = replace(file, from, to)
  return { at and unvetted(file, at) or file .. ": not edited" }
end
batch("what the seals hold", {
  -- a second block of a name the page may hold, around prose of its own (first: it moves the lines below it)
  { "a second block of a claim's name", function()
    local at = replace("results/README.md", "\n## How to read these results\n", "\n<!-- ftrun claims thp: begin -->\n"
      .. "THP halves it.\n<!-- ftrun claims thp: end -->\n\n## How to read these results\n")
    return { at and "a second block named thp (a copy's prose would go unread)" or "results/README.md: not edited" }
  end },
  { "a raw file's label", function() return sealed("results/pvm/raw.txt", "meta=column name=pass1",
    "meta=column name=pass2") end },
  { "the NUMA summary's note", function() return sealed("results/numa/exp-placement-summary.md", "numa_balancing",
    "numa_rebalancing") end },
  { "the KVM guest's calibration file", function() return sealed("results/calibration-cycles.json", '"runs":',
    '"runs" :') end },
  { "a repetition's noise field", function() return sealed("results/pvm/results.json", '"foreign_pct":',
    '"foreign_pct":1') end },
  { "calibration.md's knobs", function() return sealed("results/calibration.md", "MIB=", "MIB=5") end },
  -- conclusions in words, and what the scan for typed figures takes out
  { "a conclusion turned round", function() return reworded("README.md", "several times more",
    "several times less") end },
  { "a conclusion denied", function() return reworded("results/README.md", "then faults again",
    "then does not fault again") end },
  { "the man page's never", function() return reworded("doc/ftrun.1", "never", "always") end },
  { "a switch in prose", function() return reworded("README.md", "QUICK=1", "QUICK=0") end },
  { "an image's name", function() return reworded("results/README.md", "-pass1-", "-pass2-") end },
  { "the scripting reference", function() return reworded("doc/ft.md", "ft.", "ft:") end },
  { "trailing whitespace", function() return reworded("README.md", "judge runs of the same against it |\n",
    "judge runs of the same against it |  \n") end },
  { "a file added to a kind's directory", function()
    t.write(dir .. "/results/pvm/extra-results.json", "{}")
    return { "results/pvm/extra-results.json: not in results/pvm/SHA256SUMS, so no publish wrote it" }
  end },
  { "a file named like a page", function()
    t.write(dir .. "/results/NOTES-README.md", "Hand-written notes.\n")
    return { "results/NOTES-README.md: not in results/SHA256SUMS" }
  end },
  { "a run committed under results/runs/", function()
    t.run("mkdir -p " .. q(dir .. "/results/runs/x") .. " && echo '{}' > " .. q(dir .. "/results/runs/x/results.json")
      .. " && cd " .. q(dir) .. " && git add -f results/runs/x/results.json")
    return { "results/runs/x/results.json: committed under results/runs/" }
  end },
  { "the kept calibration of the published configuration removed", function()
    local folder = dir .. "/results/pvm/calibrations"
    if #require("shell").list(folder) == 0 then
      t.skip("the kept calibration of the published configuration removed", "no results/pvm/calibrations/")
      return {}
    end
    t.run("rm -rf " .. q(folder))
    return { "results/pvm/README.md: the claim findings differs" } -- whose verdicts it gave
  end },
  { "a block in a document no code writes blocks into", function()
    local path = dir .. "/doc/ft.md"
    local text = t.read(path)
    t.write(path, text .. "\n<!-- ftrun claims x: begin -->\nIt halves it.\n<!-- ftrun claims x: end -->\n")
    return { unvetted("doc/ft.md", #text + 2) }
  end },
  { "a markdown marker behind roff's comment request (shown as text)", function()
    local at = replace("results/README.md", "<!-- ftrun claims malloc: begin -->", '.\\" <!-- ftrun claims malloc: begin -->')
    return { at and unvetted("results/README.md", at) or "results/README.md: not edited" }
  end },
  { "a file in a kind's own runs/", function()
    t.run("mkdir -p " .. q(dir .. "/results/pvm/runs") .. " && echo x > " .. q(dir .. "/results/pvm/runs/notes.txt"))
    return { "results/pvm/runs/notes.txt: not in results/pvm/SHA256SUMS" }
  end },
  { "a blank line made spaces", function()
    replace("bench/README.md", "\n\n", "\n  \n")
    return { "bench/README.md: the layout of the prose (blank lines, line ends, the end of the file) is not as vetted" }
  end },
  { "the last line's end taken off", function()
    local path = dir .. "/results/pvm/README.md"
    t.write(path, (t.read(path):gsub("\n$", "")))
    return { "results/pvm/README.md: the layout of the prose" }
  end },
  { "a directory too deep for the seal to read", function()
    local deep = dir .. "/results" .. ("/d"):rep(17)
    t.run("mkdir -p " .. q(deep) .. " && echo x > " .. q(deep .. "/f"))
    return { "a directory deeper than the seal reads, so nothing in it is held" }
  end },
  { "a sealed file removed", function()
    os.remove(dir .. "/results/bench.txt")
    return { "results/bench.txt: in results/SHA256SUMS but gone" }
  end },
  { "two paragraphs swapped", function()
    local changelog = t.read(dir .. "/CHANGELOG.md")
    local items, joined, swapped = require("seal").paragraphs(changelog), nil, nil
    for i = 1, #items - 1 do
      local a, b = items[i], items[i + 1]
      local _, lines = a.text:gsub("\n", "")
      if not joined and a.text:match("^%- ") and b.text:match("^%- ") and b.line == a.line + lines + 1 then
        joined, swapped = a.text .. "\n" .. b.text .. "\n", b.text .. "\n" .. a.text .. "\n"
      end
    end
    t.ok(joined and changelog:find(joined, 1, true), "CHANGELOG.md has two list items in a row")
    if not joined then return {} end
    local at = changelog:find(joined, 1, true)
    t.write(dir .. "/CHANGELOG.md", changelog:sub(1, at - 1) .. swapped .. changelog:sub(at + #joined))
    return { "CHANGELOG.md: its vetted paragraphs stand in another order" }
  end },
})

do -- a raw file's note, which make claims absorbs into its summary and the page's paste, is sealed; a re-vet takes
  -- a reworded paragraph in and prints it, but not a conclusion word the scan knows
  replace("results/pvm/raw.txt", "hold 2 % of the", "hold 20 % of the")
  t.ftrun_run("claims.lua ROOT=" .. q(dir))
  replace("README.md", "several times more", "several times dearer")
  local vet, vcode = t.ftrun_run("claims.lua VET=1 ROOT=" .. q(dir))
  t.is(vcode, 0, "VET=1 exits 0", vet)
  t.like(vet, "vetted: README.md  ", "and prints the paragraph it vetted")
  local out, code = check(dir)
  t.is(code, 1, "a raw file's note edited, then make claims, then VET=1: CHECK=1 exits 1")
  t.like(out, "results/pvm/raw.txt: not as its publish wrote it (sha256 ", "naming the raw file")
  t.like(out, "README.md: a number typed by hand", "a re-vet does not take in a conclusion word the scan knows")
  t.ok(not out:find("a paragraph not vetted as it stands", 1, true), "but the paragraph is vetted", out)
  restore()
end

do -- a seal remade is the committed one; a publish that seals data the prose was not read against asks for the
  -- prose to be read again
  for _, d in ipairs { "results", "results/pvm" } do
    local _, scode = t.ftrun_run("claims.lua SEAL=" .. d .. " ROOT=" .. q(dir))
    t.is(scode, 0, "SEAL=" .. d .. " exits 0")
    t.is(t.read(dir .. "/" .. d .. "/SHA256SUMS"), t.read(ROOT .. "/" .. d .. "/SHA256SUMS"),
      "SEAL=" .. d .. " remakes the committed SHA256SUMS")
  end
  local bad, bcode = t.ftrun_run("claims.lua SEAL=results/numa ROOT=" .. q(dir))
  t.is(bcode, 2, "SEAL= naming no published kind's directory: exit 2")
  t.like(bad, "SEAL=results/numa: expected a published kind's directory (results, results/pvm)", "naming the value")
  replace("results/pvm/raw.txt", "hold 2 % of the", "hold 20 % of the")
  t.ftrun_run("claims.lua SEAL=results/pvm ROOT=" .. q(dir))
  local out, code = check(dir)
  t.is(code, 1, "a kind sealed again over data the prose was not vetted against: CHECK=1 exits 1")
  t.like(out, "results/pvm/SHA256SUMS: the published files changed since the prose was vetted against them",
    "saying the prose must be read against them")
  restore()
end

do -- every edit undone
  local out, code = check(dir)
  t.is(code, 0, "every edit undone: the copy checks clean", out)
end

do -- a run made now needs no pin: its JSON makes every line of its raw file's head, and its samples' figures
  local fresh = t.tmpdir()
  local out, code = t.ftrun_run("cycles.lua QUICK=1 MIB=4 REPS=2 CYCLES=AC RESULTS=" .. q(fresh))
  t.is(code, 0, "a quick run with cycle C", out)
  local json = require "json"
  local raw, doc = t.read(fresh .. "/quick-raw.txt") or "", json.decode(t.read(fresh .. "/quick-results.json") or "{}")
  t.is(table.concat(claims.raw_unmade(raw, doc), "\n"), "", "its JSON makes its raw file's head, knobs and verdict")
  local cycles = require "reports.cycles"
  local bytes = t.read(fresh .. "/quick-C-pass1-samples.i32") or ""
  t.like(t.read(fresh .. "/quick-C-pass1-samples.i32.txt") or "", "sha256: " .. require("textfile").sha256(bytes),
    "its samples' sidecar holds their hash")
  t.is((doc.attached or {})["quick-C-pass1-samples.i32"], require("textfile").sha256(bytes),
    "and its results.json keeps it, so no pin is needed")
  local figures, last = cycles.sample_figures(cycles.unpack_samples(bytes), doc.knobs.SLOW_NS), nil
  for _, c in ipairs(doc.reps) do if c.case == "C" then last = c.records[#c.records] end end
  t.is(figures.median_page .. " " .. table.concat(figures.hist, ","), last.pass1_median_page .. " "
    .. table.concat(last.pass1_hist, ","), "the samples give the last record's figures again")
  os.execute("rm -rf " .. q(fresh))
end

os.execute("rm -rf " .. q(dir))
t.done()
