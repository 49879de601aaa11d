/* Kernel events with their time, CPU and thread: tracepoints (ids from
 * tracefs) and software events opened with perf_event_open, each sampled
 * on every occurrence (period 1) into mmap'd rings that nothing reads
 * until the window has closed. The rings are written once before, so the
 * kernel's writes into them add no page fault to the window; what does
 * not fit is counted as lost (PERF_FORMAT_LOST), never guessed.
 *
 * Times are CLOCK_MONOTONIC (use_clockid), the clock ft_now_ns reads and
 * the per-page timer is calibrated against: an event's time and a
 * reading of ft_now_ns taken around a pass are on one time line. */
#ifndef FT_TRACE_H
#define FT_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "perf.h"

#define FT_TRACEFS "/sys/kernel/tracing"

enum { FT_TRACE_MAX_EVENTS = 64, FT_TRACE_MAX_CPUS = 64, FT_TRACE_NAME = 96 };

/* What a record is: one of the opened events (its index in the order
 * given), or a context switch of the traced thread. */
enum { FT_TRACE_SWITCH_OUT = -1, FT_TRACE_SWITCH_IN = -2 };

struct ft_trace_event {
	int64_t time;  /* CLOCK_MONOTONIC ns */
	int32_t kind;  /* an event's index, or FT_TRACE_SWITCH_* */
	int32_t cpu;
	int32_t tid;
	int32_t preempt; /* for SWITCH_OUT: 1 when the thread was runnable */
};

struct ft_trace_spec {
	char name[FT_TRACE_NAME]; /* "group:event", or "software:page-faults" ... */
	bool per_cpu;             /* on every online CPU, whatever runs there */
};

struct ft_trace_opts {
	struct ft_trace_spec events[FT_TRACE_MAX_EVENTS];
	int n_events;
	bool switches;        /* context-switch records of the traced thread */
	size_t ring_bytes;    /* each ring's data area: a power of two pages */
	char tracefs[256];    /* where tracefs is (or is to be mounted) */
	bool may_mount;       /* mount tracefs there when it is not (root only) */
};

struct ft_trace_ring {
	int fd;               /* the event whose ring the others write into */
	void *map;
	size_t map_bytes;
	int64_t lost_records; /* PERF_RECORD_LOST seen while draining */
};

struct ft_trace {
	struct ft_trace_opts opts;
	int n_fds;
	int fds[FT_TRACE_MAX_EVENTS * (FT_TRACE_MAX_CPUS + 1) + 1];
	int fd_event[FT_TRACE_MAX_EVENTS * (FT_TRACE_MAX_CPUS + 1) + 1]; /* -1: the switch carrier */
	uint64_t fd_id[FT_TRACE_MAX_EVENTS * (FT_TRACE_MAX_CPUS + 1) + 1];
	int64_t base_count[FT_TRACE_MAX_EVENTS * (FT_TRACE_MAX_CPUS + 1) + 1]; /* at start */
	int64_t base_lost[FT_TRACE_MAX_EVENTS * (FT_TRACE_MAX_CPUS + 1) + 1];
	int n_rings;
	struct ft_trace_ring rings[FT_TRACE_MAX_CPUS + 1];
	/* the thread's events see its user space only: the kernel refused
	 * more (perf_event_paranoid 2 without CAP_PERFMON), as the counters */
	bool kernel_excluded;
	bool enabled;
	/* filled by ft_trace_drain, sorted by time */
	struct ft_trace_event *events;
	size_t n, capacity;
	int64_t lost;                        /* samples the rings had no room for */
	int64_t counts[FT_TRACE_MAX_EVENTS]; /* occurrences, lost ones included */
	int64_t start_ns, stop_ns;           /* the enabled interval (CLOCK_MONOTONIC) */
};

/* tracefs's directory with an events/ folder, after a mount where
 * allowed: 0, or an errno (EACCES: there but not readable by this user,
 * ENOENT: not mounted) with why it is not. */
int ft_tracefs_ready(const char *dir, bool may_mount, char *why, size_t size);

/* Opens every event (disabled), maps and writes the rings. Returns 0 or an
 * errno with the reason in why (the setting, event or file that refused);
 * on failure everything is released. */
int ft_trace_open(struct ft_trace *t, const struct ft_trace_opts *opts,
                  const struct ft_perf_settings *s, char *why, size_t size);
void ft_trace_start(struct ft_trace *t);
/* Disables the events, reads their counts and lost counts, and reads the
 * rings into t->events (sorted by time). Returns 0 or ENOMEM. */
int ft_trace_stop(struct ft_trace *t);
void ft_trace_close(struct ft_trace *t);

/* The proof's planted cause: MADV_DONTNEED on one page in every stride
 * (pages 0, stride, 2 stride, ...), so each of them faults on its next
 * store and no other page does. *pages: how many were advised. Returns 0
 * or an errno (EINVAL for a malloc buffer, whose pages are not its own). */
int ft_trace_plant_dontneed(const struct ft_buffer *b, size_t stride, size_t *pages);

#endif
