/* One task of ft.tasks, inside: its own Lua state, set up from the job its
 * starter encoded, released from the barrier, timed and counted, and a
 * record encoded for the starter. In a thread of the starter's process or
 * in a process of its own (ftrun --task-worker). */
#ifndef FT_RUNNER_TASK_H
#define FT_RUNNER_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/counters.h"
#include "../core/tasks.h"

/* The hidden first argument that makes ftrun a task's process:
 * ftrun --task-worker JOBFD RESULTFD CPU. */
#define FT_TASK_WORKER_FLAG "--task-worker"

enum ft_task_mode { FT_TASK_THREADS, FT_TASK_PROCESSES };
extern const char *const ft_task_mode_names[]; /* "threads", "processes", NULL */

/* What a task measured around its calls. */
struct ft_task_stats {
	int64_t start_ns, end_ns;
	int64_t calls, iterations;     /* iterations -1: not a seconds loop */
	struct ft_thread_usage usage;  /* the calls' own share */
};

/* One task as its runner sees it. The starter fills the first part. */
struct ft_task {
	enum ft_task_mode mode;
	int index, count, cpu;          /* index from 1; cpu -1: not pinned */
	char *job;                      /* the encoded job table (malloc) */
	size_t job_len;
	struct ft_task_control *ctl;    /* threads: the group's control block */
	struct ft_threads *threads;     /* threads: the barrier */
	/* the task's own */
	struct ft_task_shared mapped;   /* a child: its mapping of the control block */
	int job_fd, result_fd;          /* a child: its pipes */
	int pin_err;
	int nargs;                      /* args[1] to args[nargs] (args.n, or #args) */
	bool readied;
	int64_t seconds_ns, deadline_ns;
	struct ft_task_stats stats;
	char *record;                   /* out: the encoded record table */
	size_t record_len;
	char *fail;                     /* out: why there is no record */
};

/* A thread's entry: runs the task (a struct ft_task *) to its end. */
void *ft_task_thread(void *task);
/* The process of a task in processes mode (main.c hands over). */
int ft_task_worker(int argc, char **argv);

#endif
