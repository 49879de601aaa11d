#include "clock.h"

#include <stdlib.h>

#include "kernels.h"
#include "sink.h"

enum { PROBE_READS = 1 << 20, TIMED_PAGES = 1 << 16 };

struct ft_clock_probe ft_clock_probe(void)
{
	struct ft_clock_probe probe = { INT64_MAX, 0 };
	int64_t start = ft_now_ns(), prev = start;
	for (int i = 0; i < PROBE_READS; i++) {
		int64_t t = ft_now_ns();
		if (t > prev && t - prev < probe.tick_ns)
			probe.tick_ns = t - prev;
		prev = t;
	}
	probe.read_ns = (double)(prev - start) / PROBE_READS;
	return probe;
}

struct ft_clock_probe ft_clock_probe_timed(void)
{
	/* One resident byte touched TIMED_PAGES times (stride 0): the samples
	 * are the timestamp's own cost and step. */
	struct ft_clock_probe probe = { INT64_MAX, 0 };
	unsigned char byte = 0;
	int64_t *ns = malloc(TIMED_PAGES * sizeof *ns);
	if (!ns)
		return probe;
	ft_touch_timed(&byte, TIMED_PAGES, 0, 1, ns);
	FT_SINK(&byte);
	int64_t total = 0;
	for (int i = 0; i < TIMED_PAGES; i++) {
		total += ns[i];
		if (ns[i] > 0 && ns[i] < probe.tick_ns)
			probe.tick_ns = ns[i];
	}
	probe.read_ns = (double)total / TIMED_PAGES;
	free(ns);
	return probe;
}

/* 16 dependent register adds per iteration; the loop counter runs beside
 * them. The addend is a register: a chain of add-immediates runs several
 * per cycle on recent Intel cores (measured here: 11 "GHz" against 2.15
 * for this chain and for a 3-cycle imul chain). */
static void add_chain(uint64_t iterations)
{
	uint64_t x = 0, one = 1;
	__asm__ volatile(
		"1:\n\t"
		".rept 16\n\t"
		"add %2, %0\n\t"
		".endr\n\t"
		"dec %1\n\tjnz 1b"
		: "+r"(x), "+r"(iterations)
		: "r"(one));
	FT_SINK(x);
}

double ft_clock_estimate_ghz(void)
{
	const uint64_t iterations = 1 << 20; /* 16 Mi adds: a few ms */
	int64_t best = INT64_MAX;
	add_chain(iterations); /* wake the core up */
	for (int i = 0; i < 7; i++) {
		int64_t t0 = ft_now_ns();
		add_chain(iterations);
		int64_t t1 = ft_now_ns();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	return (double)(iterations * 16) / (double)best;
}
