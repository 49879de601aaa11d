/* The hardware floor under a first touch (floor.h). Method: each function
 * times one loop of many identical operations with CLOCK_MONOTONIC around
 * it, so a clock read costs a few ns over thousands of operations; per
 * operation timing (the per-page timer) would add its own cost to
 * operations of 20 to 300 ns. The zeroing kernels are inline assembly so
 * that the compiler can neither drop the stores nor turn them into
 * another instruction. */
#include "floor.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counters.h"
#include "interrupt.h"
#include "memfd.h"
#include "now.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

const char *const ft_zero_method_names[] = { "rep_stosb", "clzero", "movnti", NULL };

#define LINE 64

/* Operations between two looks at the interrupt flag: a SIGINT (or a
 * task's stop) ends a loop within about a millisecond, and the look, one
 * load per chunk, costs nothing against the chunk it ends. */
#define POLL_EVERY 256

int ft_zero_available(enum ft_zero_method method, const char **why)
{
	*why = NULL;
#if defined(__x86_64__)
	unsigned a, b, c, d;
	switch (method) {
	case FT_ZERO_REP_STOSB:
	case FT_ZERO_MOVNTI: /* SSE2 is part of x86-64 */
		return 0;
	case FT_ZERO_CLZERO: /* CPUID 0x80000008 EBX bit 0 */
		if (__get_cpuid(0x80000008, &a, &b, &c, &d) && (b & 1u))
			return 0;
		*why = "this CPU has no clzero (cpuid 0x80000008 EBX bit 0)";
		return ENOTSUP;
	default:
		break;
	}
	return EINVAL;
#else
	(void)method;
	*why = "not an x86-64 CPU: the kernel's zeroing instructions measured here are x86's";
	return ENOTSUP;
#endif
}

#if defined(__x86_64__)
static void zero_block(enum ft_zero_method method, unsigned char *p)
{
	switch (method) {
	case FT_ZERO_REP_STOSB: {
		void *dst = p;
		size_t n = FT_FLOOR_BLOCK;
		__asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(0) : "memory");
		break;
	}
	case FT_ZERO_CLZERO:
		for (size_t off = 0; off < FT_FLOOR_BLOCK; off += LINE)
			__asm__ volatile(".byte 0x0f, 0x01, 0xfc" : : "a"(p + off) : "memory"); /* clzero */
		_mm_sfence(); /* weakly ordered, as the kernel would fence them */
		break;
	case FT_ZERO_MOVNTI:
		for (size_t off = 0; off < FT_FLOOR_BLOCK; off += 8)
			_mm_stream_si64((long long *)(void *)(p + off), 0);
		_mm_sfence();
		break;
	default:
		break;
	}
}
#endif

/* Whether bytes more of memory fit in what is free now with SPARE_BYTES
 * left, as the scripts keep (harness.lua): a region larger would push the
 * machine, shared with other work, into reclaim or the OOM killer, which
 * is no measurement of zeroing or faults. */
#define SPARE_BYTES ((size_t)256 << 20)
static int fits(size_t bytes)
{
	long free_pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (free_pages <= 0 || psz <= 0)
		return 0; /* unknown: the mapping will say */
	size_t need = bytes / (size_t)psz + SPARE_BYTES / (size_t)psz;
	return need < (size_t)free_pages ? 0 : ENOMEM;
}

/* An anonymous region of bytes with every page present. MADV_HUGEPAGE
 * where THP allows it: the kernel zeroes through its direct map, whose
 * huge pages spare it a TLB miss per 4 KiB; a refusal leaves 4 KiB pages. */
static unsigned char *region(size_t bytes, int *err)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		*err = errno;
		return NULL;
	}
	(void)madvise(p, bytes, MADV_HUGEPAGE);
	enum { STEP = 64 << 20 }; /* a look at the interrupt flag per 64 MiB written */
	for (size_t off = 0; off < bytes && !ft_should_stop(); off += STEP)
		memset((unsigned char *)p + off, 1, bytes - off < STEP ? bytes - off : STEP);
	if (ft_should_stop()) {
		munmap(p, bytes);
		*err = EINTR;
		return NULL;
	}
	return (unsigned char *)p;
}

int ft_zero_blocks(enum ft_zero_method method, int cold, size_t count, int64_t *ns)
{
	const char *why;
	if (method < 0 || method >= FT_ZERO_METHODS || count == 0 || count > SIZE_MAX / FT_FLOOR_BLOCK)
		return EINVAL;
	int err = ft_zero_available(method, &why);
	if (err)
		return err;
#if defined(__x86_64__)
	size_t bytes = cold ? count * FT_FLOOR_BLOCK : FT_FLOOR_BLOCK;
	err = fits(bytes);
	if (err)
		return err;
	unsigned char *p = region(bytes, &err);
	if (!p)
		return err;
	int64_t t0;
	size_t i = 0;
	if (cold) { /* region() wrote every line in address order: block i was last written a region ago */
		t0 = ft_now_ns();
		for (; i < count; i++) {
			if (i % POLL_EVERY == 0 && ft_should_stop())
				break;
			zero_block(method, p + i * FT_FLOOR_BLOCK);
		}
	} else {
		zero_block(method, p);
		t0 = ft_now_ns();
		for (; i < count; i++) {
			if (i % POLL_EVERY == 0 && ft_should_stop())
				break;
			zero_block(method, p);
		}
	}
	*ns = ft_now_ns() - t0;
	munmap(p, bytes);
	return i < count ? EINTR : 0;
#else
	(void)cold;
	(void)ns;
	return ENOTSUP;
#endif
}

/* Fills the file with ones through pwrite: every page present and up to
 * date in the page cache, so a fault finds it and neither allocates nor
 * zeroes. */
static int fill_file(int fd, size_t bytes)
{
	unsigned char ones[16384];
	memset(ones, 1, sizeof ones);
	for (size_t off = 0; off < bytes;) {
		if (ft_should_stop())
			return EINTR;
		size_t n = bytes - off < sizeof ones ? bytes - off : sizeof ones;
		ssize_t w = pwrite(fd, ones, n, (off_t)off);
		if (w < 0)
			return errno;
		if (w == 0)
			return EIO;
		off += (size_t)w;
	}
	return 0;
}

const char *const ft_minor_kind_names[] = { "zero_page", "shmem_write", "shmem_read", NULL };

/* The mapping a kind faults on: anonymous private for the zero page, else
 * shared over the memfd m filled by fill_file. */
static unsigned char *fault_region(enum ft_minor_kind kind, size_t bytes, struct ft_memfd *m, int *err)
{
	void *p;
	if (kind == FT_MINOR_ZERO_PAGE) {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	} else {
		*err = ft_memfd_create(m, "ftrun-floor", bytes);
		if (*err)
			return NULL;
		*err = fill_file(m->fd, bytes);
		if (*err)
			return NULL;
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	}
	if (p == MAP_FAILED) {
		*err = errno;
		return NULL;
	}
	/* one PTE per fault: no huge zero page, no shmem huge page */
	(void)madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}

/* One access per page in address order, timed, with the thread's minor
 * faults read around it. Not instrumented by AddressSanitizer: its check of
 * each access reads the shadow, whose own first reads fault (4096 more over
 * 32768 zero-page reads), and the count is the control that every fault
 * was the loop's. */
__attribute__((no_sanitize("address")))
static int touch_pages(enum ft_minor_kind kind, volatile unsigned char *p, size_t pages, size_t psz,
                       int64_t *ns, int64_t *faults)
{
	struct ft_thread_usage before, after;
	int err = ft_thread_usage(&before);
	if (err)
		return err;
	unsigned sum = 0;
	size_t i = 0;
	int64_t t0 = ft_now_ns();
	if (kind == FT_MINOR_SHMEM_WRITE) {
		for (; i < pages; i++) {
			if (i % POLL_EVERY == 0 && ft_should_stop())
				break;
			p[i * psz] = 2;
		}
	} else {
		for (; i < pages; i++) {
			if (i % POLL_EVERY == 0 && ft_should_stop())
				break;
			sum += p[i * psz];
		}
	}
	*ns = ft_now_ns() - t0;
	if (i < pages)
		return EINTR;
	__asm__ volatile("" : : "r"(sum)); /* the reads are used */
	err = ft_thread_usage(&after);
	if (!err)
		*faults = after.minflt - before.minflt;
	return err;
}

/* The process's resident pages (/proc/self/statm's second field), or -1. */
static int64_t resident_pages(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	long long size, rss;
	int n = f ? fscanf(f, "%lld %lld", &size, &rss) : 0;
	if (f)
		fclose(f);
	return n == 2 ? (int64_t)rss : -1;
}

int ft_minor_faults(enum ft_minor_kind kind, size_t pages, int64_t *ns, int64_t *faults, int64_t *resident)
{
	long psz = sysconf(_SC_PAGESIZE);
	if (kind < 0 || kind >= FT_MINOR_KINDS || pages == 0 || psz <= 0 || pages > SIZE_MAX / (size_t)psz)
		return EINVAL;
	size_t bytes = pages * (size_t)psz;
	struct ft_memfd m = { .fd = -1 };
	int err = fits(bytes);
	if (err)
		return err;
	unsigned char *p = fault_region(kind, bytes, &m, &err);
	if (p) {
		int64_t before = resident_pages();
		err = touch_pages(kind, p, pages, (size_t)psz, ns, faults);
		int64_t after = resident_pages();
		*resident = before >= 0 && after >= 0 ? after - before : INT64_MIN;
		munmap(p, bytes);
	}
	int cerr = m.fd >= 0 ? ft_memfd_close(&m) : 0;
	return err ? err : cerr;
}

int ft_syscalls(size_t count, int64_t *ns)
{
	if (count == 0)
		return EINVAL;
	size_t i = 0;
	int64_t t0 = ft_now_ns();
	for (; i < count; i++) {
		if (i % POLL_EVERY == 0 && ft_should_stop())
			break;
		(void)syscall(SYS_getppid);
	}
	*ns = ft_now_ns() - t0;
	return i < count ? EINTR : 0;
}
