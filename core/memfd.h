/* An anonymous file in the page cache (memfd_create): mapped through
 * ft_buffer_map_fd, its pages are page-cache (shmem) pages, not anonymous
 * ones. This is the only module that calls memfd_create. Functions return
 * 0 or an errno value. */
#ifndef FT_MEMFD_H
#define FT_MEMFD_H

#include <stddef.h>

struct ft_memfd {
	int fd;        /* -1 once closed */
	size_t bytes;  /* the file's size, set by ftruncate */
};

/* memfd_create(name, MFD_CLOEXEC), then ftruncate to bytes: the file has
 * its size but no page yet. */
int ft_memfd_create(struct ft_memfd *m, const char *name, size_t bytes);

int ft_memfd_close(struct ft_memfd *m);

#endif
