-- The documents against the code: every knob a script declares is in its
-- --help and in the man page, and nothing documented there is missing from
-- the code; every function and method the runner registers is in doc/ft.md;
-- the man page renders without warnings; the README keeps its shape (the
-- headline in the first 60 lines, `make test`).
local t = require "tap"
local q = t.quote

local ROOT = ft.project_dir
local MAN = t.read(ROOT .. "/doc/ftrun.1") or ""

-- What a script declares: its spec as knobs.read receives it, caught before
-- anything runs.
local HOOK = "local k = require 'knobs'; k.read = function(_, spec) "
  .. "for _, s in ipairs(spec) do io.write('DECLARED ', s.name, '\\n') end os.exit(0, true) end"

local function names(text, pattern)
  local out = {}
  for n in text:gmatch(pattern) do out[#out + 1] = n end
  return out
end

local function same(a, b)
  local sa, sb = table.concat(a, " "), table.concat(b, " ")
  if #a ~= #b then return false, sa .. " / " .. sb end
  local set = {}
  for _, x in ipairs(a) do set[x] = true end
  for _, y in ipairs(b) do if not set[y] then return false, sa .. " / " .. sb end end
  return true, sa
end

-- The man page's entry of one script: from its .SS line to the next .SS or .SH.
local function man_entry(script)
  local at = MAN:find("\n.SS " .. script .. "\n", 1, true)
  if not at then return nil end
  local rest = MAN:sub(at + 1)
  local stop = rest:find("\n%.S[SH] ")
  return stop and rest:sub(1, stop) or rest
end

local scripts = names(t.run("ls -1 " .. q(ROOT .. "/scripts")), "([%w_]+%.lua)\n")
t.ok(#scripts > 5, "scripts found", table.concat(scripts, " "))
for _, s in ipairs(scripts) do
  local path = q(ROOT .. "/scripts/" .. s)
  local declared_out = t.ftrun_run("-e " .. q(HOOK) .. " " .. path .. " </dev/null")
  local declared = names(declared_out, "DECLARED ([%u%d_]+)")
  local help, code = t.ftrun_run(path .. " --help")
  t.is(code, 0, s .. " --help exits 0")
  local entry = man_entry(s)
  local regenerate = "`make docs` regenerates the man page's SCRIPTS from every script's --help"
  t.ok(entry ~= nil, s .. " has an entry in the man page's SCRIPTS", regenerate)
  entry = entry or ""
  if #declared > 0 then
    local in_help = {}
    for l in (((help .. "\n\n"):match("\nknobs:\n(.-)\n\n") or "") .. "\n"):gmatch("([^\n]*)\n") do
      in_help[#in_help + 1] = l:match("^  ([%u%d_]+)%s")
    end
    t.ok(same(declared, in_help), s .. ": --help lists exactly the knobs it declares", select(2, same(declared, in_help)))
    local in_man = names(entry, "\n%.B ([%u%d_]+)\n")
    t.ok(same(declared, in_man), s .. ": the man page lists exactly the knobs it declares",
      tostring(select(2, same(declared, in_man))) .. "\n" .. regenerate)
  else
    -- a script with its own arguments: its usage line is its documentation
    local usage = (help:match("^usage: ([^\n]*)") or ""):gsub("%s+", " ")
    t.ok(usage ~= "", s .. ": --help gives a usage line")
    local flat = entry:gsub("\n", " "):gsub("\\%-", "-"):gsub("\\e", "\\"):gsub("\\&", ""):gsub("%s+", " ")
    t.ok(flat:find(usage, 1, true) ~= nil, s .. ": the man page has its usage line", flat .. "\n" .. regenerate)
  end
end

do -- every knob the man page names under SCRIPTS belongs to a script that has it
  local section = MAN:match("\n%.SH SCRIPTS\n(.-)\n%.SH ") or ""
  t.ok(#section > 0, "the man page has a SCRIPTS section")
  local listed = {}
  for s in section:gmatch("\n?%.SS ([%w_]+%.lua)\n") do listed[#listed + 1] = s end
  t.ok(same(listed, scripts), "it has an entry for every script and no other", select(2, same(listed, scripts)))
  for name, owners in pairs(require("knobs").elsewhere) do
    for _, owner in ipairs(owners) do
      t.like(man_entry(owner) or "", "\n.B " .. name .. "\n", ("the man page gives %s under %s"):format(name, owner))
    end
  end
end

do -- every function and method the runner registers is named in doc/ft.md
  -- Registered: each entry of a luaL_Reg table in runner/*.c (a table named
  -- `functions` goes into ft, one named `methods` is a type's methods, one
  -- named `meta` holds metamethods), and each C function pushed and set
  -- straight into the table being opened (ft). Named: `ft.NAME` for a
  -- function, `:NAME` for a method (a method shared by several types, such
  -- as close, is named once for all of them).
  local REFERENCE = t.read(ROOT .. "/doc/ft.md") or ""
  -- Deliberate exceptions. Metamethods are documented by what they do
  -- (`#s`, `s[i] = v`, `local b <close> = ...`, "__gc is __close"), not as names.
  local METAMETHODS = { __gc = true, __close = true, __tostring = true, __index = true,
    __newindex = true, __len = true }
  -- Set into another table than ft: Lua's own os.execute and a task's os.exit,
  -- replaced (the man page and the Tasks section say how they differ).
  local ELSEWHERE = { ["ft_aux.c execute"] = true, ["task.c exit"] = true }
  local registered, missing, seen_elsewhere = {}, {}, {}
  for file in t.run("ls -1 " .. q(ROOT .. "/runner")):gmatch("([%w_]+%.c)\n") do
    local src = t.read(ROOT .. "/runner/" .. file) or ""
    local function add(kind, name)
      if METAMETHODS[name] then return end
      if ELSEWHERE[file .. " " .. name] then seen_elsewhere[file .. " " .. name] = true return end
      registered[#registered + 1] = name
      local named = kind == "function" and "ft%." .. name .. "%f[^%w_]" or ":" .. name .. "%f[^%w_]"
      if not REFERENCE:find(named) then
        missing[#missing + 1] = (kind == "function" and "ft." or ":") .. name .. " (" .. file .. ")"
      end
    end
    for table_name, body in src:gmatch("luaL_Reg%s+([%w_]+)%[%]%s*=%s*(%b{})") do
      local kind = ({ functions = "function", methods = "method", meta = "metamethod" })[table_name]
      t.ok(kind ~= nil, file .. ": luaL_Reg " .. table_name .. " is named functions, methods or meta",
        "the check reads what a table holds from its name")
      for name in body:gmatch('{%s*"([%w_]+)"') do add(kind or "function", name) end
    end
    for name in src:gmatch('lua_pushcfunction%(L, [%w_]+%);%s*lua_setfield%(L, %-2, "([%w_]+)"%)') do
      add("function", name)
    end
  end
  t.ok(#registered > 60, "the runner's registrations are found", tostring(#registered))
  t.is(table.concat(missing, ", "), "", "doc/ft.md names every function and method the runner registers")
  for key in pairs(ELSEWHERE) do
    t.ok(seen_elsewhere[key], "the exception " .. key .. " is still registered")
  end
end

do -- it renders without warnings
  local out, code = t.run("groff -ww -man -z " .. q(ROOT .. "/doc/ftrun.1"))
  t.is(code, 0, "groff -ww -man exits 0")
  t.is(out, "", "and warns about nothing")
  local text = t.run("groff -man -Tutf8 " .. q(ROOT .. "/doc/ftrun.1") .. " 2>/dev/null | col -bx")
  t.ok(not text:find("ftrun claims", 1, true), "its generated blocks' markers are comments, not text")
  for opt in (t.run(q(t.ftrun) .. " --help"):match("\noptions:\n(.-)\n\n") or ""):gmatch("\n?  (%-%S*)") do
    t.like(text, opt, "the man page shows the option " .. opt)
  end
  if os.execute("command -v mandoc >/dev/null 2>&1") then
    out, code = t.run("mandoc -T lint " .. q(ROOT .. "/doc/ftrun.1"))
    t.is(code, 0, "mandoc -T lint exits 0")
    t.is(out, "", "and reports nothing")
  else
    t.ok(true, "mandoc -T lint # SKIP mandoc is not installed")
  end
end

do -- the README's shape
  local readme = t.read(ROOT .. "/README.md") or ""
  local n, headline_at = 0, nil
  for l in readme:gmatch("([^\n]*)\n") do
    n = n + 1
    if not headline_at and l:match("%*%*[%d.]+ %[[%d.]+, [%d.]+%] ns%*%*") then headline_at = n end
  end
  t.ok(headline_at and headline_at <= 60, "the headline figure is in its first 60 lines", tostring(headline_at))
  t.like(readme, "\n```sh\nmake run ", "the first command is make run")
  t.like(readme, "\nmake test    #", "and the test command is exactly make test")
  for _, doc in ipairs { "results/README.md", "bench/README.md", "doc/ft.md", "doc/ftrun.1", "CHANGELOG.md" } do
    t.like(readme, "(" .. doc .. ")", "README links " .. doc)
    t.ok(t.read(ROOT .. "/" .. doc) ~= nil, doc .. " exists")
  end
end

do -- what the documents say about outputs, exits and comparing agrees with what ftrun does
  local readme = t.read(ROOT .. "/README.md") or ""
  t.ok(readme:find("\n%./ftrun compare%.lua [^\n]* %-%- ") ~= nil, "README shows a compare.lua command line")
  t.like(readme, "`quick-raw.txt`", "README names a QUICK run's files as written")
  t.like(readme, "`results/runs/latest-<script>`", "README explains the latest-<script> links")
  t.like(readme, "PREFIX/share/doc/ftrun", "README says where make install puts doc/ft.md")
  local env = MAN:match("\n%.SH ENVIRONMENT\n(.-)\n%.SH ") or ""
  for _, name in ipairs { "NOWAIT", "FTRUN_TIMER", "FTRUN_PROC_SYS", "FTRUN_TRACEFS" } do
    t.like(env, "\n.B " .. name .. "\n", "the man page's ENVIRONMENT has " .. name)
  end
  local exits = MAN:match("\n%.SH EXIT STATUS\n(.-)\n%.SH ") or ""
  t.like(exits, "\n.B 128+N\n", "the man page's EXIT STATUS has 128+N")
  t.like(MAN, ".IR quick\\-raw.txt", "the man page names a QUICK run's raw file")
  local help = t.ftrun_run("--help")
  t.ok(not help:find("README.md for its knobs", 1, true), "ftrun --help sends to --help and man for the knobs, "
    .. "not to a README that does not list them")
  t.like(help, "128+N stopped by signal N", "and names the 128+N exits")
  local out, code = t.ftrun_run("/tmp")
  t.is(code, 2, "./ftrun /tmp is a usage error (exit 2)")
  t.like(out, "'/tmp' is a directory, not a script", "saying so")
end

t.done()
