-- Every claim of the results prose is recomputed from the committed files:
-- the committed prose must match, and a copy with one number changed by
-- hand, a figure typed into the prose, or data that moved must not.
local t = require "tap"
local claims = require "claims"
local q = t.quote

local ROOT = ft.project_dir

do -- one rounding rule: three significant digits, half away from zero
  for _, c in ipairs { { 2271.6258, "2270" }, { 178.59, "179" }, { 8.697, "8.70" }, { 0.78010, "0.780" },
    { 0.0637101, "0.0637" }, { 999.6, "1000" }, { 1.0051, "1.01" }, { 2.5, "2.50" }, { -12.25, "-12.3" }, { 0, "0" },
    { 262144, "262000" }, { 10.92738, "10.9" } } do
    t.is(claims.round(c[1]), c[2], ("round(%s)"):format(c[1]))
  end
  t.is(claims.held(3, 3), "in all 3 runs", "held: all")
  t.is(claims.held(2, 3), "in 2 of 3 runs", "held: some")
  t.is(claims.held(0, 3), "in none of the 3 runs", "held: none")
end

do -- hand-typed figures are found outside the generated blocks only
  local text = table.concat({ "Pass 2 is a name, `MIB=256` is code, ![plot 1](a1.svg) an image.",
    "<!-- ftrun claims x: begin -->", "12.5 ns, generated", "<!-- ftrun claims x: end -->",
    "<!-- ftrun results main: begin -->", "| A | 2271.6 |", "<!-- ftrun results main: end -->",
    "```", "ftrun 0.1.0", "```", "It cost 2270 ns." }, "\n")
  local found = claims.hand_numbers(text)
  t.is(#found, 1, "one line with a number typed by hand")
  t.like(found[1] or "", "line 11: It cost 2270 ns.", "the last one, named by its line")
end

local function check(root)
  return t.ftrun_run("claims.lua CHECK=1" .. (root and " ROOT=" .. q(root) or ""))
end

do -- the committed prose
  local out, code = check()
  t.is(code, 0, "claims.lua CHECK=1: the committed prose matches the committed data", out)
end

-- A copy of the tracked tree (the layout is made from git's list of it).
local dir = t.tmpdir()
t.run(("cd %s && git ls-files -z | xargs -0 cp --parents -t %s && cd %s && git init -q && git add -A")
  :format(q(ROOT), q(dir), q(dir)))
local readme = t.read(dir .. "/results/README.md")

do
  local out, code = check(dir)
  t.is(code, 0, "the copy checks clean", out)
end

do -- one number in a claim changed by hand
  local body = claims.block(readme, "first-touch")
  t.ok(body ~= nil, "results/README.md has the first-touch claim")
  local n = body and body:match("%*%*(%d+)")
  local changed = body and body:gsub("%*%*" .. n, "**" .. tostring(tonumber(n) + 1), 1)
  t.write(dir .. "/results/README.md", (readme:gsub(body:gsub("%p", "%%%0"), (changed:gsub("%%", "%%%%")), 1)))
  local out, code = check(dir)
  t.is(code, 1, "a number changed by hand in a claim: CHECK=1 exits 1")
  t.like(out, "the claim first-touch differs from the data", "and names the claim")
  local _, wcode = t.ftrun_run("claims.lua ROOT=" .. q(dir))
  t.is(wcode, 0, "claims.lua writes the claims again")
  t.is(t.read(dir .. "/results/README.md"), readme, "and the prose is what it was")
end

do -- a figure typed into the prose around the blocks
  t.write(dir .. "/results/README.md", (readme:gsub("\n%*%*The fill%.%*%*\n", "\n**The fill**, about 9 times.\n", 1)))
  local out, code = check(dir)
  t.is(code, 1, "a figure typed by hand into the prose: CHECK=1 exits 1")
  t.like(out, "a number typed by hand", "and says so")
  t.like(out, "about 9 times", "quoting the line")
  t.write(dir .. "/results/README.md", readme)
end

do -- the headline in README.md is checked too
  local top = t.read(dir .. "/README.md")
  local body = claims.block(top, "headline")
  t.ok(body ~= nil, "README.md has the headline claim")
  t.write(dir .. "/README.md", (top:gsub("in all (%d) runs", "in all 9 runs", 1)))
  local out, code = check(dir)
  t.is(code, 1, "the headline changed by hand: CHECK=1 exits 1")
  t.like(out, "README.md: the claim headline differs", "and names it")
  t.write(dir .. "/README.md", top)
end

do -- data that moved: the prose no longer matches
  local path = dir .. "/results/results.json"
  local json = require "json"
  local doc = json.decode(t.read(path))
  for _, r in ipairs(doc.rows) do
    if r.case == "A" and r.column == "pass1" then r.median = r.median * 2 end
  end
  t.write(path, json.encode(doc))
  local out, code = check(dir)
  t.is(code, 1, "a changed median in the JSON: CHECK=1 exits 1")
  t.like(out, "the claim first-touch differs", "naming the claim it moves")
end

do -- a missing marker
  t.write(dir .. "/results/README.md", (readme:gsub("<!%-%- ftrun claims malloc: begin %-%->\n", "", 1)))
  local out, code = t.ftrun_run("claims.lua ROOT=" .. q(dir))
  t.is(code, 1, "a block without its marker: claims.lua exits 1")
  t.like(out, "no markers for the claim malloc", "and names it")
  out, code = check(dir)
  t.is(code, 1, "and CHECK=1 fails on it too")
end

os.execute("rm -rf " .. q(dir))
t.done()
