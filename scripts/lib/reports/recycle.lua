-- recycle.lua's report: its finding, for the published pages and a user's own run.
local report = {}

-- What a second touch costs after each way of giving pages back. say: the
-- published pages' wording (round, interval, row), given by whoever prints it.
function report.finding(doc, say)
  local function row(case, column) return say.row(doc, case, column) end
  local fresh, dontneed = "munmap, then a fresh mmap", "madvise(MADV_DONTNEED)"
  local free2, plain2 = row("madvise(MADV_FREE)", "second"), row("nothing released (a plain second pass)", "second")
  local again = row(fresh, "second_faults").min == doc.pages and row(dontneed, "second_faults").min == doc.pages
  return ("After munmap and a fresh mmap, and after MADV_DONTNEED, the second touch took %d and %d faults "
    .. (again and "(every page again, in every repetition) " or "")
    .. "and cost %s and %s ns per page, against %s for the first. After MADV_FREE it took %d "
    .. "faults and cost %s ns per page, %s times a plain second pass (%s). One run, %d repetitions.")
    :format(row(fresh, "second_faults").median, row(dontneed, "second_faults").median,
      say.interval(row(fresh, "second")), say.interval(row(dontneed, "second")), say.interval(row(fresh, "first")),
      row("madvise(MADV_FREE)", "second_faults").max, say.interval(free2), say.round(free2.median / plain2.median),
      say.interval(plain2), free2.n)
end

return report
