/* The clock, the counters and the machine: ft.now_ns, ft.clock,
 * ft.timed_ns, ft.clock_estimate, ft.rusage, ft.faults, ft.meminfo,
 * ft.vmstat, ft.machine, ft.page_size, ft.sleep, ft.sink, ft.interrupted. */
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
#include "../core/interrupt.h"
#include "../core/machine.h"
#include "../core/sink.h"
#include "ft_aux.h"
#include "ft_openers.h"
#include "ft_timer.h"

static int l_now_ns(lua_State *L)
{
	ft_check_nargs(L, 0);
	lua_pushinteger(L, ft_now_ns());
	return 1;
}

static void push_probe(lua_State *L, struct ft_clock_probe p)
{
	lua_createtable(L, 0, 6);
	ft_set_integer(L, "tick_ns", p.tick_ns);
	ft_set_number(L, "read_ns", p.read_ns);
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
	ft_set_string(L, "source", "clock_gettime(CLOCK_MONOTONIC)");
	ft_set_string(L, "clocksource", m.clocksource);
	push_probe(L, timed);
	ft_set_integer(L, "step_ns", timed.step_ns);
	if (timer->kind == FT_TIMER_TSC) {
		ft_set_string(L, "source", "rdtscp");
	} else {
		ft_set_string(L, "source", "clock_gettime(CLOCK_MONOTONIC)");
		ft_set_string(L, "fallback", timer->fallback);
	}
	lua_setfield(L, -2, "timed");
	lua_createtable(L, 0, 6);
	ft_set_boolean(L, "invariant", timer->invariant);
	ft_set_boolean(L, "rdtscp", timer->rdtscp);
	ft_set_boolean(L, "used", timer->kind == FT_TIMER_TSC);
	if (timer->hz > 0) {
		ft_set_integer(L, "hz", timer->hz);
		ft_set_number(L, "ghz", (double)timer->hz / 1e9);
		ft_set_integer(L, "calibrated_over_ns", timer->calibrated_over_ns);
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

/* ft.clock_estimate(["measured"]) -> GHz, "measured" | "CLOCK_GHZ".
 * CLOCK_GHZ=measured asks for the estimate, as the scripts' knob takes it;
 * "measured" measures whatever CLOCK_GHZ says (to check a given rate). */
static int l_clock_estimate(lua_State *L)
{
	ft_check_nargs(L, 1);
	const char *want = luaL_optstring(L, 1, "");
	luaL_argcheck(L, !*want || strcmp(want, "measured") == 0, 1, "expected \"measured\" or nothing");
	const char *env = *want ? NULL : getenv("CLOCK_GHZ");
	if (env && *env && strcmp(env, "measured") != 0) {
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
	ft_set_integer(L, "minflt", ru.minflt);
	ft_set_integer(L, "majflt", ru.majflt);
	ft_set_integer(L, "utime_ns", ru.utime_ns);
	ft_set_integer(L, "stime_ns", ru.stime_ns);
	ft_set_integer(L, "maxrss_kb", ru.maxrss_kb);
	return 1;
}

static void set_counter(const char *key, int64_t value, void *ctx)
{
	ft_set_integer(ctx, key, value);
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
	lua_createtable(L, 0, 20);
	ft_set_string(L, "cpu", m.cpu_model);
	ft_set_number(L, "cpu_mhz", m.cpu_mhz);
	ft_set_string(L, "kernel", m.kernel);
	ft_set_integer(L, "page_size", (lua_Integer)m.page_size);
	ft_set_string(L, "thp_enabled", m.thp_enabled);
	ft_set_string(L, "thp_defrag", m.thp_defrag);
	ft_set_integer(L, "thp_pmd_size", (lua_Integer)m.thp_pmd_size);
	ft_set_string(L, "clocksource", m.clocksource);
	struct ft_machine_kind k;
	ft_machine_read_kind(&k);
	ft_set_string(L, "hypervisor", k.hypervisor);
	ft_set_string(L, "hypervisor_source", k.hypervisor_source);
	ft_set_string(L, "cpuid_hypervisor", k.cpuid[0] ? k.cpuid : "none");
	if (k.shadow_page_tables >= 0)
		ft_set_boolean(L, "shadow_page_tables", k.shadow_page_tables);
	ft_set_boolean(L, "zero_page", k.zero_page);
	ft_set_string(L, "zero_page_why", k.zero_page_why);
	ft_set_boolean(L, "rdtscp", k.rdtscp);
	const struct ft_timer *timer = ft_timer_chosen(L);
	ft_set_string(L, "timer", timer->kind == FT_TIMER_TSC ? "rdtscp" : "clock_gettime(CLOCK_MONOTONIC)");
	if (timer->kind != FT_TIMER_TSC)
		ft_set_string(L, "timer_why", timer->fallback);
	ft_set_integer(L, "cpus", m.cpus_online);
	ft_set_integer(L, "numa_nodes", m.numa_nodes);
	ft_set_string(L, "free_page_reporting", m.free_page_reporting < 0 ? "no balloon"
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

/* ft.stderr_line(open): whether stderr now holds a line without its
 * newline, which the runner ends before it writes there or dies of a
 * signal */
static int l_stderr_line(lua_State *L)
{
	ft_check_nargs(L, 1);
	luaL_checktype(L, 1, LUA_TBOOLEAN);
	ft_stderr_line_open = lua_toboolean(L, 1);
	return 0;
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
		{ "stderr_line", l_stderr_line },
		{ NULL, NULL }
	};
	luaL_setfuncs(L, functions, 0);
}
