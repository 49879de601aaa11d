-- faults.lua: will-it-scale's page-fault and mmap family on ftrun's tasks.
-- Per task, for SECONDS: map MIB MiB, store into every page, unmap
-- (page_fault1: private anonymous; page_fault2: a private mapping of the
-- task's own memfd; page_fault3: a shared one), or map and unmap without a
-- touch (mmap1); 1..N tasks, as threads (one mm) and as processes. An op is
-- a page (mmap1: a map/unmap pair). Two rates: will-it-scale's, ops per
-- second with the mmap and munmap inside, and the first touch's alone.
local ft = require "ft"
local harness = require "harness"
local stats = require "stats"

local h = harness.start({ script = "faults", shuffle = true, mib = 128, reps = 3,
  quick = { MIB = 16, REPS = 2, SECONDS = 0.2 },
  about = "will-it-scale's page_fault1/2/3 and mmap1 with threads and processes",
  knobs = { { name = "SECONDS", kind = "duration", default = 1, desc = "seconds per task and case" } },
  memory = function(_, bytes) return 2 * ft.machine().cpus * bytes end }, { ... })

-- A task: set-up (its memfd, a warm one-page mapping), then the loop.
local TASK = [[
local _, workload, bytes, seconds = ...
local file = (workload == "page_fault2" or workload == "page_fault3") and ft.memfd(bytes)
local opts = file and { memfd = file, shared = workload == "page_fault3" } or {}
local warm <close> = assert(ft.mmap(ft.page_size(), opts))
warm:touch(1)
return function()
  local stop, ops, touch_ns = ft.now_ns() + math.floor(seconds * 1e9), 0, 0
  repeat
    local b = assert(ft.mmap(bytes, opts))
    if workload == "mmap1" then
      ops = ops + 1
    else
      touch_ns, ops = touch_ns + b:touch(1), ops + b.pages
    end
    local last = ft.now_ns() >= stop
    if last and workload ~= "mmap1" then assert(b:sum_bytes() == b.pages, "read-back of the last region") end
    b:unmap()
  until last
  return ops, touch_ns, workload == "mmap1" and 0 or 1
end]]

for _, workload in ipairs { "page_fault1", "page_fault2", "page_fault3", "mmap1" } do
  for _, mode in ipairs { "threads", "processes" } do
    for n = 1, h.machine.cpus do
      local name = ("%s, %d %s"):format(workload, n, n == 1 and mode:gsub("e?s$", "") or mode)
      h:case(name, function(r)
        local run = ft.tasks(n, TASK, { mode = mode, args = { workload, h.bytes, h.cfg.SECONDS } })
        r:work(run.wall_ns, stats.sum(stats.map(run.tasks, function(t) return t.values[3] end)))
        local rates, touch_rates, faults = {}, {}, 0
        for i, t in ipairs(run.tasks) do
          rates[i] = t.values[1] / (t.ns / 1e9)
          touch_rates[i] = t.values[2] > 0 and t.values[1] / (t.values[2] / 1e9) or nil
          faults = faults + t.faults
        end
        r.total, r.per_task = stats.sum(rates), stats.median(rates)
        r.spread = 100 * (stats.max(rates) - stats.min(rates)) / r.per_task
        r.touch_only = #touch_rates > 0 and stats.sum(touch_rates) or nil
        r.faults_per_op = faults / stats.sum(stats.map(run.tasks, function(t) return t.values[1] end))
      end, { params = { workload = workload, tasks = n, mode = mode } })
    end
  end
end
h:columns {
  { "total", "in total, will-it-scale's rate", "ops/s" }, { "per_task", "per task", "ops/s" },
  { "spread", "between tasks (max - min) / median", "%" }, { "touch_only", "first touch alone, in total", "ops/s" },
  { "faults_per_op", "faults per op", "ratio" },
}
h:run()
for _, case in ipairs(h.cases) do -- against the ideal: n tasks doing n times what one does
  local name, p = case.name, case.params
  local one = h:row(("%s, 1 %s"):format(p.workload, p.mode:gsub("e?s$", "")), "total")
  local row = h:row(name, "total")
  if p.tasks > 1 and one and row then
    h:value("of_ideal", row.median / (p.tasks * one.median), "ratio", { { "case", name } })
  end
end
h:note(("Every task maps, touches and unmaps %d MiB regions for %s s per case; an op is a page (mmap1: a "
  .. "map/unmap pair). will-it-scale's rate counts the mmap and munmap time, the first touch's rate only "
  .. "the touch windows. The last region of each task is read back."):format(h.cfg.MIB, h.cfg.SECONDS))
h:finish()
