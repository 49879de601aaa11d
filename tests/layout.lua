-- The tree's shape, from git's list of its files: README.md's layout names
-- every tracked file (results/ aside, described in one line) and no other;
-- no runner/ file is over 600 lines; no circle among runner/'s files, by
-- #include and by the functions one file calls that another defines; no
-- library shared in scripts/lib/ names a script or matches a case name;
-- nothing in core/, runner/ or scripts/ requires or names publish/.
-- Each rule is also run on a made-up tree that breaks it.
local t = require "tap"
local q = t.quote

local ROOT = ft.project_dir
local MAX_LINES = 600

local files = {}
for f in t.run("git -C " .. q(ROOT) .. " ls-files 2>/dev/null"):gmatch("[^\n]+") do files[#files + 1] = f end
if not t.ok(#files > 50, "git ls-files lists the tree (a git checkout)", #files .. " files") then t.done() end
local function text(path) return t.read(ROOT .. "/" .. path) or "" end
local function under(pattern)
  local out = {}
  for _, f in ipairs(files) do if f:match(pattern) then out[#out + 1] = f end end
  return out
end
local function sorted_keys(set)
  local out = {}
  for k in pairs(set) do out[#out + 1] = k end
  table.sort(out)
  return out
end

-- README's layout block -> {path = true}: "dir/  about" then indented
-- comma-separated names, x.{c,h} for x.c and x.h; "./" is the top level;
-- results/ is described, not listed.
local function layout_names(readme)
  local block = readme:match("<!%-%- ftrun claims layout: begin %-%->\n(.-)<!%-%- ftrun claims layout: end %-%->")
  if not block then return nil end
  local named, dir, results = {}, nil, false
  for line in block:gmatch("[^\n]+") do
    local head = line:match("^(%S+/)  ")
    if head then
      dir = head ~= "results/" and (head == "./" and "" or head) or nil
      results = results or head == "results/"
    elseif dir and line:match("^    %S") then
      for word in line:gmatch("%S+") do
        local name = word:gsub(",$", "")
        local stem, exts = name:match("^(.+)%.{([%w,]+)}$")
        if stem then
          for ext in exts:gmatch("[^,]+") do named[dir .. stem .. "." .. ext] = true end
        else
          named[dir .. name] = true
        end
      end
    end
  end
  return named, results
end

-- The tracked files layout_names misses, and the names it gives that are not tracked.
local function layout_gaps(tracked, readme)
  local named, results = layout_names(readme)
  if not named then return nil, "README.md has no layout block (its claims markers)" end
  local missing, extra, is_tracked = {}, {}, {}
  for _, f in ipairs(tracked) do
    if not f:match("^results/") then
      is_tracked[f] = true
      if not named[f] then missing[#missing + 1] = f end
    end
  end
  for f in pairs(named) do if not is_tracked[f] then extra[#extra + 1] = f end end
  table.sort(extra)
  return missing, extra, results
end

do
  local missing, extra, results = layout_gaps(files, text("README.md"))
  t.ok(missing ~= nil, "README.md has its layout block", extra)
  missing, extra = missing or {}, extra or {}
  local regenerate = "\n(`make docs` regenerates README.md's layout block from git ls-files)"
  t.ok(#missing == 0, "README's layout names every tracked file outside results/",
    #missing > 0 and table.concat(missing, "\n") .. regenerate or nil)
  t.ok(#extra == 0, "and names no file git does not track", #extra > 0 and table.concat(extra, "\n") .. regenerate or nil)
  t.ok(results, "results/ has its line")
  -- the rule on made-up trees
  local gone = layout_gaps({ "a.txt", "new/b.lua", "results/x.json" }, "<!-- ftrun claims layout: begin -->\n```\n"
    .. "./  top\n    a.txt, old.lua\nnew/  d\n    c.{c,h}\nresults/  runs\n    raw files\n```\n"
    .. "<!-- ftrun claims layout: end -->")
  t.is(table.concat(gone or {}, " "), "new/b.lua", "a file the layout does not name is found")
  local _, stale = layout_gaps({ "a.txt", "new/b.lua" }, "<!-- ftrun claims layout: begin -->\n"
    .. "./  top\n    a.txt, old.lua\nnew/  d\n    b.lua, c.{c,h}\n<!-- ftrun claims layout: end -->")
  t.is(table.concat(stale or {}, " "), "new/c.c new/c.h old.lua", "and so is a name no tracked file has")
end

-- runner/: lengths, and circles by #include and by calls.
local function lines_over(paths, read, max)
  local over = {}
  for _, f in ipairs(paths) do
    local body = read(f)
    local _, n = body:gsub("\n", "")
    if body ~= "" and body:sub(-1) ~= "\n" then n = n + 1 end -- an unterminated last line counts
    if n > max then over[#over + 1] = ("%s: %d lines"):format(f, n) end
  end
  return over
end

-- A circle in graph {node = {to = true}}: the list of its nodes, first repeated, or nil.
local function circle(graph)
  local state, stack = {}, {}
  local function visit(n)
    state[n] = "open"
    stack[#stack + 1] = n
    for _, m in ipairs(sorted_keys(graph[n] or {})) do
      if state[m] == "open" then
        local at = #stack
        while stack[at] ~= m do at = at - 1 end
        local found = table.move(stack, at, #stack, 1, {})
        found[#found + 1] = m
        return found
      elseif not state[m] then
        local found = visit(m)
        if found then return found end
      end
    end
    state[n] = "done"
    stack[#stack] = nil
  end
  for _, n in ipairs(sorted_keys(graph)) do
    if not state[n] then
      local found = visit(n)
      if found then return found end
    end
  end
end

local function code_of(src) return (src:gsub("/%*.-%*/", " "):gsub("//[^\n]*", " ")) end

-- file -> {file it #includes = true}, within the directory of the paths.
local function include_graph(paths, read)
  local here, graph = {}, {}
  for _, f in ipairs(paths) do here[f:match("[^/]+$")] = f end
  for _, f in ipairs(paths) do
    graph[f] = {}
    for name in code_of(read(f)):gmatch('#%s*include%s*"([^"]+)"') do
      if here[name] then graph[f][here[name]] = true end
    end
  end
  return graph
end

-- .c file -> {.c file that defines a function it calls = true}: a
-- definition is a line at column 0, not static, naming ft_x( and not
-- ending in ';'; a use, ft_x anywhere in another file's code.
local function call_graph(paths, read)
  local defined_in, graph = {}, {}
  for _, f in ipairs(paths) do
    if f:match("%.c$") then
      for line in code_of(read(f)):gmatch("[^\n]+") do
        local name = line:match("^[%a_][^(;]-%f[%w_](ft_[%w_]+)%(")
        if name and not line:match("^static") and not line:match("^typedef") and not line:match(";%s*$") then
          defined_in[name] = f
        end
      end
    end
  end
  for _, f in ipairs(paths) do
    if f:match("%.c$") then
      graph[f] = {}
      for name in code_of(read(f)):gmatch("%f[%w_](ft_[%w_]+)%f[^%w_]") do
        local owner = defined_in[name]
        if owner and owner ~= f then graph[f][owner] = true end
      end
    end
  end
  return graph, defined_in
end

do
  local runner = under("^runner/[^/]+%.[ch]$")
  t.ok(#runner > 10, "runner/'s C files found", #runner)
  local over = lines_over(runner, text, MAX_LINES)
  t.is(#over, 0, ("no runner/ file is over %d lines"):format(MAX_LINES), table.concat(over, "\n"))
  -- the long scripts keep their machinery in scripts/lib/
  for script, max in pairs { ["scripts/attribution.lua"] = 150, ["scripts/pagesize.lua"] = 100,
    ["scripts/cycles.lua"] = 170 } do
    over = lines_over({ script }, text, max)
    t.is(#over, 0, ("%s is at most %d lines"):format(script, max), table.concat(over, "\n"))
  end
  local loop = circle(include_graph(runner, text))
  t.ok(not loop, "no circle among runner/'s #includes", loop and table.concat(loop, " -> "))
  local calls, defined = call_graph(runner, text)
  t.ok(next(defined) ~= nil and next(calls["runner/ft.c"] or {}) ~= nil,
    "the call graph is read (ft.c calls the openers)", table.concat(sorted_keys(calls["runner/ft.c"] or {}), " "))
  loop = circle(calls)
  t.ok(not loop, "no circle among runner/'s files by the functions they call", loop and table.concat(loop, " -> "))

  -- core/: a module is its .c with its header; one uses another by #include or by a call
  local core = under("^core/[^/]+%.[ch]$")
  local rooms = {}
  local function room(f) return (f:gsub("%.[ch]$", "")) end
  for _, g in ipairs { include_graph(core, text), (call_graph(core, text)) } do
    for f, to in pairs(g) do
      rooms[room(f)] = rooms[room(f)] or {}
      for u in pairs(to) do if room(u) ~= room(f) then rooms[room(f)][room(u)] = true end end
    end
  end
  loop = circle(rooms)
  t.ok(not loop, "no circle among core/'s modules by #include or call", loop and table.concat(loop, " -> "))

  -- the rules on made-up files
  local fake = {
    ["r/a.c"] = '#include "a.h"\n#include "b.h"\nint ft_a(void)\n{\n\treturn ft_b(); /* ft_c( */\n}\n',
    ["r/a.h"] = "int ft_a(void);\n",
    ["r/b.c"] = '#include "b.h"\nint ft_c(void);\nstatic int ft_d(void) { return ft_a(); }\nint ft_b(void)\n{\n\treturn ft_d();\n}\n',
    ["r/b.h"] = '#include "a.h"\nint ft_b(void);\n',
    ["r/c.h"] = '#include "d.h"\n',
    ["r/d.h"] = '#include "c.h"\n',
  }
  local function read_fake(f) return fake[f] end
  local names = sorted_keys(fake)
  t.is(table.concat(lines_over(names, read_fake, 6), " "), "r/b.c: 7 lines", "a file over the limit is named")
  loop = circle(include_graph(names, read_fake))
  t.is(loop and table.concat(loop, " "), "r/c.h r/d.h r/c.h", "an #include circle is found")
  loop = circle((call_graph(names, read_fake)))
  t.is(loop and table.concat(loop, " "), "r/a.c r/b.c r/a.c", "a call circle is found (through a static function)")
  fake["r/b.c"] = 'int ft_b(void)\n{\n\treturn 0; /* not ft_a() */\n}\n'
  t.ok(not circle((call_graph(names, read_fake))), "and a name in a comment is no call")
end

-- scripts/lib/: a library shared by scripts (required by more than one file,
-- or not named after a script) names no script file and matches no case
-- name. A module scripts/lib/X.lua that scripts/X.lua alone requires is
-- that script's own, as scripts/lib/reports/ are, and so is a module that
-- only a script's own modules require.

-- The string literals of Lua source, comments left out.
local function literals(src)
  local out, i, n = {}, 1, #src
  while i <= n do
    local c = src:sub(i, i)
    local long = src:match("^%[(=*)%[", i)
    if src:sub(i, i + 1) == "--" then
      local eq = src:match("^%[(=*)%[", i + 2)
      local stop = eq and select(2, src:find("]" .. eq .. "]", i + 2, true)) or src:find("\n", i, true)
      i = (stop or n) + 1
    elseif c == '"' or c == "'" then
      local j, buf = i + 1, {}
      while j <= n and src:sub(j, j) ~= c do
        local step = src:sub(j, j) == "\\" and 2 or 1
        buf[#buf + 1] = src:sub(j, j + step - 1)
        j = j + step
      end
      out[#out + 1] = table.concat(buf)
      i = j + 1
    elseif long then
      local s, e = src:find("]" .. long .. "]", i, true)
      out[#out + 1] = src:sub(i + #long + 2, (s or n + 1) - 1)
      i = (e or n) + 1
    else
      i = i + 1
    end
  end
  return out
end

-- What lib's source (src) does wrong: "names X.lua" and "matches the case C".
local function lib_faults(src, scripts, cases)
  local found, seen = {}, {}
  local function add(what) if not seen[what] then seen[what] = true; found[#found + 1] = what end end
  for _, s in ipairs(literals(src)) do
    for _, name in ipairs(scripts) do
      if s:find("%f[%w_]" .. name:gsub("%p", "%%%0") .. "%f[^%w_]") then add(("names %s in %q"):format(name, s)) end
      -- a script's report module (reports.X, reports/X) is the script's too
      local stem = name:gsub("%.lua$", "")
      if s:find("reports[./]" .. stem:gsub("%p", "%%%0") .. "%f[^%w_]") then add(("names %s's report module in %q"):format(name, s)) end
    end
    local phrase = s:match("^%s*(.-)%s*$")
    if phrase:find("%a+ %a+") then -- two words: a piece of a case name, not a unit or a column
      for _, c in ipairs(cases) do
        local ok, at = pcall(string.find, c, phrase)
        if c == phrase or c:find(phrase, 1, true) or (ok and at) then
          add(("matches the case %q with %q"):format(c, s))
          break
        end
      end
    end
  end
  return found
end

do
  local scripts = {}
  for _, f in ipairs(under("^scripts/[^/]+%.lua$")) do scripts[#scripts + 1] = f:match("[^/]+$") end
  local cases, seen = {}, {}
  local function case(c) if c and not seen[c] then seen[c] = true; cases[#cases + 1] = c end end
  for line in text("tests/rows.txt"):gmatch("[^\n]+") do case(line:match("^[^|]+ | (.-) | %(case%)$")) end
  for _, f in ipairs(under("^scripts/[^/]+%.lua$")) do
    for c in text(f):gmatch('h:case%(%s*"([^"]+)"') do case(c) end
  end
  t.ok(#scripts > 10 and #cases > 30, "the scripts and their case names found", #scripts .. " scripts, " .. #cases .. " cases")

  local required_by = {}
  for _, f in ipairs(files) do
    if f:match("^scripts/.+%.lua$") or f:match("^bench/.+%.lua$") then
      for _, form in ipairs { 'require%s*%(?%s*"([%w_.]+)"', "require%s*%(?%s*'([%w_.]+)'" } do
        for m in text(f):gmatch(form) do
          required_by[m] = required_by[m] or {}
          required_by[m][f] = true
        end
      end
    end
  end
  -- the Lua modules' requires: no circle (lib/a requires lib/b, which requires lib/a)
  local requires = {}
  for m, users in pairs(required_by) do
    for f in pairs(users) do
      local u = f:match("^scripts/lib/(.+)%.lua$")
      if u then
        u = u:gsub("/", ".")
        requires[u] = requires[u] or {}
        requires[u][m] = true
      end
    end
  end
  local lua_loop = circle(requires)
  t.ok(not lua_loop, "no circle among scripts/lib's requires", lua_loop and table.concat(lua_loop, " -> "))
  t.ok(circle { a = { b = true }, b = { a = true } } ~= nil, "the rule finds a made-up circle of two modules")

  local libs = under("^scripts/lib/[^/]+%.lua$")
  t.ok(#libs > 10, "scripts/lib/'s modules found", #libs)
  local own = {} -- module name -> the script it belongs to
  for _, lib in ipairs(libs) do
    local name = lib:match("([%w_]+)%.lua$")
    local users = sorted_keys(required_by[name] or {})
    if #users == 1 and users[1] == "scripts/" .. name .. ".lua" then own[name] = name .. ".lua" end
  end
  repeat -- a module only one script's own modules require is that script's too
    local grew = false
    for _, lib in ipairs(libs) do
      local name, owner = lib:match("([%w_]+)%.lua$"), nil
      local users = sorted_keys(required_by[name] or {})
      for _, u in ipairs(users) do
        local by = own[u:match("^scripts/lib/([%w_]+)%.lua$") or ""]
        if not by or (owner and owner ~= by) then owner = false break end
        owner = by
      end
      if not own[name] and owner then own[name], grew = owner, true end
    end
  until not grew
  for _, lib in ipairs(libs) do
    local name = lib:match("([%w_]+)%.lua$")
    if own[name] then
      t.diag(("%s is %s's own module (only it, or its own modules, require it): not a shared library")
        :format(lib, own[name]))
    else
      local faults = lib_faults(text(lib), scripts, cases)
      t.ok(#faults == 0, lib .. " names no script and matches no case name", table.concat(faults, "\n"))
    end
  end

  -- the rule on a made-up library
  local faults = lib_faults('-- cycles.lua in a comment is fine\nlocal u = { cycles = "cycles" }\n'
    .. 'if doc.script == "cycles.lua" then end\nif r.case:find("^pool: a mapping") then end\n'
    .. 'local s = [[see plot.lua]]\nlocal r = require("reports.cycles")\n', { "cycles.lua", "plot.lua" },
    { "pool: a mapping touched on CPU 0", "A" })
  t.is(table.concat(faults, "\n"), 'names cycles.lua in "cycles.lua"\n'
    .. 'matches the case "pool: a mapping touched on CPU 0" with "^pool: a mapping"\nnames plot.lua in "see plot.lua"\n'
    .. 'names cycles.lua\'s report module in "reports.cycles"',
    "a script's name and a case's pattern are found; a comment and a unit named like a script are not")
end

do -- a string becomes a shell word in one place (shell.quote), and no script lists a directory through ls
  local function shell_faults(path, src)
    local out = {}
    if path ~= "scripts/lib/shell.lua" and src:find([[gsub("'", "'\\'']], 1, true) then
      out[#out + 1] = path .. " quotes for the shell by hand (use shell.quote)"
    end
    for cmd in src:gmatch("popen%(([^\n]*)") do
      if cmd:match("^%(?[\"']ls[ \"']") then out[#out + 1] = path .. " lists a directory through ls (use shell.list)" end
    end
    return out
  end
  local faults = {}
  for _, f in ipairs(files) do
    if f:match("^scripts/.*%.lua$") or f:match("^bench/.*%.lua$") then
      for _, x in ipairs(shell_faults(f, text(f))) do faults[#faults + 1] = x end
    end
  end
  t.is(table.concat(faults, "\n"), "", "no hand-written shell quoting or ls listing outside scripts/lib/shell.lua")
  t.is(#shell_faults("x.lua", [[local q = "'" .. s:gsub("'", "'\\''") .. "'"
local p = io.popen("ls -1 " .. d)]]), 2, "the rule finds both in a made-up file")
end

-- publish/ is the maintainers' wing: the product neither requires its modules nor runs it.
local function publish_users(sources, modules)
  local out = {}
  for path, src in pairs(sources) do
    for _, m in ipairs(modules) do
      for _, form in ipairs { 'require "' .. m .. '"', "require '" .. m .. "'", 'require("' .. m .. '")' } do
        if src:find(form, 1, true) then out[#out + 1] = path .. ": " .. form end
      end
    end
    if src:find("publish/", 1, true) then out[#out + 1] = path .. ": names publish/" end
  end
  table.sort(out)
  return out
end
do
  local modules, sources = {}, {}
  for _, f in ipairs(under("^publish/lib/[%w_]+%.lua$")) do modules[#modules + 1] = f:match("([%w_]+)%.lua$") end
  for _, f in ipairs(files) do
    if f:match("^core/") or f:match("^runner/") or f:match("^scripts/") then sources[f] = text(f) end
  end
  t.ok(#modules > 3, "publish/lib's modules found", table.concat(modules, " "))
  t.is(table.concat(publish_users(sources, modules), "\n"), "", "nothing in core/, runner/ or scripts/ requires publish/")
  t.is(table.concat(publish_users({ ["scripts/x.lua"] = 'local r = require "registry"' }, { "registry" }), ""),
    'scripts/x.lua: require "registry"', "and a made-up script that does is found")
end

t.done()
