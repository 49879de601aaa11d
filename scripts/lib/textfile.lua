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

-- The sha256 of a text, by sha256sum (through a file of our own: a pipe
-- cannot be both written and read here); nil when it cannot be had.
function textfile.sha256(text)
  local path = os.tmpname()
  local f = io.open(path, "wb")
  if not f then return nil end
  f:write(text)
  f:close()
  local p = io.popen("sha256sum " .. require("shell").quote(path) .. " 2>/dev/null")
  local hash = p and p:read("a"):match("^(%x+)")
  if p then p:close() end
  os.remove(path)
  return hash
end

-- A text sealed by its own hash on a last line, so an edit by hand (not a
-- forged seal) shows: textfile.sealed gives the text back if the seal holds.
local SEAL = "seal: sha256 %s of the lines above (the claims check fails this file when they no longer give it)"
function textfile.seal(text)
  return text .. SEAL:format(assert(textfile.sha256(text), "sha256sum failed")) .. "\n"
end

function textfile.sealed(text)
  local body, hash = text:match("^(.*\n)seal: sha256 (%x+) of the lines above [^\n]*\n$")
  if not body then return nil, "no seal on its last line" end
  if textfile.sha256(body) ~= hash then return nil, "its lines no longer give the sha256 its seal names" end
  return body
end

return textfile
