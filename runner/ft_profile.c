/* ft.profile(fn [, opts [, args...]]): fn(args...) run under the cpu-clock
 * sampling of core/profile, and what the samples say. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "../core/buffer.h"
#include "../core/ksyms.h"
#include "../core/profile.h"
#include "ft_aux.h"
#include "ft_openers.h"

#define SESSION_META "ft.profile.session"
#define KSYMS_META "ft.ksyms"
#define KSYMS_KEY "ft.ksyms.loaded" /* the registry's copy */

/* 10 kHz: each sample costs 10-20 us in this KVM guest (the timer
 * interrupt and its reprogramming exit to the host), so 10 kHz slows a
 * first-touch pass by a fifth to a half, 20 kHz by a half to double. */
enum { DEFAULT_FREQ = 10000, DEFAULT_DEPTH = 32, RING_BYTES = 2 << 20 };

struct session {
	struct ft_profile p;
	bool open;
};

static int session_close(lua_State *L)
{
	struct session *s = luaL_checkudata(L, 1, SESSION_META);
	if (s->open)
		ft_profile_close(&s->p);
	s->open = false;
	return 0;
}

static int session_tostring(lua_State *L)
{
	struct session *s = luaL_checkudata(L, 1, SESSION_META);
	lua_pushstring(L, s->open ? "ft.profile session" : "ft.profile session (closed)");
	return 1;
}

static int ksyms_gc(lua_State *L)
{
	ft_ksyms_free(luaL_checkudata(L, 1, KSYMS_META));
	return 0;
}

/* /proc/kallsyms, read once per state (about 120 000 text symbols) and
 * kept in the registry. Pushes the userdata, or returns an errno. */
static int push_ksyms(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, KSYMS_KEY) == LUA_TUSERDATA)
		return 0;
	lua_pop(L, 1);
	struct ft_ksyms *k = lua_newuserdatauv(L, sizeof *k, 0);
	memset(k, 0, sizeof *k);
	luaL_setmetatable(L, KSYMS_META);
	int err = ft_ksyms_load(k, "/proc/kallsyms");
	if (err) {
		lua_pop(L, 1);
		return err;
	}
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, KSYMS_KEY);
	return 0;
}

static void check_options(lua_State *L, int arg, struct ft_profile_opts *o)
{
	enum { FREQ, CALLCHAIN, KERNEL, RING_KIB };
	static const struct ft_opt opts[] = {
		[FREQ] = { "freq", FT_OPT_INTEGER, NULL, "an integer (samples per second)" },
		[CALLCHAIN] = { "callchain", FT_OPT_ANY, NULL, NULL },
		[KERNEL] = { "kernel", FT_OPT_BOOLEAN, NULL, NULL },
		[RING_KIB] = { "ring_kib", FT_OPT_ANY, NULL, NULL },
		{ NULL, 0, NULL, NULL }
	};
	int v = ft_check_opts(L, arg, "ft.profile", opts);
	o->freq = luaL_optinteger(L, v + FREQ, DEFAULT_FREQ);
	if (o->freq < 1 || o->freq > 1000000)
		luaL_error(L, "ft.profile option freq = %I: expected 1 to 1000000 samples per second",
		           (lua_Integer)o->freq);
	o->depth = DEFAULT_DEPTH;
	int chain = v + CALLCHAIN;
	if (lua_isboolean(L, chain)) {
		o->depth = lua_toboolean(L, chain) ? DEFAULT_DEPTH : 0;
	} else if (lua_isinteger(L, chain)) {
		lua_Integer d = lua_tointeger(L, chain);
		if (d < 1 || d > FT_PROFILE_MAX_DEPTH)
			luaL_error(L, "ft.profile option callchain = %I: expected a boolean or 1 to %d frames",
			           d, FT_PROFILE_MAX_DEPTH);
		o->depth = (int)d;
	} else if (!lua_isnil(L, chain)) {
		luaL_error(L, "ft.profile option callchain must be a boolean or a number of frames, got %s",
		           luaL_typename(L, chain));
	}
	o->kernel = lua_isnil(L, v + KERNEL) || lua_toboolean(L, v + KERNEL);
	o->ring_bytes = RING_BYTES;
	int ring = v + RING_KIB;
	if (!lua_isnil(L, ring)) {
		lua_Integer kib = lua_isinteger(L, ring) ? lua_tointeger(L, ring) : 0;
		lua_Integer min_kib = (lua_Integer)(16 * ft_page_size() / 1024);
		if (kib < min_kib || kib > (1 << 20) || (kib & (kib - 1)))
			luaL_error(L, "ft.profile option ring_kib = %s: expected a power of two from %I to %d",
			           luaL_tolstring(L, ring, NULL), min_kib, 1 << 20);
		o->ring_bytes = (size_t)kib << 10;
	}
	lua_settop(L, v - 1);
}

/* nil, message, errno: the system refused */
static int refuse(lua_State *L, int err, const char *why)
{
	return ft_fail(L, err, "ft.profile: %s", why);
}

struct symbol {
	const char *name;  /* anchored in the names table on the stack */
	int64_t count;
	bool kernel;
};

static int by_kind_name(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	if (x->kernel != y->kernel)
		return x->kernel ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* {{[key] = name, samples [, kernel]}, ...}, most samples first; kernel
 * only for symbols (key "name"). */
static void push_by_count(lua_State *L, struct symbol *s, size_t n, const char *key)
{
	bool symbols = strcmp(key, "name") == 0;
	qsort(s, n, sizeof *s, by_count);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lua_createtable(L, 0, 3);
		ft_set_string(L, key, s[i].name);
		ft_set_integer(L, "samples", s[i].count);
		if (symbols)
			ft_set_boolean(L, "kernel", s[i].kernel);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* symbols = {{name, samples, kernel}, ...}, most samples first */
static void push_symbols(lua_State *L, const struct ft_profile *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->leaf_slots; i++)
		n += p->leaves[i].count > 0;
	struct symbol *s = lua_newuserdatauv(L, (n ? n : 1) * sizeof *s, 0);
	lua_newtable(L); /* keeps the names alive */
	int names = lua_gettop(L);
	char buf[512];
	size_t k = 0;
	for (size_t i = 0; i < p->leaf_slots; i++) {
		const struct ft_leaf *l = &p->leaves[i];
		if (l->count == 0)
			continue;
		lua_pushstring(L, ft_profile_frame_name(p, l->frame, l->kernel, buf, sizeof buf));
		s[k] = (struct symbol){ lua_tostring(L, -1), l->count, l->kernel };
		lua_rawseti(L, names, (lua_Integer)++k);
	}
	/* merge what names alike (user addresses in one function) */
	qsort(s, n, sizeof *s, by_kind_name);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m > 0 && s[m - 1].kernel == s[i].kernel && strcmp(s[m - 1].name, s[i].name) == 0)
			s[m - 1].count += s[i].count;
		else
			s[m++] = s[i];
	}
	push_by_count(L, s, m, "name");
	lua_replace(L, names - 1); /* over the scratch array */
	lua_settop(L, names - 1);
}

/* map[key] += count, the key on top (popped) */
static void add_count(lua_State *L, int map, int64_t count)
{
	lua_pushvalue(L, -1);
	lua_rawget(L, map);
	lua_Integer old = lua_tointeger(L, -1);
	lua_pop(L, 1);
	lua_pushinteger(L, old + count);
	lua_rawset(L, map);
}

enum { NAME_BYTES = 512 };

/* chains = {{stack = "root;...;leaf", samples}, ...} (most first) and
 * prefixes = {["root;..."] = samples}: every root-first prefix of every
 * chain with the samples under it. */
static void push_chains(lua_State *L, const struct ft_profile *p)
{
	lua_newtable(L);
	int map = lua_gettop(L);
	lua_newtable(L);
	int prefixes = lua_gettop(L);
	size_t cap = (size_t)(p->opts.depth + 1) * (NAME_BYTES + 1);
	char *stack = lua_newuserdatauv(L, cap, 0);
	char name[NAME_BYTES];
	for (size_t i = 0; i < p->chain_slots; i++) {
		const struct ft_chain *c = ft_profile_chain(p, i);
		if (c->count == 0)
			continue;
		size_t len = 0;
		if (c->truncated)
			len = (size_t)snprintf(stack, cap, "[truncated]");
		for (int f = c->depth - 1; f >= 0; f--) {
			ft_profile_frame_name(p, c->frames[f], c->kernel_mask >> f & 1, name, sizeof name);
			len += (size_t)snprintf(stack + len, cap - len, "%s%s", len ? ";" : "", name);
			if (len >= cap)
				len = cap - 1; /* cannot happen: cap holds depth + 1 names */
			lua_pushlstring(L, stack, len);
			add_count(L, prefixes, c->count);
		}
		lua_pushlstring(L, stack, len);
		add_count(L, map, c->count);
	}
	lua_pop(L, 1); /* the string buffer */
	/* the list, most samples first */
	size_t n = 0;
	for (lua_pushnil(L); lua_next(L, map); lua_pop(L, 1))
		n++;
	struct symbol *s = lua_newuserdatauv(L, (n ? n : 1) * sizeof *s, 0);
	size_t k = 0;
	for (lua_pushnil(L); lua_next(L, map); lua_pop(L, 1))
		s[k++] = (struct symbol){ lua_tostring(L, -2), lua_tointeger(L, -1), false };
	push_by_count(L, s, n, "stack");
	/* stack: map, prefixes, scratch, list -> list, prefixes */
	lua_replace(L, map);
	lua_pop(L, 1);
}

static void push_result(lua_State *L, const struct ft_profile *p)
{
	lua_createtable(L, 0, 20);
	ft_set_integer(L, "samples", p->samples);
	ft_set_integer(L, "kernel", p->kernel_samples);
	ft_set_integer(L, "user", p->user_samples);
	ft_set_integer(L, "lost", p->lost);
	ft_set_integer(L, "throttled", p->throttled);
	ft_set_integer(L, "dropped", p->dropped);
	ft_set_integer(L, "freq", p->opts.freq);
	ft_set_integer(L, "depth", p->opts.depth);
	ft_set_integer(L, "longest_chain", p->max_chain);
	ft_set_integer(L, "ring_bytes", (int64_t)p->opts.ring_bytes);
	ft_set_integer(L, "wall_ns", p->wall_ns);
	ft_set_integer(L, "cpu_ns", p->cpu_ns);
	ft_set_integer(L, "sampled_ns", p->period_ns);
	lua_pushnumber(L, p->wall_ns > 0 ? (double)p->period_ns / (double)p->wall_ns : 0);
	lua_setfield(L, -2, "share");
	push_symbols(L, p);
	lua_setfield(L, -2, "symbols");
	if (p->opts.depth) {
		push_chains(L, p);
		lua_setfield(L, -3, "prefixes");
		lua_setfield(L, -2, "chains");
	}
}

/* ft.profile(fn [, {freq =, callchain =, kernel =, ring_kib =} [, args...]])
 *   -> profile, fn(args...)'s results | nil, message, errno */
static int l_profile(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TFUNCTION);
	struct ft_profile_opts o;
	check_options(L, 2, &o);
	int nargs = lua_gettop(L) < 2 ? 0 : lua_gettop(L) - 2;
	lua_settop(L, 2 + nargs);

	struct ft_perf_settings s;
	ft_perf_settings_read(&s, ft_proc_sys());
	char why[768];
	int refused = ft_perf_try(&s, o.kernel, why, sizeof why);
	if (refused)
		return refuse(L, refused, why);
	if (o.kernel && !ft_kallsyms_allowed(&s, why, sizeof why))
		return refuse(L, EACCES, why);
	if (s.max_sample_rate != FT_SETTING_UNREADABLE && o.freq > s.max_sample_rate)
		return ft_fail(L, EINVAL, "ft.profile: freq %I is above %s/perf_event_max_sample_rate (%d)",
		               (lua_Integer)o.freq, s.dir, s.max_sample_rate);
	const struct ft_ksyms *ksyms = NULL;
	if (o.kernel) {
		int err = push_ksyms(L);
		if (err)
			return ft_fail_errno(L, err, "ft.profile: reading /proc/kallsyms failed");
		ksyms = lua_touserdata(L, -1);
		char k_text[96], p_text[96];
		if (ksyms->hidden)
			return ft_fail(L, EACCES, "ft.profile: /proc/kallsyms shows every address as 0 "
			               "(%s/kptr_restrict %s, perf_event_paranoid %s): kptr_restrict "
			               "must be 0 with perf_event_paranoid at 1 or below, or 1 or below "
			               "with CAP_SYSLOG", s.dir,
			               ft_perf_setting_text(s.kptr_restrict, s.kptr_restrict_err, k_text,
			                                    sizeof k_text),
			               ft_perf_setting_text(s.paranoid, s.paranoid_err, p_text,
			                                    sizeof p_text));
	} else {
		lua_pushnil(L);
	}
	int base = lua_gettop(L); /* the ksyms (or nil), kept alive below */

	struct session *session = lua_newuserdatauv(L, sizeof *session, 1);
	memset(session, 0, sizeof *session);
	luaL_setmetatable(L, SESSION_META);
	lua_pushvalue(L, base);
	lua_setiuservalue(L, -2, 1);
	int err = ft_profile_open(&session->p, &o, ksyms, &s, why, sizeof why);
	if (err)
		return refuse(L, err, why);
	session->open = true;
	lua_toclose(L, base + 1); /* a memory error below still closes it */

	lua_pushvalue(L, 1);
	for (int i = 0; i < nargs; i++)
		lua_pushvalue(L, 3 + i);
	/* Protected, so that the sampling ends with ft.profile even when fn
	 * fails in a coroutine (whose to-be-closed slots wait for
	 * coroutine.close). The error goes on unchanged; its traceback starts
	 * here, its message still says where it was raised. */
	ft_profile_start(&session->p);
	int status = lua_pcall(L, nargs, LUA_MULTRET, 0);
	ft_profile_stop(&session->p);
	if (status != LUA_OK) {
		ft_profile_close(&session->p);
		session->open = false;
		return lua_error(L);
	}
	int nresults = lua_gettop(L) - (base + 1);
	push_result(L, &session->p);
	lua_insert(L, base + 2);
	return nresults + 1;
}

void ft_open_profile(lua_State *L)
{
	ft_new_resource_meta(L, SESSION_META, session_close, session_tostring, NULL, NULL);
	luaL_newmetatable(L, KSYMS_META);
	lua_pushcfunction(L, ksyms_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	lua_pushcfunction(L, l_profile);
	lua_setfield(L, -2, "profile");
}
