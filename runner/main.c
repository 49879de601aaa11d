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
#include <readline/history.h>
#include <readline/readline.h>

#include "../core/hugepages.h"
#include "../core/interrupt.h"
#include "../core/restore.h"
#include "ft.h"

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
	"the executable, so `./ftrun cycles.lua` runs scripts/cycles.lua.\n"
	"With no script, or with -i, opens a REPL.\n"
	"\n"
	"options:\n"
	"  -e CODE      run CODE (may be given more than once)\n"
	"  -i           enter the REPL after running the script or -e code\n"
	"  -h, --help   show this help\n"
	"  -v, --version\n"
	"  --restore    write back the settings a killed run left changed, then exit\n"
	"  --           stop handling options\n"
	"  -            run the script read from stdin (as lua -)\n"
	"\n"
	"exit status: 0 success, 1 Lua error (message and traceback on stderr)\n"
	"or a changed system setting that would not go back, 2 usage error,\n"
	"130 interrupted (SIGINT). Settings changed by ft.set_folio and\n"
	"ft.set_hugetlb_pages are restored at exit and on SIGINT, SIGTERM, SIGHUP,\n"
	"SIGQUIT and SIGPIPE; a run killed otherwise is undone by the next start.\n"
	"A run changing them holds /run/lock/ftrun-settings.lock: another waits,\n"
	"or with NOWAIT=1 is refused.\n"
	"\n"
	"The main job: `./ftrun cycles.lua` (see README.md for its knobs).\n";

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
		if (ft_interrupted)
			fputc('\n', stderr); /* a progress line may be open */
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

/* As given, then scripts/NAME beside the executable; that one is made
 * absolute (realpath), so arg[0] and tracebacks name the file wherever the
 * runner was started from. */
static int find_script(const char *name, const char *exe_dir, char *out, size_t size)
{
	if ((size_t)snprintf(out, size, "%s", name) < size && access(out, R_OK) == 0)
		return 0;
	char found[PATH_MAX];
	if ((size_t)snprintf(found, sizeof found, "%s/scripts/%s", exe_dir, name) >= sizeof found ||
	    access(found, R_OK) != 0)
		return -1;
	char real[PATH_MAX];
	const char *use = realpath(found, real) ? real : found;
	if ((size_t)snprintf(out, size, "%s", use) >= size)
		return -1;
	return 0;
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

/* --- the REPL --------------------------------------------------------- */

/* The state tab completion looks names up in. */
static lua_State *repl_state;

/* Ctrl-C at the prompt: drop the line, keep the REPL. */
static void on_prompt_sigint(int sig)
{
	(void)sig;
	rl_free_line_state();
	rl_replace_line("", 0);
	rl_crlf();
	rl_on_new_line();
	rl_redisplay();
}

/* A line and its length (a NUL inside is kept, to be refused). */
static char *read_line(int interactive, const char *prompt, size_t *len)
{
	if (interactive) {
		struct sigaction sa = {0}, old;
		sa.sa_handler = on_prompt_sigint;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old);
		char *line = readline(prompt);
		sigaction(SIGINT, &old, NULL);
		if (line)
			*len = strlen(line);
		return line;
	}
	size_t size = 0;
	char *line = NULL;
	ssize_t n = getline(&line, &size, stdin);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	*len = (size_t)n;
	return line;
}

static int incomplete(lua_State *L, int status)
{
	static const char mark[] = "<eof>";
	size_t len;
	const char *msg = lua_tolstring(L, -1, &len);
	return status == LUA_ERRSYNTAX && msg && len >= sizeof mark - 1 &&
	       strcmp(msg + len - (sizeof mark - 1), mark) == 0;
}

/* An estimate of how many blocks, brackets and long strings are open, kept
 * across lines so piped input is only compiled when a statement may have
 * ended, not once per line of a long block. */
struct nesting {
	int depth;
	int long_level; /* -1: not in a long string or comment */
};

static int long_open(const char *s, size_t i, size_t n, size_t *after)
{
	size_t j = i + 1;
	int level = 0;
	while (j < n && s[j] == '=')
		level++, j++;
	if (j < n && s[j] == '[') {
		*after = j + 1;
		return level;
	}
	return -1;
}

static int word_is(const char *w, size_t len, const char *kw)
{
	return strlen(kw) == len && memcmp(w, kw, len) == 0;
}

static void scan_line(struct nesting *ns, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		if (ns->long_level >= 0) { /* look for ]=*] of the same level */
			if (s[i] == ']') {
				size_t j = i + 1;
				int level = 0;
				while (j < n && s[j] == '=')
					level++, j++;
				if (j < n && s[j] == ']' && level == ns->long_level) {
					ns->long_level = -1;
					i = j + 1;
					continue;
				}
			}
			i++;
			continue;
		}
		char c = s[i];
		size_t after;
		if (c == '-' && i + 1 < n && s[i + 1] == '-') {
			int level = i + 2 < n && s[i + 2] == '[' ? long_open(s, i + 2, n, &after) : -1;
			if (level < 0)
				return; /* a line comment */
			ns->long_level = level;
			i = after;
		} else if (c == '[' && (ns->long_level = long_open(s, i, n, &after)) >= 0) {
			i = after;
		} else if (c == '"' || c == '\'') {
			for (i++; i < n && s[i] != c; i++)
				if (s[i] == '\\')
					i++;
			i++;
		} else if (c == '(' || c == '{' || c == '[') {
			ns->depth++, i++;
		} else if (c == ')' || c == '}' || c == ']') {
			ns->depth--, i++;
		} else if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			size_t start = i;
			while (i < n && (s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
			                 (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
				i++;
			const char *w = s + start;
			size_t len = i - start;
			if (word_is(w, len, "function") || word_is(w, len, "if") ||
			    word_is(w, len, "do") || word_is(w, len, "repeat"))
				ns->depth++;
			else if (word_is(w, len, "end") || word_is(w, len, "until"))
				ns->depth--;
		} else {
			i++;
		}
	}
}

static int input_line; /* for messages about piped input */

/* Reads a line, refusing (with a message) any line that holds a NUL byte:
 * Lua strings would keep it but the chunk would not be what was typed. */
static char *next_line(int interactive, const char *prompt, size_t *len)
{
	for (;;) {
		char *line = read_line(interactive, prompt, len);
		if (!line)
			return NULL;
		input_line++;
		if (memchr(line, '\0', *len) == NULL)
			return line;
		fprintf(stderr, "ftrun: stdin:%d: line holds a NUL byte; ignored\n", input_line);
		fflush(stderr);
		free(line);
	}
}

static void remember(int interactive, const char *history, const char *text)
{
	if (!interactive || !text[0])
		return;
	add_history(text);
	if (history[0])
		append_history(1, history); /* saved as entered: a crash loses nothing */
}

/* The lines of an unfinished chunk, NUL-terminated. */
struct chunk {
	char *p;
	size_t n, cap;
};

static void chunk_add(struct chunk *c, const char *s, size_t len)
{
	if (c->n + len + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 256;
		while (c->n + len + 1 > cap)
			cap *= 2;
		char *p = realloc(c->p, cap);
		if (!p) {
			fprintf(stderr, "ftrun: out of memory reading stdin\n");
			exit(EXIT_LUA_ERROR);
		}
		c->p = p, c->cap = cap;
	}
	memcpy(c->p + c->n, s, len);
	c->n += len;
	c->p[c->n] = '\0';
}

/* Compiles "return LINE" so expressions print; else LINE itself, reading
 * more lines while the statement is unfinished. Leaves a function or an
 * error message; returns the status, or -1 at end of input. */
static int load_chunk(lua_State *L, int interactive, const char *history)
{
	size_t len;
	char *line = next_line(interactive, "> ", &len);
	if (!line)
		return -1;
	const char *text = line[0] == '=' ? line + 1 : line; /* Lua 5.2's "=expr" */
	lua_pushfstring(L, "return %s", text);
	int status = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin");
	lua_remove(L, -2);
	if (status == LUA_OK) {
		remember(interactive, history, line);
		free(line);
		return status;
	}
	lua_pop(L, 1);
	struct chunk c = {0};
	chunk_add(&c, line, len);
	struct nesting ns = {0, -1};
	scan_line(&ns, line, len);
	free(line);
	int lines = 1, tried_at = 0;
	for (;;) {
		/* Compile when the estimate says the statement may be complete,
		 * and at least whenever the chunk has doubled since the last try,
		 * so a wrong estimate costs O(n log n), not O(n^2). */
		if (interactive || (ns.depth <= 0 && ns.long_level < 0) || lines >= 2 * tried_at) {
			tried_at = lines;
			status = luaL_loadbuffer(L, c.p, c.n, "=stdin");
			if (!incomplete(L, status))
				break;
			lua_pop(L, 1);
		}
		char *more = next_line(interactive, ">> ", &len);
		if (!more) { /* end of input: report the error as it stands */
			status = luaL_loadbuffer(L, c.p, c.n, "=stdin");
			break;
		}
		chunk_add(&c, "\n", 1);
		chunk_add(&c, more, len);
		scan_line(&ns, more, len);
		free(more);
		lines++;
	}
	if (status == LUA_OK)
		remember(interactive, history, c.p);
	free(c.p);
	return status;
}

/* How the REPL shows a value: a table without __tostring shows its fields,
 * one level deep, keys sorted; everything else as print would. */
static const char show_source[] =
	"local function order(a, b)\n"
	"  local ta, tb = type(a), type(b)\n"
	"  if ta ~= tb then return ta < tb end\n"
	"  if ta == 'number' or ta == 'string' then return a < b end\n"
	"  return tostring(a) < tostring(b)\n"
	"end\n"
	"local function item(v)\n"
	"  if type(v) == 'string' then return string.format('%q', v) end\n"
	"  return tostring(v)\n"
	"end\n"
	"return function(v)\n"
	"  local mt = getmetatable(v)\n"
	"  if type(v) ~= 'table' or (type(mt) == 'table' and mt.__tostring) then return tostring(v) end\n"
	"  local n, parts, keys = #v, {}, {}\n"
	"  for i = 1, n do parts[#parts + 1] = item(v[i]) end\n"
	"  for k in next, v do\n"
	"    if not (math.type(k) == 'integer' and k >= 1 and k <= n) then keys[#keys + 1] = k end\n"
	"  end\n"
	"  table.sort(keys, order)\n"
	"  for _, k in ipairs(keys) do\n"
	"    local name = type(k) == 'string' and k:match('^[%a_][%w_]*$') and k or '[' .. item(k) .. ']'\n"
	"    parts[#parts + 1] = name .. ' = ' .. item(v[k])\n"
	"  end\n"
	"  return '{' .. table.concat(parts, ', ') .. '}'\n"
	"end\n";

/* Run protected: prints its arguments, tab-separated. The stack check is
 * here, inside the call, so too many results are an error, not a panic. */
static int show_results(lua_State *L)
{
	int n = lua_gettop(L);
	luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
	if (luaL_loadbuffer(L, show_source, sizeof show_source - 1, "=show") != LUA_OK)
		return lua_error(L);
	lua_call(L, 0, 1);
	for (int i = 1; i <= n; i++) {
		lua_pushvalue(L, -1);
		lua_pushvalue(L, i);
		lua_call(L, 1, 1);
		size_t len;
		const char *s = lua_tolstring(L, -1, &len);
		if (i > 1)
			fputc('\t', stdout);
		fwrite(s ? s : "?", 1, s ? len : 1, stdout);
		lua_pop(L, 1);
	}
	fputc('\n', stdout);
	fflush(stdout);
	return 0;
}

static void print_results(lua_State *L)
{
	int n = lua_gettop(L);
	if (n == 0)
		return;
	if (!lua_checkstack(L, 1)) { /* not even room for the printer */
		lua_settop(L, 0);
		lua_pushliteral(L, "too many results to print");
		report(L, LUA_ERRRUN);
		return;
	}
	lua_pushcfunction(L, show_results);
	lua_insert(L, 1);
	report(L, docall(L, n, 0));
}

/* Tab completion: globals, or the fields of ft after "ft.". */
static char *complete_name(const char *text, int state)
{
	static int index;
	lua_State *L = repl_state;
	if (state == 0)
		index = 0;
	const char *dot = strchr(text, '.');
	int in_ft = dot && dot - text == 2 && strncmp(text, "ft", 2) == 0;
	if (dot && !in_ft)
		return NULL;
	const char *prefix = in_ft ? dot + 1 : text;
	size_t plen = strlen(prefix);
	if (in_ft) {
		lua_getglobal(L, "ft");
		if (!lua_istable(L, -1)) {
			lua_pop(L, 1);
			return NULL;
		}
	} else {
		lua_pushglobaltable(L);
	}
	/* the n-th matching key, counted afresh each call: tables are small */
	int seen = 0;
	char *match = NULL;
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			continue;
		const char *k = lua_tostring(L, -1);
		if (strncmp(k, prefix, plen) == 0 && seen++ == index) {
			size_t klen = strlen(k);
			match = malloc(klen + 4);
			if (match)
				snprintf(match, klen + 4, "%s%s", in_ft ? "ft." : "", k);
			lua_pop(L, 1);
			break;
		}
	}
	lua_pop(L, 1);
	index++;
	return match;
}

static char **complete(const char *text, int start, int end)
{
	(void)start, (void)end;
	rl_attempted_completion_over = 1; /* no file names */
	return rl_completion_matches(text, complete_name);
}

static void repl(lua_State *L)
{
	int interactive = isatty(STDIN_FILENO);
	char history[PATH_MAX] = "";
	const char *home = getenv("HOME");
	if (interactive) {
		repl_state = L;
		rl_attempted_completion_function = complete;
		rl_catch_signals = 0; /* our prompt handler owns SIGINT */
		if (home) {
			snprintf(history, sizeof history, "%s/.ftrun_history", home);
			if (read_history(history) != 0)
				write_history(history); /* create it, so appends land */
		}
		printf("ftrun %s (%s), ft loaded; Ctrl-D to leave\n", FT_VERSION, LUA_RELEASE);
	}
	int status;
	lua_settop(L, 0);
	for (;;) {
		ft_interrupted = 0; /* a Ctrl-C of the last pass is spent */
		status = load_chunk(L, interactive, history);
		if (status == -1)
			break;
		if (status == LUA_OK)
			status = docall(L, 0, LUA_MULTRET);
		if (status == LUA_OK)
			print_results(L);
		else
			report(L, status);
		lua_settop(L, 0);
	}
	if (interactive)
		putchar('\n');
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

/* What main parsed, for pmain; pmain leaves its status here. */
struct job {
	int argc;
	char **argv;
	int script, want_repl, has_code;
	const char *path; /* NULL for "-" */
	const char *exe_dir;
	int status;
};

/* Everything that touches Lua, run by lua_pcall as lua.c's pmain is: an
 * error anywhere (out of memory in set-up, say) is reported, never a panic. */
static int pmain(lua_State *L)
{
	struct job *j = lua_touserdata(L, 1);
	lua_settop(L, 0);
	ft_open_libs(L);
	set_module_path(L, j->script ? j->path : NULL, j->exe_dir);
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
		repl(L);
	j->status = status;
	return 0;
}

/* Puts back every sysfs setting the run changed (the ft.set_* calls) and
 * names each one that would not go back. */
static int restore_settings(void)
{
	int err = ft_settings_restore();
	for (size_t i = 0; i < ft_settings_count(); i++) {
		const struct ft_setting *e = ft_setting_at(i);
		if (e->foreign)
			fprintf(stderr, "ftrun: warning: %s read %s at the end, not %s as this run left it: "
			        "something else changed it meanwhile; written back to %s\n",
			        e->path, e->found, e->after, e->before);
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

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], FT_TASK_WORKER_FLAG) == 0)
		return ft_task_worker(argc, argv); /* a task of ft.tasks's processes mode */
	int script = 0, want_repl = 0, has_code = 0;
	for (int i = 1; i < argc && !script; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			return EXIT_SUCCESS;
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
			printf("ftrun %s (%s)\n", FT_VERSION, LUA_RELEASE);
			return EXIT_SUCCESS;
		} else if (strcmp(a, "--restore") == 0) {
			int restored, left;
			ft_settings_recover(&restored, &left);
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

	char exe_dir[PATH_MAX], path[PATH_MAX];
	executable_dir(exe_dir, sizeof exe_dir);
	int from_stdin = script && strcmp(argv[script], "-") == 0;
	if (script && !from_stdin && find_script(argv[script], exe_dir, path, sizeof path) != 0) {
		fprintf(stderr, "ftrun: cannot open script '%s' (looked for %s and %s/scripts/%s)\n",
		        argv[script], argv[script], exe_dir, argv[script]);
		return EXIT_USAGE;
	}

	ft_settings_guard(); /* before any setting can change */
	int restored, left; /* what a killed run left: put back, and said */
	ft_settings_recover(&restored, &left);
	if (script)
		ft_folio_warn_unexpected(); /* a script measures under them; -e and the REPL only probe */
	lua_State *L = luaL_newstate();
	if (!L) {
		fprintf(stderr, "ftrun: cannot create the Lua state: out of memory\n");
		return EXIT_LUA_ERROR;
	}
	struct job j = {argc, argv, script, want_repl, has_code,
	                script && !from_stdin ? path : NULL, exe_dir, LUA_OK};
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
