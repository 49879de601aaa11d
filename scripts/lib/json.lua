-- JSON through Debian's lua-cjson (C), with two things cjson 2.1 lacks:
-- numbers at full precision (it prints 14 significant digits, so 1/3 and
-- a 15-digit integer would be rounded) and a reason beside every number
-- that is not finite. Each number is handed to cjson as a marked string
-- holding units.exact's text, and the marks are taken off its output.
local cjson = require("cjson").new()
local units = require "units"

local json = {}
json.null = cjson.null

cjson.encode_sparse_array(true) -- a sparse list becomes an object, never an error
cjson.encode_max_depth(64)
cjson.decode_max_depth(64)
-- NaN, Infinity and hex numbers are no JSON (cjson takes them by default):
-- a file holding them was not written by json.encode
cjson.decode_invalid_numbers(false)

local MARK = "\1" -- cjson writes it as \u0001; no text of ours starts with it

-- A copy that cjson can write as it is: numbers as marked strings, a value
-- that is not finite as null with "<key>_nonfinite" beside it.
local function prepare(v, path, seen)
  local t = type(v)
  if t == "number" then
    return MARK .. units.exact(v)
  elseif t == "string" then
    if v:sub(1, 1) == MARK then error(("%s: a string may not start with \\1"):format(path), 0) end
    return v
  elseif t == "boolean" or v == cjson.null then
    return v
  elseif t ~= "table" then
    error(("%s: a %s cannot be written as JSON"):format(path, t), 0)
  end
  if seen[v] then error(("%s: a table that contains itself"):format(path), 0) end
  seen[v] = true
  local out = {}
  local is_list = #v > 0
  for k, x in pairs(v) do
    if type(k) ~= "string" and math.type(k) ~= "integer" then
      error(("%s: a key of type %s (JSON keys are strings or integers)"):format(path, type(k)), 0)
    end
    local nf = type(x) == "number" and units.nonfinite(x)
    local where = path .. "." .. tostring(k)
    if nf then
      if is_list and math.type(k) == "integer" then
        error(("%s: %s in a list, where no reason can stand beside it"):format(where, nf), 0)
      end
      out[k] = cjson.null
      out[tostring(k) .. "_nonfinite"] = nf
    else
      out[k] = prepare(x, where, seen)
    end
  end
  seen[v] = nil
  return out
end

-- Any Lua value of nil, booleans, numbers, strings and tables of them.
function json.encode(v)
  local text = cjson.encode(prepare(v, "value", {}))
  return (text:gsub('"\\u0001([^"]*)"', "%1"))
end

-- Integers come back as integers (cjson 2.1 reads every number as a float).
-- In place, one call per table: a published run's JSON holds millions of
-- numbers, and the claims check reads tens of megabytes of them.
local tointeger = math.tointeger
local function integers(t)
  for k, x in pairs(t) do
    local kind = type(x)
    if kind == "number" then
      local i = tointeger(x)
      if i then t[k] = i end
    elseif kind == "table" then
      integers(x)
    end
  end
end

-- The inverse: nil, message for text that is not JSON (or is JSON's null).
function json.decode(text)
  local ok, v = pcall(cjson.decode, text)
  if not ok then return nil, v end
  if v == cjson.null then return nil, "the text is null" end
  if type(v) == "table" then integers(v) elseif type(v) == "number" then v = tointeger(v) or v end
  return v
end

return json
