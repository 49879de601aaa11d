/* The floor's measurements (core/floor.h): ft.zero_blocks, ft.minor_faults,
 * ft.syscalls. A CPU without the instruction, or a kernel refusing the
 * mapping or the file, is a refusal (nil, message, errno); a bad argument
 * is an error. */
#include <lauxlib.h>

#include <errno.h>
#include <stdint.h>

#include "../core/floor.h"
#include "../core/interrupt.h"
#include "ft_aux.h"
#include "ft_openers.h"

/* 2^24 operations: 64 GiB of cold region, or seconds of warm zeroing,
 * faults or system calls; more is a mistake, not a measurement. */
#define MAX_COUNT ((lua_Integer)1 << 24)

static size_t check_count(lua_State *L, int arg, const char *what)
{
	lua_Integer n = ft_check_positive(L, arg, what);
	luaL_argcheck(L, n <= MAX_COUNT, arg, lua_pushfstring(L, "%s, at most %I, got %I", what, MAX_COUNT, n));
	return (size_t)n;
}

/* ft.zero_blocks(method, "cold" | "warm", count) -> ns: count blocks of
 * 4 KiB zeroed with method ("rep_stosb", "clzero", "movnti"), the timed
 * loop's wall time; nil, why, ENOTSUP when this CPU lacks the instruction */
static int l_zero_blocks(lua_State *L)
{
	static const char *const wheres[] = { "cold", "warm", NULL };
	ft_check_nargs(L, 3);
	enum ft_zero_method method = (enum ft_zero_method)ft_check_option(L, 1, ft_zero_method_names);
	int cold = ft_check_option(L, 2, wheres) == 0;
	size_t count = check_count(L, 3, "count must be a positive number of 4 KiB blocks");
	const char *why;
	int err = ft_zero_available(method, &why);
	if (err)
		return ft_fail(L, err, "%s: not available: %s", ft_zero_method_names[method], why);
	int64_t ns = 0;
	err = ft_zero_blocks(method, cold, count, &ns);
	if (err == EINTR && ft_should_stop())
		return ft_stopped_error(L);
	if (err)
		return ft_fail_errno(L, err, "zeroing %d blocks of 4 KiB (%s) failed", (int)count,
			ft_zero_method_names[method]);
	lua_pushinteger(L, (lua_Integer)ns);
	return 1;
}

/* ft.minor_faults(kind, pages) -> {ns =, faults =, pages =, resident =}:
 * one access to each page of a fresh mapping whose faults neither allocate
 * nor zero (kind: "zero_page", "shmem_write", "shmem_read"); faults: the
 * thread's minor faults around the loop; resident: the process's resident
 * pages' growth over it (absent where /proc/self/statm cannot be read) */
static int l_minor_faults(lua_State *L)
{
	ft_check_nargs(L, 2);
	enum ft_minor_kind kind = (enum ft_minor_kind)ft_check_option(L, 1, ft_minor_kind_names);
	size_t pages = check_count(L, 2, "pages must be a positive number of pages");
	int64_t ns = 0, faults = 0, resident = INT64_MIN;
	int err = ft_minor_faults(kind, pages, &ns, &faults, &resident);
	if (err == EINTR && ft_should_stop())
		return ft_stopped_error(L);
	if (err)
		return ft_fail_errno(L, err, "%s faults over %d pages failed", ft_minor_kind_names[kind], (int)pages);
	lua_createtable(L, 0, 4);
	ft_set_integer(L, "ns", (lua_Integer)ns);
	ft_set_integer(L, "faults", (lua_Integer)faults);
	ft_set_integer(L, "pages", (lua_Integer)pages);
	if (resident != INT64_MIN) /* else /proc/self/statm could not be read */
		ft_set_integer(L, "resident", (lua_Integer)resident);
	return 1;
}

/* ft.syscalls(count) -> ns: count getppid round trips, timed */
static int l_syscalls(lua_State *L)
{
	ft_check_nargs(L, 1);
	size_t count = check_count(L, 1, "count must be a positive number of system calls");
	int64_t ns = 0;
	int err = ft_syscalls(count, &ns);
	if (err == EINTR && ft_should_stop())
		return ft_stopped_error(L);
	if (err)
		return ft_fail_errno(L, err, "%d system calls failed", (int)count);
	lua_pushinteger(L, (lua_Integer)ns);
	return 1;
}

void ft_open_floor(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "zero_blocks", l_zero_blocks },
		{ "minor_faults", l_minor_faults },
		{ "syscalls", l_syscalls },
		{ NULL, NULL }
	};
	luaL_setfuncs(L, functions, 0);
}
