/* The guest's free page reporting module: ft.page_reporting,
 * ft.reported_kib, ft.set_page_reporting. A kernel without the module is a
 * refusal (nil, message naming the file, ENOENT); a wrong name is an error. */
#include <errno.h>

#include <lauxlib.h>

#include "../core/reporting.h"
#include "../core/restore.h"
#include "ft_aux.h"
#include "ft_openers.h"

static int fail_file(lua_State *L, int err, const char *name)
{
	char path[FT_SETTING_PATH];
	ft_reporting_file(path, sizeof path, name);
	return ft_fail_errno(L, err, "cannot read %s", path);
}

/* ft.page_reporting() -> {page_reporting_order = "9", min_free_ms = "0",
 * ..., reported_kib = 1407288, passes = 43, walked = 1306}: the
 * parameters as the files say them, the counters as integers */
static int l_page_reporting(lua_State *L)
{
	ft_check_nargs(L, 0);
	char value[FT_SETTING_VALUE];
	lua_createtable(L, 0, 8);
	for (int i = 0; ft_reporting_params[i]; i++) {
		int err = ft_reporting_read(ft_reporting_params[i], value, sizeof value);
		if (err)
			return fail_file(L, err, ft_reporting_params[i]);
		ft_set_string(L, ft_reporting_params[i], value);
	}
	for (int i = 0; ft_reporting_counters[i]; i++) {
		int err = ft_reporting_read(ft_reporting_counters[i], value, sizeof value);
		if (err)
			return fail_file(L, err, ft_reporting_counters[i]);
		lua_pushstring(L, value);
		lua_Integer n;
		if (!lua_stringtonumber(L, value) || !lua_isinteger(L, -1))
			return fail_file(L, EINVAL, ft_reporting_counters[i]);
		n = lua_tointeger(L, -1);
		lua_pop(L, 2);
		ft_set_integer(L, ft_reporting_counters[i], n);
	}
	return 1;
}

/* ft.reported_kib() -> KiB handed back to the host since boot: one small
 * read, for the bracket around a pass */
static int l_reported_kib(lua_State *L)
{
	ft_check_nargs(L, 0);
	int64_t kib;
	int err = ft_reporting_kib(&kib);
	if (err)
		return fail_file(L, err, "reported_kib");
	lua_pushinteger(L, (lua_Integer)kib);
	return 1;
}

/* ft.set_page_reporting(name, value) -> previous value: through the
 * settings lock and journal, restored at the run's end */
static int l_set_page_reporting(lua_State *L)
{
	ft_check_nargs(L, 2);
	const char *name = ft_reporting_params[ft_check_option(L, 1, ft_reporting_params)];
	const char *value = luaL_checkstring(L, 2);
	char before[FT_SETTING_VALUE];
	int err = ft_reporting_set(name, value, before, sizeof before);
	if (err) {
		char path[FT_SETTING_PATH];
		ft_reporting_file(path, sizeof path, name);
		if (ft_setting_lock_problem())
			return ft_fail(L, err, "cannot set %s to %s: cannot take the settings lock: %s", path, value,
			               ft_setting_lock_problem());
		return ft_fail_errno(L, err, "cannot set %s to %s", path, value);
	}
	lua_pushstring(L, before);
	return 1;
}

void ft_open_reporting(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "page_reporting", l_page_reporting },
		{ "reported_kib", l_reported_kib },
		{ "set_page_reporting", l_set_page_reporting },
		{ NULL, NULL }
	};
	luaL_setfuncs(L, functions, 0);
}
