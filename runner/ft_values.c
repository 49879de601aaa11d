/* Plain values between Lua states: nil, booleans, integers (as integers),
 * floats, strings (NULs and all) and tables of them, encoded into bytes in
 * one state and decoded in another, in another thread or process. Buffers
 * and memfds cross into tasks as views (ft_buffer.c, ft_memfd.c), lent
 * through their common header (struct ft_lendable) while the tasks run. A table
 * met twice on one path is a cycle and an error; met twice elsewhere it
 * arrives as two tables. Metatables do not cross: a table with one is an
 * error rather than a silent loss of its behaviour. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "ft_lendable.h"
#include "ft_values.h"

#define BLOB_META "ft.blob"

/* Levels of tables from the one encoded, which carries the arguments (the
 * job) or the results (the record) two levels above the user's values. */
enum { MAX_DEPTH = 100 };

enum tag {
	T_NIL = 'n', T_FALSE = 'f', T_TRUE = 't', T_INT = 'i', T_FLOAT = 'd',
	T_STRING = 's', T_TABLE = '{', T_END = '}', T_BUFFER = 'B', T_MEMFD = 'M',
};

static int blob_gc(lua_State *L)
{
	struct ft_blob *b = luaL_checkudata(L, 1, BLOB_META);
	free(b->p);
	b->p = NULL;
	return 0;
}

struct ft_blob *ft_blob_push(lua_State *L)
{
	struct ft_blob *b = lua_newuserdatauv(L, sizeof *b, 0);
	memset(b, 0, sizeof *b);
	if (luaL_newmetatable(L, BLOB_META)) {
		lua_pushcfunction(L, blob_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return b;
}

char *ft_blob_take(struct ft_blob *b, size_t *n)
{
	char *p = b->p;
	*n = b->n;
	b->p = NULL;
	b->n = b->cap = 0;
	return p;
}

/* --- buffers and memfds: their wire form -------------------------------- */

/* A buffer or memfd as it crosses: threads share the memory (root is the
 * main state's object, lent while the tasks run); a process inherits the
 * memfd's descriptor (fd) and maps it itself. */
struct ft_memfd_wire {
	struct ft_memfd m;
	void *root;
};
struct ft_buffer_wire {
	struct ft_buffer b;
	void *root;
	int fd;
};

/* Each export fills *w, or returns why the value cannot cross, and adds
 * to keep what must be lent (threads) or inherited (processes); each
 * import pushes a view: the same methods, no release. */
static const char *memfd_export(lua_State *L, int idx, enum ft_cross cross, int keep,
                                struct ft_memfd_wire *w)
{
	struct ft_lmemfd *lm = luaL_checkudata(L, idx, FT_MEMFD_META);
	if (!ft_memfd_is_open(lm))
		return "a closed memfd";
	if (cross == FT_CROSS_RESULT)
		return "a memfd (a task's memfds stay in the task)";
	w->m = lm->m;
	w->root = lm->h.root;
	lua_pushvalue(L, idx);
	lua_pushboolean(L, 1);
	lua_rawset(L, keep);
	return NULL;
}

/* In a thread the view shares the main state's descriptor; in a process
 * the descriptor was inherited under the same number and stays open until
 * the process ends (two views of one memfd must not close it twice). */
static void memfd_import(lua_State *L, const struct ft_memfd_wire *w, enum ft_cross cross)
{
	struct ft_lmemfd *lm = ft_push_memfd(L);
	lm->m = w->m;
	lm->h.view = true;
	lm->h.owns = false;
	if (cross == FT_CROSS_THREAD)
		lm->h.root = w->root;
}

static const char *buffer_export(lua_State *L, int idx, enum ft_cross cross, int keep,
                                 struct ft_buffer_wire *w)
{
	struct ft_lbuffer *lb = luaL_checkudata(L, idx, FT_BUFFER_META);
	if (!ft_buffer_is_open(lb))
		return "a released buffer";
	memset(w, 0, sizeof *w);
	w->b = lb->b;
	w->fd = -1;
	if (cross == FT_CROSS_RESULT)
		return "a buffer (a task's buffers stay in the task)";
	if (cross == FT_CROSS_THREAD) {
		w->root = lb->h.root;
		lua_pushvalue(L, idx);
		lua_pushboolean(L, 1);
		lua_rawset(L, keep);
		return NULL;
	}
	/* A process has its own memory: only a file mapped shared is the
	 * same memory there; a private page would be a copy. */
	if (!lb->b.file || !lb->b.shared)
		return "a private buffer: a task process would only have a copy of it; map a memfd "
		       "shared (ft.mmap(n, {memfd = m, shared = true})) or pass the memfd";
	if (lua_getiuservalue(L, idx, 1) != LUA_TUSERDATA) {
		lua_pop(L, 1);
		return "a buffer whose memfd is not known here";
	}
	struct ft_memfd_wire mw;
	const char *why = memfd_export(L, lua_gettop(L), cross, keep, &mw);
	lua_pop(L, 1);
	if (why)
		return "a buffer whose memfd is closed (a task process maps the memfd itself)";
	w->fd = mw.m.fd;
	return NULL;
}

static void buffer_import(lua_State *L, const struct ft_buffer_wire *w, enum ft_cross cross)
{
	struct ft_lbuffer *lb = ft_push_buffer(L);
	struct ft_buffer *b = &lb->b;
	lb->h.view = true;
	if (cross == FT_CROSS_THREAD) {
		*b = w->b;
		lb->h.root = w->root;
		lb->h.owns = false;
		return;
	}
	int err = ft_buffer_map_fd(b, w->b.bytes, w->fd, w->b.offset, true, FT_THP_DEFAULT, false);
	if (err)
		ft_error_errno(L, err, "a task could not map the shared buffer of %I bytes",
		               (lua_Integer)w->b.bytes);
}

/* --- encoding --------------------------------------------------------- */

struct enc {
	lua_State *L;
	enum ft_cross cross;
	int keep;                   /* 0: no buffer or memfd may cross */
	int seen;                   /* the tables on the current path */
	const char *what;
	int depth;
	int keys[MAX_DEPTH + 1];    /* stack index of the key at each level */
	struct ft_blob *out;
};

static void put(struct enc *e, const void *p, size_t n)
{
	struct ft_blob *b = e->out;
	if (b->cap - b->n < n) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->n < n)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q)
			luaL_error(e->L, "%s: out of memory encoding values", e->what);
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put_tag(struct enc *e, enum tag t)
{
	char c = (char)t;
	put(e, &c, 1);
}

/* args[2].x["a b"][3]: the keys from the outermost table in. */
static void push_path(struct enc *e)
{
	lua_State *L = e->L;
	int parts = 0;
	for (int i = 0; i < e->depth; i++, parts++) {
		int k = e->keys[i];
		size_t len;
		const char *s;
		switch (lua_type(L, k)) {
		case LUA_TSTRING:
			s = lua_tolstring(L, k, &len);
			if (strlen(s) == len && len > 0 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") == len && !(s[0] >= '0' && s[0] <= '9'))
				lua_pushfstring(L, i ? ".%s" : "%s", s);
			else
				lua_pushfstring(L, "[\"%s\"]", s);
			break;
		case LUA_TNUMBER:
			if (lua_isinteger(L, k))
				lua_pushfstring(L, "[%I]", lua_tointeger(L, k));
			else
				lua_pushfstring(L, "[%f]", lua_tonumber(L, k));
			break;
		default:
			lua_pushfstring(L, "[%s]", luaL_typename(L, k));
			break;
		}
	}
	if (parts == 0)
		lua_pushliteral(L, "the value");
	else
		lua_concat(L, parts);
}

static void fail(struct enc *e, const char *is)
{
	luaL_checkstack(e->L, MAX_DEPTH + 4, "too deep to name");
	push_path(e);
	luaL_error(e->L, "%s: %s is %s; only nil, booleans, numbers, strings and tables of them "
	           "cross between Lua states%s", e->what, lua_tostring(e->L, -1), is,
	           e->keep ? ", and buffers and memfds into a task" : "");
}

static void encode(struct enc *e, int idx);

static void encode_table(struct enc *e, int idx)
{
	lua_State *L = e->L;
	if (e->depth >= MAX_DEPTH)
		fail(e, lua_pushfstring(e->L, "a table nested too deep (an argument or a result "
		                        "may hold tables %d levels deep)", MAX_DEPTH - 2));
	if (lua_getmetatable(L, idx)) {
		lua_pop(L, 1);
		fail(e, "a table with a metatable");
	}
	lua_pushvalue(L, idx);
	if (lua_rawget(L, e->seen) != LUA_TNIL)
		fail(e, "a table that contains itself (a cycle)");
	lua_pop(L, 1);
	lua_pushvalue(L, idx);
	lua_pushboolean(L, 1);
	lua_rawset(L, e->seen);
	put_tag(e, T_TABLE);
	luaL_checkstack(L, 4, "tables nested too deep");
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		int key = lua_gettop(L) - 1;
		e->keys[e->depth++] = key;
		int kt = lua_type(L, key);
		if (kt != LUA_TSTRING && kt != LUA_TNUMBER && kt != LUA_TBOOLEAN)
			fail(e, "a key of this type (keys are booleans, numbers or strings)");
		encode(e, key);
		encode(e, key + 1);
		e->depth--;
		lua_pop(L, 1);
	}
	put_tag(e, T_END);
	lua_pushvalue(L, idx);
	lua_pushnil(L);
	lua_rawset(L, e->seen);
}

static void encode(struct enc *e, int idx)
{
	lua_State *L = e->L;
	switch (lua_type(L, idx)) {
	case LUA_TNIL:
		put_tag(e, T_NIL);
		break;
	case LUA_TBOOLEAN:
		put_tag(e, lua_toboolean(L, idx) ? T_TRUE : T_FALSE);
		break;
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx)) {
			int64_t v = lua_tointeger(L, idx);
			put_tag(e, T_INT);
			put(e, &v, sizeof v);
		} else {
			double v = lua_tonumber(L, idx);
			put_tag(e, T_FLOAT);
			put(e, &v, sizeof v);
		}
		break;
	case LUA_TSTRING: {
		size_t len;
		const char *s = lua_tolstring(L, idx, &len);
		uint64_t n = len;
		put_tag(e, T_STRING);
		put(e, &n, sizeof n);
		put(e, s, len);
		break;
	}
	case LUA_TTABLE:
		encode_table(e, idx);
		break;
	case LUA_TUSERDATA: {
		const char *why = NULL;
		if (luaL_testudata(L, idx, FT_BUFFER_META)) {
			struct ft_buffer_wire w;
			if (!(why = buffer_export(L, idx, e->cross, e->keep, &w))) {
				put_tag(e, T_BUFFER);
				put(e, &w, sizeof w);
			}
		} else if (luaL_testudata(L, idx, FT_MEMFD_META)) {
			struct ft_memfd_wire w;
			if (!(why = memfd_export(L, idx, e->cross, e->keep, &w))) {
				put_tag(e, T_MEMFD);
				put(e, &w, sizeof w);
			}
		} else if (luaL_getmetafield(L, idx, "__name") == LUA_TSTRING) {
			why = lua_pushfstring(L, "a userdata (%s)", lua_tostring(L, -1));
		} else {
			why = "a userdata";
		}
		if (why)
			fail(e, why);
		break;
	}
	case LUA_TFUNCTION:
		fail(e, "a function (functions cannot cross: send source text)");
		break;
	default:
		fail(e, lua_pushfstring(L, "a %s", luaL_typename(L, idx)));
		break;
	}
}

void ft_values_encode(lua_State *L, int idx, enum ft_cross cross, int keep, const char *what,
                      struct ft_blob *out)
{
	idx = lua_absindex(L, idx);
	if (keep)
		keep = lua_absindex(L, keep);
	lua_newtable(L);
	struct enc e = { L, cross, cross == FT_CROSS_RESULT ? 0 : keep, lua_gettop(L), what, 0,
	                 {0}, out };
	encode(&e, idx);
	lua_pop(L, 1);
}

/* --- decoding --------------------------------------------------------- */

struct dec {
	lua_State *L;
	const char *p, *end;
	enum ft_cross cross;
	int depth;
};

static void get(struct dec *d, void *v, size_t n)
{
	if ((size_t)(d->end - d->p) < n)
		luaL_error(d->L, "values between states: the encoding ends early");
	memcpy(v, d->p, n);
	d->p += n;
}

static char get_tag(struct dec *d)
{
	char c;
	get(d, &c, 1);
	return c;
}

static void decode(struct dec *d, char tag)
{
	lua_State *L = d->L;
	switch (tag) {
	case T_NIL:
		lua_pushnil(L);
		break;
	case T_FALSE:
	case T_TRUE:
		lua_pushboolean(L, tag == T_TRUE);
		break;
	case T_INT: {
		int64_t v;
		get(d, &v, sizeof v);
		lua_pushinteger(L, v);
		break;
	}
	case T_FLOAT: {
		double v;
		get(d, &v, sizeof v);
		lua_pushnumber(L, v);
		break;
	}
	case T_STRING: {
		uint64_t n;
		get(d, &n, sizeof n);
		if (n > (uint64_t)(d->end - d->p))
			luaL_error(L, "values between states: a string runs past the end");
		lua_pushlstring(L, d->p, (size_t)n);
		d->p += n;
		break;
	}
	case T_TABLE:
		if (++d->depth > MAX_DEPTH + 1)
			luaL_error(L, "values between states: tables nested too deep");
		luaL_checkstack(L, 4, "tables nested too deep");
		lua_newtable(L);
		for (char t; (t = get_tag(d)) != T_END;) {
			decode(d, t);
			decode(d, get_tag(d));
			lua_rawset(L, -3);
		}
		d->depth--;
		break;
	case T_BUFFER: {
		struct ft_buffer_wire w;
		get(d, &w, sizeof w);
		if (d->cross == FT_CROSS_RESULT)
			luaL_error(L, "values between states: a buffer among results");
		buffer_import(L, &w, d->cross);
		break;
	}
	case T_MEMFD: {
		struct ft_memfd_wire w;
		get(d, &w, sizeof w);
		if (d->cross == FT_CROSS_RESULT)
			luaL_error(L, "values between states: a memfd among results");
		memfd_import(L, &w, d->cross);
		break;
	}
	default:
		luaL_error(L, "values between states: unknown tag %d", tag);
	}
}

void ft_values_decode(lua_State *L, const char *p, size_t n, enum ft_cross cross)
{
	struct dec d = { L, p, p + n, cross, 0 };
	decode(&d, get_tag(&d));
	if (d.p != d.end)
		luaL_error(L, "values between states: %I bytes left over", (lua_Integer)(d.end - d.p));
}

/* --- lending ---------------------------------------------------------- */

void ft_values_lend(lua_State *L, int keep, int delta)
{
	keep = lua_absindex(L, keep);
	for (lua_pushnil(L); lua_next(L, keep); lua_pop(L, 1)) {
		struct ft_lendable *h = ft_test_lendable(L, -2);
		if (h)
			h->lent += delta;
	}
}

int ft_values_kept_fds(lua_State *L, int keep, int *fds, int max)
{
	int n = 0;
	keep = lua_absindex(L, keep);
	for (lua_pushnil(L); lua_next(L, keep); lua_pop(L, 1)) {
		int fd = ft_memfd_fd(L, -2);
		if (fd >= 0 && n == max) {
			lua_pop(L, 2);
			return -1;
		}
		if (fd >= 0)
			fds[n++] = fd;
	}
	return n;
}
