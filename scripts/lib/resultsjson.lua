-- A results JSON as the readers take it (compare.lua, plot.lua, a fleet's
-- SUMMARY): read as a regular file of bounded size, decoded, and its
-- fields checked for the types every reader relies on, so that a file
-- someone edited is refused naming the field, never met by a traceback
-- or by an unbounded bootstrap.
local ab = require "ab"
local json = require "json"
local textfile = require "textfile"
local units = require "units"

local resultsjson = {}

-- An object in JSON (a table with no list part); an empty {} is either.
local function is_object(v)
  return type(v) == "table" and (next(v) == nil or v[1] == nil)
end

-- What a value is, in JSON's words, for a message.
local function kind(v)
  if type(v) ~= "table" then return type(v) end
  return is_object(v) and "an object" or "a list"
end

local function is_list(v)
  local n = type(v) == "table" and #v
  if not n then return false end
  local count = 0
  for _ in pairs(v) do count = count + 1 end
  return count == n
end

-- How many values a row may hold: one per repetition, the knob REPS, else
-- the most records any case kept; nil when the run records neither.
local function repetitions(doc)
  local reps = type(doc.knobs) == "table" and doc.knobs.REPS
  if math.type(reps) == "integer" and reps >= 1 then return reps end
  local most
  for _, c in ipairs(type(doc.reps) == "table" and doc.reps or {}) do
    if type(c) == "table" and type(c.records) == "table" then most = math.max(most or 0, #c.records) end
  end
  return most
end

local function reps_invalid(doc)
  if doc.reps == nil then return nil end
  if not is_list(doc.reps) then return ("field reps is %s, expected a list"):format(kind(doc.reps)) end
  for i, c in ipairs(doc.reps) do
    if not is_object(c) or type(c.case) ~= "string" then
      return ("reps[%d]: expected an object with a case name"):format(i)
    end
    if c.records ~= nil then
      if not is_list(c.records) then
        return ("reps[%d].records is %s, expected a list"):format(i, kind(c.records))
      end
      for j, rec in ipairs(c.records) do
        if not is_object(rec) then
          return ("reps[%d].records[%d] is a %s, expected an object"):format(i, j, type(rec))
        end
      end
    end
    if c.params ~= nil and not is_object(c.params) then return ("reps[%d].params is not an object"):format(i) end
  end
end

-- One row: its names, a list of numbers or nulls (no more than the run's
-- repetitions), none below 0 in a time, a rate or a count (0 is a time
-- when nothing happened: a steal of none).
local function row_invalid(r, i, most)
  if not is_object(r) or type(r.case) ~= "string" or type(r.column) ~= "string" then
    return ("rows[%d]: expected an object with a case and a column name"):format(i)
  end
  local name = ("row %s %s"):format(r.case, r.column)
  if r.values == nil then return nil end
  if not is_list(r.values) then
    return ("%s: field values is %s, expected a list of numbers"):format(name, kind(r.values))
  end
  if #r.values > most then
    return ("%s holds %d values, more than the run's %d repetitions"):format(name, #r.values, most)
  end
  local unit_kind = type(r.unit) == "string" and units.kind(r.unit)
  local unsigned = unit_kind == "time" or unit_kind == "rate" or unit_kind == "count"
  for j, v in ipairs(r.values) do
    if type(v) ~= "number" and v ~= json.null then
      return ("%s: values[%d] is %s, expected a number or null"):format(name, j, type(v))
    end
    if unsigned and type(v) == "number" and v < 0 then
      return ("%s: values[%d] = %s, but no %s is below 0"):format(name, j, tostring(v), r.unit)
    end
  end
end

-- A row twice counts as one more run: keyed by case and column, and by side
-- only in an AB run (a side in any other run is refused).
local function rows_invalid(doc)
  if not is_list(doc.rows) then return ("field rows is %s, expected a list"):format(kind(doc.rows)) end
  local most, is_ab, seen = repetitions(doc), ab.is_ab(doc), {}
  if not most and #doc.rows > 0 then
    return "has no knobs.REPS and no records, so the values its rows may hold are unknown"
  end
  for i, r in ipairs(doc.rows) do
    local bad = row_invalid(r, i, most)
    if bad then return bad end
    if r.side ~= nil and not is_ab then
      return ("row %s %s (rows[%d]) has side %s in a run that is not AB"):format(r.case, r.column, i,
        tostring(r.side))
    end
    local key = r.case .. "\0" .. r.column .. "\0" .. (is_ab and tostring(r.side) or "")
    if seen[key] then return ("row %s %s twice (rows %d and %d)"):format(r.case, r.column, seen[key], i) end
    seen[key] = i
  end
end

-- Why doc is not a results JSON the readers can take, naming the field;
-- nil when it is.
function resultsjson.invalid(doc)
  if not is_object(doc) then return "the text is not an object" end
  if type(doc.script) ~= "string" then return "field script is missing or not a string" end
  for _, k in ipairs { "knobs", "machine", "provenance", "ab" } do
    if doc[k] ~= nil and not is_object(doc[k]) then
      return ("field %s is a %s, expected an object"):format(k, type(doc[k]) == "table" and "list" or type(doc[k]))
    end
  end
  for _, k in ipairs { "verdict", "run", "date", "title", "about" } do
    if doc[k] ~= nil and type(doc[k]) ~= "string" then
      return ("field %s is a %s, expected a string"):format(k, type(doc[k]))
    end
  end
  if doc.page_size ~= nil and (math.type(doc.page_size) ~= "integer" or doc.page_size < 1) then
    return ("field page_size is %s, expected a whole number of bytes"):format(tostring(doc.page_size))
  end
  return reps_invalid(doc) or (doc.rows ~= nil and rows_invalid(doc)) or nil
end

-- A results JSON: doc and its text, or nil and why (the path named).
function resultsjson.read(path)
  local text, err = textfile.read(path)
  if not text then return nil, err end
  local doc, why = json.decode(text)
  if type(doc) ~= "table" then
    return nil, ("%s: not a results JSON: %s"):format(path, #text == 0 and "the file is empty"
      or tostring(why):gsub("^.-:%d+: ", ""))
  end
  local bad = resultsjson.invalid(doc)
  if bad then return nil, ("%s: %s"):format(path, bad) end
  return doc, text
end

return resultsjson
