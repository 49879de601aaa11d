/* ft.tasks(n, chunk, opts) and ft.start: n tasks, each with a Lua state of
 * its own and ft loaded, running the function a chunk returns, released
 * together from a barrier; threads of this process, or processes of their
 * own (ftrun again, started by core/tasks.c). Values cross as plain values
 * (ft_values.c); each task times and counts (RUSAGE_THREAD) its own calls.
 * A task that fails stops the others through the group's abort flag, which
 * every task state's count hook and every chunked C pass polls. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lauxlib.h>

#include "../core/clock.h"
#include "../core/counters.h"
#include "../core/interrupt.h"
#include "../core/tasks.h"
#include "ft.h"

#define TASKS_META "ft.tasks"
#define TASK_KEY "ft.task"      /* registry: the struct task of a task's state */
#define GRACE_NS 2000000000LL   /* after a stop, how long a task may take */

enum { MAX_TASKS = 256, HOOK_COUNT = 1000 };

enum mode { THREADS, PROCESSES };
static const char *const mode_names[] = { "threads", "processes", NULL };

/* What a task measured around its calls. */
struct stats {
	int64_t start_ns, end_ns;
	int64_t calls, iterations;
	struct ft_thread_usage usage;  /* the calls' own share */
};

/* One task as its runner sees it: a thread of this process, or a child
 * process alone. */
struct task {
	enum mode mode;
	int index, count, cpu;          /* index from 1; cpu -1: not pinned */
	char *job;                      /* the encoded job table (malloc) */
	size_t job_len;
	struct ft_task_control *ctl;    /* the group's control block */
	struct ft_task_shared mapped;   /* a child: its mapping of it */
	struct ft_threads *threads;     /* threads: the barrier */
	int job_fd, result_fd;          /* a child: its pipes */
	int pin_err;
	bool readied;
	int64_t seconds_ns, deadline_ns;
	struct stats stats;
	char *record;                   /* out: the encoded record table */
	size_t record_len;
	char *fail;                     /* out: why there is no record */
};

/* A handle (userdata); user value 1: the buffers and memfds lent to it. */
struct group {
	enum mode mode;
	int count, spawned;
	enum { MADE, RUNNING, FINISHED } state;
	bool lent;
	struct ft_task_shared shared;
	struct ft_threads threads;
	struct task *tasks;
	struct ft_child *children;
	int64_t release_ns;
};

/* --- in the task ------------------------------------------------------ */

int ft_stopped_error(lua_State *L)
{
	if (ft_interrupted)
		return luaL_error(L, "interrupted");
	int a = ft_stop_request ? atomic_load(ft_stop_request) : 0;
	if (a > 0)
		return luaL_error(L, "stopped: task %d failed", a);
	return luaL_error(L, "stopped: the task group was closed");
}

/* Every HOOK_COUNT instructions, as the main state's SIGINT hook. */
static void task_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	if (ft_should_stop())
		ft_stopped_error(L);
}

static bool time_up(const struct task *t)
{
	return atomic_load_explicit(&t->ctl->stop, memory_order_relaxed) ||
	       (t->deadline_ns && ft_now_ns() >= t->deadline_ns);
}

/* ft.task.time_up() -> whether the task's seconds are over (or the
 * starter called h:stop()). */
static int l_time_up(lua_State *L)
{
	ft_check_nargs(L, 0);
	lua_pushboolean(L, time_up(lua_touserdata(L, lua_upvalueindex(1))));
	return 1;
}

static int l_no_exit(lua_State *L)
{
	return luaL_error(L, "os.exit inside a task: return from the task's function, or raise an error");
}

/* System settings belong to the starter: one record of them per run,
 * written without locks and restored at its end (core/restore.h); a task
 * process has no such guard. */
static int l_no_settings(lua_State *L)
{
	return luaL_error(L, "ft.%s inside a task: the starter changes system settings "
	                  "(one record of them per run, restored at its end)",
	                  lua_tostring(L, lua_upvalueindex(1)));
}

static void refuse_settings(lua_State *L)
{
	static const char *const names[] = { "set_folio", "set_hugetlb_pages", "sysfs_restore", NULL };
	lua_getglobal(L, "ft");
	for (int i = 0; names[i]; i++) {
		lua_pushstring(L, names[i]);
		lua_pushcclosure(L, l_no_settings, 1);
		lua_setfield(L, -2, names[i]);
	}
	lua_pop(L, 1);
}

static void mark_failed(struct task *t)
{
	int none = 0;
	if (t->ctl)
		atomic_compare_exchange_strong(&t->ctl->abort, &none, t->index);
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *s = p;
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *s = p;
	while (n > 0) {
		ssize_t r = read(fd, s, n);
		if (r < 0 && errno == EINTR && !ft_interrupted)
			continue;
		if (r <= 0)
			return r == 0 ? EPIPE : errno;
		s += r;
		n -= (size_t)r;
	}
	return 0;
}

/* The barrier: says whether the set-up worked, returns whether to go. A
 * child says it with one byte, R or E, and waits for G; end of file (the
 * starter is gone) or SIGINT is no. */
static bool task_ready(struct task *t, bool ok)
{
	t->readied = true;
	if (t->mode == THREADS)
		return ft_threads_ready(t->threads, ok);
	char c = ok ? 'R' : 'E';
	if (write_all(t->result_fd, &c, 1) != 0 || !ok)
		return false;
	return read_all(t->job_fd, &c, 1) == 0 && c == 'G';
}

static lua_Integer field_integer(lua_State *L, int t, const char *key, lua_Integer dflt)
{
	lua_getfield(L, t, key);
	lua_Integer v = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : dflt;
	lua_pop(L, 1);
	return v;
}

static void set_integer(lua_State *L, const char *key, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, key);
}

static void set_string(lua_State *L, const char *key, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, key);
}

/* Protected: the state, the job, the chunk. Returns the function and the
 * arguments' table. */
static int task_setup(lua_State *L)
{
	struct task *t = lua_touserdata(L, 1);
	lua_pushlightuserdata(L, t);
	lua_setfield(L, LUA_REGISTRYINDEX, TASK_KEY);
	ft_open_libs(L);
	if (t->pin_err)
		return ft_error_errno(L, t->pin_err, "task %d could not be pinned to CPU %d",
		                      t->index, t->cpu);
	ft_values_decode(L, t->job, t->job_len,
	                 t->mode == THREADS ? FT_CROSS_THREAD : FT_CROSS_PROCESS);
	int job = lua_gettop(L);
	t->index = (int)field_integer(L, job, "index", 0);
	t->count = (int)field_integer(L, job, "count", 0);
	if (t->mode == PROCESSES) {
		int err = ft_task_shared_attach(&t->mapped, (int)field_integer(L, job, "control_fd", -1),
		                                t->count);
		if (err)
			return ft_error_errno(L, err, "task %d could not map its group's control block",
			                      t->index);
		t->ctl = t->mapped.ctl;
		ft_stop_request = &t->ctl->abort;
	}
	lua_getfield(L, job, "seconds");
	if (lua_isnumber(L, -1))
		t->seconds_ns = (int64_t)(lua_tonumber(L, -1) * 1e9);
	lua_pop(L, 1);

	/* require finds what the main state's require finds */
	lua_getglobal(L, "package");
	lua_getfield(L, job, "path");
	lua_setfield(L, -2, "path");
	lua_getfield(L, job, "cpath");
	lua_setfield(L, -2, "cpath");
	lua_pop(L, 1);
	lua_getfield(L, job, "timer");
	ft_timer_take_copy(L, -1);
	lua_pop(L, 1);
	lua_getglobal(L, "os");
	lua_pushcfunction(L, l_no_exit);
	lua_setfield(L, -2, "exit");
	lua_pop(L, 1);
	refuse_settings(L);

	lua_getglobal(L, "ft");
	lua_createtable(L, 0, 7);
	set_integer(L, "index", t->index);
	set_integer(L, "count", t->count);
	set_string(L, "mode", mode_names[t->mode]);
	set_integer(L, "cpu", t->cpu);
	lua_getfield(L, job, "seconds");
	lua_setfield(L, -2, "seconds");
	lua_pushboolean(L, 0); /* the deadline's key exists before the window */
	lua_setfield(L, -2, "deadline_ns");
	lua_pushlightuserdata(L, t);
	lua_pushcclosure(L, l_time_up, 1);
	lua_setfield(L, -2, "time_up");
	lua_setfield(L, -2, "task");
	lua_pop(L, 1);

	int status;
	if (lua_getfield(L, job, "file") == LUA_TSTRING) {
		status = luaL_loadfilex(L, lua_tostring(L, -1), "t");
	} else {
		size_t len;
		lua_getfield(L, job, "source");
		const char *s = lua_tolstring(L, -1, &len);
		status = luaL_loadbufferx(L, s, len, s, "t");
	}
	if (status != LUA_OK)
		return lua_error(L);
	/* the set-up sees what the function will: ... is index, args... */
	lua_getfield(L, job, "args");
	int args = lua_gettop(L);
	int nargs = lua_istable(L, args) ? (int)lua_rawlen(L, args) : 0;
	luaL_checkstack(L, nargs + 2, "too many arguments for a task");
	lua_pushvalue(L, args - 1);
	lua_pushinteger(L, t->index);
	for (int i = 1; i <= nargs; i++)
		lua_rawgeti(L, args, i);
	lua_call(L, nargs + 1, 1);
	if (!lua_isfunction(L, -1))
		return luaL_error(L, "the task chunk must return a function (called as "
		                  "fn(index, args...)), it returned %s", luaL_typename(L, -1));
	lua_pushvalue(L, args);
	return 2;
}

/* What one call returned in seconds mode: its number of iterations. */
static int64_t iterations_of(lua_State *L, int idx)
{
	if (lua_isnil(L, idx))
		return 1;
	if (!lua_isinteger(L, idx) || lua_tointeger(L, idx) < 0)
		luaL_error(L, "with seconds, a task's function returns how many iterations it did "
		           "(an integer >= 0, or nothing for 1), got %s", lua_type(L, idx) == LUA_TNUMBER
		           ? luaL_tolstring(L, idx, NULL) : luaL_typename(L, idx));
	return lua_tointeger(L, idx);
}

/* Protected: fn(index, args...) once, or again and again until the time
 * is up. Fills t->stats; returns the values of the one call, packed. */
static int task_run(lua_State *L)
{
	struct task *t = lua_touserdata(L, 3);
	int nargs = lua_istable(L, 2) ? (int)lua_rawlen(L, 2) : 0;
	/* Room for the calls made now, so the stack does not grow (realloc)
	 * inside the window; a sanitizer's allocator would fault on it. */
	luaL_checkstack(L, nargs + 3 + 8 * LUA_MINSTACK, "too many arguments for a task");
	bool loop = t->seconds_ns > 0;
	struct ft_task_slot *slot = &t->ctl->slot[t->index - 1];
	lua_getglobal(L, "ft");
	lua_getfield(L, -1, "task");
	lua_replace(L, -2);
	int task = lua_gettop(L);
	int base = lua_gettop(L);
	struct ft_thread_usage u0, u1;
	int64_t calls = 0, iterations = 0;
	ft_thread_usage(&u0);
	int64_t t0 = ft_now_ns();
	if (loop) { /* a store into a key that exists: no allocation */
		t->deadline_ns = t0 + t->seconds_ns;
		lua_pushinteger(L, t->deadline_ns);
		lua_setfield(L, task, "deadline_ns");
	}
	do {
		lua_pushvalue(L, 1);
		lua_pushinteger(L, t->index);
		for (int i = 1; i <= nargs; i++)
			lua_rawgeti(L, 2, i);
		lua_call(L, nargs + 1, loop ? 1 : LUA_MULTRET);
		calls++;
		if (loop) {
			iterations += iterations_of(L, -1);
			lua_pop(L, 1);
			atomic_store_explicit(&slot->iterations, iterations, memory_order_relaxed);
			if (ft_should_stop())
				ft_stopped_error(L);
		}
	} while (loop && !time_up(t));
	int64_t t1 = ft_now_ns();
	ft_thread_usage(&u1);
	if (!loop)
		atomic_store_explicit(&slot->iterations, 1, memory_order_relaxed);
	t->stats = (struct stats){ t0, t1, calls, loop ? iterations : -1, {
		u1.minflt - u0.minflt, u1.majflt - u0.majflt, u1.utime_ns - u0.utime_ns,
		u1.stime_ns - u0.stime_ns, u1.cpu_ns - u0.cpu_ns } };
	if (loop)
		return 0;
	int n = lua_gettop(L) - base;
	lua_createtable(L, n, 1);
	lua_insert(L, base + 1);
	for (int i = n; i >= 1; i--)
		lua_rawseti(L, base + 1, i);
	set_integer(L, "n", n);
	return 1;
}

static void set_stats(lua_State *L, const struct stats *s)
{
	set_integer(L, "start_ns", s->start_ns);
	set_integer(L, "end_ns", s->end_ns);
	set_integer(L, "ns", s->end_ns - s->start_ns);
	set_integer(L, "calls", s->calls);
	if (s->iterations >= 0)
		set_integer(L, "iterations", s->iterations);
	set_integer(L, "minflt", s->usage.minflt);
	set_integer(L, "majflt", s->usage.majflt);
	set_integer(L, "faults", s->usage.minflt + s->usage.majflt);
	set_integer(L, "utime_ns", s->usage.utime_ns);
	set_integer(L, "stime_ns", s->usage.stime_ns);
	set_integer(L, "cpu_ns", s->usage.cpu_ns);
}

static int encode_record(lua_State *L)
{
	struct task *t = lua_touserdata(L, 3);
	lua_pushfstring(L, "task %d's results", t->index);
	ft_values_encode(L, 1, FT_CROSS_RESULT, 0, lua_tostring(L, -1), lua_touserdata(L, 2));
	return 0;
}

static void fail_record(lua_State *L, int record, const char *phase, int msg)
{
	msg = lua_absindex(L, msg);
	lua_pushboolean(L, 0);
	lua_setfield(L, record, "ok");
	lua_pushstring(L, phase);
	lua_setfield(L, record, "phase");
	lua_pushvalue(L, msg);
	lua_setfield(L, record, "error");
}

static bool encode(lua_State *L, struct task *t)
{
	lua_pushcfunction(L, encode_record);
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 3);
	lua_pushlightuserdata(L, t);
	return lua_pcall(L, 3, 0, 2) == LUA_OK;
}

/* Protected: set-up, barrier, the calls, and the record (a table encoded
 * for the starter: ok, index, the stats and values, or phase and error). */
static int task_pmain(lua_State *L)
{
	struct task *t = lua_touserdata(L, 1);
	lua_settop(L, 0);
	lua_sethook(L, task_hook, LUA_MASKCOUNT, HOOK_COUNT);
	int64_t t0 = ft_now_ns();
	lua_newtable(L);                      /* 1: the record */
	lua_pushcfunction(L, ft_msghandler);  /* 2 */
	struct ft_blob *blob = ft_blob_push(L); /* 3: its encoding */
	lua_pushcfunction(L, task_setup);
	lua_pushlightuserdata(L, t);
	int status = lua_pcall(L, 1, 2, 2);   /* 4, 5: fn, args | 4: error */
	lua_settop(L, 5);
	lua_pushinteger(L, ft_now_ns() - t0);
	lua_setfield(L, 1, "setup_ns");
	bool ok = status == LUA_OK;
	if (!ok)
		fail_record(L, 1, "set-up", 4);
	bool go = task_ready(t, ok);
	if (ok && !go) {
		lua_pushstring(L, ft_interrupted ? "interrupted" : "not started: another task's set-up failed");
		fail_record(L, 1, "start", -1);
		ok = false;
	}
	if (ok) {
		lua_pushcfunction(L, task_run);
		lua_pushvalue(L, 4);
		lua_pushvalue(L, 5);
		lua_pushlightuserdata(L, t);
		if (lua_pcall(L, 3, 1, 2) == LUA_OK) { /* 6: values | error */
			lua_setfield(L, 1, "values");
			lua_pushvalue(L, 1);
			set_stats(L, &t->stats);
			lua_pop(L, 1);
			lua_pushboolean(L, 1);
			lua_setfield(L, 1, "ok");
		} else {
			fail_record(L, 1, "run", 6);
			ok = false;
		}
	}
	lua_settop(L, 3);
	lua_pushvalue(L, 1);
	set_integer(L, "index", t->index);
	set_integer(L, "cpu", t->cpu);
	if (t->mode == PROCESSES)
		set_integer(L, "pid", getpid());
	lua_pop(L, 1);
	if (!encode(L, t)) { /* a value that cannot cross: that is the error */
		fail_record(L, 1, "results", -1);
		lua_pushnil(L);
		lua_setfield(L, 1, "values");
		ok = false;
		blob->n = 0;
		if (!encode(L, t))
			return lua_error(L);
	}
	if (!ok)
		mark_failed(t);
	t->record = ft_blob_take(blob, &t->record_len);
	return 0;
}

/* A task from start to end, in its thread or process. */
static void run_task(struct task *t)
{
	if (t->cpu >= 0)
		t->pin_err = ft_pin_self(t->cpu); /* before the state: its memory comes from there */
	if (t->ctl)
		ft_stop_request = &t->ctl->abort;
	lua_State *L = luaL_newstate();
	if (!L) {
		t->fail = strdup("the task's Lua state could not be made: out of memory");
	} else {
		lua_pushcfunction(L, task_pmain);
		lua_pushlightuserdata(L, t);
		if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
			const char *msg = lua_tostring(L, -1);
			t->fail = strdup(msg ? msg : "an error object that is not a string");
		}
	}
	if (!t->readied)
		task_ready(t, false);
	if (!t->record)
		mark_failed(t);
	if (L)
		lua_close(L);
	ft_stop_request = NULL;
}

static void *thread_main(void *p)
{
	run_task(p);
	return NULL;
}

static void on_child_sigint(int sig)
{
	(void)sig;
	ft_interrupted = 1;
}

/* ftrun --task-worker JOBFD RESULTFD CPU: one task of processes mode. The
 * job arrives as its length and its bytes; what goes back is R or E, then
 * the record to the end of the pipe. */
int ft_task_worker(int argc, char **argv)
{
	struct task t;
	memset(&t, 0, sizeof t);
	t.mode = PROCESSES;
	t.mapped.file.fd = -1;
	if (argc != 5 || (t.job_fd = atoi(argv[2])) < 3 || (t.result_fd = atoi(argv[3])) < 3 ||
	    fcntl(t.job_fd, F_SETFD, FD_CLOEXEC) != 0 || fcntl(t.result_fd, F_SETFD, FD_CLOEXEC) != 0) {
		fprintf(stderr, "ftrun: %s is how ft.tasks starts its processes, not a command\n",
		        FT_TASK_WORKER_FLAG);
		return 2;
	}
	ft_child_die_with_parent();
	t.cpu = atoi(argv[4]);
	/* no SA_RESTART: a task waiting for its release wakes up */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_child_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	uint64_t len = 0;
	ft_populate_code();
	int err = read_all(t.job_fd, &len, sizeof len);
	if (!err && (len > (1ull << 32) || !(t.job = malloc(len ? len : 1))))
		err = ENOMEM;
	if (!err)
		err = read_all(t.job_fd, t.job, len);
	if (err) {
		fprintf(stderr, "ftrun: a task process could not read its job: %s\n", strerror(err));
		return 1;
	}
	t.job_len = len;
	run_task(&t);
	int code = 0;
	if (t.record)
		write_all(t.result_fd, t.record, t.record_len);
	else {
		fprintf(stderr, "ftrun: task %d: %s\n", t.index, t.fail ? t.fail : "no result");
		code = 1;
	}
	ft_task_shared_release(&t.mapped);
	free(t.job);
	free(t.record);
	free(t.fail);
	close(t.job_fd);
	close(t.result_fd);
	return code;
}

/* --- in the starter --------------------------------------------------- */

static bool in_task(lua_State *L)
{
	bool yes = lua_getfield(L, LUA_REGISTRYINDEX, TASK_KEY) != LUA_TNIL;
	lua_pop(L, 1);
	return yes;
}

struct options {
	enum mode mode;
	bool pin;
	int args;        /* stack index of the args table, 0: none */
	lua_Number seconds;
};

static void check_options(lua_State *L, int arg, struct options *o)
{
	*o = (struct options){ THREADS, false, 0, 0 };
	if (lua_isnoneornil(L, arg))
		return;
	luaL_checktype(L, arg, LUA_TTABLE);
	for (lua_pushnil(L); lua_next(L, arg); lua_pop(L, 1)) {
		const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
		if (strcmp(key, "mode") == 0) {
			const char *m = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
			if (strlen(m) != lua_rawlen(L, -1) || (strcmp(m, "threads") && strcmp(m, "processes")))
				luaL_error(L, "ft.tasks option mode = %s (expected \"threads\" or \"processes\")",
				           luaL_tolstring(L, -1, NULL));
			o->mode = strcmp(m, "threads") == 0 ? THREADS : PROCESSES;
		} else if (strcmp(key, "pin") == 0) {
			if (!lua_isboolean(L, -1))
				luaL_error(L, "ft.tasks option pin must be a boolean, got %s", luaL_typename(L, -1));
			o->pin = lua_toboolean(L, -1);
		} else if (strcmp(key, "args") == 0) {
			if (!lua_istable(L, -1))
				luaL_error(L, "ft.tasks option args must be a list of arguments, got %s",
				           luaL_typename(L, -1));
			o->args = 1;
		} else if (strcmp(key, "seconds") == 0) {
			lua_Number s = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
			if (!(s > 0 && s <= 86400))
				luaL_error(L, "ft.tasks option seconds must be a number above 0 and at most "
				           "86400, got %s", luaL_tolstring(L, -1, NULL));
			o->seconds = s;
		} else {
			luaL_error(L, "unknown ft.tasks option '%s' (expected mode, pin, args or seconds)", key);
		}
	}
	if (o->args) {
		lua_getfield(L, arg, "args");
		o->args = lua_gettop(L);
	}
}

/* "@name": a script, as given or in scripts/ beside the executable, as
 * the command line finds one. */
static void push_chunk_file(lua_State *L, const char *name)
{
	char exe[PATH_MAX], found[PATH_MAX + 16] = "";
	if (access(name, R_OK) == 0) {
		lua_pushstring(L, name);
		return;
	}
	if (realpath("/proc/self/exe", exe)) {
		snprintf(found, sizeof found, "%s/scripts/%s", dirname(exe), name);
		if (access(found, R_OK) == 0) {
			lua_pushstring(L, found);
			return;
		}
	}
	luaL_error(L, "ft.tasks: cannot open task script '%s' (looked for %s and %s)", name, name,
	           found[0] ? found : "scripts/ beside ftrun");
}

static void give_back(lua_State *L, int handle, struct group *g)
{
	if (!g->lent)
		return;
	lua_getiuservalue(L, handle, 1);
	for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1))
		ft_lend(L, -2, -1);
	lua_pop(L, 1);
	g->lent = false;
}

/* Joins the threads or reads the children to their end and reaps them. */
static void finish(struct group *g)
{
	if (g->state != RUNNING)
		return;
	if (g->mode == THREADS) {
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
	struct task *t = &g->tasks[i];
	const char *p = t->record;
	size_t n = t->record_len;
	if (g->mode == PROCESSES) {
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
	set_integer(L, "index", i + 1);
	set_string(L, "phase", "run");
	if (g->mode == THREADS) {
		set_string(L, "error", t->fail ? t->fail : "no result");
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
	set_string(L, "mode", mode_names[g->mode]);
	set_integer(L, "count", g->count);
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
		int64_t start = field_integer(L, -1, "start_ns", 0), end = field_integer(L, -1, "end_ns", 0);
		if (start)
			set_integer(L, "lag_ns", start - g->release_ns);
		if (end > last)
			last = end;
		lua_rawseti(L, list, i + 1);
	}
	lua_setfield(L, report, "tasks");
	set_integer(L, "wall_ns", last - g->release_ns);
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

static bool start_threads(lua_State *L, int handle, struct group *g)
{
	void *args[g->count];
	for (int i = 0; i < g->count; i++) {
		g->tasks[i].ctl = g->shared.ctl;
		g->tasks[i].threads = &g->threads;
		args[i] = &g->tasks[i];
	}
	int err = ft_threads_start(&g->threads, g->count, thread_main, args);
	if (err) { /* the threads it made are joined: nothing is lent any more */
		give_back(L, handle, g);
		ft_error_errno(L, err, "ft.tasks could not start %d threads", g->count);
	}
	g->state = RUNNING;
	return ft_threads_release(&g->threads, &g->release_ns);
}

static bool start_processes(lua_State *L, struct group *g, int keep)
{
	enum { MAX_FDS = 256 };
	int fds[MAX_FDS], nfds = 0;
	fds[nfds++] = g->shared.file.fd;
	for (lua_pushnil(L); lua_next(L, keep); lua_pop(L, 1)) {
		int fd = ft_kept_fd(L, -2);
		if (fd >= 0 && nfds == MAX_FDS)
			luaL_error(L, "ft.tasks: more than %d memfds to hand to each task process", MAX_FDS - 1);
		if (fd >= 0)
			fds[nfds++] = fd;
	}
	g->children = calloc((size_t)g->count, sizeof *g->children);
	if (!g->children)
		luaL_error(L, "ft.tasks: out of memory");
	char cpu[16];
	char *argv[] = { "ftrun", FT_TASK_WORKER_FLAG, NULL, NULL, cpu, NULL };
	int err = 0;
	g->state = RUNNING;
	for (; g->spawned < g->count; g->spawned++) {
		struct task *t = &g->tasks[g->spawned];
		snprintf(cpu, sizeof cpu, "%d", t->cpu);
		if ((err = ft_child_spawn(&g->children[g->spawned], "/proc/self/exe", argv, 2, fds, nfds)))
			break;
		uint64_t len = t->job_len;
		/* a child that died at once shows as one without a result */
		if (!ft_child_send(&g->children[g->spawned], &len, sizeof len))
			ft_child_send(&g->children[g->spawned], t->job, t->job_len);
	}
	if (err) {
		atomic_store(&g->shared.ctl->abort, -1);
		finish(g);
		ft_error_errno(L, err, "ft.tasks could not start task process %d of %d",
		               g->spawned + 1, g->count);
	}
	ft_children_read(g->children, g->count, 1, &g->shared.ctl->abort, GRACE_NS);
	bool go = !ft_interrupted;
	for (int i = 0; i < g->count; i++)
		go = go && g->children[i].len >= 1 && g->children[i].out[0] == 'R';
	g->release_ns = ft_now_ns();
	for (int i = 0; i < g->count; i++)
		ft_child_send(&g->children[i], go ? "G" : "A", 1);
	return go;
}

/* Checks the arguments and starts the group; leaves the handle on top.
 * A task whose set-up failed is raised here: nothing was released. */
static struct group *start(lua_State *L)
{
	if (in_task(L))
		luaL_error(L, "ft.tasks and ft.start cannot be called inside a task");
	ft_check_nargs(L, 3);
	lua_Integer n = luaL_checkinteger(L, 1);
	if (n < 1 || n > MAX_TASKS)
		luaL_argerror(L, 1, lua_pushfstring(L, "needs 1 to %d tasks, got %I", MAX_TASKS, n));
	size_t len;
	const char *chunk = luaL_checklstring(L, 2, &len);
	if (chunk[0] == '@' && strlen(chunk) != len)
		luaL_argerror(L, 2, "a script's name holds an embedded NUL");
	struct options o;
	check_options(L, 3, &o);

	struct group *g = lua_newuserdatauv(L, sizeof *g, 1);
	memset(g, 0, sizeof *g);
	g->shared.file.fd = -1;
	luaL_setmetatable(L, TASKS_META);
	int handle = lua_gettop(L);
	lua_newtable(L);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, handle, 1);
	int keep = lua_gettop(L);
	g->mode = o.mode;
	g->count = (int)n;
	g->tasks = calloc((size_t)n, sizeof *g->tasks);
	if (!g->tasks)
		luaL_error(L, "ft.tasks: out of memory");
	int cpus[CPU_SETSIZE], ncpus = 0;
	if (o.pin && (ncpus = ft_allowed_cpus(cpus, CPU_SETSIZE)) <= 0)
		ft_error_errno(L, ncpus < 0 ? -ncpus : EINVAL, "ft.tasks: sched_getaffinity failed");
	for (int i = 0; i < g->count; i++) {
		struct task *t = &g->tasks[i];
		t->mode = o.mode;
		t->index = i + 1;
		t->count = g->count;
		t->cpu = o.pin ? cpus[i % ncpus] : -1;
		t->job_fd = t->result_fd = -1;
		t->mapped.file.fd = -1;
	}
	int err = ft_task_shared_create(&g->shared, g->count);
	if (err)
		ft_error_errno(L, err, "ft.tasks: the control block could not be made");

	/* The job: everything a task's state needs, encoded once per task. */
	lua_createtable(L, 0, 10);
	int job = lua_gettop(L);
	set_string(L, "mode", mode_names[o.mode]);
	set_integer(L, "count", g->count);
	if (o.seconds > 0) {
		lua_getfield(L, 3, "seconds"); /* as given: 1 stays an integer */
		lua_setfield(L, job, "seconds");
	}
	if (chunk[0] == '@') {
		push_chunk_file(L, chunk + 1);
		lua_setfield(L, job, "file");
	} else {
		lua_pushvalue(L, 2);
		lua_setfield(L, job, "source");
	}
	lua_getglobal(L, "package");
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "path");
		lua_setfield(L, job, "path");
		lua_getfield(L, -1, "cpath");
		lua_setfield(L, job, "cpath");
	}
	lua_pop(L, 1);
	if (o.args) {
		lua_pushvalue(L, o.args);
		lua_setfield(L, job, "args");
	}
	if (o.mode == PROCESSES)
		set_integer(L, "control_fd", g->shared.file.fd);
	ft_timer_push_copy(L);
	lua_setfield(L, job, "timer");
	enum ft_cross cross = o.mode == THREADS ? FT_CROSS_THREAD : FT_CROSS_PROCESS;
	for (int i = 0; i < g->count; i++) {
		set_integer(L, "index", i + 1);
		struct ft_blob *b = ft_blob_push(L);
		ft_values_encode(L, job, cross, keep, "ft.tasks", b);
		g->tasks[i].job = ft_blob_take(b, &g->tasks[i].job_len);
		lua_pop(L, 1);
	}

	bool go;
	if (o.mode == THREADS) {
		ft_populate_code(); /* as a process does: see core/tasks.h */
		for (lua_pushnil(L); lua_next(L, keep); lua_pop(L, 1))
			ft_lend(L, -2, 1);
		g->lent = true;
		go = start_threads(L, handle, g);
	} else {
		go = start_processes(L, g, keep);
	}
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
	lua_pushfstring(L, "ft.tasks (%d %s, %s)", g->count, mode_names[g->mode],
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
	ft_new_resource_meta(L, TASKS_META, l_gc, l_tostring);
	luaL_newlib(L, methods);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);

	lua_pushcfunction(L, l_tasks);
	lua_setfield(L, -2, "tasks");
	lua_pushcfunction(L, l_start);
	lua_setfield(L, -2, "start");
}
