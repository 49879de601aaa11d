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

static int compare(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
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
		qsort(s->sorted, s->n, sizeof(int64_t), compare);
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
