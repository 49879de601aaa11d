/* Sampling this thread with the software cpu-clock event: the interrupted
 * instruction pointer and its call chain, kernel and user, into an mmap'd
 * ring buffer that a reader thread drains into tables made before the
 * window (so sampling adds no page fault to the pass). Without a PMU the
 * timer interrupt cannot fire while interrupts are off: such time shows
 * up at the instruction that turns them back on. */
#ifndef FT_PROFILE_H
#define FT_PROFILE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksyms.h"
#include "perf.h"

enum { FT_PROFILE_MAX_DEPTH = 64 };

struct ft_profile_opts {
	int64_t freq;       /* samples per second of the thread's CPU time */
	bool kernel;        /* sample the kernel too (needs ksyms) */
	int depth;          /* call-chain frames kept per sample; 0: no chains */
	size_t ring_bytes;  /* the ring's data area: a power of two pages, halved
	                     * while the kernel refuses it (the mlock limit) */
};

/* Samples by the symbol they landed in. frame: a kernel symbol's address,
 * or a user instruction pointer (named after the window). */
struct ft_leaf {
	uint64_t frame;
	int64_t count;      /* 0: an empty slot */
	bool kernel;
};

/* A call chain, leaf first: kernel frames, then the interrupted user
 * instruction (the user stack is not walked: Lua and libc keep no frame
 * pointers). */
struct ft_chain {
	int64_t count;      /* 0: an empty slot */
	uint64_t kernel_mask;
	int depth;
	bool truncated;     /* deeper than the depth kept: the root side is cut */
	uint64_t frames[];  /* opts.depth of them */
};

struct ft_profile {
	struct ft_profile_opts opts;
	const struct ft_ksyms *ksyms;
	int fd, stop_fd, ready_fd;
	void *ring;
	size_t ring_map_bytes;
	bool reader_started, enabled;
	pthread_t reader;
	/* the tables, one populated mapping */
	void *tables;
	size_t tables_bytes;
	struct ft_leaf *leaves;
	size_t leaf_slots;
	unsigned char *chains;
	size_t chain_slots, chain_stride;
	unsigned char *scratch;   /* a record that wraps the ring's end */
	/* written by the reader thread until ft_profile_stop joins it */
	int64_t samples, kernel_samples, user_samples, lost, throttled, dropped;
	int64_t period_ns;        /* the sum of the samples' periods */
	int64_t max_chain;        /* frames in the longest chain seen */
	/* set by ft_profile_stop */
	int64_t wall_ns, cpu_ns;
};

/* Opens the event (disabled), maps the ring and the tables, starts the
 * reader. ksyms may be NULL when opts->kernel is false. Returns 0 or an
 * errno, with the reason in why. On failure everything is released. */
int ft_profile_open(struct ft_profile *p, const struct ft_profile_opts *opts,
                    const struct ft_ksyms *ksyms, const struct ft_perf_settings *s,
                    char *why, size_t size);

/* Enables and disables sampling: the window. stop also drains the ring,
 * joins the reader and reads the event's own count (cpu_ns). */
void ft_profile_start(struct ft_profile *p);
void ft_profile_stop(struct ft_profile *p);

/* Stops if needed and releases everything; safe to call twice. */
void ft_profile_close(struct ft_profile *p);

static inline struct ft_chain *ft_profile_chain(const struct ft_profile *p, size_t slot)
{
	return (struct ft_chain *)(p->chains + slot * p->chain_stride);
}

/* A frame's name into buf: the kernel symbol, or for user space the
 * dynamic symbol that holds it (dladdr1), else "[object]" or "[user]". */
const char *ft_profile_frame_name(const struct ft_profile *p, uint64_t frame, bool kernel,
                                  char *buf, size_t size);

#endif
