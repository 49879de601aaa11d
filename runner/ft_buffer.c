/* Buffers as userdata, after liolib's files: the userdata exists (released)
 * before the memory is acquired, so an error in between leaks nothing;
 * __gc and __close are one function; every method checks it is still open.
 * A view is the same object without the right to release: what a task
 * receives for a buffer of the main state (ft_tasks.c). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <lauxlib.h>

#include "../core/pass.h"
#include "../core/sink.h"
#include "ft_lendable.h"
#include "ft_openers.h"
#include "ft_samples.h"
#include "ft_timer.h"

#define BUFFER_META FT_BUFFER_META

static const char *kind_name(const struct ft_buffer *b)
{
	return b->kind == FT_MALLOC ? "malloc" : "mmap";
}

static const char *backing_name(const struct ft_buffer *b)
{
	return b->kind == FT_MALLOC ? "malloc" : b->file ? "memfd" : "anonymous";
}

bool ft_buffer_is_open(const struct ft_lbuffer *lb)
{
	return lb->b.addr && ((const struct ft_lbuffer *)lb->h.root)->b.addr;
}

static struct ft_lbuffer *check_lbuffer(lua_State *L, int arg)
{
	struct ft_lbuffer *lb = luaL_checkudata(L, arg, BUFFER_META);
	if (!ft_buffer_is_open(lb))
		luaL_error(L, "buffer is %s", lb->b.kind == FT_MALLOC ? "freed" : "unmapped");
	return lb;
}

struct ft_buffer *ft_check_buffer(lua_State *L, int arg)
{
	return &check_lbuffer(L, arg)->b;
}

static struct ft_buffer *check_buffer(lua_State *L)
{
	return ft_check_buffer(L, 1);
}

static size_t check_bytes(lua_State *L, int arg)
{
	return (size_t)ft_check_positive(L, arg, "size must be a positive number of bytes");
}

/* User value 1: the memfd a file mapping was made from, so a task
 * process can be handed the same file. */
struct ft_lbuffer *ft_push_buffer(lua_State *L)
{
	struct ft_lbuffer *lb = lua_newuserdatauv(L, sizeof *lb, 1);
	memset(lb, 0, sizeof *lb);
	lb->h.root = &lb->h;
	lb->h.owns = true;
	luaL_setmetatable(L, BUFFER_META);
	return lb;
}

static const char *const thp_names[] = { "default", "never", "always", NULL };
static const char *const hugetlb_names[] = { "2M", "1G", NULL };
static const size_t hugetlb_sizes[] = { (size_t)2 << 20, (size_t)1 << 30 };

struct map_options {
	enum ft_thp thp;
	bool populate, shared;
	int memfd;   /* stack index of the memfd, 0: anonymous */
	int hugetlb; /* index into hugetlb_names, -1 for none */
};

static void check_map_options(lua_State *L, int arg, struct map_options *o)
{
	enum { THP, POPULATE, SHARED, MEMFD, HUGETLB };
	static const struct ft_opt opts[] = {
		[THP] = { "thp", FT_OPT_CHOICE, thp_names, NULL },
		[POPULATE] = { "populate", FT_OPT_BOOLEAN, NULL, NULL },
		[SHARED] = { "shared", FT_OPT_BOOLEAN, NULL, NULL },
		[MEMFD] = { "memfd", FT_OPT_ANY, NULL, NULL },
		[HUGETLB] = { "hugetlb", FT_OPT_CHOICE, hugetlb_names, NULL },
		{ NULL, 0, NULL, NULL }
	};
	int v = ft_check_opts(L, arg, "mmap", opts);
	*o = (struct map_options){ (enum ft_thp)luaL_optinteger(L, v + THP, FT_THP_DEFAULT),
	                           lua_toboolean(L, v + POPULATE), lua_toboolean(L, v + SHARED),
	                           0, (int)luaL_optinteger(L, v + HUGETLB, -1) };
	if (!lua_isnil(L, v + MEMFD)) {
		if (!luaL_testudata(L, v + MEMFD, FT_MEMFD_META))
			luaL_error(L, "mmap option memfd must be an ft.memfd, got %s",
			           luaL_typename(L, v + MEMFD));
		o->memfd = v + MEMFD;
	}
	/* THP advice does not apply to hugetlb memory: asking both is a mistake */
	if (o->hugetlb >= 0 && o->thp != FT_THP_DEFAULT)
		luaL_error(L, "mmap options hugetlb and thp = \"%s\" exclude each other",
		           thp_names[o->thp]);
	if (o->hugetlb >= 0 && (o->shared || o->memfd))
		luaL_error(L, "mmap option hugetlb maps private anonymous memory: it excludes %s",
		           o->memfd ? "memfd" : "shared");
}

/* ft.mmap(bytes [, {thp = "default"|"never"|"always", populate = bool,
 * shared = bool, memfd = m, hugetlb = "2M"|"1G"}]): anonymous, or the
 * first bytes of a memfd; private unless shared. */
static int l_mmap(lua_State *L)
{
	ft_check_nargs(L, 2);
	size_t bytes = check_bytes(L, 1);
	struct map_options o;
	check_map_options(L, 2, &o);
	size_t huge = o.hugetlb >= 0 ? hugetlb_sizes[o.hugetlb] : 0;
	if (huge && bytes % huge)
		return luaL_argerror(L, 1, lua_pushfstring(L,
			"a hugetlb = \"%s\" mapping needs a multiple of %I bytes, got %I",
			hugetlb_names[o.hugetlb], (lua_Integer)huge, (lua_Integer)bytes));
	int fd = -1;
	if (o.memfd) {
		struct ft_memfd *m = ft_check_memfd(L, o.memfd);
		if (bytes > m->bytes)
			return luaL_argerror(L, 1, lua_pushfstring(L,
				"%I bytes of a memfd of %I: a page beyond its end would be SIGBUS",
				(lua_Integer)bytes, (lua_Integer)m->bytes));
		fd = m->fd;
	}
	struct ft_buffer *b = &ft_push_buffer(L)->b;
	if (o.memfd) {
		lua_pushvalue(L, o.memfd);
		lua_setiuservalue(L, -2, 1);
	}
	int err = huge ? ft_buffer_map_hugetlb(b, bytes, huge, o.populate)
	               : ft_buffer_map_fd(b, bytes, fd, 0, o.shared, o.thp, o.populate);
	if (err && huge)
		return ft_fail_errno(L, err, "mmap of %I bytes (hugetlb=%s%s) failed",
		                      (lua_Integer)bytes, hugetlb_names[o.hugetlb],
		                      o.populate ? ", populate" : "");
	if (err)
		return ft_fail_errno(L, err, "mmap of %I bytes (%s%s, thp=%s%s) failed",
		                      (lua_Integer)bytes, o.shared ? "shared" : "private",
		                      o.memfd ? " memfd" : "", thp_names[o.thp],
		                      o.populate ? ", populate" : "");
	FT_SINK(b->addr);
	return 1;
}

/* ft.malloc(bytes) */
static int l_malloc(lua_State *L)
{
	ft_check_nargs(L, 1);
	size_t bytes = check_bytes(L, 1);
	struct ft_buffer *b = &ft_push_buffer(L)->b;
	int err = ft_buffer_malloc(b, bytes);
	if (err)
		return ft_fail_errno(L, err, "malloc of %I bytes failed", (lua_Integer)bytes);
	FT_SINK(b->addr);
	return 1;
}

static int interrupted(lua_State *L)
{
	return ft_stopped_error(L);
}

/* b:touch(value [, spin_ns]) -> ns: one byte store per page; with spin_ns
 * (0 to 1e6) the planted kernel, a spin of that many ns per page (PLANT_NS). */
static int l_touch(lua_State *L)
{
	ft_check_method_nargs(L, 3);
	struct ft_buffer *b = check_buffer(L);
	unsigned char v = ft_check_byte(L, 2);
	lua_Integer spin = luaL_optinteger(L, 3, -1); /* -1: no spin given, the plain kernel */
	luaL_argcheck(L, lua_isnoneornil(L, 3) || (spin >= 0 && spin <= 1000000), 3, "0 to 1000000 ns");
	int64_t ns;
	if (spin >= 0 ? ft_pass_touch_planted(b, v, (int64_t)spin, &ns) : ft_pass_touch(b, v, &ns))
		return interrupted(L);
	lua_pushinteger(L, ns);
	return 1;
}

/* b:fill(k) -> ns: p[i] = i * k over every 64-bit word. */
static int l_fill(lua_State *L)
{
	ft_check_method_nargs(L, 2);
	struct ft_buffer *b = check_buffer(L);
	uint64_t k = (uint64_t)luaL_checkinteger(L, 2);
	int64_t ns;
	if (ft_pass_fill(b, k, &ns))
		return interrupted(L);
	lua_pushinteger(L, ns);
	return 1;
}

/* b:touch_timed(value, samples) -> ns: samples[i] is page i's store plus
 * one reading of the per-page timer (ft_timer), in ns. */
static int l_touch_timed(lua_State *L)
{
	ft_check_method_nargs(L, 3);
	struct ft_buffer *b = check_buffer(L);
	unsigned char v = ft_check_byte(L, 2);
	struct ft_samples *s = ft_check_samples(L, 3);
	if (s->capacity < b->pages)
		return luaL_argerror(L, 3, lua_pushfstring(L,
			"samples hold %I entries, the pass needs %I (one per page)",
			(lua_Integer)s->capacity, (lua_Integer)b->pages));
	const struct ft_timer *timer = ft_timer(L);
	int64_t ns;
	int err = ft_pass_touch_timed(b, timer, v, s->v, &ns);
	s->n = b->pages;
	ft_samples_changed(s);
	if (err)
		return interrupted(L);
	lua_pushinteger(L, ns);
	return 1;
}

static int push_sum(lua_State *L, int (*sum)(const struct ft_buffer *, uint64_t *))
{
	ft_check_method_nargs(L, 1);
	struct ft_buffer *b = check_buffer(L);
	uint64_t total;
	if (sum(b, &total))
		return interrupted(L);
	FT_SINK(total);
	lua_pushinteger(L, (lua_Integer)total); /* mod 2^64, as Lua integers wrap */
	return 1;
}

static int l_sum_bytes(lua_State *L)
{
	return push_sum(L, ft_pass_sum_bytes);
}

static int l_sum_words(lua_State *L)
{
	return push_sum(L, ft_pass_sum_words);
}

static size_t check_offset(lua_State *L, const struct ft_buffer *b)
{
	lua_Integer off = luaL_checkinteger(L, 2);
	if (off < 0 || (size_t)off >= b->bytes)
		luaL_argerror(L, 2, lua_pushfstring(L, "offset %I outside the buffer's 0..%I",
		                                    off, (lua_Integer)b->bytes - 1));
	return (size_t)off;
}

/* b:peek(offset) -> the byte there; b:poke(offset, value): one byte, for
 * probing and for tests that need one wrong byte. */
static int l_peek(lua_State *L)
{
	ft_check_method_nargs(L, 2);
	struct ft_buffer *b = check_buffer(L);
	lua_pushinteger(L, b->addr[check_offset(L, b)]);
	return 1;
}

static int l_poke(lua_State *L)
{
	ft_check_method_nargs(L, 3);
	struct ft_buffer *b = check_buffer(L);
	size_t off = check_offset(L, b);
	b->addr[off] = ft_check_byte(L, 3);
	return 0;
}

/* b:read_touch() -> ns, sum: one byte read per page (maps the zero page
 * where nothing was written yet). */
static int l_read_touch(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	struct ft_buffer *b = check_buffer(L);
	uint64_t sum;
	int64_t ns;
	if (ft_pass_read_touch(b, &sum, &ns))
		return interrupted(L);
	lua_pushinteger(L, ns);
	lua_pushinteger(L, (lua_Integer)sum);
	return 2;
}

/* b:nodes([step]) -> {[node] = pages, absent =, zero_page =, error =,
 * sampled =}: move_pages(2) asked where every step-th page lives. */
static int l_nodes(lua_State *L)
{
	ft_check_method_nargs(L, 2);
	struct ft_buffer *b = check_buffer(L);
	lua_Integer step = luaL_optinteger(L, 2, 1);
	luaL_argcheck(L, step >= 1, 2, "step must be a positive number of pages");
	size_t count = (b->pages + (size_t)step - 1) / (size_t)step;
	int *status = lua_newuserdatauv(L, count * sizeof *status, 0); /* freed by the collector */
	int err = ft_buffer_nodes(b, (size_t)step, status, count);
	if (err)
		return ft_fail_errno(L, err, "move_pages on %I pages failed", (lua_Integer)count);
	lua_newtable(L);
	lua_Integer absent = 0, zero = 0, other = 0;
	for (size_t i = 0; i < count; i++) {
		if (status[i] >= 0) {
			lua_rawgeti(L, -1, status[i]);
			lua_Integer n = lua_tointeger(L, -1);
			lua_pop(L, 1);
			lua_pushinteger(L, n + 1);
			lua_rawseti(L, -2, status[i]);
		} else if (status[i] == -ENOENT) {
			absent++;
		} else if (status[i] == -EFAULT) {
			zero++; /* the shared zero page (or nothing mapped) */
		} else {
			other++;
		}
	}
	ft_set_integer(L, "absent", absent);
	ft_set_integer(L, "zero_page", zero);
	ft_set_integer(L, "error", other);
	ft_set_integer(L, "sampled", (lua_Integer)count);
	return 1;
}

/* The whole pages of b: a malloc block shares its first and last pages
 * with other blocks, and a call on pages must not reach them. */
static struct ft_buffer whole_pages(lua_State *L, const struct ft_buffer *b, const char *call)
{
	struct ft_buffer whole = *b;
	size_t len;
	if (b->kind == FT_MALLOC && !ft_buffer_own_pages(b, &whole.addr, &len))
		luaL_error(L, "%s: the malloc buffer of %I bytes at %p holds no whole page of its own",
		           call, (lua_Integer)b->bytes, (void *)b->addr);
	if (b->kind == FT_MALLOC)
		whole.bytes = len, whole.pages = len / b->page_size;
	return whole;
}

/* b:mbind(node [, flag...]): MPOL_BIND to node; flags "move", "move_all",
 * "strict" (MPOL_MF_MOVE, MPOL_MF_MOVE_ALL, MPOL_MF_STRICT). */
static int l_mbind(lua_State *L)
{
	static const char *const names[] = { "strict", "move", "move_all", NULL };
	struct ft_buffer *b = check_buffer(L);
	lua_Integer node = luaL_checkinteger(L, 2);
	luaL_argcheck(L, node >= 0 && node < 64, 2, "node must be within 0 to 63");
	unsigned flags = 0;
	for (int i = 3; i <= lua_gettop(L); i++)
		flags |= 1u << ft_check_option(L, i, names);
	struct ft_buffer whole = whole_pages(L, b, "mbind");
	int err = ft_buffer_mbind(&whole, (int)node, flags);
	if (err)
		return ft_fail_errno(L, err, "mbind of %I bytes to node %I failed",
		                      (lua_Integer)whole.bytes, node);
	lua_pushboolean(L, 1);
	return 1;
}

static int lock(lua_State *L, bool on)
{
	ft_check_method_nargs(L, 1);
	struct ft_buffer *b = check_buffer(L);
	int64_t ns;
	int err = ft_buffer_mlock(b, on, &ns);
	if (err)
		return ft_fail_errno(L, err, "%s of %I bytes failed", on ? "mlock" : "munlock",
		                      (lua_Integer)b->bytes);
	lua_pushinteger(L, ns);
	return 1;
}

/* b:mlock() -> ns: faults every page in, inside the call. */
static int l_mlock(lua_State *L)
{
	return lock(L, true);
}

static int l_munlock(lua_State *L)
{
	return lock(L, false);
}

static const char *const advice_names[] = {
	"normal", "random", "sequential", "willneed", "dontneed", "free",
	"hugepage", "nohugepage", "cold", "pageout", "populate_read",
	"populate_write", NULL
};
/* Constants missing from older headers keep their kernel values. */
#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static const int advice_values[] = {
	MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED, MADV_DONTNEED, MADV_FREE,
	MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_COLD, MADV_PAGEOUT, MADV_POPULATE_READ,
	MADV_POPULATE_WRITE
};

/* b:madvise(advice) -> ns of the call, timed alone */
static int l_madvise(lua_State *L)
{
	ft_check_method_nargs(L, 2);
	struct ft_buffer *b = check_buffer(L);
	int i = ft_check_option(L, 2, advice_names);
	whole_pages(L, b, lua_pushfstring(L, "madvise(%s)", advice_names[i]));
	int64_t ns;
	int err = ft_buffer_madvise(b, advice_values[i], &ns);
	if (err)
		return ft_fail_errno(L, err, "madvise(%s) on a %s buffer of %I bytes failed",
		                      advice_names[i], kind_name(b), (lua_Integer)b->bytes);
	lua_pushinteger(L, ns);
	return 1;
}

/* b:thp_bytes() -> bytes of this mapping backed by transparent huge pages */
static int l_thp_bytes(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	struct ft_buffer *b = check_buffer(L);
	int64_t bytes;
	int err = ft_buffer_thp_bytes(b, &bytes);
	if (err == FT_ENOTEXACT) {
		lua_pushnil(L);
		lua_pushliteral(L, "thp_bytes: no PAGEMAP_SCAN, and the buffer's VMA is shared "
		                "with other mappings in smaps");
		return 2;
	}
	if (err)
		return ft_fail_errno(L, err, "reading /proc/self/pagemap failed");
	lua_pushinteger(L, bytes);
	return 1;
}

/* b:frames(samples) -> present pages | nil, message, errno: samples[i]
 * gets page i's physical frame number from /proc/self/pagemap, -1 where
 * the page is not present. A kernel that hides the frames (no
 * CAP_SYS_ADMIN: it shows 0) is a refusal, EPERM. */
static int l_frames(lua_State *L)
{
	ft_check_method_nargs(L, 2);
	struct ft_buffer *b = check_buffer(L);
	struct ft_samples *s = ft_check_samples(L, 2);
	if (s->capacity < b->pages)
		return luaL_argerror(L, 2, lua_pushfstring(L, "samples hold %I entries, the buffer has %I pages",
		                                           (lua_Integer)s->capacity, (lua_Integer)b->pages));
	size_t present, shown;
	int err = ft_buffer_frames(b, s->v, &present, &shown);
	s->n = b->pages;
	ft_samples_changed(s);
	if (err)
		return ft_fail_errno(L, err, "reading /proc/self/pagemap failed");
	if (present > 0 && shown == 0) {
		for (size_t i = 0; i < b->pages; i++)
			s->v[i] = -1; /* no frame known: not 0, which reads as a frame */
		return ft_fail(L, EPERM, "/proc/self/pagemap hides the frames (%I present pages, every frame 0): "
		               "reading them needs CAP_SYS_ADMIN", (lua_Integer)present);
	}
	lua_pushinteger(L, (lua_Integer)present);
	return 1;
}

static int release(lua_State *L, enum ft_kind kind)
{
	ft_check_method_nargs(L, 1);
	struct ft_lbuffer *lb = check_lbuffer(L, 1);
	struct ft_buffer *b = &lb->b;
	ft_check_releasable(L, &lb->h, "buffer", kind == FT_MALLOC ? "freed" : "unmapped");
	if (b->kind != kind)
		return luaL_error(L, "a %s buffer is released with %s()", kind_name(b),
		                  b->kind == FT_MALLOC ? "free" : "unmap");
	int64_t ns;
	int err = ft_buffer_release(b, &ns);
	if (err)
		return ft_error_errno(L, err, "munmap of %I bytes failed", (lua_Integer)b->bytes);
	lua_pushinteger(L, ns);
	return 1;
}

/* b:unmap() -> ns of the munmap call */
static int l_unmap(lua_State *L)
{
	return release(L, FT_MMAP);
}

/* b:free() -> ns of the free call */
static int l_free(lua_State *L)
{
	return release(L, FT_MALLOC);
}

/* __gc and __close: release what is still held, silently. A lent buffer
 * is never collected (the task group's handle holds it), and if it were,
 * leaking it beats unmapping memory a thread is touching. */
static int l_gc(lua_State *L)
{
	struct ft_lbuffer *lb = luaL_checkudata(L, 1, BUFFER_META);
	if (lb->h.owns && lb->b.addr && !lb->h.lent)
		ft_buffer_release(&lb->b, NULL);
	return 0;
}

static int l_tostring(lua_State *L)
{
	struct ft_lbuffer *lb = luaL_checkudata(L, 1, BUFFER_META);
	struct ft_buffer *b = &lb->b;
	if (ft_buffer_is_open(lb) && b->hugetlb_size)
		lua_pushfstring(L, "ft.buffer (%smmap hugetlb, %I bytes, %I pages of %I in huge "
		                "pages of %I, at %p)", lb->h.view ? "view of " : "", (lua_Integer)b->bytes,
		                (lua_Integer)b->pages, (lua_Integer)b->page_size,
		                (lua_Integer)b->hugetlb_size, (void *)b->addr);
	else if (ft_buffer_is_open(lb))
		lua_pushfstring(L, "ft.buffer (%s%s%s%s, %I bytes, %I pages of %I, at %p)",
		                lb->h.view ? "view of " : "", kind_name(b),
		                b->kind == FT_MMAP ? (b->shared ? " shared " : " private ") : "",
		                b->kind == FT_MMAP ? backing_name(b) : "",
		                (lua_Integer)b->bytes, (lua_Integer)b->pages,
		                (lua_Integer)b->page_size, (void *)b->addr);
	else
		lua_pushfstring(L, "ft.buffer (%s, released)", kind_name(b));
	return 1;
}

static const luaL_Reg methods[] = {
	{ "touch", l_touch },
	{ "fill", l_fill },
	{ "touch_timed", l_touch_timed },
	{ "sum_bytes", l_sum_bytes },
	{ "sum_words", l_sum_words },
	{ "read_touch", l_read_touch },
	{ "nodes", l_nodes },
	{ "mbind", l_mbind },
	{ "mlock", l_mlock },
	{ "munlock", l_munlock },
	{ "peek", l_peek },
	{ "poke", l_poke },
	{ "madvise", l_madvise },
	{ "thp_bytes", l_thp_bytes },
	{ "frames", l_frames },
	{ "unmap", l_unmap },
	{ "free", l_free },
	{ NULL, NULL }
};

/* The fields: addr, bytes, pages, page_size, hugetlb_size, kind,
 * backing, shared, view, map_ns, released. */
static int l_fields(lua_State *L)
{
	struct ft_lbuffer *lb = luaL_checkudata(L, 1, BUFFER_META);
	struct ft_buffer *b = &lb->b;
	const char *key = lua_tostring(L, 2);
	if (strcmp(key, "addr") == 0)
		lua_pushinteger(L, (lua_Integer)(uintptr_t)b->addr);
	else if (strcmp(key, "bytes") == 0)
		lua_pushinteger(L, (lua_Integer)b->bytes);
	else if (strcmp(key, "pages") == 0)
		lua_pushinteger(L, (lua_Integer)b->pages);
	else if (strcmp(key, "page_size") == 0)
		lua_pushinteger(L, (lua_Integer)b->page_size);
	else if (strcmp(key, "hugetlb_size") == 0)
		lua_pushinteger(L, (lua_Integer)b->hugetlb_size);
	else if (strcmp(key, "kind") == 0)
		lua_pushstring(L, kind_name(b));
	else if (strcmp(key, "backing") == 0)
		lua_pushstring(L, backing_name(b));
	else if (strcmp(key, "shared") == 0)
		lua_pushboolean(L, b->shared);
	else if (strcmp(key, "view") == 0)
		lua_pushboolean(L, lb->h.view);
	else if (strcmp(key, "map_ns") == 0)
		lua_pushinteger(L, b->map_ns);
	else if (strcmp(key, "released") == 0)
		lua_pushboolean(L, !ft_buffer_is_open(lb));
	else
		return 0;
	return 1;
}

void ft_open_buffer(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "mmap", l_mmap },
		{ "malloc", l_malloc },
		{ NULL, NULL }
	};
	ft_new_resource_meta(L, BUFFER_META, l_gc, l_tostring, methods, l_fields);
	luaL_setfuncs(L, functions, 0);
}
