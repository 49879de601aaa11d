/* The clock readers alone, inline, the way google/benchmark keeps its
 * cycleclock.h apart from its timers: the measured kernels read them, and
 * clock.c measures through those kernels, so the readers cannot live in
 * clock.h without an import circle. */
#ifndef FT_NOW_H
#define FT_NOW_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#define FT_HAVE_TSC 1
#include <x86intrin.h>
#endif

static inline int64_t ft_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#ifdef FT_HAVE_TSC
/* rdtscp waits until every earlier instruction has executed, so the store
 * before it (address translation and fault included) is inside the sample
 * it closes. A faulting store needs no fence at all: its exception squashes
 * the younger timestamp, which is read again after the fault returns. */
static inline uint64_t ft_tsc(void)
{
	unsigned aux;
	return __rdtscp(&aux);
}
#endif

#endif
