-- The markdown summary, built from the RESULT lines of a raw file.
local summary = {}

local LABELS = {
  mmap = "mmap (the call alone)", pass1 = "pass 1: first touch", pass2 = "pass 2",
  pass2r = "pass 2 repeated", fill = "fill", munmap = "munmap (the call alone)",
  malloc = "malloc (the call alone)", touch1 = "touch 1 after malloc", touch2 = "touch 2",
  free = "free (the call alone)",
}
local FILL_LABELS = { A = "pass 3: fill of touched pages", B = "fill of a fresh mapping" }

local function f(x, digits)
  if type(x) ~= "number" then return tostring(x) end
  local a = math.abs(x)
  if x == math.floor(x) and a < 2^53 then return ("%d"):format(x) end
  if a >= 1000 then return ("%.0f"):format(x) end
  if a >= 100 then return ("%.1f"):format(x) end
  if a >= 1 then return ("%." .. (digits or 2) .. "f"):format(x) end
  return ("%.3g"):format(x)
end

local function faults(r)
  return ("%s / %s"):format(f(r.faults_med), f(r.faults_max))
end

function summary.cycles(results, title, machine, clock, ghz, ghz_source, verdict)
  local out = {}
  local function put(s) out[#out + 1] = s end
  local by = {}
  for _, r in ipairs(results) do
    by[r.type] = by[r.type] or {}
    table.insert(by[r.type], r)
  end

  put("**" .. title .. "**, finished " .. os.date("!%Y-%m-%d %H:%M") .. " UTC  ")
  put(("%s, %s, kernel %s, %d-byte pages, THP %s, clocksource %s, hypervisor %s; "
    .. "clock estimate %.3f GHz (%s); window clock tick %d ns, read %.0f ns; "
    .. "per-page timestamp tick %d ns, store + read %.0f ns.")
    :format(machine.cpu, ("%d CPUs"):format(machine.cpus), machine.kernel, machine.page_size,
      machine.thp_enabled, machine.clocksource, machine.hypervisor, ghz, ghz_source,
      clock.tick_ns, clock.read_ns, clock.timed.tick_ns, clock.timed.read_ns))
  put("")
  put("| cycle | pass | figure | cv | median | faults (median / max) | cycles/page | reps above stall threshold (worst) |")
  put("|---|---|---|---|---|---|---|---|")
  local threshold
  for _, r in ipairs(results) do
    if r.type == "row" and r.cycle ~= "C" then
      local stalls = "–"
      if r.stalls then
        stalls = ("%d of %d (worst %s ns/page)"):format(r.stalls, r.of, f(r.worst))
        threshold = threshold or r
      end
      put(("| %s | %s | %s ns/page (min) | %s %% | %s | %s | %s | %s |"):format(
        r.cycle, LABELS[r.pass] or r.pass, f(r.min), f(r.cv, 1), f(r.median), faults(r), f(r.cycles, 0), stalls))
    elseif r.type == "bandwidth" then
      put(("| %s | %s | %s GB/s (median) | %s %% | %s ms | %s | – | – |"):format(
        r.cycle, FILL_LABELS[r.cycle] or r.pass, f(r.median), f(r.cv, 1), f(r.ms_median), faults(r)))
    end
  end
  put("")
  if threshold then
    put(("Stall threshold: %s ns/page (%s), for the passes that take no counted faults.")
      :format(f(threshold.threshold), threshold.threshold_from == "auto"
        and "pass 2 repeated's min plus 2.5 % of pass 1's min" or "STALL_NS"))
    put("")
  end

  for _, r in ipairs(by.thp or {}) do
    put(("Pages obtained (cycle A, THP=%s): %s of %s bytes in huge pages at the median, so the page is %s; "
      .. "the faults this predicts for pass 1: %s; thp_fault_alloc per rep: %s.")
      :format(r.asked, f(r.thp_bytes_med), f(r.bytes),
        r.page_obtained == "mixed" and "mixed" or (f(r.page_obtained) .. " bytes"),
        f(r.faults_expected), f(r.thp_fault_alloc_med)))
    put("")
  end

  if by.pages then
    local c1, c2
    for _, r in ipairs(results) do
      if r.type == "row" and r.cycle == "C" then
        if r.pass == "pass1" then c1 = r else c2 = r end
      end
    end
    put("Cycle C, one timestamp per page (each sample is the store plus one clock reading):")
    put("")
    put("| pass | whole pass | faults (median / max) | median page | pages above " .. by.pages[1].slow_ns
      .. " ns (min – max over reps) | their mean | runs they form (median) | longest run (median / worst) |")
    put("|---|---|---|---|---|---|---|---|")
    for _, r in ipairs(by.pages) do
      local row = r.pass == "pass1" and c1 or c2
      put(("| %s | %s ns/page | %s | %s ns | %s – %s %% | %s ns | %s | %s / %s pages |"):format(
        LABELS[r.pass], f(row.min), faults(row), f(r.median_page_ns), f(r.slow_pct_min), f(r.slow_pct_max),
        f(r.slow_mean_ns, 0), f(r.runs_med), f(r.longest_med), f(r.longest_max)))
    end
    put("")
  end

  for _, r in ipairs(by.malloc or {}) do
    put(("Cycle D: malloc returned the address just freed in %d of %d reps; malloc %s us, free %s us (medians).")
      :format(r.same_address, r.of, f(r.malloc_us_med), f(r.free_us_med)))
    put("")
  end

  if by.ratio then
    put("Headline:")
    put("")
    local text = {
      first_touch = "pass 1 / pass 2 repeated, min ns per page",
      fill_bandwidth = "touched fill / fresh fill, median GB/s",
      fresh_fill_time = "fresh fill / (pass 1 + touched fill), median ms",
      malloc_first_touch = "first touch after malloc / first touch after mmap, min ns per page",
      munmap_share = "munmap / pass 1, min ns per page",
    }
    for _, r in ipairs(by.ratio) do
      put(("- %s: **%s** (%s / %s)"):format(text[r.name] or r.name, f(r.value), f(r.a), f(r.b)))
    end
    put("")
  end
  for _, r in ipairs(by.accounting or {}) do
    put(("Wall time %s s: %s s in the timed windows, the map and release calls and the read-backs; "
      .. "%s s (%s %%) in the runner itself."):format(f(r.wall_ms / 1000), f(r.work_ms / 1000),
        f(r.own_ms / 1000), f(r.own_pct)))
    put("")
  end
  put(verdict .. ".")
  return table.concat(out, "\n") .. "\n"
end

return summary
