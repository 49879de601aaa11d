-- The one place a string becomes a shell word, and the one way a script
-- reads a directory (ft.list_dir, not ls through a shell).
local shell = {}

function shell.quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
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

return shell
