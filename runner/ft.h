/* The ft module: one file per group of bindings, each the only one that
 * talks to the Lua API for its group. */
#ifndef FT_RUNNER_FT_H
#define FT_RUNNER_FT_H

#include <lua.h>

#define FT_VERSION "0.1.0"

int luaopen_ft(lua_State *L);

/* Each adds its functions to the ft table on top of the stack. */
void ft_open_buffer(lua_State *L);
void ft_open_samples(lua_State *L);
void ft_open_system(lua_State *L);
void ft_open_parallel(lua_State *L);
void ft_open_hugepages(lua_State *L);
void ft_open_counters(lua_State *L);
void ft_open_profile(lua_State *L);

/* FTRUN_PROC_SYS, a directory that stands in for /proc/sys/kernel when
 * perf's settings are read (tests give it fake values), or NULL. */
const char *ft_proc_sys(void);

/* The per-page timer of this state, calibrated on first use. */
struct ft_timer;
const struct ft_timer *ft_timer(lua_State *L);

/* Shared argument checks, in the spirit of luaposix. */
void ft_check_nargs(lua_State *L, int max);
/* max counts self; the message does not. */
void ft_check_method_nargs(lua_State *L, int max);
struct ft_samples *ft_check_samples(lua_State *L, int arg);
struct ft_buffer *ft_check_buffer(lua_State *L, int arg);
/* luaL_checkoption that also rejects an embedded NUL. */
int ft_check_option(lua_State *L, int arg, const char *const names[]);
/* A refusal by the kernel is a value (luaL_fileresult): pushes nil,
 * "what failed: strerror(err)", err and returns 3. */
int ft_fail_errno(lua_State *L, int err, const char *fmt, ...);
/* Raises "what failed: strerror(err)" (errno's text). */
int ft_error_errno(lua_State *L, int err, const char *fmt, ...);

#endif
