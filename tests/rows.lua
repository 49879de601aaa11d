-- Every experiment script run with QUICK=1: the rows it writes (case and
-- column) are the set in tests/rows.txt, so a change to the harness or a
-- script's structure keeps what a run reports. A case the kernel refuses
-- here (reported as not supported) must still be one the list names; its
-- columns are not compared. A line "script | case | (case)" names a case. ROWS_WRITE=1 writes the list from this run.
local t = require "tap"
local json = require "json"
local q = t.quote

local root = t.ftrun:gsub("[^/]+$", "")
-- every script that runs through the harness, found, so a new one is not left out
local SCRIPTS = {}
for name in t.run("cd " .. q(root .. "scripts") .. " && grep -l 'require[ (]*\"harness\"' *.lua | sort"):gmatch("([%w_]+)%.lua") do
  SCRIPTS[#SCRIPTS + 1] = name
end
t.ok(#SCRIPTS >= 13 and table.concat(SCRIPTS, " "):find("slowpages", 1, true) ~= nil,
  "the scripts through the harness are found, slowpages among them", table.concat(SCRIPTS, " "))
local list_path = root .. "tests/rows.txt"
local dir = t.tmpdir()

local got, unsupported = {}, {}
for _, name in ipairs(SCRIPTS) do
  local out, code = t.ftrun_run(name .. ".lua", ("QUICK=1 RESULTS=%s README=/dev/null"):format(q(dir .. "/" .. name)))
  t.is(code, 0, name .. ".lua QUICK=1 runs clean")
  if code ~= 0 then t.diag(out) end
  local p = io.popen("ls " .. q(dir .. "/" .. name) .. "/*results.json 2>/dev/null")
  local path = p:read("l")
  p:close()
  local doc = json.decode(path and t.read(path) or "null") or { rows = {}, reps = {} }
  for _, c in ipairs(doc.reps) do
    got[#got + 1] = ("%s | %s | (case)"):format(name, c.case)
    if c.unsupported then unsupported[name .. " | " .. c.case] = c.unsupported end
  end
  for _, r in ipairs(doc.rows) do got[#got + 1] = ("%s | %s | %s"):format(name, r.case, r.column) end
end
table.sort(got)

if os.getenv("ROWS_WRITE") == "1" then
  t.write(list_path, table.concat(got, "\n") .. "\n")
  t.diag(("wrote %d rows to %s"):format(#got, list_path))
end

local want, want_set, cases = {}, {}, {}
for line in (t.read(list_path) or ""):gmatch("[^\n]+") do
  want[#want + 1] = line
  want_set[line] = true
  cases[line:match("^(.-) | [^|]*$")] = true
end
t.ok(#want > 0, "tests/rows.txt lists the rows")
-- A script new to scripts/ is in no line of the list: say how to write it again.
local REGENERATE = "write the list again from this machine's runs: ROWS_WRITE=1 FTRUN=./ftrun "
  .. "FTRUN_ASM=core/kernels_O2.s prove --exec ./ftrun tests/rows.lua; then run make docs, which "
  .. "regenerates the man page's list of scripts (and README.md's layout)"
local listed, unlisted = {}, {}
for _, line in ipairs(want) do listed[line:match("^(.-) | ") or ""] = true end
for _, name in ipairs(SCRIPTS) do
  if not listed[name] then unlisted[#unlisted + 1] = name end
end
t.is(#unlisted, 0, "every script through the harness is in tests/rows.txt",
  ("not listed: %s; %s"):format(table.concat(unlisted, ", "), REGENERATE))
local got_set, missing, extra = {}, {}, {}
for _, line in ipairs(got) do
  got_set[line] = true
  if not want_set[line] then extra[#extra + 1] = line end
end
for _, line in ipairs(want) do
  local case = line:match("^(.-) | [^|]*$")
  if not got_set[line] and not unsupported[case] then missing[#missing + 1] = line end
end
for case, why in pairs(unsupported) do
  t.ok(cases[case], ("%s: not supported here (%s), and a case the list names"):format(case, why))
end
t.is(#missing, 0, "every row in the list is written (" .. #want .. " rows)")
for _, m in ipairs(missing) do t.diag("missing: " .. m) end
t.is(#extra, 0, "no row beyond the list is written", #extra > 0 and ("if the new rows are meant, " .. REGENERATE) or nil)
for _, m in ipairs(extra) do t.diag("extra: " .. m) end

os.execute("rm -rf " .. q(dir))
t.done()
