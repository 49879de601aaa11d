/* The runner's helper library, in lauxlib's role: every binding file uses
 * it and it uses none of them, so no binding depends on another through
 * it. Argument and option checks, refusals and errors, table setters, the
 * metatable every resource type is made with, the header a lendable
 * resource starts with, and where the executable and its scripts are. */
#ifndef FT_RUNNER_AUX_H
#define FT_RUNNER_AUX_H

#include <stdbool.h>
#include <stddef.h>

#include <lauxlib.h>
#include <lua.h>

/* Resource types other files test for (lauxlib names LUA_FILEHANDLE). */
#define FT_BUFFER_META "ft.buffer"
#define FT_MEMFD_META "ft.memfd"
#define FT_SAMPLES_META "ft.samples"

/* --- arguments ----------------------------------------------------------- */

void ft_check_nargs(lua_State *L, int max);
/* max counts self; the message does not. */
void ft_check_method_nargs(lua_State *L, int max);
/* luaL_checkoption that also rejects an embedded NUL. */
int ft_check_option(lua_State *L, int arg, const char *const names[]);
/* A path at arg: a string, refused when it holds an embedded NUL (the
 * kernel would see only the part before it). */
const char *ft_check_path(lua_State *L, int arg);
/* An integer above 0 at arg; what says what it must be ("size must be a
 * positive number of bytes"), and the message adds what it got. */
lua_Integer ft_check_positive(lua_State *L, int arg, const char *what);
/* A byte value, 0 to 255, at arg. */
unsigned char ft_check_byte(lua_State *L, int arg);

/* --- option tables (luaposix's checkfieldnames, with typed fields) ------- */

enum ft_opt_kind { FT_OPT_BOOLEAN, FT_OPT_INTEGER, FT_OPT_NUMBER, FT_OPT_TABLE, FT_OPT_CHOICE,
                   FT_OPT_ANY };

struct ft_opt {
	const char *name;
	enum ft_opt_kind kind;
	const char *const *choices; /* FT_OPT_CHOICE: the names, NULL-ended */
	const char *want;           /* what the message says is expected, or NULL */
};

/* Checks the options table at arg (none or nil: no option given): every
 * key is one of opts (NULL-name-ended), every value of its kind; an
 * integer may be written as an integral float. Pushes each option's value
 * in the order of opts, nil when absent (a choice as its index), and
 * returns the stack index of the first. Messages start with "what option". */
int ft_check_opts(lua_State *L, int arg, const char *what, const struct ft_opt opts[]);

/* --- refusals and errors ------------------------------------------------- */

/* A refusal by the kernel is a value (luaL_fileresult): pushes nil,
 * "what failed: strerror(err)", err and returns 3. */
int ft_fail_errno(lua_State *L, int err, const char *fmt, ...);
/* The same with the message as given (the reason is already in it). */
int ft_fail(lua_State *L, int err, const char *fmt, ...);
/* Raises "what failed: strerror(err)". */
int ft_error_errno(lua_State *L, int err, const char *fmt, ...);
/* Raises why a pass or a sleep stopped: "interrupted" (SIGINT), or in a
 * task "stopped: task N failed". */
int ft_stopped_error(lua_State *L);
/* SIGINT's error from a binding; its position is kept under this registry
 * key for the hook and the message handler. */
#define FT_INTERRUPTED_AT "ft.interrupted_at"
int ft_interrupt_error(lua_State *L);
/* lua.c's message handler: the message with a traceback appended. */
int ft_msghandler(lua_State *L);

/* --- fields of the table on top ------------------------------------------ */

void ft_set_integer(lua_State *L, const char *key, lua_Integer v);
/* t[key] of the table at t when it is an integer, else dflt. */
lua_Integer ft_field_integer(lua_State *L, int t, const char *key, lua_Integer dflt);
void ft_set_number(lua_State *L, const char *key, lua_Number v);
void ft_set_string(lua_State *L, const char *key, const char *v);
void ft_set_boolean(lua_State *L, const char *key, bool v);

/* --- resources ------------------------------------------------------------ */

/* A resource's metatable, made once (liolib's way): __gc and __close the
 * same release function, __tostring, and __index: the methods first, then
 * fields(L) with the object at 1 and the key at 2, which pushes the field
 * and returns 1, or returns 0 for no such field (an error naming it).
 * fields NULL: the methods alone; methods NULL: no __index. */
void ft_new_resource_meta(lua_State *L, const char *name, lua_CFunction release,
                          lua_CFunction tostring, const luaL_Reg *methods, lua_CFunction fields);

/* The header of a resource that can be lent to tasks (buffers and
 * memfds), as luaL_Stream is the header of a file: ft_values.c lends and
 * gives back through it alone. */
struct ft_lendable {
	struct ft_lendable *root; /* who owns it: itself, or for a view in a
	                           * task thread the main state's object */
	bool view;                /* no release through this object */
	bool owns;                /* __gc releases it */
	int lent;                 /* an owner: running task groups holding a view */
};
/* Where values go (ft_values.c): back from a task (plain values only), or
 * into a task thread or process (buffers and memfds too, as views). */
enum ft_cross { FT_CROSS_RESULT, FT_CROSS_THREAD, FT_CROSS_PROCESS };
/* A buffer's or memfd's header at idx, or NULL. */
struct ft_lendable *ft_test_lendable(lua_State *L, int idx);
/* Raises when a view or a lent owner is asked to release (verb: "unmapped",
 * "freed", "closed"); what: "buffer" or "memfd". */
void ft_check_releasable(lua_State *L, const struct ft_lendable *h, const char *what,
                         const char *verb);

/* --- where things are ----------------------------------------------------- */

/* The directory of the running executable (realpath), or "." if unknown. */
const char *ft_exe_dir(void);
/* A script: as given, else <exe dir>/scripts/NAME, else
 * <exe dir>/../share/ftrun/scripts/NAME (installed); the found path into
 * out (made absolute when it came from beside the executable). Returns 0,
 * or -1 with out naming the places looked at. */
int ft_find_script(const char *name, char *out, size_t size);
/* The scripts' library directory: <exe dir>/scripts/lib, else
 * <exe dir>/../share/ftrun/scripts/lib. */
const char *ft_script_lib_dir(void);
/* FTRUN_PROC_SYS, a directory that stands in for /proc/sys/kernel when
 * perf's settings are read (tests give it fake values), or NULL. */
const char *ft_proc_sys(void);

/* --- states --------------------------------------------------------------- */

/* Each adds its functions to the ft table on top of the stack. */
typedef void (*ft_opener)(lua_State *L);
/* The standard libraries, then ft made from openers (NULL-ended),
 * preloaded and set as the global ft. */
void ft_open_state(lua_State *L, const ft_opener *openers);

#endif
