#include "memfd.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

int ft_memfd_create(struct ft_memfd *m, const char *name, size_t bytes)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return errno;
	if (ftruncate(fd, (off_t)bytes) != 0) {
		int err = errno;
		close(fd);
		return err;
	}
	m->fd = fd;
	m->bytes = bytes;
	return 0;
}

int ft_memfd_close(struct ft_memfd *m)
{
	int fd = m->fd;
	m->fd = -1;
	/* close releases the descriptor even when it reports an error */
	return close(fd) == 0 ? 0 : errno;
}
