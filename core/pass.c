#include "pass.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

int ft_pass_touch_planted(const struct ft_buffer *b, unsigned char v, int64_t spin_ns, int64_t *ns)
{
	size_t step = chunk_pages(b), stride = b->page_size;
	int64_t t0 = ft_now_ns();
	/* the whole pass's spin after its last chunk: a pause between chunks cheapens the faults after it */
	for (size_t i = 0; i < b->pages && !ft_should_stop(); i += step)
		ft_touch_planted(b->addr + i * stride, min_size(step, b->pages - i), stride, v,
		                 i + step >= b->pages ? spin_ns * (int64_t)b->pages : 0);
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

typedef void walk_kernel(unsigned char *, size_t, ptrdiff_t, unsigned char, unsigned char *);

static walk_kernel *walk_kernel_for(const struct ft_timer *timer)
{
#ifdef FT_HAVE_TSC
	if (timer->kind == FT_TIMER_TSC)
		return ft_touch_timed_walk_tsc;
#endif
	(void)timer;
	return ft_touch_timed_walk;
}

/* The residues a walk has: stride 0 has one, page 0 stored into once per
 * page of the span. */
static size_t residues(size_t stride)
{
	return stride ? stride : 1;
}

/* The stores of residue r: r, r + stride, ... below pages; stride 0: page
 * 0, `pages` times. */
static size_t residue_pages(size_t pages, size_t stride, size_t r)
{
	if (!stride)
		return r == 0 ? pages : 0;
	return r < pages ? (pages - r + stride - 1) / stride : 0;
}

static size_t min3(size_t a, size_t b, size_t c)
{
	return min_size(min_size(a, b), c);
}

/* Piece k of the walk, in time order: its first page, its step in pages
 * (+stride or -stride), its length and its first position j. Pieces are
 * the residues in order, each cut into runs of at most `most` pages;
 * backward, the forward order's pieces reversed, each walked downwards.
 * With a span (w->span pages, below the buffer's), that order over pages
 * 0 to span - 1, again and again until `pages` stores, the last run cut
 * short. Calls f for each; returns how many. */
typedef void piece_fn(void *ctx, size_t first, ptrdiff_t step, size_t count, size_t j);

/* One run of the order over `span` pages, from store j on, at most `left`
 * stores: calls f for each piece, counts them in *n; returns the stores. */
static size_t one_order(const struct ft_walk *w, size_t span, size_t most, size_t j, size_t left, size_t *n,
                        piece_fn *f, void *ctx)
{
	size_t stride = w->stride, made = 0;
	if (!w->backward) {
		for (size_t r = 0; r < residues(stride) && made < left; r++)
			for (size_t done = 0, all = residue_pages(span, stride, r); done < all && made < left; (*n)++) {
				size_t count = min3(all - done, most, left - made);
				if (f)
					f(ctx, r + done * stride, (ptrdiff_t)stride, count, j + made);
				done += count, made += count;
			}
		return made;
	}
	for (size_t r = residues(stride); r-- > 0 && made < left;) {
		size_t all = residue_pages(span, stride, r);
		for (size_t rest = all; rest > 0 && made < left; (*n)++) {
			size_t count = min3(rest, most, left - made);
			if (f)
				f(ctx, r + (rest - 1) * stride, -(ptrdiff_t)stride, count, j + made);
			rest -= count, made += count;
		}
	}
	return made;
}

static size_t pieces(const struct ft_walk *w, size_t pages, size_t most, piece_fn *f, void *ctx)
{
	size_t span = w->span && w->span < pages ? w->span : pages, n = 0;
	for (size_t j = 0, made; j < pages; j += made)
		if (!(made = one_order(w, span, most, j, pages - j, &n, f, ctx)))
			break;
	return n;
}

static void order_piece(void *ctx, size_t first, ptrdiff_t step, size_t count, size_t j)
{
	int64_t *index = ctx;
	for (size_t i = 0; i < count; i++)
		index[j + i] = (int64_t)first + (int64_t)i * step;
}

void ft_walk_order(const struct ft_walk *w, size_t pages, int64_t *index)
{
	pieces(w, pages, pages ? pages : 1, order_piece, index);
}

size_t ft_pass_walk_chunks(const struct ft_buffer *b, const struct ft_walk *w)
{
	return pieces(w, b->pages, chunk_pages(b), NULL, NULL);
}

struct walk_plan {
	size_t n;
	struct { size_t first, count, j; ptrdiff_t step; } *at;
};

static void plan_piece(void *ctx, size_t first, ptrdiff_t step, size_t count, size_t j)
{
	struct walk_plan *plan = ctx;
	plan->at[plan->n].first = first;
	plan->at[plan->n].step = step;
	plan->at[plan->n].count = count;
	plan->at[plan->n].j = j;
	plan->n++;
}

int ft_pass_touch_timed_walk(const struct ft_buffer *b, const struct ft_timer *timer, unsigned char v,
                             const struct ft_walk *w, size_t shift, int64_t *samples, int64_t *starts,
                             int64_t *firsts, size_t *done, int64_t *ns)
{
	walk_kernel *kernel = walk_kernel_for(timer);
	size_t n = ft_pass_walk_chunks(b, w);
	struct walk_plan plan = { 0, calloc(n ? n : 1, sizeof *plan.at) };
	if (!plan.at)
		return ENOMEM;
	pieces(w, b->pages, chunk_pages(b), plan_piece, &plan);
	uintptr_t line = ((uintptr_t)samples + 63) & ~(uintptr_t)63;
	unsigned char *out = (unsigned char *)samples + (line - (uintptr_t)samples) + shift;
	size_t k = 0;
	int64_t t0 = ft_now_ns();
	for (; k < plan.n && !ft_should_stop(); k++) {
		starts[k] = ft_now_ns();
		kernel(b->addr + plan.at[k].first * b->page_size, plan.at[k].count,
		       plan.at[k].step * (ptrdiff_t)b->page_size, v, out + plan.at[k].j * sizeof(int64_t));
	}
	int64_t t1 = ft_now_ns();
	FT_SINK(b->addr);
	FT_SINK(out);
	size_t walked = k < plan.n ? plan.at[k].j : b->pages;
	memmove(samples, out, walked * sizeof(int64_t));
	ft_timer_to_ns(timer, samples, walked);
	for (size_t c = 0; c < k; c++)
		firsts[c] = (int64_t)plan.at[c].j;
	free(plan.at);
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
