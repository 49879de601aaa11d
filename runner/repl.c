/* The REPL. Each statement is compiled when it may have ended: a cheap
 * estimate of open blocks, brackets and long strings decides, on a
 * terminal as on a pipe, with a compile at least whenever the pending
 * chunk has doubled, so a pasted block of n lines costs O(n log n) lines
 * compiled, never one compile per line (O(n^2)). */
#include "repl.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <readline/history.h>
#include <readline/readline.h>

#include "../core/interrupt.h"
#include "ft.h"

/* The state tab completion looks names up in. */
static lua_State *repl_state;
/* Set when Ctrl-C cleared the prompt: a pending statement is dropped. */
static volatile sig_atomic_t prompt_cleared;
/* Chunks compiled so far; FTRUN_TEST_REPL_COMPILES (a test hook) prints
 * the count at the end, so a test can check the work a paste costs. */
static long compiles;

/* Ctrl-C at the prompt: drop the line and any statement pending, keep
 * the REPL. */
static void on_prompt_sigint(int sig)
{
	(void)sig;
	prompt_cleared = 1;
	rl_set_prompt("> ");
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

static int compile(lua_State *L, const char *s, size_t n)
{
	compiles++;
	return luaL_loadbuffer(L, s, n, "=stdin");
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
/* A line read after Ctrl-C dropped the statement it would have continued:
 * the next one to handle. */
static char *pending;
static size_t pending_len;
/* load_chunk's answer when nothing is left to run, and at end of input. */
enum { NOTHING = -2, END = -1 };

/* Reads a line, refusing (with a message) any line that holds a NUL byte:
 * Lua strings would keep it but the chunk would not be what was typed. */
static char *next_line(int interactive, const char *prompt, size_t *len)
{
	if (pending) {
		char *line = pending;
		*len = pending_len;
		pending = NULL;
		return line;
	}
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

enum { HISTORY_KEPT = 5000 }; /* lines of ~/.ftrun_history kept between sessions */

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
			exit(EXIT_FAILURE);
		}
		c->p = p, c->cap = cap;
	}
	memcpy(c->p + c->n, s, len);
	c->n += len;
	c->p[c->n] = '\0';
}

/* Compiles "return LINE" so expressions print; else LINE itself, reading
 * more lines while the statement is unfinished. Leaves a function or an
 * error message; returns the status, END at end of input, or NOTHING. */
/* "local" at the start of a chunk: its names end with it, which a REPL
 * user does not expect (said once a session). */
static void note_locals(const char *text)
{
	static int noted;
	text += strspn(text, " \t\n");
	if (noted || strncmp(text, "local", 5) != 0 || !strchr(" \t", text[5]))
		return;
	noted = 1;
	fputs("ftrun: note: each line is a chunk of its own, so its locals end with it; "
	      "leave 'local' out to keep a name for the next line\n", stderr);
}

static int load_chunk(lua_State *L, int interactive, const char *history)
{
	size_t len;
	char *line = next_line(interactive, "> ", &len);
	if (!line)
		return END;
	const char *text = line[0] == '=' ? line + 1 : line; /* Lua 5.2's "=expr" */
	lua_pushfstring(L, "return %s", text);
	int status = compile(L, lua_tostring(L, -1), lua_rawlen(L, -1));
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
		if ((ns.depth <= 0 && ns.long_level < 0) || lines >= 2 * tried_at) {
			tried_at = lines;
			status = compile(L, c.p, c.n);
			if (!incomplete(L, status))
				break;
			lua_pop(L, 1);
		}
		prompt_cleared = 0;
		char *more = next_line(interactive, ">> ", &len);
		if (!more) { /* end of input: report the error as it stands */
			status = compile(L, c.p, c.n);
			break;
		}
		if (prompt_cleared) { /* Ctrl-C at ">>": this line starts afresh */
			pending = more, pending_len = len;
			free(c.p);
			return NOTHING;
		}
		chunk_add(&c, "\n", 1);
		chunk_add(&c, more, len);
		scan_line(&ns, more, len);
		free(more);
		lines++;
	}
	if (status == LUA_OK) {
		remember(interactive, history, c.p);
		if (interactive)
			note_locals(c.p);
	}
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

#define SHOW_KEY "ft.repl.show"

/* Run protected: prints its arguments, tab-separated, with the printer
 * compiled once per state. The stack check is here, inside the call, so
 * too many results are an error, not a panic. */
static int show_results(lua_State *L)
{
	int n = lua_gettop(L);
	luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
	if (lua_getfield(L, LUA_REGISTRYINDEX, SHOW_KEY) != LUA_TFUNCTION) {
		lua_pop(L, 1);
		if (luaL_loadbuffer(L, show_source, sizeof show_source - 1, "=show") != LUA_OK)
			return lua_error(L);
		lua_call(L, 0, 1);
		lua_pushvalue(L, -1);
		lua_setfield(L, LUA_REGISTRYINDEX, SHOW_KEY);
	}
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

static void print_results(lua_State *L, ft_docall docall, ft_report report)
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

/* The table a name's fields come from after "name." or "name:": a table's
 * own, or, for a value with a metatable (a buffer, a samples object), its
 * methods (__methods, or an __index table). Pushes it, or returns 0. */
static int fields_of(lua_State *L, const char *name, size_t len)
{
	lua_pushglobaltable(L);
	lua_pushlstring(L, name, len);
	lua_rawget(L, -2);
	lua_remove(L, -2);
	if (lua_istable(L, -1))
		return 1;
	if (lua_getmetatable(L, -1)) {
		lua_remove(L, -2);
		if (lua_getfield(L, -1, "__methods") == LUA_TTABLE ||
		    (lua_pop(L, 1), lua_getfield(L, -1, "__index") == LUA_TTABLE)) {
			lua_remove(L, -2);
			return 1;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return 0;
}

/* Tab completion: globals, or after "name." the fields of a table and
 * after "name:" (or "name." on a buffer) its methods. */
static char *complete_name(const char *text, int state)
{
	static int index;
	lua_State *L = repl_state;
	if (state == 0)
		index = 0;
	size_t base = strcspn(text, ".:");
	int method = text[base] == ':';
	const char *prefix = text[base] ? text + base + 1 : text;
	if (text[base] && strpbrk(prefix, ".:"))
		return NULL;
	if (text[base]) {
		if (!fields_of(L, text, base))
			return NULL;
	} else {
		lua_pushglobaltable(L);
	}
	size_t plen = strlen(prefix);
	/* the n-th matching key, counted afresh each call: tables are small */
	int seen = 0;
	char *match = NULL;
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		int is_function = lua_isfunction(L, -1);
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING || (method && !is_function))
			continue;
		const char *k = lua_tostring(L, -1);
		if (strncmp(k, "__", 2) != 0 && strncmp(k, prefix, plen) == 0 && seen++ == index) {
			size_t size = base + 1 + strlen(k) + 1;
			match = malloc(size);
			if (match)
				snprintf(match, size, "%.*s%s", (int)(text[base] ? base + 1 : 0), text, k);
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

/* `help`, typed at the prompt: what to try first, and where the rest is
 * (doc/ft.md in a checkout, share/doc/ftrun/ft.md installed). */
static const char help_source[] =
	"local dir = require('ft').project_dir\n"
	"local doc = dir .. '/doc/ft.md'\n"
	"local f = io.open(doc)\n"
	"if f then f:close() else doc = dir .. '/../share/doc/ftrun/ft.md' end\n"
	"local text = table.concat({\n"
	"  'Each line runs as Lua 5.4, with ft loaded. To try first:',\n"
	"  '  b = ft.mmap(64 << 20)     a fresh 64 MiB anonymous mapping (ft.mmap(n, {thp = \"always\"}) and more)',\n"
	"  '  b:touch(1)                stores 1 into every page; returns its ns (the first touch takes the faults)',\n"
	"  '  f = ft.faults(); b:touch(2); print(ft.faults() - f)   the faults a pass took',\n"
	"  '  b:sum_bytes(), b:unmap()  reads one byte a page back; releases the mapping',\n"
	"  '  ft.machine(), ft.clock()  this machine; the clocks\\' tick and cost',\n"
	"  'Tab completes names: ft.<Tab> the functions, b:<Tab> a buffer\\'s methods.',\n"
	"  'Each line is a chunk of its own: a local ends with its line; leave local out to keep a name.',\n"
	"  'Ctrl-C stops what runs, Ctrl-D leaves. Scripts: ftrun cycles.lua --help; man ftrun.',\n"
	"  'The reference of every ft function and of the harness: ' .. doc,\n"
	"}, '\\n')\n"
	"help = setmetatable({}, { __tostring = function() return text end,\n"
	"  __call = function() print(text) end })\n";

void ft_repl(lua_State *L, ft_docall docall, ft_report report)
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
			/* a paste of thousands of lines must not grow the file for ever */
			history_truncate_file(history, HISTORY_KEPT);
			stifle_history(HISTORY_KEPT);
		}
		printf("ftrun %s (%s), ft loaded; Ctrl-D to leave\n", FT_VERSION, LUA_RELEASE);
	}
	int status;
	lua_settop(L, 0);
	if (luaL_loadbuffer(L, help_source, sizeof help_source - 1, "=help") == LUA_OK)
		report(L, docall(L, 0, 0));
	else
		report(L, LUA_ERRSYNTAX);
	for (;;) {
		ft_interrupted = 0; /* a Ctrl-C of the last pass is spent */
		status = load_chunk(L, interactive, history);
		if (status == END)
			break;
		if (status == NOTHING)
			continue;
		if (status == LUA_OK)
			status = docall(L, 0, LUA_MULTRET);
		if (status == LUA_OK)
			print_results(L, docall, report);
		else
			report(L, status);
		lua_settop(L, 0);
	}
	if (interactive)
		putchar('\n');
	fflush(stdout);
	if (getenv("FTRUN_TEST_REPL_COMPILES"))
		fprintf(stderr, "ftrun: the REPL compiled %ld chunks\n", compiles);
}

