#include "parallel.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include "clock.h"
#include "interrupt.h"
#include "kernels.h"
#include "sink.h"

enum { CHUNK_BYTES = 64 << 20 };

/* Threads wait for go (or abort, when not every thread could be made). */
struct shared {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int go, abort;
	enum ft_kernel kernel;
	uint64_t arg;
};

struct worker {
	struct shared *shared;
	struct ft_thread_job *job;
	int64_t end_ns;
};

static int64_t thread_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return (int64_t)ru.ru_minflt + ru.ru_majflt;
}

static void *work(void *p)
{
	struct worker *w = p;
	struct ft_thread_job *job = w->job;
	struct ft_buffer *b = &job->slice;
	if (job->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(job->cpu, &set);
		job->err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	}
	struct shared *sh = w->shared;
	pthread_mutex_lock(&sh->lock);
	while (!sh->go && !sh->abort)
		pthread_cond_wait(&sh->cond, &sh->lock);
	int abort = sh->abort;
	pthread_mutex_unlock(&sh->lock);
	if (abort)
		return NULL;
	int64_t f0 = thread_faults();
	int64_t t0 = ft_now_ns();
	/* In 64 MiB chunks, polling the SIGINT flag between them, so every
	 * thread stops within one chunk of an interrupt. */
	const size_t chunk = CHUNK_BYTES;
	if (w->shared->kernel == FT_KERNEL_FILL) {
		size_t n = b->bytes / sizeof(uint64_t), step = chunk / sizeof(uint64_t);
		uint64_t *base = (uint64_t *)b->addr - job->first_word;
		for (size_t i = 0; i < n && !(job->interrupted = ft_interrupted); i += step)
			/* p[i] = i*k with i counted from the start of the whole buffer */
			ft_fill(base, job->first_word + i, n - i < step ? n - i : step, w->shared->arg);
	} else {
		size_t step = chunk / b->page_size;
		for (size_t i = 0; i < b->pages && !(job->interrupted = ft_interrupted); i += step) {
			size_t pages = b->pages - i < step ? b->pages - i : step;
			unsigned char *p = b->addr + i * b->page_size;
			if (w->shared->kernel == FT_KERNEL_TOUCH)
				ft_touch(p, pages, b->page_size, (unsigned char)w->shared->arg);
			else
				FT_SINK(ft_sum_bytes(p, pages, b->page_size));
		}
	}
	job->interrupted = job->interrupted || ft_interrupted;
	int64_t t1 = ft_now_ns();
	FT_SINK(b->addr);
	job->faults = thread_faults() - f0;
	job->ns = t1 - t0;
	w->end_ns = t1;
	return NULL;
}

int ft_parallel_run(struct ft_thread_job *jobs, int n, enum ft_kernel kernel,
                    uint64_t arg, int64_t *wall_ns)
{
	struct shared shared = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
	                         0, 0, kernel, arg };
	struct worker workers[n];
	pthread_t threads[n];
	int started = 0, err = 0;
	for (; started < n; started++) {
		workers[started] = (struct worker){ &shared, &jobs[started], 0 };
		if ((err = pthread_create(&threads[started], NULL, work, &workers[started])))
			break;
	}
	int64_t t0 = ft_now_ns(), last = t0;
	pthread_mutex_lock(&shared.lock);
	shared.go = !err;
	shared.abort = err != 0;
	pthread_cond_broadcast(&shared.cond);
	pthread_mutex_unlock(&shared.lock);
	for (int i = 0; i < started; i++) {
		pthread_join(threads[i], NULL);
		if (workers[i].end_ns > last)
			last = workers[i].end_ns;
	}
	*wall_ns = last - t0;
	return err;
}
