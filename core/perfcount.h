/* Counting perf events for the calling thread, read around a pass: the
 * software events in one group (one read(2) for all of them), the task
 * clock alone, and the hardware ones in a third group, each attempted and
 * reported absent with the reason when the kernel has no such event (a
 * guest without a PMU). */
#ifndef FT_PERFCOUNT_H
#define FT_PERFCOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "perf.h"

enum ft_counter {
	FT_PAGE_FAULTS, FT_MINOR_FAULTS, FT_MAJOR_FAULTS, FT_CONTEXT_SWITCHES,
	FT_CPU_MIGRATIONS, FT_TASK_CLOCK,
	FT_FIRST_HARDWARE,
	FT_CYCLES = FT_FIRST_HARDWARE, FT_INSTRUCTIONS, FT_DTLB_LOAD_MISSES,
	FT_COUNTERS
};

enum { FT_GROUPS = 3 };

struct ft_counters {
	int fd[FT_COUNTERS];       /* -1: absent */
	uint64_t id[FT_COUNTERS];
	char absent[FT_COUNTERS][256]; /* why, for an absent counter */
	int leader[FT_GROUPS];     /* software, task clock, hardware; -1 if none */
	bool kernel_excluded;      /* paranoid forced exclude_kernel: switches undercount */
};

/* "page_faults", "task_clock_ns", "dtlb_load_misses", ... */
const char *ft_counter_name(enum ft_counter c);

/* Opens every counter it can. Returns 0, or an errno when not even the
 * software group opens (why says which setting refuses it). */
int ft_counters_open(struct ft_counters *c, const struct ft_perf_settings *s,
                     char *why, size_t size);

/* Totals since the open: v[i] = -1 for an absent counter. Hardware
 * counts are scaled by enabled/running time when the PMU multiplexed them.
 * Returns 0 or errno. */
int ft_counters_read(const struct ft_counters *c, int64_t v[FT_COUNTERS]);

void ft_counters_close(struct ft_counters *c);

#endif
