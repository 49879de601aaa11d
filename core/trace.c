#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sink.h"

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ft_tracefs_ready(const char *dir, bool may_mount, char *why, size_t size)
{
	char events[512];
	snprintf(events, sizeof events, "%s/events", dir);
	why[0] = '\0';
	errno = 0;
	if (is_dir(events))
		return 0;
	if (errno == EACCES) { /* mounted, as the 0700 root leaves it, and not ours to read */
		snprintf(why, size, "tracefs at %s cannot be read by this user (%s): tracepoints need root",
		         dir, strerror(EACCES));
		return EACCES;
	}
	if (!may_mount) {
		snprintf(why, size, "tracefs is not mounted at %s (no events/ there)", dir);
		return ENOENT;
	}
	if (geteuid() != 0) {
		snprintf(why, size, "tracefs is not mounted at %s, and mounting it needs root "
		         "(mount -t tracefs nodev %s)", dir, dir);
		return ENOENT;
	}
	if (mount("nodev", dir, "tracefs", 0, NULL) != 0 || !is_dir(events)) {
		snprintf(why, size, "tracefs is not mounted at %s and mounting it failed: %s",
		         dir, strerror(errno));
		return ENOENT;
	}
	return 0;
}

/* The CPUs in /sys/devices/system/cpu/online ("0-1,4"), at most max. */
static int online_cpus(int *cpus, int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int n = 0;
	if (f) {
		int a, b;
		char sep;
		while (fscanf(f, "%d", &a) == 1) {
			b = a;
			if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
				if (fscanf(f, "%d", &b) != 1)
					break;
				if (fscanf(f, "%c", &sep) != 1)
					sep = '\n';
			}
			for (int c = a; c <= b && n < max; c++)
				cpus[n++] = c;
			if (sep != ',')
				break;
		}
		fclose(f);
	}
	if (n == 0) {
		long conf = sysconf(_SC_NPROCESSORS_ONLN);
		for (int c = 0; c < conf && n < max; c++)
			cpus[n++] = c;
	}
	return n;
}

static const struct { const char *name; uint64_t config; } software[] = {
	{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
};

/* The attr of an event named "group:event": a tracepoint (its id read
 * from tracefs) or "software:NAME". 0 or an errno with why. */
static int event_attr(const struct ft_trace_opts *o, const char *name,
                      struct perf_event_attr *attr, char *why, size_t size)
{
	memset(attr, 0, sizeof *attr);
	attr->size = sizeof *attr;
	attr->sample_period = 1;
	attr->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	                    PERF_SAMPLE_CPU;
	attr->read_format = PERF_FORMAT_LOST;
	attr->disabled = 1;
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	const char *colon = strchr(name, ':');
	if (!colon || colon == name || !colon[1] || strchr(colon + 1, ':') || strchr(name, '/') ||
	    strstr(name, "..")) {
		snprintf(why, size, "event '%s' is not group:name", name);
		return EINVAL;
	}
	if (strncmp(name, "software:", 9) == 0) {
		for (size_t i = 0; i < sizeof software / sizeof *software; i++) {
			if (strcmp(colon + 1, software[i].name) == 0) {
				attr->type = PERF_TYPE_SOFTWARE;
				attr->config = software[i].config;
				return 0;
			}
		}
		snprintf(why, size, "no software event '%s' (page-faults, minor-faults, major-faults, "
		         "context-switches, cpu-migrations)", colon + 1);
		return ENOENT;
	}
	char path[512];
	snprintf(path, sizeof path, "%s/events/%.*s/%s/id", o->tracefs, (int)(colon - name), name,
	         colon + 1);
	FILE *f = fopen(path, "r");
	if (!f) {
		int err = errno;
		if (err == ENOENT)
			snprintf(why, size, "no tracepoint %s: %s does not exist", name, path);
		else
			snprintf(why, size, "reading %s failed: %s%s", path, strerror(err),
			         err == EACCES ? " (tracefs is readable by root only)" : "");
		return err;
	}
	unsigned long long id;
	int ok = fscanf(f, "%llu", &id);
	fclose(f);
	if (ok != 1) {
		snprintf(why, size, "%s holds no tracepoint id", path);
		return EINVAL;
	}
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = id;
	return 0;
}

static int open_on(struct perf_event_attr *attr, int pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Maps a ring and writes every page of it (MAP_POPULATE maps them, the
 * write makes them ours), so the kernel's stores land on resident pages. */
static int map_ring(struct ft_trace_ring *r, int fd, size_t data_bytes)
{
	size_t ps = page_size();
	r->fd = fd;
	r->map_bytes = data_bytes + ps;
	r->map = mmap(NULL, r->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return errno;
	}
	for (size_t off = ps; off < r->map_bytes; off += ps)
		FT_SINK(((volatile unsigned char *)r->map)[off]);
	struct perf_event_mmap_page *meta = r->map;
	__atomic_store_n(&meta->data_tail, meta->data_tail, __ATOMIC_RELEASE);
	return 0;
}

static int add_fd(struct ft_trace *t, int fd, int event)
{
	uint64_t id = 0;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
		int err = errno;
		close(fd);
		return err;
	}
	t->fds[t->n_fds] = fd;
	t->fd_event[t->n_fds] = event;
	t->fd_id[t->n_fds] = id;
	t->n_fds++;
	return 0;
}

/* The ring of a scope, mapped on its first event: the others can only
 * be sent to a ring that exists. */
static int own_ring(struct ft_trace *t, int owner, char *why, size_t size)
{
	struct ft_trace_ring *r = &t->rings[t->n_rings];
	int err = map_ring(r, owner, t->opts.ring_bytes);
	if (err) {
		snprintf(why, size, "mapping a perf ring of %zu KiB failed: %s%s", t->opts.ring_bytes >> 10,
		         strerror(err), err == EPERM
		         ? " (kernel.perf_event_mlock_kb and RLIMIT_MEMLOCK limit it)" : "");
		return err;
	}
	t->n_rings++;
	return 0;
}

/* One ring: its owner opened on (pid, cpu), then each event of the
 * scope sending its samples there. */
static int open_scope(struct ft_trace *t, bool per_cpu, int cpu, const struct ft_perf_settings *s,
                      char *why, size_t size)
{
	int pid = per_cpu ? -1 : 0;
	struct perf_event_attr attr;
	int owner = -1, err = 0;
	if (!per_cpu) {
		/* the thread's ring belongs to a dummy event, which also carries
		 * the context switches */
		attr = ft_perf_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
		attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		                   PERF_SAMPLE_CPU;
		attr.sample_id_all = 1;
		attr.disabled = 1;
		attr.context_switch = t->opts.switches;
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
		owner = open_on(&attr, pid, cpu);
		bool user_only = false;
		if (owner < 0 && (errno == EACCES || errno == EPERM)) {
			/* perf_event_paranoid 2 grants an unprivileged thread its own
			 * user space only, as the counters find: the switch records
			 * and a fault taken in user code still come */
			user_only = true;
			attr.exclude_kernel = 1;
			attr.exclude_hv = 1;
			owner = open_on(&attr, pid, cpu);
		}
		if (owner < 0) {
			err = errno;
			ft_perf_explain(s, err, "perf_event_open (the thread's ring)", !user_only, why, size);
			return err;
		}
		t->kernel_excluded = user_only;
		if ((err = add_fd(t, owner, -1))) {
			snprintf(why, size, "PERF_EVENT_IOC_ID failed: %s", strerror(err));
			return err;
		}
		if ((err = own_ring(t, owner, why, size)))
			return err;
	}
	for (int e = 0; e < t->opts.n_events; e++) {
		const struct ft_trace_spec *spec = &t->opts.events[e];
		if (spec->per_cpu != per_cpu)
			continue;
		if ((err = event_attr(&t->opts, spec->name, &attr, why, size)))
			return err;
		if (!per_cpu && t->kernel_excluded) {
			if (attr.type == PERF_TYPE_TRACEPOINT) {
				/* a tracepoint fires in the kernel: user space only sees none */
				char value[96];
				snprintf(why, size, "perf_event_open (%s): only this thread's user space "
				         "may be traced (%s/perf_event_paranoid %s), and a tracepoint "
				         "fires in the kernel: it needs the setting at 1 or below "
				         "(or CAP_PERFMON)", spec->name, s->dir,
				         ft_perf_setting_text(s->paranoid, s->paranoid_err, value,
				                              sizeof value));
				return EACCES;
			}
			attr.exclude_kernel = 1;
			attr.exclude_hv = 1;
		}
		int fd = open_on(&attr, pid, cpu);
		if (fd < 0) {
			err = errno;
			char what[FT_TRACE_NAME + 64];
			snprintf(what, sizeof what, "perf_event_open (%s%s)", spec->name,
			         per_cpu ? ", per CPU" : "");
			if (per_cpu && (err == EACCES || err == EPERM) && !s->cap_perfmon &&
			    s->paranoid > 0)
				snprintf(why, size, "%s: %s/perf_event_paranoid is %d: events on every CPU "
				         "need it at 0 or below (or CAP_PERFMON)", what, s->dir, s->paranoid);
			else
				ft_perf_explain(s, err, what, true, why, size);
			return err;
		}
		if ((err = add_fd(t, fd, e))) {
			snprintf(why, size, "PERF_EVENT_IOC_ID failed: %s", strerror(err));
			return err;
		}
		if (owner < 0) {
			owner = fd;
			if ((err = own_ring(t, owner, why, size)))
				return err;
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, owner) != 0) {
			err = errno;
			snprintf(why, size, "PERF_EVENT_IOC_SET_OUTPUT (%s) failed: %s", spec->name,
			         strerror(err));
			return err;
		}
	}
	return 0;
}

int ft_trace_open(struct ft_trace *t, const struct ft_trace_opts *opts,
                  const struct ft_perf_settings *s, char *why, size_t size)
{
	memset(t, 0, sizeof *t);
	t->opts = *opts;
	why[0] = '\0';
	bool any_cpu = false, any_tracepoint = false;
	for (int e = 0; e < opts->n_events; e++) {
		any_cpu |= opts->events[e].per_cpu;
		any_tracepoint |= strncmp(opts->events[e].name, "software:", 9) != 0;
	}
	int ready = any_tracepoint ? ft_tracefs_ready(opts->tracefs, opts->may_mount, why, size) : 0;
	if (ready)
		return ready;
	int err = open_scope(t, false, -1, s, why, size);
	if (!err && any_cpu) {
		int cpus[FT_TRACE_MAX_CPUS];
		int n = online_cpus(cpus, FT_TRACE_MAX_CPUS);
		for (int i = 0; i < n && !err; i++)
			err = open_scope(t, true, cpus[i], s, why, size);
	}
	if (!err) {
		size_t ring_total = (size_t)t->n_rings * opts->ring_bytes;
		t->capacity = ring_total / 40 + 16; /* a sample is 40 bytes, a switch 48 */
		t->events = malloc(t->capacity * sizeof *t->events);
		if (!t->events) {
			err = ENOMEM;
			snprintf(why, size, "allocating room for %zu events failed", t->capacity);
		}
	}
	if (err)
		ft_trace_close(t);
	return err;
}

/* An event's count and lost samples since it was opened. */
static void read_counts(int fd, int64_t *count, int64_t *lost)
{
	uint64_t v[2];
	if (read(fd, v, sizeof v) == (ssize_t)sizeof v) {
		*count = (int64_t)v[0];
		*lost = (int64_t)v[1];
	}
}

void ft_trace_start(struct ft_trace *t)
{
	t->start_ns = 0;
	/* the counts run on from open: a window's are the differences */
	for (int i = 0; i < t->n_fds; i++)
		if (t->fd_event[i] >= 0)
			read_counts(t->fds[i], &t->base_count[i], &t->base_lost[i]);
	for (int i = 0; i < t->n_fds; i++)
		ioctl(t->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	t->enabled = true;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t->start_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The event's index for a sample id, -1 for the switch carrier, -3 for
 * an id we did not open. */
static int kind_of(const struct ft_trace *t, uint64_t id)
{
	for (int i = 0; i < t->n_fds; i++)
		if (t->fd_id[i] == id)
			return t->fd_event[i];
	return -3;
}

static void add_event(struct ft_trace *t, int64_t time, int kind, int cpu, int tid, int preempt)
{
	if (t->n == t->capacity) {
		t->lost++; /* cannot happen: capacity covers the rings */
		return;
	}
	t->events[t->n++] = (struct ft_trace_event){ time, kind, cpu, tid, preempt };
}

/* The words of a record, copied out of the ring (it may wrap). */
static void read_ring(struct ft_trace *t, struct ft_trace_ring *r)
{
	struct perf_event_mmap_page *meta = r->map;
	const unsigned char *data = (const unsigned char *)r->map + page_size();
	uint64_t size = t->opts.ring_bytes;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	uint64_t rec[64];
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		size_t at = (size_t)(tail % size);
		memcpy(&h, data + at, sizeof h); /* a header never wraps: 8-byte records */
		if (h.size < sizeof h)
			break;
		size_t len = h.size < sizeof rec ? h.size : sizeof rec;
		if (at + len <= size) {
			memcpy(rec, data + at, len);
		} else {
			memcpy(rec, data + at, size - at);
			memcpy((unsigned char *)rec + (size - at), data, len - (size - at));
		}
		const uint64_t *w = rec + 1; /* after the header */
		size_t words = (len - sizeof h) / 8;
		if (h.type == PERF_RECORD_SAMPLE && words >= 4) {
			/* id, pid|tid, time, cpu|res */
			int kind = kind_of(t, w[0]);
			if (kind >= 0)
				add_event(t, (int64_t)w[2], kind, (int)(uint32_t)w[3], (int)(w[1] >> 32), 0);
		} else if (h.type == PERF_RECORD_SWITCH && words >= 4) {
			/* sample_id: pid|tid, time, cpu|res, id */
			bool out = h.misc & PERF_RECORD_MISC_SWITCH_OUT;
			add_event(t, (int64_t)w[1], out ? FT_TRACE_SWITCH_OUT : FT_TRACE_SWITCH_IN,
			          (int)(uint32_t)w[2], (int)(w[0] >> 32),
			          out && (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? 1 : 0);
		} else if (h.type == PERF_RECORD_LOST && words >= 2) {
			r->lost_records += (int64_t)w[1];
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int by_time(const void *a, const void *b)
{
	const struct ft_trace_event *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

int ft_trace_stop(struct ft_trace *t)
{
	if (!t->enabled)
		return 0;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t->stop_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	for (int i = 0; i < t->n_fds; i++)
		ioctl(t->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	t->enabled = false;
	memset(t->counts, 0, sizeof t->counts);
	t->lost = 0;
	t->n = 0;
	for (int i = 0; i < t->n_fds; i++) {
		int64_t count = t->base_count[i], lost = t->base_lost[i];
		if (t->fd_event[i] < 0)
			continue;
		read_counts(t->fds[i], &count, &lost);
		t->counts[t->fd_event[i]] += count - t->base_count[i];
		t->lost += lost - t->base_lost[i];
	}
	int64_t lost_records = 0;
	for (int r = 0; r < t->n_rings; r++) {
		t->rings[r].lost_records = 0;
		read_ring(t, &t->rings[r]);
		lost_records += t->rings[r].lost_records;
	}
	/* a LOST record is the same loss counted again, unless the counts
	 * missed it (the switch records have no count of their own) */
	if (lost_records > t->lost)
		t->lost = lost_records;
	qsort(t->events, t->n, sizeof *t->events, by_time);
	return 0;
}

void ft_trace_close(struct ft_trace *t)
{
	if (t->enabled)
		ft_trace_stop(t);
	for (int r = 0; r < t->n_rings; r++)
		if (t->rings[r].map)
			munmap(t->rings[r].map, t->rings[r].map_bytes);
	for (int i = 0; i < t->n_fds; i++)
		close(t->fds[i]);
	free(t->events);
	t->events = NULL;
	t->n = t->capacity = 0;
	t->n_rings = t->n_fds = 0;
}

int ft_trace_plant_dontneed(const struct ft_buffer *b, size_t stride, size_t *pages)
{
	*pages = 0;
	if (b->kind == FT_MALLOC || stride == 0)
		return EINVAL;
	for (size_t i = 0; i < b->pages; i += stride) {
		if (madvise(b->addr + i * b->page_size, b->page_size, MADV_DONTNEED) != 0)
			return errno;
		++*pages;
	}
	return 0;
}
