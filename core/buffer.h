/* The memory under test: an anonymous mapping (of hugetlb pages too), a
 * mapping of a memfd (core/memfd.h), private or shared, or a malloc block. This is the only
 * module that calls mmap, munmap, madvise and malloc for measured memory.
 * Functions return 0 or an errno value. */
#ifndef FT_BUFFER_H
#define FT_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ft_kind { FT_MMAP, FT_MALLOC };
enum ft_thp { FT_THP_DEFAULT, FT_THP_NEVER, FT_THP_ALWAYS };

struct ft_buffer {
	unsigned char *addr;  /* NULL once released */
	size_t bytes;
	size_t pages;         /* ceil(bytes / page_size) */
	size_t page_size;     /* the base page, for hugetlb buffers too */
	size_t hugetlb_size;  /* the hugetlb page size, 0 for other buffers */
	enum ft_kind kind;
	bool shared;          /* MAP_SHARED */
	bool file;            /* a mapping of a file (a memfd), not anonymous */
	size_t offset;        /* file: the offset of addr in the file */
	int64_t map_ns;       /* the mmap or malloc call (with its madvise), timed alone */
};

size_t ft_page_size(void);

/* MAP_PRIVATE|MAP_ANONYMOUS. */
int ft_buffer_map(struct ft_buffer *b, size_t bytes, enum ft_thp thp, bool populate);
/* fd < 0: anonymous; else bytes of the file from offset (page-aligned). */
int ft_buffer_map_fd(struct ft_buffer *b, size_t bytes, int fd, size_t offset, bool shared,
                     enum ft_thp thp, bool populate);
/* MAP_HUGETLB with MAP_HUGE_<size>: bytes must be a multiple of
 * hugetlb_size (EINVAL otherwise); the pool must hold the pages (ENOMEM). */
int ft_buffer_map_hugetlb(struct ft_buffer *b, size_t bytes, size_t hugetlb_size, bool populate);
int ft_buffer_malloc(struct ft_buffer *b, size_t bytes);

/* munmap or free, timed alone into *ns. */
int ft_buffer_release(struct ft_buffer *b, int64_t *ns);

/* The whole pages inside [addr, addr+bytes): false if there is none. */
bool ft_buffer_own_pages(const struct ft_buffer *b, unsigned char **start, size_t *len);

/* madvise, timed alone into *ns; on a malloc block only over its own
 * whole pages (ft_buffer_own_pages). */
int ft_buffer_madvise(struct ft_buffer *b, int advice, int64_t *ns);

/* The node of every step-th page, by move_pages(2) with no target nodes:
 * status[i] is a node number or a negative errno (-ENOENT: not present). */
int ft_buffer_nodes(const struct ft_buffer *b, size_t step, int *status, size_t count);

/* mbind(2) MPOL_BIND to one node with MPOL_MF_* flags. */
int ft_buffer_mbind(struct ft_buffer *b, int node, unsigned flags);

/* mlock / munlock, timed alone into *ns. */
int ft_buffer_mlock(struct ft_buffer *b, bool lock, int64_t *ns);

/* Bytes of exactly this buffer's pages backed by huge pages, into *bytes:
 * PAGEMAP_SCAN over [addr, addr+pages*page_size), or on an older kernel
 * smaps AnonHugePages when one VMA is exactly the buffer. Returns 0, an
 * errno, or FT_ENOTEXACT (smaps cannot tell this buffer's share). */
enum { FT_ENOTEXACT = -2 };
int ft_buffer_thp_bytes(const struct ft_buffer *b, int64_t *bytes);
/* The physical frame of each page from /proc/self/pagemap: frames[i] is
 * page i's frame number, or -1 when the page is not present. *present
 * gets the present pages, *shown those whose frame the kernel showed (it
 * shows 0 without CAP_SYS_ADMIN). Returns 0 or errno. */
int ft_buffer_frames(const struct ft_buffer *b, int64_t *frames, size_t *present, size_t *shown);

#endif
