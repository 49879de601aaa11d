/* ft.parallel(kernel, target, opts): one fixed C kernel on N threads, no
 * Lua on them (ft.tasks runs Lua on every task; this stays for the kernels,
 * whose threads start without a Lua state to make). */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "../core/buffer.h"
#include "../core/parallel.h"
#include "../core/tasks.h"
#include "ft.h"

enum { MAX_THREADS = 256 };

static const char *const kernel_names[] = { "touch", "fill", "read", NULL };

static lua_Integer opt_integer(lua_State *L, int opts, const char *key, lua_Integer dflt)
{
	lua_getfield(L, opts, key);
	lua_Integer v = dflt;
	if (!lua_isnil(L, -1)) {
		if (!lua_isinteger(L, -1))
			return luaL_error(L, "ft.parallel option %s must be an integer, got %s",
			                  key, luaL_typename(L, -1));
		v = lua_tointeger(L, -1);
	}
	lua_pop(L, 1);
	return v;
}

static void check_option_names(lua_State *L, int opts)
{
	static const char *const known[] = { "threads", "value", "k", "pin", NULL };
	for (lua_pushnil(L); lua_next(L, opts); lua_pop(L, 1)) {
		const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
		int found = 0;
		for (int i = 0; known[i]; i++)
			found |= strcmp(key, known[i]) == 0;
		if (!found)
			luaL_error(L, "unknown ft.parallel option '%s' (expected threads, value, k or pin)", key);
	}
}

static void reject_option(lua_State *L, int opts, const char *key, int unused, const char *why)
{
	if (unused && lua_getfield(L, opts, key) != LUA_TNIL)
		luaL_error(L, "ft.parallel option %s is not used %s", key, why);
	if (unused)
		lua_pop(L, 1);
}

/* Splits b into n page-aligned slices; the last takes the remainder. */
static void slice(struct ft_thread_job *jobs, int n, const struct ft_buffer *b)
{
	size_t per = b->pages / (size_t)n;
	for (int i = 0; i < n; i++) {
		size_t first = (size_t)i * per;
		size_t pages = i == n - 1 ? b->pages - first : per;
		struct ft_buffer *s = &jobs[i].slice;
		*s = *b;
		s->addr = b->addr + first * b->page_size;
		s->pages = pages;
		s->bytes = i == n - 1 ? b->bytes - first * b->page_size : pages * b->page_size;
		jobs[i].first_word = first * b->page_size / sizeof(uint64_t);
	}
}

/* ft.parallel(kernel, buffer | {buffers}, {threads=, value=, k=, pin=})
 *   -> {wall_ns = , threads = {{ns=, faults=, pages=, cpu=}, ...}}
 * One buffer is cut into `threads` slices; a list gives each thread one. */
static int l_parallel(lua_State *L)
{
	ft_check_nargs(L, 3);
	enum ft_kernel kernel = (enum ft_kernel)ft_check_option(L, 1, kernel_names);
	int opts = 3;
	if (lua_isnoneornil(L, opts)) {
		lua_settop(L, 2);
		lua_newtable(L);
	}
	luaL_checktype(L, opts, LUA_TTABLE);
	check_option_names(L, opts);
	int list = lua_type(L, 2) == LUA_TTABLE;
	/* An option the call would ignore is a mistake in the script. */
	reject_option(L, opts, "threads", list, "with a list of buffers (one thread each)");
	reject_option(L, opts, "value", kernel == FT_KERNEL_FILL, "for fill (it takes k)");
	reject_option(L, opts, "k", kernel != FT_KERNEL_FILL, "for touch and read (only fill takes k)");
	lua_Integer count = list ? luaL_len(L, 2) : opt_integer(L, opts, "threads", 1);
	if (count < 1 || count > MAX_THREADS)
		return luaL_error(L, "ft.parallel needs 1 to %d threads, got %I", MAX_THREADS, count);
	int n = (int)count;
	lua_Integer value = opt_integer(L, opts, "value", 1);
	lua_Integer k = opt_integer(L, opts, "k", 1);
	if (kernel == FT_KERNEL_TOUCH && (value < 0 || value > 255))
		return luaL_error(L, "ft.parallel option value must be a byte, 0 to 255");
	lua_getfield(L, opts, "pin");
	if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
		return luaL_error(L, "ft.parallel option pin must be a boolean, got %s",
		                  luaL_typename(L, -1));
	int pin = lua_toboolean(L, -1);
	lua_pop(L, 1);

	struct ft_thread_job *jobs = lua_newuserdatauv(L, (size_t)n * sizeof *jobs, 0);
	memset(jobs, 0, (size_t)n * sizeof *jobs);
	if (list) {
		for (int i = 0; i < n; i++) {
			lua_rawgeti(L, 2, i + 1);
			jobs[i].slice = *ft_check_buffer(L, -1);
			lua_pop(L, 1);
		}
	} else {
		struct ft_buffer *b = ft_check_buffer(L, 2);
		if ((size_t)n > b->pages)
			return luaL_error(L, "ft.parallel: %d threads for %I pages", n, (lua_Integer)b->pages);
		slice(jobs, n, b);
	}
	for (int i = 0; i < n; i++)
		jobs[i].cpu = -1;
	if (pin) {
		/* The CPUs this process may run on (taskset), not 0..N-1. */
		int cpus[CPU_SETSIZE], count_allowed = ft_allowed_cpus(cpus, CPU_SETSIZE);
		if (count_allowed < 0)
			return ft_error_errno(L, -count_allowed, "ft.parallel: sched_getaffinity failed");
		for (int i = 0; i < n && count_allowed > 0; i++)
			jobs[i].cpu = cpus[i % count_allowed];
	}

	int64_t wall;
	uint64_t arg = kernel == FT_KERNEL_FILL ? (uint64_t)k : (uint64_t)value;
	int err = ft_parallel_run(jobs, n, kernel, arg, &wall);
	if (err)
		return ft_error_errno(L, err, "ft.parallel could not start %d threads", n);
	for (int i = 0; i < n; i++)
		if (jobs[i].interrupted)
			return luaL_error(L, "interrupted");
	for (int i = 0; i < n; i++)
		if (jobs[i].err)
			return ft_error_errno(L, jobs[i].err, "ft.parallel could not pin thread %d to CPU %d",
			                      i + 1, jobs[i].cpu);

	lua_createtable(L, 0, 2);
	lua_pushinteger(L, wall);
	lua_setfield(L, -2, "wall_ns");
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_createtable(L, 0, 4);
		lua_pushinteger(L, jobs[i].ns);
		lua_setfield(L, -2, "ns");
		lua_pushinteger(L, jobs[i].faults);
		lua_setfield(L, -2, "faults");
		lua_pushinteger(L, (lua_Integer)jobs[i].slice.pages);
		lua_setfield(L, -2, "pages");
		lua_pushinteger(L, jobs[i].cpu);
		lua_setfield(L, -2, "cpu");
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "threads");
	return 1;
}

void ft_open_parallel(lua_State *L)
{
	lua_pushcfunction(L, l_parallel);
	lua_setfield(L, -2, "parallel");
}
