-- What no claim can recompute, held as it was made. Two seals:
--
-- * A kind's published files (its raw files' notes and warnings, the
--   runs' JSON with their noise fields, samples, plots, calibrations, the
--   NUMA guest's files): a publish ends by writing <kind dir>/SHA256SUMS
--   (sha256sum's own format, so `sha256sum -c SHA256SUMS` checks them too).
--   What claims.lua makes from those files (summaries, sidecars, the
--   README pages) is left out: the claims check makes it again instead.
-- * The documents' hand-written prose (outside the generated blocks): a
--   conclusion written in words ("several times more", "does not fault
--   again"), a switch, a pass's name, a link or a code span is no figure
--   the scan for typed numbers can hold to the data, so a person vets each
--   paragraph and doc/vetted-prose.sha256 keeps its hash, beside the hash
--   of each kind's SHA256SUMS it was read against. `make claims`
--   writes neither file: an edit by hand fails the check until a publish
--   seals the files again, and a publish or an edit of the prose fails it
--   until a person has re-read the prose (claims.lua VET=1).
local shell = require "shell"
local textfile = require "textfile"

local seal = {}

seal.SUMS = "SHA256SUMS"
seal.VETTED = "doc/vetted-prose.sha256"

-- { [name] = sha256 } of the files named relative to dir, by one sha256sum.
local function hashes(dir, names)
  local out = {}
  for from = 1, #names, 200 do -- a command line of bounded length
    local words = {}
    for i = from, math.min(#names, from + 199) do words[#words + 1] = shell.path(names[i]) end
    local p = io.popen(("cd %s && sha256sum -- %s 2>/dev/null"):format(shell.quote(dir), table.concat(words, " ")))
    for line in (p and p:read("a") or ""):gmatch("[^\n]+") do
      local hash, name = line:match("^(%x+)  %./(.*)$")
      if hash then out[name] = hash end
    end
    if p then p:close() end
  end
  return out
end

-- The files a publish into dir (relative to root) wrote, relative to dir,
-- sorted: all but its README page, the files claims.lua makes (`made`:
-- paths relative to root), a user's own runs (results/runs/), the other
-- kinds' directories (`others`: paths relative to root) and SHA256SUMS.
-- Second, the directories too deep to read: what they hold cannot be
-- sealed, and no publish writes one.
function seal.published(root, dir, made, others)
  local base, skip = root .. "/" .. dir .. "/", {}
  for _, f in ipairs(made) do skip[root .. "/" .. f] = true end
  local names, deep = {}, {}
  local files, too_deep = shell.find(base, ".")
  for _, d in ipairs(too_deep) do deep[#deep + 1] = d:sub(#base + 1) end
  for _, path in ipairs(files) do
    local rel = path:sub(#base + 1)
    local inside = false
    for _, o in ipairs(others) do
      if (root .. "/" .. o .. "/") == path:sub(1, #root + #o + 2) then inside = true end
    end
    local users_runs = dir == "results" and rel:match("^runs/") -- RESULTS' default; no kind's directory has one
    if not inside and not skip[path] and not users_runs and rel ~= "README.md" and rel ~= seal.SUMS then
      names[#names + 1] = rel
    end
  end
  return names, deep
end

-- SHA256SUMS's text for dir's published files.
function seal.sums(root, dir, made, others)
  local names, deep = seal.published(root, dir, made, others)
  if #deep > 0 then error(("%s/%s: a directory deeper than the seal reads"):format(dir, deep[1]), 0) end
  local got, lines = hashes(root .. "/" .. dir, names), {}
  for _, n in ipairs(names) do
    lines[#lines + 1] = ("%s  %s"):format(assert(got[n], "sha256sum could not read " .. dir .. "/" .. n), n)
  end
  return table.concat(lines, "\n") .. "\n"
end

-- What differs between dir's published files and its SHA256SUMS.
function seal.check_sums(root, dir, made, others)
  local sums = dir .. "/" .. seal.SUMS
  local text = textfile.read(root .. "/" .. sums)
  if not text then
    return { ("%s: none, so nothing holds this kind's published files as its publish wrote them"):format(sums) }
  end
  local want, problems = {}, {}
  for line in text:gmatch("[^\n]+") do
    local hash, name = line:match("^(%x+)  (.+)$")
    if not hash then problems[#problems + 1] = ("%s: a line not in sha256sum's form: %s"):format(sums, line)
    else want[name] = hash end
  end
  local names, deep = seal.published(root, dir, made, others)
  local got, seen = hashes(root .. "/" .. dir, names), {}
  local again = "; a publish writes it (after part of one: ./ftrun claims.lua SEAL=" .. dir .. ")"
  for _, d in ipairs(deep) do
    problems[#problems + 1] = ("%s/%s: a directory deeper than the seal reads, so nothing in it is held: no publish "
      .. "writes one"):format(dir, d)
  end
  for _, n in ipairs(names) do
    seen[n] = true
    if not want[n] then
      problems[#problems + 1] = ("%s/%s: not in %s, so no publish wrote it%s"):format(dir, n, sums, again)
    elseif got[n] ~= want[n] then
      problems[#problems + 1] = ("%s/%s: not as its publish wrote it (sha256 %s, %s has %s)%s")
        :format(dir, n, got[n] or "unreadable", sums, want[n], again)
    end
  end
  for n in pairs(want) do
    if not seen[n] then problems[#problems + 1] = ("%s/%s: in %s but gone"):format(dir, n, sums) end
  end
  table.sort(problems)
  return problems
end

-- The hand-written paragraphs of a document, in order: { line (its first),
-- text } each. A paragraph ends at a blank line, a marker line (a
-- generated block's edge: the block between is not prose), a list item's
-- start (so that two items swapped are a change of order), and a table's
-- row is one of its own; in roff, a paragraph or section request ends one.
-- In a document no code writes blocks into (`unblocked`), a marker is
-- text like any other: a block there would hide prose from the vetting.
-- Second, the document's layout: every line outside the blocks as it
-- stands, blank ones and the end of the file too, which no paragraph holds.
local ROFF_BREAK = { SH = true, SS = true, PP = true, LP = true, P = true, TP = true, IP = true }
function seal.paragraphs(text, unblocked)
  local out, cur, open, n, layout = {}, nil, false, 0, {}
  local man = text:match('^%.\\"') ~= nil
  local function close()
    if cur then out[#out + 1] = { line = cur.line, text = table.concat(cur.lines, "\n") } end
    cur = nil
  end
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    -- a marker is a comment where it stands: behind roff's comment request in the man page, bare in markdown
    local edge = not unblocked and (man and l:match('^%.\\" <!%-%- ftrun %a+ [^:]+: (%a+) %-%->$')
      or not man and l:match("^<!%-%- ftrun %a+ [^:]+: (%a+) %-%->$"))
    if edge or not open then layout[#layout + 1] = l end
    local request = man and l:match("^%.(%u%u?)%f[%s%z]")
    if edge then
      close()
      open = edge == "begin"
    elseif not open then
      if l:match("^%s*$") or (request and ROFF_BREAK[request]) or (not man and l:match("^%s*[-*] ")) then close() end
      if not l:match("^%s*$") then
        local row = not man and l:match("^|")
        if row then close() end
        cur = cur or { line = n, lines = {} }
        cur.lines[#cur.lines + 1] = l
        if row then close() end
      end
    end
  end
  close()
  return out, table.concat(layout, "\n")
end

-- { file = { {hash, start}, ..., layout = hash } } as doc/vetted-prose.sha256 holds them.
local LAYOUT = "the layout of the prose (blank lines, line ends, the end of the file)"
local function vetted(root)
  local text, out = textfile.read(root .. "/" .. seal.VETTED), {}
  if not text then return nil end
  for line in text:gmatch("[^\n]+") do
    local hash, file, start = line:match("^(%x+)  (%S+)  (.*)$")
    if hash and start == LAYOUT then
      out[file] = out[file] or {}
      out[file].layout = hash
    elseif hash then
      out[file] = out[file] or {}
      table.insert(out[file], { hash = hash, start = start })
    end
  end
  return out
end

local function start_of(text)
  local s = text:gsub("%s+", " ")
  return #s > 60 and s:sub(1, 60) .. "..." or s
end

-- Each file's paragraphs with their hashes: { file = { {hash, line, text}, ..., layout = hash } }.
local function hashed(root, files, unblocked)
  local dir = assert(shell.mkdtemp("ftrun-vet"))
  local all, names = {}, {}
  for fi, file in ipairs(files) do
    local layout
    all[file], layout = seal.paragraphs(textfile.read(root .. "/" .. file) or "", unblocked[file])
    local out = assert(io.open(("%s/%d-layout"):format(dir, fi), "wb"))
    out:write(layout)
    out:close()
    names[#names + 1] = fi .. "-layout"
    for pi, p in ipairs(all[file]) do
      local name = ("%d-%d"):format(fi, pi)
      local f = assert(io.open(dir .. "/" .. name, "wb"))
      f:write(p.text)
      f:close()
      names[#names + 1] = name
      p.name = name
    end
  end
  local got = hashes(dir, names)
  os.execute("rm -rf " .. shell.quote(dir))
  for fi, file in ipairs(files) do
    for _, p in ipairs(all[file]) do p.hash = got[p.name] end
    all[file].layout = got[fi .. "-layout"]
  end
  return all
end

-- doc/vetted-prose.sha256's text for the files' prose as it stands, after
-- the hash of each published kind's SHA256SUMS (`sums`, paths from root):
-- the data the prose was read against, so a publish that changes them
-- fails the check until a person has read the prose against the new runs.
local AGAINST = "the published files the prose was vetted against"
local function vet_text(all, got, files, sums)
  local lines = {}
  for _, f in ipairs(sums) do
    lines[#lines + 1] = ("%s  %s  %s"):format(assert(got[f], "cannot read " .. f), f, AGAINST)
  end
  for _, file in ipairs(files) do
    for _, p in ipairs(all[file]) do lines[#lines + 1] = ("%s  %s  %s"):format(p.hash, file, start_of(p.text)) end
    lines[#lines + 1] = ("%s  %s  %s"):format(all[file].layout, file, LAYOUT)
  end
  return table.concat(lines, "\n") .. "\n"
end

function seal.vet(root, files, sums, unblocked)
  return vet_text(hashed(root, files, unblocked), hashes(root, sums), files, sums)
end

-- The hashes of xs that ys holds too (as many times as ys does), in xs's
-- order, and the items of xs left over.
local function common(xs, ys)
  local count, kept, rest = {}, {}, {}
  for _, y in ipairs(ys) do count[y.hash] = (count[y.hash] or 0) + 1 end
  for _, x in ipairs(xs) do
    if (count[x.hash] or 0) > 0 then
      count[x.hash] = count[x.hash] - 1
      kept[#kept + 1] = x.hash
    else
      rest[#rest + 1] = x
    end
  end
  return kept, rest
end

-- Every paragraph of the files' prose that no person vetted as it stands,
-- every vetted one gone, and paragraphs moved out of their vetted order.
function seal.check_prose(root, files, sums, unblocked)
  local want = vetted(root)
  if not want then return { seal.VETTED .. ": none, so no paragraph of the documents' prose was vetted" } end
  local all, problems = hashed(root, files, unblocked), {}
  local again = " (re-read it against the data, then ./ftrun claims.lua VET=1)"
  local got = hashes(root, sums)
  for _, f in ipairs(sums) do
    local v = (want[f] or {})[1]
    if not v then
      problems[#problems + 1] = ("%s: the prose was never vetted against these published files%s"):format(f, again)
    elseif v.hash ~= got[f] then
      problems[#problems + 1] = ("%s: the published files changed since the prose was vetted against them%s")
        :format(f, again:gsub("it against", "the prose against"))
    end
    want[f] = nil
  end
  for _, file in ipairs(files) do
    local have, vetted_here = all[file], want[file] or {}
    local order_have, fresh = common(have, vetted_here)
    for _, p in ipairs(fresh) do
      problems[#problems + 1] = ("%s: line %d: a paragraph not vetted as it stands: %s%s")
        :format(file, p.line, start_of(p.text), again)
    end
    local order_want, gone = common(vetted_here, have)
    for _, v in ipairs(gone) do
      problems[#problems + 1] = ("%s: a vetted paragraph is gone or changed: %s%s"):format(file, v.start, again)
    end
    local moved = table.concat(order_have, " ") ~= table.concat(order_want, " ")
    if moved then
      problems[#problems + 1] = ("%s: its vetted paragraphs stand in another order than they were vetted in%s")
        :format(file, again)
    end
    -- said alone: a paragraph's change changes the layout too
    if #fresh == 0 and #gone == 0 and not moved and have.layout ~= vetted_here.layout then
      problems[#problems + 1] = ("%s: %s is not as vetted%s"):format(file, LAYOUT, again)
    end
  end
  for file in pairs(want) do
    local listed = false
    for _, f in ipairs(files) do listed = listed or f == file end
    if not listed then problems[#problems + 1] = ("%s: vetted in %s but no longer a document the check reads")
      :format(file, seal.VETTED) end
  end
  -- every hash held, the rest of the file too: each line's words are what VET=1 writes
  if #problems == 0 and textfile.read(root .. "/" .. seal.VETTED) ~= vet_text(all, got, files, sums) then
    problems[#problems + 1] = ("%s: its hashes hold, but it is not as VET=1 writes it (a line's words or order "
      .. "edited)"):format(seal.VETTED)
  end
  return problems
end

return seal
