-- The one rule on hand-written pages: a number with a unit of measurement
-- outside generated blocks and code needs a marker in its paragraph naming
-- where it comes from, <!-- figure: SOURCE --> (in roff, .\" figure: SOURCE).
-- Every markdown and roff file of the tree is read, tracked or new; words
-- are not scanned. A results/ file but a README page is generated or sealed.
local lint = {}

local UNITS = { "ns", "µs", "us", "ms", "%%", "\\%%", "GB/s", "MB/s", "MiB", "GiB", "KiB", "times" }

-- The figures in one line of prose (code spans taken out), or none.
local function figures(line)
  line = line:gsub("``.-``", ""):gsub("`[^`]*`", "")
  local out = {}
  for _, u in ipairs(UNITS) do
    local tail = u:match("^%a") and "%f[%A]" or ""
    for hit in line:gmatch("%d[%d.,]*%s?" .. u .. tail) do out[#out + 1] = hit end
  end
  return out
end

-- The unmarked figures of one page's text: { "line N: FIGURE" }.
function lint.page(text)
  local out, para, marked, in_block, in_code = {}, {}, false, false, false
  local function close()
    if not marked then for _, f in ipairs(para) do out[#out + 1] = f end end
    para, marked = {}, false
  end
  local n = 0
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if l:match("<!%-%- ftrun %a+ [^:]+: begin %-%->") then in_block = true; close()
    elseif l:match("<!%-%- ftrun %a+ [^:]+: end %-%->") then in_block = false
    elseif l:match("^%s*```") or l:match("^%.EX") or l:match("^%.EE") then in_code = not in_code; close()
    elseif not in_block and not in_code then
      if l:match("^%s*$") or l:match("^%.[SPT][HSP]?%f[%s%z]") or l:match("^#") or l:match("^%s*[-*] ")
        or l:match("^%s*%d+%. ") or l:match("^|") then close() end
      if l:find("figure:", 1, true) and (l:find("<!--", 1, true) or l:match('^%.\\"')) then marked = true end
      for _, f in ipairs(figures(l)) do para[#para + 1] = ("line %d: %s"):format(n, f) end
    end
  end
  close()
  return out
end

-- The pages the rule reads: every *.md and *.1 git knows or would add.
function lint.pages(root)
  local out = {}
  for _, f in ipairs(require("evidence").lines(("git -C %s ls-files --cached --others --exclude-standard -- "
    .. "'*.md' '*.1' 2>/dev/null"):format(require("shell").quote(root)))) do
    if not f:match("^results/") or f:match("README%.md$") and not f:match("^results/archive/") then
      out[#out + 1] = f
    end
  end
  table.sort(out)
  return out
end

-- Every unmarked figure in the tree's hand-written pages.
function lint.check(root)
  local problems = {}
  for _, f in ipairs(lint.pages(root)) do
    for _, hit in ipairs(lint.page(require("textfile").read(root .. "/" .. f) or "")) do
      problems[#problems + 1] = ("%s: %s: a figure with no <!-- figure: SOURCE --> marker in its paragraph")
        :format(f, hit)
    end
  end
  return problems
end

return lint
