/* One pass of a kernel over a whole buffer, timed in C. The window holds the
 * kernel calls and nothing else: the buffer is walked in 64 MiB chunks so
 * that SIGINT, or in a task a failed sibling, can stop a pass between two
 * of them (16 checks of a flag per GiB: ft_should_stop). Each returns 0,
 * or EINTR when stopped. */
#ifndef FT_PASS_H
#define FT_PASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "clock.h"

int ft_pass_touch(const struct ft_buffer *b, unsigned char v, int64_t *ns);

/* ft_pass_touch with a spin of at least spin_ns per page, all of it after the last store (PLANT_NS). */
int ft_pass_touch_planted(const struct ft_buffer *b, unsigned char v, int64_t spin_ns, int64_t *ns);
int ft_pass_fill(const struct ft_buffer *b, uint64_t k, int64_t *ns);
/* samples must hold b->pages entries; they come back in ns, converted
 * after the window when the timer counts TSC ticks. */
int ft_pass_touch_timed(const struct ft_buffer *b, const struct ft_timer *timer,
                        unsigned char v, int64_t *samples, int64_t *ns);

/* As ft_pass_touch_timed, with each chunk's start read on CLOCK_MONOTONIC
 * just before its kernel (the time between two chunks is in no sample):
 * starts must hold ft_pass_chunks(b) entries, *done gets the chunks walked,
 * chunk c starting at page c * ft_pass_chunk_pages(b). */
int ft_pass_touch_timed_at(const struct ft_buffer *b, const struct ft_timer *timer, unsigned char v,
                           int64_t *samples, int64_t *starts, size_t *done, int64_t *ns);
size_t ft_pass_chunk_pages(const struct ft_buffer *b);
size_t ft_pass_chunks(const struct ft_buffer *b);

/* The order of a walk over a buffer's pages: residue 0 of `stride` first
 * (pages 0, stride, 2 stride, ...), then residue 1, and so on; backward:
 * that whole order reversed (stride 1: the last page first). Stride 0
 * stores into page 0 once per page of the buffer: the same loop with no
 * new page in it. A span k (1 to the buffer's pages) walks that order over
 * pages 0 to k - 1 only, again and again until the stores equal the
 * buffer's pages (the last run cut short): the same loop over a small
 * working set; 0 is the whole buffer. */
struct ft_walk {
	size_t stride; /* pages, 0 to the span */
	bool backward;
	size_t span;   /* pages, 0 (the buffer's) or 1 to the buffer's */
};

/* index[j] = the page stored into j-th by the walk, for j < pages. */
void ft_walk_order(const struct ft_walk *w, size_t pages, int64_t *index);
/* The pieces the walk is cut into (each within one residue and at most a
 * chunk's pages): the entries starts needs. */
size_t ft_pass_walk_chunks(const struct ft_buffer *b, const struct ft_walk *w);

/* As ft_pass_touch_timed_at over the walk's order: samples[j] is the j-th
 * store's time (time order, not page order), each piece's start is read
 * just before it into starts, firsts[k] = its first j. samples must have
 * FT_SAMPLES_SPARE written bytes after its pages' entries: the kernel
 * stores the samples from the first 64-byte boundary at or after samples,
 * plus `shift` bytes (0 to 63), and they are moved back to samples after
 * the pass. Returns 0, EINTR or ENOMEM (the walk's plan). */
int ft_pass_touch_timed_walk(const struct ft_buffer *b, const struct ft_timer *timer, unsigned char v,
                             const struct ft_walk *w, size_t shift, int64_t *samples, int64_t *starts,
                             int64_t *firsts, size_t *done, int64_t *ns);

/* A read of one byte per page, timed: the first touch by a load. */
int ft_pass_read_touch(const struct ft_buffer *b, uint64_t *sum, int64_t *ns);

/* Untimed read-backs, also interruptible. */
int ft_pass_sum_bytes(const struct ft_buffer *b, uint64_t *sum);
int ft_pass_sum_words(const struct ft_buffer *b, uint64_t *sum);

#endif
