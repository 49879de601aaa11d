#include "restore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
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

/* The lock and journal (protocol in restore.h). They live in a tmpfs
 * (/run): a journal survives a SIGKILL but not a reboot, which is right,
 * since the kernel resets every sysfs setting at boot and a journal from
 * before it would "restore" stale values over the boot defaults. The
 * directories are opened once and checked (owner, mode) through the open
 * descriptor, and everything in them is reached from it, so nobody can
 * swap a checked directory for another; the signal handler unlinks the
 * journal by its descriptor and name without allocating. */
enum { FT_DIR_PATH = 200 };
static const char LOCK_NAME[] = "ftrun-settings.lock", JOURNAL_NAME[] = "ftrun-settings.journal";
static char dir_path[FT_DIR_PATH];
static int dir_fd = -1, journal_dir_fd = -1;
static char lock_problem[FT_DIR_PATH + 160]; /* why the lock directory or file was refused */
static bool write_lock_failed;               /* the last ft_setting_write failed at the lock */
static char journal_name[64];
static volatile sig_atomic_t journal_made;
static int lock_fd = -1;
static int lock_mode;   /* LOCK_SH or LOCK_EX while this run holds it, or a parent for it */
static bool covered;    /* held by a parent (or an inherited descriptor), not by lock_fd */

/* The files a journal may name: the settings ftrun changes, and nothing
 * else, since a journal line is written back as root. fnmatch patterns
 * with FNM_PATHNAME | FNM_PERIOD, so a * stays inside one component and
 * is never "." or "..". A knob that changes another file adds it here
 * (e.g. "/sys/module/page_reporting/parameters/<name>"). */
static const char *const settable[] = {
	"/sys/kernel/mm/transparent_hugepage/enabled",
	"/sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled",
	"/sys/kernel/mm/hugepages/hugepages-*kB/nr_hugepages",
	"/proc/sys/vm/nr_hugepages",
	/* REPORTING=held: the guest's free page reporting, numeric parameters only */
	"/sys/module/page_reporting/parameters/page_reporting_order",
	"/sys/module/page_reporting/parameters/min_free_ms",
	"/sys/module/page_reporting/parameters/max_waiting_mib",
	NULL
};

static const char *lock_dir(void);

/* Stand-ins for tests: setting-* directly in the (checked) lock directory. */
static bool stand_in(const char *path)
{
	static const char prefix[] = "setting-";
	const char *dir = lock_dir();
	size_t n = strlen(dir);
	return n > 0 && dir[0] == '/' && strncmp(path, dir, n) == 0 && path[n] == '/' &&
	       strncmp(path + n + 1, prefix, sizeof prefix - 1) == 0 && !strchr(path + n + 1, '/');
}

bool ft_setting_allowed(const char *path)
{
	if (strlen(path) >= FT_SETTING_PATH)
		return false;
	for (size_t i = 0; settable[i]; i++)
		if (fnmatch(settable[i], path, FNM_PATHNAME | FNM_PERIOD) == 0)
			return true;
	return stand_in(path);
}

/* A value a setting takes: "madvise", "512". */
static bool value_ok(const char *v)
{
	size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789");
	return n > 0 && n < FT_SETTING_VALUE && v[n] == '\0';
}

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
	/* sysfs ignores O_TRUNC; a stand-in file needs it */
	int fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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


/* FTRUN_LOCK_DIR, else a directory only this user can write: /run/ftrun
 * for root; for another user (who changes no setting, but takes the lock
 * to paste into a README or to measure undisturbed by its own runs)
 * $XDG_RUNTIME_DIR/ftrun when that is the user's, else /tmp/ftrun-UID. */
static const char *lock_dir(void)
{
	if (dir_path[0])
		return dir_path;
	const char *d = getenv("FTRUN_LOCK_DIR"), *x = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	if (d && *d) {
		/* "link/" would follow the link that O_NOFOLLOW refuses as "link" */
		snprintf(dir_path, sizeof dir_path, "%s", d);
		for (size_t n = strlen(dir_path); n > 1 && dir_path[n - 1] == '/'; n--)
			dir_path[n - 1] = '\0';
	}
	else if (geteuid() == 0)
		snprintf(dir_path, sizeof dir_path, "/run/ftrun");
	else if (x && x[0] == '/' && stat(x, &st) == 0 && st.st_uid == geteuid())
		snprintf(dir_path, sizeof dir_path, "%s/ftrun", x);
	else
		snprintf(dir_path, sizeof dir_path, "/tmp/ftrun-%u", (unsigned)geteuid());
	return dir_path;
}

/* Only this user may write where a journal is read from, or whoever could
 * would choose what is written back as root. fd must be a `type` (S_IFDIR
 * or S_IFREG) owned by the euid that no group or other user can write;
 * else says why, naming `what`, and returns EPERM. */
static int check_owned(int fd, const char *what, const char *path, mode_t type)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return errno;
	char why[96] = "";
	if ((st.st_mode & S_IFMT) != type)
		snprintf(why, sizeof why, "not a %s", type == S_IFDIR ? "directory" : "regular file");
	else if (st.st_uid != geteuid())
		snprintf(why, sizeof why, "owned by uid %u, not %u", (unsigned)st.st_uid, (unsigned)geteuid());
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, sizeof why, "writable by %s (mode %04o)",
		         st.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st.st_mode & 07777));
	if (!why[0])
		return 0;
	snprintf(lock_problem, sizeof lock_problem, "%s %s is %s", what, path, why);
	ft_stderr_end_line();
	fprintf(stderr, "ftrun: %s %s is %s: not used, since only the user running ftrun may write "
	        "there\n", what, path, why);
	return EPERM;
}

/* Opens the lock directory (made 0700 when missing and `create`) and
 * checks it; a refusal is said once. */
static int open_lock_dir(bool create)
{
	static bool said;
	if (dir_fd >= 0)
		return 0;
	const char *path = lock_dir();
	if (create && mkdir(path, geteuid() == 0 ? 0711 : 0700) != 0 && errno != EEXIST)
		return errno;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		if (err != ELOOP && err != ENOTDIR)
			return err;
		/* O_NOFOLLOW | O_DIRECTORY on a link gives ENOTDIR: say what it is */
		struct stat lst;
		bool link = err == ELOOP || (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode));
		snprintf(lock_problem, sizeof lock_problem, "the settings lock directory %s is %s", path,
		         link ? "a symbolic link" : "not a directory");
		if (!said) {
			ft_stderr_end_line();
			fprintf(stderr, "ftrun: %s: not used\n", lock_problem);
		}
		said = true;
		return EPERM;
	}
	int err = said ? EPERM : check_owned(fd, "the settings lock directory", path, S_IFDIR);
	if (err) {
		said = true;
		close(fd);
		return err;
	}
	/* root's lock is every user's (restore.h): others may reach the lock
	 * file by its name, and nothing else (its journals stay 0700) */
	struct stat st;
	if (geteuid() == 0 && fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0700)
		fchmod(fd, 0711);
	dir_fd = fd;
	return 0;
}

/* The journal directory in the lock directory, checked likewise. */
static int open_journal_dir(bool create)
{
	if (journal_dir_fd >= 0)
		return 0;
	int err = open_lock_dir(create);
	if (err)
		return err;
	if (create && mkdirat(dir_fd, JOURNAL_NAME, 0700) != 0 && errno != EEXIST)
		return errno;
	int fd = openat(dir_fd, JOURNAL_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? EPERM : errno;
	char path[FT_DIR_PATH + 32];
	snprintf(path, sizeof path, "%s/%s", dir_path, JOURNAL_NAME);
	if ((err = check_owned(fd, "the settings journal directory", path, S_IFDIR)) != 0) {
		close(fd);
		return err;
	}
	journal_dir_fd = fd;
	return 0;
}

/* The lock file: root's 0644, so that every user's run can hold it shared
 * (one lock for every user, restore.h); another user's 0600. A user who
 * holds root's alone is refused by root's runs, never waited for. Returns
 * an fd or -errno. */
static int open_lock_file(void)
{
	int err = open_lock_dir(true);
	if (err)
		return -err;
	int fd = openat(dir_fd, LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	char path[FT_DIR_PATH + 32];
	snprintf(path, sizeof path, "%s/%s", dir_path, LOCK_NAME);
	struct stat st;
	if ((err = check_owned(fd, "the settings lock", path, S_IFREG)) != 0) {
		close(fd);
		return -err;
	}
	mode_t want = geteuid() == 0 ? 0644 : 0600;
	if (fstat(fd, &st) == 0 && (st.st_mode & 0777) != want)
		fchmod(fd, want);
	return fd;
}

/* The processes /proc/locks names as flock holders (not waiters) of fd's
 * file, at most max; returns how many. */
struct holder {
	long pid;
	bool exclusive;
};

static int lock_holders(int fd, struct holder *h, int max)
{
	struct stat st;
	FILE *f;
	if (fstat(fd, &st) != 0 || !(f = fopen("/proc/locks", "re")))
		return 0;
	char line[256];
	int n = 0;
	while (n < max && fgets(line, sizeof line, f)) {
		char kind[16], type[16];
		long p;
		unsigned maj, min;
		unsigned long ino;
		if (strstr(line, "->")) /* a waiter, not a holder */
			continue;
		if (sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%lu", kind, type, &p, &maj, &min, &ino) == 6 &&
		    strcmp(kind, "FLOCK") == 0 && ino == st.st_ino &&
		    maj == major(st.st_dev) && min == minor(st.st_dev)) {
			h[n].pid = p;
			h[n++].exclusive = strcmp(type, "WRITE") == 0;
		}
	}
	fclose(f);
	return n;
}

/* /proc/pid/stat read into buf, and where its fields after the command's
 * ") " start (the command may hold blanks and parentheses); NULL when
 * unreadable. */
static const char *stat_fields(long pid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : NULL;
}

/* Field 4 of /proc/pid/stat, the parent; 0 when unreadable. */
static long parent_of(long pid)
{
	char buf[512];
	const char *f = stat_fields(pid, buf, sizeof buf);
	long ppid = 0;
	if (!f || sscanf(f, "%*c %ld", &ppid) != 1)
		return 0;
	return ppid;
}

static bool is_ancestor(long pid)
{
	long p = (long)getppid();
	for (int depth = 0; p > 1 && depth < 256; depth++, p = parent_of(p))
		if (p == pid)
			return true;
	return false;
}

/* "pid N (comm)" of the first holder, and how many more: who to wait for, or ask. */
static void describe(const struct holder *h, int n, char *out, size_t len)
{
	if (n == 0) {
		snprintf(out, len, "another process");
		return;
	}
	char path[64], comm[64] = "";
	snprintf(path, sizeof path, "/proc/%ld/comm", h[0].pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t k = read(fd, comm, sizeof comm - 1);
		comm[k > 0 ? k : 0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		close(fd);
	}
	struct stat st;
	char uid[32] = "";
	snprintf(path, sizeof path, "/proc/%ld", h[0].pid);
	if (stat(path, &st) == 0 && st.st_uid != geteuid())
		snprintf(uid, sizeof uid, ", uid %u", (unsigned)st.st_uid);
	int w = snprintf(out, len, "pid %ld (%s%s)", h[0].pid,
	                 comm[0] ? comm : "no longer running: a process it started still has the lock file open", uid);
	if (n > 1 && w > 0 && (size_t)w < len)
		snprintf(out + w, len - (size_t)w, " and %d other%s", n - 1, n > 2 ? "s" : "");
}

/* The holders other than this process. */
static int others(int fd, struct holder *h, int max)
{
	struct holder all[32];
	int n = lock_holders(fd, all, 32), k = 0;
	for (int i = 0; i < n && k < max; i++)
		if (all[i].pid != (long)getpid())
			h[k++] = all[i];
	return k;
}

/* FTRUN_SETTINGS_LOCK_FD: an fd on the lock file a shell opened, flocked
 * and passed on on purpose. flock on it succeeds at once because the open
 * file is the holder's. */
static int inherited_lock(void)
{
	const char *s = getenv("FTRUN_SETTINGS_LOCK_FD");
	char *end;
	struct stat a, b;
	if (!s || !*s || open_lock_dir(false) != 0)
		return -1;
	long fd = strtol(s, &end, 10);
	if (*end || fd < 0 || fd > INT_MAX || fstat((int)fd, &a) != 0 ||
	    fstatat(dir_fd, LOCK_NAME, &b, AT_SYMLINK_NOFOLLOW) != 0 ||
	    a.st_ino != b.st_ino || a.st_dev != b.st_dev || flock((int)fd, LOCK_EX | LOCK_NB) != 0)
		return -1;
	return (int)fd;
}

static bool no_wait(void)
{
	const char *s = getenv("NOWAIT");
	return s && strcmp(s, "1") == 0;
}

/* Whether a parent process holds the lock as `want` needs (exclusive
 * covers both): then this run is part of the parent's. EDEADLK when the
 * parent holds it shared and this run would change a setting: waiting
 * for the parent, which waits for us, would never end. */
static int parent_covers(int want, bool say)
{
	struct holder h[32];
	int n = others(lock_fd, h, 32);
	for (int i = 0; i < n; i++) {
		if (!is_ancestor(h[i].pid))
			continue;
		if (h[i].exclusive || want == LOCK_SH)
			return h[i].exclusive ? LOCK_EX : LOCK_SH;
		if (!say)
			return 0;
		char who[160];
		describe(&h[i], 1, who, sizeof who);
		ft_stderr_end_line();
		fprintf(stderr, "ftrun: %s, which started this run, holds the settings lock shared; a change "
		        "of settings needs it alone and would wait for that run forever: change them there\n", who);
		return -EDEADLK;
	}
	return 0;
}

/* The uid a process runs as (its /proc directory's owner); -1 when gone. */
static long uid_of(long pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%ld", pid);
	return stat(path, &st) == 0 ? (long)st.st_uid : -1;
}

/* Waits (10 ms steps) until flock(fd, want) succeeds: 0, or EINTR on
 * SIGINT, or flock's error. */
static int wait_flock(int fd, int want)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	while (flock(fd, want | LOCK_NB) != 0) {
		int err = ft_interrupted ? EINTR : errno;
		if (err != EWOULDBLOCK)
			return err;
		nanosleep(&pause, NULL);
	}
	return 0;
}

/* Root's lock as every user sees it: FTRUN_ROOT_LOCK_DIR (tests) or, for a
 * run whose own lock is in the default place, /run/ftrun; NULL for root
 * (whose own lock it is) and for a run given FTRUN_LOCK_DIR alone. */
static const char *root_lock_dir(void)
{
	const char *d = getenv("FTRUN_ROOT_LOCK_DIR"), *own = getenv("FTRUN_LOCK_DIR");
	if (geteuid() == 0)
		return NULL;
	if (d && *d)
		return d;
	return own && *own ? NULL : "/run/ftrun";
}

static int root_lock_fd = -1;

static void let_go_of_root_lock(void)
{
	close(root_lock_fd);
	root_lock_fd = -1;
}

/* A run not root's holds root's lock shared as well as its own: root's
 * runs that change a setting (THP=16K) wait for it, and it waits for them,
 * so it never measures under settings a root run set meanwhile. The lock
 * file must be root's and writable by nobody else. A lock root never made
 * (no root run since boot) is none; one this user cannot open is said, and
 * the run goes on without it. */
static int share_root_lock(void)
{
	const char *dir = root_lock_dir();
	if (!dir || root_lock_fd >= 0)
		return 0;
	char path[FT_DIR_PATH + 32];
	snprintf(path, sizeof path, "%s/%s", dir, LOCK_NAME);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	const char *why = NULL;
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		why = strerror(errno);
	else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		why = "not a regular file of root's that only root can write";
	if (why) {
		if (fd >= 0)
			close(fd);
		ft_stderr_end_line();
		fprintf(stderr, "ftrun: warning: root's settings lock %s cannot be held (%s): a root run may "
		        "change the THP settings while this one measures\n", path, why);
		return 0;
	}
	/* a run of root's that started this one holds it (a test suite, a
	 * script's child): this run is part of that one, as parent_covers says */
	struct holder held[32];
	int k = others(fd, held, 32);
	for (int i = 0; i < k; i++)
		if (is_ancestor(held[i].pid)) {
			close(fd);
			return 0;
		}
	root_lock_fd = fd;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK) {
		int err = errno;
		let_go_of_root_lock();
		return err;
	}
	struct holder h[32];
	char who[200];
	describe(h, others(fd, h, 32), who, sizeof who);
	ft_stderr_end_line();
	if (no_wait()) {
		fprintf(stderr, "ftrun: root's settings lock %s is held alone by %s, which changes settings, and "
		        "NOWAIT=1: not waiting\n", path, who);
		let_go_of_root_lock();
		return EWOULDBLOCK;
	}
	fprintf(stderr, "ftrun: waiting for root's settings lock %s: %s holds it alone, changing settings "
	        "(NOWAIT=1 refuses instead)\n", path, who);
	int err = wait_flock(fd, LOCK_SH);
	if (!err)
		fprintf(stderr, "ftrun: got root's settings lock (shared)\n");
	else
		let_go_of_root_lock();
	return err;
}

/* Root's run finds its lock held alone by another user, who could stop
 * every change of settings for as long as they like: refused, named. */
static int refuse_foreign_holder(const char *path)
{
	struct holder h[32];
	int n = others(lock_fd, h, 32);
	for (int i = 0; i < n; i++) {
		long uid = uid_of(h[i].pid);
		if (!h[i].exclusive || uid <= 0)
			continue;
		char who[200];
		describe(&h[i], 1, who, sizeof who);
		ft_stderr_end_line();
		fprintf(stderr, "ftrun: the settings lock %s is held alone by %s, not a run of root's; only root's "
		        "runs take it alone, others share it: not waiting\n", path, who);
		return EPERM;
	}
	return 0;
}

static int take_own(int want);

static int take(int want)
{
	int err = take_own(want);
	if (err)
		return err;
	err = share_root_lock();
	if (err && !covered) {
		flock(lock_fd, LOCK_UN);
		lock_mode = 0;
	}
	return err;
}

static int take_own(int want)
{
	if (lock_mode == LOCK_EX || lock_mode == want)
		return 0;
	if (lock_mode == 0) {
		int fd = inherited_lock();
		if (fd >= 0) {
			lock_mode = LOCK_EX;
			covered = true;
			return 0;
		}
	}
	if (lock_fd < 0) {
		int fd = open_lock_file();
		if (fd < 0)
			return -fd;
		lock_fd = fd;
	}
	if (lock_mode == 0 || covered) {
		int mode = parent_covers(want, true);
		if (mode < 0)
			return -mode;
		if (mode) {
			lock_mode = mode;
			covered = true;
			return 0;
		}
	}
	covered = false; /* the parent that held it has gone */
	if (flock(lock_fd, want | LOCK_NB) == 0) {
		lock_mode = want;
		return 0;
	}
	int err = errno;
	lock_mode = 0; /* a refused conversion from shared leaves no lock at all (flock(2)) */
	if (err != EWOULDBLOCK)
		return err;
	struct holder h[32];
	char who[200], path[FT_DIR_PATH + 32];
	describe(h, others(lock_fd, h, 32), who, sizeof who);
	snprintf(path, sizeof path, "%s/%s", dir_path, LOCK_NAME);
	if (geteuid() == 0 && (err = refuse_foreign_holder(path)) != 0)
		return err;
	ft_stderr_end_line();
	if (no_wait()) {
		fprintf(stderr, "ftrun: the settings lock %s is held by %s, and NOWAIT=1: not waiting\n", path, who);
		return EWOULDBLOCK;
	}
	fprintf(stderr, "ftrun: waiting for the settings lock %s: %s holds it (NOWAIT=1 refuses instead)\n",
	        path, who);
	if ((err = wait_flock(lock_fd, want)) != 0)
		return err;
	fprintf(stderr, "ftrun: got the settings lock\n");
	lock_mode = want;
	return 0;
}

int ft_settings_lock(void)
{
	bool had = lock_mode == LOCK_EX;
	int err = take(LOCK_EX);
	if (!err && !had) {
		int restored, left;
		ft_settings_recover(&restored, &left, true); /* a dead run's leftovers first */
	}
	return err;
}

int ft_settings_lock_shared(void)
{
	return take(LOCK_SH);
}

/* Field 22 of /proc/pid/stat, the start time: with the pid it names one
 * process, not a later one given the same number. 0 when unreadable. */
static unsigned long long start_time(long pid)
{
	char buf[1024];
	const char *f = stat_fields(pid, buf, sizeof buf);
	unsigned long long t = 0;
	/* state (field 3) ... starttime (field 22) */
	if (!f || sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &t) != 1)
		t = 0;
	return t;
}

/* Appends path and its value before this run's change; fsynced, so it is
 * on record before the change is made. */
static int journal_append(const char *path, const char *before)
{
	if (!journal_made) {
		int err = open_journal_dir(true);
		if (err)
			return err;
		long pid = (long)getpid();
		snprintf(journal_name, sizeof journal_name, "%ld-%llu", pid, start_time(pid));
		int fd = openat(journal_dir_fd, journal_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return errno;
		close(fd);
		journal_made = 1;
	}
	char line[FT_SETTING_PATH + FT_SETTING_VALUE + 4];
	int len = snprintf(line, sizeof line, "%s\t%s\n", path, before);
	int fd = openat(journal_dir_fd, journal_name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
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
	if (!ft_setting_allowed(path) || !value_ok(value))
		return EINVAL; /* recovery would refuse its journal line */
	int err = ft_settings_lock();
	write_lock_failed = err != 0;
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
	if (err && fresh && strcmp(e->after, e->before) == 0) {
		logged = logged - 1; /* refused, and nothing changed */
		if (logged == 0 && journal_made) {
			/* nothing to restore: no later start should try (an unprivileged
			 * user's refused change would be retried, and refused, at each) */
			unlinkat(journal_dir_fd, journal_name, 0);
			journal_made = 0;
		}
	}
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
		unlinkat(journal_dir_fd, journal_name, 0); /* all back: nothing for a later start to do */
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
	/* killed but not yet reaped (a zombie, or dead): its lock and files are
	 * closed, and nothing of it will run again */
	char buf[1024];
	const char *f = stat_fields(pid, buf, sizeof buf);
	if (f && (f[0] == 'Z' || f[0] == 'X'))
		return false;
	unsigned long long now = start_time(pid);
	return now == 0 || now == start;
}

/* Opens a journal for reading: a regular file of this user's, opened
 * without following a link or waiting on a FIFO. -1 with errno ENOENT when
 * it is gone (another start restored it); else says why not and -1. */
static int open_journal(const char *name, const char *file)
{
	int fd = openat(journal_dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char why[96] = "";
	if (fd < 0) {
		if (errno == ENOENT)
			return -1;
		snprintf(why, sizeof why, "%s", errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	} else if (fstat(fd, &st) != 0) {
		snprintf(why, sizeof why, "%s", strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		snprintf(why, sizeof why, "%s", strerror(EISDIR));
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(why, sizeof why, "not a regular file");
	} else if (st.st_uid != geteuid()) {
		snprintf(why, sizeof why, "owned by uid %u, not %u", (unsigned)st.st_uid, (unsigned)geteuid());
	}
	if (!why[0])
		return fd;
	if (fd >= 0)
		close(fd);
	ft_stderr_end_line();
	fprintf(stderr, "ftrun: cannot read journal %s: %s; nothing in it is written back\n", file, why);
	errno = EPERM;
	return -1;
}

/* Writes back what one dead run's journal names, last change first.
 * Returns the number of lines that would not go back or were refused. */
static int recover_journal(const char *name, long pid, int *restored)
{
	char file[FT_DIR_PATH + 320];
	snprintf(file, sizeof file, "%s/%s/%s", dir_path, JOURNAL_NAME, name);
	char buf[FT_SETTINGS_MAX * (FT_SETTING_PATH + FT_SETTING_VALUE + 2) + 1];
	int fd = open_journal(name, file);
	if (fd < 0)
		return errno == ENOENT ? 0 : 1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	int err = errno;
	close(fd);
	if (n < 0) {
		ft_stderr_end_line();
		fprintf(stderr, "ftrun: cannot read journal %s: %s\n", file, strerror(err));
		return 1;
	}
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
		if (!ft_setting_allowed(path) || !value_ok(before)) {
			left++;
			ft_stderr_end_line();
			if (!ft_setting_allowed(path))
				fprintf(stderr, "ftrun: journal %s names %.200s, which is not a setting ftrun changes: "
				        "not written\n", file, path);
			else
				fprintf(stderr, "ftrun: journal %s gives %s a value of %zu bytes that no setting takes "
				        "(1 to %d of a-z, 0-9): not written\n", file, path, strlen(before),
				        FT_SETTING_VALUE - 1);
			continue;
		}
		err = ft_setting_read(path, now, sizeof now);
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

/* A lock of our own, only while restoring a dead run's journal. When
 * another start holds it to restore the same journal, wait a little for
 * it: 1 when we have the lock, 0 when the journal went meanwhile (the
 * other start restored it), -1 when it is still there and held. */
static int lock_to_restore(int *fd, const char *name, long pid, bool say_held)
{
	if ((*fd = open_lock_file()) < 0)
		return -1;
	struct holder h[32];
	int n = 0;
	/* an exclusive holder may be restoring it now (shared ones never do): a
	 * script waits up to 2 s to see, -e and the REPL, which only probe, not */
	for (int tries = 0; tries < (say_held ? 200 : 1); tries++) {
		if (flock(*fd, LOCK_EX | LOCK_NB) == 0)
			return 1;
		if (faccessat(journal_dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
			break;
		n = others(*fd, h, 32);
		bool restoring = false;
		for (int i = 0; i < n; i++)
			restoring |= h[i].exclusive;
		if (!restoring || ft_interrupted)
			break;
		struct timespec pause = { 0, 10 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
	close(*fd);
	*fd = -1;
	if (faccessat(journal_dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
		return 0;
	if (!say_held)
		return -1;
	char who[200];
	describe(h, n, who, sizeof who);
	ft_stderr_end_line();
	fprintf(stderr, "ftrun: pid %ld died and left settings changed (%s/%s/%s); %s holds the "
	        "settings lock, so they are left for a later start\n", pid, dir_path, JOURNAL_NAME, name, who);
	return -1;
}

int ft_settings_recover(int *restored, int *left, bool say_held)
{
	*restored = *left = 0;
	if (lock_mode == LOCK_SH)
		return 0; /* restoring needs the lock alone: a later start does it */
	int err = open_journal_dir(false);
	if (err == ENOENT)
		return 0;
	if (err) {
		(*left)++;
		return err;
	}
	int dfd = dup(journal_dir_fd);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return errno;
	}
	rewinddir(d); /* the dup shares its offset with journal_dir_fd, left at the end by the last scan */
	int fd = -1;
	bool locked = lock_mode == LOCK_EX; /* ours, a parent's or the inherited one */
	if (!locked && lock_mode == 0) {
		if (lock_fd < 0 && (lock_fd = open_lock_file()) < 0)
			lock_fd = -1;
		locked = inherited_lock() >= 0 || (lock_fd >= 0 && parent_covers(LOCK_EX, false) == LOCK_EX);
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		long pid;
		unsigned long long start;
		char end;
		if (sscanf(de->d_name, "%ld-%llu%c", &pid, &start, &end) != 2 || run_alive(pid, start))
			continue;
		if (!locked) {
			int got = lock_to_restore(&fd, de->d_name, pid, say_held);
			if (got == 0)
				continue;
			if (got < 0) {
				(*left)++;
				break;
			}
			locked = true;
		}
		int n = recover_journal(de->d_name, pid, restored);
		if (n == 0)
			unlinkat(journal_dir_fd, de->d_name, 0);
		*left += n;
	}
	closedir(d);
	if (fd >= 0)
		close(fd);
	return err;
}

/* Whether root's lock (for a run not root's) is held alone by a run. */
static bool root_held_alone(void)
{
	const char *dir = root_lock_dir();
	if (!dir)
		return false;
	char path[FT_DIR_PATH + 32];
	snprintf(path, sizeof path, "%s/%s", dir, LOCK_NAME);
	int fd = root_lock_fd >= 0 ? root_lock_fd : open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct holder h[32];
	int n = others(fd, h, 32);
	if (fd != root_lock_fd)
		close(fd);
	for (int i = 0; i < n; i++)
		if (h[i].exclusive)
			return true;
	return false;
}

const char *ft_setting_lock_problem(void)
{
	return write_lock_failed && lock_problem[0] ? lock_problem : NULL;
}

bool ft_settings_held_elsewhere(void)
{
	if (root_held_alone())
		return true;
	if (lock_mode == LOCK_EX)
		return covered; /* a parent's run explains any change; our own does not count */
	if (open_lock_dir(false) != 0)
		return false;
	int fd = openat(dir_fd, LOCK_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct holder h[32];
	int n = others(fd, h, 32);
	close(fd);
	for (int i = 0; i < n; i++)
		if (h[i].exclusive)
			return true;
	return false;
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
