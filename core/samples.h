/* A C array of per-page times and the statistics the cycles need, computed
 * here so that 262144 samples cost milliseconds, not a Lua table. */
#ifndef FT_SAMPLES_H
#define FT_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ft_samples {
	int64_t *v;
	size_t n;         /* entries in use: the statistics cover v[0 .. n) */
	size_t capacity;
	int64_t *sorted;  /* a sorted copy, made on first need */
	void *sort_work;  /* the radix sort's copy and counts, kept with it */
	bool sorted_valid;
};

/* Bytes after the last entry, allocated and written with the entries: a
 * pass may store its samples from any byte of the array's first 64-byte
 * line past v (ft_pass_touch_timed_walk's shift) and move them back. */
enum { FT_SAMPLES_SPARE = 128 };

/* Allocates and writes every entry (-1) and the spare bytes, so a timed
 * pass that stores into the array takes no faults of its own. Returns 0
 * or errno. */
int ft_samples_init(struct ft_samples *s, size_t n);
void ft_samples_free(struct ft_samples *s);
/* Call after writing entries; a timed pass also sets n to its page count. */
void ft_samples_changed(struct ft_samples *s);

int64_t ft_samples_min(const struct ft_samples *s);
int64_t ft_samples_max(const struct ft_samples *s);
/* Nearest rank: the smallest value with at least p % of the samples at or
 * below it. p in [0, 100]. Returns 0 on allocation failure with *ok false. */
int64_t ft_samples_percentile(struct ft_samples *s, double p, bool *ok);
size_t ft_samples_count_above(const struct ft_samples *s, int64_t t);
double ft_samples_mean_above(const struct ft_samples *s, int64_t t);
/* A log-spaced histogram: per_octave bins per doubling from 2^from_log2;
 * counts[0] holds every sample below 2^from_log2, counts[bins-1] every one
 * at or above the last edge. counts has bins entries, zeroed here. */
void ft_samples_log_histogram(struct ft_samples *s, int per_octave, int from_log2,
                              size_t bins, int64_t *counts);
/* The samples as little-endian int32, clamped to its range: 4 * n bytes into out. */
void ft_samples_pack_i32(const struct ft_samples *s, unsigned char *out);
/* Contiguous runs of samples above t: how many, and the longest. */
void ft_samples_runs_above(const struct ft_samples *s, int64_t t,
                           size_t *runs, size_t *longest);

#endif
