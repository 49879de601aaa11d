-- pagesize.lua and cycles.lua THP=<size> at 3-32 MiB: every offered size faults once per folio
-- and its own counter says so; a repetition that did not get its size stays out of the rows;
-- the model's values; every sysfs setting back after a normal run, an error and SIGINT mid-run;
-- without root the unavailable cases are named; a size not offered exits 2.
local t = require "tap"
local sysfs = require "sysfs"
local ft = require "ft"
local json = require "json"
local summary = require "summary"
local q = t.quote

local MiB = 1 << 20
local THP, HUGETLB = sysfs.THP, sysfs.HUGETLB
local root = t.run("id -u") == "0\n"
local function skip(name, why) t.ok(true, name .. " # SKIP " .. why) end
local sizes = ft.folio_sizes() or {}
local function named(b) return b >= MiB and (b // MiB) .. " MiB" or (b // 1024) .. " KiB" end
local mthp = {} -- the multi-size THP sizes below the PMD size
for _, f in ipairs(sizes) do
  if not f.pmd then mthp[#mthp + 1] = f end
end

-- The settings as the files say; the lock held for the whole file, so that no other suite or
-- run changes them under its checks (the ftrun runs it starts share it).
local snapshot = sysfs.snapshot
assert(sysfs.hold_lock())

local dir = t.tmpdir()
os.execute("chmod 777 " .. q(dir))
-- A hook run before the script: sum_bytes (the read-back after the passes) does `what` once a
-- folio setting has been changed, i.e. mid-run.
local function hook(what)
  return ([[
local methods = select(2, debug.getupvalue(debug.getregistry()["ft.buffer"].__index, 1))
local real, done = methods.sum_bytes, false
methods.sum_bytes = function(b)
  for _, c in ipairs(ft.sysfs_changes()) do
    if not done and c.path:find("kB/enabled", 1, true) then
      done = true
      io.stderr:write("injected after ", #ft.sysfs_changes(), " settings changed\n")
      %s
    end
  end
  return real(b)
end]]):format(what)
end

-- A run whose settings something else changed meanwhile (outside the lock: a suite in a chroot
-- has a lock of its own, a program may write a setting directly; the run says so at its end)
-- did not measure the sizes it set: it is run again, three times in all at most.
local function undisturbed(args)
  local out, code
  for try = 1, 3 do
    out, code = t.ftrun_run(args)
    if not out:find("something else changed it meanwhile", 1, true) then break end
    t.diag(("%s: try %d had a setting changed under it by another process"):format(args, try))
  end
  return out, code
end

-- pagesize.lua's results: JSON, the raw file's index, and each case's records.
local function results(prefix)
  local doc = json.decode(t.read(dir .. "/" .. prefix .. "-results.json") or "null") or { reps = {} }
  local records = {}
  for _, c in ipairs(doc.reps) do records[c.case] = c end
  return doc, summary.index(t.read(dir .. "/" .. prefix .. "-raw.txt") or ""), records
end

if root then
  local before = snapshot()
  local bytes = 32 * MiB
  local out, code = undisturbed("pagesize.lua " .. ("MIB=32 REPS=3 RESULTS=%s README=/dev/null"):format(q(dir)))
  t.is(code, 0, "pagesize.lua MIB=32 REPS=3 runs clean", out)
  sysfs.is_as_before(before, "after a normal run every setting reads as before")
  local doc, ix, records = results("exp-pagesize")
  t.like(t.read(dir .. "/exp-pagesize-raw.txt") or "", "CHECKSUMS OK", "every read-back matched")
  local function check(name, size, counter)
    local c = records[name] or { records = {} }
    local want, faults, got, exact = bytes // size, true, true, false
    for _, r in ipairs(c.records) do
      if r.pass1_faults ~= want then faults = false end
      if r.obtained ~= 1 or r.not_obtained then got = false end
      if counter and r.alloc == want then exact = true end
    end
    t.ok(#c.records == 3 and faults, ("%s: pass 1 takes bytes / size = %d faults in every repetition"):format(name, want))
    t.ok(got, name .. ": every repetition got its size")
    if counter then -- system-wide: one undisturbed repetition in three must show it exactly
      t.ok(exact, ("%s: %s rose by exactly %d"):format(name, counter, want))
    end
    return c.records
  end
  check("4 KiB base pages", 4096)
  for _, f in ipairs(sizes) do
    local name = named(f.bytes) .. (f.pmd and " THP" or " mTHP")
    local recs = check(name, f.bytes, "its anon_fault_alloc")
    if f.pmd then t.is(recs[1] and recs[1].huge_bytes, bytes, name .. ": all of it PMD-mapped (thp_bytes)") end
  end
  if ix.unsupported["2 MiB hugetlb"] then
    skip("2 MiB hugetlb", ix.unsupported["2 MiB hugetlb"])
  else
    check("2 MiB hugetlb", 2 * MiB, "the hugetlb pool pages taken")
  end
  -- a kernel without a 1 GiB pool (no hugepages-1048576kB) refuses it before the size matters
  if t.read(HUGETLB .. "/hugepages-1048576kB/nr_hugepages") then
    t.like(ix.unsupported["1 GiB hugetlb"] or "", "MIB is not a multiple of 1 GiB", "1 GiB hugetlb: named as unavailable at 32 MiB")
  else
    t.like(ix.unsupported["1 GiB hugetlb"] or "", "hugepages-1048576kB/nr_hugepages",
      "1 GiB hugetlb: named as unavailable, the kernel having no 1 GiB pool")
  end
  local got = ix.row("4 KiB base pages", "got")
  t.is(got and got.mean, 100.0, "the 'reps that got the size' row is 100 % when all did")
  local fits, residuals, measured = {}, 0, 0
  for _, v in ipairs(ix.values.fit_fixed or {}) do fits[v.stat] = v end
  for _, v in ipairs(ix.values.fit_residual or {}) do
    if v.stat == "median" then residuals = residuals + 1 end
  end
  for _, r in ipairs(ix.rows) do
    if r.column == "per_fault" and r.n > 0 then measured = measured + 1 end
  end
  -- their signs are the machine's: on a loaded one the noisy points can fit a negative fixed cost
  local function fitted(f) return f and math.type(f.x) ~= nil and math.type(f.per_byte_ns) ~= nil end
  t.ok(fitted(fits.median) and fitted(fits.min),
    "the model: a fixed cost and a per-byte cost over the medians and over the minima",
    fits.median and ("medians: %s ns + %s ns/byte"):format(tostring(fits.median.x), tostring(fits.median.per_byte_ns)))
  t.ok(measured >= #sizes + 1 and residuals == measured, "a residual for every size obtained",
    ("%d residuals, %d sizes measured"):format(residuals, measured))
  local note = ""
  for _, n in ipairs(ix.meta.note) do note = note .. n.text end
  t.like(note, "Over the medians: ", "the model is a note under the table")
  t.ok(doc.rows and #doc.rows > 0, "the JSON holds the rows")

  -- 3 MiB: no 2 MiB THP can cover it: marked, and its times left out of the rows
  out, code = undisturbed("pagesize.lua " .. ("MIB=3 REPS=2 RESULTS=%s/odd"):format(q(dir)))
  t.is(code, 0, "pagesize.lua MIB=3 runs clean")
  local odd = json.decode(t.read(dir .. "/odd/exp-pagesize-results.json") or "null") or { reps = {}, rows = {} }
  local recs, rows = {}, {}
  for _, c in ipairs(odd.reps) do recs[c.case] = c.records end
  for _, r in ipairs(odd.rows) do rows[r.case .. "/" .. r.column] = r end
  local r1 = (recs["2 MiB THP"] or {})[1] or {}
  t.is(r1.obtained, 0, "MIB=3: a 2 MiB THP repetition is marked as not having got its size")
  t.ok(r1.not_obtained and r1.not_obtained.pass1 and r1.pass1 == nil, "its times are kept aside in not_obtained")
  t.is(rows["2 MiB THP/per_fault"], nil, "and no ns-per-fault row comes from them")
  t.is(rows["2 MiB THP/got"] and rows["2 MiB THP/got"].mean, 0, "'reps that got the size': 0 %")
  t.ok(rows["2 MiB THP/pass1_faults"] ~= nil, "its fault counts stay, to show what it got")
  sysfs.is_as_before(before, "MIB=3: every setting reads as before")

  -- an error mid-run (a checksum made wrong once a folio size was set): exit 1, settings back
  out, code = t.ftrun_run(("-e %s %s MIB=32 REPS=3 RESULTS=%s/error"):format(q(hook("return real(b) + 1")),
    q(ft.project_dir .. "/scripts/pagesize.lua"), q(dir)))
  t.is(code, 1, "an error injected mid-run exits 1")
  t.like(out, "checksum mismatch in ", "the error is the injected one")
  t.like(out, "injected after ", "it came after settings were changed")
  sysfs.is_as_before(before, "after an error mid-run every setting reads as before")

  -- SIGINT mid-run, once a folio size was set
  local ready = dir .. "/ready"
  out = t.signal_when(("%s -e %s %s MIB=32 REPS=200 RESULTS=%s/int"):format(q(t.ftrun),
    q(hook(("io.open(%q, 'w'):close()"):format(ready))), q(ft.project_dir .. "/scripts/pagesize.lua"), q(dir)),
    ("[ -e %s ] && sleep 0.2"):format(q(ready)), "INT")
  t.like(out, "injected after ", "SIGINT: it came after settings were changed")
  t.like(out, "exit 130", "SIGINT mid-run exits 130")
  sysfs.is_as_before(before, "after SIGINT mid-run every setting reads as before")
else
  skip("pagesize.lua's sizes and restores", "not root")
end

do -- without root: exit 0, the 4 KiB row, every other case named with its reason
  local setpriv = t.run("command -v setpriv") ~= ""
  if root and not setpriv then
    skip("pagesize.lua as nobody", "no setpriv (util-linux)")
  else
    local before = snapshot()
    local out, code = t.run(("cd / && %s pagesize.lua MIB=8 REPS=1 RESULTS=%s/nobody"):format(
      root and t.nobody() or q(t.ftrun), q(dir)))
    t.is(code, 0, "without root pagesize.lua exits 0", out)
    t.like(out, "| 4 KiB base pages | ", "the 4 KiB row is measured")
    for _, f in ipairs(mthp) do
      t.like(out, ("| %s mTHP | not supported: cannot set %s/hugepages-%dkB/enabled to madvise: Permission denied |")
        :format(named(f.bytes), THP, f.kb), named(f.bytes) .. " mTHP: named as not supported, with the reason")
    end
    t.like(out, "| 2 MiB THP | not supported: cannot set " .. THP .. "/hugepages-2048kB/enabled to madvise: "
      .. "Permission denied |", "2 MiB THP: named")
    t.like(out, "| 2 MiB hugetlb | not supported: cannot set " .. HUGETLB .. "/hugepages-2048kB/nr_hugepages",
      "2 MiB hugetlb: named")
    t.like(out, "| 1 GiB hugetlb | not supported: ", "1 GiB hugetlb: named")
    sysfs.is_as_before(before, "without root nothing changed")
  end
end

-- cycles.lua THP=<the first mTHP size>: the whole benchmark with those folios
local first = mthp[1]
local name = first and (first.kb % 1024 == 0 and (first.kb // 1024) .. "M" or first.kb .. "K")
if root and first then
  local before = snapshot()
  local out, code = undisturbed("cycles.lua " .. ("THP=%s QUICK=1 MIB=16 REPS=4 RESULTS=%s/cycles"):format(name, q(dir)))
  t.is(code, 0, "cycles.lua THP=" .. name .. " QUICK=1 runs clean", out)
  local ix = summary.index(t.read(dir .. "/cycles/quick-raw.txt") or "")
  local want = 16 * MiB // first.bytes
  local function faults(case, column) return (ix.row(case, column) or {}).max end
  t.is(faults("A", "pass1_faults"), want, ("THP=%s: cycle A pass 1 takes bytes / %s = %d faults"):format(name, name, want))
  t.is((ix.row("A", "pass1_faults") or {}).min, want, "in every repetition")
  t.is(faults("C", "pass1_faults"), want, "cycle C's timed pass 1 too")
  t.is(faults("B", "fill_faults"), want, "and cycle B's fresh fill")
  local page = ix.value("thp_page") or {}
  t.is(page.x, first.bytes, "thp_page says the folio size obtained")
  -- the counter is system-wide: another process's folios of that size add to it (the settings
  -- lock keeps out only the ftrun runs that share it), never take from it, so each repetition
  -- shows at least as many and one undisturbed repetition of the four exactly as many
  local alloc = ix.row("A", "folio_alloc") or {}
  t.ok((page.folio_alloc or -1) >= want and alloc.min == want, "from the size's own anon_fault_alloc",
    ("median %s, min %s, max %s over the repetitions, want %d"):format(tostring(page.folio_alloc),
      tostring(alloc.min), tostring(alloc.max), want))
  t.like(out, ("Pages obtained (cycle A, THP=%s): pass 1 took %d faults"):format(name, want), "the summary says so")
  sysfs.is_as_before(before, "after THP=" .. name .. " every setting reads as before")
  -- not quick: the run and its files are named thp-<size>
  out, code = t.ftrun_run("cycles.lua", ("THP=%s MIB=4 REPS=1 CYCLES=A RESULTS=%s/named"):format(name, q(dir)))
  t.is(code, 0, "THP=" .. name .. " MIB=4 CYCLES=A runs", out)
  t.ok(t.read(dir .. "/named/thp-" .. name .. "-cycles-A-raw.txt") ~= nil, "its files are named thp-" .. name)
else
  skip("cycles.lua THP=<size>", first and "not root" or "no multi-size THP size offered")
end

do -- a size the kernel does not offer: exit 2 naming the offered sizes, nothing written
  local out, code = t.ftrun_run("cycles.lua", ("THP=3K RESULTS=%s/3k"):format(q(dir)))
  t.is(code, 2, "THP=3K exits 2")
  local offered = { "default", "never", "always" }
  for _, f in ipairs(mthp) do offered[#offered + 1] = f.kb % 1024 == 0 and (f.kb // 1024) .. "M" or f.kb .. "K" end
  t.like(out, "THP=3K: expected one of " .. table.concat(offered, ", "), "and names the sizes offered")
  t.ok(not out:find("warm-up", 1, true), "before anything ran")
  t.is(t.run("ls -A " .. q(dir .. "/3k") .. " 2>/dev/null"), "", "nothing written")
end

do -- results/README.md has the blocks a published run pastes into
  local readme = t.read(ft.project_dir .. "/results/README.md") or ""
  for _, run in ipairs { "thp-16K", "exp-pagesize" } do
    local b, e = require("runfiles").markers(run)
    t.ok(readme:find(b, 1, true) and readme:find(e, 1, true), "README has the markers of the run " .. run)
  end
end

os.execute("rm -rf " .. q(dir))
-- D9: a folio size left enabled (as a killed THP=16K run leaves it) under a THP=always run: the
-- faults say the page is not the base page, so "Pages obtained" says mixed, not 4096 bytes.
local f16, pmd_kb = nil, nil
for _, f in ipairs(sizes) do
  if f.kb == 16 then f16 = f end
  if f.pmd then pmd_kb = f.kb end
end
if root and f16 and pmd_kb then
  local before = snapshot()
  assert(ft.set_folio(16, "madvise"))
  assert(ft.set_folio(pmd_kb, "never"))
  local out, code = t.ftrun_run("cycles.lua", ("QUICK=1 THP=always CYCLES=A RESULTS=%s README=/dev/null"):format(q(dir)))
  assert(ft.sysfs_restore())
  t.is(code, 0, "THP=always beside a leftover 16 KiB setting runs", out)
  local text = t.read(dir .. "/quick-summary.md") or ""
  t.like(text, "so the page is mixed", "the page obtained is mixed, told by the pass-1 faults (D9)", text)
  sysfs.is_as_before(before, "the leftover is undone")
else
  skip("a leftover 16 KiB setting under THP=always (D9)", root and "no 16 KiB size" or "needs root")
end

t.done()
