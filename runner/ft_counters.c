/* ft.counters(): perf's software counters of the calling thread (and the
 * hardware ones where there is a PMU), read around a pass. */
#include <errno.h>
#include <string.h>

#include <lauxlib.h>

#include "../core/perfcount.h"
#include "ft_aux.h"
#include "ft_openers.h"

#define COUNTERS_META "ft.counters"

struct counters {
	struct ft_counters c;
	bool open;
};

static struct counters *check_counters(lua_State *L)
{
	struct counters *c = luaL_checkudata(L, 1, COUNTERS_META);
	if (!c->open)
		luaL_error(L, "counters are closed");
	return c;
}

/* ft.counters() -> counters | nil, message, errno */
static int l_counters(lua_State *L)
{
	ft_check_nargs(L, 0);
	struct ft_perf_settings s;
	ft_perf_settings_read(&s, ft_proc_sys());
	struct counters *c = lua_newuserdatauv(L, sizeof *c, 2);
	memset(c, 0, sizeof *c);
	luaL_setmetatable(L, COUNTERS_META);
	char why[512];
	int err = ft_counters_open(&c->c, &s, why, sizeof why);
	if (err)
		return ft_fail(L, err, "ft.counters: %s", why);
	c->open = true;
	lua_newtable(L); /* events: the names that count */
	lua_newtable(L); /* absent: name -> why */
	for (int i = 0; i < FT_COUNTERS; i++) {
		if (c->c.fd[i] >= 0) {
			lua_pushstring(L, ft_counter_name(i));
			lua_rawseti(L, -3, (lua_Integer)lua_rawlen(L, -3) + 1);
		} else {
			lua_pushstring(L, c->c.absent[i]);
			lua_setfield(L, -2, ft_counter_name(i));
		}
	}
	lua_setiuservalue(L, -3, 2);
	lua_setiuservalue(L, -2, 1);
	return 1;
}

/* c:read([t]) -> t: every counting event's total since ft.counters(),
 * as integers. Given a table that already holds the keys, it allocates
 * nothing, so a bracket of reads counts the pass alone. */
static int l_read(lua_State *L)
{
	ft_check_method_nargs(L, 2);
	struct counters *c = check_counters(L);
	if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2))
		return luaL_error(L, "bad argument #1 to 'read' (table expected, got %s)",
		                  luaL_typename(L, 2)); /* #1 as the user counts */
	int64_t v[FT_COUNTERS];
	int err = ft_counters_read(&c->c, v); /* first, before any allocation */
	if (err)
		return ft_error_errno(L, err, "reading the perf counters failed");
	if (lua_isnoneornil(L, 2)) {
		lua_settop(L, 1);
		lua_createtable(L, 0, FT_COUNTERS);
	}
	for (int i = 0; i < FT_COUNTERS; i++) {
		if (v[i] < 0)
			continue;
		lua_pushinteger(L, v[i]);
		lua_setfield(L, 2, ft_counter_name(i));
	}
	lua_settop(L, 2);
	return 1;
}

static int l_close(lua_State *L)
{
	struct counters *c = luaL_checkudata(L, 1, COUNTERS_META);
	if (c->open)
		ft_counters_close(&c->c);
	c->open = false;
	return 0;
}

static int l_close_method(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	return l_close(L);
}

static const luaL_Reg methods[] = {
	{ "read", l_read },
	{ "close", l_close_method },
	{ NULL, NULL }
};

/* the fields events, absent, kernel_excluded, closed */
static int l_fields(lua_State *L)
{
	struct counters *c = luaL_checkudata(L, 1, COUNTERS_META);
	const char *key = lua_tostring(L, 2);
	if (strcmp(key, "events") == 0)
		lua_getiuservalue(L, 1, 1);
	else if (strcmp(key, "absent") == 0)
		lua_getiuservalue(L, 1, 2);
	else if (strcmp(key, "kernel_excluded") == 0)
		lua_pushboolean(L, c->c.kernel_excluded);
	else if (strcmp(key, "closed") == 0)
		lua_pushboolean(L, !c->open);
	else
		return 0;
	return 1;
}

static int l_tostring(lua_State *L)
{
	struct counters *c = luaL_checkudata(L, 1, COUNTERS_META);
	lua_pushstring(L, c->open ? "ft.counters" : "ft.counters (closed)");
	return 1;
}

void ft_open_counters(lua_State *L)
{
	ft_new_resource_meta(L, COUNTERS_META, l_close, l_tostring, methods, l_fields);
	lua_pushcfunction(L, l_counters);
	lua_setfield(L, -2, "counters");
}
