/* The results' plumbing: ft.mkdir, ft.symlink, ft.list_dir, ft.write_files
 * and ft.project_dir (the directory holding the executable). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "../core/files.h"
#include "ft_aux.h"
#include "ft_openers.h"

/* Test hooks, not settings: FTRUN_TEST_WRITE_PAUSE=SECONDS holds
 * ft.write_files after each temporary it writes, FTRUN_TEST_RENAME_PAUSE
 * after its first rename, so the tests can signal or race a run inside
 * those windows. */
static long long test_pause_ns(const char *name)
{
	const char *env = getenv(name);
	return env && *env ? (long long)(strtod(env, NULL) * 1e9) : 0;
}

/* ft.mkdir(path) -> true | nil, message, errno: with its parents */
static int l_mkdir(lua_State *L)
{
	ft_check_nargs(L, 1);
	const char *path = ft_check_path(L, 1);
	if (!*path) {
		lua_pushnil(L);
		lua_pushliteral(L, "mkdir: empty path");
		lua_pushinteger(L, EINVAL);
		return 3;
	}
	int err = ft_mkdir_p(path);
	if (err)
		return ft_fail_errno(L, err, "mkdir %s failed", path);
	lua_pushboolean(L, 1);
	return 1;
}

static int not_dots(const struct dirent *e)
{
	return strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
}

/* ft.list_dir(path) -> {names, sorted} | nil, message, errno: what scripts
 * read a directory with, instead of ls in a shell. */
static int l_list_dir(lua_State *L)
{
	ft_check_nargs(L, 1);
	const char *path = ft_check_path(L, 1);
	struct dirent **names;
	int n = scandir(path, &names, not_dots, alphasort);
	if (n < 0)
		return ft_fail_errno(L, errno, "cannot list %s", path);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushstring(L, names[i]->d_name);
		lua_rawseti(L, -2, i + 1);
		free(names[i]);
	}
	free(names);
	return 1;
}

/* ft.symlink(target, linkpath) -> true | nil, message, errno: replaces an
 * existing link atomically */
static int l_symlink(lua_State *L)
{
	ft_check_nargs(L, 2);
	const char *target = ft_check_path(L, 1);
	const char *link = ft_check_path(L, 2);
	int err = ft_symlink_replace(target, link);
	if (err)
		return ft_fail_errno(L, err, "symlink %s -> %s failed", link, target);
	lua_pushboolean(L, 1);
	return 1;
}

/* ft.write_files({{path, text}, ...}) -> true | nil, message, errno: all
 * the files appear, or none changes. */
static int l_write_files(lua_State *L)
{
	ft_check_nargs(L, 1);
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_Integer n = luaL_len(L, 1);
	luaL_argcheck(L, n >= 0 && n < (1 << 20), 1, "too many files");
	struct ft_file *files = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *files, 0);
	for (lua_Integer i = 0; i < n; i++) {
		if (lua_rawgeti(L, 1, i + 1) != LUA_TTABLE)
			return luaL_error(L, "ft.write_files: entry %I is a %s, expected {path, text}",
			                  i + 1, luaL_typename(L, -1));
		lua_rawgeti(L, -1, 1);
		lua_rawgeti(L, -2, 2);
		if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "ft.write_files: entry %I needs {path, text}, two strings", i + 1);
		size_t path_len;
		files[i].path = lua_tolstring(L, -2, &path_len);
		if (strlen(files[i].path) != path_len)
			return luaL_error(L, "ft.write_files: entry %I's path holds an embedded NUL after '%s'", i + 1,
			                  files[i].path);
		files[i].text = lua_tolstring(L, -1, &files[i].len);
		/* the strings stay alive in the list argument */
		lua_pop(L, 3);
	}
	const char *failed = "?";
	int err = ft_write_files(files, (size_t)n, test_pause_ns("FTRUN_TEST_WRITE_PAUSE"),
	                         test_pause_ns("FTRUN_TEST_RENAME_PAUSE"), &failed);
	if (err < 0)
		return ft_interrupt_error(L);
	if (err)
		return ft_fail_errno(L, err, "writing %s failed", failed);
	lua_pushboolean(L, 1);
	return 1;
}
/* ft.read_file(path, max_bytes) -> text | nil, message, errno: a regular
 * file whole, never blocking (a FIFO, a device, a directory is refused
 * unopened or unread) and never more than max_bytes. */
static int l_read_file(lua_State *L)
{
	ft_check_nargs(L, 2);
	const char *path = ft_check_path(L, 1);
	lua_Integer max = luaL_checkinteger(L, 2);
	luaL_argcheck(L, max >= 0, 2, "a size of 0 bytes or more");
	char *text;
	size_t len;
	const char *why;
	int err = ft_read_regular(path, (size_t)max, &text, &len, &why);
	if (err == EFBIG)
		return ft_fail(L, err, "%s is larger than %I bytes, more than a reader here takes", path, max);
	if (err && why)
		return ft_fail(L, err, "%s is %s, not a regular file: not read", path, why);
	if (err)
		return ft_fail_errno(L, err, "cannot read %s", path);
	lua_pushlstring(L, text, len);
	free(text);
	return 1;
}

/* ft.temporary(path [, false]): path is a temporary (a plot being drawn),
 * removed if a fatal signal ends the run; false: it no longer is. */
static int l_temporary(lua_State *L)
{
	ft_check_nargs(L, 2);
	const char *path = ft_check_path(L, 1);
	int err = ft_files_track(path, lua_isnoneornil(L, 2) || lua_toboolean(L, 2));
	if (err)
		return ft_error_errno(L, err, "ft.temporary: %s cannot be tracked", path);
	return 0;
}

void ft_open_files(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "mkdir", l_mkdir },
		{ "symlink", l_symlink },
		{ "list_dir", l_list_dir },
		{ "read_file", l_read_file },
		{ "write_files", l_write_files },
		{ "temporary", l_temporary },
		{ NULL, NULL }
	};
	luaL_setfuncs(L, functions, 0);
	ft_set_string(L, "project_dir", ft_exe_dir());
}
