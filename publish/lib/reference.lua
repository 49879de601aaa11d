-- README's layout block and sample output, and the man page's SCRIPTS,
-- OPTIONS and EXAMPLES, from the tree: git ls-files, every script's --help
-- (the scripts present, so a new script is in the man page after make docs)
-- and the runner's --help.
local ev = require "evidence"
local shell = require "shell"
local ls, sh = shell.list, shell.quote

local reference = {}


-- Each directory's one line; a directory missing here fails the check, so
-- a new one gets its description when it gets its first file.
reference.DIRS = {
  ["."] = "the build, the tests' and lint's configuration, and the documents",
  [".ci"] = "what CI runs",
  bench = "`make bench`: the C reference and the script that compares the runner against it",
  core = "the measured C, no Lua, the only code that calls mmap; one header per module",
  doc = "the man page and the `ft` module's reference",
  publish = "the maintainers' wing, not installed: `make docs` writes every generated page and block, "
    .. "`make docs-check` diffs them",
  ["publish/lib"] = "the registry of generated files and the functions that make them from the committed runs",
  ["numa/lib"] = "numa/check.lua's table of the guest's page counts",
  numa = "`make numa`: a qemu guest with several NUMA nodes that runs placement.lua and checks its claims",
  runner = "the executable: arguments, the Lua state, the REPL, one file per group of bindings",
  scripts = "the benchmark (`cycles.lua`), the experiments, and the tools that read results",
  ["scripts/lib"] = "the Lua the scripts share: harness, knobs, statistics, reports, plots, files, provenance",
  ["scripts/lib/reports"] = "each script's presentation: its tables, plots and findings, found by the script's name",
  ["scripts/lib/explain"] = "what the explanation experiments share: the account of a first touch from the floor up",
  tests = "the TAP suite, one file per subject, run by `make test`",
  ["tests/lib"] = "the tests' helpers",
  ["tests/fuzz"] = "the API fuzz (`make fuzz`)",
}

-- The tracked files outside results/, by directory; results/ in one line.
function reference.layout(root)
  local files = ev.lines("git -C " .. sh(root) .. " ls-files 2>/dev/null")
  if #files == 0 then error("publish: " .. root .. " is not a git checkout: the layout lists its tracked files", 0) end
  local by_dir, dirs = {}, {}
  for _, f in ipairs(files) do
    if not f:match("^results/") then
      local dir, name = f:match("^(.*)/([^/]+)$")
      dir, name = dir or ".", name or f
      if not by_dir[dir] then by_dir[dir] = {}; dirs[#dirs + 1] = dir end
      table.insert(by_dir[dir], name)
    end
  end
  table.sort(dirs)
  local out = { "```" }
  for _, dir in ipairs(dirs) do
    local names, seen = {}, {}
    for _, n in ipairs(by_dir[dir]) do -- core/x.c and core/x.h as x.{c,h}
      local stem = n:match("^(.+)%.c$")
      if stem and seen[stem .. ".h"] == nil and table.concat(by_dir[dir], "\0"):find(stem .. ".h", 1, true) then
        names[#names + 1] = stem .. ".{c,h}"
        seen[stem .. ".h"] = true
      elseif not seen[n] then
        names[#names + 1] = n
      end
    end
    local about = reference.DIRS[dir] or error(("publish: the layout has no description for the directory %s/ "
      .. "(add it to reference.DIRS in publish/lib/reference.lua)"):format(dir), 0)
    out[#out + 1] = ("%s  %s"):format(dir == "." and "./" or dir .. "/", about)
    local line = "    "
    for i, n in ipairs(names) do
      local piece = n .. (i < #names and ", " or "")
      if #line + #piece > 96 then out[#out + 1] = line:gsub("%s+$", ""); line = "    " end
      line = line .. piece
    end
    out[#out + 1] = line
  end
  out[#out + 1] = "results/  the published runs: raw files, summaries, JSON, plots with their data and gnuplot"
  out[#out + 1] = "    scripts, cycle C's samples, bench.txt, repeats/ (more default runs) and README.md"
  out[#out + 1] = "```"
  return table.concat(out, "\n")
end

local help_cache = {}
function reference.script_help(root, ftrun)
  if help_cache[root .. "\0" .. ftrun] then return help_cache[root .. "\0" .. ftrun] end
  local out = {}
  help_cache[root .. "\0" .. ftrun] = out
  for _, f in ipairs(ls(root .. "/scripts")) do
    if f:match("%.lua$") then
      -- stdout alone: a start-up warning on stderr is no part of the help
      local help = ev.lines(("%s %s --help 2>/dev/null"):format(ftrun, sh(root .. "/scripts/" .. f)))
      local s = { script = f, usage = help[1] or "", about = help[3], knobs = {} }
      local in_knobs = false
      for _, l in ipairs(help) do
        if l == "knobs:" then in_knobs = true
        elseif in_knobs and l:match("^  %u") then
          local name, text = l:match("^  ([%u%d_]+)%s+(.*)$")
          s.knobs[#s.knobs + 1] = { name, text }
        elseif l == "" then in_knobs = false end
      end
      out[#out + 1] = s
    end
  end
  return out
end

-- Text as roff input lines of at most 80 bytes, none starting with a control character.
local function roff(text)
  text = text:gsub("\\", "\\e"):gsub("%-", "\\-")
  local out, line = {}, ""
  for word in text:gmatch("%S+") do
    if line ~= "" and #line + 1 + #word > 80 then out[#out + 1] = line; line = word
    else line = line == "" and word or line .. " " .. word end
  end
  out[#out + 1] = line
  for i, l in ipairs(out) do
    if l:match("^[.']") then out[i] = "\\&" .. l end
  end
  return table.concat(out, "\n")
end

-- The man page's SCRIPTS section.
function reference.man_scripts(root, ftrun)
  local out = {}
  for _, s in ipairs(reference.script_help(root, ftrun)) do
    out[#out + 1] = ".SS " .. s.script
    if #s.knobs == 0 then
      out[#out + 1] = roff(s.usage:gsub("^usage: ", ""))
    else
      out[#out + 1] = roff(((s.about or ""):gsub("%.?$", ".", 1)))
      for _, k in ipairs(s.knobs) do
        out[#out + 1] = ".TP"
        out[#out + 1] = ".B " .. k[1]
        out[#out + 1] = roff(k[2])
      end
    end
  end
  return table.concat(out, "\n")
end

-- The man page's EXAMPLES, the sizes in their comments from cycles.lua's knobs.
function reference.man_examples(root, ftrun)
  local k = {}
  for _, s in ipairs(reference.script_help(root, ftrun)) do
    if s.script == "cycles.lua" then for _, x in ipairs(s.knobs) do k[x[1]] = x[2] end end
  end
  local mib, reps = (k.MIB or ""):match("%(default (%d+)%)"), (k.REPS or ""):match("%(default (%d+)%)")
  local quick_mib, quick_reps = (k.QUICK or ""):match("(%d+) MiB and (%d+) reps")
  if not (mib and reps and quick_mib) then error("publish: cycles.lua's --help gives no MIB, REPS or QUICK size", 0) end
  local function ex(command, comment)
    return comment and ("%-34s# %s"):format(command, comment) or command
  end
  return table.concat({ ".EX",
    ex("ftrun cycles.lua", ("the benchmark: %s MiB, %s repetitions"):format(mib, reps)),
    ex("ftrun cycles.lua QUICK=1", ("%s MiB, %s repetitions"):format(quick_mib, quick_reps)),
    ex("ftrun cycles.lua THP=always REPS=31"),
    ex("ftrun thp.lua \\-\\-help", "an experiment's knobs"),
    ex("ftrun compare.lua a.json b.json", "two runs, benchstat's way"),
    ex("ftrun compare.lua OLD/ \\-\\- NEW/", "several runs a side"),
    ex("ftrun \\-e \\(aqprint(ft.page_size())\\(aq"),
    ".EE" }, "\n")
end

-- The man page's OPTIONS, from the runner's --help: "  -e CODE      run CODE".
function reference.man_options(ftrun)
  local out, inside = {}, false
  for _, l in ipairs(ev.lines(ftrun .. " --help 2>/dev/null")) do
    if l == "options:" then inside = true
    elseif inside and l == "" then break
    elseif inside then
      local opt, text = l:match("^  (%S.-)%s%s+(%S.*)$")
      opt = opt or l:match("^  (%S.-)%s*$")
      local sentence = function(s) return roff(s:sub(1, 1):upper() .. s:sub(2) .. ".") end
      if opt then
        out[#out + 1] = ".TP"
        out[#out + 1] = ".B " .. opt:gsub("%-", "\\-")
        out[#out + 1] = text and sentence(text) or false -- its text on the next line
      elseif #out > 0 and not out[#out] then
        out[#out] = sentence(l:match("^%s*(.-)%s*$"))
      elseif #out > 0 then
        out[#out] = out[#out]:gsub("%.$", "") .. "\n" .. roff(l:match("^%s*(.-)%s*$") .. ".")
      end
    end
  end
  if #out == 0 then error("publish: the runner's --help lists no options", 0) end
  return table.concat(out, "\n")
end

-- The README's sample of `make run`: the published summary's title, first
-- table and headline lines (the summary as make docs makes it again).
function reference.run_output(summary)
  local text = summary
  local out, state = { "```" }, "title"
  for l in text:gmatch("[^\n]+") do
    if state == "title" then
      out[#out + 1] = l:gsub("%*%*", ""):gsub("%s+$", "")
      state = "table"
    elseif state == "table" and l:match("^|") then
      out[#out + 1] = l
    elseif state == "table" and #out > 3 then
      out[#out + 1] = "..."
      state = "rest"
    elseif state == "rest" and l:match("^Headline") then
      out[#out + 1] = l
      state = "headline"
    elseif state == "headline" then
      if not l:match("^%- ") then break end
      out[#out + 1] = l
    end
  end
  out[#out + 1] = "```"
  return table.concat(out, "\n")
end
return reference
