#include "tasks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "interrupt.h"

extern char **environ;

static size_t control_bytes(int count)
{
	return sizeof(struct ft_task_control) + (size_t)count * sizeof(struct ft_task_slot);
}

int ft_task_shared_create(struct ft_task_shared *s, int count)
{
	size_t bytes = control_bytes(count);
	s->ctl = NULL;
	int err = ft_memfd_create(&s->file, "ftrun-tasks", bytes);
	if (err)
		return err;
	/* populated: a task's first look at its flags or its counter inside
	 * the measured window must not be a fault */
	if ((err = ft_buffer_map_fd(&s->map, bytes, s->file.fd, 0, true, FT_THP_DEFAULT, true))) {
		ft_memfd_close(&s->file);
		return err;
	}
	/* a new memfd reads as zeros: every counter and flag starts at 0 */
	s->ctl = (struct ft_task_control *)s->map.addr;
	s->ctl->count = count;
	return 0;
}

int ft_task_shared_attach(struct ft_task_shared *s, int fd, int count)
{
	struct stat st;
	size_t bytes = control_bytes(count);
	s->ctl = NULL;
	s->file.fd = fd;
	s->file.bytes = bytes;
	int err = 0;
	if (fstat(fd, &st) != 0)
		err = errno;
	else if ((size_t)st.st_size != bytes)
		err = EINVAL; /* not the block this job describes */
	else
		err = ft_buffer_map_fd(&s->map, bytes, fd, 0, true, FT_THP_DEFAULT, true);
	ft_memfd_close(&s->file); /* the mapping keeps the file */
	if (!err)
		s->ctl = (struct ft_task_control *)s->map.addr;
	return err;
}

void ft_task_shared_release(struct ft_task_shared *s)
{
	if (s->ctl)
		ft_buffer_release(&s->map, NULL);
	s->ctl = NULL;
	if (s->file.fd >= 0)
		ft_memfd_close(&s->file);
}

/* --- threads ---------------------------------------------------------- */

int ft_threads_start(struct ft_threads *t, int count, void *(*fn)(void *), void *const *args)
{
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	t->count = count;
	t->started = t->ready = t->failed = t->released = 0;
	t->ids = calloc((size_t)count, sizeof *t->ids);
	if (!t->ids)
		return ENOMEM;
	/* Every signal blocked in the tasks: SIGINT runs the main thread's
	 * handler, never one on a task's stack. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = 0;
	for (; t->started < count; t->started++)
		if ((err = pthread_create(&t->ids[t->started], NULL, fn, args[t->started])))
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_mutex_lock(&t->lock);
		t->released = -1;
		pthread_cond_broadcast(&t->cond);
		pthread_mutex_unlock(&t->lock);
		ft_threads_join(t);
	}
	return err;
}

bool ft_threads_ready(struct ft_threads *t, bool ok)
{
	pthread_mutex_lock(&t->lock);
	t->ready++;
	t->failed += !ok;
	pthread_cond_broadcast(&t->cond);
	while (!t->released)
		pthread_cond_wait(&t->cond, &t->lock);
	bool go = t->released > 0;
	pthread_mutex_unlock(&t->lock);
	return go;
}

bool ft_threads_release(struct ft_threads *t, int64_t *release_ns)
{
	pthread_mutex_lock(&t->lock);
	while (t->ready < t->started)
		pthread_cond_wait(&t->cond, &t->lock);
	bool go = t->failed == 0;
	t->released = go ? 1 : -1;
	*release_ns = ft_now_ns();
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	return go;
}

void ft_threads_join(struct ft_threads *t)
{
	for (int i = 0; i < t->started; i++)
		pthread_join(t->ids[i], NULL);
	t->started = 0;
	free(t->ids);
	t->ids = NULL;
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
}

/* --- processes -------------------------------------------------------- */

int ft_child_spawn(struct ft_child *c, const char *exe, char **argv, int job_arg,
                   const int *keep, int nkeep)
{
	int job[2], result[2];
	c->pid = 0;
	c->job_fd = c->result_fd = -1;
	c->out = NULL;
	c->len = c->cap = 0;
	c->status = 0;
	if (pipe2(job, O_CLOEXEC) != 0)
		return errno;
	if (pipe2(result, O_CLOEXEC) != 0) {
		int err = errno;
		close(job[0]), close(job[1]);
		return err;
	}
	/* The child keeps every inherited descriptor under its own number
	 * (dup2 onto itself clears close-on-exec), so no two can collide. */
	char job_s[16], result_s[16];
	snprintf(job_s, sizeof job_s, "%d", job[0]);
	snprintf(result_s, sizeof result_s, "%d", result[1]);
	argv[job_arg] = job_s;
	argv[job_arg + 1] = result_s;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_adddup2(&fa, job[0], job[0]);
	posix_spawn_file_actions_adddup2(&fa, result[1], result[1]);
	for (int i = 0; i < nkeep; i++)
		posix_spawn_file_actions_adddup2(&fa, keep[i], keep[i]);
	sigset_t none, dflt;
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGPIPE);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dflt);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int err = posix_spawn(&c->pid, exe, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	argv[job_arg] = argv[job_arg + 1] = NULL;
	close(job[0]);
	close(result[1]);
	if (err) {
		close(job[1]);
		close(result[0]);
		c->pid = 0;
		return err;
	}
	c->job_fd = job[1];
	c->result_fd = result[0];
	return 0;
}

int ft_write_all(int fd, const void *p, size_t n)
{
	const char *s = p;
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A read interrupted by SIGINT gives up: the task is to stop. */
static int read_all(int fd, void *p, size_t n)
{
	char *s = p;
	while (n > 0) {
		ssize_t r = read(fd, s, n);
		if (r < 0 && errno == EINTR && !ft_interrupted)
			continue;
		if (r <= 0)
			return r == 0 ? EPIPE : errno;
		s += r;
		n -= (size_t)r;
	}
	return 0;
}

int ft_child_send(struct ft_child *c, const void *p, size_t n)
{
	if (c->job_fd < 0)
		return EPIPE;
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	int err = ft_write_all(c->job_fd, p, n);
	if (err == EPIPE) { /* the SIGPIPE it raised is pending: take it */
		struct timespec zero = {0, 0};
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

static int take(struct ft_child *c)
{
	if (c->cap - c->len < 4096) {
		size_t cap = c->cap ? 2 * c->cap : 16384;
		char *p = realloc(c->out, cap);
		if (!p)
			return ENOMEM;
		c->out = p;
		c->cap = cap;
	}
	ssize_t r = read(c->result_fd, c->out + c->len, c->cap - c->len);
	if (r < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : errno;
	if (r == 0) {
		close(c->result_fd);
		c->result_fd = -1;
	}
	c->len += (size_t)r;
	return 0;
}

int ft_children_read(struct ft_child *c, int n, size_t want, const atomic_int *abort,
                     int64_t grace_ns)
{
	struct pollfd fds[n];
	int who[n];
	bool signalled = false;
	int64_t stop_at = 0;
	for (;;) {
		int k = 0;
		for (int i = 0; i < n; i++)
			if (c[i].result_fd >= 0 && c[i].len < want) {
				fds[k] = (struct pollfd){ c[i].result_fd, POLLIN, 0 };
				who[k++] = i;
			}
		if (k == 0)
			return 0;
		if (ft_interrupted && !signalled) {
			signalled = true;
			for (int i = 0; i < n; i++)
				if (c[i].pid > 0 && c[i].result_fd >= 0)
					kill(c[i].pid, SIGINT);
		}
		if (!stop_at && (ft_interrupted || (abort && atomic_load(abort))))
			stop_at = ft_now_ns() + grace_ns;
		if (stop_at && ft_now_ns() > stop_at) {
			for (int i = 0; i < n; i++)
				if (c[i].pid > 0 && c[i].result_fd >= 0)
					kill(c[i].pid, SIGKILL);
			stop_at = INT64_MAX; /* once */
		}
		int r = poll(fds, (nfds_t)k, 50);
		if (r < 0 && errno != EINTR)
			return errno;
		for (int j = 0; r > 0 && j < k; j++)
			if (fds[j].revents) {
				int err = take(&c[who[j]]);
				if (err)
					return err;
			}
	}
}

int ft_child_send_job(struct ft_child *c, const void *p, size_t n)
{
	uint64_t len = n;
	int err = ft_child_send(c, &len, sizeof len);
	return err ? err : ft_child_send(c, p, n);
}

bool ft_children_release(struct ft_child *c, int n, const atomic_int *abort, int64_t grace_ns,
                         int64_t *release_ns)
{
	ft_children_read(c, n, 1, abort, grace_ns);
	bool go = !ft_interrupted;
	for (int i = 0; i < n; i++)
		go = go && c[i].len >= 1 && c[i].out[0] == 'R';
	*release_ns = ft_now_ns();
	for (int i = 0; i < n; i++)
		ft_child_send(&c[i], go ? "G" : "A", 1);
	return go;
}

int ft_child_read_job(int job_fd, char **job, size_t *len)
{
	uint64_t n = 0;
	int err = read_all(job_fd, &n, sizeof n);
	if (!err && (n > (1ull << 32) || !(*job = malloc(n ? n : 1))))
		err = ENOMEM;
	if (!err && (err = read_all(job_fd, *job, n)) != 0) {
		free(*job);
		*job = NULL;
	}
	*len = err ? 0 : (size_t)n;
	return err;
}

bool ft_child_ready(int job_fd, int result_fd, bool ok)
{
	char c = ok ? 'R' : 'E';
	if (ft_write_all(result_fd, &c, 1) != 0 || !ok)
		return false;
	return read_all(job_fd, &c, 1) == 0 && c == 'G';
}

void ft_child_die_with_parent(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

void ft_children_reap(struct ft_child *c, int n)
{
	for (int i = 0; i < n; i++) {
		if (c[i].job_fd >= 0)
			close(c[i].job_fd);
		if (c[i].result_fd >= 0)
			close(c[i].result_fd);
		c[i].job_fd = c[i].result_fd = -1;
		while (c[i].pid > 0 && waitpid(c[i].pid, &c[i].status, 0) < 0 && errno == EINTR)
			;
		c[i].pid = 0;
	}
}

void ft_children_free(struct ft_child *c, int n)
{
	for (int i = 0; i < n; i++) {
		free(c[i].out);
		c[i].out = NULL;
		c[i].len = c[i].cap = 0;
	}
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

size_t ft_populate_code(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	size_t total = 0;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		uintptr_t lo, hi;
		char perms[8];
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &lo, &hi, perms) != 3 || perms[2] != 'x')
			continue;
		/* [vdso] and [vsyscall] refuse; an old kernel lacks the advice */
		if (madvise((void *)lo, hi - lo, MADV_POPULATE_READ) == 0)
			total += hi - lo;
	}
	fclose(f);
	return total;
}

/* --- CPUs ------------------------------------------------------------- */

int ft_allowed_cpus(int *cpus, int max)
{
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
		return -errno;
	int n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[n++] = c;
	return n;
}

int ft_pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* pid 0: the calling thread alone (Linux affinity is per thread) */
	return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
}
