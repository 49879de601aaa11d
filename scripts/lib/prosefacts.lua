-- The figures a person may type in the documents' prose, outside the blocks
-- claims.lua makes: each phrase with the check that keeps it true against
-- the code, the build, the runs or the history it quotes. claims.hand_numbers
-- takes a vetted phrase out of a line before it looks for a digit or a
-- number word, so any other figure, or a vetted one changed by hand, fails.
--
-- A check is function(ctx, phrase, file) -> nil, or what is wrong. ctx gives:
-- ctx.root, ctx.source(path) (a tracked file's text), ctx.knob(script, name)
-- (the knob's --help line), ctx.runner (the runner's --help) and
-- ctx.show(commit, path) (a file at a commit of the checkout ftrun runs
-- from: the history a quote is checked against), ctx.dates(path, literal)
-- (the days of that history's commits that added or removed literal),
-- ctx.round (the claims' rounding) and ctx.ftrun (the runner, quoted for a
-- shell).
local prosefacts = {}

local function squash(s) return (s or ""):gsub("%s+", " ") end
local function has(text, literal) return squash(text):find(squash(literal), 1, true) ~= nil end

-- Whether the phrase stands in the text as a whole figure (not "155" in
-- "0.155") with `word` within `window` characters of it, whitespace
-- squashed.
local function near(text, phrase, word, window)
  text = squash(text)
  local from = 1
  while true do
    local s, e = text:find(phrase, from, true)
    if not s then return false end
    local whole = not text:sub(s - 1, s - 1):match("[%d%.]") and not text:sub(e + 1, e + 1):match("%d")
    if whole and (not word or text:sub(math.max(1, s - window), e + window):find(word, 1, true)) then return true end
    from = e + 1
  end
end

-- The phrase appears in `path` as it stood at `commit` (a withdrawn claim
-- quoted); with `word`, near that word there (within a sentence's reach)
-- and next to it in the vetting file, so two quoted figures swapped, even
-- within one sentence, do not pass.
local NEAR_THERE, NEAR_HERE = 80, 15
local function quoted(commit, path, word)
  return function(ctx, phrase, file)
    local text = ctx.show(commit, path)
    if not text then return ("cannot read %s at %s (a shallow clone?)"):format(path, commit) end
    if not near(text, phrase, word, NEAR_THERE) then
      return ("%s at %s does not say it%s"):format(path, commit, word and (" near %q"):format(word) or "")
    end
    if word and not near(ctx.source(file) or "", phrase, word, NEAR_HERE) then
      return ("it is not near %q here, as %s at %s has it"):format(word, path, commit)
    end
  end
end

-- A tracked file holds the literal (a constant the phrase states in words).
local function source(path, literal)
  return function(ctx)
    local text = ctx.source(path)
    if not text then return path .. " cannot be read" end
    if not has(text, literal) then return ("%s no longer holds %q"):format(path, literal) end
  end
end

-- A script's knob says it in its --help.
local function knob(script, name, literal)
  return function(ctx)
    local text = ctx.knob(script, name)
    if not text then return ("%s has no knob %s"):format(script, name) end
    if not has(text, literal) then return ("%s %s's help no longer says %q"):format(script, name, literal) end
  end
end

-- The runner's --help says it.
local function runner(literal)
  return function(ctx)
    if not has(ctx.runner, literal) then return ("ftrun --help no longer says %q"):format(literal) end
  end
end

local function lua_version(_, phrase)
  if not phrase:find(_VERSION, 1, true) then return "the runner embeds " .. _VERSION end
end

-- "143 for SIGTERM": 128 plus the signal's number on this system.
local function signal_exit(ctx, phrase)
  local code, name = phrase:match("^(%d+) for (SIG%u+)")
  local p = io.popen("bash -c 'kill -l " .. name:sub(4) .. "' 2>/dev/null")
  local n = p and tonumber(p:read("a"))
  if p then p:close() end
  if not n or 128 + n ~= tonumber(code) then return ("%s is signal %s here"):format(name, tostring(n)) end
  return runner(code .. " " .. name)(ctx)
end

-- This machine's base and PMD page sizes, which the prose names as x86-64's.
local function page_sizes(base, pmd)
  return function()
    local m = require("ft").machine()
    if m.page_size ~= base or m.thp_pmd_size ~= pmd then
      return ("pages here are %s and %s bytes"):format(tostring(m.page_size), tostring(m.thp_pmd_size))
    end
  end
end
local X86_PAGES = page_sizes(4096, 2097152)

local function file_exists(ctx, phrase)
  if not ctx.source("doc/" .. phrase) then return "doc/" .. phrase .. " is not in the tree" end
end


local USAGE = runner("2 usage error")

-- ".B N" in EXIT STATUS: the runner's --help gives N the same meaning
-- (its words, found in the line under the man page's ".B N").
local function exit_status(words, man_words)
  man_words = man_words or words
  return function(ctx, phrase)
    local code = phrase:match("^%.B (%d+)$")
    local why = runner(code .. " " .. words)(ctx)
    if why then return why end
    local under = (ctx.source("doc/ftrun.1") or ""):match("\n%.B " .. code .. "\n([^\n]*)")
    if not (under and under:lower():find(man_words:lower(), 1, true)) then
      return ("the line under .B %s does not say %q"):format(code, man_words)
    end
  end
end

-- The value echoed in a refusal: one as long as the phrase's limit is
-- kept whole, one byte longer is cut to the phrase's first bytes.
local function shown_cut(_, phrase)
  local limit, first = phrase:match("longer than (%d+) bytes cut to its first (%d+)")
  local shown = require("knobs").shown
  limit, first = tonumber(limit), tonumber(first)
  if shown(("x"):rep(limit)) ~= ("x"):rep(limit) then return "a value of " .. limit .. " bytes is cut" end
  local cut = shown(("x"):rep(limit + 1))
  if cut:match("^x*") ~= ("x"):rep(first) then return ("a longer value keeps %d bytes"):format(#cut:match("^x*")) end
end

-- "4 a side are the fewest that can reach p < 0.05": compare.lua's
-- default level, and its rank test on two fully separated sides.
local function fewest_runs(ctx, phrase)
  local n, alpha = phrase:match("^(%d+) a side are the fewest that can reach p < ([%d%.]+)$")
  n, alpha = tonumber(n), tonumber(alpha)
  if not has(ctx.knob("compare.lua", "ALPHA") or "", ("(default %s)"):format(alpha)) then
    return "compare.lua's ALPHA is not " .. alpha .. " by default"
  end
  local mw = require("stats").mann_whitney
  local function side(k, from) local t = {} for i = 1, k do t[i] = from + i end return t end
  if not (mw(side(n, 0), side(n, n)) < alpha and mw(side(n - 1, 0), side(n - 1, n)) >= alpha) then
    return "the rank test's fewest runs a side for that level differ"
  end
end

-- "the argument wins": a knob given both ways is read from the argument
-- (a bad value in each: the refusal names the argument's).
local function argument_wins(ctx)
  -- an empty environment but the one knob: the caller's own knobs would be refused first
  local p = io.popen(("env -i PATH=\"$PATH\" MIB=from-env %s cycles.lua MIB=from-arg 2>&1"):format(ctx.ftrun))
  local said = p:read("a")
  p:close()
  if not said:find("MIB=from-arg", 1, true) then return "a knob in both places: " .. squash(said) end
end

-- "the calibration of a smaller run": its buffer below cycles.lua's default.
local function calibrated_smaller(ctx)
  local default = tonumber((ctx.knob("cycles.lua", "MIB") or ""):match("default (%d+)"))
  local ok, cal = pcall(require("json").decode, ctx.source("results/calibration-cycles.json") or "")
  local mib = ok and type(cal) == "table" and type(cal.knobs) == "table" and cal.knobs.MIB
  if not (default and mib and mib < default) then
    return ("the calibration's MIB %s against the default %s"):format(tostring(mib), tostring(default))
  end
end

-- "no difference is shown" for the shared mapping: at every thread count
-- its interval and a mapping per thread's overlap, in per-thread time and
-- wall time alike.
local function scaling_overlaps(ctx)
  local ok, d = pcall(require("json").decode, ctx.source("results/exp-scaling-results.json") or "")
  if not (ok and type(d) == "table" and type(d.rows) == "table") then return "no scaling run to read" end
  local by, pairs_seen = {}, 0
  for _, r in ipairs(d.rows) do by[r.case .. "|" .. r.column] = r end
  for _, r in ipairs(d.rows) do
    local n = r.case:match("^(%d+) thread%(s%), one shared mapping$")
    local o = n and by[("%s thread(s), a mapping per thread|%s"):format(n, r.column)]
    if o and (r.column == "per_thread" or r.column == "wall") then
      pairs_seen = pairs_seen + 1
      if r.lo > o.hi or o.lo > r.hi then return ("%s, %s: the intervals do not overlap"):format(r.case, r.column) end
    end
  end
  if pairs_seen == 0 then return "the scaling run has no shared and per-thread rows to compare" end
end

-- "two order statistics": the median's interval is two of the sorted
-- values themselves, at ranks l and n + 1 - l.
local function order_statistics()
  local xs = {}
  for i = 1, 25 do xs[i] = 1000 + 7 * ((i * 11) % 25) end -- 25 distinct values, not in order
  local lo, hi, l, u = require("stats").median_ci(xs)
  local sorted = { table.unpack(xs) }
  table.sort(sorted)
  if not (l and u and lo == sorted[l] and hi == sorted[u] and u == #xs + 1 - l) then
    return "stats.median_ci's bounds are not the sorted values at ranks l and n + 1 - l"
  end
end

-- "four loopback hosts": the hosts fleet-check's A/A run names.
local function fleet_hosts(ctx, phrase)
  local a, b = (ctx.source(".ci/fleet-check") or ""):match("HOSTS='node%[(%d+)%-(%d+)%]' RUNS=3")
  local words = { "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten" }
  local n = a and tonumber(b) - tonumber(a) + 1
  if not (n and phrase:match("^(%a+)") == words[n]) then
    return (".ci/fleet-check's A/A run names %s hosts"):format(tostring(n))
  end
end

-- The man page's date is the day a commit wrote its .TH line.
local function man_date(ctx, phrase)
  for _, d in ipairs(ctx.dates("doc/ftrun.1", ".TH FTRUN 1 " .. phrase)) do
    if d == phrase then return nil end
  end
  return "no commit of that day wrote the .TH line (git log -S)"
end

-- "the <day> runs": the published default runs in results/ (a kind's
-- home) were made that day.
local function runs_dated(ctx, phrase)
  local json = require "json"
  local ok, doc = pcall(json.decode, ctx.source("results/results.json") or "")
  local date = ok and type(doc) == "table" and type(doc.date) == "string" and doc.date:sub(1, 10)
  if date ~= phrase then return ("results/results.json was made on %s"):format(tostring(date)) end
end

-- Words with a number in them that state no figure.
prosefacts.NOT_FIGURES = { "double-counted", "double quote", ".TH FTRUN 1", "listed once", "once over the",
  "more than once", "removed once restored", "zero page", "zero-page", "zeroes" }

prosefacts["README.md"] = {
  { "Lua 5.4", lua_version },
  { "-O2", source("Makefile", "-O2") },
  { "95 %", source("scripts/lib/stats.lua", "level = level or 0.95") },
  { "(64 MiB, 5 reps)", knob("cycles.lua", "QUICK", "64 MiB and 5 reps") },
  { "keeps to 200 columns", source("scripts/lib/display.lua", "display.WIDTH = 200") },
  { "4 a side are the fewest that can reach p < 0.05", fewest_runs },
  { "Two commands", function(ctx)
    local section = (ctx.source("README.md") or ""):match("\n## Two commands\n(.-)\n## ") or ""
    local n = 0
    for _ in section:gmatch("\n%$? ?make %a+") do n = n + 1 end
    if n ~= 2 then return ("the section shows %d make commands"):format(n) end
  end },
  { "four cycles", knob("cycles.lua", "CYCLES", "(default ABCD)") },
  { "64-bit word", source("core/kernels.c", "void ft_fill(uint64_t *p, size_t first, size_t count, uint64_t k)") },
  { "two order statistics", order_statistics },
  { "above ten percent", source("scripts/lib/results.lua", "local CV_WARN, NOISY_WARN = 10,") },
  { "exit 2", source("Makefile", "exit 2"), n = 2 },
  { "two more default runs", source("Makefile", "REPEATS ?= 2") },
  { "two repeats", source("Makefile", "REPEATS ?= 2") },
  { "four loopback hosts", fleet_hosts },
  { "ftrun.1", file_exists },
}

prosefacts["CHANGELOG.md"] = {
  { "2026-12-03", runs_dated },
  { "600 ns", quoted("039bcf7", "README.md", "trap") },
  { "980 ns", quoted("039bcf7", "README.md", "zero") },
  { "1.7 µs", quoted("039bcf7", "README.md", "allocat") },
  { "1.03 times", quoted("039bcf7", "README.md", "malloc") },
  { "1.85", quoted("8d72e27", "README.md", "median"), n = 2 },
  { "a fifth", quoted("039bcf7", "README.md", "4 KiB") },
  { "about 260 µs", quoted("039bcf7", "README.md", "fault") },
  { "4 KiB", X86_PAGES, n = 3 },
  { "2 MiB", X86_PAGES, n = 2 },
  { "took 512", X86_PAGES },
  { "70 µs", quoted("039bcf7", "README.md") },
  { "0.46", quoted("5a842ab", "README.md") },
  { "3.6 %", quoted("8d72e27", "README.md") },
  { "about 20 % more", quoted("039bcf7", "README.md") },
  { "0.5 to 10 s", quoted("039bcf7", "README.md") },
  { "in all three runs", quoted("8d72e27", "README.md"), n = 2 },
  { "0.57 s", quoted("8d72e27", "README.md", "bring") },
  { "596 ms", quoted("8d72e27", "README.md") },
  { "between 126 and 310", quoted("8d72e27", "README.md") },
  { "155", quoted("8d72e27", "README.md", "seed") },
  { "about 5 % dearer", quoted("ed82e2f", "scripts/lib/harness.lua") },
  { "a fifth to a half", quoted("10bb9ee", "README.md") },
  { "10 kHz", quoted("10bb9ee", "README.md") },
  { "has three repetitions", source("results/exp-coldness-raw.txt", "knobs: MIB=256 REPS=3 ") },
  { "at most 250 lines", function(ctx)
    local _, n = (ctx.source("README.md") or ""):gsub("\n", "")
    if n > 250 then return ("README.md has %d lines"):format(n) end
  end },
  { "exit 2", USAGE },
  { "ten-minute budget", source("bench/bench.lua", "local BUDGET_S = 510") },
  { "was slower still", quoted("8d72e27", "README.md") },
  { "no difference is shown", scaling_overlaps },
  { "the sampled ns/page are dearer", source("scripts/attribution.lua", "The ns/page are with sampling on, dearer") },
}

prosefacts["doc/ftrun.1"] = {
  { "2026-12-03", man_date },
  { "the argument wins", argument_wins },
  { "ftrun 0.1.0", function(_, phrase)
    local ft = require "ft"
    if phrase ~= "ftrun " .. ft.version then return "the runner is ftrun " .. ft.version end
  end },
  { "Lua 5.4", lua_version },
  { "exit status 2", USAGE, n = 2 },
  { "exits 2", USAGE },
  { "one longer than 120 bytes cut to its first 100", shown_cut },
  { ".B 0", exit_status("success") },
  { ".B 1", exit_status("Lua error") },
  { ".B 2", exit_status("usage error") },
  { ".B 130", exit_status("interrupted (SIGINT", "interrupted by SIGINT") },
  { ".B 128+N", runner("128+N stopped by signal N") },
  { "143 for SIGTERM", signal_exit },
  { "129 for SIGHUP", signal_exit },
  { "131 for SIGQUIT", signal_exit },
  { "141 for SIGPIPE", signal_exit },
  { "0600, in a 0700 directory", function(ctx)
    return source("core/restore.c", "O_NONBLOCK | O_CLOEXEC, 0600)")(ctx)
      or source("core/restore.c", "mkdir(path, 0700)")(ctx)
  end },
}

prosefacts["results/README.md"] = {
  { "ran once", function(ctx)
    -- no experiment's run is repeated: every published repeat is a default run of cycles.lua
    for _, d in ipairs(require("shell").list(ctx.root .. "/results/repeats", "^%d")) do
      local text = ctx.source(("results/repeats/%s/results.json"):format(d)) or ""
      if not text:find('"script":"cycles.lua"', 1, true) then
        return "results/repeats/" .. d .. " is not cycles.lua's"
      end
    end
  end },
  { "of a smaller run", calibrated_smaller },
  { "Every page slower than", knob("slowpages.lua", "SLOW_NS", "") },
  { "three significant digits", function(ctx)
    if ctx.round(2271.6258) ~= "2270" or ctx.round(0.0637101) ~= "0.0637" then return "the claims round otherwise" end
  end },
}

prosefacts["bench/README.md"] = {
  { "within ten minutes", source("bench/bench.lua", "local BUDGET_S = 510") },
  { "both top fives", source("bench/bench.lua", 'say("   the top five: %s"') },
  { "whether 1.00 lies inside it", source("bench/bench.lua", "1.00") },
  { "two touches", source("bench/bench.lua", "(map, first touch, second touch, unmap)") },
  { "in three rounds", source("bench/bench.lua", "local FULL_ROUNDS, OWN_TARGET_PCT = 3,") },
  { "fifth within two", source("bench/bench.lua", "less than two standard errors") },
  { "no difference shown", source("bench/bench.lua", '"1.00 inside: no difference shown"') },
  { "a default run with a smaller", source("bench/bench.lua", "local FULL_MIB = largest_within({ 1024, 512,") },
}

-- The phrases vetted for a file: its own and the words that state no figure.
function prosefacts.phrases(file)
  local out = {}
  for _, f in ipairs(prosefacts[file] or {}) do out[#out + 1] = f[1] end
  for _, p in ipairs(prosefacts.NOT_FIGURES) do out[#out + 1] = p end
  -- the longest first, so "a fifth" does not cut "a fifth to a half" short
  table.sort(out, function(a, b) return #a > #b end)
  return out
end

-- What is wrong with a file's vetted phrases: one no longer in its prose,
-- or in it more often than vetted (f.n, default once: a vetted figure
-- reused elsewhere would pass unchecked), or one whose check fails.
-- seen: how often claims.hand_numbers took each out of the prose.
function prosefacts.problems(file, seen, ctx)
  local out = {}
  for _, f in ipairs(prosefacts[file] or {}) do
    local n = seen[f[1]] or 0
    if n == 0 then
      out[#out + 1] = ("%s: the vetted phrase %q is no longer there (scripts/lib/prosefacts.lua)"):format(file, f[1])
    elseif n ~= (f.n or 1) then
      out[#out + 1] = ("%s: the vetted phrase %q is there %d times, vetted for %d (scripts/lib/prosefacts.lua)")
        :format(file, f[1], n, f.n or 1)
    else
      local why = f[2](ctx, f[1], file)
      if why then out[#out + 1] = ("%s: %q is not true: %s"):format(file, f[1], why) end
    end
  end
  return out
end

return prosefacts
