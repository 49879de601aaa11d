#include "samples.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sink.h"

int ft_samples_init(struct ft_samples *s, size_t n)
{
	memset(s, 0, sizeof *s);
	if (n > SIZE_MAX / sizeof(int64_t) || !(s->v = malloc(n * sizeof(int64_t))))
		return ENOMEM;
	memset(s->v, 0xff, n * sizeof(int64_t)); /* -1: not malloc+memset(0) = calloc */
	FT_SINK(s->v);
	s->n = s->capacity = n;
	return 0;
}

void ft_samples_free(struct ft_samples *s)
{
	free(s->v);
	free(s->sorted);
	memset(s, 0, sizeof *s);
}

void ft_samples_changed(struct ft_samples *s)
{
	s->sorted_valid = false;
}

int64_t ft_samples_min(const struct ft_samples *s)
{
	int64_t m = INT64_MAX;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] < m)
			m = s->v[i];
	return m;
}

int64_t ft_samples_max(const struct ft_samples *s)
{
	int64_t m = INT64_MIN;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] > m)
			m = s->v[i];
	return m;
}

/* Sorts v (n values) with a least-significant-digit radix sort, 16 bits a
 * pass through tmp, skipping a digit every value shares: a pass of cycle C
 * gives 262144 samples, which qsort took 150 ms to order in this guest,
 * once per pass and repetition of a default run. Returns 0 or ENOMEM. */
static int radix_sort(int64_t *v, size_t n)
{
	enum { DIGITS = 1 << 16 };
	uint64_t *a = (uint64_t *)v, *tmp = malloc(n * sizeof *tmp + DIGITS * sizeof(size_t));
	if (!tmp)
		return ENOMEM;
	size_t *count = (size_t *)(tmp + n); /* no static: tasks sort in threads */
	const uint64_t flip = UINT64_C(1) << 63; /* signed order as unsigned */
	for (size_t i = 0; i < n; i++)
		a[i] ^= flip;
	uint64_t *from = a, *to = tmp;
	for (int shift = 0; shift < 64; shift += 16) {
		memset(count, 0, DIGITS * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[from[i] >> shift & 0xffff]++;
		if (n == 0 || count[from[0] >> shift & 0xffff] == n)
			continue; /* one digit for all: nothing moves */
		size_t sum = 0;
		for (size_t d = 0; d < DIGITS; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[from[i] >> shift & 0xffff]++] = from[i];
		uint64_t *t = from;
		from = to, to = t;
	}
	if (from != a)
		memcpy(a, from, n * sizeof *a);
	for (size_t i = 0; i < n; i++)
		a[i] ^= flip;
	free(tmp);
	return 0;
}

int64_t ft_samples_percentile(struct ft_samples *s, double p, bool *ok)
{
	*ok = true;
	if (!s->sorted_valid) {
		if (!s->sorted && !(s->sorted = malloc(s->capacity * sizeof(int64_t)))) {
			*ok = false;
			return 0;
		}
		memcpy(s->sorted, s->v, s->n * sizeof(int64_t));
		if (radix_sort(s->sorted, s->n) != 0) {
			*ok = false;
			return 0;
		}
		s->sorted_valid = true;
	}
	size_t rank = (size_t)ceil(p / 100.0 * (double)s->n);
	return s->sorted[rank == 0 ? 0 : rank - 1];
}

void ft_samples_log_histogram(const struct ft_samples *s, int per_octave, int from_log2,
                              size_t bins, int64_t *counts)
{
	memset(counts, 0, bins * sizeof *counts);
	double floor_ns = ldexp(1.0, from_log2);
	for (size_t i = 0; i < s->n; i++) {
		double x = (double)s->v[i];
		size_t k = 0;
		if (x >= floor_ns) {
			double b = floor(per_octave * (log2(x) - from_log2)) + 1;
			k = b >= (double)(bins - 1) ? bins - 1 : (size_t)b;
		}
		counts[k]++;
	}
}

size_t ft_samples_count_above(const struct ft_samples *s, int64_t t)
{
	size_t count = 0;
	for (size_t i = 0; i < s->n; i++)
		count += s->v[i] > t;
	return count;
}

double ft_samples_mean_above(const struct ft_samples *s, int64_t t)
{
	double sum = 0;
	size_t count = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] > t) {
			sum += (double)s->v[i];
			count++;
		}
	return count ? sum / (double)count : 0;
}

void ft_samples_runs_above(const struct ft_samples *s, int64_t t,
                           size_t *runs, size_t *longest)
{
	size_t current = 0;
	*runs = *longest = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i] > t) {
			if (current++ == 0)
				(*runs)++;
			if (current > *longest)
				*longest = current;
		} else {
			current = 0;
		}
	}
}
