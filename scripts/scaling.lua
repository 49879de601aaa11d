-- scaling.lua: first-touch faults under concurrency, will-it-scale's
-- page_fault1 in this harness: 1..N threads on one shared mapping and on a
-- mapping per thread, faults per second per thread and in total, and the
-- munmap cost per page.
local ft = require "ft"
local experiment = require "experiment"
local measure = require "measure"
local stats = require "stats"

local exp = experiment.start("scaling", "first-touch faults with 1..N threads", { MIB = 512, REPS = 3 })
local fmt = experiment.fmt
local cpus = exp.machine.cpus

local rows = {}
for threads = 1, cpus do
  for _, shape in ipairs { "one shared mapping", "a mapping per thread" } do
    local runs = exp:repeat_(("%d thread(s), %s"):format(threads, shape), function()
      local bufs, target = {}, nil
      if shape == "one shared mapping" then
        bufs[1] = measure.map(exp.bytes)
        target = bufs[1]
      else
        for i = 1, threads do bufs[i] = measure.map(exp.bytes // threads) end
        target = bufs
      end
      local options = { pin = true, value = 6 }
      if target == bufs[1] then options.threads = threads end -- a list gives one thread a buffer
      local r = ft.parallel("touch", target, options)
      local faults, per_thread = 0, {}
      for i, th in ipairs(r.threads) do
        faults = faults + th.faults
        per_thread[i] = th.faults / (th.ns / 1e9)
      end
      local unmap = 0
      for _, b in ipairs(bufs) do
        measure.check_bytes(b, 6, "scaling")
        unmap = unmap + measure.release(b)
      end
      return { wall = r.wall_ns, faults = faults, per_thread = stats.median(per_thread), unmap = unmap }
    end)
    local col = exp:columns(runs)
    local total = stats.median(stats.map(runs, function(r) return r.faults / (r.wall / 1e9) end))
    local per_thread = stats.median(col("per_thread"))
    local unmap = stats.min(col("unmap")) / exp.pages
    exp:keep(threads .. " " .. shape, runs)
    exp:result { { "threads", threads }, { "shape", shape }, { "faults", stats.median(col("faults")) },
      { "faults_per_s_total", total }, { "faults_per_s_per_thread", per_thread },
      { "ns_per_page_wall", stats.min(col("wall")) / exp.pages }, { "munmap_ns_per_page", unmap } }
    rows[#rows + 1] = { fmt(threads), shape, fmt(stats.median(col("faults"))), fmt(total), fmt(per_thread),
      fmt(stats.min(col("wall")) / exp.pages), fmt(unmap) }
  end
end

exp:table({ "threads", "mapping", "faults", "faults/s in total (median)", "faults/s per thread (median)",
  "wall ns per page (min)", "munmap ns per page (min)" }, rows)
exp:finish()
