#include "files.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "interrupt.h"

/* The temporaries that exist now, in a table a signal handler can walk
 * without allocating: an entry's buffer is allocated once (outside any
 * handler) and kept for reuse, its path filled, then the entry marked used
 * after a fence, and unmarked before its file is renamed or removed. A set
 * of more temporaries than the table holds is refused, not left behind. */
enum { FT_TEMPS_MAX = 4096 };
static struct {
	char *volatile path;  /* PATH_MAX bytes once allocated */
	volatile sig_atomic_t used;
} temps[FT_TEMPS_MAX];

static int temp_track(const char *path)
{
	size_t n = strlen(path);
	if (n >= PATH_MAX)
		return ENAMETOOLONG;
	for (size_t i = 0; i < FT_TEMPS_MAX; i++) {
		if (temps[i].used)
			continue;
		if (!temps[i].path && !(temps[i].path = malloc(PATH_MAX)))
			return ENOMEM;
		memcpy(temps[i].path, path, n + 1);
		atomic_signal_fence(memory_order_seq_cst);
		temps[i].used = 1;
		return 0;
	}
	return EMFILE;
}

static void temp_untrack(const char *path)
{
	for (size_t i = 0; i < FT_TEMPS_MAX; i++)
		if (temps[i].used && strcmp(temps[i].path, path) == 0)
			temps[i].used = 0;
}

int ft_files_track(const char *path, int on)
{
	if (on)
		return temp_track(path);
	temp_untrack(path);
	return 0;
}

void ft_files_unlink_temps(void)
{
	/* files first, then the directories they were in */
	for (size_t i = 0; i < FT_TEMPS_MAX; i++)
		if (temps[i].used && unlink(temps[i].path) == 0)
			temps[i].used = 0;
	for (size_t i = 0; i < FT_TEMPS_MAX; i++)
		if (temps[i].used) {
			temps[i].used = 0;
			rmdir(temps[i].path);
		}
}

/* What a non-regular file is, for the refusal's message. */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

static int check_regular(const struct stat *st, size_t max, const char **why)
{
	if (!S_ISREG(st->st_mode)) {
		*why = file_kind(st->st_mode);
		return S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
	}
	if ((unsigned long long)st->st_size > max) {
		*why = "larger than the reader takes";
		return EFBIG;
	}
	return 0;
}

int ft_read_regular(const char *path, size_t max, char **text, size_t *len, const char **why)
{
	*text = NULL;
	*len = 0;
	*why = NULL;
	struct stat st;
	/* stat first: a device is refused without being opened at all */
	if (stat(path, &st) != 0)
		return errno;
	int err = check_regular(&st, max, why);
	if (err)
		return err;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	/* again on what was opened: the path may have been replaced between */
	err = fstat(fd, &st) != 0 ? errno : check_regular(&st, max, why);
	size_t size = (size_t)st.st_size + 1, got = 0;
	if (size < 4096)
		size = max < 4096 ? max + 1 : 4096;
	char *buf = err ? NULL : malloc(size + 1);
	if (!err && !buf)
		err = ENOMEM;
	/* procfs and sysfs files say size 0: read to the end, up to max */
	while (!err) {
		if (got == size) {
			if (size > max) {
				*why = "larger than the reader takes";
				err = EFBIG;
				break;
			}
			size_t bigger = size * 2 > max + 1 ? max + 1 : size * 2;
			char *p = realloc(buf, bigger + 1);
			if (!p) {
				err = ENOMEM;
				break;
			}
			buf = p;
			size = bigger;
		}
		ssize_t r = read(fd, buf + got, size - got);
		if (r < 0 && errno == EINTR && !ft_interrupted)
			continue;
		if (r < 0)
			err = errno;
		else if (r == 0)
			break;
		else
			got += (size_t)r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ft_mkdir_p(const char *path)
{
	if (!*path)
		return EINVAL; /* the parent walk starts after the first byte */
	if (is_dir(path))
		return 0;
	char *copy = strdup(path);
	if (!copy)
		return ENOMEM;
	int err = 0;
	/* each parent in turn; one that exists already is fine */
	for (char *p = copy + 1; !err; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(copy, 0777) != 0 && (errno != EEXIST || !is_dir(copy)))
			err = errno == EEXIST ? ENOTDIR : errno;
		*p = c;
		if (c == '\0')
			break;
	}
	free(copy);
	return err;
}

/* dir/.name.PID.RANDOM.tmp beside path; malloc'd. */
static char *temp_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	const char *name = slash ? slash + 1 : path;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	unsigned long r = (unsigned long)ts.tv_nsec ^ ((unsigned long)random() << 16);
	size_t size = strlen(path) + 64;
	char *tmp = malloc(size);
	if (tmp)
		snprintf(tmp, size, "%.*s.%s.%ld.%lx.tmp", dirlen, path, name, (long)getpid(), r);
	return tmp;
}

int ft_symlink_replace(const char *target, const char *linkpath)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		char *tmp = temp_name(linkpath);
		if (!tmp)
			return ENOMEM;
		int err = 0;
		if (symlink(target, tmp) != 0) {
			err = errno;
		} else if (rename(tmp, linkpath) != 0) {
			err = errno;
			unlink(tmp);
		}
		free(tmp);
		if (err != EEXIST)
			return err;
	}
	return EEXIST;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR && !ft_interrupted)
				continue;
			return errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static void pause_for(long long ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
	nanosleep(&ts, NULL); /* a signal ends it early: the caller checks the flag */
}

static int write_one(struct ft_file *f)
{
	int fd = -1;
	for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		free(f->tmp);
		if (!(f->tmp = temp_name(f->path)))
			return ENOMEM;
		fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		int err = fd >= 0 ? temp_track(f->tmp) : 0;
		if (err) {
			close(fd);
			unlink(f->tmp);
			free(f->tmp);
			f->tmp = NULL;
			return err;
		}
		if (fd < 0 && errno != EEXIST) {
			int err = errno;
			free(f->tmp);
			f->tmp = NULL;
			return err;
		}
	}
	if (fd < 0)
		return EEXIST;
	int err = write_all(fd, f->text, f->len);
	if (!err && fsync(fd) != 0)
		err = errno;
	if (close(fd) != 0 && !err)
		err = errno;
	return err;
}

static void remove_temps(struct ft_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (files[i].tmp) {
			temp_untrack(files[i].tmp);
			unlink(files[i].tmp);
		}
		free(files[i].tmp);
		files[i].tmp = NULL;
	}
}

/* Whether pid names no running process: gone, or killed and not yet reaped. */
static bool writer_gone(long pid)
{
	if (kill((pid_t)pid, 0) != 0)
		return errno == ESRCH;
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t r = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	const char *p = strrchr(buf, ')');
	return p && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X');
}

/* The writer's pid of a temporary's name, .NAME.PID.RANDOM.tmp; 0 when
 * the name is not one of ours. */
static long temp_writer(const char *name)
{
	size_t n = strlen(name);
	if (n < 10 || name[0] != '.' || strcmp(name + n - 4, ".tmp") != 0)
		return 0;
	const char *end = name + n - 4, *hex = end;
	while (hex > name && isxdigit((unsigned char)hex[-1]))
		hex--;
	if (hex == end || hex[-1] != '.')
		return 0;
	const char *digits = hex - 1;
	while (digits > name && isdigit((unsigned char)digits[-1]))
		digits--;
	if (digits == hex - 1 || digits[-1] != '.' || digits - 1 <= name + 1)
		return 0;
	return strtol(digits, NULL, 10);
}

/* Removes the temporaries in a directory whose writer was killed (WE-5):
 * run with the directory's writer lock held, so no live writer's go. */
static void sweep_dead_temps(int dir_fd)
{
	int fd = dup(dir_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		long pid = temp_writer(e->d_name);
		if (pid > 0 && pid != (long)getpid() && writer_gone(pid))
			unlinkat(dir_fd, e->d_name, 0);
	}
	closedir(d);
}

/* The directory part of path ("." for a bare name); malloc'd. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One writer at a time in a directory (SW-3): flock on the directory itself
 * for every directory of the set, taken in order of name so two writers
 * never wait for each other; fds[] gets them (-1: not opened, the write
 * says why). Returns 0, or -1 when interrupted while waiting. */
static int lock_dirs(struct ft_file *files, size_t n, int *fds)
{
	char **dirs = calloc(n ? n : 1, sizeof *dirs);
	if (!dirs)
		return ENOMEM;
	int err = 0;
	for (size_t i = 0; i < n; i++) {
		fds[i] = -1;
		if (!(dirs[i] = dir_of(files[i].path)))
			err = ENOMEM;
	}
	if (!err)
		qsort(dirs, n, sizeof *dirs, by_name);
	for (size_t i = 0; i < n && !err; i++) {
		if (i > 0 && strcmp(dirs[i], dirs[i - 1]) == 0)
			continue;
		fds[i] = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fds[i] < 0)
			continue;
		bool said = false;
		while (flock(fds[i], LOCK_EX | LOCK_NB) != 0 && !err) {
			if (ft_interrupted) {
				err = -1;
				break;
			}
			if (!said)
				fprintf(stderr, "ftrun: waiting for another run writing into %s\n", dirs[i]);
			said = true;
			pause_for(10 * 1000 * 1000);
		}
		if (!err)
			sweep_dead_temps(fds[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	return err;
}

static void unlock_dirs(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static int write_set(struct ft_file *files, size_t n, long long pause_ns, long long rename_pause_ns,
                     const char **failed);

int ft_write_files(struct ft_file *files, size_t n, long long pause_ns, long long rename_pause_ns,
                   const char **failed)
{
	int *fds = malloc((n ? n : 1) * sizeof *fds);
	if (!fds) {
		*failed = n ? files[0].path : "?";
		return ENOMEM;
	}
	int err = lock_dirs(files, n, fds);
	if (err > 0)
		*failed = n ? files[0].path : "?";
	if (!err)
		err = write_set(files, n, pause_ns, rename_pause_ns, failed);
	unlock_dirs(fds, n);
	free(fds);
	return err;
}

static int write_set(struct ft_file *files, size_t n, long long pause_ns, long long rename_pause_ns,
                     const char **failed)
{
	for (size_t i = 0; i < n; i++)
		files[i].tmp = NULL;
	for (size_t i = 0; i < n; i++) {
		if (ft_interrupted) {
			remove_temps(files, n);
			return -1;
		}
		int err = write_one(&files[i]);
		if (err) {
			*failed = files[i].path;
			remove_temps(files, n);
			return err;
		}
		if (pause_ns > 0)
			pause_for(pause_ns);
	}
	if (ft_interrupted) {
		remove_temps(files, n);
		return -1;
	}
	/* every target checked before the first rename: a rename that would
	 * fail half-way through leaves a mixed set */
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (lstat(files[i].path, &st) == 0 && S_ISDIR(st.st_mode)) {
			*failed = files[i].path;
			remove_temps(files, n);
			return EISDIR;
		}
	}
	sigset_t fatal, old;
	sigemptyset(&fatal);
	sigaddset(&fatal, SIGTERM);
	sigaddset(&fatal, SIGHUP);
	sigaddset(&fatal, SIGQUIT);
	sigaddset(&fatal, SIGPIPE);
	sigprocmask(SIG_BLOCK, &fatal, &old);
	int err = 0;
	for (size_t i = 0; i < n; i++) {
		temp_untrack(files[i].tmp);
		if (rename(files[i].tmp, files[i].path) != 0) {
			err = errno;
			*failed = files[i].path;
			remove_temps(files, n); /* the ones not yet renamed */
			break;
		}
		free(files[i].tmp);
		files[i].tmp = NULL;
		if (i == 0 && rename_pause_ns > 0)
			pause_for(rename_pause_ns);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}
