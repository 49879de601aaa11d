/* ft.tasks(n, chunk, opts) and ft.start: n tasks, each with a Lua state of
 * its own and ft loaded, running the function a chunk returns, released
 * together from a barrier; threads of this process, or processes of their
 * own (ftrun again, started by core/tasks.c). This is the starter's side:
 * the options, the chunk compiled once here, the jobs, the launch, and the
 * report; the inside of a task is task.c. Values cross as plain values
 * (ft_values.c). */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <lauxlib.h>

#include "../core/clock.h"
#include "../core/interrupt.h"
#include "../core/tasks.h"
#include "ft_aux.h"
#include "ft_openers.h"
#include "ft_timer.h"
#include "ft_values.h"
#include "task.h"

#define TASKS_META "ft.tasks"
#define GRACE_NS 2000000000LL   /* after a stop, how long a task may take */

enum { MAX_TASKS = 256 };

/* A handle (userdata); user value 1: the buffers and memfds lent to it. */
struct group {
	enum ft_task_mode mode;
	int count, spawned;
	enum { MADE, RUNNING, FINISHED } state;
	bool lent;
	struct ft_task_shared shared;
	struct ft_threads threads;
	struct ft_task *tasks;
	struct ft_child *children;
	int64_t release_ns;
};

struct options {
	enum ft_task_mode mode;
	bool pin;
	int args;        /* stack index of the args table, 0: none */
	int seconds;     /* stack index of seconds as given, 0: none */
};

static void check_options(lua_State *L, int arg, struct options *o)
{
	enum { MODE, PIN, ARGS, SECONDS };
	static const struct ft_opt opts[] = {
		[MODE] = { "mode", FT_OPT_CHOICE, ft_task_mode_names, NULL },
		[PIN] = { "pin", FT_OPT_BOOLEAN, NULL, NULL },
		[ARGS] = { "args", FT_OPT_TABLE, NULL, "a list of arguments" },
		[SECONDS] = { "seconds", FT_OPT_NUMBER, NULL, "a number above 0 and at most 86400" },
		{ NULL, 0, NULL, NULL }
	};
	int v = ft_check_opts(L, arg, "ft.tasks", opts);
	*o = (struct options){ (enum ft_task_mode)luaL_optinteger(L, v + MODE, FT_TASK_THREADS),
	                       lua_toboolean(L, v + PIN), lua_isnil(L, v + ARGS) ? 0 : v + ARGS,
	                       lua_isnil(L, v + SECONDS) ? 0 : v + SECONDS };
	lua_Number seconds = o->seconds ? lua_tonumber(L, o->seconds) : 1;
	if (!(seconds > 0 && seconds <= 86400))
		luaL_error(L, "ft.tasks option seconds must be %s, got %s", opts[SECONDS].want,
		           luaL_tolstring(L, o->seconds, NULL));
}

/* Writes the dump of a function into a luaL_Buffer made on first use. */
struct dump {
	bool init;
	luaL_Buffer b;
};

static int dump_writer(lua_State *L, const void *p, size_t n, void *ud)
{
	struct dump *d = ud;
	if (!d->init) {
		d->init = true;
		luaL_buffinit(L, &d->b);
	}
	luaL_addlstring(&d->b, p, n);
	return 0;
}

/* The chunk compiled once, here, before any task exists (as lua-llthreads2
 * loads a thread's code in its caller): a syntax error is one error, and
 * the tasks load the same bytecode. Pushes it as a string. A chunk "@name"
 * is a script, found as the command line finds one. */
static void push_compiled_chunk(lua_State *L, int arg)
{
	size_t len;
	const char *chunk = luaL_checklstring(L, arg, &len);
	int status;
	if (chunk[0] == '@') {
		char path[PATH_MAX];
		if (strlen(chunk) != len)
			luaL_argerror(L, arg, "a script's name holds an embedded NUL");
		if (ft_find_script(chunk + 1, path, sizeof path) != 0)
			luaL_error(L, "ft.tasks: cannot open task script '%s' (looked for %s)", chunk + 1,
			           path);
		status = luaL_loadfilex(L, path, "t");
	} else {
		status = luaL_loadbufferx(L, chunk, len, chunk, "t");
	}
	if (status != LUA_OK)
		luaL_error(L, "ft.tasks: the task chunk does not compile: %s", lua_tostring(L, -1));
	struct dump d = { false, { 0 } };
	lua_dump(L, dump_writer, &d, 0);
	if (!d.init)
		luaL_error(L, "ft.tasks: the task chunk could not be dumped");
	luaL_pushresult(&d.b);
	lua_remove(L, -2); /* the function */
}

static void give_back(lua_State *L, int handle, struct group *g)
{
	if (!g->lent)
		return;
	lua_getiuservalue(L, handle, 1);
	ft_values_lend(L, -1, -1);
	lua_pop(L, 1);
	g->lent = false;
}

/* Joins the threads or reads the children to their end and reaps them. */
static void finish(struct group *g)
{
	if (g->state != RUNNING)
		return;
	if (g->mode == FT_TASK_THREADS) {
		ft_threads_join(&g->threads);
	} else {
		/* a child still waiting for its release reads the end: abort */
		for (int i = 0; i < g->spawned; i++)
			if (g->children[i].job_fd >= 0) {
				close(g->children[i].job_fd);
				g->children[i].job_fd = -1;
			}
		ft_children_read(g->children, g->spawned, SIZE_MAX, &g->shared.ctl->abort, GRACE_NS);
		ft_children_reap(g->children, g->spawned);
	}
	g->state = FINISHED;
}

static void free_group(struct group *g)
{
	for (int i = 0; g->tasks && i < g->count; i++) {
		free(g->tasks[i].job);
		free(g->tasks[i].record);
		free(g->tasks[i].fail);
	}
	free(g->tasks);
	g->tasks = NULL;
	if (g->children)
		ft_children_free(g->children, g->spawned);
	free(g->children);
	g->children = NULL;
	ft_task_shared_release(&g->shared);
}

/* Stops what still runs (the abort flag, as if a task had failed), waits
 * for it, and frees everything: __gc and __close of a handle. */
static int l_gc(lua_State *L)
{
	struct group *g = luaL_checkudata(L, 1, TASKS_META);
	if (g->state == RUNNING) {
		int none = 0;
		atomic_compare_exchange_strong(&g->shared.ctl->abort, &none, -1);
		finish(g);
	}
	give_back(L, 1, g);
	free_group(g);
	return 0;
}

/* Pushes task i's record as a table, or one that says why there is none. */
static void push_record(lua_State *L, struct group *g, int i)
{
	struct ft_task *t = &g->tasks[i];
	const char *p = t->record;
	size_t n = t->record_len;
	if (g->mode == FT_TASK_PROCESSES) {
		struct ft_child *c = &g->children[i];
		p = c->len > 1 ? c->out + 1 : NULL;
		n = c->len > 1 ? c->len - 1 : 0;
	}
	if (p) {
		ft_values_decode(L, p, n, FT_CROSS_RESULT);
		return;
	}
	lua_createtable(L, 0, 4);
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "ok");
	ft_set_integer(L, "index", i + 1);
	ft_set_string(L, "phase", "run");
	if (g->mode == FT_TASK_THREADS) {
		ft_set_string(L, "error", t->fail ? t->fail : "no result");
	} else {
		struct ft_child *c = &g->children[i];
		if (i >= g->spawned)
			lua_pushliteral(L, "its process was not started");
		else if (WIFSIGNALED(c->status))
			lua_pushfstring(L, "its process ended by signal %d (%s) without a result",
			                WTERMSIG(c->status), strsignal(WTERMSIG(c->status)));
		else
			lua_pushfstring(L, "its process exited with status %d without a result",
			                WEXITSTATUS(c->status));
		lua_setfield(L, -2, "error");
	}
}

/* Waits for the tasks and pushes the report, or raises the first failure
 * (the task that set the abort flag) with its traceback. */
static int collect(lua_State *L, int handle, struct group *g)
{
	finish(g);
	give_back(L, handle, g);
	int abort = atomic_load(&g->shared.ctl->abort);
	lua_createtable(L, 0, 6);
	int report = lua_gettop(L);
	ft_set_string(L, "mode", ft_task_mode_names[g->mode]);
	ft_set_integer(L, "count", g->count);
	lua_createtable(L, g->count, 0);
	int list = lua_gettop(L);
	int failed = 0;
	int64_t last = g->release_ns;
	for (int i = 0; i < g->count; i++) {
		push_record(L, g, i);
		lua_getfield(L, -1, "ok");
		bool ok = lua_toboolean(L, -1);
		lua_pop(L, 1);
		if (!ok && (failed == 0 || abort == i + 1))
			failed = i + 1;
		lua_pushnil(L);
		lua_setfield(L, -2, "ok");
		int64_t start = ft_field_integer(L, -1, "start_ns", 0), end = ft_field_integer(L, -1, "end_ns", 0);
		if (start)
			ft_set_integer(L, "lag_ns", start - g->release_ns);
		if (end > last)
			last = end;
		lua_rawseti(L, list, i + 1);
	}
	lua_setfield(L, report, "tasks");
	ft_set_integer(L, "wall_ns", last - g->release_ns);
	int count = g->count;
	free_group(g);
	if (ft_interrupted)
		return luaL_error(L, "interrupted");
	if (failed) {
		lua_getfield(L, report, "tasks");
		lua_rawgeti(L, -1, failed);
		/* each string stays on the stack while it is used */
		lua_getfield(L, -1, "error");
		const char *error = lua_tostring(L, -1);
		lua_getfield(L, -2, "phase");
		const char *phase = lua_tostring(L, -1);
		const char *where = phase && strcmp(phase, "run") ? lua_pushfstring(L, " (%s)", phase) : "";
		return luaL_error(L, "task %d of %d failed%s: %s", failed, count, where,
		                  error ? error : "(no message)");
	}
	lua_settop(L, report);
	return 1;
}

static bool start_threads(lua_State *L, int handle, int keep, struct group *g)
{
	ft_populate_code(); /* as a process does: see core/tasks.h */
	ft_values_lend(L, keep, 1);
	g->lent = true;
	void *args[g->count];
	for (int i = 0; i < g->count; i++) {
		g->tasks[i].ctl = g->shared.ctl;
		g->tasks[i].threads = &g->threads;
		args[i] = &g->tasks[i];
	}
	int err = ft_threads_start(&g->threads, g->count, ft_task_thread, args);
	if (err) { /* the threads it made are joined: nothing is lent any more */
		give_back(L, handle, g);
		ft_error_errno(L, err, "ft.tasks could not start %d threads", g->count);
	}
	g->state = RUNNING;
	return ft_threads_release(&g->threads, &g->release_ns);
}

static bool start_processes(lua_State *L, int keep, struct group *g)
{
	enum { MAX_FDS = 256 };
	int fds[MAX_FDS];
	fds[0] = g->shared.file.fd;
	int nfds = ft_values_kept_fds(L, keep, fds + 1, MAX_FDS - 1);
	if (nfds < 0)
		luaL_error(L, "ft.tasks: more than %d memfds to hand to each task process", MAX_FDS - 1);
	g->children = calloc((size_t)g->count, sizeof *g->children);
	if (!g->children)
		luaL_error(L, "ft.tasks: out of memory");
	char cpu[16];
	char *argv[] = { "ftrun", FT_TASK_WORKER_FLAG, NULL, NULL, cpu, NULL };
	int err = 0;
	g->state = RUNNING;
	for (; g->spawned < g->count; g->spawned++) {
		struct ft_task *t = &g->tasks[g->spawned];
		struct ft_child *c = &g->children[g->spawned];
		snprintf(cpu, sizeof cpu, "%d", t->cpu);
		if ((err = ft_child_spawn(c, "/proc/self/exe", argv, 2, fds, nfds + 1)))
			break;
		ft_child_send_job(c, t->job, t->job_len); /* one that died shows without a result */
	}
	if (err) {
		atomic_store(&g->shared.ctl->abort, -1);
		finish(g);
		ft_error_errno(L, err, "ft.tasks could not start task process %d of %d",
		               g->spawned + 1, g->count);
	}
	return ft_children_release(g->children, g->count, &g->shared.ctl->abort, GRACE_NS,
	                           &g->release_ns);
}

/* The handle, with its tasks and control block; user value 1 (left on
 * the stack above it) collects what the jobs lend. */
static struct group *new_group(lua_State *L, int n, const struct options *o)
{
	struct group *g = lua_newuserdatauv(L, sizeof *g, 1);
	memset(g, 0, sizeof *g);
	g->shared.file.fd = -1;
	luaL_setmetatable(L, TASKS_META);
	lua_newtable(L);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, -3, 1);
	g->mode = o->mode;
	g->count = n;
	g->tasks = calloc((size_t)n, sizeof *g->tasks);
	if (!g->tasks)
		luaL_error(L, "ft.tasks: out of memory");
	int cpus[CPU_SETSIZE], ncpus = 0;
	if (o->pin && (ncpus = ft_allowed_cpus(cpus, CPU_SETSIZE)) <= 0)
		ft_error_errno(L, ncpus < 0 ? -ncpus : EINVAL, "ft.tasks: sched_getaffinity failed");
	for (int i = 0; i < n; i++)
		g->tasks[i] = (struct ft_task){ .mode = o->mode, .index = i + 1, .count = n,
		                                .cpu = o->pin ? cpus[i % ncpus] : -1, .job_fd = -1,
		                                .result_fd = -1, .mapped.file.fd = -1 };
	int err = ft_task_shared_create(&g->shared, n);
	if (err)
		ft_error_errno(L, err, "ft.tasks: the control block could not be made");
	return g;
}

/* The job: everything a task's state needs. args.n, when given, says how
 * many arguments there are (a nil among them included); else #args. */
static void push_job(lua_State *L, const struct group *g, const struct options *o, int chunk)
{
	lua_createtable(L, 0, 12);
	ft_set_string(L, "mode", ft_task_mode_names[g->mode]);
	ft_set_integer(L, "count", g->count);
	if (o->seconds) {
		lua_pushvalue(L, o->seconds); /* as given: 1 stays an integer */
		lua_setfield(L, -2, "seconds");
	}
	lua_pushvalue(L, chunk);
	lua_setfield(L, -2, "chunk");
	lua_getglobal(L, "package");
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "path");
		lua_setfield(L, -3, "path");
		lua_getfield(L, -1, "cpath");
		lua_setfield(L, -3, "cpath");
	}
	lua_pop(L, 1);
	if (o->args) {
		lua_pushvalue(L, o->args);
		lua_setfield(L, -2, "args");
		lua_Integer n = ft_field_integer(L, o->args, "n", -1);
		ft_set_integer(L, "nargs", n >= 0 ? n : luaL_len(L, o->args));
	}
	if (g->mode == FT_TASK_PROCESSES)
		ft_set_integer(L, "control_fd", g->shared.file.fd);
	ft_timer_push_copy(L);
	lua_setfield(L, -2, "timer");
}

/* The job encoded once per task (its index differs). */
static void encode_jobs(lua_State *L, struct group *g, int job, int keep)
{
	enum ft_cross cross = g->mode == FT_TASK_THREADS ? FT_CROSS_THREAD : FT_CROSS_PROCESS;
	for (int i = 0; i < g->count; i++) {
		lua_pushinteger(L, i + 1);
		lua_setfield(L, job, "index");
		struct ft_blob *b = ft_blob_push(L);
		ft_values_encode(L, job, cross, keep, "ft.tasks", b);
		g->tasks[i].job = ft_blob_take(b, &g->tasks[i].job_len);
		lua_pop(L, 1);
	}
}

/* Checks the arguments and starts the group; leaves the handle on top.
 * A task whose set-up failed is raised here: nothing was released. */
static struct group *start(lua_State *L)
{
	ft_check_nargs(L, 3);
	lua_Integer n = luaL_checkinteger(L, 1);
	if (n < 1 || n > MAX_TASKS)
		luaL_argerror(L, 1, lua_pushfstring(L, "needs 1 to %d tasks, got %I", MAX_TASKS, n));
	luaL_checkstring(L, 2);
	struct options o;
	check_options(L, 3, &o);
	push_compiled_chunk(L, 2);
	int chunk = lua_gettop(L);

	struct group *g = new_group(L, (int)n, &o);
	int handle = chunk + 1, keep = chunk + 2;
	push_job(L, g, &o, chunk);
	encode_jobs(L, g, lua_gettop(L), keep);
	bool go = g->mode == FT_TASK_THREADS ? start_threads(L, handle, keep, g)
	                                     : start_processes(L, keep, g);
	lua_settop(L, handle);
	if (!go)
		collect(L, handle, g); /* raises the set-up's error */
	return g;
}

/* ft.tasks(n, chunk [, {mode =, pin =, args =, seconds =}]) -> report */
static int l_tasks(lua_State *L)
{
	struct group *g = start(L);
	return collect(L, lua_gettop(L), g);
}

/* ft.start(n, chunk [, opts]) -> handle: the same tasks, running while
 * the main state goes on; h:wait() is ft.tasks's end. */
static int l_start(lua_State *L)
{
	start(L);
	return 1;
}

static struct group *check_running(lua_State *L)
{
	struct group *g = luaL_checkudata(L, 1, TASKS_META);
	if (g->state != RUNNING)
		luaL_error(L, "the tasks of this handle were already waited for");
	return g;
}

/* h:wait() -> report */
static int l_wait(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	return collect(L, 1, check_running(L));
}

/* h:counts() -> {iterations so far, per task}: for sampling while they run */
static int l_counts(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	struct group *g = check_running(L);
	lua_createtable(L, g->count, 0);
	for (int i = 0; i < g->count; i++) {
		lua_pushinteger(L, atomic_load_explicit(&g->shared.ctl->slot[i].iterations,
		                                        memory_order_relaxed));
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* h:stop(): every task's time is up now (ft.task.time_up() turns true and
 * a seconds loop ends after its current call); nothing is interrupted. */
static int l_stop(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	struct group *g = check_running(L);
	atomic_store(&g->shared.ctl->stop, 1);
	return 0;
}

static int l_tostring(lua_State *L)
{
	struct group *g = luaL_checkudata(L, 1, TASKS_META);
	lua_pushfstring(L, "ft.tasks (%d %s, %s)", g->count, ft_task_mode_names[g->mode],
	                g->state == RUNNING ? "running" : "waited for");
	return 1;
}

void ft_open_tasks(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{ "wait", l_wait },
		{ "counts", l_counts },
		{ "stop", l_stop },
		{ NULL, NULL }
	};
	ft_new_resource_meta(L, TASKS_META, l_gc, l_tostring, methods, NULL);

	lua_pushcfunction(L, l_tasks);
	lua_setfield(L, -2, "tasks");
	lua_pushcfunction(L, l_start);
	lua_setfield(L, -2, "start");
}
