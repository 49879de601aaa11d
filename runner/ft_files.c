/* The run's own files and paths: ft.write_files, ft.mkdir, ft.symlink,
 * ft.project_dir, and ft.interrupted, which a results writer asks before
 * it writes anything. Refusals by the system are nil, message, errno. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "../core/files.h"
#include "../core/interrupt.h"
#include "ft.h"

static int refused(lua_State *L, int err, const char *what, const char *path)
{
	lua_pushnil(L);
	lua_pushfstring(L, "%s %s: %s", what, path, strerror(err));
	lua_pushinteger(L, err);
	return 3;
}

static const char *check_path(lua_State *L, int arg)
{
	size_t len;
	const char *path = luaL_checklstring(L, arg, &len);
	if (len == 0 || strlen(path) != len)
		luaL_argerror(L, arg, "expected a non-empty path without NUL bytes");
	return path;
}

/* FTRUN_TEST_WRITE_PAUSE=seconds: a pause after each temporary, so a test
 * can deliver SIGINT in the middle of a set. */
static long long test_pause_ns(void)
{
	const char *s = getenv("FTRUN_TEST_WRITE_PAUSE");
	double seconds = s ? strtod(s, NULL) : 0;
	return seconds > 0 && seconds < 3600 ? (long long)(seconds * 1e9) : 0;
}

/* ft.write_files({{path, text}, ...}) -> true | nil, message, errno */
static int l_write_files(lua_State *L)
{
	ft_check_nargs(L, 1);
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_Integer n = luaL_len(L, 1);
	luaL_argcheck(L, n >= 1 && n <= 64, 1, "expected a list of 1 to 64 {path, text} pairs");
	struct ft_file *files = lua_newuserdatauv(L, (size_t)n * sizeof *files, 0);
	memset(files, 0, (size_t)n * sizeof *files);
	for (lua_Integer i = 0; i < n; i++) {
		if (lua_rawgeti(L, 1, i + 1) != LUA_TTABLE)
			return luaL_error(L, "ft.write_files: entry %I is a %s, expected {path, text}",
			                  i + 1, luaL_typename(L, -1));
		lua_rawgeti(L, -1, 1);
		lua_rawgeti(L, -2, 2);
		if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "ft.write_files: entry %I needs a path and a text (strings)", i + 1);
		files[i].path = check_path(L, -2);
		files[i].text = lua_tolstring(L, -1, &files[i].len);
		lua_pop(L, 1); /* text and path stay referenced by the table */
		lua_pop(L, 2);
	}
	const char *where = "";
	int err = ft_write_files(files, (size_t)n, test_pause_ns(), &where);
	if (err == EINTR && ft_interrupted)
		return luaL_error(L, "interrupted");
	if (err)
		return refused(L, err, "cannot write", where);
	lua_pushboolean(L, 1);
	return 1;
}

/* ft.mkdir(path) -> true | nil, message, errno (with parents, as mkdir -p) */
static int l_mkdir(lua_State *L)
{
	ft_check_nargs(L, 1);
	const char *path = check_path(L, 1);
	int err = ft_mkdir_p(path);
	if (err)
		return refused(L, err, "cannot make directory", path);
	lua_pushboolean(L, 1);
	return 1;
}

/* ft.symlink(target, linkpath) -> true | nil, message, errno */
static int l_symlink(lua_State *L)
{
	ft_check_nargs(L, 2);
	const char *target = check_path(L, 1), *link = check_path(L, 2);
	int err = ft_symlink_replace(target, link);
	if (err)
		return refused(L, err, "cannot link", link);
	lua_pushboolean(L, 1);
	return 1;
}

static int l_interrupted(lua_State *L)
{
	ft_check_nargs(L, 0);
	lua_pushboolean(L, ft_interrupted != 0);
	return 1;
}

/* The directory of the running executable: the project's root, wherever
 * the run was started from. */
static void push_project_dir(lua_State *L)
{
	char path[PATH_MAX], real[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n <= 0) {
		lua_pushliteral(L, ".");
		return;
	}
	path[n] = '\0';
	lua_pushstring(L, realpath(dirname(path), real) ? real : dirname(path));
}

void ft_open_files(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "write_files", l_write_files },
		{ "mkdir", l_mkdir },
		{ "symlink", l_symlink },
		{ "interrupted", l_interrupted },
		{ NULL, NULL }
	};
	luaL_setfuncs(L, functions, 0);
	push_project_dir(L);
	lua_setfield(L, -2, "project_dir");
}
