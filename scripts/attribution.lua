-- attribution.lua: where a fault's time goes. Each case profiles one step
-- with ft.profile (perf's cpu-clock sampling of this thread, kernel and
-- user, with call chains): pass 1 with 4 KiB pages and with THP=always,
-- MAP_POPULATE (the faults inside mmap), a read fault onto the zero page,
-- pass 2 and munmap. The samples are counted by kernel symbol and grouped
-- into named stages by the rules below; what no rule names is shown as
-- ungrouped.
local ft = require "ft"
local harness = require "harness"
local summary = require "summary"
local units = require "units"

local h = harness.start({ script = "attribution", shuffle = true, mib = 256, reps = 3,
  quick = { MIB = 64, REPS = 2 },
  about = "where a fault's time goes: kernel symbols and stages (ft.profile, cpu-clock samples)",
  knobs = { { name = "FREQ", kind = "count", default = 10000, max = 1000000,
    desc = "samples per second of CPU time (ft.profile's freq)" } },
  check = function(cfg) -- a rate above the kernel's limit is the user's value: refused, not "not supported"
    local _, why = ft.profile(function() end, { freq = cfg.FREQ })
    if why and why:find("perf_event_max_sample_rate", 1, true) then return ("FREQ=%d: %s"):format(cfg.FREQ, why) end
  end }, { ... })

-- The stages, in the table's order. A sample counts toward the first stage
-- one of whose Lua patterns matches its leaf: the kernel function the
-- sample interrupted. The leaf, not the chain: every fault's chain runs
-- through handle_mm_fault, so a frame rule would swallow everything under it.
local STAGES = {
  { "entry", "entry/trap and return", { "^asm_exc_page_fault$", "^exc_page_fault$", "^do_user_addr_fault$",
    "^access_error$", "^irqentry_", "^error_entry$", "^error_return$", "^restore_regs_and_return",
    "^native_iret", "^entry_SYSCALL", "^do_syscall_64$", "^x64_sys_call$", "^__x64_sys_", "^syscall_",
    "^exit_to_user_mode", "^fpregs_", "^switch_fpu" } },
  -- the walk and the updates, with the VMA lookup and the rmap of a new page
  { "pte", "page-table walk and updates", { "^handle_mm_fault$", "^__handle_mm_fault$", "^handle_pte_fault",
    "^do_anonymous_page$", "^do_huge_pmd_anonymous_page$", "^map_anon_folio_pmd", "^do_pte_missing", "^set_ptes",
    "^native_set_p", "^set_pte", "^set_pmd", "^_*pte_offset_map", "^pte_offset", "^pte_mk", "^pfn_pte$", "^pte_val$",
    "^mksaveddirty", "^__pte_alloc", "^pte_alloc", "^__pmd_alloc", "^__pud_alloc", "^__p4d_alloc", "^pmd_", "^pud_",
    "^p4d_", "^pgd_", "^pte_free", "^___pte_free", "^free_pgtables", "^free_pgd_range", "^free_p4d_range",
    "^free_pud_range", "^free_pmd_range", "^follow_page", "^follow_p", "^no_page_table$", "^vma_pgtable_walk",
    "^__get_user_pages", "^get_user_pages", "^faultin_page", "^populate_vma_page_range", "^__mm_populate",
    "^unmap_page_range", "^unmap_vmas", "^zap_", "^vm_normal_page", "^vm_normal_folio", "^mas_", "^mtree_", "^find_vma",
    "^vma_lookup", "^folio_add_new_anon_rmap", "^__folio_add_anon_rmap", "^folio_remove_rmap", "^__folio_remove_rmap",
    "^anon_vma", "^__anon_vma", "^__vmf_anon_prepare", "^try_grab_folio", "^vm_area_", "^do_vmi_", "^vms_",
    "^__vm_munmap", "^__do_munmap", "^do_mmap$", "^mmap_region", "^__mmap_region", "^vm_mmap_pgoff",
    "^get_unmapped_area", "^arch_get_unmapped_area", "^thp_get_unmapped_area" } },
  { "alloc", "page allocation and freeing", { "^get_page_from_freelist$", "^__alloc_pages", "^alloc_pages",
    "^__alloc_frozen_pages", "^alloc_frozen_pages", "^rmqueue", "^__rmqueue", "^alloc_anon_folio",
    "^vma_alloc_folio", "^vma_alloc_anon_folio", "^folio_alloc", "^__folio_alloc", "^prep_new_page",
    "^post_alloc_hook", "^prep_compound", "^__prep_compound", "^expand$", "^page_del_and_expand",
    "^__del_page_from_free_list", "^del_page_from_free_list", "^should_fail_alloc_page", "^__next_zones_zonelist",
    "^first_zones_zonelist", "^zone_watermark", "^__zone_watermark", "^policy_nodemask", "^get_vma_policy",
    "^__get_vma_policy", "^mpol_", "^free_", "^__free_", "^___free_pages", "^folios_put", "^folio_put",
    "^__folio_put", "^release_pages", "^put_page", "^__put_page", "^destroy_large_folio" } },
  { "zero", "zeroing", { "^clear_page", "^clear_pages", "^clear_huge_page", "^clear_subpage", "^clear_highpage",
    "^folio_zero", "^process_huge_page", "^clear_user", "^__clear_user", "^kernel_init_pages" } },
  -- with the vm event counters, the node and zone statistics and the mm's RSS counter
  { "memcg", "memcg and LRU accounting", { "^mem_cgroup_", "^__mem_cgroup_", "^memcg", "^__memcg",
    "^charge_memcg", "^get_mem_cgroup", "^uncharge_", "^try_charge", "^obj_cgroup", "^refill_stock",
    "^consume_stock", "^page_counter_", "^css_", "^__css_", "^cgroup_rstat", "^count_memcg", "^__count_memcg",
    "^__folio_throttle_swaprate", "^__mod_", "^mod_", "^__lruvec_", "^lruvec_", "^lru", "^__lru",
    "^folio_add_lru", "^folio_batch", "^__folio_batch", "^folio_mark_accessed", "^_*folio_mod_stat",
    "^__page_cache_release", "^count_vm_event", "^__count_vm_event", "^__inc_", "^__dec_", "^inc_node",
    "^dec_node", "^inc_zone", "^dec_zone", "^percpu_counter_add" } },
  { "lock", "locking", { "^_raw_spin", "^_raw_read", "^_raw_write", "^queued_", "^native_queued_",
    "^__raw_callee_save___pv_queued_spin", "^__pv_queued_spin", "^lock_vma", "^vma_start_", "^vma_end_",
    "^__vma_start_", "^mmap_.*lock", "^down_", "^up_", "^rwsem", "^__rwsem", "^__rcu_read_", "^rcu_read_",
    "^percpu_ref", "^folio_lock", "^__folio_lock", "^folio_unlock", "^folio_lruvec_lock" } },
  { "tlb", "TLB", { "^flush_tlb", "^native_flush_tlb", "^__flush_tlb", "^tlb_", "^__tlb_", "^inc_mm_tlb_gen",
    "^arch_tlbbatch" } },
  -- the harness's own counting around every step: the perf software counters
  -- (each fault feeds their page-fault event) and their reads, getrusage
  { "counting", "the run's own counting", { "^_*perf_sw", "^perf_swevent", "^perf_exclude_event", "^perf_read",
    "^_*perf_event_read", "^event_function_call", "^getrusage", "^__do_sys_getrusage", "^thread_group_cputime" } },
}
-- Leaves that stand for their caller's work: the sample counts toward the
-- stage of the nearest caller that is not one of them (the leaf's own
-- stage when that caller matches no rule). With no PMU the cpu-clock timer
-- cannot interrupt code that runs with interrupts off: the sample lands
-- where they come back on, so _raw_spin_unlock_irqrestore's samples are the
-- time spent inside the critical section (the LRU batch, the free lists).
-- A cross-CPU call waits for its callee's sake (flush_tlb_mm_range's
-- shootdown, perf's counter read); the list checks and the return thunks
-- are helpers of whoever calls them.
local THROUGH = { "^_raw_spin_unlock_irqrestore$", "^_raw_spin_unlock_irq$", "^smp_call_function",
  "^on_each_cpu", "^generic_exec_single$", "^__list_del_entry_valid", "^__list_add_valid", "^srso_",
  "^__x86_return_thunk$", "^retbleed_", "^__x86_indirect_thunk", "^__cond_resched$" }
local USER, UNGROUPED = "user", "ungrouped"
local KEYS, NAMES = {}, { [USER] = "user", [UNGROUPED] = "ungrouped" }
for _, s in ipairs(STAGES) do KEYS[#KEYS + 1], NAMES[s[1]] = s[1], s[2] end
KEYS[#KEYS + 1], KEYS[#KEYS + 2] = USER, UNGROUPED

local function matches(list, name)
  for _, p in ipairs(list) do
    if name:find(p) then return true end
  end
  return false
end

local stage_memo = {}
local function own_stage(name) -- the first stage whose rule names this kernel function, or nil
  local s = stage_memo[name]
  if s == nil then
    s = false
    for _, st in ipairs(STAGES) do
      if matches(st[3], name) then s = st[1]; break end
    end
    stage_memo[name] = s
  end
  return s or nil
end

-- The stage of one chain ("root;...;leaf"; the root is the user-space
-- instruction the kernel was entered from), whose leaf is in the kernel.
local function chain_stage(stack)
  local frames = {}
  for f in stack:gmatch("[^;]+") do frames[#frames + 1] = f end
  local leaf, i = frames[#frames], #frames
  while i > 2 and matches(THROUGH, frames[i]) do i = i - 1 end
  return (i < #frames and own_stage(frames[i])) or own_stage(leaf) or UNGROUPED
end

-- One profile into the record: its counts, each stage's samples and share,
-- and every symbol's samples by the stage they went to (for the pooled top).
local function tally(r, p)
  local kernel = {}
  for _, s in ipairs(p.symbols) do kernel[s.name] = s.kernel end
  local stages, symbols, total = {}, {}, 0
  for _, c in ipairs(p.chains) do
    local leaf = c.stack:match("([^;]+)$")
    local stage = kernel[leaf] and chain_stage(c.stack) or USER
    stages[stage] = (stages[stage] or 0) + c.samples
    local sym = symbols[leaf] or { samples = 0, kernel = kernel[leaf] == true, stages = {} }
    symbols[leaf] = sym
    sym.samples = sym.samples + c.samples
    sym.stages[stage] = (sym.stages[stage] or 0) + c.samples
    total = total + c.samples
  end
  r.samples, r.kernel_samples, r.user_samples, r.lost = p.samples, p.kernel, p.user, p.lost
  r.chained, r.dropped, r.sampled = total, p.dropped, 100 * p.share
  r.stages, r.symbols = stages, symbols
  if total > 0 then
    for _, key in ipairs(KEYS) do r["st_" .. key] = 100 * (stages[key] or 0) / total end
  end
end

-- Whether perf lets this process profile at all (perf_event_paranoid,
-- kptr_restrict, perf_event_max_sample_rate): asked once, before any case
-- maps memory; a refusal makes every case "not supported" with its reason.
local _, refused = ft.profile(function() end, { freq = h.cfg.FREQ })

-- fn(...) under the profiler; its results after the profile. A refusal
-- comes back as nil and why.
local function profiled(r, fn, ...)
  local res = table.pack(ft.profile(fn, { freq = h.cfg.FREQ }, ...))
  if not res[1] then return nil, res[2] end
  tally(r, res[1])
  return table.unpack(res, 1, res.n)
end

-- Pass 2 is fast (about 20 ns a page): enough passes that about 2^21 pages
-- are touched inside the one profile, so it holds a few hundred samples.
-- The passes are called straight, the faults read once around them all.
local RETOUCHES = math.max(1, (1 << 21) // h.pages)
local function retouch(r, b)
  local f0, ns = ft.faults(), 0
  for i = 1, RETOUCHES do ns = ns + b:touch(2 + i % 200) end
  r.ns, r.ns_faults, r.passes = ns, ft.faults() - f0, RETOUCHES
  r:work(ns)
  return true
end

local CASES = {
  { "pass 1, 4 KiB pages", function(r)
    local b <close> = r:map(nil, { thp = "never" })
    local p, why = profiled(r, r.pass, r, "ns", b, "touch", 1)
    if not p then return false, why end
    r:check_bytes(b, 1, "pass 1, 4 KiB pages")
  end },
  { "pass 1, THP=always", function(r)
    local b <close> = r:map(nil, { thp = "always" })
    local p, why = profiled(r, r.pass, r, "ns", b, "touch", 1)
    if not p then return false, why end
    r.huge_bytes = assert(b:thp_bytes())
    r:check_bytes(b, 1, "pass 1, THP=always")
  end },
  { "MAP_POPULATE (inside mmap)", function(r)
    local p, b = profiled(r, r.map, r, "ns", { thp = "never", populate = true })
    if not p then return false, b end
    r:check_bytes(b, 0, "MAP_POPULATE")
    r:release(nil, b)
  end },
  { "read fault onto the zero page", function(r)
    local b <close> = r:map(nil, { thp = "never" })
    local p, why = profiled(r, r.pass, r, "ns", b, "read_touch")
    if not p then return false, why end
    r:check_bytes(b, 0, "read fault")
  end },
  { "pass 2 (re-touch)", function(r)
    local b <close> = r:map(nil, { thp = "never" })
    r:pass(nil, b, "touch", 1)
    local p, why = profiled(r, retouch, r, b)
    if not p then return false, why end
    r:check_bytes(b, 2 + RETOUCHES % 200, "pass 2")
  end },
  { "munmap", function(r)
    local b <close> = r:map(nil, { thp = "never" })
    r:pass(nil, b, "touch", 1)
    r:check_bytes(b, 1, "before munmap")
    local p, why = profiled(r, r.release, r, "ns", b)
    if not p then return false, why end
  end },
}
for _, c in ipairs(CASES) do
  h:case(c[1], function(r)
    if refused then return false, refused end
    return c[2](r)
  end)
end

local cols = { { "samples", "samples", "count" }, { "lost", "lost samples", "count" },
  { "sampled", "sampled share of the wall time", "%" } }
for _, key in ipairs(KEYS) do cols[#cols + 1] = { "st_" .. key, NAMES[key], "%" } end
cols[#cols + 1] = { "ns_per_page", "ns/page, sampled", "ns/page", function(r)
  return r.ns / (r.passes or 1) / h.pages end }
cols[#cols + 1] = { "ns_faults", "faults", "faults" }
h:columns(cols)
h:run()

-- Pooled over the repetitions: each stage's share of all the case's
-- samples, and the kernel symbols with the most samples.
local TOP = 10
local ungrouped = {}
for _, case in ipairs(h.cases) do
  local stages, symbols, total, samples, lost, kernel, user = {}, {}, 0, 0, 0, 0, 0
  for _, r in ipairs(case.records) do
    for k, n in pairs(r.stages) do stages[k] = (stages[k] or 0) + n end
    for name, s in pairs(r.symbols) do
      local t = symbols[name] or { name = name, samples = 0, kernel = s.kernel, stages = {} }
      symbols[name] = t
      t.samples = t.samples + s.samples
      for k, n in pairs(s.stages) do t.stages[k] = (t.stages[k] or 0) + n end
    end
    total, samples, lost = total + r.chained, samples + r.samples, lost + r.lost
    kernel, user = kernel + r.kernel_samples, user + r.user_samples
  end
  if #case.records > 0 then
    h:value("samples", samples, "count", { { "case", case.name }, { "kernel", kernel }, { "user", user },
      { "lost", lost }, { "reps", #case.records } })
    for _, key in ipairs(KEYS) do
      h:value("stage", total > 0 and 100 * (stages[key] or 0) / total or 0, "%",
        { { "case", case.name }, { "stage", key }, { "samples", stages[key] or 0 }, { "of", total } })
    end
    local list = {}
    for _, s in pairs(symbols) do
      if s.kernel then list[#list + 1] = s end
      if s.stages[UNGROUPED] then ungrouped[s.name] = (ungrouped[s.name] or 0) + s.stages[UNGROUPED] end
    end
    table.sort(list, function(a, b) return a.samples > b.samples or (a.samples == b.samples and a.name < b.name) end)
    for k = 1, math.min(TOP, #list) do
      local s, most = list[k], nil
      for key, n in pairs(s.stages) do
        if not most or n > s.stages[most] or (n == s.stages[most] and key < most) then most = key end
      end
      h:value("top", 100 * s.samples / total, "%", { { "case", case.name }, { "symbol", s.name }, { "rank", k },
        { "samples", s.samples }, { "stage", most } })
    end
  end
end

local left = {}
for name, n in pairs(ungrouped) do left[#left + 1] = { name, n } end
table.sort(left, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
for i = 1, #left do left[i] = ("%s (%d)"):format(left[i][1], left[i][2]) end

h:note(("Each case is one step profiled with ft.profile at %d samples per second of CPU time (cpu-clock, "
  .. "this thread, kernel and user, call chains): pass 1 of a fresh %d MiB mapping with 4 KiB pages "
  .. "(MADV_NOHUGEPAGE) and with MADV_HUGEPAGE, an mmap with MAP_POPULATE, one read per page of a fresh "
  .. "mapping, %d re-touch passes over touched pages, and the munmap of touched pages. Shares are of all the "
  .. "case's samples over the repetitions; a sample counts toward the stage whose rule (scripts/attribution.lua) "
  .. "names the kernel function it interrupted, user samples toward user. The run's own counting is the "
  .. "harness's: its perf software counters around every timed step (each fault feeds their page-fault event, "
  .. "___perf_sw_event), their reads and getrusage."):format(h.cfg.FREQ, h.cfg.MIB, RETOUCHES))
h:note("No PMU in this guest: the cpu-clock timer cannot interrupt code that runs with interrupts off, so "
  .. "that time lands on the instruction that turns them back on. exc_page_fault holds the trap's entry "
  .. "(counted as entry/trap), and _raw_spin_unlock_irqrestore the work done under an irq-saving lock: "
  .. "its samples count toward its caller's stage (the LRU batch, the free lists), the locking stage only "
  .. "where its caller matches no rule.")
h:note("The sampled share is the samples' periods over the step's wall time: below 100 % the profile saw "
  .. "less time than passed (samples delayed with interrupts off, the sample's own cost, time in the host, "
  .. "the thread waiting for a CPU). "
  .. "The ns/page are with sampling on, which slows a first touch by a fifth to a half at 10 kHz.")
h:note("Ungrouped, all cases, samples: " .. (#left > 0 and table.concat(left, ", ", 1, math.min(12, #left))
  .. (#left > 12 and (", and %d more"):format(#left - 12) or "") or "none") .. ".")

-- One table, a line per case and a column per stage, then the top five
-- kernel symbols of each case; from the raw file alone.
local function render(raw)
  local ix = summary.index(raw)
  local out = { ("**%s**, finished %s UTC  "):format(ix.meta.title, ix.meta.date), ix.meta.machine .. ".", "" }
  local function put(s) out[#out + 1] = s end
  local stage, top = {}, {}
  for _, v in ipairs(ix.values.stage or {}) do stage[v.case .. "\0" .. v.stage] = v.x end
  for _, v in ipairs(ix.values.top or {}) do
    top[v.case] = top[v.case] or {}
    top[v.case][v.rank] = v
  end
  local pooled = {}
  for _, v in ipairs(ix.values.samples or {}) do pooled[v.case] = v end
  local head, rule = { "case", "samples (kernel / user)" }, { "---", "---" }
  for _, key in ipairs(KEYS) do head[#head + 1] = NAMES[key] .. " %"; rule[#rule + 1] = "---" end
  for _, c in ipairs { "lost", "sampled share of the wall (median) %", "ns/page, sampled (median)",
    "faults (median)" } do
    head[#head + 1] = c; rule[#rule + 1] = "---"
  end
  put("| " .. table.concat(head, " | ") .. " |")
  put("|" .. table.concat(rule, "|") .. "|")
  local function median(case, col)
    local row = ix.row(case, col)
    return row and row.n > 0 and units.cell(row.median, row.unit) or "–"
  end
  for _, case in ipairs(ix.cases) do
    local cells = { case }
    local p = pooled[case]
    if ix.unsupported[case] then
      cells[2] = "not supported: " .. ix.unsupported[case]
      for i = 3, #head do cells[i] = "" end
    elseif p then
      cells[2] = ("%s (%s / %s)"):format(units.cell(p.x, "count"), units.cell(p.kernel, "count"),
        units.cell(p.user, "count"))
      for _, key in ipairs(KEYS) do
        cells[#cells + 1] = units.cell(stage[case .. "\0" .. key] or 0, "%")
      end
      cells[#cells + 1] = units.cell(p.lost, "count")
      cells[#cells + 1] = median(case, "sampled")
      cells[#cells + 1] = median(case, "ns_per_page")
      cells[#cells + 1] = median(case, "ns_faults")
    end
    put("| " .. table.concat(cells, " | ") .. " |")
  end
  put("")
  if next(top) then
    put("Top kernel symbols by samples (share of all the case's samples; → the stage they count toward):")
    put("")
    put("| case | 1 | 2 | 3 | 4 | 5 |")
    put("|---|---|---|---|---|---|")
  end
  for _, case in ipairs(ix.cases) do
    if pooled[case] and next(top) then
      local cells = { case }
      for k = 1, 5 do
        local v = (top[case] or {})[k]
        cells[k + 1] = v and ("%s %s %% → %s"):format(v.symbol, units.cell(v.x, "%"), NAMES[v.stage] or v.stage)
          or (k == 1 and "no kernel sample" or "–")
      end
      put("| " .. table.concat(cells, " | ") .. " |")
    end
  end
  if next(top) then put("") end
  for _, n in ipairs(ix.meta.note) do put(n.text); put("") end
  for _, w in ipairs(ix.meta.warning) do put("**Warning:** " .. w.text); put("") end
  local own = ix.value("own_time")
  put(("Wall time %s s, %s %% of it in the runner itself."):format(units.cell(own.wall_ms / 1000, "ratio"),
    units.cell(own.x, "%")))
  put("")
  put(ix.verdict .. ".")
  return table.concat(out, "\n") .. "\n"
end

h:finish(render)
