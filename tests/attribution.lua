-- attribution.lua: a QUICK run profiles every case, its stages add up, the
-- first touch is the kernel's with clear_page near the top, pass 2 is user
-- time; and a perf that refuses makes every case "not supported", named.
local t = require "tap"
-- What THP gives depends on machine-wide settings another suite may change:
-- the settings lock for the whole file (tests/lib/sysfs.lua).
assert(require("sysfs").hold_lock())
local json = require "json"
local kind = require "kind"
local summary = require "summary"
local q = t.quote

local dir = t.tmpdir()
local PAGE, MIB = 4096, 64
local PAGES = (MIB << 20) // PAGE
local CASES = { "pass 1, 4 KiB pages", "pass 1, THP=always", "MAP_POPULATE (inside mmap)",
  "read fault onto the zero page", "pass 2 (re-touch)", "munmap" }
local STAGES = { "entry", "pte", "alloc", "zero", "memcg", "lock", "tlb", "counting", "user", "ungrouped" }

local out, code = t.ftrun_run("attribution.lua", "QUICK=1 RESULTS=" .. q(dir) .. " README=/dev/null")
t.is(code, 0, "a QUICK run exits 0")
if code ~= 0 then t.diag(out) end
local raw = t.read(dir .. "/quick-attribution-raw.txt") or ""
local ix = summary.index(raw)
t.like(raw, "CHECKSUMS OK", "every read-back matched")
t.like(out, "| pass 1, 4 KiB pages | ", "the table has a line per case")
t.like(out, "Top kernel symbols by samples", "and the top symbols follow it")
t.like(out, "cannot interrupt code that runs with interrupts off", "the note gives the guest's caveat")

-- values by case: name -> list of RESULT records
local function values(name, case)
  local list = {}
  for _, v in ipairs(ix.values[name] or {}) do
    if v.case == case then list[#list + 1] = v end
  end
  return list
end
local function stage(case, key)
  for _, v in ipairs(values("stage", case)) do
    if v.stage == key then return v.x end
  end
end

for _, case in ipairs(CASES) do
  t.ok(not ix.unsupported[case], case .. ": profiled", ix.unsupported[case])
  local sum = 0
  for _, key in ipairs(STAGES) do sum = sum + (stage(case, key) or 0) end
  t.ok(math.abs(sum - 100) < 1e-9, ("%s: the stages and ungrouped add up to 100 %% (%.12g)"):format(case, sum))
  local s = values("samples", case)[1] or {}
  t.diag(("%s: %s samples (kernel %s, user %s, lost %s), ungrouped %.2f %%"):format(case, s.x, s.kernel, s.user,
    s.lost, stage(case, "ungrouped") or -1))
end

do -- the first touch with 4 KiB pages
  local case = CASES[1]
  local s = values("samples", case)[1] or {}
  local above = ("%s: kernel samples above user ones (%s > %s)"):format(case, s.kernel, s.user)
  local top, names = values("top", case), {}
  table.sort(top, function(a, b) return a.rank < b.rank end)
  local clear, irq = false, false
  for k = 1, 3 do
    names[k] = top[k] and top[k].symbol or "-"
    clear = clear or names[k]:match("^clear_page") ~= nil
    irq = irq or names[k] == "pvm_irq_enable"
  end
  local clear_name = "a clear_page* symbol among the top three kernel symbols: " .. table.concat(names, ", ")
  if kind.PROFILE_SKIP then
    t.skip(above, kind.PROFILE_SKIP)
    t.skip(clear_name, kind.PROFILE_SKIP)
    if kind.pvm then t.ok(irq, "PVM: pvm_irq_enable among the top three kernel symbols: " .. table.concat(names, ", ")) end
  else
    t.ok((s.kernel or 0) > (s.user or 0), above)
    t.ok(clear, clear_name)
  end
  t.is(top[1] and math.type(top[1].samples), "integer", "the top symbols carry their sample counts")
  local row = ix.row(case, "ns_faults") or {}
  t.ok(row.min == PAGES and row.max == PAGES, case .. ": one fault per page inside the profile, every rep")
end

do -- the other steps take the faults they must
  local function faults(case) -- the same in every repetition, or nil
    local row = ix.row(case, "ns_faults") or {}
    return row.min == row.max and row.max or nil
  end
  t.is(faults("MAP_POPULATE (inside mmap)"), PAGES, "MAP_POPULATE: the faults are inside mmap")
  t.is(faults("read fault onto the zero page"), PAGES, "read: a fault per page")
  t.is(faults("pass 2 (re-touch)"), 0, "pass 2: no fault")
  t.is(faults("munmap"), 0, "munmap: no fault")
  local thp, disturbed = faults("pass 1, THP=always") or -1, kind.thp_disturbed()
  if disturbed then
    t.skip("THP=always: from one fault per 2 MiB to one per page", disturbed)
  else
    t.ok(thp >= MIB // 2 and thp <= PAGES, "THP=always: from one fault per 2 MiB to one per page: " .. thp)
  end
end

do -- pass 2 is user time: the stores, no fault
  local user = stage("pass 2 (re-touch)", "user") or 0
  -- a majority, not a share a loaded machine can miss (77 % beside a second
  -- suite); a pass that faulted would be mostly kernel samples, as pass 1 is
  t.ok(user > 50, ("pass 2 is mostly user samples: %.2f %%"):format(user))
end

do -- the JSON: every repetition's stage shares add up too, and its counts are kept
  local doc = json.decode(t.read(dir .. "/quick-attribution-results.json") or "null")
  t.ok(doc ~= nil, "the JSON decodes")
  local all, n = true, 0
  for _, c in ipairs(doc and doc.reps or {}) do
    for _, r in ipairs(c.records) do
      local sum = 0
      for _, key in ipairs(STAGES) do sum = sum + (r["st_" .. key] or 0) end
      all = all and math.abs(sum - 100) < 1e-9 and r.chained == r.samples
      n = n + 1
    end
  end
  t.ok(n == #CASES * 2 and all, ("every repetition's shares add up to 100 %% and every sample has a chain (%d)"):format(n))
end

-- Refusals: a fake /proc/sys/kernel in FTRUN_PROC_SYS.
local function refused(settings, user)
  local fake, results = t.tmpdir(), t.tmpdir()
  for name, v in pairs(settings) do t.write(fake .. "/" .. name, v .. "\n") end
  os.execute("chmod 755 " .. q(fake) .. " && chmod 777 " .. q(results))
  local text, status = t.run(("FTRUN_PROC_SYS=%s %s attribution.lua QUICK=1 RESULTS=%s README=/dev/null"):format(
    q(fake), user and t.nobody() or q(t.ftrun), q(results)))
  local r = summary.index(t.read(results .. "/quick-attribution-raw.txt") or "")
  os.execute("rm -rf " .. q(fake) .. " " .. q(results))
  return text, status, r
end
local function all_refused(r, part)
  local n = 0
  for _, case in ipairs(CASES) do
    if (r.unsupported[case] or ""):find(part, 1, true) then n = n + 1 end
  end
  return n == #CASES
end
local real = { perf_event_paranoid = 2, kptr_restrict = 0, perf_event_max_sample_rate = 100000 }
if t.run("id -u") == "0\n" then
  local fake = { perf_event_paranoid = 2, kptr_restrict = 2, perf_event_max_sample_rate = 100000 }
  local text, status, r = refused(fake)
  t.is(status, 0, "kptr_restrict 2: the run still exits 0")
  t.ok(all_refused(r, "/kptr_restrict is 2; it must be 1 or below"), "every case not supported, the setting named")
  t.like(r.verdict or "", "CHECKSUMS NONE: no read-back was made", "and nothing was mapped or touched")
  t.like(text, "| pass 1, 4 KiB pages | not supported: ft.profile: ", "the table says so")
  if t.run("command -v setpriv") ~= "" then
    fake = { perf_event_paranoid = 3, kptr_restrict = real.kptr_restrict,
      perf_event_max_sample_rate = real.perf_event_max_sample_rate }
    text, status, r = refused(fake, true)
    t.is(status, 0, "unprivileged, perf_event_paranoid 3: the run exits 0", text)
    t.ok(all_refused(r, "/perf_event_paranoid is 3: sampling the kernel needs it at 1 or below"),
      "every case not supported, with the setting, its value and what it must be")
    t.like(r.verdict or "", "CHECKSUMS NONE: no read-back was made", "and nothing was mapped or touched")
  else
    t.diag("skipped: the unprivileged refusal needs setpriv")
  end
else
  t.diag("skipped: the refusal tests need root")
end

do -- FREQ is a knob of its own
  local _, c = t.ftrun_run("attribution.lua", "FREQ=0 QUICK=1 RESULTS=" .. q(dir))
  t.is(c, 2, "FREQ=0 exits 2")
  local out2, c2 = t.ftrun_run("attribution.lua", "FREQ=1000000 QUICK=1 RESULTS=" .. q(dir .. "/max"))
  t.is(c2, 2, "FREQ above perf_event_max_sample_rate exits 2")
  t.like(out2, "perf_event_max_sample_rate", "naming the setting")
  _, c = t.ftrun_run("thp.lua", "FREQ=5000 QUICK=1 RESULTS=" .. q(dir))
  t.is(c, 2, "FREQ for another script exits 2")
end

os.execute("rm -rf " .. q(dir))
t.done()
