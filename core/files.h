/* A run's output files: written together or not at all. Plain C, no Lua;
 * functions return 0 or an errno value, and name the failing path in *where. */
#ifndef FT_FILES_H
#define FT_FILES_H

#include <stddef.h>

struct ft_file {
	const char *path;
	const char *text;
	size_t len;
	char *tmp; /* the temporary beside path, while it exists */
};

/* Writes every text to a fresh temporary beside its path (O_EXCL, a name
 * no other run can pick), checks every write, fsyncs and closes it; only
 * when all are written renames them into place, in order. On a failure or
 * an interrupt every temporary is removed: EINTR when ft_interrupted was
 * set. pause_ns > 0 sleeps after each temporary (a test hook). */
int ft_write_files(struct ft_file *files, size_t n, long long pause_ns, const char **where);

/* mkdir -p; 0 when path is (or now is) a directory. */
int ft_mkdir_p(const char *path);

/* Points linkpath at target, replacing an existing link atomically. */
int ft_symlink_replace(const char *target, const char *linkpath);

#endif
