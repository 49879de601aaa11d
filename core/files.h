/* Files the runner writes: directories with their parents, links replaced
 * atomically, and a set of files that appear together or not at all.
 * Functions return 0 or an errno value; *what names the failing path. */
#ifndef FT_FILES_H
#define FT_FILES_H

#include <stddef.h>

/* mkdir -p: 0 when path is (now) a directory. */
int ft_mkdir_p(const char *path);

/* symlink target at a unique temporary name beside linkpath, then rename
 * it over linkpath, so readers see the old link or the new one. */
int ft_symlink_replace(const char *target, const char *linkpath);

struct ft_file {
	const char *path;
	const char *text;
	size_t len;
	char *tmp;  /* set while a temporary exists */
};

/* Writes every text to .NAME.PID.RANDOM.tmp beside its path (O_EXCL),
 * fsyncs, then renames them all in order, holding flock on each directory
 * of the set meanwhile: one writer at a time in a directory, and, with it
 * held, the temporaries there of writers since killed are removed. On failure removes every
 * temporary and returns errno with *failed the path concerned; returns
 * -1 (temporaries removed) when ft_interrupted was set before the
 * renames. The renames run with the fatal signals blocked (SIGTERM, SIGHUP,
 * SIGQUIT, SIGPIPE): one that arrives meanwhile lands after the last, so the
 * set on disk is never mixed. Tests: pause_ns > 0 sleeps that long after
 * each temporary, rename_pause_ns > 0 after the first rename. */
int ft_write_files(struct ft_file *files, size_t n, long long pause_ns, long long rename_pause_ns,
                   const char **failed);

/* Reads a regular file whole into *text (malloc'd, NUL-terminated, *len
 * bytes) without blocking: a FIFO, a device, a socket or a directory (or a
 * link to one) is refused before a byte is read (EINVAL, EISDIR), and so is
 * a file of more than max bytes (EFBIG), whatever size it states (procfs
 * states 0). On a refusal *why says what the file is, else NULL. */
int ft_read_regular(const char *path, size_t max, char **text, size_t *len, const char **why);

/* Temporaries are listed in a table (4096 at a time) while they exist, so
 * that the handler of a fatal signal (core/restore.c) can remove them: the
 * ones ft_write_files makes, and any other a caller names (on: 1 to add, 0
 * to drop) such as a plot being drawn. Adding allocates (once an entry) and
 * fails with EMFILE when the table is full; ft_files_unlink_temps is
 * async-signal-safe. */
int ft_files_track(const char *path, int on); /* EMFILE: the table is full */
void ft_files_unlink_temps(void);

#endif
