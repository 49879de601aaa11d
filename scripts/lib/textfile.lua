-- A file's text, for the scripts and libraries that read /proc, /sys and
-- their own outputs: nil, a message and errno when it cannot be read.
local textfile = {}

-- The most a reader takes: 14 times the largest results JSON published
-- (results/pvm/exp-slowperiod-results.json, 18 MB), and a fraction of the
-- memory decoding it needs (a 200 MB results JSON took 618 MB in compare).
textfile.MAX_BYTES = 256 * 1024 * 1024

-- Regular files only (a FIFO, a device or a directory, or a link to one, is
-- refused without blocking), of at most max_bytes (textfile.MAX_BYTES).
function textfile.read(path, max_bytes)
  return require("ft").read_file(path, max_bytes or textfile.MAX_BYTES)
end

-- Whether path is a regular file: true, or nil, why and errno; nothing is
-- read (a read of at most 0 bytes fails with EFBIG on any file with text).
local EFBIG = 27
function textfile.regular(path)
  local text, why, code = require("ft").read_file(path, 0)
  if text or code == EFBIG then return true end
  return nil, why, code
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
