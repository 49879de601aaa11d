#include "restore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "interrupt.h"

/* The log is a global, and a fixed static table, for the same reason as a
 * signal flag: the SIGTERM handler must reach it and may not allocate. An
 * entry is filled, then published by the count after a fence, so the
 * handler sees whole entries only; its path never changes afterwards. */
static struct ft_setting entries[FT_SETTINGS_MAX];
static volatile sig_atomic_t logged;
static volatile pid_t owner;

/* The lock and journal (protocol in restore.h). They live in /run/lock, a
 * tmpfs: a journal survives a SIGKILL but not a reboot, which is right,
 * since the kernel resets every sysfs setting at boot and a journal from
 * before it would "restore" stale values over the boot defaults. The
 * journal's path is fixed before the first change so that the signal
 * handler can unlink it without allocating. */
enum { FT_DIR_PATH = 200 };
static int lock_fd = -1;
static char journal[FT_DIR_PATH + 64];
static volatile sig_atomic_t journal_made;

static size_t copy(char *dst, size_t size, const char *src, size_t n)
{
	if (size == 0)
		return 0;
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return n;
}

int ft_setting_read(const char *path, char *value, size_t len)
{
	char buf[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	int err = n < 0 ? errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	const char *s = memchr(buf, '[', (size_t)n), *e;
	if (s) {
		s++;
		e = memchr(s, ']', (size_t)(buf + n - s));
		if (!e)
			return EINVAL;
	} else {
		for (s = buf; *s == ' ' || *s == '\t' || *s == '\n'; s++)
			;
		for (e = s; *e && *e != ' ' && *e != '\t' && *e != '\n'; e++)
			;
	}
	if ((size_t)(e - s) >= len)
		return EOVERFLOW;
	copy(value, len, s, (size_t)(e - s));
	return 0;
}

static int write_value(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC); /* sysfs ignores O_TRUNC; a file needs it */
	if (fd < 0)
		return errno;
	size_t len = strlen(value);
	ssize_t n = write(fd, value, len);
	int err = n < 0 ? errno : (size_t)n < len ? EIO : 0;
	close(fd);
	return err;
}

static struct ft_setting *find(const char *path)
{
	for (sig_atomic_t i = 0; i < logged; i++)
		if (strcmp(entries[i].path, path) == 0)
			return &entries[i];
	return NULL;
}


static const char *lock_dir(void)
{
	const char *d = getenv("FTRUN_LOCK_DIR");
	return d && *d ? d : "/run/lock";
}

static void lock_path(char *out, size_t len)
{
	snprintf(out, len, "%s/ftrun-settings.lock", lock_dir());
}

static void journal_dir(char *out, size_t len)
{
	snprintf(out, len, "%s/ftrun-settings.journal", lock_dir());
}

static int open_lock(void)
{
	char path[FT_DIR_PATH + 32];
	lock_path(path, sizeof path);
	if (mkdir(lock_dir(), 01777) == 0)
		chmod(lock_dir(), 01777); /* as Debian makes /run/lock, whatever the umask */
	int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

/* The pid /proc/locks names as the flock holder of fd's file, or 0. */
static long lock_holder(int fd)
{
	struct stat st;
	FILE *f;
	if (fstat(fd, &st) != 0 || !(f = fopen("/proc/locks", "re")))
		return 0;
	char line[256];
	long pid = 0;
	while (!pid && fgets(line, sizeof line, f)) {
		char kind[16];
		long p;
		unsigned maj, min;
		unsigned long ino;
		if (strstr(line, "->")) /* a waiter, not the holder */
			continue;
		if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%lu", kind, &p, &maj, &min, &ino) == 5 &&
		    strcmp(kind, "FLOCK") == 0 && ino == st.st_ino &&
		    maj == major(st.st_dev) && min == minor(st.st_dev))
			pid = p;
	}
	fclose(f);
	return pid;
}

/* FTRUN_SETTINGS_LOCK_FD: an fd on the lock file, inherited from a holder.
 * flock on it succeeds at once because the open file is the holder's. */
static int inherited_lock(void)
{
	const char *s = getenv("FTRUN_SETTINGS_LOCK_FD");
	char *end, path[FT_DIR_PATH + 32];
	struct stat a, b;
	if (!s || !*s)
		return -1;
	long fd = strtol(s, &end, 10);
	lock_path(path, sizeof path);
	if (*end || fd < 0 || fd > INT_MAX || fstat((int)fd, &a) != 0 || stat(path, &b) != 0 ||
	    a.st_ino != b.st_ino || a.st_dev != b.st_dev || flock((int)fd, LOCK_EX | LOCK_NB) != 0)
		return -1;
	return (int)fd;
}

static bool no_wait(void)
{
	const char *s = getenv("NOWAIT");
	return s && strcmp(s, "1") == 0;
}

int ft_settings_lock(void)
{
	if (lock_fd >= 0)
		return 0;
	int fd = inherited_lock();
	if (fd < 0) {
		if ((fd = open_lock()) < 0)
			return -fd;
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			char path[FT_DIR_PATH + 32];
			lock_path(path, sizeof path);
			int err = errno;
			long holder = lock_holder(fd);
			if (err != EWOULDBLOCK || no_wait()) {
				if (err == EWOULDBLOCK)
					fprintf(stderr, "ftrun: the settings lock %s is held by pid %ld, "
					        "and NOWAIT=1: not waiting\n", path, holder);
				close(fd);
				return err;
			}
			fprintf(stderr, "ftrun: waiting for the settings lock %s: pid %ld is changing "
			        "THP or hugetlb settings (NOWAIT=1 refuses instead)\n", path, holder);
			struct timespec pause = { 0, 50 * 1000 * 1000 };
			while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
				err = ft_interrupted ? EINTR : errno;
				if (err != EWOULDBLOCK) {
					close(fd);
					return err;
				}
				nanosleep(&pause, NULL);
			}
			fprintf(stderr, "ftrun: got the settings lock\n");
		}
		/* kept across exec, so an ftrun this run starts shares the lock */
		fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) & ~FD_CLOEXEC);
		char v[16];
		snprintf(v, sizeof v, "%d", fd);
		setenv("FTRUN_SETTINGS_LOCK_FD", v, 1);
	}
	lock_fd = fd;
	int restored, left;
	ft_settings_recover(&restored, &left); /* a dead run's leftovers first */
	return 0;
}

/* Field 22 of /proc/pid/stat, the start time: with the pid it names one
 * process, not a later one given the same number. 0 when unreadable. */
static unsigned long long start_time(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long long t = 0;
	/* after ") " come state (field 3) ... starttime (field 22) */
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &t) != 1)
		t = 0;
	return t;
}

/* Appends path and its value before this run's change; fsynced, so it is
 * on record before the change is made. */
static int journal_append(const char *path, const char *before)
{
	if (!journal_made) {
		char dir[FT_DIR_PATH + 32];
		journal_dir(dir, sizeof dir);
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return errno;
		long pid = (long)getpid();
		snprintf(journal, sizeof journal, "%s/%ld-%llu", dir, pid, start_time(pid));
		int fd = open(journal, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return errno;
		close(fd);
		journal_made = 1;
	}
	char line[FT_SETTING_PATH + FT_SETTING_VALUE + 4];
	int len = snprintf(line, sizeof line, "%s\t%s\n", path, before);
	int fd = open(journal, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int err = write(fd, line, (size_t)len) == len ? 0 : errno ? errno : EIO;
	if (!err && fsync(fd) != 0)
		err = errno;
	close(fd);
	return err;
}

int ft_setting_write(const char *path, const char *value, char *before, size_t len)
{
	if (strlen(path) >= FT_SETTING_PATH || strlen(value) >= FT_SETTING_VALUE)
		return ENAMETOOLONG;
	int err = ft_settings_lock();
	if (err)
		return err;
	char now[FT_SETTING_VALUE];
	if ((err = ft_setting_read(path, now, sizeof now)) != 0)
		return err;
	struct ft_setting *e = find(path);
	bool fresh = !e;
	if (fresh || e->restored) {
		if (fresh && logged == FT_SETTINGS_MAX)
			return ENOSPC;
		if ((err = journal_append(path, now)) != 0)
			return err;
	}
	if (fresh) {
		e = &entries[logged];
		copy(e->path, sizeof e->path, path, strlen(path));
		copy(e->before, sizeof e->before, now, strlen(now));
		copy(e->after, sizeof e->after, now, strlen(now));
		e->restored = 0;
		e->err = 0;
		e->foreign = 0;
		owner = getpid();
		atomic_signal_fence(memory_order_seq_cst);
		logged = logged + 1;
	} else if (e->restored) {
		/* changed again after a restore: today's value is the one to restore */
		copy(e->before, sizeof e->before, now, strlen(now));
		e->foreign = 0;
		atomic_signal_fence(memory_order_seq_cst);
		e->restored = 0;
	}
	copy(before, len, now, strlen(now));
	err = write_value(path, value);
	char after[FT_SETTING_VALUE];
	if (ft_setting_read(path, after, sizeof after) == 0)
		copy(e->after, sizeof e->after, after, strlen(after));
	if (err && fresh && strcmp(e->after, e->before) == 0)
		logged = logged - 1; /* refused, and nothing changed */
	return err;
}

int ft_settings_restore(void)
{
	if (logged == 0 || owner != getpid())
		return 0;
	int first = 0;
	for (sig_atomic_t i = logged; i-- > 0;) {
		struct ft_setting *e = &entries[i];
		if (e->restored)
			continue;
		char now[FT_SETTING_VALUE];
		if (ft_setting_read(e->path, now, sizeof now) == 0 && strcmp(now, e->after) != 0) {
			copy(e->found, sizeof e->found, now, strlen(now));
			copy(e->left, sizeof e->left, e->after, strlen(e->after));
			e->foreign = 1; /* not what this run left: said by the caller */
		}
		int err = write_value(e->path, e->before);
		if (ft_setting_read(e->path, now, sizeof now) == 0) {
			copy(e->after, sizeof e->after, now, strlen(now));
			if (!err && strcmp(now, e->before) != 0)
				err = EAGAIN; /* e.g. fewer huge pages came back */
		}
		e->err = err;
		if (err && !first)
			first = err;
		if (!err)
			e->restored = 1;
	}
	if (!first && journal_made) {
		unlink(journal); /* all back: nothing for a later start to do */
		journal_made = 0;
	}
	return first;
}

/* A journal's process: gone, or its pid now names a later process. A
 * process whose start time cannot be read counts as alive. */
static bool run_alive(long pid, unsigned long long start)
{
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return false;
	unsigned long long now = start_time(pid);
	return now == 0 || now == start;
}

/* Writes back what one dead run's journal names, last change first.
 * Returns the number of files that would not go back. */
static int recover_journal(const char *file, long pid, int *restored)
{
	char buf[FT_SETTINGS_MAX * (FT_SETTING_PATH + FT_SETTING_VALUE + 2) + 1];
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return 1;
	buf[n] = '\0';
	char *lines[FT_SETTINGS_MAX * 2];
	int count = 0, left = 0;
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l && count < FT_SETTINGS_MAX * 2;
	     l = strtok_r(NULL, "\n", &save))
		lines[count++] = l;
	while (count-- > 0) {
		char *path = lines[count], *tab = strchr(path, '\t'), now[FT_SETTING_VALUE];
		if (!tab || path[0] != '/')
			continue; /* a line cut short by the kill: its change was never made */
		*tab = '\0';
		const char *before = tab + 1;
		int err = ft_setting_read(path, now, sizeof now);
		if (!err && strcmp(now, before) == 0)
			continue; /* back already (hugetlb pages freed when the run died) */
		if (!err)
			err = write_value(path, before);
		char after[FT_SETTING_VALUE] = "?";
		if (!err && ft_setting_read(path, after, sizeof after) == 0 && strcmp(after, before) != 0)
			err = EAGAIN;
		ft_stderr_end_line(); /* a setting changed mid-run may be the first */
		if (err) {
			left++;
			fprintf(stderr, "ftrun: could not restore %s to %s, left changed by pid %ld which "
			        "is no longer running: %s\n", path, before, pid,
			        err == EAGAIN ? "the kernel kept another value" : strerror(err));
		} else {
			(*restored)++;
			fprintf(stderr, "ftrun: restored %s to %s (it read %s), left changed by pid %ld "
			        "which is no longer running\n", path, before, now, pid);
		}
	}
	return left;
}

int ft_settings_recover(int *restored, int *left)
{
	*restored = *left = 0;
	char dir[FT_DIR_PATH + 32];
	journal_dir(dir, sizeof dir);
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : errno;
	int fd = lock_fd, err = 0;
	bool took = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		long pid;
		unsigned long long start;
		char end;
		if (sscanf(de->d_name, "%ld-%llu%c", &pid, &start, &end) != 2 || run_alive(pid, start))
			continue;
		if (fd < 0 && (fd = inherited_lock()) < 0) {
			/* a lock of our own, only while restoring */
			if ((fd = open_lock()) < 0) {
				err = -fd;
				break;
			}
			if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
				err = errno;
				ft_stderr_end_line();
				fprintf(stderr, "ftrun: pid %ld died and left settings changed (%s/%s); pid %ld "
				        "holds the settings lock, so they are left for a later start\n",
				        pid, dir, de->d_name, lock_holder(fd));
				close(fd);
				fd = -1;
				(*left)++;
				break;
			}
			took = true;
		}
		char file[sizeof dir + 256];
		snprintf(file, sizeof file, "%s/%s", dir, de->d_name);
		int n = recover_journal(file, pid, restored);
		if (n == 0)
			unlink(file);
		*left += n;
	}
	closedir(d);
	if (took)
		close(fd);
	return err;
}

bool ft_settings_held_elsewhere(void)
{
	if (lock_fd >= 0)
		return false;
	if (getenv("FTRUN_SETTINGS_LOCK_FD"))
		return true; /* a parent holds it */
	int fd = open_lock();
	if (fd < 0)
		return false;
	bool held = flock(fd, LOCK_EX | LOCK_NB) != 0;
	close(fd);
	return held;
}

size_t ft_settings_count(void)
{
	return (size_t)logged;
}

const struct ft_setting *ft_setting_at(size_t i)
{
	return i < (size_t)logged ? &entries[i] : NULL;
}

static void say(const char *s)
{
	ssize_t r = write(STDERR_FILENO, s, strlen(s));
	(void)r;
}

/* stdio and strerror are not for signal handlers: the number will do. */
static void say_int(int v)
{
	char buf[16], *p = buf + sizeof buf;
	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) > 0 && p > buf);
	say(p);
}

/* strtoll is not on the async-signal-safe list: digits by hand. */
static long long count_of(const char *s)
{
	long long v = 0;
	for (; *s >= '0' && *s <= '9' && v < LLONG_MAX / 10 - 10; s++)
		v = v * 10 + (*s - '0');
	return v;
}

/* A hugetlb pool lowered while this process still maps some of its pages
 * keeps them until the process is gone: it reads more than was written,
 * and the right value once we die. Its journal stays, and the next start
 * finds the file back and says nothing. */
static bool freed_at_exit(const struct ft_setting *e)
{
	static const char suffix[] = "/nr_hugepages";
	size_t n = strlen(e->path), k = sizeof suffix - 1;
	return e->err == EAGAIN && n > k && strcmp(e->path + n - k, suffix) == 0 &&
	       count_of(e->after) > count_of(e->before);
}

void ft_settings_on_signal(int sig)
{
	int saved = errno;
	ft_stderr_end_line(); /* a progress line may be open */
	ft_files_unlink_temps();
	if (ft_settings_restore() != 0) {
		for (size_t i = 0; i < ft_settings_count(); i++) {
			const struct ft_setting *e = &entries[i];
			if (e->restored || freed_at_exit(e))
				continue;
			say("ftrun: could not restore ");
			say(e->path);
			say(" to ");
			say(e->before);
			say(" (it reads ");
			say(e->after);
			say(", errno ");
			say_int(e->err);
			say(")\n");
		}
	}
	/* die of sig as if this handler were not here: sig is blocked while
	 * the handler runs, so the raise lands when it returns */
	struct sigaction dfl = {0};
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
	errno = saved;
}

static void restore_at_exit(void)
{
	ft_settings_restore();
}

void ft_settings_guard(void)
{
	static bool guarded;
	if (guarded)
		return;
	guarded = true;
	atexit(restore_at_exit);
	static const int signals[] = { SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
		struct sigaction sa = {0}, old;
		if (sigaction(signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sa.sa_handler = ft_settings_on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(signals[i], &sa, NULL);
	}
}
