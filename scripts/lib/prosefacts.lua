-- The figures a person may type in the documents' prose, outside the blocks
-- claims.lua makes: each phrase with the check that keeps it true against
-- the code, the build, the runs or the history it quotes. claims.hand_numbers
-- takes a vetted phrase out of a line before it looks for a digit or a
-- number word, so any other figure, or a vetted one changed by hand, fails.
--
-- A check is function(ctx, phrase) -> nil, or what is wrong. ctx gives:
-- ctx.root, ctx.source(path) (a tracked file's text), ctx.knob(script, name)
-- (the knob's --help line), ctx.runner (the runner's --help) and
-- ctx.show(commit, path) (a file at a commit of the checkout ftrun runs
-- from: the history a quote is checked against).
local prosefacts = {}

local function squash(s) return (s or ""):gsub("%s+", " ") end
local function has(text, literal) return squash(text):find(squash(literal), 1, true) ~= nil end

-- The phrase appears in `path` as it stood at `commit` (a withdrawn claim quoted).
local function quoted(commit, path)
  return function(ctx, phrase)
    local text = ctx.show(commit, path)
    if not text then return ("cannot read %s at %s (a shallow clone?)"):format(path, commit) end
    if not has(text, phrase) then return ("%s at %s does not say it"):format(path, commit) end
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

local function commit_exists(ctx, phrase)
  if not ctx.show(phrase, "Makefile") then return "no commit " .. phrase .. " in the checkout's history" end
end

local USAGE = runner("2 usage error")

-- Words with a number in them that state no figure.
prosefacts.NOT_FIGURES = { "double-counted", "double quote", ".TH FTRUN 1" }

prosefacts["README.md"] = {
  { "Lua 5.4", lua_version },
  { "-O2", source("Makefile", "-O2") },
  { "95 %", source("scripts/lib/stats.lua", "level = level or 0.95") },
  { "Two commands", function(ctx)
    local section = (ctx.source("README.md") or ""):match("\n## Two commands\n(.-)\n## ") or ""
    local n = 0
    for _ in section:gmatch("\n%$? ?make %a+") do n = n + 1 end
    if n ~= 2 then return ("the section shows %d make commands"):format(n) end
  end },
  { "four cycles", knob("cycles.lua", "CYCLES", "(default ABCD)") },
  { "64-bit word", source("core/kernels.c", "uint64_t") },
  { "two order statistics", source("scripts/lib/stats.lua", "Returns lo, hi, l, u, coverage") },
  { "above ten percent", source("scripts/lib/results.lua", "local CV_WARN, NOISY_WARN = 10,") },
  { "exit 2", source("Makefile", "exit 2") },
  { "two more default runs", source("Makefile", "REPEATS ?= 2") },
  { "two repeats", source("Makefile", "REPEATS ?= 2") },
  { "four loopback hosts", source("Makefile", "(four hosts node1..node4") },
  { "ftrun.1", file_exists },
}

prosefacts["CHANGELOG.md"] = {
  { "600 ns", quoted("039bcf7", "README.md") },
  { "980 ns", quoted("039bcf7", "README.md") },
  { "1.7 µs", quoted("039bcf7", "README.md") },
  { "1.03 times", quoted("039bcf7", "README.md") },
  { "1.85", quoted("8d72e27", "README.md") },
  { "a fifth", quoted("039bcf7", "README.md") },
  { "about 260 µs", quoted("039bcf7", "README.md") },
  { "4 KiB", X86_PAGES },
  { "2 MiB", X86_PAGES },
  { "took 512", X86_PAGES },
  { "70 µs", quoted("039bcf7", "README.md") },
  { "0.46", quoted("5a842ab", "README.md") },
  { "3.6 %", quoted("8d72e27", "README.md") },
  { "about 20 % more", quoted("039bcf7", "README.md") },
  { "0.5 to 10 s", quoted("039bcf7", "README.md") },
  { "in all three runs", quoted("8d72e27", "README.md") },
  { "0.57 s", quoted("8d72e27", "README.md") },
  { "596 ms", quoted("8d72e27", "README.md") },
  { "between 126 and 310", quoted("8d72e27", "README.md") },
  { "155", quoted("5a842ab", "README.md") },
  { "about 5 % dearer", quoted("ed82e2f", "scripts/lib/harness.lua") },
  { "ed82e2f", commit_exists },
  { "a fifth to a half", quoted("10bb9ee", "README.md") },
  { "10 kHz", quoted("10bb9ee", "README.md") },
  { "has three repetitions", source("results/exp-coldness-raw.txt", "knobs: MIB=256 REPS=3 ") },
  { "at most 250 lines", function(ctx)
    local _, n = (ctx.source("README.md") or ""):gsub("\n", "")
    if n > 250 then return ("README.md has %d lines"):format(n) end
  end },
  { "exit 2", USAGE },
  { "ten-minute budget", source("bench/bench.lua", "local BUDGET_S = 510") },
}

prosefacts["doc/ftrun.1"] = {
  { "ftrun 0.1.0", function(_, phrase)
    local ft = require "ft"
    if phrase ~= "ftrun " .. ft.version then return "the runner is ftrun " .. ft.version end
  end },
  { "Lua 5.4", lua_version },
  { "exit status 2", USAGE },
  { "exits 2", USAGE },
  { "cut after 100 bytes", source("scripts/lib/knobs.lua", "so a 100 KB AB stays short") },
  { ".B 0", runner("0 success") },
  { ".B 1", runner("1 Lua error") },
  { ".B 2", USAGE },
  { ".B 130", runner("130 interrupted") },
  { ".B 128+N", runner("128+N stopped by signal N") },
  { "143 for SIGTERM", signal_exit },
  { "129 for SIGHUP", signal_exit },
  { "131 for SIGQUIT", signal_exit },
  { "141", function(ctx) return signal_exit(ctx, "141 for SIGPIPE") end },
  { "0600, in a 0700 directory", source("core/restore.c", "(made 0700 when missing") },
}

prosefacts["results/README.md"] = {
  { "three significant digits", function()
    if require("claims").round(2271.6258) ~= "2270" then return "claims.round keeps other digits" end
  end },
}

prosefacts["bench/README.md"] = {
  { "within ten minutes", source("bench/bench.lua", "local BUDGET_S = 510") },
  { "two touches", source("bench/bench.lua", "(map, first touch, second touch, unmap)") },
  { "in three rounds", source("bench/bench.lua", "local FULL_ROUNDS, OWN_TARGET_PCT = 3,") },
  { "fifth within two", source("bench/bench.lua", "less than two standard errors") },
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

-- What is wrong with a file's vetted phrases: one no longer in it, or one
-- whose check fails.
function prosefacts.problems(file, text, ctx)
  local out = {}
  for _, f in ipairs(prosefacts[file] or {}) do
    if not has(text, f[1]) then
      out[#out + 1] = ("%s: the vetted phrase %q is no longer there (scripts/lib/prosefacts.lua)"):format(file, f[1])
    else
      local why = f[2](ctx, f[1])
      if why then out[#out + 1] = ("%s: %q is not true: %s"):format(file, f[1], why) end
    end
  end
  return out
end

return prosefacts
