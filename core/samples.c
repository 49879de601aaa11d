#include "samples.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sink.h"

int ft_samples_init(struct ft_samples *s, size_t n)
{
	memset(s, 0, sizeof *s);
	if (n > (SIZE_MAX - FT_SAMPLES_SPARE) / sizeof(int64_t) ||
	    !(s->v = malloc(n * sizeof(int64_t) + FT_SAMPLES_SPARE)))
		return ENOMEM;
	/* -1: not malloc+memset(0) = calloc */
	memset(s->v, 0xff, n * sizeof(int64_t) + FT_SAMPLES_SPARE);
	FT_SINK(s->v);
	s->n = s->capacity = n;
	return 0;
}

void ft_samples_free(struct ft_samples *s)
{
	free(s->v);
	free(s->sorted);
	free(s->sort_work);
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

/* v sorted by an LSD radix sort, 11 bits a pass, the sign bit flipped so
 * the values sort as unsigned; a pass whose digit is one value throughout
 * is skipped (ns fit in 3 of the 6). tmp holds n values. cycles.lua sorts
 * a 1 GiB pass's 262144 samples every repetition: qsort took 25-130 ms of
 * the runner's own time each, this a few. The six digits' counts are
 * taken in one read of v, not one read each. */
enum { RADIX_BITS = 11, RADIX_BUCKETS = 1 << RADIX_BITS, RADIX_PASSES = (64 + RADIX_BITS - 1) / RADIX_BITS };

static size_t digit(int64_t x, int pass)
{
	return ((((uint64_t)x) ^ (UINT64_C(1) << 63)) >> (pass * RADIX_BITS)) & (RADIX_BUCKETS - 1);
}

static void radix_sort(int64_t *v, int64_t *tmp, size_t n, size_t (*count)[RADIX_BUCKETS])
{
	memset(count, 0, RADIX_PASSES * sizeof *count);
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < RADIX_PASSES; p++)
			count[p][digit(v[i], p)]++;
	int64_t *from = v, *to = tmp;
	for (int p = 0; p < RADIX_PASSES; p++) {
		if (count[p][digit(v[0], p)] == n)
			continue; /* v[0]'s digit is every value's */
		size_t sum = 0;
		for (size_t k = 0; k < RADIX_BUCKETS; k++) {
			size_t c = count[p][k];
			count[p][k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[p][digit(from[i], p)]++] = from[i];
		int64_t *t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof *v);
}

/* v sorted; work holds SORT_WORK(n) bytes, or is NULL (then qsort). */
#define SORT_WORK(n) ((n) * sizeof(int64_t) + RADIX_PASSES * RADIX_BUCKETS * sizeof(size_t))

static void sort_samples(int64_t *v, size_t n, void *work)
{
	if (n < 2 || !work) {
		qsort(v, n, sizeof *v, compare);
		return;
	}
	radix_sort(v, work, n, (size_t (*)[RADIX_BUCKETS])((int64_t *)work + n));
}

/* The sorted copy, made once per change of the samples; NULL when it cannot
 * be allocated. The radix sort's work space is kept beside it: allocated
 * afresh for each sort, its 2 MiB for a 1 GiB pass came from mmap and took
 * 512 page faults each time. */
static const int64_t *sorted(struct ft_samples *s)
{
	if (!s->sorted_valid) {
		if (!s->sorted && !(s->sorted = malloc(s->capacity * sizeof(int64_t))))
			return NULL;
		if (!s->sort_work && s->capacity <= (SIZE_MAX - SORT_WORK(0)) / sizeof(int64_t))
			s->sort_work = malloc(SORT_WORK(s->capacity)); /* NULL: qsort instead */
		memcpy(s->sorted, s->v, s->n * sizeof(int64_t));
		sort_samples(s->sorted, s->n, s->sort_work);
		s->sorted_valid = true;
	}
	return s->sorted;
}

int64_t ft_samples_percentile(struct ft_samples *s, double p, bool *ok)
{
	const int64_t *v = sorted(s);
	*ok = v != NULL;
	if (!v)
		return 0;
	size_t rank = (size_t)ceil(p / 100.0 * (double)s->n);
	return v[rank == 0 ? 0 : rank - 1];
}

static size_t log_bin(int64_t ns, double floor_ns, int per_octave, int from_log2, size_t bins)
{
	double x = (double)ns;
	if (x < floor_ns)
		return 0;
	double b = floor(per_octave * (log2(x) - from_log2)) + 1;
	return b >= (double)(bins - 1) ? bins - 1 : (size_t)b;
}

void ft_samples_log_histogram(struct ft_samples *s, int per_octave, int from_log2,
                              size_t bins, int64_t *counts)
{
	memset(counts, 0, bins * sizeof *counts);
	double floor_ns = ldexp(1.0, from_log2);
	/* Over the sorted copy (the percentiles make it anyway), a bin is
	 * computed once per distinct value: the samples sit on the clock's
	 * ticks, so 262144 of them hold a few thousand values, and the log2 of
	 * each sample was 3 ms of a 1 GiB pass's 7 ms of statistics. */
	const int64_t *v = sorted(s);
	if (!v) {
		for (size_t i = 0; i < s->n; i++)
			counts[log_bin(s->v[i], floor_ns, per_octave, from_log2, bins)]++;
		return;
	}
	for (size_t i = 0; i < s->n;) {
		size_t j = i + 1;
		while (j < s->n && v[j] == v[i])
			j++;
		counts[log_bin(v[i], floor_ns, per_octave, from_log2, bins)] += (int64_t)(j - i);
		i = j;
	}
}

void ft_samples_pack_i32(const struct ft_samples *s, unsigned char *out)
{
	for (size_t i = 0; i < s->n; i++) {
		int64_t x = s->v[i] > INT32_MAX ? INT32_MAX : s->v[i] < INT32_MIN ? INT32_MIN : s->v[i];
		uint32_t u = (uint32_t)x;
		out[4 * i] = (unsigned char)u;
		out[4 * i + 1] = (unsigned char)(u >> 8);
		out[4 * i + 2] = (unsigned char)(u >> 16);
		out[4 * i + 3] = (unsigned char)(u >> 24);
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
