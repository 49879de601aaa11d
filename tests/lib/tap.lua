-- A small TAP producer for prove: ok/is/like/errors, then done().
local tap = {}

local count, failed = 0, 0

-- The ftrun under test: FTRUN from make, else the interpreter running us.
tap.ftrun = os.getenv("FTRUN") or arg[-1]
if tap.ftrun:sub(1, 1) ~= "/" then tap.ftrun = os.getenv("PWD") .. "/" .. tap.ftrun end

local function report(pass, name, diag)
  count = count + 1
  if not pass then failed = failed + 1 end
  print(("%s %d - %s"):format(pass and "ok" or "not ok", count, name))
  if not pass and diag then
    for line in tostring(diag):gmatch("[^\n]+") do print("#   " .. line) end
  end
  return pass
end

function tap.ok(cond, name, diag)
  return report(cond and true or false, name, diag)
end

function tap.is(got, want, name)
  return report(got == want and math.type(got) == math.type(want), name,
    ("got:  %s (%s)\nwant: %s (%s)"):format(tostring(got), math.type(got) or type(got),
      tostring(want), math.type(want) or type(want)))
end

-- plain-text containment, so messages with punctuation need no escaping
function tap.like(text, part, name)
  return report(type(text) == "string" and text:find(part, 1, true) ~= nil, name,
    ("text: %s\nwant it to contain: %s"):format(tostring(text), part))
end

-- fn must raise an error whose message contains part
function tap.errors(fn, part, name)
  local ok, msg = pcall(fn)
  if ok then return report(false, name, "no error raised; want: " .. part) end
  return tap.like(tostring(msg), part, name)
end

function tap.diag(text)
  print("# " .. text)
end

local function quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end
tap.quote = quote

-- A fresh empty directory for a test's files.
function tap.tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. quote(d)))
  return d
end

-- A file's text, or nil when it cannot be read.
function tap.read(path)
  local f = io.open(path)
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

function tap.write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- Runs a shell command; returns its combined output and exit code.
function tap.run(cmd)
  local p = assert(io.popen("{ " .. cmd .. "\n} 2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

-- Runs ftrun with the given argument string (already quoted).
function tap.ftrun_run(args, env)
  return tap.run((env and env .. " " or "") .. quote(tap.ftrun) .. " " .. args)
end

function tap.done()
  print("1.." .. count)
  os.exit(failed == 0 and 0 or 1)
end

return tap
