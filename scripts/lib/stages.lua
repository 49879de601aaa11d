-- Kernel symbols into the stages of a fault: the rules (Lua patterns over
-- the kernel function a sample interrupted), the classifier of one call
-- chain, one profile's tally into a record, and the pooling of a case's
-- records. stages.KEYS: the stages in the table's order, then user and
-- ungrouped; stages.NAMES: each one's label.
local stages = {}

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
stages.USER, stages.UNGROUPED = USER, UNGROUPED
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
function stages.tally(r, p)
  local kernel = {}
  for _, s in ipairs(p.symbols) do kernel[s.name] = s.kernel end
  local counts, symbols, total = {}, {}, 0
  for _, c in ipairs(p.chains) do
    local leaf = c.stack:match("([^;]+)$")
    local stage = kernel[leaf] and chain_stage(c.stack) or USER
    counts[stage] = (counts[stage] or 0) + c.samples
    local sym = symbols[leaf] or { samples = 0, kernel = kernel[leaf] == true, stages = {} }
    symbols[leaf] = sym
    sym.samples = sym.samples + c.samples
    sym.stages[stage] = (sym.stages[stage] or 0) + c.samples
    total = total + c.samples
  end
  r.samples, r.kernel_samples, r.user_samples, r.lost = p.samples, p.kernel, p.user, p.lost
  r.chained, r.dropped, r.sampled = total, p.dropped, 100 * p.share
  r.stages, r.symbols = counts, symbols
  if total > 0 then
    for _, key in ipairs(KEYS) do r["st_" .. key] = 100 * (counts[key] or 0) / total end
  end
end

-- A case's records pooled: the samples of each stage (.stages), every
-- symbol's samples by stage with the stage most of them went to
-- (.symbols), the kernel symbols by samples (.kernel_symbols), and the
-- totals (.total chained, .samples, .lost, .kernel, .user).
function stages.pool(records)
  local counts, symbols = {}, {}
  local p = { stages = counts, symbols = symbols, total = 0, samples = 0, lost = 0, kernel = 0, user = 0 }
  for _, r in ipairs(records) do
    for k, n in pairs(r.stages) do counts[k] = (counts[k] or 0) + n end
    for name, s in pairs(r.symbols) do
      local t = symbols[name] or { name = name, samples = 0, kernel = s.kernel, stages = {} }
      symbols[name] = t
      t.samples = t.samples + s.samples
      for k, n in pairs(s.stages) do t.stages[k] = (t.stages[k] or 0) + n end
    end
    p.total, p.samples, p.lost = p.total + r.chained, p.samples + r.samples, p.lost + r.lost
    p.kernel, p.user = p.kernel + r.kernel_samples, p.user + r.user_samples
  end
  local list = {}
  for _, s in pairs(symbols) do
    if s.kernel then list[#list + 1] = s end
    for key, n in pairs(s.stages) do
      if not s.stage or n > s.stages[s.stage] or (n == s.stages[s.stage] and key < s.stage) then s.stage = key end
    end
  end
  table.sort(list, function(a, b) return a.samples > b.samples or (a.samples == b.samples and a.name < b.name) end)
  p.kernel_symbols = list
  return p
end

stages.KEYS, stages.NAMES = KEYS, NAMES
return stages
