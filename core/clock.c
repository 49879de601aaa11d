#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "sink.h"

enum { PROBE_READS = 1 << 18, TIMED_PAGES = 1 << 16, STEP_READS = 1 << 13, PROBE_BATCH = 1 << 10 };

/* A whole word of a /proc/cpuinfo flags line. */
static bool has_flag(const char *flags, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = flags; (p = strstr(p, name)); p += len)
		if ((p == flags || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[len] == ' ' || p[len] == '\n' || p[len] == '\0'))
			return true;
	return false;
}

/* The first CPU's flags line, or "" when there is none. */
static void read_flags(const char *path, char *out, size_t size)
{
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5) == 0) {
			const char *colon = strchr(line, ':');
			snprintf(out, size, "%s", colon ? colon + 1 : "");
			break;
		}
	}
	free(line);
	fclose(f);
}

void ft_tsc_pair(uint64_t *tsc, int64_t *ns)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 32; i++) {
		int64_t a = ft_now_ns();
#ifdef FT_HAVE_TSC
		uint64_t t = ft_tsc();
#else
		uint64_t t = 0;
#endif
		int64_t b = ft_now_ns();
		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}

#ifdef FT_HAVE_TSC

static void sleep_until(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

#endif

void ft_timer_start(struct ft_timer *t, const char *cpuinfo_path, bool force_clock_gettime)
{
	memset(t, 0, sizeof *t);
	t->kind = FT_TIMER_CLOCK_GETTIME;
	t->calibrated = true; /* nothing to calibrate unless the TSC is chosen */
	char flags[4096];
	read_flags(cpuinfo_path, flags, sizeof flags);
	t->invariant = has_flag(flags, "constant_tsc") && has_flag(flags, "nonstop_tsc");
	t->rdtscp = has_flag(flags, "rdtscp");
#ifdef FT_HAVE_TSC
	if (force_clock_gettime) {
		snprintf(t->fallback, sizeof t->fallback, "asked for (FTRUN_TIMER=clock_gettime)");
	} else if (!flags[0]) {
		snprintf(t->fallback, sizeof t->fallback, "no flags line in %s", cpuinfo_path);
	} else if (!t->invariant) {
		snprintf(t->fallback, sizeof t->fallback, "the TSC is not invariant: %s lacks %s",
		         cpuinfo_path, has_flag(flags, "constant_tsc") ? "nonstop_tsc"
		         : has_flag(flags, "nonstop_tsc") ? "constant_tsc"
		         : "constant_tsc and nonstop_tsc");
	} else if (!t->rdtscp) {
		snprintf(t->fallback, sizeof t->fallback, "no rdtscp flag in %s", cpuinfo_path);
	} else {
		t->kind = FT_TIMER_TSC;
		t->calibrated = false;
		ft_tsc_pair(&t->tsc0, &t->ns0);
	}
#else
	(void)force_clock_gettime;
	snprintf(t->fallback, sizeof t->fallback, "no time-stamp counter on this architecture");
#endif
}

void ft_timer_calibrate(struct ft_timer *t, int64_t min_ns)
{
	if (t->calibrated)
		return;
#ifdef FT_HAVE_TSC
	if (min_ns < 100000000)
		min_ns = 100000000;
	if (ft_now_ns() - t->ns0 < min_ns)
		sleep_until(t->ns0 + min_ns);
	uint64_t tsc1;
	int64_t ns1;
	ft_tsc_pair(&tsc1, &ns1);
	uint64_t ticks = tsc1 - t->tsc0;
	int64_t ns = ns1 - t->ns0;
	t->hz = (int64_t)((unsigned __int128)ticks * 1000000000u / (uint64_t)ns);
	t->ns_q32 = (uint64_t)(((unsigned __int128)ns << 32) / ticks);
	t->calibrated_over_ns = ns;
#else
	(void)min_ns;
#endif
	t->calibrated = true;
}

int64_t ft_timer_now_ns(const struct ft_timer *t)
{
#ifdef FT_HAVE_TSC
	if (t->kind == FT_TIMER_TSC)
		return (int64_t)(((unsigned __int128)ft_tsc() * t->ns_q32) >> 32);
#endif
	(void)t;
	return ft_now_ns();
}

static int64_t ticks_ns(const struct ft_timer *t, uint64_t ticks)
{
	return (int64_t)(((unsigned __int128)ticks * t->ns_q32 + (1u << 31)) >> 32);
}

void ft_timer_to_ns(const struct ft_timer *t, int64_t *v, size_t n)
{
	if (t->kind != FT_TIMER_TSC)
		return; /* clock_gettime samples are ns already */
	uint64_t total = 0;
	int64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		total += (uint64_t)v[i];
		int64_t ns = ticks_ns(t, total);
		v[i] = ns - prev;
		prev = ns;
	}
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of n batch means (sorted in place). A reading's cost is the
 * median batch's, not the mean of them all: a process descheduled for a
 * few ms inside one batch of PROBE_BATCH readings (about 26 us here)
 * inflates that batch alone, and a mean over every reading by the whole
 * time it waited (245 against 26 ns per reading measured here under a load
 * of 12 on 2 CPUs). */
static double median_batch(double *v, size_t n)
{
	qsort(v, n, sizeof *v, compare_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct ft_clock_probe ft_clock_probe(void)
{
	struct ft_clock_probe probe = { INT64_MAX, 0, 0 };
	double batch[PROBE_READS / PROBE_BATCH];
	int64_t prev = ft_now_ns(), start = prev;
	for (int i = 0; i < PROBE_READS; i++) {
		int64_t t = ft_now_ns();
		if (t > prev && t - prev < probe.tick_ns)
			probe.tick_ns = t - prev;
		prev = t;
		if ((i + 1) % PROBE_BATCH == 0) {
			batch[i / PROBE_BATCH] = (double)(t - start) / PROBE_BATCH;
			start = t;
		}
	}
	probe.read_ns = median_batch(batch, PROBE_READS / PROBE_BATCH);
	return probe;
}

/* The timer's raw reading: ticks, or ns for clock_gettime. */
static int64_t raw_read(const struct ft_timer *t)
{
#ifdef FT_HAVE_TSC
	if (t->kind == FT_TIMER_TSC)
		return (int64_t)ft_tsc();
#endif
	(void)t;
	return ft_now_ns();
}

static int compare_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Whether at least 99 % of the non-zero intervals are within g/8 of a
 * multiple of g. */
static bool divides_nearly_all(const int64_t *d, size_t n, int64_t g)
{
	int64_t tolerance = g / 8;
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t r = d[i] % g;
		if (r > tolerance && g - r > tolerance)
			off++;
	}
	return off * 100 <= n;
}

int64_t ft_timer_step(const struct ft_timer *t)
{
	int64_t *d = malloc(STEP_READS * sizeof *d);
	if (!d)
		return 0;
	/* Readings at random phases: a short spin of 0 to 255 iterations
	 * between two, from a xorshift sequence. */
	uint32_t x = 2463534242u;
	uint64_t spin = 0;
	int64_t prev = raw_read(t);
	size_t n = 0;
	for (int i = 0; i < STEP_READS; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		for (uint32_t j = x & 255; j > 0; j--)
			__asm__ volatile("" : "+r"(spin));
		int64_t now = raw_read(t);
		if (now > prev)
			d[n++] = now - prev;
		prev = now;
	}
	int64_t step = 1;
	if (n > 0) {
		qsort(d, n, sizeof *d, compare_int64);
		for (int64_t g = d[n / 2]; g >= 2; g--) {
			if (divides_nearly_all(d, n, g)) {
				step = g;
				break;
			}
		}
	}
	free(d);
	return step;
}

struct ft_clock_probe ft_clock_probe_timed(const struct ft_timer *t)
{
	/* One resident byte touched TIMED_PAGES times (stride 0): the samples
	 * are the timestamp's own cost and step. The sample array is written
	 * first, as ft_samples are, so its own faults stay out. The cost is the
	 * median batch of three tries' (median_batch): preemption and stray
	 * interrupts stay out of it. */
	struct ft_clock_probe probe = { INT64_MAX, 0, 0 };
	enum { TRIES = 3, BATCHES = TIMED_PAGES / PROBE_BATCH };
	double batch[TRIES * BATCHES];
	unsigned char byte = 0;
	int64_t *ns = malloc(TIMED_PAGES * sizeof *ns);
	if (!ns)
		return probe;
	memset(ns, 0xff, TIMED_PAGES * sizeof *ns);
	for (int try = 0; try < TRIES; try++) {
#ifdef FT_HAVE_TSC
		if (t->kind == FT_TIMER_TSC)
			ft_touch_timed_tsc(&byte, TIMED_PAGES, 0, 1, ns);
		else
#endif
			ft_touch_timed(&byte, TIMED_PAGES, 0, 1, ns);
		FT_SINK(&byte);
		ft_timer_to_ns(t, ns, TIMED_PAGES);
		for (int b = 0; b < BATCHES; b++) {
			int64_t total = 0;
			for (int i = b * PROBE_BATCH; i < (b + 1) * PROBE_BATCH; i++) {
				total += ns[i];
				if (ns[i] > 0 && ns[i] < probe.tick_ns)
					probe.tick_ns = ns[i];
			}
			batch[try * BATCHES + b] = (double)total / PROBE_BATCH;
		}
	}
	free(ns);
	probe.read_ns = median_batch(batch, TRIES * BATCHES);
	int64_t step = ft_timer_step(t);
	if (t->kind == FT_TIMER_TSC)
		step = ticks_ns(t, (uint64_t)step);
	probe.step_ns = step > 0 ? step : 1;
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
