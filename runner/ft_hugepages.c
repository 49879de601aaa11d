/* Folio sizes, hugetlb pools and the record of changed settings:
 * ft.folio_sizes, ft.folio, ft.set_folio, ft.hugetlb_sizes,
 * ft.hugetlb_pages, ft.set_hugetlb_pages, ft.sysfs_changes,
 * ft.sysfs_restore. What the kernel refuses (no such size, no root) is
 * nil, message naming the file, errno; a wrong argument is an error. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "../core/buffer.h"
#include "../core/hugepages.h"
#include "../core/restore.h"
#include "ft_aux.h"
#include "ft_openers.h"

enum { MAX_KB = 16 << 20 }; /* 16 GiB: beyond any huge page x86 or arm64 offers */

/* kB of a size above the base page: a power of two. */
static size_t check_kb(lua_State *L, int arg)
{
	lua_Integer kb = luaL_checkinteger(L, arg);
	lua_Integer base = (lua_Integer)(ft_page_size() / 1024);
	if (kb <= base || kb > MAX_KB || (kb & (kb - 1)) != 0)
		luaL_argerror(L, arg, lua_pushfstring(L,
			"size in kB must be a power of two above the base page's %I and at most %I, got %I",
			base, (lua_Integer)MAX_KB, kb));
	return (size_t)kb;
}

static void set_counter(const char *key, int64_t value, void *ctx)
{
	ft_set_integer(ctx, key, value);
}

static int fail_folio(lua_State *L, int err, size_t kb, const char *name)
{
	char path[FT_SETTING_PATH];
	ft_folio_file(path, sizeof path, kb, name);
	return ft_fail_errno(L, err, "cannot read %s", path);
}

/* The top-level setting and the PMD size, which "inherit" and pmd refer
 * to; a kernel without them gives "" and 0. */
struct thp_top {
	char enabled[FT_SETTING_VALUE];
	size_t pmd_kb;
};

static void read_top(struct thp_top *top)
{
	char path[FT_SETTING_PATH], value[FT_SETTING_VALUE];
	if (ft_folio_enabled(0, top->enabled, sizeof top->enabled) != 0)
		top->enabled[0] = '\0';
	ft_folio_file(path, sizeof path, 0, "hpage_pmd_size");
	top->pmd_kb = ft_setting_read(path, value, sizeof value) == 0
	            ? (size_t)strtoull(value, NULL, 10) / 1024 : 0;
}

/* Pushes {kb, bytes, enabled, effective, pmd, <every stats counter>} or
 * returns the error, with nothing pushed. */
static int push_folio(lua_State *L, size_t kb, const struct thp_top *top, const char **failed)
{
	char enabled[FT_SETTING_VALUE];
	int err = ft_folio_enabled(kb, enabled, sizeof enabled);
	if (err) {
		*failed = "enabled";
		return err;
	}
	lua_createtable(L, 0, 24);
	ft_set_integer(L, "kb", (lua_Integer)kb);
	ft_set_integer(L, "bytes", (lua_Integer)kb * 1024);
	ft_set_string(L, "enabled", enabled);
	ft_set_string(L, "effective", strcmp(enabled, "inherit") == 0 ? top->enabled : enabled);
	lua_pushboolean(L, kb == top->pmd_kb);
	lua_setfield(L, -2, "pmd");
	if ((err = ft_folio_stats(kb, set_counter, L)) != 0) {
		lua_pop(L, 1);
		*failed = "stats";
	}
	return err;
}

/* ft.folio_sizes() -> {{kb, bytes, enabled, effective, pmd,
 * anon_fault_alloc, anon_fault_fallback, ...}, ...}, ascending */
static int l_folio_sizes(lua_State *L)
{
	ft_check_nargs(L, 0);
	size_t kb[FT_SIZES_MAX], n;
	int err = ft_folio_sizes(kb, &n);
	if (err)
		return ft_fail_errno(L, err, "cannot list %s", FT_THP_DIR);
	struct thp_top top;
	read_top(&top);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		const char *failed;
		if ((err = push_folio(L, kb[i], &top, &failed)) != 0)
			return fail_folio(L, err, kb[i], failed);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* ft.folio(kb) -> one entry of folio_sizes */
static int l_folio(lua_State *L)
{
	ft_check_nargs(L, 1);
	size_t kb = check_kb(L, 1);
	struct thp_top top;
	read_top(&top);
	const char *failed;
	int err = push_folio(L, kb, &top, &failed);
	if (err)
		return fail_folio(L, err, kb, failed);
	return 1;
}

/* ft.set_folio(kb, "never"|"madvise"|"always"|"inherit") -> previous */
static int l_set_folio(lua_State *L)
{
	static const char *const names[] = { "never", "madvise", "always", "inherit", NULL };
	ft_check_nargs(L, 2);
	size_t kb = check_kb(L, 1);
	const char *value = names[ft_check_option(L, 2, names)];
	char before[FT_SETTING_VALUE];
	int err = ft_folio_set(kb, value, before, sizeof before);
	if (err) {
		char path[FT_SETTING_PATH];
		ft_folio_file(path, sizeof path, kb, "enabled");
		if (ft_setting_lock_problem())
			return ft_fail(L, err, "cannot set %s to %s: cannot take the settings lock: %s", path, value,
			               ft_setting_lock_problem());
		return ft_fail_errno(L, err, "cannot set %s to %s", path, value);
	}
	lua_pushstring(L, before);
	return 1;
}

static int fail_hugetlb(lua_State *L, int err, size_t kb, const char *failed)
{
	char path[FT_SETTING_PATH];
	ft_hugetlb_file(path, sizeof path, kb, failed);
	return ft_fail_errno(L, err, "cannot read %s", path);
}

/* {kb, bytes, nr, free, resv, surplus, overcommit} */
static int push_hugetlb(lua_State *L, size_t kb, const char **failed)
{
	struct ft_hugetlb h;
	int err = ft_hugetlb_read(kb, &h, failed);
	if (err)
		return err;
	lua_createtable(L, 0, 7);
	ft_set_integer(L, "kb", (lua_Integer)kb);
	ft_set_integer(L, "bytes", (lua_Integer)kb * 1024);
	ft_set_integer(L, "nr", h.nr);
	ft_set_integer(L, "free", h.free);
	ft_set_integer(L, "resv", h.resv);
	ft_set_integer(L, "surplus", h.surplus);
	ft_set_integer(L, "overcommit", h.overcommit);
	return 0;
}

/* ft.hugetlb_sizes() -> {{kb, bytes, nr, free, resv, surplus, overcommit}, ...} */
static int l_hugetlb_sizes(lua_State *L)
{
	ft_check_nargs(L, 0);
	size_t kb[FT_SIZES_MAX], n;
	int err = ft_hugetlb_sizes(kb, &n);
	if (err)
		return ft_fail_errno(L, err, "cannot list %s", FT_HUGETLB_DIR);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		const char *failed;
		if ((err = push_hugetlb(L, kb[i], &failed)) != 0)
			return fail_hugetlb(L, err, kb[i], failed);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* ft.hugetlb_pages(kb) -> {kb, bytes, nr, free, resv, surplus, overcommit} */
static int l_hugetlb_pages(lua_State *L)
{
	ft_check_nargs(L, 1);
	size_t kb = check_kb(L, 1);
	const char *failed;
	int err = push_hugetlb(L, kb, &failed);
	if (err)
		return fail_hugetlb(L, err, kb, failed);
	return 1;
}

/* ft.set_hugetlb_pages(kb, n) -> previous nr, nr now (the kernel may
 * grant fewer than n) */
static int l_set_hugetlb_pages(lua_State *L)
{
	ft_check_nargs(L, 2);
	size_t kb = check_kb(L, 1);
	lua_Integer n = luaL_checkinteger(L, 2);
	lua_Integer ram_kb = (lua_Integer)sysconf(_SC_PHYS_PAGES) * (lua_Integer)(ft_page_size() / 1024);
	if (n < 0 || n > ram_kb / (lua_Integer)kb)
		return luaL_argerror(L, 2, lua_pushfstring(L,
			"%I pages of %I kB: expected 0 to %I, what the machine's memory holds",
			n, (lua_Integer)kb, ram_kb / (lua_Integer)kb));
	int64_t before;
	int err = ft_hugetlb_set(kb, n, &before);
	if (err) {
		char path[FT_SETTING_PATH];
		ft_hugetlb_file(path, sizeof path, kb, "nr_hugepages");
		if (ft_setting_lock_problem())
			return ft_fail(L, err, "cannot set %s to %I: cannot take the settings lock: %s", path, n,
			               ft_setting_lock_problem());
		return ft_fail_errno(L, err, "cannot set %s to %I", path, n);
	}
	struct ft_hugetlb h;
	const char *failed;
	if ((err = ft_hugetlb_read(kb, &h, &failed)) != 0)
		return fail_hugetlb(L, err, kb, failed);
	lua_pushinteger(L, before);
	lua_pushinteger(L, h.nr);
	return 2;
}

/* ft.sysfs_changes() -> {{path, before, after, restored [, error]}, ...}
 * in the order the files were first changed */
static int l_sysfs_changes(lua_State *L)
{
	ft_check_nargs(L, 0);
	size_t n = ft_settings_count();
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		const struct ft_setting *e = ft_setting_at(i);
		lua_createtable(L, 0, 5);
		ft_set_string(L, "path", e->path);
		ft_set_string(L, "before", e->before);
		ft_set_string(L, "after", e->after);
		lua_pushboolean(L, e->restored);
		lua_setfield(L, -2, "restored");
		if (e->err && !e->restored)
			ft_set_string(L, "error", strerror(e->err));
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* ft.sysfs_restore() -> true | nil, message, errno: what the run's end
 * does, now */
static int l_sysfs_restore(lua_State *L)
{
	ft_check_nargs(L, 0);
	int err = ft_settings_restore();
	if (!err) {
		lua_pushboolean(L, 1);
		return 1;
	}
	for (size_t i = ft_settings_count(); i-- > 0;) {
		const struct ft_setting *e = ft_setting_at(i);
		if (e->restored)
			continue;
		if (e->err == EAGAIN)
			return ft_fail_errno(L, e->err, "%s reads %s after %s was written back",
			                      e->path, e->after, e->before);
		return ft_fail_errno(L, e->err, "cannot restore %s to %s", e->path, e->before);
	}
	return ft_fail_errno(L, err, "restoring the changed settings failed");
}

/* ft.lock_settings(["exclusive"|"shared"]) -> true | nil, message, errno:
 * takes the settings lock (core/restore.h) until the run ends: exclusive,
 * as a first change would, for a run that reads machine-wide counts or
 * pastes into a shared README; shared, for a run that measures under the
 * THP settings without changing them. */
static int l_lock_settings(lua_State *L)
{
	static const char *const modes[] = { "exclusive", "shared", NULL };
	ft_check_nargs(L, 1);
	bool shared = !lua_isnoneornil(L, 1) && ft_check_option(L, 1, modes) == 1;
	int err = shared ? ft_settings_lock_shared() : ft_settings_lock();
	if (err)
		return ft_fail_errno(L, err, "cannot take the settings lock%s", shared ? " shared" : "");
	lua_pushboolean(L, 1);
	return 1;
}

void ft_open_hugepages(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "folio_sizes", l_folio_sizes },
		{ "folio", l_folio },
		{ "set_folio", l_set_folio },
		{ "hugetlb_sizes", l_hugetlb_sizes },
		{ "hugetlb_pages", l_hugetlb_pages },
		{ "set_hugetlb_pages", l_set_hugetlb_pages },
		{ "sysfs_changes", l_sysfs_changes },
		{ "sysfs_restore", l_sysfs_restore },
		{ "lock_settings", l_lock_settings },
		{ NULL, NULL }
	};
	luaL_setfuncs(L, functions, 0);
}
