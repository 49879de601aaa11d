#include "buffer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"

size_t ft_page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static void describe(struct ft_buffer *b, unsigned char *addr, size_t bytes,
                     enum ft_kind kind, int64_t ns)
{
	b->addr = addr;
	b->bytes = bytes;
	b->page_size = ft_page_size();
	b->pages = (bytes + b->page_size - 1) / b->page_size;
	b->hugetlb_size = 0;
	b->kind = kind;
	b->shared = false;
	b->file = false;
	b->offset = 0;
	b->map_ns = ns;
}

int ft_buffer_map(struct ft_buffer *b, size_t bytes, enum ft_thp thp, bool populate)
{
	return ft_buffer_map_fd(b, bytes, -1, 0, false, thp, populate);
}

int ft_buffer_map_fd(struct ft_buffer *b, size_t bytes, int fd, size_t offset, bool shared,
                     enum ft_thp thp, bool populate)
{
	int flags = (shared ? MAP_SHARED : MAP_PRIVATE) | (fd < 0 ? MAP_ANONYMOUS : 0) |
	            (populate ? MAP_POPULATE : 0);
	int64_t t0 = ft_now_ns();
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags, fd, fd < 0 ? 0 : (off_t)offset);
	if (p == MAP_FAILED)
		return errno;
	/* The advice belongs to the mapping call: without it the first fault
	 * would already have chosen the page size. */
	if (thp != FT_THP_DEFAULT &&
	    madvise(p, bytes, thp == FT_THP_ALWAYS ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
		int err = errno;
		munmap(p, bytes);
		return err;
	}
	int64_t t1 = ft_now_ns();
	describe(b, p, bytes, FT_MMAP, t1 - t0);
	b->shared = shared;
	b->file = fd >= 0;
	b->offset = fd < 0 ? 0 : offset;
	return 0;
}

int ft_buffer_map_hugetlb(struct ft_buffer *b, size_t bytes, size_t hugetlb_size, bool populate)
{
	if (hugetlb_size == 0 || (hugetlb_size & (hugetlb_size - 1)) || bytes % hugetlb_size)
		return EINVAL;
	int shift = __builtin_ctzll(hugetlb_size);
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | shift << MAP_HUGE_SHIFT |
	            (populate ? MAP_POPULATE : 0);
	int64_t t0 = ft_now_ns();
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
	int64_t t1 = ft_now_ns();
	if (p == MAP_FAILED)
		return errno;
	describe(b, p, bytes, FT_MMAP, t1 - t0);
	b->hugetlb_size = hugetlb_size;
	return 0;
}

int ft_buffer_malloc(struct ft_buffer *b, size_t bytes)
{
	int64_t t0 = ft_now_ns();
	void *p = malloc(bytes);
	int64_t t1 = ft_now_ns();
	if (!p)
		return ENOMEM;
	describe(b, p, bytes, FT_MALLOC, t1 - t0);
	return 0;
}

int ft_buffer_release(struct ft_buffer *b, int64_t *ns)
{
	int err = 0;
	int64_t t0 = ft_now_ns();
	if (b->kind == FT_MALLOC)
		free(b->addr);
	else if (munmap(b->addr, b->bytes) != 0)
		err = errno;
	int64_t t1 = ft_now_ns();
	if (ns)
		*ns = t1 - t0;
	if (!err)
		b->addr = NULL;
	return err;
}

bool ft_buffer_own_pages(const struct ft_buffer *b, unsigned char **start, size_t *len)
{
	uintptr_t ps = (uintptr_t)ft_page_size();
	uintptr_t lo = ((uintptr_t)b->addr + ps - 1) / ps * ps;
	uintptr_t hi = ((uintptr_t)b->addr + b->bytes) / ps * ps;
	if (hi <= lo)
		return false;
	*start = (unsigned char *)lo;
	*len = hi - lo;
	return true;
}

int ft_buffer_madvise(struct ft_buffer *b, int advice, int64_t *ns)
{
	unsigned char *start = b->addr;
	size_t len = b->bytes;
	/* A malloc block shares its first and last pages with other blocks:
	 * advice such as dontneed must not reach them. */
	if (b->kind == FT_MALLOC && !ft_buffer_own_pages(b, &start, &len))
		return EINVAL;
	int64_t t0 = ft_now_ns();
	int r = madvise(start, len, advice);
	int64_t t1 = ft_now_ns();
	*ns = t1 - t0;
	return r == 0 ? 0 : errno;
}

int ft_buffer_nodes(const struct ft_buffer *b, size_t step, int *status, size_t count)
{
	void **pages = malloc(count * sizeof *pages);
	if (!pages)
		return ENOMEM;
	for (size_t i = 0; i < count; i++)
		pages[i] = b->addr + i * step * b->page_size;
	long r = syscall(SYS_move_pages, 0, (unsigned long)count, pages, NULL, status, 0);
	int err = r < 0 ? errno : 0;
	free(pages);
	return err;
}

int ft_buffer_mbind(struct ft_buffer *b, int node, unsigned flags)
{
	const int mpol_bind = 2; /* <numaif.h> would need libnuma for one constant */
	unsigned long mask = 1ul << node;
	long r = syscall(SYS_mbind, b->addr, b->bytes, mpol_bind, &mask,
	                 (unsigned long)(8 * sizeof mask), flags);
	return r == 0 ? 0 : errno;
}

int ft_buffer_mlock(struct ft_buffer *b, bool lock, int64_t *ns)
{
	/* the system calls themselves: ASan replaces mlock() with a no-op */
	int64_t t0 = ft_now_ns();
	long r = syscall(lock ? SYS_mlock : SYS_munlock, b->addr, b->bytes);
	int64_t t1 = ft_now_ns();
	*ns = t1 - t0;
	return r == 0 ? 0 : errno;
}

/* PAGEMAP_SCAN (Linux 6.7) from <linux/fs.h>, defined here when the
 * installed headers are older: the values are the kernel's ABI. */
#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start, end, categories;
};
struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGE_IS_HUGE (1 << 6)
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

/* Exactly [lo, hi): the huge-page regions the kernel reports there. */
static int scan_huge(uintptr_t lo, uintptr_t hi, int64_t *bytes)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	struct page_region vec[64];
	int64_t total = 0;
	int err = 0;
	for (uintptr_t at = lo; at < hi && !err;) {
		struct pm_scan_arg a = {
			.size = sizeof a, .start = at, .end = hi,
			.vec = (uintptr_t)vec, .vec_len = 64,
			.category_mask = PAGE_IS_HUGE, .return_mask = PAGE_IS_HUGE,
		};
		long n = ioctl(fd, PAGEMAP_SCAN, &a);
		if (n < 0) {
			err = errno;
			break;
		}
		for (long i = 0; i < n; i++)
			total += (int64_t)(vec[i].end - vec[i].start);
		if (a.walk_end <= at)
			break;
		at = (uintptr_t)a.walk_end;
	}
	close(fd);
	*bytes = total;
	return err;
}

int ft_buffer_frames(const struct ft_buffer *b, int64_t *frames, size_t *present, size_t *shown)
{
	enum { BATCH = 512 };
	const uint64_t PRESENT = 1ULL << 63, PFN = (1ULL << 55) - 1;
	*present = *shown = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	uint64_t e[BATCH];
	int err = 0;
	for (size_t i = 0; i < b->pages && !err; i += BATCH) {
		size_t n = b->pages - i < BATCH ? b->pages - i : BATCH;
		off_t at = (off_t)(((uintptr_t)b->addr / b->page_size + i) * sizeof e[0]);
		ssize_t got = pread(fd, e, n * sizeof e[0], at);
		if (got != (ssize_t)(n * sizeof e[0])) {
			err = got < 0 ? errno : EIO;
			break;
		}
		for (size_t k = 0; k < n; k++) {
			bool in = e[k] & PRESENT;
			frames[i + k] = in ? (int64_t)(e[k] & PFN) : -1;
			*present += in;
			*shown += in && (e[k] & PFN) != 0;
		}
	}
	close(fd);
	return err;
}

/* smaps counts a whole VMA: only a VMA that is exactly [lo, hi) answers
 * for this buffer alone (adjacent mappings merge). */
static int smaps_huge(uintptr_t lo, uintptr_t hi, int64_t *bytes)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return errno;
	bool inside = false, exact = false, overlaps = false;
	int64_t total = 0;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		uintptr_t start, end;
		long long kb;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2) {
			inside = start < hi && end > lo;
			if (inside) {
				exact = !overlaps && start == lo && end == hi;
				overlaps = true;
			}
		} else if (inside && sscanf(line, "AnonHugePages: %lld kB", &kb) == 1) {
			total += kb * 1024;
		}
	}
	fclose(f);
	*bytes = total;
	return exact ? 0 : FT_ENOTEXACT;
}

int ft_buffer_thp_bytes(const struct ft_buffer *b, int64_t *bytes)
{
	uintptr_t lo = (uintptr_t)b->addr;
	uintptr_t hi = lo + b->pages * b->page_size;
	int err = scan_huge(lo, hi, bytes);
	if (err == ENOTTY || err == EINVAL || err == EOPNOTSUPP)
		err = smaps_huge(lo, hi, bytes); /* a kernel before 6.7 */
	return err;
}
