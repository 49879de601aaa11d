-- A file's text, for the scripts and libraries that read /proc, /sys and
-- their own outputs: nil (and io.open's reason) when it cannot be opened.
local textfile = {}

function textfile.read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text = f:read("a")
  f:close()
  return text
end

-- The text less its trailing whitespace: a sysfs or procfs value.
function textfile.value(path)
  local text, err = textfile.read(path)
  if not text then return nil, err end
  return (text:gsub("%s+$", ""))
end

return textfile
