#include "ft.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#ifndef FT_CFLAGS
#define FT_CFLAGS "unknown"
#endif

void ft_check_nargs(lua_State *L, int max)
{
	int n = lua_gettop(L);
	if (n > max)
		luaL_error(L, "too many arguments: got %d, expected at most %d", n, max);
}

/* Methods count as the user wrote them: b:touch(1, 2) has 2, not 3. */
void ft_check_method_nargs(lua_State *L, int max)
{
	int n = lua_gettop(L);
	if (n > max)
		luaL_error(L, "too many arguments: got %d, expected %d", n - 1, max - 1);
}

/* luaL_checkoption compares with strcmp, so "dontneed\0x" would pass. */
int ft_check_option(lua_State *L, int arg, const char *const names[])
{
	size_t len;
	const char *s = luaL_checklstring(L, arg, &len);
	if (strlen(s) != len)
		return luaL_argerror(L, arg, lua_pushfstring(L,
			"invalid option '%s' (it holds an embedded NUL)", s));
	return luaL_checkoption(L, arg, NULL, names);
}

void ft_new_resource_meta(lua_State *L, const char *name, lua_CFunction release, lua_CFunction tostring)
{
	luaL_newmetatable(L, name);
	lua_pushcfunction(L, release);
	lua_setfield(L, -2, "__gc");
	lua_pushcfunction(L, release);
	lua_setfield(L, -2, "__close");
	lua_pushcfunction(L, tostring);
	lua_setfield(L, -2, "__tostring");
}

int ft_fail_errno(lua_State *L, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lua_pushnil(L);
	lua_pushvfstring(L, fmt, ap);
	va_end(ap);
	lua_pushfstring(L, ": %s", strerror(err));
	lua_concat(L, 2);
	lua_pushinteger(L, err);
	return 3;
}

int ft_error_errno(lua_State *L, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	luaL_where(L, 1);
	lua_pushvfstring(L, fmt, ap);
	va_end(ap);
	lua_pushfstring(L, ": %s", strerror(err));
	lua_concat(L, 3);
	return lua_error(L);
}

int ft_msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	if (msg == NULL) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

void ft_open_libs(lua_State *L)
{
	luaL_openlibs(L);
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, luaopen_ft);
	lua_setfield(L, -2, "ft");
	lua_pop(L, 1);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "ft");
	lua_call(L, 1, 1);
	lua_setglobal(L, "ft");
}

const char *ft_proc_sys(void)
{
	const char *dir = getenv("FTRUN_PROC_SYS");
	return dir && *dir ? dir : NULL;
}

int luaopen_ft(lua_State *L)
{
	lua_newtable(L);
	ft_open_buffer(L);
	ft_open_memfd(L);
	ft_open_samples(L);
	ft_open_system(L);
	ft_open_parallel(L);
	ft_open_tasks(L);
	ft_open_hugepages(L);
	ft_open_counters(L);
	ft_open_profile(L);
	ft_open_trace(L);
	lua_pushliteral(L, FT_VERSION);
	lua_setfield(L, -2, "version");
	/* How this binary was built, for every run's provenance. */
	lua_createtable(L, 0, 2);
#ifdef __clang__
	lua_pushstring(L, __VERSION__);
#else
	lua_pushstring(L, "gcc " __VERSION__);
#endif
	lua_setfield(L, -2, "compiler");
	lua_pushstring(L, FT_CFLAGS);
	lua_setfield(L, -2, "cflags");
	lua_setfield(L, -2, "build");
	return 1;
}
