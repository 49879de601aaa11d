/* The per-page timer, opened with the main state's ft (ft_open_timer) or
 * taken from the starter in a task's state (ft_timer_take_copy). */
#include "ft_timer.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "../core/clock.h"
#include "ft_openers.h"

#define TIMER_KEY "ft.timer"

/* FTRUN_TIMER: unset, "tsc" (the default) or "clock_gettime". */
static bool timer_env(const char **bad)
{
	const char *env = getenv("FTRUN_TIMER");
	*bad = env && *env && strcmp(env, "clock_gettime") != 0 && strcmp(env, "tsc") != 0
	       ? env : NULL;
	return env && strcmp(env, "clock_gettime") == 0;
}

static struct ft_timer *new_timer(lua_State *L)
{
	struct ft_timer *t = lua_newuserdatauv(L, sizeof *t, 0);
	lua_setfield(L, LUA_REGISTRYINDEX, TIMER_KEY);
	return t;
}

/* The timer lives in the registry for the life of the state. Its
 * calibration starts when the module opens and ends on first use, at
 * least 100 ms later: by then it rarely has to wait, and finishing it
 * reads no file and allocates nothing, so a bracket of ft.faults() around
 * the first touch_timed counts the pass alone. */
void ft_open_timer(lua_State *L)
{
	const char *bad;
	ft_timer_start(new_timer(L), "/proc/cpuinfo", timer_env(&bad));
}

/* A task's state takes its starter's timer, calibrated there (outside any
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
	if (lua_type(L, idx) != LUA_TSTRING || len != sizeof(struct ft_timer))
		luaL_error(L, "a task's timer copy is %d bytes, expected %d", (int)len,
		           (int)sizeof(struct ft_timer));
	memcpy(new_timer(L), bytes, len);
}

const struct ft_timer *ft_timer_chosen(lua_State *L)
{
	lua_getfield(L, LUA_REGISTRYINDEX, TIMER_KEY);
	const struct ft_timer *t = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return t;
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
