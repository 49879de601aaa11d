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
#include "ft_aux.h"
#include "ft_lendable.h"
#include "ft_openers.h"

enum { MAX_THREADS = 256 };

static const char *const kernel_names[] = { "touch", "fill", "read", NULL };

enum { THREADS, VALUE, K, PIN };
static const struct ft_opt options[] = {
	[THREADS] = { "threads", FT_OPT_INTEGER, NULL, NULL },
	[VALUE] = { "value", FT_OPT_INTEGER, NULL, NULL },
	[K] = { "k", FT_OPT_INTEGER, NULL, NULL },
	[PIN] = { "pin", FT_OPT_BOOLEAN, NULL, NULL },
	{ NULL, 0, NULL, NULL }
};

/* An option the call would ignore is a mistake in the script. */
static void reject_option(lua_State *L, int opts, int key, bool unused, const char *why)
{
	if (unused && !lua_isnil(L, opts + key))
		luaL_error(L, "ft.parallel option %s is not used %s", options[key].name, why);
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
	int opts = ft_check_opts(L, 3, "ft.parallel", options);
	bool list = lua_type(L, 2) == LUA_TTABLE;
	reject_option(L, opts, THREADS, list, "with a list of buffers (one thread each)");
	reject_option(L, opts, VALUE, kernel == FT_KERNEL_FILL, "for fill (it takes k)");
	reject_option(L, opts, K, kernel != FT_KERNEL_FILL, "for touch and read (only fill takes k)");
	lua_Integer count = list ? luaL_len(L, 2) : luaL_optinteger(L, opts + THREADS, 1);
	if (count < 1 || count > MAX_THREADS)
		return luaL_error(L, "ft.parallel needs 1 to %d threads, got %I", MAX_THREADS, count);
	int n = (int)count;
	lua_Integer value = luaL_optinteger(L, opts + VALUE, 1);
	lua_Integer k = luaL_optinteger(L, opts + K, 1);
	if (kernel == FT_KERNEL_TOUCH && (value < 0 || value > 255))
		return luaL_error(L, "ft.parallel option value must be a byte, 0 to 255, got %I", value);
	bool pin = lua_toboolean(L, opts + PIN);

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
	ft_set_integer(L, "wall_ns", wall);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_createtable(L, 0, 4);
		ft_set_integer(L, "ns", jobs[i].ns);
		ft_set_integer(L, "faults", jobs[i].faults);
		ft_set_integer(L, "pages", (lua_Integer)jobs[i].slice.pages);
		ft_set_integer(L, "cpu", jobs[i].cpu);
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
