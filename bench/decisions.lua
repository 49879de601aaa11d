-- The power and the false calls of AB UNTIL=decided, on real runs: TRIES
-- runs of cycles.lua CYCLES=A AB="PLANT_NS=0 | PLANT_NS=N" UNTIL=decided
-- (N = 0: an A/A design, every call of "different" false; N > 0: a real
-- planted cost, whose sign every call must get right), each try's outcome,
-- pairs and time kept in a JSON that results/decisions.md is made from.
--   ./ftrun bench/decisions.lua TRIES=40 MIB=256 PLANT_NS=0 OUT=decisions-aa.json
--   ./ftrun bench/decisions.lua TRIES=40 MIB=256 PLANT_NS=100 OUT=decisions-plant.json
--   ./ftrun bench/decisions.lua REPORT=decisions-aa.json,decisions-plant.json   (the markdown of the tries)
-- MAX_PAIRS, MAX_MIN and EQUIV pass to each try. No timing target lives
-- here: the figures are what this machine gave, reported with its state.
local ft = require "ft"
local json = require "json"
local knobs = require "knobs"
local shell = require "shell"
local stats = require "stats"

local SCRIPT = "decisions.lua"
local SPEC = {
  { name = "TRIES", kind = "count", default = 40, desc = "tries of the design" },
  { name = "MIB", kind = "count", default = 256, max = knobs.MIB_MAX, desc = "cycles.lua's MIB" },
  { name = "PLANT_NS", kind = "plant_ns", default = 0, desc = "side B's planted cost (0: A/A)" },
  { name = "MAX_PAIRS", kind = "count", default = 400, desc = "each try's cap of pairs" },
  { name = "MAX_MIN", kind = "count", default = 10, desc = "each try's cap in minutes" },
  { name = "EQUIV", kind = "equiv", default = 2, desc = "each try's margin of the same, in %" },
  { name = "OUT", kind = "path", default = "decisions.json", desc = "the JSON of the tries" },
  { name = "REPORT", kind = "path", default = "none", desc = "JSON files of tries, comma-separated: their markdown" },
}
local cfg = knobs.read(SCRIPT, SPEC, { ... })

-- The markdown of tries already made: a line per design.
if cfg.given.REPORT then
  print("| design | tries | different | sign wrong | same | undecided | failed | median s a try | machine |")
  print("|---|---|---|---|---|---|---|---|---|")
  for path in cfg.REPORT:gmatch("[^,]+") do
    local f = io.open(path)
    local doc = f and json.decode(f:read("a"))
    if f then f:close() end
    if type(doc) ~= "table" or type(doc.counts) ~= "table" then knobs.fail(SCRIPT, path .. ": not a JSON of tries") end
    local c, m = doc.counts, doc.machine or {}
    print(("| %s | %d | %d | %d | %d | %d | %d | %.0f | %s, %s, %s, commit %s |"):format(doc.design:gsub("|", "\\|"),
      #doc.tries, c.different or 0,
      c.wrong_sign or 0, c.same or 0, c.undecided or 0, c.failed or 0, doc.median_seconds or 0, tostring(m.cpu),
      tostring(m.hypervisor), tostring(doc.date), tostring(doc.commit):sub(1, 12)))
  end
  os.exit(0, true)
end
local FTRUN = arg[-1]:sub(1, 1) == "/" and arg[-1] or os.getenv("PWD") .. "/" .. arg[-1]
local quote = shell.quote

local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. quote(tmp)))
local _ <close> = setmetatable({}, { __close = function() os.execute("rm -rf " .. quote(tmp)) end })

-- One try: its outcome from the run's JSON (the until_A_pass1 value).
local function try(i)
  local dir = ("%s/try-%02d"):format(tmp, i)
  local cmd = ("%s cycles.lua CYCLES=A MIB=%d %s UNTIL=decided MAX_PAIRS=%d MAX_MIN=%d EQUIV=%s QUIET=1 "
    .. "RESULTS=%s >/dev/null 2>%s"):format(quote(FTRUN), cfg.MIB,
    quote(("AB=PLANT_NS=0 | PLANT_NS=%d"):format(cfg.PLANT_NS)), cfg.MAX_PAIRS, cfg.MAX_MIN, tostring(cfg.EQUIV),
    quote(dir), quote(dir .. ".err"))
  local t0 = ft.now_ns()
  local ok = os.execute(cmd)
  local wall = (ft.now_ns() - t0) / 1e9
  local f = io.open(dir .. "/cycles-A-ab-results.json")
  local doc = f and json.decode(f:read("a"))
  if f then f:close() end
  local v
  for _, x in ipairs(doc and doc.values or {}) do if x.value == "until_A_pass1" then v = x end end
  if not (ok and v) then return { try = i, failed = true, seconds = wall } end
  return { try = i, outcome = v.outcome, ratio = v.x, lo = v.lo, hi = v.hi, pairs = v.pairs, need = v.need,
    seconds = wall, loadavg = doc.machine and doc.machine.loadavg }
end

local tries = {}
for i = 1, cfg.TRIES do
  tries[i] = try(i)
  local r = tries[i]
  io.stderr:write(("%s: try %d/%d: %s%s, %d pairs, %.0f s\n"):format(SCRIPT, i, cfg.TRIES,
    r.failed and "failed" or r.outcome, r.ratio and (" (B/A %+.1f %%)"):format(100 * (r.ratio - 1)) or "",
    r.pairs or 0, r.seconds))
end

local count = { different = 0, same = 0, undecided = 0, failed = 0, wrong_sign = 0 }
local secs = {}
for _, r in ipairs(tries) do
  local k = r.failed and "failed" or r.outcome
  count[k] = (count[k] or 0) + 1
  secs[#secs + 1] = r.seconds
  -- a planted cost makes B dearer: a call of "different" with B cheaper has the sign wrong
  if cfg.PLANT_NS > 0 and r.outcome == "different" and r.ratio < 1 then count.wrong_sign = count.wrong_sign + 1 end
end
local doc = { design = ("cycles.lua CYCLES=A MIB=%d AB=\"PLANT_NS=0 | PLANT_NS=%d\" UNTIL=decided MAX_PAIRS=%d "
  .. "MAX_MIN=%d EQUIV=%g"):format(cfg.MIB, cfg.PLANT_NS, cfg.MAX_PAIRS, cfg.MAX_MIN, cfg.EQUIV),
  plant_ns = cfg.PLANT_NS, tries = tries, counts = count, median_seconds = stats.median(secs),
  date = os.date("!%Y-%m-%dT%H:%M:%SZ"), machine = ft.machine(),
  commit = require("provenance").collect().git_commit }
local f = assert(io.open(cfg.OUT, "w"))
f:write(json.encode(doc), "\n")
f:close()
print(("%s: %d tries: %d different (%d with the sign wrong), %d same, %d undecided, %d failed; median %.0f s a "
  .. "try; written to %s"):format(doc.design, cfg.TRIES, count.different, count.wrong_sign, count.same,
  count.undecided, count.failed, doc.median_seconds or 0, cfg.OUT))
