/* Inside a task: the state it opens (only what a task needs), its set-up
 * from the job, the barrier, the timed calls and the record it leaves for
 * the starter (ft_tasks.c). A task that fails stops the others through
 * the group's abort flag, which its count hook and every chunked C pass
 * poll. */
#include "task.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "../core/clock.h"
#include "../core/interrupt.h"
#include "ft_aux.h"
#include "ft_openers.h"
#include "ft_timer.h"
#include "ft_values.h"

enum { HOOK_COUNT = 1000 };

const char *const ft_task_mode_names[] = { "threads", "processes", NULL };

/* Every HOOK_COUNT instructions, as the main state's SIGINT hook. */
static void task_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	if (ft_should_stop())
		ft_stopped_error(L);
}

static bool time_up(const struct ft_task *t)
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

/* What a task's ft holds: the bindings, not the run's plumbing (files,
 * the starter's timer calibration) nor what belongs to the starter. */
static const ft_opener task_openers[] = {
	ft_open_buffer, ft_open_memfd, ft_open_samples, ft_open_system, ft_open_parallel,
	ft_open_hugepages, ft_open_counters, ft_open_profile, NULL
};

/* System settings belong to the starter: one record of them per run,
 * written without locks and restored at its end (core/restore.h); a task
 * process has no such guard. Tasks are started by the starter alone. */
static int l_refused(lua_State *L)
{
	return luaL_error(L, "%s", lua_tostring(L, lua_upvalueindex(1)));
}

static void refuse(lua_State *L)
{
	static const char *const names[] = { "set_folio", "set_hugetlb_pages", "sysfs_restore",
	                                     "lock_settings", NULL };
	lua_getglobal(L, "ft");
	for (int i = 0; names[i]; i++) {
		lua_pushfstring(L, "ft.%s inside a task: the starter changes system settings "
		                "(one record of them per run, restored at its end)", names[i]);
		lua_pushcclosure(L, l_refused, 1);
		lua_setfield(L, -2, names[i]);
	}
	for (int i = 0; i < 2; i++) {
		lua_pushliteral(L, "ft.tasks and ft.start cannot be called inside a task");
		lua_pushcclosure(L, l_refused, 1);
		lua_setfield(L, -2, i ? "start" : "tasks");
	}
	lua_pop(L, 1);
	lua_getglobal(L, "os");
	lua_pushcfunction(L, l_no_exit);
	lua_setfield(L, -2, "exit");
	lua_pop(L, 1);
}

/* The barrier: says whether the set-up worked, returns whether to go. */
static bool task_ready(struct ft_task *t, bool ok)
{
	t->readied = true;
	if (t->mode == FT_TASK_THREADS)
		return ft_threads_ready(t->threads, ok);
	return ft_child_ready(t->job_fd, t->result_fd, ok);
}

static void mark_failed(struct ft_task *t)
{
	int none = 0;
	if (t->ctl)
		atomic_compare_exchange_strong(&t->ctl->abort, &none, t->index);
}

/* ft.task: what the task is, and whether its time is up. */
static void push_task_table(lua_State *L, struct ft_task *t, int job)
{
	lua_createtable(L, 0, 7);
	ft_set_integer(L, "index", t->index);
	ft_set_integer(L, "count", t->count);
	ft_set_string(L, "mode", ft_task_mode_names[t->mode]);
	ft_set_integer(L, "cpu", t->cpu);
	lua_getfield(L, job, "seconds");
	lua_setfield(L, -2, "seconds");
	lua_pushboolean(L, 0); /* the deadline's key exists before the window */
	lua_setfield(L, -2, "deadline_ns");
	lua_pushlightuserdata(L, t);
	lua_pushcclosure(L, l_time_up, 1);
	lua_setfield(L, -2, "time_up");
}

/* The state as the job describes it: ft, the starter's timer and require
 * paths, and what a task may not do refused. */
static void open_task_state(lua_State *L, struct ft_task *t, int job)
{
	lua_getfield(L, job, "timer");
	ft_timer_take_copy(L, -1);
	lua_pop(L, 1);
	lua_getglobal(L, "package");
	lua_getfield(L, job, "path");
	lua_setfield(L, -2, "path");
	lua_getfield(L, job, "cpath");
	lua_setfield(L, -2, "cpath");
	lua_pop(L, 1);
	refuse(L);
	lua_getglobal(L, "ft");
	push_task_table(L, t, job);
	lua_setfield(L, -2, "task");
	lua_pop(L, 1);
}

/* Calls the function at fn with index, args[1..nargs]; leaves nres
 * results (LUA_MULTRET: all). */
static void call_task_fn(lua_State *L, int fn, const struct ft_task *t, int args, int nres)
{
	lua_pushvalue(L, fn);
	lua_pushinteger(L, t->index);
	for (int i = 1; i <= t->nargs; i++)
		lua_rawgeti(L, args, i);
	lua_call(L, t->nargs + 1, nres);
}

/* Protected: the state, the job, the chunk (compiled by the starter).
 * Returns the function and the arguments' table. */
static int task_setup(lua_State *L)
{
	struct ft_task *t = lua_touserdata(L, 1);
	ft_open_state(L, task_openers);
	if (t->pin_err)
		return ft_error_errno(L, t->pin_err, "task %d could not be pinned to CPU %d",
		                      t->index, t->cpu);
	ft_values_decode(L, t->job, t->job_len,
	                 t->mode == FT_TASK_THREADS ? FT_CROSS_THREAD : FT_CROSS_PROCESS);
	int job = lua_gettop(L);
	t->index = (int)ft_field_integer(L, job, "index", 0);
	t->count = (int)ft_field_integer(L, job, "count", 0);
	t->nargs = (int)ft_field_integer(L, job, "nargs", 0);
	if (t->mode == FT_TASK_PROCESSES) {
		int err = ft_task_shared_attach(&t->mapped, (int)ft_field_integer(L, job, "control_fd", -1),
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
	open_task_state(L, t, job);

	size_t len;
	lua_getfield(L, job, "chunk");
	const char *chunk = lua_tolstring(L, -1, &len);
	if (!chunk || luaL_loadbufferx(L, chunk, len, "=task", "b") != LUA_OK)
		return lua_error(L);
	/* the set-up sees what the function will: ... is index, args... */
	lua_getfield(L, job, "args");
	int args = lua_gettop(L);
	luaL_checkstack(L, t->nargs + 2, "too many arguments for a task");
	call_task_fn(L, args - 1, t, args, 1);
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
	struct ft_task *t = lua_touserdata(L, 3);
	/* Room for the calls made now, so the stack does not grow (realloc)
	 * inside the window; a sanitizer's allocator would fault on it. */
	luaL_checkstack(L, t->nargs + 3 + 8 * LUA_MINSTACK, "too many arguments for a task");
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
		call_task_fn(L, 1, t, 2, loop ? 1 : LUA_MULTRET);
		calls++;
		if (loop) {
			int64_t more = iterations_of(L, -1);
			if (more > INT64_MAX - iterations)
				luaL_error(L, "with seconds, a task's iterations add up to more than %I (the last "
				           "call returned %I): the count would wrap", (lua_Integer)INT64_MAX,
				           (lua_Integer)more);
			iterations += more;
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
	t->stats = (struct ft_task_stats){ t0, t1, calls, loop ? iterations : -1, {
		u1.minflt - u0.minflt, u1.majflt - u0.majflt, u1.utime_ns - u0.utime_ns,
		u1.stime_ns - u0.stime_ns, u1.cpu_ns - u0.cpu_ns } };
	if (loop)
		return 0;
	int n = lua_gettop(L) - base;
	lua_createtable(L, n, 1);
	lua_insert(L, base + 1);
	for (int i = n; i >= 1; i--)
		lua_rawseti(L, base + 1, i);
	ft_set_integer(L, "n", n);
	return 1;
}

static void set_stats(lua_State *L, const struct ft_task_stats *s)
{
	ft_set_integer(L, "start_ns", s->start_ns);
	ft_set_integer(L, "end_ns", s->end_ns);
	ft_set_integer(L, "ns", s->end_ns - s->start_ns);
	ft_set_integer(L, "calls", s->calls);
	if (s->iterations >= 0)
		ft_set_integer(L, "iterations", s->iterations);
	ft_set_integer(L, "minflt", s->usage.minflt);
	ft_set_integer(L, "majflt", s->usage.majflt);
	ft_set_integer(L, "faults", s->usage.minflt + s->usage.majflt);
	ft_set_integer(L, "utime_ns", s->usage.utime_ns);
	ft_set_integer(L, "stime_ns", s->usage.stime_ns);
	ft_set_integer(L, "cpu_ns", s->usage.cpu_ns);
}

static int encode_record(lua_State *L)
{
	struct ft_task *t = lua_touserdata(L, 3);
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

static bool encode(lua_State *L, struct ft_task *t)
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
	struct ft_task *t = lua_touserdata(L, 1);
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
	ft_set_integer(L, "index", t->index);
	ft_set_integer(L, "cpu", t->cpu);
	if (t->mode == FT_TASK_PROCESSES)
		ft_set_integer(L, "pid", getpid());
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
static void run_task(struct ft_task *t)
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

void *ft_task_thread(void *p)
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
	struct ft_task t;
	memset(&t, 0, sizeof t);
	t.mode = FT_TASK_PROCESSES;
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
	ft_populate_code();
	int err = ft_child_read_job(t.job_fd, &t.job, &t.job_len);
	if (err) {
		fprintf(stderr, "ftrun: a task process could not read its job: %s\n", strerror(err));
		return 1;
	}
	run_task(&t);
	int code = 0;
	if (t.record)
		ft_write_all(t.result_fd, t.record, t.record_len);
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

