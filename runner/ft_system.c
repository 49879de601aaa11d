/* The clock, the counters and the machine: ft.now_ns, ft.clock,
 * ft.timed_ns, ft.clock_estimate, ft.rusage, ft.faults, ft.meminfo,
 * ft.vmstat, ft.machine, ft.page_size, ft.sink. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "../core/buffer.h"
#include "../core/clock.h"
#include "../core/counters.h"
#include "../core/files.h"
#include "../core/interrupt.h"
#include "../core/machine.h"
#include "../core/sink.h"
#include "ft.h"

static int l_now_ns(lua_State *L)
{
	ft_check_nargs(L, 0);
	lua_pushinteger(L, ft_now_ns());
	return 1;
}

static void set_integer(lua_State *L, const char *key, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, key);
}

static void set_number(lua_State *L, const char *key, lua_Number v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, key);
}

static void set_string(lua_State *L, const char *key, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, key);
}

static void set_boolean(lua_State *L, const char *key, bool v)
{
	lua_pushboolean(L, v);
	lua_setfield(L, -2, key);
}

#define TIMER_KEY "ft.timer"

/* FTRUN_TIMER: unset, "tsc" (the default) or "clock_gettime". */
static bool timer_env(const char **bad)
{
	const char *env = getenv("FTRUN_TIMER");
	*bad = env && *env && strcmp(env, "clock_gettime") != 0 && strcmp(env, "tsc") != 0
	       ? env : NULL;
	return env && strcmp(env, "clock_gettime") == 0;
}

/* The per-page timer lives in the registry for the life of the state. Its
 * calibration starts when the module opens and ends on first use, at
 * least 100 ms later: by then it rarely has to wait, and finishing it
 * reads no file and allocates nothing, so a bracket of ft.faults() around
 * the first touch_timed counts the pass alone. */
static void open_timer(lua_State *L)
{
	const char *bad;
	struct ft_timer *t = lua_newuserdatauv(L, sizeof *t, 0);
	ft_timer_start(t, "/proc/cpuinfo", timer_env(&bad));
	lua_setfield(L, LUA_REGISTRYINDEX, TIMER_KEY);
}

/* A task's state takes its starter's timer, calibrated here (outside any
 * window; at most once per state, and only the part of 100 ms not yet
 * gone since the module opened), so the task's first touch_timed does not
 * wait for its own calibration inside its window. The TSC is invariant:
 * the calibration holds in another process too. */
void ft_timer_push_copy(lua_State *L)
{
	const struct ft_timer *t = ft_timer(L);
	lua_pushlstring(L, (const char *)t, sizeof *t);
}

void ft_timer_take_copy(lua_State *L, int idx)
{
	size_t len;
	const char *bytes = lua_tolstring(L, idx, &len);
	lua_getfield(L, LUA_REGISTRYINDEX, TIMER_KEY);
	struct ft_timer *t = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (t && bytes && lua_type(L, idx) == LUA_TSTRING && len == sizeof *t)
		memcpy(t, bytes, sizeof *t);
}

const struct ft_timer *ft_timer(lua_State *L)
{
	const char *bad;
	timer_env(&bad);
	if (bad)
		luaL_error(L, "FTRUN_TIMER=%s: expected clock_gettime or tsc", bad);
	lua_getfield(L, LUA_REGISTRYINDEX, TIMER_KEY);
	struct ft_timer *t = lua_touserdata(L, -1);
	lua_pop(L, 1); /* the registry keeps it alive */
	ft_timer_calibrate(t, 100000000);
	return t;
}

static void push_probe(lua_State *L, struct ft_clock_probe p)
{
	lua_createtable(L, 0, 6);
	set_integer(L, "tick_ns", p.tick_ns);
	set_number(L, "read_ns", p.read_ns);
}

/* ft.clock() -> {source, clocksource, tick_ns, read_ns,
 *   timed = {source, tick_ns, read_ns, step_ns [, fallback]},
 *   tsc = {invariant, rdtscp, used [, hz, ghz, calibrated_over_ns]}} */
static int l_clock(lua_State *L)
{
	ft_check_nargs(L, 0);
	const struct ft_timer *timer = ft_timer(L);
	struct ft_machine m;
	ft_machine_read(&m);
	struct ft_clock_probe window = ft_clock_probe(), timed = ft_clock_probe_timed(timer);
	push_probe(L, window);
	set_string(L, "source", "clock_gettime(CLOCK_MONOTONIC)");
	set_string(L, "clocksource", m.clocksource);
	push_probe(L, timed);
	set_integer(L, "step_ns", timed.step_ns);
	if (timer->kind == FT_TIMER_TSC) {
		set_string(L, "source", "rdtscp");
	} else {
		set_string(L, "source", "clock_gettime(CLOCK_MONOTONIC)");
		set_string(L, "fallback", timer->fallback);
	}
	lua_setfield(L, -2, "timed");
	lua_createtable(L, 0, 6);
	set_boolean(L, "invariant", timer->invariant);
	set_boolean(L, "rdtscp", timer->rdtscp);
	set_boolean(L, "used", timer->kind == FT_TIMER_TSC);
	if (timer->hz > 0) {
		set_integer(L, "hz", timer->hz);
		set_number(L, "ghz", (double)timer->hz / 1e9);
		set_integer(L, "calibrated_over_ns", timer->calibrated_over_ns);
	}
	lua_setfield(L, -2, "tsc");
	return 1;
}

/* ft.timed_ns() -> the per-page timer's reading in ns (the calibrated TSC,
 * or CLOCK_MONOTONIC); its origin is arbitrary, its differences are ns. */
static int l_timed_ns(lua_State *L)
{
	ft_check_nargs(L, 0);
	lua_pushinteger(L, ft_timer_now_ns(ft_timer(L)));
	return 1;
}

/* ft.clock_estimate() -> GHz, "measured" | "CLOCK_GHZ" */
static int l_clock_estimate(lua_State *L)
{
	ft_check_nargs(L, 0);
	const char *env = getenv("CLOCK_GHZ");
	if (env && *env) {
		char *end;
		double ghz = strtod(env, &end);
		if (*end || !(ghz > 0 && ghz < 100))
			return luaL_error(L, "CLOCK_GHZ=%s: expected a clock rate in GHz, "
			                  "a number above 0 and below 100", env);
		lua_pushnumber(L, ghz);
		lua_pushliteral(L, "CLOCK_GHZ");
		return 2;
	}
	lua_pushnumber(L, ft_clock_estimate_ghz());
	lua_pushliteral(L, "measured");
	return 2;
}

/* ft.faults() -> minor + major faults so far; allocates nothing. */
static int l_faults(lua_State *L)
{
	ft_check_nargs(L, 0);
	lua_pushinteger(L, ft_faults());
	return 1;
}

static int l_rusage(lua_State *L)
{
	ft_check_nargs(L, 0);
	struct ft_rusage ru;
	int err = ft_rusage(&ru);
	if (err)
		return ft_error_errno(L, err, "getrusage failed");
	lua_createtable(L, 0, 5);
	set_integer(L, "minflt", ru.minflt);
	set_integer(L, "majflt", ru.majflt);
	set_integer(L, "utime_ns", ru.utime_ns);
	set_integer(L, "stime_ns", ru.stime_ns);
	set_integer(L, "maxrss_kb", ru.maxrss_kb);
	return 1;
}

static void set_counter(const char *key, int64_t value, void *ctx)
{
	set_integer(ctx, key, value);
}

static int push_counters(lua_State *L, const char *path)
{
	ft_check_nargs(L, 0);
	lua_newtable(L);
	int err = ft_read_counters(path, set_counter, L);
	if (err)
		return ft_error_errno(L, err, "cannot read %s", path);
	return 1;
}

/* ft.meminfo() -> /proc/meminfo, values as the kernel gives them (kB, or pages for HugePages_*) */
static int l_meminfo(lua_State *L)
{
	return push_counters(L, "/proc/meminfo");
}

/* ft.vmstat() -> /proc/vmstat */
static int l_vmstat(lua_State *L)
{
	return push_counters(L, "/proc/vmstat");
}

static int l_machine(lua_State *L)
{
	ft_check_nargs(L, 0);
	struct ft_machine m;
	ft_machine_read(&m);
	lua_createtable(L, 0, 12);
	set_string(L, "cpu", m.cpu_model);
	set_number(L, "cpu_mhz", m.cpu_mhz);
	set_string(L, "kernel", m.kernel);
	set_integer(L, "page_size", (lua_Integer)m.page_size);
	set_string(L, "thp_enabled", m.thp_enabled);
	set_string(L, "thp_defrag", m.thp_defrag);
	set_integer(L, "thp_pmd_size", (lua_Integer)m.thp_pmd_size);
	set_string(L, "clocksource", m.clocksource);
	set_string(L, "hypervisor", m.hypervisor[0] ? m.hypervisor : "none");
	set_integer(L, "cpus", m.cpus_online);
	set_integer(L, "numa_nodes", m.numa_nodes);
	set_string(L, "free_page_reporting", m.free_page_reporting < 0 ? "no balloon"
	           : m.free_page_reporting ? "on" : "off");
	return 1;
}

/* ft.sleep(seconds): clock_nanosleep, without a shell (a fork would mark
 * the process's pages copy-on-write), in slices of at most 20 ms so that a
 * task whose group stops (its thread does not take SIGINT) ends too. */
static int l_sleep(lua_State *L)
{
	ft_check_nargs(L, 1);
	lua_Number s = luaL_checknumber(L, 1);
	luaL_argcheck(L, s >= 0 && s <= 86400, 1, "seconds must be within 0 to 86400");
	const int64_t slice = 20000000;
	int64_t end = ft_now_ns() + (int64_t)(s * 1e9);
	for (int64_t now = ft_now_ns(); now < end; now = ft_now_ns()) {
		if (ft_should_stop())
			return ft_stopped_error(L);
		int64_t next = end - now < slice ? end : now + slice;
		struct timespec ts = { (time_t)(next / 1000000000), (long)(next % 1000000000) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL); /* EINTR: look again */
	}
	return 0;
}

static int l_page_size(lua_State *L)
{
	ft_check_nargs(L, 0);
	lua_pushinteger(L, (lua_Integer)ft_page_size());
	return 1;
}

/* ft.sink(x) -> x, after passing it through the compiler sink. */
static int l_sink(lua_State *L)
{
	ft_check_nargs(L, 1);
	luaL_checkany(L, 1);
	if (lua_isinteger(L, 1))
		FT_SINK(lua_tointeger(L, 1));
	else
		FT_SINK(lua_topointer(L, 1));
	lua_settop(L, 1);
	return 1;
}

/* ft.interrupted() -> whether SIGINT has been received */
static int l_interrupted(lua_State *L)
{
	ft_check_nargs(L, 0);
	lua_pushboolean(L, ft_interrupted != 0);
	return 1;
}

/* ft.mkdir(path) -> true | nil, message, errno: with its parents */
static int l_mkdir(lua_State *L)
{
	ft_check_nargs(L, 1);
	const char *path = luaL_checkstring(L, 1);
	int err = ft_mkdir_p(path);
	if (err)
		return ft_fail_errno(L, err, "mkdir %s failed", path);
	lua_pushboolean(L, 1);
	return 1;
}

/* ft.symlink(target, linkpath) -> true | nil, message, errno: replaces an
 * existing link atomically */
static int l_symlink(lua_State *L)
{
	ft_check_nargs(L, 2);
	const char *target = luaL_checkstring(L, 1);
	const char *link = luaL_checkstring(L, 2);
	int err = ft_symlink_replace(target, link);
	if (err)
		return ft_fail_errno(L, err, "symlink %s -> %s failed", link, target);
	lua_pushboolean(L, 1);
	return 1;
}

/* ft.temporary(path [, false]): path is a temporary (a plot being drawn),
 * removed if a fatal signal ends the run; false: it no longer is. */
static int l_temporary(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	ft_files_track(path, lua_isnoneornil(L, 2) || lua_toboolean(L, 2));
	return 0;
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
		files[i].path = lua_tostring(L, -2);
		files[i].text = lua_tolstring(L, -1, &files[i].len);
		/* the strings stay alive in the list argument */
		lua_pop(L, 3);
	}
	long long pause_ns = 0;
	const char *env = getenv("FTRUN_TEST_WRITE_PAUSE");
	if (env && *env)
		pause_ns = (long long)(strtod(env, NULL) * 1e9);
	const char *failed = "?";
	int err = ft_write_files(files, (size_t)n, pause_ns, &failed);
	if (err < 0)
		return luaL_error(L, "interrupted");
	if (err)
		return ft_fail_errno(L, err, "writing %s failed", failed);
	lua_pushboolean(L, 1);
	return 1;
}

/* realpath of the directory holding the running executable */
static void push_project_dir(lua_State *L)
{
	char exe[PATH_MAX];
	if (!realpath("/proc/self/exe", exe)) {
		lua_pushnil(L);
		return;
	}
	char *slash = strrchr(exe, '/');
	if (slash && slash != exe)
		*slash = '\0';
	lua_pushstring(L, exe);
}

void ft_open_system(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "now_ns", l_now_ns },
		{ "clock", l_clock },
		{ "timed_ns", l_timed_ns },
		{ "clock_estimate", l_clock_estimate },
		{ "faults", l_faults },
		{ "rusage", l_rusage },
		{ "meminfo", l_meminfo },
		{ "vmstat", l_vmstat },
		{ "machine", l_machine },
		{ "page_size", l_page_size },
		{ "sleep", l_sleep },
		{ "sink", l_sink },
		{ "interrupted", l_interrupted },
		{ "mkdir", l_mkdir },
		{ "symlink", l_symlink },
		{ "write_files", l_write_files },
		{ "temporary", l_temporary },
		{ NULL, NULL }
	};
	luaL_setfuncs(L, functions, 0);
	open_timer(L);
	push_project_dir(L);
	lua_setfield(L, -2, "project_dir");
}
