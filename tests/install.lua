-- make install into a scratch DESTDIR, a QUICK run of the installed ftrun
-- from another directory (its files under ./ftrun-runs/ there), and make
-- uninstall.
local t = require "tap"
local q = t.quote

local ROOT = ft.project_dir
-- the build under test: ./ftrun, ./ftrun-clang (CC=clang) or ./ftrun-san (SAN=1)
local exe = t.ftrun:match("([^/]+)$")
local build = exe == "ftrun-san" and "SAN=1" or exe:match("^ftrun%-(.+)$") and "CC=" .. exe:match("^ftrun%-(.+)$") or ""

local dest, work = t.tmpdir(), t.tmpdir()
local prefix = dest .. "/usr/local"
local function make(target)
  return t.run(("make -s -C %s %s %s PREFIX=/usr/local DESTDIR=%s"):format(q(ROOT), target, build, q(dest)))
end

local out, code = make("install")
t.is(code, 0, "make install exits 0", out)
for _, f in ipairs { "bin/ftrun", "share/man/man1/ftrun.1", "share/doc/ftrun/ft.md" } do
  t.ok(t.read(prefix .. "/" .. f) ~= nil, "installed: " .. f)
end
t.is(t.read(prefix .. "/share/doc/ftrun/ft.md"), t.read(ROOT .. "/doc/ft.md"),
  "the scripting reference the man page's SEE ALSO names is doc/ft.md")
local sources = t.run("cd " .. q(ROOT) .. " && find scripts -name '*.lua' | sort")
t.is(t.run("cd " .. q(prefix .. "/share/ftrun") .. " && find scripts -name '*.lua' | sort"), sources,
  "every script and library file, subdirectories included, under share/ftrun")
t.is(t.run("test -x " .. q(prefix .. "/bin/ftrun") .. " && echo x"), "x\n", "the executable is executable")
t.is(t.read(prefix .. "/share/man/man1/ftrun.1"), t.read(ROOT .. "/doc/ftrun.1"), "the man page is doc/ftrun.1")

-- The installed runner finds its scripts by name, in ../share/ftrun/scripts beside itself.
local installed = q(prefix .. "/bin/ftrun")
-- the REPL's help names the reference where make install put it
local help_doc = t.run(("echo help | %s 2>&1"):format(installed)):match("The reference of every ft function[^:]*: (%S+)")
t.ok(help_doc ~= nil and t.read(help_doc) == t.read(ROOT .. "/doc/ft.md"),
  "the installed REPL's help names the installed ft.md, which is there", help_doc)
local script = "cycles.lua"
out, code = t.run(("cd %s && %s %s QUICK=1 REPS=2"):format(q(work), installed, script))
t.is(code, 0, "a QUICK run of the installed ftrun exits 0", out)
local dir = out:match("wrote (" .. work:gsub("%p", "%%%0") .. "/ftrun%-runs/[^/]+)/quick%-raw%.txt")
t.ok(dir ~= nil, "it writes under ./ftrun-runs/ in the directory it ran from", out)
local raw = dir and t.read(dir .. "/quick-raw.txt") or ""
t.like(raw, "CHECKSUMS OK", "its raw file ends clean")
local built = t.run(t.ftrun .. " -e 'io.write(ft.build.commit)'")
t.ok(built:match("^%x+$") ~= nil, "the build recorded its commit", built)
t.like(raw, "git_commit: " .. built .. "\n", "the installed run records the commit it was built from")
t.like(raw, "git_source: the build (git could not read ", "and says the build, not git, told it")
t.is(t.run("ls -A " .. q(prefix .. "/bin")), "ftrun\n", "nothing written beside the installed executable")

out, code = make("uninstall")
t.is(code, 0, "make uninstall exits 0", out)
t.is(t.run("find " .. q(dest) .. " -type f"), "", "and removes every file it installed")

-- A PREFIX or DESTDIR with a blank (or a shell character) is refused before anything is made or removed:
-- unquoted, "/opt/my tools" made tools/bin and tools/share in the directory make ran in.
local listed = t.run("find " .. q(dest))
for _, target in ipairs { "install", "uninstall" } do
  for _, v in ipairs { { "/opt/my tools", dest }, { "/usr/local", dest .. "/a b" }, { "/x';touch PWNED;'", dest } } do
    out, code = t.run(("cd %s && make -s -C %s %s %s PREFIX=%s DESTDIR=%s"):format(q(work), q(ROOT), target, build,
      q(v[1]), q(v[2])))
    t.is(code, 2, ("make %s PREFIX=%s DESTDIR=%s exits 2"):format(target, v[1], v[2]), out)
    t.like(out, "only letters, digits and", "saying which characters are taken")
  end
end
t.is(t.run("ls -A " .. q(work)), "ftrun-runs\n", "nothing made where make was started")
t.is(t.run("find " .. q(dest)), listed, "nor in DESTDIR")
t.is(t.run("cd " .. q(ROOT) .. " && ls -d tools b opt x 2>/dev/null"), "", "nor in the checkout, where make ran")

os.execute("rm -rf " .. q(dest) .. " " .. q(work))
t.done()
