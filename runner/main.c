/* ftrun: arguments, the Lua state, the REPL. Modelled on lua.c: every chunk
 * runs under lua_pcall with a message handler that appends a traceback, and
 * SIGINT stops Lua code through a hook and long C passes through a flag. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <readline/history.h>
#include <readline/readline.h>

#include "../core/interrupt.h"
#include "ft.h"

enum { EXIT_LUA_ERROR = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

static const char usage_text[] =
	"usage: ftrun [options] [script [args...]]\n"
	"\n"
	"Runs a Lua 5.4 script with the ft module loaded (as the global ft and as\n"
	"require \"ft\"). A script is looked up as given, then in scripts/ beside\n"
	"the executable, so `./ftrun cycles.lua` runs scripts/cycles.lua.\n"
	"With no script, or with -i, opens a REPL.\n"
	"\n"
	"options:\n"
	"  -e CODE      run CODE (may be given more than once)\n"
	"  -i           enter the REPL after running the script or -e code\n"
	"  -h, --help   show this help\n"
	"  -v, --version\n"
	"  --           stop handling options\n"
	"\n"
	"exit status: 0 success, 1 Lua error (message and traceback on stderr),\n"
	"2 usage error, 130 interrupted (SIGINT).\n"
	"\n"
	"The main job: `./ftrun cycles.lua` (see README.md for its knobs).\n";

/* The state SIGINT has to reach: the one thing the handler needs. */
static lua_State *signal_state;

static void stop_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	lua_sethook(L, NULL, 0, 0);
	luaL_error(L, "interrupted");
}

static void on_sigint(int sig)
{
	signal(sig, SIG_DFL); /* a second Ctrl-C kills at once */
	ft_interrupted = 1;
	lua_sethook(signal_state, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static int msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	if (msg == NULL) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* Calls the function below narg arguments; leaves results or an error. */
static int docall(lua_State *L, int narg, int nres)
{
	int base = lua_gettop(L) - narg;
	lua_pushcfunction(L, msghandler);
	lua_insert(L, base);
	signal_state = L;
	ft_interrupted = 0;
	signal(SIGINT, on_sigint);
	int status = lua_pcall(L, narg, nres, base);
	signal(SIGINT, SIG_DFL);
	lua_remove(L, base);
	return status;
}

static int report(lua_State *L, int status)
{
	if (status != LUA_OK) {
		fprintf(stderr, "ftrun: %s\n", lua_tostring(L, -1));
		fflush(stderr);
		lua_pop(L, 1);
	}
	return status;
}

static int exit_status(int status)
{
	if (status == LUA_OK)
		return EXIT_SUCCESS;
	return ft_interrupted ? EXIT_INTERRUPTED : EXIT_LUA_ERROR;
}

static void executable_dir(char *out, size_t size)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n <= 0) {
		snprintf(out, size, ".");
		return;
	}
	path[n] = '\0';
	snprintf(out, size, "%s", dirname(path));
}

/* As given, then scripts/NAME beside the executable. */
static int find_script(const char *name, const char *exe_dir, char *out, size_t size)
{
	if ((size_t)snprintf(out, size, "%s", name) < size && access(out, R_OK) == 0)
		return 0;
	if ((size_t)snprintf(out, size, "%s/scripts/%s", exe_dir, name) >= size)
		return -1;
	return access(out, R_OK);
}

/* package.path gains the script's lib/ and scripts/lib/ beside the executable. */
static void set_module_path(lua_State *L, const char *script, const char *exe_dir)
{
	char copy[PATH_MAX];
	snprintf(copy, sizeof copy, "%s", script ? script : ".");
	const char *script_dir = script ? dirname(copy) : ".";
	lua_getglobal(L, "package");
	lua_pushfstring(L, "%s/lib/?.lua;%s/scripts/lib/?.lua;", script_dir, exe_dir);
	lua_getfield(L, -2, "path");
	lua_concat(L, 2);
	lua_setfield(L, -2, "path");
	lua_pop(L, 1);
}

static void open_state(lua_State *L)
{
	luaL_openlibs(L);
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, luaopen_ft);
	lua_setfield(L, -2, "ft");
	lua_pop(L, 1);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "ft");
	lua_call(L, 1, 1);
	lua_setglobal(L, "ft");
}

/* arg as the standalone lua sets it: arg[0] the script, arg[-k] what came
 * before it, arg[1..] its arguments. */
static void set_arg(lua_State *L, char **argv, int argc, int script)
{
	lua_createtable(L, argc - script > 0 ? argc - script - 1 : 0, script + 1);
	for (int i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - script);
	}
	lua_setglobal(L, "arg");
}

static int run_script(lua_State *L, const char *path, char **args, int nargs)
{
	if (luaL_loadfile(L, path) != LUA_OK)
		return report(L, LUA_ERRSYNTAX);
	luaL_checkstack(L, nargs, "too many arguments to script");
	for (int i = 0; i < nargs; i++)
		lua_pushstring(L, args[i]);
	return report(L, docall(L, nargs, LUA_MULTRET));
}

static int run_string(lua_State *L, const char *code)
{
	int status = luaL_loadbuffer(L, code, strlen(code), "=(command line)");
	if (status == LUA_OK)
		status = docall(L, 0, 0);
	return report(L, status);
}

/* --- the REPL --------------------------------------------------------- */

static char *read_line(int interactive, const char *prompt)
{
	if (interactive)
		return readline(prompt);
	size_t size = 0;
	char *line = NULL;
	ssize_t n = getline(&line, &size, stdin);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	return line;
}

static int incomplete(lua_State *L, int status)
{
	static const char mark[] = "<eof>";
	size_t len;
	const char *msg = lua_tolstring(L, -1, &len);
	return status == LUA_ERRSYNTAX && len >= sizeof mark - 1 &&
	       strcmp(msg + len - (sizeof mark - 1), mark) == 0;
}

/* Compiles "return LINE" so expressions print; else LINE itself, reading
 * more lines while the statement is unfinished. Leaves a function or an
 * error message; returns the status, or -1 at end of input. */
static int load_chunk(lua_State *L, int interactive)
{
	char *line = read_line(interactive, "> ");
	if (!line)
		return -1;
	const char *text = line[0] == '=' ? line + 1 : line; /* Lua 5.2's "=expr" */
	lua_pushfstring(L, "return %s", text);
	int status = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin");
	lua_remove(L, -2);
	if (status == LUA_OK) {
		if (interactive && line[0])
			add_history(line);
		free(line);
		return status;
	}
	lua_pop(L, 1);
	lua_pushstring(L, line);
	free(line);
	for (;;) {
		size_t len;
		const char *chunk = lua_tolstring(L, -1, &len);
		status = luaL_loadbuffer(L, chunk, len, "=stdin");
		if (!incomplete(L, status))
			break;
		char *more = read_line(interactive, ">> ");
		if (!more)
			break; /* end of input: report the error as it stands */
		lua_pop(L, 1);
		lua_pushliteral(L, "\n");
		lua_pushstring(L, more);
		free(more);
		lua_concat(L, 3);
	}
	if (status == LUA_OK && interactive)
		add_history(lua_tostring(L, -2));
	lua_remove(L, -2);
	return status;
}

static void print_results(lua_State *L)
{
	int n = lua_gettop(L);
	if (n == 0)
		return;
	luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
	lua_getglobal(L, "print");
	lua_insert(L, 1);
	if (lua_pcall(L, n, 0, 0) != LUA_OK)
		report(L, LUA_ERRRUN);
}

static void repl(lua_State *L)
{
	int interactive = isatty(STDIN_FILENO);
	char history[PATH_MAX] = "";
	const char *home = getenv("HOME");
	if (interactive && home) {
		snprintf(history, sizeof history, "%s/.ftrun_history", home);
		read_history(history);
		printf("ftrun %s (%s), ft loaded; Ctrl-D to leave\n", FT_VERSION, LUA_RELEASE);
	}
	int status;
	lua_settop(L, 0);
	while ((status = load_chunk(L, interactive)) != -1) {
		if (status == LUA_OK)
			status = docall(L, 0, LUA_MULTRET);
		if (status == LUA_OK)
			print_results(L);
		else
			report(L, status);
		lua_settop(L, 0);
	}
	if (interactive) {
		putchar('\n');
		if (history[0])
			write_history(history);
	}
	fflush(stdout);
}

/* --- main ------------------------------------------------------------- */

static int usage_error(const char *fmt, const char *what)
{
	fprintf(stderr, "ftrun: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\ntry 'ftrun --help'\n");
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	int script = 0, want_repl = 0, has_code = 0;
	for (int i = 1; i < argc && !script; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			return EXIT_SUCCESS;
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
			printf("ftrun %s (%s)\n", FT_VERSION, LUA_RELEASE);
			return EXIT_SUCCESS;
		} else if (strcmp(a, "-i") == 0) {
			want_repl = 1;
		} else if (strcmp(a, "-e") == 0) {
			if (++i >= argc)
				return usage_error("option '%s' needs an argument", "-e");
			has_code = 1;
		} else if (strcmp(a, "--") == 0) {
			if (i + 1 < argc)
				script = i + 1;
			break;
		} else if (a[0] == '-') {
			return usage_error("unknown option '%s'", a);
		} else {
			script = i;
		}
	}

	char exe_dir[PATH_MAX], path[PATH_MAX];
	executable_dir(exe_dir, sizeof exe_dir);
	if (script && find_script(argv[script], exe_dir, path, sizeof path) != 0) {
		fprintf(stderr, "ftrun: cannot open script '%s' (looked for %s and %s/scripts/%s)\n",
		        argv[script], argv[script], exe_dir, argv[script]);
		return EXIT_USAGE;
	}

	lua_State *L = luaL_newstate();
	if (!L) {
		fprintf(stderr, "ftrun: cannot create the Lua state: out of memory\n");
		return EXIT_LUA_ERROR;
	}
	open_state(L);
	set_module_path(L, script ? path : NULL, exe_dir);
	set_arg(L, argv, argc, script); /* no script: arg[0] is ftrun itself */

	int status = LUA_OK;
	for (int i = 1; i < argc && status == LUA_OK && (!script || i < script); i++)
		if (strcmp(argv[i], "-e") == 0)
			status = run_string(L, argv[++i]);
	if (status == LUA_OK && script)
		status = run_script(L, path, argv + script + 1, argc - script - 1);
	if (status == LUA_OK && (want_repl || (!script && !has_code)))
		repl(L);

	int code = exit_status(status);
	lua_close(L); /* releases every buffer still held */
	return code;
}
