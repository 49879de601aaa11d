/* The memory under test: a private anonymous mapping or a malloc block.
 * This is the only module that calls mmap, munmap, madvise and malloc for
 * measured memory. Functions return 0 or an errno value. */
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
	size_t page_size;
	enum ft_kind kind;
	int64_t map_ns;       /* the mmap or malloc call (with its madvise), timed alone */
};

size_t ft_page_size(void);

int ft_buffer_map(struct ft_buffer *b, size_t bytes, enum ft_thp thp, bool populate);
int ft_buffer_malloc(struct ft_buffer *b, size_t bytes);

/* munmap or free, timed alone into *ns. */
int ft_buffer_release(struct ft_buffer *b, int64_t *ns);

int ft_buffer_madvise(struct ft_buffer *b, int advice);

/* AnonHugePages of this mapping, from /proc/self/smaps, in bytes; -1 if
 * smaps cannot be read. */
int64_t ft_buffer_thp_bytes(const struct ft_buffer *b);

#endif
