-- luacheck for scripts/, tests/ and bench/ (make lint).
std = "lua54"
max_line_length = 120
-- ftrun preloads the ft module as a global in every state.
read_globals = { "ft" }
files["tests"] = {
  max_line_length = 160,
  -- a test reassigns `out, code` from one command to the next and checks only some
  ignore = { "311" },
}
