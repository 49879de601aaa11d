/* ftrun: arguments, the Lua state, running a script or -e code (the REPL
 * is repl.c). Modelled on lua.c: every chunk runs under lua_pcall with a
 * message handler that appends a traceback, and SIGINT stops Lua code
 * through a hook and long C passes through a flag. */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "../core/hugepages.h"
#include "../core/interrupt.h"
#include "../core/restore.h"
#include "ft.h"
#include "ft_aux.h"
#include "repl.h"
#include "task.h"

/* The sanitizer build carries its own option: ft.malloc(1 << 62) must get
 * NULL (a refusal) rather than abort, whatever ASAN_OPTIONS says. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(FT_ASAN)
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

enum { EXIT_LUA_ERROR = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

static const char usage_text[] =
	"usage: ftrun [options] [script [args...]]\n"
	"\n"
	"Runs a Lua 5.4 script with the ft module loaded (as the global ft and as\n"
	"require \"ft\"). A script is looked up as given, then in scripts/ beside\n"
	"the executable, then in ../share/ftrun/scripts/ from it (installed), so\n"
	"`./ftrun cycles.lua` runs scripts/cycles.lua; require finds the scripts'\n"
	"lib/ in the same places.\n"
	"With no script, or with -i, opens a REPL.\n"
	"\n"
	"options:\n"
	"  -e CODE      run CODE (may be given more than once)\n"
	"  -i           enter the REPL after running the script or -e code\n"
	"  -h, --help   show this help\n"
	"  -v, --version\n"
	"               show the version, Lua's, and the commit it was built from\n"
	"  --restore    write back the settings a killed run left changed, then exit\n"
	"  --           stop handling options\n"
	"  -            run the script read from stdin (as lua -)\n"
	"\n"
	"exit status: 0 success, 1 Lua error (message and traceback on stderr),\n"
	"results not written (the message alone) or a changed system setting\n"
	"that would not go back, 2 usage error,\n"
	"130 interrupted (SIGINT, also when started with it ignored, as a\n"
	"shell's background job is), 128+N stopped by signal N (143 SIGTERM,\n"
	"129 SIGHUP, 131 SIGQUIT, 141 SIGPIPE). Settings changed by ft.set_folio and\n"
	"ft.set_hugetlb_pages are restored at exit and on SIGINT, SIGTERM, SIGHUP,\n"
	"SIGQUIT and SIGPIPE; a run killed otherwise is undone by the next start.\n"
	"A run changing them holds the settings lock alone, an experiment holds it\n"
	"shared (root's is /run/ftrun/ftrun-settings.lock): another waits, or with\n"
	"NOWAIT=1 is refused.\n"
	"\n"
	"environment: FTRUN_TIMER=clock_gettime times pages with CLOCK_MONOTONIC\n"
	"instead of the TSC; FTRUN_PROC_SYS=DIR reads perf's settings from DIR\n"
	"instead of /proc/sys/kernel (they only explain a refused perf_event_open).\n"
	"Test hooks, not settings:\n"
	"FTRUN_TEST_WRITE_PAUSE=SECONDS holds ft.write_files before its renames;\n"
	"FTRUN_TEST_PUBLISHED_PAUSE=SECONDS holds a run's write after them;\n"
	"FTRUN_TEST_REPL_COMPILES=1 prints how many chunks the REPL compiled.\n"
	"\n"
	"The main job: `./ftrun cycles.lua` (its knobs: `./ftrun cycles.lua --help`, man ftrun).\n";

static int is_script(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return n > 4 && strcmp(e->d_name + n - 4, ".lua") == 0;
}

/* The scripts found beside the library the runner would load, so the list
 * is what `ftrun NAME` runs, in a checkout or installed. */
static void print_scripts(void)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/..", ft_script_lib_dir());
	struct dirent **names;
	int n = scandir(dir, &names, is_script, alphasort);
	if (n <= 0)
		return;
	fputs("\nscripts (each explains its knobs with --help, e.g. `ftrun cycles.lua --help`):\n", stdout);
	size_t col = 0;
	for (int i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name) + 1;
		if (col + len > 72) {
			fputc('\n', stdout);
			col = 0;
		}
		col += (size_t)printf(" %s", names[i]->d_name);
		free(names[i]);
	}
	fputc('\n', stdout);
	free(names);
}

/* The state SIGINT has to reach: the one thing the handler needs. */
static lua_State *signal_state;
/* Set by the handler, cleared by the hook that raises: one Ctrl-C raises
 * "interrupted" once, in whichever thread or coroutine runs next. */
static volatile sig_atomic_t hook_pending;

enum { HOOK_COUNT = 1000 };

/* Installed on the state for good; lua_newthread copies it to every
 * coroutine, so a loop inside a coroutine stops too. The handler's count-1
 * hook (for immediacy) is put back to this one here. */
static void interrupt_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	if (lua_gethookmask(L) != LUA_MASKCOUNT || lua_gethookcount(L) != HOOK_COUNT)
		lua_sethook(L, interrupt_hook, LUA_MASKCOUNT, HOOK_COUNT);
	if (hook_pending) {
		hook_pending = 0;
		/* a binding raised it first: its position, not this line's */
		if (lua_getfield(L, LUA_REGISTRYINDEX, FT_INTERRUPTED_AT) == LUA_TSTRING)
			lua_error(L);
		lua_pop(L, 1);
		/* level 0 in a hook is the function it interrupted (a C one when
		 * the hook is a call's): the innermost Lua line goes with the
		 * message through any pcall that raises it again; inside the
		 * scripts' shared library (scripts/lib/), the script's line that
		 * called into it, which says where the run was */
		lua_Debug where;
		int found = 0;
		char inner[LUA_IDSIZE + 24];
		for (int level = 0; lua_getstack(L, level, &where); level++) {
			if (!lua_getinfo(L, "Sl", &where) || where.currentline <= 0)
				continue;
			int in_lib = where.source[0] == '@' && strstr(where.source, "/scripts/lib/") != NULL;
			if (!found++)
				snprintf(inner, sizeof inner, "%s:%d", where.short_src, where.currentline);
			if (!in_lib) {
				/* not luaL_error: it would put the caller's position first */
				lua_pushfstring(L, "interrupted at %s:%d", where.short_src, where.currentline);
				lua_error(L);
			}
		}
		if (found) {
			lua_pushfstring(L, "interrupted at %s", inner);
			lua_error(L);
		}
		luaL_error(L, "interrupted");
	}
}

static void on_sigint(int sig)
{
	signal(sig, ft_settings_on_signal); /* a second Ctrl-C kills at once, settings restored */
	ft_interrupted = 1;
	hook_pending = 1;
	lua_sethook(signal_state, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* Calls the function below narg arguments; leaves results or an error. */
static int docall(lua_State *L, int narg, int nres)
{
	int base = lua_gettop(L) - narg;
	lua_pushcfunction(L, ft_msghandler);
	lua_insert(L, base);
	signal_state = L;
	ft_interrupted = 0;
	hook_pending = 0;
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, FT_INTERRUPTED_AT);
	lua_sethook(L, interrupt_hook, LUA_MASKCOUNT, HOOK_COUNT);
	signal(SIGINT, on_sigint);
	int status = lua_pcall(L, narg, nres, base);
	signal(SIGINT, ft_settings_on_signal); /* the default action, settings restored */
	lua_remove(L, base);
	return status;
}

/* Prints the error on top and pops it. Only strings and numbers are
 * printed as they are: anything else (an error from __close, a load error
 * that bypassed the handler) is named by its type, never "(null)", and no
 * metamethod runs here, outside a protected call. */
static int report(lua_State *L, int status)
{
	if (status != LUA_OK) {
		const char *msg = NULL;
		int t = lua_type(L, -1);
		if (t == LUA_TSTRING || t == LUA_TNUMBER)
			msg = lua_tostring(L, -1);
		fflush(stdout); /* what was printed comes before the error */
		if (ft_stderr_line_open)
			ft_stderr_end_line();
		else if (ft_interrupted)
			fputc('\n', stderr); /* a line of the script's own may be open */
		if (msg)
			fprintf(stderr, "ftrun: %s\n", msg);
		else
			fprintf(stderr, "ftrun: (error object is a %s value)\n", luaL_typename(L, -1));
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

/* package.path gains the script's lib/ and the scripts' library (beside
 * the executable, or installed). */
static void set_module_path(lua_State *L, const char *script)
{
	char copy[PATH_MAX];
	snprintf(copy, sizeof copy, "%s", script ? script : ".");
	const char *script_dir = script ? dirname(copy) : ".";
	lua_getglobal(L, "package");
	lua_pushfstring(L, "%s/lib/?.lua;%s/?.lua;", script_dir, ft_script_lib_dir());
	lua_getfield(L, -2, "path");
	lua_concat(L, 2);
	lua_setfield(L, -2, "path");
	lua_pop(L, 1);
}

/* arg as the standalone lua sets it: arg[0] the script (as found), arg[-k]
 * what came before it, arg[1..] its arguments. */
static void set_arg(lua_State *L, char **argv, int argc, int script, const char *path)
{
	lua_createtable(L, argc - script > 0 ? argc - script - 1 : 0, script + 1);
	for (int i = 0; i < argc; i++) {
		lua_pushstring(L, i == script && script && path ? path : argv[i]);
		lua_rawseti(L, -2, i - script);
	}
	lua_setglobal(L, "arg");
}

/* path NULL: the script is read from stdin ("ftrun -"). */
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

/* --- main ------------------------------------------------------------- */

static int usage_error(const char *fmt, const char *what)
{
	fprintf(stderr, "ftrun: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\ntry 'ftrun --help'\n");
	return EXIT_USAGE;
}

/* What main parsed, for pmain; pmain leaves its status here. */
struct job {
	int argc;
	char **argv;
	int script, want_repl, has_code;
	const char *path; /* NULL for "-" */
	int status;
};

/* Everything that touches Lua, run by lua_pcall as lua.c's pmain is: an
 * error anywhere (out of memory in set-up, say) is reported, never a panic. */
static int pmain(lua_State *L)
{
	struct job *j = lua_touserdata(L, 1);
	lua_settop(L, 0);
	ft_open_libs(L);
	set_module_path(L, j->script ? j->path : NULL);
	set_arg(L, j->argv, j->argc, j->script, j->path); /* no script: arg[0] is ftrun itself */

	int status = LUA_OK;
	for (int i = 1; i < j->argc && status == LUA_OK && (!j->script || i < j->script); i++)
		if (strcmp(j->argv[i], "-e") == 0)
			status = run_string(L, j->argv[++i]);
	if (status == LUA_OK && j->script)
		status = run_script(L, j->path, j->argv + j->script + 1, j->argc - j->script - 1);
	if (status == LUA_OK && ft_interrupted) {
		/* the script caught the interrupt and went on: the run still ends */
		lua_pushliteral(L, "interrupted");
		status = report(L, LUA_ERRRUN);
	}
	if (status == LUA_OK && (j->want_repl || (!j->script && !j->has_code)))
		ft_repl(L, docall, report);
	j->status = status;
	return 0;
}

/* Puts back every sysfs setting the run changed (the ft.set_* calls) and
 * names each one that would not go back. */
static int restore_settings(void)
{
	int err = ft_settings_restore();
	ft_stderr_end_line();
	for (size_t i = 0; i < ft_settings_count(); i++) {
		const struct ft_setting *e = ft_setting_at(i);
		if (e->foreign)
			fprintf(stderr, "ftrun: warning: %s read %s at the end, not %s as this run left it: "
			        "something else changed it meanwhile; written back to %s\n",
			        e->path, e->found, e->left, e->before);
	}
	for (size_t i = 0; err && i < ft_settings_count(); i++) {
		const struct ft_setting *e = ft_setting_at(i);
		if (!e->restored)
			fprintf(stderr, "ftrun: could not restore %s to %s (it reads %s): %s\n",
			        e->path, e->before, e->after,
			        e->err == EAGAIN ? "the kernel kept another value" : strerror(e->err));
	}
	return err;
}

/* What was printed must have reached its file: on a full disk or a closed
 * stdout the buffered table is lost at exit, and the run would still say 0
 * (coreutils' close_stdout). Registered first, so it runs last. */
static void close_stdout(void)
{
	errno = 0;
	int failed = fflush(stdout) != 0 || ferror(stdout);
	int err = errno;
	if (failed && !err && write(fileno(stdout), "\n", 1) < 0)
		err = errno; /* the failed write's errno is long gone: the output, already cut, says why again */
	if (fclose(stdout) != 0 && (failed || errno != EBADF)) {
		failed = 1;
		if (!err)
			err = errno;
	}
	if (failed) {
		fprintf(stderr, "ftrun: write error%s%s\n", err ? ": " : "", err ? strerror(err) : "");
		_exit(EXIT_LUA_ERROR);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], FT_TASK_WORKER_FLAG) == 0)
		return ft_task_worker(argc, argv); /* a task of ft.tasks's processes mode */
	atexit(close_stdout);
	int script = 0, want_repl = 0, has_code = 0;
	for (int i = 1; i < argc && !script; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			print_scripts();
			return EXIT_SUCCESS;
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
			puts(ft_version_line());
			return EXIT_SUCCESS;
		} else if (strcmp(a, "--restore") == 0) {
			int restored, left;
			ft_settings_recover(&restored, &left, true);
			if (!restored && !left)
				fputs("ftrun: no killed run left settings changed\n", stderr);
			return left ? EXIT_LUA_ERROR : EXIT_SUCCESS;
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
		} else if (strcmp(a, "-") == 0) {
			script = i; /* the script is stdin, as lua - */
		} else if (a[0] == '-') {
			return usage_error("unknown option '%s'", a);
		} else {
			script = i;
		}
	}

	char path[PATH_MAX];
	int from_stdin = script && strcmp(argv[script], "-") == 0;
	if (script && !from_stdin && ft_find_script(argv[script], path, sizeof path) != 0) {
		fprintf(stderr, "ftrun: cannot open script '%s' (looked for %s)\n", argv[script], path);
		return EXIT_USAGE;
	}
	struct stat st;
	if (script && !from_stdin && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "ftrun: '%s' is a directory, not a script\ntry 'ftrun --help'\n", path);
		return EXIT_USAGE; /* a mistyped command line, as a missing script is */
	}

	ft_settings_guard(); /* before any setting can change */
	/* SIGINT stops a run whatever it inherited: a non-interactive shell
	 * starts its background jobs with SIGINT ignored, and `kill -INT` is
	 * how a script stops a run (exit 130) with or without AB; from here
	 * to the first call as after the last one it dies, settings restored.
	 * (SIGHUP and the rest keep an inherited SIG_IGN: nohup.) */
	signal(SIGINT, ft_settings_on_signal);
	int restored, left; /* what a killed run left: put back, and said */
	/* that another run holds the lock meanwhile is said to a script, which
	 * measures under the settings; -e and the REPL only probe */
	ft_settings_recover(&restored, &left, script != 0);
	if (script)
		ft_folio_warn_unexpected(); /* a script measures under them; -e and the REPL only probe */
	lua_State *L = luaL_newstate();
	if (!L) {
		fprintf(stderr, "ftrun: cannot create the Lua state: out of memory\n");
		return EXIT_LUA_ERROR;
	}
	struct job j = {argc, argv, script, want_repl, has_code,
	                script && !from_stdin ? path : NULL, LUA_OK};
	lua_pushcfunction(L, pmain);
	lua_pushlightuserdata(L, &j);
	int status = lua_pcall(L, 1, 0, 0);
	if (status != LUA_OK)
		j.status = report(L, status);

	int code = exit_status(j.status);
	lua_close(L); /* releases every buffer still held: hugetlb pages go back first */
	if (restore_settings() != 0 && code == EXIT_SUCCESS)
		code = EXIT_LUA_ERROR; /* the run left the system changed */
	return code;
}
