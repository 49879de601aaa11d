/* The ft module: one file per group of bindings, each the only one that
 * talks to the Lua API for its group. */
#ifndef FT_RUNNER_FT_H
#define FT_RUNNER_FT_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

#include "../core/buffer.h"
#include "../core/memfd.h"

#define FT_VERSION "0.1.0"

#define FT_BUFFER_META "ft.buffer"
#define FT_MEMFD_META "ft.memfd"

/* The hidden first argument that makes ftrun a task's process:
 * ftrun --task-worker JOBFD RESULTFD CPU (ft_tasks.c). */
#define FT_TASK_WORKER_FLAG "--task-worker"

int luaopen_ft(lua_State *L);

/* Every state's start, the main one's and each task's: the standard
 * libraries, then ft preloaded and set as the global ft. */
void ft_open_libs(lua_State *L);
/* lua.c's message handler: the message with a traceback appended. */
int ft_msghandler(lua_State *L);
/* The process of a task in processes mode (main.c hands over). */
int ft_task_worker(int argc, char **argv);

/* Each adds its functions to the ft table on top of the stack. */
void ft_open_buffer(lua_State *L);
void ft_open_samples(lua_State *L);
void ft_open_system(lua_State *L);
void ft_open_parallel(lua_State *L);
void ft_open_memfd(lua_State *L);
void ft_open_tasks(lua_State *L);
void ft_open_hugepages(lua_State *L);
void ft_open_counters(lua_State *L);
void ft_open_profile(lua_State *L);
void ft_open_trace(lua_State *L);

/* FTRUN_PROC_SYS, a directory that stands in for /proc/sys/kernel when
 * perf's settings are read (tests give it fake values), or NULL. */
const char *ft_proc_sys(void);

/* The per-page timer of this state, calibrated on first use. */
struct ft_timer;
const struct ft_timer *ft_timer(lua_State *L);
/* The state's timer as a string, and a state that takes such a copy: a
 * task's state starts with its starter's (ft_tasks.c). */
void ft_timer_push_copy(lua_State *L);
void ft_timer_take_copy(lua_State *L, int idx);

/* A resource's metatable, made once (liolib's way): __gc and __close the
 * same release function, __tostring, and __index left for the caller to
 * set; it is left on the stack. */
void ft_new_resource_meta(lua_State *L, const char *name, lua_CFunction release, lua_CFunction tostring);

/* Shared argument checks, in the spirit of luaposix. */
void ft_check_nargs(lua_State *L, int max);
/* max counts self; the message does not. */
void ft_check_method_nargs(lua_State *L, int max);
struct ft_samples *ft_check_samples(lua_State *L, int arg);
struct ft_buffer *ft_check_buffer(lua_State *L, int arg);
/* An open memfd (a closed one is an error). */
struct ft_memfd *ft_check_memfd(lua_State *L, int arg);
/* luaL_checkoption that also rejects an embedded NUL. */
int ft_check_option(lua_State *L, int arg, const char *const names[]);
/* A refusal by the kernel is a value (luaL_fileresult): pushes nil,
 * "what failed: strerror(err)", err and returns 3. */
int ft_fail_errno(lua_State *L, int err, const char *fmt, ...);
/* Raises why a pass or a sleep stopped: "interrupted" (SIGINT), or in a
 * task "stopped: task N failed". */
int ft_stopped_error(lua_State *L);
/* Raises "what failed: strerror(err)" (errno's text). */
int ft_error_errno(lua_State *L, int err, const char *fmt, ...);

/* --- values between Lua states (ft_values.c) ------------------------ */

/* Where values go: back from a task (plain values only), or into a task
 * thread or process (buffers and memfds too, as views). */
enum ft_cross { FT_CROSS_RESULT, FT_CROSS_THREAD, FT_CROSS_PROCESS };

struct ft_blob {
	char *p;
	size_t n, cap;
};

/* A blob owned by a userdata pushed on the stack, so an error while
 * encoding leaks nothing; ft_blob_take hands its bytes to the caller. */
struct ft_blob *ft_blob_push(lua_State *L);
char *ft_blob_take(struct ft_blob *b, size_t *n);

/* Appends the value at idx. keep: a table that collects every buffer and
 * memfd that crossed (as keys), for lending; 0 when none may cross. An
 * offending value raises "what: PATH is ...", PATH naming where it sits
 * (args[2].x[3]). */
void ft_values_encode(lua_State *L, int idx, enum ft_cross cross, int keep, const char *what,
                      struct ft_blob *out);
/* Pushes the one value encoded in [p, p+n). */
void ft_values_decode(lua_State *L, const char *p, size_t n, enum ft_cross cross);

/* A buffer or memfd as it crosses: threads share the memory (root is the
 * main state's object, kept alive and lent while the tasks run); a
 * process inherits fd and maps it itself. */
struct ft_buffer_wire {
	struct ft_buffer b;
	void *root;
	int fd;
};
struct ft_memfd_wire {
	struct ft_memfd m;
	void *root;
};
/* Fills *w, or returns why the value cannot cross; adds to keep what must
 * be lent (threads) or inherited (processes). */
const char *ft_buffer_export(lua_State *L, int idx, enum ft_cross cross, int keep,
                             struct ft_buffer_wire *w);
const char *ft_memfd_export(lua_State *L, int idx, enum ft_cross cross, int keep,
                            struct ft_memfd_wire *w);
/* Push a view: same methods, no unmap, free or close. */
void ft_buffer_import(lua_State *L, const struct ft_buffer_wire *w, enum ft_cross cross);
void ft_memfd_import(lua_State *L, const struct ft_memfd_wire *w, enum ft_cross cross);
/* For a key of a keep table: lend (+1) or give back (-1) a buffer or
 * memfd; while lent, the main state cannot unmap, free or close it. */
void ft_lend(lua_State *L, int idx, int delta);
void ft_memfd_lend(lua_State *L, int idx, int delta);
/* The descriptor a child process inherits for a kept memfd, else -1. */
int ft_kept_fd(lua_State *L, int idx);

#endif
