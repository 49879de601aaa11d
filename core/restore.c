#include "restore.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The log is a global, and a fixed static table, for the same reason as a
 * signal flag: the SIGTERM handler must reach it and may not allocate. An
 * entry is filled, then published by the count after a fence, so the
 * handler sees whole entries only; its path never changes afterwards. */
static struct ft_setting entries[FT_SETTINGS_MAX];
static volatile sig_atomic_t logged;
static volatile pid_t owner;

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
	int fd = open(path, O_WRONLY | O_CLOEXEC);
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

int ft_setting_write(const char *path, const char *value, char *before, size_t len)
{
	if (strlen(path) >= FT_SETTING_PATH || strlen(value) >= FT_SETTING_VALUE)
		return ENAMETOOLONG;
	char now[FT_SETTING_VALUE];
	int err = ft_setting_read(path, now, sizeof now);
	if (err)
		return err;
	struct ft_setting *e = find(path);
	bool fresh = !e;
	if (fresh) {
		if (logged == FT_SETTINGS_MAX)
			return ENOSPC;
		e = &entries[logged];
		copy(e->path, sizeof e->path, path, strlen(path));
		copy(e->before, sizeof e->before, now, strlen(now));
		copy(e->after, sizeof e->after, now, strlen(now));
		e->restored = 0;
		e->err = 0;
		owner = getpid();
		atomic_signal_fence(memory_order_seq_cst);
		logged = logged + 1;
	} else if (e->restored) {
		/* changed again after a restore: today's value is the one to restore */
		copy(e->before, sizeof e->before, now, strlen(now));
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
	return first;
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

void ft_settings_on_signal(int sig)
{
	int saved = errno;
	if (ft_settings_restore() != 0) {
		for (size_t i = 0; i < ft_settings_count(); i++) {
			const struct ft_setting *e = &entries[i];
			if (e->restored)
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
