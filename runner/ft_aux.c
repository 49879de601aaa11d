#include "ft_aux.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lualib.h>

#include "../core/interrupt.h"

/* --- arguments ----------------------------------------------------------- */

void ft_check_nargs(lua_State *L, int max)
{
	int n = lua_gettop(L);
	if (n > max)
		luaL_error(L, "too many arguments: got %d, expected at most %d", n, max);
}

/* Methods count as the user wrote them: b:touch(1, 2) has 2, not 3. */
void ft_check_method_nargs(lua_State *L, int max)
{
	int n = lua_gettop(L);
	if (n > max)
		luaL_error(L, "too many arguments: got %d, expected %d", n - 1, max - 1);
}

/* luaL_checkoption compares with strcmp, so "dontneed\0x" would pass; and
 * its refusal does not say what would have been taken: this one lists it. */
int ft_check_option(lua_State *L, int arg, const char *const names[])
{
	size_t len;
	const char *s = luaL_checklstring(L, arg, &len);
	if (strlen(s) != len)
		return luaL_argerror(L, arg, lua_pushfstring(L,
			"invalid option '%s' (it holds an embedded NUL)", s));
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	lua_pushfstring(L, "invalid option '%s' (expected ", s);
	luaL_addvalue(&b);
	for (int i = 0; names[i]; i++) {
		if (i > 0)
			luaL_addstring(&b, names[i + 1] ? ", " : " or ");
		luaL_addchar(&b, '"');
		luaL_addstring(&b, names[i]);
		luaL_addchar(&b, '"');
	}
	luaL_addchar(&b, ')');
	luaL_pushresult(&b);
	return luaL_argerror(L, arg, lua_tostring(L, -1));
}

const char *ft_check_path(lua_State *L, int arg)
{
	size_t len;
	const char *s = luaL_checklstring(L, arg, &len);
	if (strlen(s) != len)
		luaL_argerror(L, arg, lua_pushfstring(L, "the path holds an embedded NUL after '%s'", s));
	return s;
}

lua_Integer ft_check_positive(lua_State *L, int arg, const char *what)
{
	lua_Integer v = luaL_checkinteger(L, arg);
	if (v <= 0)
		luaL_argerror(L, arg, lua_pushfstring(L, "%s, got %I", what, v));
	return v;
}

unsigned char ft_check_byte(lua_State *L, int arg)
{
	lua_Integer v = luaL_checkinteger(L, arg);
	luaL_argcheck(L, v >= 0 && v <= 255, arg, "value must be a byte, 0 to 255");
	return (unsigned char)v;
}

/* --- option tables ------------------------------------------------------- */

/* "a, b or c" from a NULL-ended list, each quoted when quote is set. */
static const char *push_list(lua_State *L, const char *const *names, const char *fmt)
{
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	for (int i = 0; names[i]; i++) {
		if (i > 0)
			luaL_addstring(&b, names[i + 1] ? ", " : " or ");
		lua_pushfstring(L, fmt, names[i]);
		luaL_addvalue(&b);
	}
	luaL_pushresult(&b);
	return lua_tostring(L, -1);
}

static const char *const kind_want[] = {
	[FT_OPT_BOOLEAN] = "a boolean", [FT_OPT_INTEGER] = "an integer",
	[FT_OPT_NUMBER] = "a number", [FT_OPT_TABLE] = "a table",
};

/* What the value at idx is, for a message: a number as written, else its type. */
static const char *shown(lua_State *L, int idx)
{
	return lua_type(L, idx) == LUA_TNUMBER ? luaL_tolstring(L, idx, NULL) : luaL_typename(L, idx);
}

static void check_choice(lua_State *L, int idx, const char *what, const struct ft_opt *o)
{
	size_t len;
	const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
	for (int i = 0; s && strlen(s) == len && o->choices[i]; i++)
		if (strcmp(s, o->choices[i]) == 0) {
			lua_pushinteger(L, i);
			lua_replace(L, idx);
			return;
		}
	const char *list = push_list(L, o->choices, "\"%s\"");
	if (s)
		luaL_error(L, "%s option %s = %s (expected %s)", what, o->name, s, list);
	luaL_error(L, "%s option %s must be %s, got %s", what, o->name, list, luaL_typename(L, idx));
}

static void check_kind(lua_State *L, int idx, const char *what, const struct ft_opt *o)
{
	bool ok = true;
	switch (o->kind) {
	case FT_OPT_BOOLEAN:
		ok = lua_isboolean(L, idx);
		break;
	case FT_OPT_INTEGER: {
		int isint;
		lua_Integer v = lua_tointegerx(L, idx, &isint);
		if ((ok = isint && lua_type(L, idx) == LUA_TNUMBER)) {
			lua_pushinteger(L, v); /* 2.0 is 2 */
			lua_replace(L, idx);
		}
		break;
	}
	case FT_OPT_NUMBER:
		ok = lua_type(L, idx) == LUA_TNUMBER;
		break;
	case FT_OPT_TABLE:
		ok = lua_istable(L, idx);
		break;
	case FT_OPT_CHOICE:
		check_choice(L, idx, what, o);
		return;
	case FT_OPT_ANY:
		return;
	}
	if (!ok)
		luaL_error(L, "%s option %s must be %s, got %s", what, o->name,
		           o->want ? o->want : kind_want[o->kind],
		           o->kind == FT_OPT_INTEGER ? shown(L, idx) : luaL_typename(L, idx));
}

int ft_check_opts(lua_State *L, int arg, const char *what, const struct ft_opt opts[])
{
	int n = 0;
	while (opts[n].name)
		n++;
	bool given = !lua_isnoneornil(L, arg);
	if (given) {
		luaL_checktype(L, arg, LUA_TTABLE);
		arg = lua_absindex(L, arg);
		for (lua_pushnil(L); lua_next(L, arg); lua_pop(L, 1)) {
			size_t len = 0;
			const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &len) : NULL;
			int i = 0;
			while (key && i < n && !(strlen(key) == len && strcmp(key, opts[i].name) == 0))
				i++;
			if (!key || i == n) {
				const char *names[n + 1];
				for (i = 0; i <= n; i++)
					names[i] = opts[i].name;
				const char *shown_key = key ? key : luaL_typename(L, -2);
				luaL_error(L, "unknown %s option '%s' (expected %s)", what, shown_key,
				           push_list(L, names, "%s"));
			}
		}
	}
	luaL_checkstack(L, n, "too many options");
	int first = lua_gettop(L) + 1;
	for (int i = 0; i < n; i++) {
		if (!given)
			lua_pushnil(L);
		else if (lua_getfield(L, arg, opts[i].name) != LUA_TNIL)
			check_kind(L, first + i, what, &opts[i]);
	}
	return first;
}

/* --- refusals and errors ------------------------------------------------- */

int ft_fail_errno(lua_State *L, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lua_pushnil(L);
	lua_pushvfstring(L, fmt, ap);
	va_end(ap);
	lua_pushfstring(L, ": %s", strerror(err));
	lua_concat(L, 2);
	lua_pushinteger(L, err);
	return 3;
}

int ft_fail(lua_State *L, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lua_pushnil(L);
	lua_pushvfstring(L, fmt, ap);
	va_end(ap);
	lua_pushinteger(L, err);
	return 3;
}

int ft_error_errno(lua_State *L, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	luaL_where(L, 1);
	lua_pushvfstring(L, fmt, ap);
	va_end(ap);
	lua_pushfstring(L, ": %s", strerror(err));
	lua_concat(L, 3);
	return lua_error(L);
}

int ft_stopped_error(lua_State *L)
{
	if (ft_interrupted)
		return ft_interrupt_error(L);
	int a = ft_stop_request ? atomic_load(ft_stop_request) : 0;
	if (a > 0)
		return luaL_error(L, "stopped: task %d failed", a);
	return luaL_error(L, "stopped: the task group was closed");
}

/* Whether s starts with a position "SRC:LINE: " (what error() puts before
 * a message); returns what follows it, or NULL. */
static const char *after_position(const char *s)
{
	const char *sep = strstr(s, ": ");
	const char *digit = sep;
	while (digit && digit > s && isdigit((unsigned char)digit[-1]))
		digit--;
	if (!sep || digit == sep || digit - 1 <= s || digit[-1] != ':')
		return NULL;
	return sep + 2;
}

/* The error SIGINT raises within msg, or NULL: a binding's "interrupted",
 * or the hook's "interrupted at SRC:LINE", behind only the positions that
 * error() adds on the way out of a pcall. A script's own message that
 * quotes it ("wrapped: interrupted at ...") is the script's error. */
static bool is_position(const char *from, const char *to)
{
	const char *colon = to;
	while (colon > from && isdigit((unsigned char)colon[-1]))
		colon--;
	return colon < to && colon - 1 > from && colon[-1] == ':';
}

static const char *interrupt_in(const char *msg)
{
	static const char word[] = "interrupted";
	if (!ft_interrupted)
		return NULL;
	while (msg && strncmp(msg, word, sizeof word - 1) != 0)
		msg = after_position(msg);
	if (!msg)
		return NULL;
	const char *rest = msg + sizeof word - 1;
	if (!*rest)
		return msg;
	if (strncmp(rest, " at ", 4) != 0)
		return NULL;
	rest += 4;
	static const char script[] = " (the script at ";
	const char *also = strstr(rest, script);
	if (!also)
		return is_position(rest, rest + strlen(rest)) ? msg : NULL;
	const char *end = also + strlen(also) - 1;
	return *end == ')' && is_position(rest, also) && is_position(also + sizeof script - 1, end) ? msg : NULL;
}

/* "interrupted at SRC:LINE" for the innermost Lua frame, and " (the script
 * at SRC:LINE)" when the outermost one is in another file (a library's). */
static void push_interrupt_at(lua_State *L)
{
	lua_Debug ar;
	char inner[LUA_IDSIZE + 24] = "", script[LUA_IDSIZE + 24] = "", inner_src[LUA_IDSIZE] = "";
	for (int level = 0; lua_getstack(L, level, &ar); level++) {
		if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0)
			continue;
		if (!inner[0]) {
			snprintf(inner, sizeof inner, "%s:%d", ar.short_src, ar.currentline);
			snprintf(inner_src, sizeof inner_src, "%s", ar.short_src);
		}
		if (strcmp(ar.what, "main") == 0) /* the outermost one is the script's */
			snprintf(script, sizeof script, "%s:%d", ar.short_src, ar.currentline);
	}
	if (!inner[0])
		lua_pushliteral(L, "interrupted");
	else if (!script[0] || (strncmp(script, inner_src, strlen(inner_src)) == 0 &&
	                        script[strlen(inner_src)] == ':'))
		lua_pushfstring(L, "interrupted at %s", inner);
	else
		lua_pushfstring(L, "interrupted at %s (the script at %s)", inner, script);
}

/* A binding stopped by SIGINT: "interrupted", its position kept in the
 * registry, since the hook still pending raises again at the first Lua
 * line after a pcall that caught it, and must name where the pass
 * stopped, not that line. */
int ft_interrupt_error(lua_State *L)
{
	push_interrupt_at(L);
	lua_setfield(L, LUA_REGISTRYINDEX, FT_INTERRUPTED_AT);
	return luaL_error(L, "interrupted");
}

/* An interrupt is not a bug: one line saying where the Lua code was (the
 * position the hook's message carries; else, for a binding's, the
 * innermost Lua frame, and the script's own line when that is in another
 * file, a library's). */
static int interrupt_message(lua_State *L, const char *core)
{
	if (strcmp(core, "interrupted") != 0) { /* the hook's, with its position */
		lua_pushstring(L, core);
		return 1;
	}
	if (lua_getfield(L, LUA_REGISTRYINDEX, FT_INTERRUPTED_AT) == LUA_TSTRING)
		return 1; /* where the binding stopped */
	lua_pop(L, 1);
	push_interrupt_at(L);
	return 1;
}

/* An error raised inside the scripts' shared library (scripts/lib/) on
 * behalf of a script's call: "SRC:LINE: " of the innermost line of a file
 * outside it, pushed, so a script writer reads their own line first; NULL
 * when the error came from outside the library or no such line exists. */
static const char *script_position(lua_State *L)
{
	lua_Debug ar;
	bool in_lib = false;
	for (int level = 1; lua_getstack(L, level, &ar); level++) {
		if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0 || ar.source[0] != '@')
			continue;
		if (strstr(ar.source, "/scripts/lib/")) {
			in_lib = true;
			continue;
		}
		return in_lib ? lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline) : NULL;
	}
	return NULL;
}

int ft_msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	const char *core = msg ? interrupt_in(msg) : NULL;
	if (core)
		return interrupt_message(L, core);
	if (msg == NULL) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	/* a message that already starts with a line outside the library keeps it */
	const char *rest = after_position(msg);
	const char *where = !rest || memmem(msg, (size_t)(rest - msg), "/scripts/lib/", 13) ? script_position(L) : NULL;
	if (where)
		msg = lua_pushfstring(L, "%s%s", where, msg);
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* --- fields -------------------------------------------------------------- */

void ft_set_integer(lua_State *L, const char *key, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, key);
}

lua_Integer ft_field_integer(lua_State *L, int t, const char *key, lua_Integer dflt)
{
	lua_getfield(L, t, key);
	lua_Integer v = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : dflt;
	lua_pop(L, 1);
	return v;
}

void ft_set_number(lua_State *L, const char *key, lua_Number v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, key);
}

void ft_set_string(lua_State *L, const char *key, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, key);
}

void ft_set_boolean(lua_State *L, const char *key, bool v)
{
	lua_pushboolean(L, v);
	lua_setfield(L, -2, key);
}

/* --- resources ----------------------------------------------------------- */

/* upvalues: the methods, the fields function, the type's name */
static int resource_index(lua_State *L)
{
	const char *key = luaL_checkstring(L, 2);
	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
		return 1;
	lua_settop(L, 2);
	if (lua_tocfunction(L, lua_upvalueindex(2))(L) == 1)
		return 1;
	return luaL_error(L, "%s has no field or method '%s'", lua_tostring(L, lua_upvalueindex(3)),
	                  key);
}

void ft_new_resource_meta(lua_State *L, const char *name, lua_CFunction release,
                          lua_CFunction tostring, const luaL_Reg *methods, lua_CFunction fields)
{
	const luaL_Reg meta[] = {
		{ "__gc", release },
		{ "__close", release },
		{ "__tostring", tostring },
		{ NULL, NULL }
	};
	luaL_newmetatable(L, name);
	luaL_setfuncs(L, meta, 0);
	if (methods) {
		lua_newtable(L);
		luaL_setfuncs(L, methods, 0);
		lua_pushvalue(L, -1); /* the REPL completes b:<Tab> from it */
		lua_setfield(L, -3, "__methods");
		if (fields) {
			lua_pushcfunction(L, fields);
			lua_pushstring(L, name);
			lua_pushcclosure(L, resource_index, 3);
		}
		lua_setfield(L, -2, "__index");
	}
	lua_pop(L, 1);
}

struct ft_lendable *ft_test_lendable(lua_State *L, int idx)
{
	struct ft_lendable *h = luaL_testudata(L, idx, FT_BUFFER_META);
	return h ? h : luaL_testudata(L, idx, FT_MEMFD_META);
}

void ft_check_releasable(lua_State *L, const struct ft_lendable *h, const char *what,
                         const char *verb)
{
	if (h->view)
		luaL_error(L, "this %s is a view lent to a task: it cannot be %s here (its owner in "
		           "the main state releases it)", what, verb);
	if (h->lent)
		luaL_error(L, "%s is in use by %d running task group%s: it cannot be %s before their "
		           "wait()", what, h->lent, h->lent > 1 ? "s" : "", verb);
}

/* --- where things are ---------------------------------------------------- */

const char *ft_exe_dir(void)
{
	static char dir[PATH_MAX];
	if (!dir[0]) { /* found once; the same in every thread */
		char exe[PATH_MAX];
		char *slash = realpath("/proc/self/exe", exe) ? strrchr(exe, '/') : NULL;
		if (slash && slash != exe)
			*slash = '\0';
		snprintf(dir, sizeof dir, "%s", slash ? exe : ".");
	}
	return dir;
}

/* Where the scripts are, beside the executable or installed, in order. */
static const char *const script_dirs[] = { "%s/scripts", "%s/../share/ftrun/scripts", NULL };

static bool found_in(const char *dir_fmt, const char *name, char *out, size_t size)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof path, dir_fmt, ft_exe_dir());
	if (n < 0 || (size_t)n >= sizeof path ||
	    (size_t)snprintf(path + n, sizeof path - (size_t)n, "%s%s", name[0] ? "/" : "", name) >=
	    sizeof path - (size_t)n || access(path, R_OK) != 0)
		return false;
	char real[PATH_MAX];
	return (size_t)snprintf(out, size, "%s", realpath(path, real) ? real : path) < size;
}

int ft_find_script(const char *name, char *out, size_t size)
{
	if ((size_t)snprintf(out, size, "%s", name) < size && access(out, R_OK) == 0)
		return 0;
	for (int i = 0; name[0] != '/' && script_dirs[i]; i++)
		if (found_in(script_dirs[i], name, out, size))
			return 0;
	const char *dir = ft_exe_dir();
	if ((size_t)snprintf(out, size, "%s, %s/scripts/%s and %s/../share/ftrun/scripts/%s", name,
	                     dir, name, dir, name) >= size)
		snprintf(out, size, "%s", name);
	return -1;
}

const char *ft_script_lib_dir(void)
{
	static char dir[PATH_MAX];
	for (int i = 0; !dir[0] && script_dirs[i]; i++)
		found_in(script_dirs[i], "lib", dir, sizeof dir);
	if (!dir[0] && (size_t)snprintf(dir, sizeof dir, "%s/scripts/lib", ft_exe_dir()) >= sizeof dir)
		dir[0] = '\0';
	return dir;
}

const char *ft_proc_sys(void)
{
	const char *dir = getenv("FTRUN_PROC_SYS");
	return dir && *dir ? dir : NULL;
}

/* --- states -------------------------------------------------------------- */

static int open_ft(lua_State *L)
{
	const ft_opener *openers = lua_touserdata(L, lua_upvalueindex(1));
	lua_newtable(L);
	for (int i = 0; openers[i]; i++)
		openers[i](L);
	return 1;
}

extern char **environ;

/* os.execute as Lua's, without system(): system() ignores SIGINT in the
 * caller while the command runs, so a SIGINT sent to ftrun alone was lost
 * and the run went on. Here ftrun's handler marks it, the command keeps
 * running (the signal was not its), and the script is interrupted when
 * the command returns. */
static int l_os_execute(lua_State *L)
{
	const char *cmd = luaL_optstring(L, 1, NULL);
	if (!cmd) {
		lua_pushboolean(L, access("/bin/sh", X_OK) == 0); /* is a shell there */
		return 1;
	}
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	pid_t pid;
	int err = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
	if (err != 0) {
		errno = err;
		return luaL_execresult(L, -1);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return luaL_execresult(L, -1);
	errno = 0; /* luaL_execresult reads a nonzero errno as the call's failure */
	return luaL_execresult(L, status);
}

void ft_open_state(lua_State *L, const ft_opener *openers)
{
	luaL_openlibs(L);
	lua_getglobal(L, "os");
	lua_pushcfunction(L, l_os_execute);
	lua_setfield(L, -2, "execute");
	lua_pop(L, 1);
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushlightuserdata(L, (void *)openers);
	lua_pushcclosure(L, open_ft, 1);
	lua_setfield(L, -2, "ft");
	lua_pop(L, 1);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "ft");
	lua_call(L, 1, 1);
	lua_setglobal(L, "ft");
}
