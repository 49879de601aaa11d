/* The clocks. Every timed window is CLOCK_MONOTONIC through the vDSO. The
 * per-page samples of ft_touch_timed use a finer timer where the CPU has
 * one: the time-stamp counter read with rdtscp, calibrated against
 * CLOCK_MONOTONIC and converted to ns after the pass. */
#ifndef FT_CLOCK_H
#define FT_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "now.h"

/* The per-page timer of ft_touch_timed. */
enum ft_timer_kind { FT_TIMER_CLOCK_GETTIME, FT_TIMER_TSC };

struct ft_timer {
	enum ft_timer_kind kind;
	bool invariant;             /* constant_tsc and nonstop_tsc in /proc/cpuinfo */
	bool rdtscp;                /* the rdtscp flag */
	bool calibrated;
	uint64_t tsc0;              /* the calibration's first pair */
	int64_t ns0;
	int64_t hz;                 /* TSC ticks per second; 0 until calibrated */
	int64_t calibrated_over_ns; /* the CLOCK_MONOTONIC interval of the calibration */
	uint64_t ns_q32;            /* ns per tick, 32.32 fixed point */
	char fallback[128];         /* why clock_gettime: "" when the TSC is used */
};

/* Chooses the timer: the TSC where /proc/cpuinfo (cpuinfo_path) shows it
 * invariant and rdtscp readable, otherwise clock_gettime with the reason
 * in fallback (force_clock_gettime takes it on purpose: FTRUN_TIMER).
 * For the TSC it takes the calibration's first (TSC, CLOCK_MONOTONIC)
 * pair; ft_timer_calibrate takes the second. */
void ft_timer_start(struct ft_timer *t, const char *cpuinfo_path, bool force_clock_gettime);

/* Completes the calibration at least min_ns (100 ms or more) after the
 * first pair, sleeping only for what is left: started when the program
 * starts and finished on first use, it usually costs nothing. Reads no
 * file and allocates nothing, so it adds no page fault to a pass. */
void ft_timer_calibrate(struct ft_timer *t, int64_t min_ns);

/* The timer's reading in ns: TSC ticks converted, or CLOCK_MONOTONIC. */
int64_t ft_timer_now_ns(const struct ft_timer *t);

/* One (TSC, CLOCK_MONOTONIC) pair: the TSC read between two clock
 * readings, from the try whose readings lie closest together (the TSC is 0
 * where the CPU has none). */
void ft_tsc_pair(uint64_t *tsc, int64_t *ns);

/* Turns n consecutive tick intervals into ns in place. The running total
 * is what gets rounded, so the ns sum to the converted whole. */
void ft_timer_to_ns(const struct ft_timer *t, int64_t *v, size_t n);

struct ft_clock_probe {
	int64_t tick_ns;  /* smallest non-zero step seen between two readings */
	double read_ns;   /* cost of one reading: the median batch of 1024 */
	int64_t step_ns;  /* the timer's granularity (ft_timer_step_ns); 0 if not measured */
};

/* Reads the clock back to back, as ftrun's windows do. */
struct ft_clock_probe ft_clock_probe(void);

/* The same for the timestamps of ft_touch_timed, measured through that
 * kernel on a page that is already resident: the per-page figure is a
 * store plus one reading. */
struct ft_clock_probe ft_clock_probe_timed(const struct ft_timer *t);

/* The smallest amount the timer advances by, in its own units (ticks or
 * ns): the largest g such that nearly every interval between readings
 * taken at random phases is a multiple of g (within g/8, for a counter
 * that alternates between, say, 25 and 26). 1 for a counter finer than a
 * reading can show. */
int64_t ft_timer_step(const struct ft_timer *t);

/* Core clock in GHz from a timed chain of dependent adds (one per cycle);
 * the best of several tries. */
double ft_clock_estimate_ghz(void);

#endif
