-- The account of a first touch: the measured whole split into the floor
-- (zeroing + a trap + one PTE update, measured alone), the guest kernel's
-- bookkeeping, the host and the measurement's own cost, each from its own
-- experiment; their sum set against the whole, and the rest named "not
-- accounted". This module does the arithmetic and the presentation on
-- plain figures ({median, lo, hi}); which results file and row each comes
-- from is the caller's business.
--
-- The model. A profile gives shares of samples, not times, so each share
-- is taken of the part of the whole it describes:
--   outside     = whole * outside_pct / 100   (outside the guest kernel: host.lua's
--                                              share, or the profile's user share)
--   kernel      = whole - outside             (the guest kernel's part)
--   bookkeeping = kernel * book_pct / 100 - fault * fault_book_pct / 100
--   own cost    = own                         (the same loop over present pages)
--   host        = outside - own - fault * fault_outside_pct / 100
--                                             (what the guest sees outside its kernel
--                                              beyond the loop's own stores and the
--                                              floor's fault's own share there)
--   residue     = whole - (floor + bookkeeping + host + own cost)
-- book_pct: the stages beyond zeroing and the trap, as a share of the
-- kernel's samples. The floor's fault (fault, ns) passes through some of
-- the same stages itself (the VMA lookup, the PTE set, their lock):
-- fault_book_pct, their share in a profile of that same fault, is taken
-- off so that no time counts in the floor and the bookkeeping both. The
-- fault also spends time outside the guest kernel (the exception's
-- delivery and return, charged to the faulting user instruction, its loop,
-- a host's share): fault_outside_pct, the user share of its profile, is
-- taken off the outside part for the same reason. The residue is then what
-- the profile gives a first touch's zeroing and trap less what they cost
-- alone.
local account = {}

account.NOT_ACCOUNTED = "not accounted"

-- Published elsewhere, not measured here: the anchors' per-4 KiB first
-- touches (virt-pvm/linux issue #27: 4 GiB in 1 MiB mmap/touch/munmap
-- rounds, one process) and the seed's per-16 KiB page (bare metal, macOS).
account.REFERENCES = {
  { what = "bare metal, 4 KiB first touch", ns = 1090, bytes = 4096, source = "virt-pvm/linux #27" },
  { what = "KVM/EPT guest, host memory backed, 4 KiB", ns = 1310, bytes = 4096, source = "virt-pvm/linux #27" },
  { what = "PVM guest (shadow paging), 4 KiB", ns = 6100, bytes = 4096, source = "virt-pvm/linux #27" },
  { what = "seed: bare metal macOS, 16 KiB page", ns = 668.8, bytes = 16384, source = "the seed's measurement" },
}

local INPUTS = { "whole", "floor", "outside_pct", "book_pct", "own", "fault", "fault_book_pct", "fault_outside_pct" }
local OPTIONAL = { fault = true, fault_book_pct = true, fault_outside_pct = true }

local function check_figure(name, f, optional)
  if f == nil and optional then return end
  if type(f) ~= "table" or type(f.median) ~= "number" or type(f.lo) ~= "number" or type(f.hi) ~= "number" then
    error(("account: %s must be a figure {median =, lo =, hi =} (numbers), got %s"):format(name, tostring(f)), 3)
  end
  if not (f.lo <= f.median and f.median <= f.hi) then
    error(("account: %s: lo %g, median %g, hi %g are not in order"):format(name, f.lo, f.median, f.hi), 3)
  end
end

-- The parts at one point x (a value per input).
local function evaluate(x)
  local outside = x.whole * x.outside_pct / 100
  local kernel = x.whole - outside
  local overlap = (x.fault or 0) * (x.fault_book_pct or 0) / 100
  local overlap_outside = (x.fault or 0) * (x.fault_outside_pct or 0) / 100
  local p = { floor = x.floor, book = kernel * x.book_pct / 100 - overlap, host = outside - x.own - overlap_outside,
    own = x.own }
  p.sum = p.floor + p.book + p.host + p.own
  p.residue = x.whole - p.sum
  return p
end

-- inputs: whole, floor, outside_pct, book_pct, own, and optional fault,
-- fault_book_pct and fault_outside_pct (all three or none), as figures.
-- Returns { parts = {{key, median, lo, hi}...}, whole, sum, residue, residue_pct, within }: each
-- interval the least and most the output takes over every corner of the
-- inputs' intervals (bounds, wider than a joint interval would be).
function account.compute(inputs)
  for _, name in ipairs(INPUTS) do check_figure(name, inputs[name], OPTIONAL[name]) end
  local no_fault = inputs.fault == nil
  if no_fault ~= (inputs.fault_book_pct == nil) or no_fault ~= (inputs.fault_outside_pct == nil) then
    error("account: fault, fault_book_pct and fault_outside_pct go together (the fault's time and its profile's "
      .. "shares)", 2)
  end
  local present = {}
  for _, name in ipairs(INPUTS) do if inputs[name] then present[#present + 1] = name end end
  local mid = {}
  for _, name in ipairs(present) do mid[name] = inputs[name].median end
  local at = evaluate(mid)
  local lo, hi = {}, {}
  for k, v in pairs(at) do lo[k], hi[k] = v, v end
  for corner = 0, (1 << #present) - 1 do
    local x = {}
    for i, name in ipairs(present) do x[name] = (corner >> (i - 1)) & 1 == 1 and inputs[name].hi or inputs[name].lo end
    for k, v in pairs(evaluate(x)) do lo[k], hi[k] = math.min(lo[k], v), math.max(hi[k], v) end
  end
  local function fig(k) return { median = at[k], lo = lo[k], hi = hi[k] } end
  local parts = {}
  for _, k in ipairs { "floor", "book", "host", "own" } do
    local f = fig(k)
    f.key = k
    parts[#parts + 1] = f
  end
  local whole = inputs.whole
  local pct = 100 * at.residue / whole.median
  return { parts = parts, whole = whole, sum = fig("sum"), residue = fig("residue"), residue_pct = pct,
    within = math.abs(pct) <= 10 }
end

local LABELS = { floor = "the floor (zeroing + trap + one PTE update)", book = "guest kernel bookkeeping",
  host = "outside the guest kernel, beyond the loop", own = "the measurement's own cost" }
account.LABELS = LABELS

local SHORT = { floor = "floor", book = "bookkeeping", host = "outside the kernel", own = "own cost" }

local function ns(v) return ("%.0f"):format(v) end
local function cell(f) return ("%s [%s, %s]"):format(ns(f.median), ns(f.lo), ns(f.hi)) end

-- The markdown table of one kind: meta.kind (its name); by part key,
-- meta.labels (in place of LABELS's), meta.sources (where the part comes
-- from) and meta.controls (what shows it is what it says);
-- meta.whole_source, meta.whole_control; meta.references ({what, ns,
-- bytes, source, here} rows, here: this kind's own figure, or nil).
function account.markdown(acc, meta)
  meta.sources, meta.controls = meta.sources or {}, meta.controls or {}
  local out = { ("### The account of a 4 KiB first touch: %s"):format(meta.kind), "",
    "| part | ns per 4 KiB (median [lo, hi]) | share of the whole | from | control |", "|---|---|---|---|---|" }
  local function row(label, f, from, control)
    out[#out + 1] = ("| %s | %s | %s | %s | %s |"):format(label, f and cell(f) or "not measured",
      f and ("%.0f %%"):format(100 * f.median / acc.whole.median) or "–", from or "", control or "")
  end
  row("**measured first touch**", acc.whole, meta.whole_source, meta.whole_control)
  for _, p in ipairs(acc.parts) do
    row((meta.labels or {})[p.key] or LABELS[p.key], p, meta.sources[p.key], meta.controls[p.key])
  end
  row("sum of the parts", acc.sum, "", "")
  row("**" .. account.NOT_ACCOUNTED .. "**", acc.residue, "whole − sum", acc.within
    and "within ±10 % of the whole" or "beyond ±10 % of the whole")
  out[#out + 1] = ""
  out[#out + 1] = "Published elsewhere, not measured here (references, not parts of the account):"
  out[#out + 1] = ""
  out[#out + 1] = "| reference | ns | per | source | this kind, measured |"
  out[#out + 1] = "|---|---|---|---|---|"
  for _, r in ipairs(meta.references or {}) do
    out[#out + 1] = ("| %s | %s | %d KiB | %s | %s |"):format(r.what, tostring(r.ns), r.bytes // 1024, r.source,
      r.here or "–")
  end
  return table.concat(out, "\n") .. "\n"
end

-- The waterfall's data and gnuplot body (for plots.add): one bar per part
-- from where the previous ended, the sum, the whole and "not accounted"
-- from the sum to the whole, each with its interval as an error bar at its
-- end. No key: each bar is named on the x axis, so nothing sits on the data.
function account.waterfall(acc)
  local lines = { "# x label start end lo_end hi_end colour  (ns per 4 KiB; the error bar spans the part's interval)" }
  local at, x = 0, 0
  local function bar(label, from, f, colour)
    x = x + 1
    local to = from + f.median
    lines[#lines + 1] = ('%d "%s" %s %s %s %s %d'):format(x, label, ns(from), ns(to), ns(from + f.lo), ns(from + f.hi),
      colour or 0x1f4e99)
  end
  for _, p in ipairs(acc.parts) do
    bar(SHORT[p.key], at, p)
    at = at + p.median
  end
  bar(account.NOT_ACCOUNTED, acc.sum.median, acc.residue, 0xcc0000)
  bar("measured", 0, acc.whole, 0x555555)
  local body = [[
unset key
set style fill solid 0.7 border -1
set ylabel "ns per 4 KiB"
set yrange [0:*]
set xrange [0.3:%d.7]
set xtics rotate by -20 noenhanced
plot "$DAT" using 1:(($3+$4)/2):($1-0.35):($1+0.35):($3<$4?$3:$4):($3<$4?$4:$3):7:xtic(2) \
  with boxxyerror lc rgb variable, \
  "" using 1:4:5:6 with yerrorbars lc rgb "#000000" pt 7 ps 0.5]]
  return table.concat(lines, "\n") .. "\n", body:format(x)
end

return account
