#include "kernels.h"

#include <string.h>

#include "now.h"

/* One store per page or word, as written: clang would otherwise unroll the
 * touch loop and add a vector path for stride 1, and the listing would no
 * longer show the loop that is measured. gcc at -O2 does neither. */
#if defined(__clang__)
#define AS_WRITTEN _Pragma("clang loop vectorize(disable) interleave(disable) unroll(disable)")
#else
#define AS_WRITTEN
#endif

void ft_touch(unsigned char *p, size_t pages, size_t stride, unsigned char v)
{
	AS_WRITTEN
	for (size_t i = 0; i < pages; i++)
		p[i * stride] = v;
}

void ft_fill(uint64_t *p, size_t first, size_t count, uint64_t k)
{
	AS_WRITTEN
	for (size_t i = first; i < first + count; i++)
		p[i] = i * k;
}

/* ft_touch with a planted cost: the stores as ft_touch makes them, then a
 * spin on the clock of at least spin_ns in all, so a benchmark's power is
 * measured on a real known change. The pass spins once, after its last
 * chunk: on a KVM guest a pause between stores or between chunks made the
 * faults after it cheaper (100 ns after every store: pass 1 -4.5 %; 50 ns a
 * page after each 64 MiB chunk of 256 MiB: -9 %), a plant that lowered the
 * cost it was to raise. A kernel of its own, so ft_touch's listing stays
 * the loop that is measured. */
void ft_touch_planted(unsigned char *p, size_t pages, size_t stride, unsigned char v, int64_t spin_ns)
{
	AS_WRITTEN
	for (size_t i = 0; i < pages; i++)
		p[i * stride] = v;
	int64_t until = ft_now_ns() + spin_ns;
	while (ft_now_ns() < until)
		;
}

uint64_t ft_sum_bytes(const unsigned char *p, size_t pages, size_t stride)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < pages; i++)
		sum += p[i * stride];
	return sum;
}

uint64_t ft_sum_words(const uint64_t *p, size_t count)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < count; i++)
		sum += p[i];
	return sum;
}

void ft_touch_timed(unsigned char *p, size_t pages, size_t stride,
                    unsigned char v, int64_t *ns)
{
	int64_t before = ft_now_ns();
	AS_WRITTEN
	for (size_t i = 0; i < pages; i++) {
		p[i * stride] = v;
		int64_t after = ft_now_ns();
		ns[i] = after - before;
		before = after;
	}
}

void ft_touch_timed_walk(unsigned char *p, size_t pages, ptrdiff_t step,
                         unsigned char v, unsigned char *out)
{
	int64_t before = ft_now_ns();
	AS_WRITTEN
	for (size_t i = 0; i < pages; i++) {
		p[(ptrdiff_t)i * step] = v;
		int64_t after = ft_now_ns(), d = after - before;
		memcpy(out + i * sizeof d, &d, sizeof d);
		before = after;
	}
}

#ifdef FT_HAVE_TSC
void ft_touch_timed_tsc(unsigned char *p, size_t pages, size_t stride,
                        unsigned char v, int64_t *ticks)
{
	uint64_t before = ft_tsc();
	AS_WRITTEN
	for (size_t i = 0; i < pages; i++) {
		p[i * stride] = v;
		uint64_t after = ft_tsc();
		ticks[i] = (int64_t)(after - before);
		before = after;
	}
}

void ft_touch_timed_walk_tsc(unsigned char *p, size_t pages, ptrdiff_t step,
                             unsigned char v, unsigned char *out)
{
	uint64_t before = ft_tsc();
	AS_WRITTEN
	for (size_t i = 0; i < pages; i++) {
		p[(ptrdiff_t)i * step] = v;
		uint64_t after = ft_tsc();
		int64_t d = (int64_t)(after - before);
		memcpy(out + i * sizeof d, &d, sizeof d);
		before = after;
	}
}
#endif
