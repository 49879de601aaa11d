#include "profile.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "sink.h"

enum {
	LEAF_SLOTS = 1 << 13,
	CHAIN_SLOTS = 1 << 12,
	SCRATCH_BYTES = 1 << 13,
	MIN_RING_PAGES = 16,
	STACK_TOUCH_BYTES = 32 << 10,
};

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t kernel_frame(const struct ft_profile *p, uint64_t ip)
{
	const struct ft_ksym *s = p->ksyms ? ft_ksyms_find(p->ksyms, ip) : NULL;
	return s ? s->addr : ip;
}

/* The tables are filled only by the reader and never grow: a full one
 * counts the sample as dropped. */
static void count_leaf(struct ft_profile *p, uint64_t frame, bool kernel)
{
	size_t mask = p->leaf_slots - 1;
	for (size_t i = mix(frame, kernel) & mask, n = 0; n < p->leaf_slots / 2; i = (i + 1) & mask, n++) {
		struct ft_leaf *l = &p->leaves[i];
		if (l->count == 0) {
			*l = (struct ft_leaf){ frame, 1, kernel };
			return;
		}
		if (l->frame == frame && l->kernel == kernel) {
			l->count++;
			return;
		}
	}
	p->dropped++;
}

static void count_chain(struct ft_profile *p, const uint64_t *frames, int depth,
                        uint64_t kernel_mask, bool truncated)
{
	uint64_t h = mix(kernel_mask, (uint64_t)depth << 1 | truncated);
	for (int i = 0; i < depth; i++)
		h = mix(h, frames[i]);
	size_t mask = p->chain_slots - 1;
	for (size_t i = h & mask, n = 0; n < p->chain_slots / 2; i = (i + 1) & mask, n++) {
		struct ft_chain *c = ft_profile_chain(p, i);
		if (c->count == 0) {
			c->count = 1;
			c->kernel_mask = kernel_mask;
			c->depth = depth;
			c->truncated = truncated;
			memcpy(c->frames, frames, (size_t)depth * sizeof *frames);
			return;
		}
		if (c->depth == depth && c->kernel_mask == kernel_mask && c->truncated == truncated &&
		    memcmp(c->frames, frames, (size_t)depth * sizeof *frames) == 0) {
			c->count++;
			return;
		}
	}
	p->dropped++;
}

/* PERF_RECORD_SAMPLE with PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD
 * [| PERF_SAMPLE_CALLCHAIN]: ip, period, nr, ips[nr]. */
static void take_sample(struct ft_profile *p, const struct perf_event_header *h)
{
	const uint64_t *v = (const uint64_t *)(h + 1);
	size_t words = (h->size - sizeof *h) / sizeof *v;
	if (words < 2)
		return;
	bool kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	p->samples++;
	if (kernel)
		p->kernel_samples++;
	else
		p->user_samples++;
	p->period_ns += (int64_t)v[1];
	count_leaf(p, kernel ? kernel_frame(p, v[0]) : v[0], kernel);
	if (p->opts.depth == 0 || words < 3)
		return;
	uint64_t nr = v[2];
	if (nr > words - 3)
		nr = words - 3;
	uint64_t frames[FT_PROFILE_MAX_DEPTH], kernel_mask = 0;
	int kept = 0, depth = p->opts.depth;
	bool truncated = false, user_taken = false;
	enum { NONE, KERNEL, USER } mode = NONE;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t e = v[3 + i];
		if (e >= (uint64_t)PERF_CONTEXT_MAX) {
			mode = e == (uint64_t)PERF_CONTEXT_KERNEL ? KERNEL
			       : e == (uint64_t)PERF_CONTEXT_USER ? USER : NONE;
			continue;
		}
		if (mode == KERNEL) {
			if (kept < depth) {
				kernel_mask |= 1ull << kept;
				frames[kept++] = kernel_frame(p, e);
			} else {
				truncated = true;
			}
		} else if (mode == USER && !user_taken) {
			user_taken = true; /* the interrupted user instruction only */
			if (!truncated && kept < depth)
				frames[kept++] = e;
			else
				truncated = true;
		}
	}
	if (kept > p->max_chain)
		p->max_chain = kept;
	if (kept > 0)
		count_chain(p, frames, kept, kernel_mask, truncated);
}

/* Reads every record between the tail and the head, then hands the space
 * back to the kernel. */
static void drain(struct ft_profile *p)
{
	struct perf_event_mmap_page *meta = p->ring;
	unsigned char *data = (unsigned char *)p->ring + page_size();
	uint64_t size = p->opts.ring_bytes;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		size_t at = (size_t)(tail % size);
		const struct perf_event_header *h = (const void *)(data + at);
		size_t len = h->size;
		if (len < sizeof *h)
			break; /* cannot happen; never loop on it */
		if (at + len > size) {
			/* the record wraps: reassemble it (a header never wraps:
			 * records are 8-byte multiples in an 8-byte aligned ring) */
			if (len > SCRATCH_BYTES) {
				p->dropped++;
				tail += len;
				continue;
			}
			memcpy(p->scratch, data + at, size - at);
			memcpy(p->scratch + (size - at), data, len - (size - at));
			h = (const void *)p->scratch;
		}
		if (h->type == PERF_RECORD_SAMPLE) {
			take_sample(p, h);
		} else if (h->type == PERF_RECORD_LOST && len >= sizeof *h + 16) {
			p->lost += (int64_t)((const uint64_t *)(h + 1))[1];
		} else if (h->type == PERF_RECORD_LOST_SAMPLES && len >= sizeof *h + 8) {
			p->lost += (int64_t)((const uint64_t *)(h + 1))[0];
		} else if (h->type == PERF_RECORD_THROTTLE) {
			p->throttled++;
		}
		tail += len;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

/* Writes the stack pages the reader will use, before the window opens:
 * a first use of one during the window would be a page fault of the
 * process, counted with the pass's. */
static void __attribute__((noinline)) touch_stack(void)
{
	volatile unsigned char pages[STACK_TOUCH_BYTES];
	for (size_t i = 0; i < sizeof pages; i += 1024)
		pages[i] = 0;
}

static void post(int fd)
{
	uint64_t one = 1;
	while (write(fd, &one, sizeof one) < 0 && errno == EINTR)
		;
}

static void wait_for(int fd)
{
	uint64_t n;
	while (read(fd, &n, sizeof n) < 0 && errno == EINTR)
		;
}

/* Woken when the ring is half full, or told to stop. */
static void *reader(void *arg)
{
	struct ft_profile *p = arg;
	touch_stack();
	post(p->ready_fd);
	struct pollfd fds[2] = { { p->fd, POLLIN, 0 }, { p->stop_fd, POLLIN, 0 } };
	for (;;) {
		int n = poll(fds, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		drain(p);
		if (n < 0 || (fds[1].revents & POLLIN) || (fds[0].revents & (POLLHUP | POLLERR)))
			break;
	}
	drain(p);
	return NULL;
}

static int open_event(struct ft_profile *p)
{
	struct perf_event_attr attr = ft_perf_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.freq = 1;
	attr.sample_freq = (uint64_t)p->opts.freq;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD |
	                   (p->opts.depth ? PERF_SAMPLE_CALLCHAIN : 0);
	attr.disabled = 1;
	attr.exclude_kernel = !p->opts.kernel;
	attr.exclude_hv = 1;
	attr.exclude_callchain_kernel = !p->opts.kernel;
	/* the kernel frames we keep and one user frame: the user stack walk
	 * stops there, which keeps records small */
	attr.sample_max_stack = (uint16_t)(p->opts.depth + 1);
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(p->opts.ring_bytes / 2);
	p->fd = ft_perf_open(&attr, -1);
	return p->fd < 0 ? errno : 0;
}

static int map_ring(struct ft_profile *p)
{
	size_t ps = page_size();
	size_t pages = p->opts.ring_bytes / ps;
	for (;; pages /= 2) {
		size_t bytes = (pages + 1) * ps;
		void *ring = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, p->fd, 0);
		if (ring != MAP_FAILED) {
			p->ring = ring;
			p->ring_map_bytes = bytes;
			p->opts.ring_bytes = pages * ps;
			/* map every page now (the reader would fault them in
			 * during the window): read each, write the tail */
			for (size_t i = 1; i <= pages; i++)
				FT_SINK(((volatile unsigned char *)ring)[i * ps]);
			struct perf_event_mmap_page *meta = ring;
			__atomic_store_n(&meta->data_tail, meta->data_tail, __ATOMIC_RELEASE);
			return 0;
		}
		if ((errno != EPERM && errno != ENOMEM) || pages <= MIN_RING_PAGES)
			return errno;
	}
}

static int map_tables(struct ft_profile *p)
{
	p->leaf_slots = LEAF_SLOTS;
	p->chain_slots = p->opts.depth ? CHAIN_SLOTS : 0;
	p->chain_stride = (sizeof(struct ft_chain) + (size_t)p->opts.depth * sizeof(uint64_t) + 7) & ~(size_t)7;
	size_t leaves = p->leaf_slots * sizeof *p->leaves;
	size_t chains = p->chain_slots * p->chain_stride;
	p->tables_bytes = leaves + chains + SCRATCH_BYTES;
	/* populated now, so the reader takes no fault inside the window */
	p->tables = mmap(NULL, p->tables_bytes, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p->tables == MAP_FAILED) {
		p->tables = NULL;
		return errno;
	}
	p->leaves = p->tables;
	p->chains = (unsigned char *)p->tables + leaves;
	p->scratch = p->chains + chains;
	return 0;
}

static int start_reader(struct ft_profile *p)
{
	/* SIGINT belongs to the Lua thread: the reader blocks everything */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&p->reader, NULL, reader, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	p->reader_started = err == 0;
	if (!err)
		wait_for(p->ready_fd);
	return err;
}

int ft_profile_open(struct ft_profile *p, const struct ft_profile_opts *opts,
                    const struct ft_ksyms *ksyms, const struct ft_perf_settings *s,
                    char *why, size_t size)
{
	memset(p, 0, sizeof *p);
	p->opts = *opts;
	p->ksyms = ksyms;
	p->fd = p->stop_fd = p->ready_fd = -1;
	why[0] = '\0';
	int err = open_event(p);
	if (err) {
		ft_perf_explain(s, err, "perf_event_open (cpu-clock sampling)", opts->kernel, why, size);
		return err;
	}
	if ((err = map_ring(p))) {
		snprintf(why, size, "mapping the perf ring buffer (%zu KiB) failed: %s%s",
		         opts->ring_bytes >> 10, strerror(err), err == EPERM
		         ? " (kernel.perf_event_mlock_kb and RLIMIT_MEMLOCK limit it)" : "");
	} else if ((err = map_tables(p))) {
		snprintf(why, size, "mapping the profile's tables failed: %s", strerror(err));
	} else if ((p->stop_fd = eventfd(0, EFD_CLOEXEC)) < 0 ||
	           (p->ready_fd = eventfd(0, EFD_CLOEXEC)) < 0) {
		err = errno;
		snprintf(why, size, "eventfd failed: %s", strerror(err));
	} else if ((err = start_reader(p))) {
		snprintf(why, size, "starting the ring buffer's reader thread failed: %s", strerror(err));
	}
	if (err)
		ft_profile_close(p);
	return err;
}

void ft_profile_start(struct ft_profile *p)
{
	p->enabled = true;
	p->wall_ns = ft_now_ns();
	ioctl(p->fd, PERF_EVENT_IOC_ENABLE, 0);
}

void ft_profile_stop(struct ft_profile *p)
{
	if (p->enabled) {
		ioctl(p->fd, PERF_EVENT_IOC_DISABLE, 0);
		p->wall_ns = ft_now_ns() - p->wall_ns;
		p->enabled = false;
		uint64_t count;
		if (read(p->fd, &count, sizeof count) == (ssize_t)sizeof count)
			p->cpu_ns = (int64_t)count;
	}
	if (p->reader_started) {
		post(p->stop_fd);
		pthread_join(p->reader, NULL);
		p->reader_started = false;
	}
}

void ft_profile_close(struct ft_profile *p)
{
	if (p->fd >= 0)
		ft_profile_stop(p);
	if (p->ring)
		munmap(p->ring, p->ring_map_bytes);
	if (p->tables)
		munmap(p->tables, p->tables_bytes);
	if (p->fd >= 0)
		close(p->fd);
	if (p->stop_fd >= 0)
		close(p->stop_fd);
	if (p->ready_fd >= 0)
		close(p->ready_fd);
	p->ring = p->tables = NULL;
	p->leaves = NULL;
	p->chains = p->scratch = NULL;
	p->fd = p->stop_fd = p->ready_fd = -1;
}

const char *ft_profile_frame_name(const struct ft_profile *p, uint64_t frame, bool kernel,
                                  char *buf, size_t size)
{
	if (kernel) {
		const struct ft_ksym *s = p->ksyms ? ft_ksyms_find(p->ksyms, frame) : NULL;
		snprintf(buf, size, "%s", s ? ft_ksym_name(p->ksyms, s) : "[kernel]");
		return buf;
	}
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!dladdr1((void *)(uintptr_t)frame, &info, (void **)&sym, RTLD_DL_SYMENT)) {
		snprintf(buf, size, "[user]");
	} else if (info.dli_sname && sym && frame - (uintptr_t)info.dli_saddr < sym->st_size) {
		snprintf(buf, size, "%s", info.dli_sname);
	} else {
		/* inside an object but in none of its exported symbols */
		const char *file = info.dli_fname && *info.dli_fname ? info.dli_fname
		                   : program_invocation_name;
		const char *slash = strrchr(file, '/');
		snprintf(buf, size, "[%s]", slash ? slash + 1 : file);
	}
	return buf;
}
