-- What a run prints: FORMAT=md (no line over 200 columns, long headers in
-- a legend), csv, tsv or json on stdout; QUIET=1 keeps stderr to warnings;
-- the warnings every script gets about a pass with no faults above the
-- stall threshold and a clock that moved during the run.
local t = require "tap"
local display = require "display"
local json = require "json"
local q = t.quote

local function split(cmd)
  local dir = t.tmpdir()
  local _, code = t.run(cmd:format(q(dir .. "/r")) .. " >" .. q(dir .. "/out") .. " 2>" .. q(dir .. "/err"))
  local out, err = t.read(dir .. "/out") or "", t.read(dir .. "/err") or ""
  os.execute("rm -rf " .. q(dir))
  return out, err, code
end

local function widest(text)
  local w = 0
  for l in text:gmatch("[^\n]*") do w = math.max(w, utf8.len(l) or #l) end
  return w
end

-- a CSV line's fields (quoted fields may hold commas and doubled quotes)
local function csv_fields(line)
  local out, i = {}, 1
  while i <= #line + 1 do
    if line:sub(i, i) == '"' then
      local j, v = i + 1, ""
      while true do
        local k = line:find('"', j, true)
        v = v .. line:sub(j, k - 1)
        if line:sub(k + 1, k + 1) == '"' then v, j = v .. '"', k + 2 else i = k + 2; break end
      end
      out[#out + 1] = v
    else
      local k = line:find(",", i, true) or #line + 1
      out[#out + 1] = line:sub(i, k - 1)
      i = k + 1
    end
  end
  return out
end

-- SLOW_NS well above its floor, twice the timer's cost (141 ns once on a busy machine), which refuses the run
local RUN = q(t.ftrun) .. " cycles.lua QUICK=1 MIB=4 REPS=3 CYCLES=AC SLOW_NS=2000 RESULTS=%s"

do -- the default: markdown no wider than 200 columns, the long headers in a legend
  local out, err, code = split(RUN)
  t.is(code, 0, "a default run exits 0", err)
  t.ok(widest(out) <= 200, "no line of the table on stdout is over 200 columns", ("widest %d"):format(widest(out)))
  -- the table is shortened only when it would be wider (its values' widths vary from run to run)
  local shortened = out:find("| [1] |", 1, true) or out:find("| [1]", 1, true)
  t.ok(not shortened or out:find("\n- [1] ", 1, true),
    "the headers it shortened are spelt out in a legend under the table", out)
  t.like(out, "| A | pass 1: first touch", "the cycle table is there")
  t.like(err, "rep 3/3:", "progress on stderr")
  t.like(err, ": wrote ", "and the files written")
end

do -- FORMAT=csv: one table with a header, every line as many fields
  local out, err, code = split(RUN .. " FORMAT=csv")
  t.is(code, 0, "FORMAT=csv exits 0", err)
  local lines = {}
  for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
  t.is(lines[1], table.concat(display.FIELDS, ","), "the first line is the header")
  local bad = 0
  for i = 2, #lines do if #csv_fields(lines[i]) ~= #display.FIELDS then bad = bad + 1 end end
  t.is(bad, 0, "every line has the header's fields", out)
  t.ok(#lines > 20, "a line per row", #lines)
  t.ok(not out:find("|", 1, true) and not out:find("**", 1, true), "and nothing else: no markdown")
  t.ok(out:find("\nA,pass1,pass 1: first touch,ns/page,3,", 1, true) ~= nil, "pass 1's row with its 3 repetitions")
end

do -- FORMAT=tsv and FORMAT=json
  local out, _, code = split(RUN .. " FORMAT=tsv")
  t.is(code, 0, "FORMAT=tsv exits 0")
  t.is(out:match("^[^\n]*"), table.concat(display.FIELDS, "\t"), "tab-separated, with the header")
  out, _, code = split(RUN .. " FORMAT=json")
  t.is(code, 0, "FORMAT=json exits 0")
  local ok, doc = pcall(json.decode, out)
  t.ok(ok and type(doc) == "table" and #doc > 20, "stdout is one JSON array of rows")
  t.is(ok and doc[1] and type(doc[1].case), "string", "each row an object with its case")
  local err
  out, err, code = split(RUN .. " FORMAT=xml")
  t.is(code, 2, "FORMAT=xml is refused with exit 2")
  t.like(err, "FORMAT=xml: expected one of md, csv, tsv, json", "naming what it takes")
end

do -- QUIET=1: no progress, no file list; the table still
  local out, err, code = split(RUN .. " QUIET=1")
  t.is(code, 0, "QUIET=1 exits 0")
  t.ok(not err:find("rep %d") and not err:find("warm%-up") and not err:find(": wrote "),
    "stderr holds no progress and no file list", err)
  t.like(out, "pass 1: first touch", "stdout holds the table")
end

do -- cycle C's page maps: the right axis spans a bin's pages, the key is above the plot, not on the x label
  local dir = t.tmpdir()
  local _, code = t.ftrun_run("cycles.lua QUICK=1 MIB=4 REPS=2 CYCLES=C SLOW_NS=2000 QUIET=1 RESULTS=" .. q(dir) .. " >/dev/null")
  t.is(code, 0, "a cycle C run")
  for _, pass in ipairs { "pass1", "pass2" } do
    local gp = t.read(dir .. "/quick-C-" .. pass .. "-pages.gp") or ""
    t.like(gp, "set y2range [0:1.1]\n", pass .. ": the right axis runs from 0 to a bin's 1 page and a tenth")
    t.like(gp, 'set xlabel "page index (bins of 1 pages; ', pass .. ": the x label names the bin width")
    t.like(gp, "set xrange [0:1024]\n", pass .. ": the x axis ends at the last page")
    t.ok(gp:find("set key above", 1, true) and not gp:find("set key below", 1, true),
      pass .. ": the key is above the plot, not under it where the x label is")
  end
  os.execute("rm -rf " .. q(dir))
end

do -- a key below the plot is drawn over the x label: a file that puts it there sets no x label
  local root = require("ft").project_dir
  local found = t.run("grep -rl 'set key below' " .. q(root .. "/scripts") .. " 2>/dev/null | xargs -r grep -l 'xlabel'")
  t.is(found, "", "no gnuplot script of scripts/ sets its key below the plot and an x label")
end

do -- display.narrow alone: a narrow table is left as it is; a wide one fits, legend and all
  local narrow = "| a | b |\n|---|---|\n| 1 | 2 |\n"
  t.is(display.narrow(narrow), narrow, "a table that fits is kept byte for byte")
  local head, rule, row = { "case" }, { "---" }, { "x" }
  for i = 1, 12 do
    head[#head + 1] = ("a rather long column heading number %d"):format(i)
    rule[#rule + 1], row[#row + 1] = "---", ("%d.5 [%d.0, %d.9]"):format(i * 1000, i * 900, i * 1100)
  end
  local md = "| " .. table.concat(head, " | ") .. " |\n|" .. table.concat(rule, "|") .. "|\n| "
    .. table.concat(row, " | ") .. " |\n"
  local out = display.narrow(md)
  t.ok(widest(out) <= 200, "a 12-column table with 40-column headers fits in 200", out)
  t.like(out, "- [12] a rather long column heading number 12", "its headers are in the legend")
  t.like(out, "12000.5 [10800.0, 13200.9]", "and every cell is still there")
  local long = ("word "):rep(100)
  t.ok(widest(display.narrow(long)) <= 200, "a long prose line is wrapped")
end

do -- every script: a pass without faults above the stall threshold, and a clock that moved
  local dir = t.tmpdir()
  t.write(dir .. "/stall.lua", [[
local ft = require "ft"
local h = require("harness").start({ script = "stall", mib = 4, reps = 2, about = "planted warnings" }, { ... })
h:case("fresh", function(r)
  local b <close> = r:map()
  r:pass("first", b, "touch", 1)
  r:pass("second", b, "touch", 2)
  r:check_bytes(b, 2, "second pass")
end)
h:columns { { "first", "first touch", "ns/page" }, { "second", "second pass", "ns/page" } }
h:run()
h:value("stall_threshold", 0.001, "ns/page") -- no pass is that fast: the second is above it
ft.clock_estimate = function() return 97.5, "measured" end -- the end's estimate: far from the start's
h:finish()
]])
  local out, err, code = split(q(t.ftrun) .. " " .. q(dir .. "/stall.lua") .. " QUIET=1 RESULTS=%s")
  t.is(code, 0, "the planted script runs", err)
  t.like(err, "warning: fresh second took no faults yet cost ", "a fault-free pass above the threshold is warned about")
  t.like(out, "above the stall threshold of 0.0 ns/page", "in the table's warnings too")
  t.ok(not err:find("fresh first took no faults", 1, true), "not the pass that took its faults")
  t.like(err, "GHz at the start to 97.500 GHz at the end, more than its own spread", "a moved clock is warned about")
  out, err = split(q(t.ftrun) .. " " .. q(dir .. "/stall.lua") .. " QUIET=1 CLOCK_GHZ=3 RESULTS=%s")
  t.ok(not err:find("clock estimate moved", 1, true), "not when CLOCK_GHZ fixes the clock", err)
  os.execute("rm -rf " .. q(dir))
end

t.done()
