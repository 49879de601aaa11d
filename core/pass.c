#include "pass.h"

#include <errno.h>

#include "clock.h"
#include "interrupt.h"
#include "kernels.h"
#include "sink.h"

enum { CHUNK_BYTES = 64 << 20 };

static size_t chunk_pages(const struct ft_buffer *b)
{
	return CHUNK_BYTES / b->page_size;
}

size_t ft_pass_chunk_pages(const struct ft_buffer *b)
{
	return chunk_pages(b);
}

size_t ft_pass_chunks(const struct ft_buffer *b)
{
	return (b->pages + chunk_pages(b) - 1) / chunk_pages(b);
}

typedef void timed_kernel(unsigned char *, size_t, size_t, unsigned char, int64_t *);

static timed_kernel *kernel_for(const struct ft_timer *timer)
{
#ifdef FT_HAVE_TSC
	if (timer->kind == FT_TIMER_TSC)
		return ft_touch_timed_tsc;
#endif
	(void)timer;
	return ft_touch_timed;
}

static size_t words(const struct ft_buffer *b)
{
	return b->bytes / sizeof(uint64_t);
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

int ft_pass_touch(const struct ft_buffer *b, unsigned char v, int64_t *ns)
{
	size_t step = chunk_pages(b), stride = b->page_size;
	int64_t t0 = ft_now_ns();
	for (size_t i = 0; i < b->pages && !ft_should_stop(); i += step)
		ft_touch(b->addr + i * stride, min_size(step, b->pages - i), stride, v);
	int64_t t1 = ft_now_ns();
	FT_SINK(b->addr);
	*ns = t1 - t0;
	return ft_should_stop() ? EINTR : 0;
}

int ft_pass_fill(const struct ft_buffer *b, uint64_t k, int64_t *ns)
{
	size_t step = CHUNK_BYTES / sizeof(uint64_t), n = words(b);
	uint64_t *p = (uint64_t *)b->addr;
	int64_t t0 = ft_now_ns();
	for (size_t i = 0; i < n && !ft_should_stop(); i += step)
		ft_fill(p, i, min_size(step, n - i), k);
	int64_t t1 = ft_now_ns();
	FT_SINK(p);
	*ns = t1 - t0;
	return ft_should_stop() ? EINTR : 0;
}

int ft_pass_touch_timed(const struct ft_buffer *b, const struct ft_timer *timer,
                        unsigned char v, int64_t *samples, int64_t *ns)
{
	timed_kernel *kernel = kernel_for(timer);
	size_t step = chunk_pages(b), stride = b->page_size, i = 0;
	int64_t t0 = ft_now_ns();
	for (; i < b->pages && !ft_should_stop(); i += step)
		kernel(b->addr + i * stride, min_size(step, b->pages - i), stride, v, samples + i);
	int64_t t1 = ft_now_ns();
	FT_SINK(b->addr);
	FT_SINK(samples);
	ft_timer_to_ns(timer, samples, min_size(i, b->pages));
	*ns = t1 - t0;
	return ft_should_stop() ? EINTR : 0;
}

int ft_pass_touch_timed_at(const struct ft_buffer *b, const struct ft_timer *timer, unsigned char v,
                           int64_t *samples, int64_t *starts, size_t *done, int64_t *ns)
{
	timed_kernel *kernel = kernel_for(timer);
	size_t step = chunk_pages(b), stride = b->page_size, i = 0, k = 0;
	int64_t t0 = ft_now_ns();
	for (; i < b->pages && !ft_should_stop(); i += step, k++) {
		starts[k] = ft_now_ns();
		kernel(b->addr + i * stride, min_size(step, b->pages - i), stride, v, samples + i);
	}
	int64_t t1 = ft_now_ns();
	FT_SINK(b->addr);
	FT_SINK(samples);
	ft_timer_to_ns(timer, samples, min_size(i, b->pages));
	*done = k;
	*ns = t1 - t0;
	return ft_should_stop() ? EINTR : 0;
}

int ft_pass_read_touch(const struct ft_buffer *b, uint64_t *sum, int64_t *ns)
{
	size_t step = chunk_pages(b), stride = b->page_size;
	uint64_t total = 0;
	int64_t t0 = ft_now_ns();
	for (size_t i = 0; i < b->pages && !ft_should_stop(); i += step)
		total += ft_sum_bytes(b->addr + i * stride, min_size(step, b->pages - i), stride);
	int64_t t1 = ft_now_ns();
	FT_SINK(total);
	*sum = total;
	*ns = t1 - t0;
	return ft_should_stop() ? EINTR : 0;
}

int ft_pass_sum_bytes(const struct ft_buffer *b, uint64_t *sum)
{
	int64_t ns;
	return ft_pass_read_touch(b, sum, &ns);
}

int ft_pass_sum_words(const struct ft_buffer *b, uint64_t *sum)
{
	size_t step = CHUNK_BYTES / sizeof(uint64_t), n = words(b);
	const uint64_t *p = (const uint64_t *)b->addr;
	uint64_t total = 0;
	for (size_t i = 0; i < n && !ft_should_stop(); i += step)
		total += ft_sum_words(p + i, min_size(step, n - i));
	FT_SINK(total);
	*sum = total;
	return ft_should_stop() ? EINTR : 0;
}
