/* The C reference for `make bench`: cycle A's passes with the timing done in
 * C and no Lua anywhere, from the same core/ kernels and flags as ftrun; the
 * floor of an empty timed window; and the fill kernel against memset and a
 * non-temporal store loop on one touched buffer.
 *
 *   ref cycle MIB REPS     REP <rep> <row> <ns> <faults> lines, rep 0 = warm-up
 *   ref floor ROUNDS       FLOOR <what> <ns> lines
 *   ref limits MIB ROUNDS  LIMIT <what> <ns> <bytes> lines
 */
#include <emmintrin.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/buffer.h"
#include "../core/clock.h"
#include "../core/counters.h"
#include "../core/kernels.h"
#include "../core/pass.h"
#include "../core/sink.h"

static const uint64_t K_A = 0x9E3779B97F4A7C15u; /* cycles.lua's value for A */

static long parse_count(const char *s, const char *what)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 1) {
		fprintf(stderr, "ref: %s=%s: expected a positive integer\n", what, s);
		exit(2);
	}
	return v;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "ref: %s: %s\n", what, strerror(err));
	exit(1);
}

static void row(int rep, const char *name, int64_t ns, int64_t faults)
{
	printf("REP %d %s %lld %lld\n", rep, name, (long long)ns, (long long)faults);
}

static uint64_t fill_sum(size_t n, uint64_t k)
{
	uint64_t half = n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
	return half * k;
}

static void check(const char *what, uint64_t got, uint64_t want)
{
	FT_SINK(got);
	if (got != want) {
		fprintf(stderr, "ref: checksum mismatch in %s: %llu, expected %llu\n", what,
		        (unsigned long long)got, (unsigned long long)want);
		exit(1);
	}
}

/* Cycle A exactly as cycles.lua runs it, the fault counter read just outside
 * every window. */
static void cycle(size_t bytes, int reps)
{
	for (int rep = 0; rep <= reps; rep++) {
		struct ft_buffer b;
		int64_t ns, f0 = ft_faults(), f1;
		int err = ft_buffer_map(&b, bytes, FT_THP_DEFAULT, false);
		if (err)
			die("mmap", err);
		row(rep, "mmap", b.map_ns, ft_faults() - f0);
		static const struct { const char *name; unsigned char v; } touches[] = {
			{ "pass1", 0x11 }, { "pass2", 0x22 }, { "pass2r", 0x33 }
		};
		for (int i = 0; i < 3; i++) {
			f0 = ft_faults();
			ft_pass_touch(&b, touches[i].v, &ns);
			f1 = ft_faults();
			row(rep, touches[i].name, ns, f1 - f0);
		}
		uint64_t sum;
		ft_pass_sum_bytes(&b, &sum);
		check("pass 2 repeated", sum, (uint64_t)0x33 * b.pages);
		f0 = ft_faults();
		ft_pass_fill(&b, K_A, &ns);
		f1 = ft_faults();
		row(rep, "fill", ns, f1 - f0);
		ft_pass_sum_words(&b, &sum);
		check("fill", sum, fill_sum(b.bytes / 8, K_A));
		f0 = ft_faults();
		if ((err = ft_buffer_release(&b, &ns)))
			die("munmap", err);
		row(rep, "munmap", ns, ft_faults() - f0);
		fflush(stdout);
	}
}

static void floor_(int rounds)
{
	struct ft_buffer b;
	int err = ft_buffer_map(&b, ft_page_size(), FT_THP_DEFAULT, false);
	if (err)
		die("mmap", err);
	ft_touch(b.addr, 1, b.page_size, 1);
	for (int i = 0; i < rounds; i++) {
		int64_t t0 = ft_now_ns();
		int64_t t1 = ft_now_ns();
		printf("FLOOR empty %lld\n", (long long)(t1 - t0));
		t0 = ft_now_ns();
		ft_touch(b.addr, 1, b.page_size, (unsigned char)i);
		t1 = ft_now_ns();
		FT_SINK(b.addr);
		printf("FLOOR touch1 %lld\n", (long long)(t1 - t0));
	}
	ft_buffer_release(&b, NULL);
}

/* The write limits the fill is compared with. */
static void fill_nt(uint64_t *p, size_t n, uint64_t k)
{
	for (size_t i = 0; i < n; i++)
		_mm_stream_si64((long long *)&p[i], (long long)(i * k));
	_mm_sfence();
}

static void limits(size_t bytes, int rounds)
{
	struct ft_buffer b;
	int err = ft_buffer_map(&b, bytes, FT_THP_DEFAULT, false);
	if (err)
		die("mmap", err);
	int64_t ns;
	ft_pass_touch(&b, 1, &ns);
	uint64_t *p = (uint64_t *)b.addr;
	size_t n = bytes / 8;
	for (int i = 0; i < rounds; i++) {
		ft_pass_fill(&b, K_A, &ns);
		printf("LIMIT fill %lld %zu\n", (long long)ns, bytes);
		int64_t t0 = ft_now_ns();
		memset(p, i & 0xff, bytes);
		int64_t t1 = ft_now_ns();
		FT_SINK(p);
		printf("LIMIT memset %lld %zu\n", (long long)(t1 - t0), bytes);
		t0 = ft_now_ns();
		fill_nt(p, n, K_A);
		t1 = ft_now_ns();
		FT_SINK(p);
		printf("LIMIT nt_store %lld %zu\n", (long long)(t1 - t0), bytes);
	}
	uint64_t sum;
	ft_pass_sum_words(&b, &sum);
	check("non-temporal fill", sum, fill_sum(n, K_A));
	ft_buffer_release(&b, NULL);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "cycle") == 0)
		cycle((size_t)parse_count(argv[2], "MIB") << 20, (int)parse_count(argv[3], "REPS"));
	else if (argc == 3 && strcmp(argv[1], "floor") == 0)
		floor_((int)parse_count(argv[2], "ROUNDS"));
	else if (argc == 4 && strcmp(argv[1], "limits") == 0)
		limits((size_t)parse_count(argv[2], "MIB") << 20, (int)parse_count(argv[3], "ROUNDS"));
	else {
		fprintf(stderr, "usage: ref cycle MIB REPS | ref floor ROUNDS | ref limits MIB ROUNDS\n");
		return 2;
	}
	return 0;
}
