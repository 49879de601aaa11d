/* The clock behind every timed window: CLOCK_MONOTONIC through the vDSO. */
#ifndef FT_CLOCK_H
#define FT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t ft_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct ft_clock_probe {
	int64_t tick_ns;  /* smallest non-zero step seen between two readings */
	double read_ns;   /* mean cost of one reading */
};

/* Reads the clock back to back, as ftrun's windows do. */
struct ft_clock_probe ft_clock_probe(void);

/* The same for the timestamps of ft_touch_timed, measured through that
 * kernel on a page that is already resident: the per-page figure is a
 * store plus one reading. */
struct ft_clock_probe ft_clock_probe_timed(void);

/* Core clock in GHz from a timed chain of dependent adds (one per cycle);
 * the best of several tries. */
double ft_clock_estimate_ghz(void);

#endif
