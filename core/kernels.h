/* The measured loops. They live alone in kernels.c, built at -O2, and the
 * build writes their assembly to core/kernels_O2.s for anyone to read. */
#ifndef FT_KERNELS_H
#define FT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* One byte store of v at the start of each of `pages` pages `stride` apart. */
void ft_touch(unsigned char *p, size_t pages, size_t stride, unsigned char v);

/* ft_touch, then a spin of at least spin_ns in all on the clock: a known
 * cost planted in the timed pass (PLANT_NS), the faults' pacing unchanged. */
void ft_touch_planted(unsigned char *p, size_t pages, size_t stride, unsigned char v, int64_t spin_ns);

/* p[i] = i * k for i in [first, first + count): a value memset cannot make. */
void ft_fill(uint64_t *p, size_t first, size_t count, uint64_t k);

/* Sum of the first byte of each page, and of every word. */
uint64_t ft_sum_bytes(const unsigned char *p, size_t pages, size_t stride);
uint64_t ft_sum_words(const uint64_t *p, size_t count);

/* ft_touch with a clock reading after every store: ns[i] is the time from
 * the reading before page i's store to the one after it (CLOCK_MONOTONIC). */
void ft_touch_timed(unsigned char *p, size_t pages, size_t stride,
                    unsigned char v, int64_t *ns);

/* The same with rdtscp (ft_tsc): ticks[i] in TSC ticks, converted to ns
 * after the pass by ft_timer_to_ns. */
void ft_touch_timed_tsc(unsigned char *p, size_t pages, size_t stride,
                        unsigned char v, int64_t *ticks);

/* The walk of ft_pass_touch_timed_walk: one byte store of v into each of
 * `pages` pages `step` bytes apart (negative: downwards) from p, a clock
 * reading after every store, and the time since the reading before it
 * stored at out + 8 * i in the machine's byte order, through memcpy so
 * that out may sit at any byte (the samples array shifted). */
void ft_touch_timed_walk(unsigned char *p, size_t pages, ptrdiff_t step,
                         unsigned char v, unsigned char *out);
void ft_touch_timed_walk_tsc(unsigned char *p, size_t pages, ptrdiff_t step,
                             unsigned char v, unsigned char *out);

#endif
