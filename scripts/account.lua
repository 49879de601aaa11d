-- account.lua: the account of a first touch for one kind of machine, from
-- committed results alone, running nothing: the measured first touch
-- (pass 1 of cycles.lua's cycle A) split into the floor (floor.lua), the
-- guest kernel's bookkeeping (attribution.lua's stages beyond zeroing and
-- the trap), the host (host.lua's share outside the guest kernel, where a
-- run of it is there) and the measurement's own cost, with what is left
-- "not accounted". The floor enters as floor.lua's share of a first touch
-- timed in its own repetitions, applied to the whole, where both are of the
-- same kind of machine. Writes one markdown table and one waterfall plot.
--   ./ftrun account.lua RUN_DIR [FLOOR_JSON=floor-results.json] [ACCOUNT_OUT=dir]
local account = require "explain.account"
local ft = require "ft"
local json = require "json"
local knobs = require "knobs"
local plots = require "plots"
local shell = require "shell"
local stats = require "stats"

local SCRIPT = "account.lua"
local SPEC = {
  { name = "RUN_DIR", kind = "path", default = "(none: required)",
    desc = "one kind's results directory: results.json, exp-attribution-results.json, maybe "
      .. "exp-host-results.json and thp-16K-results.json (also the first argument)" },
  { name = "FLOOR_JSON", kind = "path", default = "RUN_DIR/exp-floor-results.json",
    desc = "floor.lua's results JSON" },
  { name = "ACCOUNT_OUT", kind = "path", default = "(none: the table on stdout only)",
    desc = "directory the table (account.md) and the waterfall (account-waterfall.{dat,gp,svg}) go to" },
}
local ABOUT = "The account of a 4 KiB first touch on one kind of machine, from its committed results: the\n"
  .. "floor, the guest kernel's bookkeeping, the host, the measurement's own cost, and what is not\n"
  .. "accounted, in one table and one waterfall plot. Runs nothing."

local args = { ... }
-- the first argument is the directory unless it is a knob (NAME=, a name of letters, digits and _)
-- or an option: a path may hold an "=" (runs/x=1)
if args[1] and not args[1]:match("^[%w_]+=") and not args[1]:match("^%-") then args[1] = "RUN_DIR=" .. args[1] end
local cfg = knobs.setup(SCRIPT, ABOUT, SPEC, {}, args)
local function fail(msg) knobs.fail(SCRIPT, msg) end
if not cfg.given.RUN_DIR then fail("RUN_DIR: expected a directory (./ftrun account.lua RUN_DIR, or --help)") end
local DIR = cfg.RUN_DIR
for _, k in ipairs { "RUN_DIR", "ACCOUNT_OUT" } do
  local d = cfg.given[k] and io.open(cfg[k] .. "/.")
  if cfg.given[k] and not d then fail(("%s=%s: not a directory"):format(k, cfg[k])) end
  if d then d:close() end
end
local FLOOR = cfg.given.FLOOR_JSON and cfg.FLOOR_JSON or DIR .. "/exp-floor-results.json"

-- A results JSON, or nil when optional and absent; a file that is there
-- and no results JSON stops the run. Only a regular file of at most
-- MAX_JSON bytes is read: a FIFO would block the open and /dev/zero never end.
local MAX_JSON = 256 << 20
local function load(path, optional)
  local shown = knobs.shown(path)
  -- ft.read_file opens without blocking and checks the file it opened: a FIFO swapped in is refused
  local text, err, code = ft.read_file(path, MAX_JSON)
  if code == 2 and optional then return nil end
  if not text then fail(("%s (a results JSON is needed here)"):format(knobs.shown(err))) end
  local ok, doc, why = pcall(json.decode, text)
  if not ok then doc, why = nil, doc end
  if type(doc) ~= "table" or type(doc.rows) ~= "table" then
    fail(("%s: not a results JSON with rows: %s"):format(shown, knobs.shown(why or "no rows")))
  end
  if doc.values ~= nil and type(doc.values) ~= "table" or doc.reps ~= nil and type(doc.reps) ~= "table" then
    fail(("%s: its values and reps must be lists"):format(shown))
  end
  doc.path = shown
  return doc
end

-- A row or value read from a file: its figures numbers in order (lo <= median <= hi), its
-- per-repetition values numbers; else the run stops naming the file and the entry.
local function is_num(v) return type(v) == "number" and v == v and math.abs(v) < math.huge end
-- a value as a refusal shows it: a number as it is, anything else with its type
local function typed(v)
  return type(v) == "number" and knobs.shown(v) or ("%s (a %s)"):format(knobs.shown(v), type(v))
end
local function checked(doc, r, what, mid)
  local bad = not (is_num(r[mid]) and (r.lo == nil or is_num(r.lo)) and (r.hi == nil or is_num(r.hi)))
  if bad or (r.lo and r.lo > r[mid]) or (r.hi and r.hi < r[mid]) then
    fail(("%s: %s: expected numbers, %s with lo <= %s <= hi, got %s = %s, lo = %s, hi = %s"):format(doc.path, what,
      mid, mid, mid, typed(r[mid]), typed(r.lo), typed(r.hi)))
  end
  local values = r.values == nil and {} or r.values
  for i, v in ipairs(type(values) == "table" and values or { values }) do
    if type(values) ~= "table" or not is_num(v) then
      fail(("%s: %s: its per-repetition values must be a list of numbers, got %s at %d"):format(doc.path, what,
        typed(v), i))
    end
  end
  return r
end
local function row(doc, case, column)
  for _, r in ipairs(doc.rows) do
    if type(r) == "table" and r.case == case and r.column == column then
      return checked(doc, r, ("case %q, column %q"):format(case, column), "median")
    end
  end
end
local function need_row(doc, case, column)
  return row(doc, case, column) or fail(("%s: no row for case %q, column %q"):format(doc.path, case, column))
end
local function value(doc, name)
  for _, v in ipairs(doc.values or {}) do
    if type(v) == "table" and v.value == name then return checked(doc, v, ("value %q"):format(name), "x") end
  end
end
-- The first case whose params hold every field of want.
local function case_where(doc, want)
  for _, c in ipairs(doc.reps or {}) do
    local p = type(c) == "table" and type(c.params) == "table" and c.params or {}
    local all = type(c) == "table" and not c.unsupported
    for k, v in pairs(want) do all = all and p[k] == v end
    if all then return c.case end
  end
end
local function fig(r) return { median = r.median, lo = r.lo, hi = r.hi } end

local cycles = load(DIR .. "/results.json")
local attribution = load(DIR .. "/exp-attribution-results.json")
local host = load(DIR .. "/exp-host-results.json", true)
local floor = load(FLOOR)
local sixteen = load(DIR .. "/thp-16K-results.json", true)

local m = type(cycles.machine) == "table" and cycles.machine or {}
local KIND = m.shadow_page_tables and ("PVM guest (%s)"):format(m.kernel or "?")
  or ("%s guest (%s)"):format(tostring(m.hypervisor or "?"):gsub("KVMKVMKVM", "KVM"), m.kernel or "?")
local fm = type(floor.machine) == "table" and floor.machine or {}
local FLOOR_KIND = fm.shadow_page_tables and "PVM" or tostring(fm.hypervisor or "?"):gsub("KVMKVMKVM", "KVM")

-- The whole: cycle A's pass 1, which must be 4 KiB pages (its page value).
local page = value(cycles, "thp_page")
if cycles.page_size ~= 4096 or (page and page.x ~= 4096) then
  fail(("%s: cycle A's pass 1 is not in 4 KiB pages (page size %s, folio %s)"):format(cycles.path,
    typed(cycles.page_size), page and typed(page.x) or "none"))
end
local whole = fig(need_row(cycles, "A", "pass1"))
local pass2 = need_row(cycles, "A", "pass2")

-- A profiled case's stages: the per-repetition sum of keys' shares, as a
-- share of all its samples, or (of_kernel) of its kernel samples.
local function stage_values(case, key)
  local values = need_row(attribution, case, "st_" .. key).values
  if type(values) ~= "table" or #values == 0 then
    fail(("%s: case %q, column %q: no per-repetition values"):format(attribution.path, case, "st_" .. key))
  end
  for _, v in ipairs(values) do
    if v < 0 or v > 100 or (key == "user" and v >= 100) then
      fail(("%s: case %q, column %q: %s is no share of the kernel's samples (0 to 100%s)"):format(attribution.path,
        case, "st_" .. key, knobs.shown(v), key == "user" and ", less than 100 for the user share" or ""))
    end
  end
  return values
end
local function stage_sum(case, keys, of_kernel)
  local per, n = {}, nil
  for _, k in ipairs(of_kernel and { "user", table.unpack(keys) } or keys) do
    local values = stage_values(case, k)
    if n and #values ~= n then
      fail(("%s: case %q: its stages hold %d and %d repetitions"):format(attribution.path, case, n, #values))
    end
    n = #values
    if k ~= "user" or not of_kernel then
      for i, v in ipairs(values) do per[i] = (per[i] or 0) + v end
    end
  end
  if of_kernel then
    for i, v in ipairs(stage_values(case, "user")) do per[i] = per[i] * 100 / (100 - v) end
  end
  local d = stats.describe(per)
  return { median = d.median, lo = d.lo, hi = d.hi }
end
local PASS1, ZERO_PAGE = "pass 1, 4 KiB pages", "read fault onto the zero page"
local BOOK = { "pte", "alloc", "memcg", "lock", "tlb", "ungrouped" }
local book, user = stage_sum(PASS1, BOOK, true), stage_sum(PASS1, { "user" })
local profiled = stage_sum(PASS1, { "zero", "entry" }, true)

-- Outside the guest kernel: host.lua's share where it ran on this kind, else the profile's user share.
local outside, host_case
if host then
  host_case = case_where(host, { fresh = true, page = "4K" })
  local r = host_case and row(host, host_case, "beside_pct")
  -- a share is in [0, 100]: host.lua's clocks can put it just outside (its report says so)
  local function clamp(v) return math.min(100, math.max(0, v)) end
  if r then outside = { median = clamp(r.median), lo = clamp(r.lo), hi = clamp(r.hi) } end
end

local fv = value(floor, "floor") or fail(("%s: no floor value (did rep stosb and a fault case run?)"):format(
  floor.path))
if fv.x <= 0 or not (is_num(fv.lo) and is_num(fv.hi)) or fv.lo <= 0 then
  fail(("%s: value \"floor\": expected a positive figure with lo and hi, got %s [%s, %s]"):format(floor.path,
    knobs.shown(fv.x), knobs.shown(fv.lo), knobs.shown(fv.hi)))
end
if type(fv.zero_case) ~= "string" or type(fv.fault_case) ~= "string" then
  fail(("%s: value \"floor\": its zero_case and fault_case must name cases"):format(floor.path))
end
-- The floor's fault, when it is the zero-page read fault the profile also took: its own pass
-- through the bookkeeping stages, taken off the first touch's.
-- Its user share (the exception's delivery, its loop) is taken off the outside part likewise.
local fault, fault_book, fault_user
local zero_fault = case_where(floor, { part = "fault", kind = "zero_page" })
if fv.fault_case == zero_fault and row(attribution, ZERO_PAGE, "st_pte") then
  fault, fault_book = fig(need_row(floor, fv.fault_case, "ns")), stage_sum(ZERO_PAGE, BOOK)
  fault_user = stage_sum(ZERO_PAGE, { "user" })
end
-- The floor as floor.lua measured it beside a first touch in the same repetitions: its share of
-- that first touch (the ratio within each repetition), applied to the whole. Runs made days
-- apart on a busy machine move every figure together; the ratio is what holds across runs. A
-- floor from another kind of machine has no ratio to this kind's first touch: taken as it is.
local SAME_KIND = FLOOR_KIND == (m.shadow_page_tables and "PVM" or "KVM")
local over = SAME_KIND and value(floor, "first_touch_over_floor") or nil
if over and not (is_num(over.lo) and is_num(over.hi) and over.lo > 0 and is_num(over.first_touch)
  and over.first_touch > 0) then
  fail(("%s: value \"first_touch_over_floor\": expected a positive ratio with lo, hi and first_touch, got %s [%s, "
    .. "%s], first_touch %s"):format(floor.path, knobs.shown(over.x), knobs.shown(over.lo), knobs.shown(over.hi),
    knobs.shown(over.first_touch)))
end
local floor_part = { median = fv.x, lo = fv.lo, hi = fv.hi }
if over then
  floor_part = { median = whole.median / over.x, lo = whole.median / over.hi, hi = whole.median / over.lo }
  local scale = whole.median / over.first_touch
  if fault then fault = { median = fault.median * scale, lo = fault.lo * scale, hi = fault.hi * scale } end
end
local acc = account.compute { whole = whole, floor = floor_part,
  outside_pct = outside or user, book_pct = book, own = fig(pass2), fault = fault, fault_book_pct = fault_book,
  fault_outside_pct = fault_user }

local function pct(f) return ("%.1f [%.1f, %.1f] %%"):format(f.median, f.lo, f.hi) end
local function date(doc) return tostring(doc.date or "?"):sub(1, 10) end
local sources = {
  floor = ("floor.lua %s, %s guest%s: %s + %s, %.0f [%.0f, %.0f] ns%s"):format(date(floor), FLOOR_KIND,
    SAME_KIND and "" or ", **not this kind**: its ns as measured there",
    fv.zero_case, fv.fault_case, fv.x, fv.lo, fv.hi, over and (", 1/%.2f [%.2f, %.2f] of a first touch in the same "
    .. "repetitions (%.0f ns): that share of the whole"):format(over.x, over.lo, over.hi, over.first_touch) or ""),
  book = ("attribution.lua %s: stages %s, %s of the kernel's samples, of the guest kernel's part%s"):format(
    date(attribution), table.concat(BOOK, ", "), pct(book), fault and (", less the floor's fault's own %s of its "
    .. "samples in them (%s, profiled)"):format(pct(fault_book), ZERO_PAGE) or ", the floor's fault's own share in "
    .. "them not taken off (no profile of it)"),
  host = (outside and ("host.lua %s (%s): outside the guest kernel, %s of the whole, less the loop"):format(
    date(host), host_case, pct(outside)) or ("attribution.lua: user-mode samples, %s, less the loop; no host.lua run "
    .. "on this kind, so the host's time is not told apart from the guest's"):format(pct(user)))
    .. (fault_user and (", less the floor's fault's own %s of its samples in user mode (%s, profiled)"):format(
      pct(fault_user), ZERO_PAGE) or ""),
  own = ("cycles.lua: cycle A's pass 2, the same loop over present pages (%.0f faults)"):format(
    need_row(cycles, "A", "pass2_faults").median),
}
local labels = { host = outside and "the host (outside the guest kernel, beyond the loop)"
  or "user mode beyond the loop (host time not told apart)" }
local controls = {
  floor = "each of its entries' control (floor.lua's table)",
  book = ("the profile's zeroing and trap, %s of the kernel's samples, are what the floor stands for"):format(
    pct(profiled)),
  host = outside and ("the profile's user share, %s, measures the same by samples"):format(pct(user)) or "",
  own = "no fault in the pass (its faults column)",
}

local refs = {}
for _, r in ipairs(account.REFERENCES) do
  local here
  if r.bytes == 4096 then
    here = ("%.0f ns (%.2f×)"):format(whole.median, whole.median / r.ns)
  elseif sixteen then
    local sp = value(sixteen, "thp_page")
    local p1 = row(sixteen, "A", "pass1")
    if sp and sp.x == r.bytes and p1 then
      local per = r.bytes // (math.type(sixteen.page_size) == "integer" and sixteen.page_size > 0
        and sixteen.page_size or 4096)
      here = ("%.0f ns per %d KiB folio (%d × %.0f ns per page, thp-16K run of %s)"):format(p1.median * per,
        r.bytes // 1024, per, p1.median, date(sixteen))
    end
  end
  refs[#refs + 1] = { what = r.what, ns = r.ns, bytes = r.bytes, source = r.source, here = here }
end

local md = account.markdown(acc, { kind = KIND, labels = labels, sources = sources, controls = controls,
  references = refs,
  whole_source = ("cycles.lua %s: cycle A, pass 1 (%.0f faults)"):format(date(cycles),
    need_row(cycles, "A", "pass1_faults").median),
  whole_control = "one fault per 4 KiB page" })
local floor_said = over and ("The floor, floor.lua's share of a first touch in its own run applied to this "
  .. "whole, is %.0f ns per 4 KiB (measured alone: %.0f [%.0f, %.0f] ns, %s)"):format(acc.parts[1].median, fv.x,
  fv.lo, fv.hi, date(floor)) or ("The floor is %.0f ns per 4 KiB as measured alone (%s)"):format(fv.x, date(floor))
md = md .. ("\n%s; the measured first touch is %.2f times it. Not accounted: %.0f ns, %.1f %% of the whole. Intervals "
  .. "are bounds over the inputs' intervals, from runs made at different times; each profile share is taken of the "
  .. "part of the whole it describes.\n"):format(floor_said, whole.median / acc.parts[1].median, acc.residue.median,
  acc.residue_pct)

if cfg.given.ACCOUNT_OUT then
  local name = "account-waterfall"
  local data, body = account.waterfall(acc)
  local list = {}
  plots.add(list, name, "the account of a 4 KiB first touch: " .. KIND, data, body:gsub("%$DAT", name .. ".dat"),
    900, 500)
  -- all three appear, or none changes (a read-only directory, a name taken by a directory)
  local files = {}
  for _, f in ipairs { { "account.md", md }, { name .. ".dat", list[1].data }, { name .. ".gp", list[1].script } } do
    files[#files + 1] = { cfg.ACCOUNT_OUT .. "/" .. f[1], f[2] }
  end
  local ok, why = ft.write_files(files)
  if not ok then fail(("ACCOUNT_OUT=%s: %s; nothing written"):format(knobs.shown(cfg.ACCOUNT_OUT), why)) end
  io.write(md) -- after the files: a refusal leaves no table on stdout either
  if not os.execute(("cd %s && gnuplot %s.gp"):format(shell.quote(cfg.ACCOUNT_OUT), name)) then
    io.stderr:write(SCRIPT .. ": gnuplot failed or is missing: the .dat and .gp are written, the SVG is not\n")
  end
else
  io.write(md)
end
