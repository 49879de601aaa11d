-- The one place a string becomes a shell word, and the one way a script
-- reads a directory (ft.list_dir, not ls through a shell).
local shell = {}

function shell.quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- What a name holds that a shell word, a gnuplot string or a line of a
-- generated script cannot carry as it is: nil when it is made only of
-- letters, digits and . _ + - and starts with neither - nor . (an option,
-- a hidden or a parent directory), else those characters, named. A name
-- that fails is refused, never escaped: gnuplot has no quoting that stops
-- `...`, a leading | or < (a pipe) inside its strings.
local NAMED = { ["\n"] = "newline", ["\r"] = "carriage return", ["\t"] = "tab", [" "] = "blank" }
function shell.unsafe_name(name)
  name = tostring(name)
  if name == "" then return "nothing (an empty name)" end
  local bad, seen = {}, {}
  for c in name:gmatch("[^%w._+-]") do
    if not seen[c] then
      seen[c] = true
      bad[#bad + 1] = NAMED[c] or (c:match("%c") and ("\\%d"):format(c:byte())) or ("'" .. c .. "'")
    end
  end
  if #bad > 0 then
    return ("%s (only letters, digits and . _ + - are taken)"):format(table.concat(bad, " ", 1, math.min(#bad, 8)))
  end
  if name:match("^[-.]") then return ("a leading '%s'"):format(name:sub(1, 1)) end
  return nil
end

-- A path as a command's operand: quoted, and starting with / or ./ so a
-- name like "-delete" cannot be read as an option by find, rm or ls.
function shell.path(p)
  p = tostring(p)
  if p:sub(1, 1) ~= "/" then p = "./" .. p end
  return shell.quote(p)
end

-- A new directory of our own (0700, never one that was there: another
-- user's, or a link to one) in `within`, else in TMPDIR (or /tmp), made by
-- mktemp -d: its path, or nil and why (a TMPDIR that is missing or not
-- writable; one holding a newline, whose path a line cannot carry, so that
-- a cleanup would remove another directory).
function shell.mkdtemp(prefix, within)
  local tmpdir = within or os.getenv("TMPDIR")
  local where = within or tmpdir and ("TMPDIR=%q"):format(tmpdir) or "/tmp (TMPDIR unset)"
  if tmpdir and tmpdir:find("[%c]") then return nil, where .. " holds a control character" end
  local p = io.popen(("mktemp -d %s %s 2>&1"):format(within and "-p " .. shell.path(within) or "-t",
    shell.quote(prefix .. ".XXXXXX")))
  local out = p and p:read("a") or ""
  local ok = p and p:close()
  local dir = out:gsub("\n$", "")
  if not ok or (not within and dir:sub(1, 1) ~= "/") or dir:find("\n", 1, true) or not require("ft").list_dir(dir) then
    return nil, ("cannot make a work directory in %s: %s"):format(where, (out:gsub("\n", " ")))
  end
  return dir
end

-- The names in dir that match the Lua pattern (every name without one),
-- sorted; an empty list when the directory cannot be read.
function shell.list(dir, pattern)
  local out = {}
  for _, name in ipairs(require("ft").list_dir(dir) or {}) do
    if not pattern or name:match(pattern) then out[#out + 1] = name end
  end
  return out
end

-- The files under dir, at any depth up to 16, whose name matches the Lua
-- pattern, as sorted paths; a file given as dir is not searched. Second,
-- the directories too deep to enter (a link's loop would never end).
-- skip_links: a symbolic link to a directory is not entered either (nor
-- listed): in a folder someone else filled, a link to . gives every file
-- again at each depth, and a few of them more paths than a run can walk.
function shell.find(dir, pattern, skip_links)
  local ft, out, deep = require("ft"), {}, {}
  local function walk(d, depth)
    for _, name in ipairs(ft.list_dir(d) or {}) do
      local p = d:gsub("/+$", "") .. "/" .. name
      if ft.list_dir(p) then
        if not (skip_links and os.execute("test -L " .. shell.path(p))) then
          if depth < 16 then walk(p, depth + 1) else deep[#deep + 1] = p end
        end
      elseif name:match(pattern) then
        local _, _, code = ft.read_file(p, 0) -- never opened: a FIFO would block
        if code ~= 2 then out[#out + 1] = p end -- the reader refuses non-regular files, naming them
      end
    end
  end
  walk(dir, 1)
  table.sort(out)
  table.sort(deep)
  return out, deep
end

return shell
