#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "interrupt.h"

/* ".NAME.PID.COUNT.tmp" beside path: pid and a counter make it unique among
 * the runs sharing a directory, and O_EXCL refuses any clash anyway. */
static char *temporary_name(const char *path)
{
	static unsigned counter;
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path + 1) : 0;
	const char *base = slash ? slash + 1 : path;
	size_t size = strlen(path) + 64;
	char *tmp = malloc(size);
	if (tmp)
		snprintf(tmp, size, "%.*s.%s.%ld.%u.tmp", dir_len, path, base, (long)getpid(), counter++);
	return tmp;
}

static int write_all(int fd, const char *text, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, text, len);
		if (n < 0) {
			if (errno == EINTR && !ft_interrupted)
				continue;
			return errno;
		}
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_temporary(struct ft_file *f)
{
	f->tmp = temporary_name(f->path);
	if (!f->tmp)
		return ENOMEM;
	int fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		int err = errno;
		free(f->tmp);
		f->tmp = NULL;
		return err;
	}
	int err = write_all(fd, f->text, f->len);
	if (!err && fsync(fd) != 0)
		err = errno;
	if (close(fd) != 0 && !err)
		err = errno;
	return err;
}

static void pause_for(long long ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !ft_interrupted)
		;
}

static void remove_temporaries(struct ft_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (files[i].tmp) {
			unlink(files[i].tmp);
			free(files[i].tmp);
			files[i].tmp = NULL;
		}
	}
}

int ft_write_files(struct ft_file *files, size_t n, long long pause_ns, const char **where)
{
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		*where = files[i].path;
		err = write_temporary(&files[i]);
		if (!err && pause_ns > 0)
			pause_for(pause_ns);
		if (ft_interrupted)
			err = EINTR;
	}
	for (size_t i = 0; i < n && !err; i++) {
		*where = files[i].path;
		if (rename(files[i].tmp, files[i].path) != 0)
			err = errno; /* only renames already done stay */
		else {
			free(files[i].tmp);
			files[i].tmp = NULL;
		}
	}
	remove_temporaries(files, n);
	return err;
}

int ft_mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return ENAMETOOLONG;
	for (char *p = buf + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return errno;
			*p = c;
			if (c == '\0')
				break;
		}
	}
	struct stat st;
	if (stat(path, &st) != 0)
		return errno;
	return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

int ft_symlink_replace(const char *target, const char *linkpath)
{
	char *tmp = temporary_name(linkpath);
	if (!tmp)
		return ENOMEM;
	int err = 0;
	if (symlink(target, tmp) != 0)
		err = errno;
	else if (rename(tmp, linkpath) != 0) {
		err = errno;
		unlink(tmp);
	}
	free(tmp);
	return err;
}
