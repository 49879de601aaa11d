/* The per-page timer of a state (the calibrated TSC, or CLOCK_MONOTONIC),
 * kept in its registry. */
#ifndef FT_RUNNER_TIMER_H
#define FT_RUNNER_TIMER_H

#include <lua.h>

struct ft_timer;
/* This state's timer, its calibration completed on first use. */
const struct ft_timer *ft_timer(lua_State *L);
/* The timer chosen, its calibration not waited for (kind and fallback). */
const struct ft_timer *ft_timer_chosen(lua_State *L);
/* The state's timer as a string, and a task's state made with such a
 * copy instead of a calibration of its own. */
void ft_timer_push_copy(lua_State *L);
void ft_timer_take_copy(lua_State *L, int idx);

#endif
