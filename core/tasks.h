/* N tasks started together from a barrier: threads of this process, or
 * processes of their own (the runner's executable, started by posix_spawn:
 * a fork would leave every private page of the parent write-protected, so
 * its next pass would take a fault per page). What a task runs is the
 * runner's business; this module owns the shared control block, the
 * barrier, the children's pipes and their reaping. Functions return 0 or
 * an errno value. */
#ifndef FT_TASKS_H
#define FT_TASKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buffer.h"
#include "memfd.h"

/* One cache line per task, so counting does not bounce a shared line. */
struct ft_task_slot {
	_Alignas(64) _Atomic int64_t iterations;
};

/* Shared by a group's tasks and their starter. It lives in a memfd mapped
 * shared, so that processes see the same words as threads do. */
struct ft_task_control {
	atomic_int abort;  /* 0; 1 + index of the first task that failed; -1: stop all */
	atomic_int stop;   /* the starter ended every task's time (soft stop) */
	int count;
	struct ft_task_slot slot[];
};

struct ft_task_shared {
	struct ft_memfd file;        /* fd -1 in a child once mapped */
	struct ft_buffer map;
	struct ft_task_control *ctl; /* NULL until made */
};

int ft_task_shared_create(struct ft_task_shared *s, int count);
/* In a child: maps the starter's control block from the inherited fd,
 * then closes the fd. */
int ft_task_shared_attach(struct ft_task_shared *s, int fd, int count);
void ft_task_shared_release(struct ft_task_shared *s);

/* --- threads ---------------------------------------------------------- */

struct ft_threads {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int count, started;
	int ready, failed;
	int released;       /* 0 not yet; 1 go; -1 abort */
	pthread_t *ids;
};

/* Starts count threads running fn(args[i]) with every signal blocked (the
 * main thread takes SIGINT). On an error, the threads already started are
 * released with abort and joined. */
int ft_threads_start(struct ft_threads *t, int count, void *(*fn)(void *), void *const *args);
/* In a task, after its set-up: counts it ready (ok: the set-up worked),
 * waits for the release, and returns whether to go. */
bool ft_threads_ready(struct ft_threads *t, bool ok);
/* Waits until every started task is ready, then releases them all: go
 * when every set-up worked. *release_ns: the release's CLOCK_MONOTONIC. */
bool ft_threads_release(struct ft_threads *t, int64_t *release_ns);
void ft_threads_join(struct ft_threads *t);

/* --- processes -------------------------------------------------------- */

struct ft_child {
	pid_t pid;          /* 0 once reaped */
	int job_fd;         /* the parent's end of the job pipe; -1 when closed */
	int result_fd;      /* the parent's end of the result pipe; -1 at its end */
	char *out;          /* everything the child wrote so far (malloc) */
	size_t len, cap;
	int status;         /* waitpid's status once reaped */
};

/* Runs exe with argv[0..], where the two strings at argv[job_arg] and
 * argv[job_arg + 1] are overwritten with the numbers of the child's job
 * (read) and result (write) pipe ends. keep: descriptors the child
 * inherits under their own numbers; every other one stays close-on-exec.
 * SIGINT and SIGPIPE are default in the child, no signal blocked. */
int ft_child_spawn(struct ft_child *c, const char *exe, char **argv, int job_arg,
                   const int *keep, int nkeep);
/* Writes all of p to the child's job pipe; a child gone is EPIPE, never a
 * SIGPIPE for us. */
int ft_child_send(struct ft_child *c, const void *p, size_t n);
/* Sends a job: its length (8 bytes), then its bytes. */
int ft_child_send_job(struct ft_child *c, const void *p, size_t n);
/* The barrier from the starter's side, after every job was sent: reads
 * each child's R (set-up done) or E (failed), then releases them all with
 * G, or with A (abort) when one failed, ended or SIGINT came. Returns
 * whether they go; *release_ns: the release's CLOCK_MONOTONIC. */
bool ft_children_release(struct ft_child *c, int n, const atomic_int *abort, int64_t grace_ns,
                         int64_t *release_ns);
/* Reads every child's result pipe until it holds at least want bytes or
 * ended (want SIZE_MAX: to the end). When ft_interrupted is set the
 * children get a SIGINT (the user may have signalled this process alone);
 * when that or *abort is set, a child still running grace_ns later is
 * killed (SIGKILL). */
int ft_children_read(struct ft_child *c, int n, size_t want, const atomic_int *abort,
                     int64_t grace_ns);
/* --- inside a child: its end of the pipes ------------------------------ */

/* Reads the job ft_child_send_job sent (malloc'd into *job). */
int ft_child_read_job(int job_fd, char **job, size_t *len);
/* The barrier from the child's side, after its set-up: says R (ok) or E,
 * and waits for the release; returns whether to go. The end of the pipe
 * (the starter is gone), an abort or SIGINT is no. */
bool ft_child_ready(int job_fd, int result_fd, bool ok);
/* Writes all of p to fd (the result pipe). */
int ft_write_all(int fd, const void *p, size_t n);

/* In a child, first thing: a SIGKILL when the parent dies, so a task in a
 * loop never outlives a starter that was killed. (Dying before this call,
 * the parent leaves the job pipe empty: the child stops there.) */
void ft_child_die_with_parent(void);
/* Closes the pipes and waits for every child (status). */
void ft_children_reap(struct ft_child *c, int n);
/* Frees what they wrote. */
void ft_children_free(struct ft_child *c, int n);

/* Maps every page of the process's code (its executable mappings: ftrun,
 * liblua, libc) with MADV_POPULATE_READ, so that a task's measured calls
 * take no fault for an instruction fetch of code nothing ran yet: a new
 * process has none of it mapped. Best effort: returns how many bytes. */
size_t ft_populate_code(void);

/* --- CPUs ------------------------------------------------------------- */

/* The CPUs this process may run on (its affinity mask, as taskset left
 * it), in order, into cpus; returns how many, or -errno. */
int ft_allowed_cpus(int *cpus, int max);
/* Pins the calling thread (or single-threaded process) to one CPU. */
int ft_pin_self(int cpu);

#endif
