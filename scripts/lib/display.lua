-- What a run prints on stdout, in the format asked (FORMAT): markdown for
-- a terminal, no line wider than WIDTH columns, or the rows as one CSV, TSV
-- or JSON table for another program. The files (summary.md, the JSON) stay
-- as they are: README pastes and the claims read them.
local json = require "json"

local display = {}

display.WIDTH = 200
display.FORMATS = { "md", "csv", "tsv", "json" }

-- The knobs of what a harness script prints (shown_only: not in the
-- results' knob list, since they change nothing measured).
function display.spec()
  return {
    { name = "FORMAT", kind = "choice", choices = display.FORMATS, default = "md", shown_only = true,
      desc = "the table on stdout: md (at most 200 columns), or every row as one csv, tsv or json table" },
    { name = "QUIET", kind = "flag", default = false, shown_only = true,
      desc = "1: no progress on stderr (warnings and errors still)" },
  }
end

local function len(s) return utf8.len(s) or #s end

local function cells(line)
  local out = {}
  for c in line:sub(2, -2):gmatch("([^|]*)|?") do out[#out + 1] = c:match("^%s*(.-)%s*$") end
  if out[#out] == "" and line:sub(-2) == "||" then out[#out] = nil end
  return out
end

local function rule(row) return row:match("^|[%s:|-]*$") ~= nil and row:find("-", 1, true) ~= nil end

-- A table's lines as markdown writes them: cells unpadded, so a line
-- grepped for ("| case | not supported: ... |") reads as in the file.
local function draw(head, body)
  local function line(r)
    local out = {}
    for i = 1, #head do out[i] = r[i] or "" end
    return "| " .. table.concat(out, " | ") .. " |"
  end
  local lines = { line(head), "|" .. ("---|"):rep(#head) }
  for _, r in ipairs(body) do lines[#lines + 1] = line(r) end
  return lines
end

local function widest(lines)
  local m = 0
  for _, l in ipairs(lines) do m = math.max(m, len(l)) end
  return m
end

-- One markdown table, narrowed: the longest headers become [1], [2], ...
-- with a legend under the table until it fits; a table still too wide is
-- cut into several, each repeating the first column.
local function narrow_table(rows, width)
  if widest(rows) <= width then return rows end -- as the file has it
  local head, body = cells(rows[1]), {}
  for i = 3, #rows do body[#body + 1] = cells(rows[i]) end
  local legend, short = {}, {}
  local order = {}
  for i = 2, #head do order[#order + 1] = i end
  table.sort(order, function(a, b) return len(head[a]) > len(head[b]) or len(head[a]) == len(head[b]) and a < b end)
  for _, i in ipairs(order) do
    if widest(draw(head, body)) <= width then break end
    short[i] = head[i]
    head[i] = "[" .. i - 1 .. "]"
  end
  for i = 2, #head do
    if short[i] then legend[#legend + 1] = ("[%d] %s"):format(i - 1, short[i]) end
  end
  local parts, cols = {}, {}
  local function flush()
    if #cols == 0 then return end
    local h, b = { head[1] }, {}
    for _, i in ipairs(cols) do h[#h + 1] = head[i] end
    for r, row in ipairs(body) do
      b[r] = { row[1] }
      for _, i in ipairs(cols) do b[r][#b[r] + 1] = row[i] or "" end
    end
    parts[#parts + 1] = draw(h, b)
    cols = {}
  end
  for i = 2, #head do
    cols[#cols + 1] = i
    local h, b = { head[1] }, {}
    for _, j in ipairs(cols) do h[#h + 1] = head[j] end
    for r, row in ipairs(body) do
      b[r] = { row[1] }
      for _, j in ipairs(cols) do b[r][#b[r] + 1] = row[j] or "" end
    end
    if #cols > 1 and widest(draw(h, b)) > width then
      cols[#cols] = nil
      flush()
      cols[1] = i
    end
  end
  flush()
  local out = {}
  for p, lines2 in ipairs(parts) do
    if p > 1 then out[#out + 1] = "" end
    for _, l in ipairs(lines2) do out[#out + 1] = l end
  end
  if #legend > 0 then
    out[#out + 1] = ""
    for _, l in ipairs(legend) do out[#out + 1] = "- " .. l end
  end
  return out
end

-- A prose line wrapped at width (a soft break inside a markdown paragraph or
-- list item changes nothing in how it renders); its continuation lines are
-- indented as the line's own list marker is.
local function wrap(line, width)
  if len(line) <= width then return { line } end
  local hard = line:match("  $") and "  " or ""
  local indent = (" "):rep(#(line:match("^%s*[-*]%s+") or line:match("^%s*") or ""))
  local out, cur = {}, ""
  for word in line:gmatch("%S+") do
    if cur ~= "" and len(cur) + 1 + len(word) > width then
      out[#out + 1] = cur
      cur = indent .. word
    else
      cur = cur == "" and (line:match("^%s*") .. word) or cur .. " " .. word
    end
  end
  out[#out + 1] = cur .. hard
  return out
end

-- The markdown for a terminal: every table narrowed, every line at most width.
function display.narrow(md, width)
  width = width or display.WIDTH
  local lines, out = {}, {}
  for l in (md .. (md:sub(-1) == "\n" and "" or "\n")):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  local i = 1
  while i <= #lines do
    if lines[i]:match("^|") and lines[i + 1] and rule(lines[i + 1]) then
      local t = {}
      while lines[i] and lines[i]:match("^|") do t[#t + 1] = lines[i]; i = i + 1 end
      for _, l in ipairs(narrow_table(t, width)) do out[#out + 1] = l end
    else
      for _, l in ipairs(wrap(lines[i], width)) do out[#out + 1] = l end
      i = i + 1
    end
  end
  return table.concat(out, "\n") .. "\n"
end

-- The rows as one table: a header, then a line per row (and one per derived
-- value, case and column empty), every number at full precision.
display.FIELDS = { "case", "column", "label", "unit", "n", "median", "lo", "hi", "ci_coverage", "min", "max", "cv" }

local function field_text(v)
  if v == nil or v == json.null then return "" end
  if math.type(v) == "float" then -- the shortest text that reads back as the same number
    local short = ("%.15g"):format(v)
    return tonumber(short) == v and short or ("%.17g"):format(v)
  end
  return tostring(v)
end

local function records(rows, values)
  local out = {}
  for _, r in ipairs(rows) do
    local rec = {}
    for _, k in ipairs(display.FIELDS) do rec[k] = r[k] end
    out[#out + 1] = rec
  end
  for _, v in ipairs(values or {}) do
    local rec, extra = {}, {}
    for _, kv in ipairs(v) do rec[kv[1]] = kv[2] end
    for _, kv in ipairs(v) do
      if kv[1] ~= "value" and kv[1] ~= "unit" and kv[1] ~= "x" and kv[1] ~= "lo" and kv[1] ~= "hi" and kv[1] ~= "n"
        and kv[2] ~= nil then
        extra[#extra + 1] = kv[1] .. "=" .. field_text(kv[2])
      end
    end
    out[#out + 1] = { case = "", column = rec.value, label = table.concat(extra, " "), unit = rec.unit, n = rec.n,
      median = rec.x, lo = rec.lo, hi = rec.hi }
  end
  return out
end

local function quoted_csv(s)
  if s:find('[,"\n]') then return '"' .. s:gsub('"', '""') .. '"' end
  return s
end

-- recs as one table in format ("csv", "tsv" or "json"): fields names the
-- columns and their order; a field a record lacks is empty (JSON null).
function display.table(fields, recs, format)
  if format == "json" then
    local list = {}
    for _, r in ipairs(recs) do
      local o = {}
      for _, k in ipairs(fields) do o[k] = r[k] == nil and json.null or r[k] end
      list[#list + 1] = o
    end
    return json.encode(list) .. "\n"
  end
  local sep = format == "tsv" and "\t" or ","
  local cell = format == "tsv" and function(s) return (s:gsub("[\t\n]", " ")) end or quoted_csv
  local lines = { table.concat(fields, sep) }
  for _, r in ipairs(recs) do
    local c = {}
    for i, k in ipairs(fields) do c[i] = cell(field_text(r[k])) end
    lines[#lines + 1] = table.concat(c, sep)
  end
  return table.concat(lines, "\n") .. "\n"
end

-- format: "csv", "tsv" or "json"; rows as results.rows makes them, values as h.values holds them.
function display.rows(rows, values, format)
  return display.table(display.FIELDS, records(rows, values), format)
end

return display
