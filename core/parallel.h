/* One kernel over N pthreads: each thread takes a slice of one buffer, or a
 * buffer of its own, optionally pinned to a CPU, and times its own slice in
 * C with its own fault count (RUSAGE_THREAD). No Lua runs on the threads. */
#ifndef FT_PARALLEL_H
#define FT_PARALLEL_H

#include <stdint.h>

#include "buffer.h"

enum ft_kernel { FT_KERNEL_TOUCH, FT_KERNEL_FILL, FT_KERNEL_READ };

struct ft_thread_job {
	struct ft_buffer slice;  /* the pages this thread works on */
	size_t first_word;       /* fill: index of the slice's first word in the whole */
	int cpu;                 /* -1: not pinned */
	/* results */
	int64_t ns;
	int64_t faults;
	int err;                 /* 0, or the errno of pinning */
	int interrupted;         /* stopped early: ft_interrupted was set */
};

/* Runs every job on its own thread, released together by a barrier.
 * *wall_ns: from the release to the last thread's end. Returns 0 or errno
 * of pthread_create. */
int ft_parallel_run(struct ft_thread_job *jobs, int n, enum ft_kernel kernel,
                    uint64_t arg, int64_t *wall_ns);

#endif
