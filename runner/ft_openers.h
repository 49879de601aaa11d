/* The openers of the ft module's groups: each adds its functions to the
 * ft table on top of the stack. ft.c opens them all for the main state,
 * task.c those a task needs. */
#ifndef FT_RUNNER_OPENERS_H
#define FT_RUNNER_OPENERS_H

#include <lua.h>

void ft_open_buffer(lua_State *L);
void ft_open_memfd(lua_State *L);
void ft_open_samples(lua_State *L);
void ft_open_system(lua_State *L);
void ft_open_timer(lua_State *L);
void ft_open_files(lua_State *L);
void ft_open_parallel(lua_State *L);
void ft_open_tasks(lua_State *L);
void ft_open_hugepages(lua_State *L);
void ft_open_counters(lua_State *L);
void ft_open_profile(lua_State *L);
void ft_open_trace(lua_State *L);
void ft_open_reporting(lua_State *L);
void ft_open_floor(lua_State *L);

#endif
