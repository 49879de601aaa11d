/* ft.trace(opts): kernel events of core/trace, timestamped on the clock of
 * ft.now_ns, as a session whose start and stop bracket a window. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "../core/clock.h"
#include "../core/interrupt.h"
#include "../core/pass.h"
#include "../core/samples.h"
#include "../core/trace.h"
#include "ft_aux.h"
#include "ft_lendable.h"
#include "ft_openers.h"
#include "ft_samples.h"
#include "ft_timer.h"

#define TRACE_META "ft.trace"

enum { DEFAULT_RING_KIB = 4096 };

struct session {
	struct ft_trace t;
	bool open;
};

static struct session *check_open(lua_State *L)
{
	struct session *s = luaL_checkudata(L, 1, TRACE_META);
	if (!s->open)
		luaL_error(L, "attempt to use a closed ft.trace session");
	return s;
}

static int l_close(lua_State *L)
{
	struct session *s = luaL_checkudata(L, 1, TRACE_META);
	if (s->open)
		ft_trace_close(&s->t);
	s->open = false;
	return 0;
}

static int l_tostring(lua_State *L)
{
	struct session *s = luaL_checkudata(L, 1, TRACE_META);
	lua_pushfstring(L, s->open ? "ft.trace (%d events, %d rings)" : "ft.trace (closed)",
	                s->t.opts.n_events, s->t.n_rings);
	return 1;
}

/* The list at idx (nil: none) of "group:name" strings, appended to o->events. */
static void add_names(lua_State *L, int idx, const char *key, bool per_cpu, struct ft_trace_opts *o)
{
	if (lua_isnil(L, idx))
		return;
	lua_Integer n = luaL_len(L, idx);
	for (lua_Integer i = 1; i <= n; i++) {
		size_t len = 0;
		const char *name = lua_geti(L, idx, i) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : "";
		if (len == 0 || len >= FT_TRACE_NAME || strlen(name) != len)
			luaL_error(L, "ft.trace option %s[%I] must be a \"group:name\" string of 1 to %d bytes",
			           key, i, FT_TRACE_NAME - 1);
		if (o->n_events == FT_TRACE_MAX_EVENTS)
			luaL_error(L, "ft.trace: more than %d events", FT_TRACE_MAX_EVENTS);
		struct ft_trace_spec *spec = &o->events[o->n_events++];
		memcpy(spec->name, name, len + 1);
		spec->per_cpu = per_cpu;
		lua_pop(L, 1);
	}
}

static void check_options(lua_State *L, int opts, struct ft_trace_opts *o)
{
	static const struct ft_opt known[] = {
		{ "events", FT_OPT_TABLE, NULL, "a list of \"group:name\" strings" },
		{ "cpu_events", FT_OPT_TABLE, NULL, "a list of \"group:name\" strings" },
		{ "switches", FT_OPT_BOOLEAN, NULL, NULL },
		{ "ring_kib", FT_OPT_INTEGER, NULL, NULL },
		{ NULL, 0, NULL, NULL }
	};
	memset(o, 0, sizeof *o);
	o->switches = true;
	o->ring_bytes = (size_t)DEFAULT_RING_KIB << 10;
	const char *dir = getenv("FTRUN_TRACEFS");
	snprintf(o->tracefs, sizeof o->tracefs, "%s", dir && *dir ? dir : FT_TRACEFS);
	o->may_mount = !(dir && *dir); /* a stand-in directory is never mounted on */
	luaL_checktype(L, opts, LUA_TTABLE);
	int at = ft_check_opts(L, opts, "ft.trace", known);
	add_names(L, at, "events", false, o);
	add_names(L, at + 1, "cpu_events", true, o);
	if (!lua_isnil(L, at + 2))
		o->switches = lua_toboolean(L, at + 2);
	if (!lua_isnil(L, at + 3)) {
		lua_Integer kib = lua_tointeger(L, at + 3);
		lua_Integer min_kib = (lua_Integer)(ft_page_size() / 1024);
		if (kib < min_kib || kib > (1 << 20) || (kib & (kib - 1)))
			luaL_error(L, "ft.trace option ring_kib = %I: expected a power of two from %I to %d",
			           kib, min_kib, 1 << 20);
		o->ring_bytes = (size_t)kib << 10;
	}
	lua_pop(L, 4);
	if (o->n_events == 0 && !o->switches)
		luaL_error(L, "ft.trace: nothing to trace (no events and switches = false)");
}

/* ft.trace{events =, cpu_events =, switches =, ring_kib =}
 *   -> session | nil, message, errno */
static int l_trace(lua_State *L)
{
	ft_check_nargs(L, 1);
	struct ft_trace_opts o;
	check_options(L, 1, &o);
	struct ft_perf_settings ps;
	ft_perf_settings_read(&ps, ft_proc_sys());
	struct session *s = lua_newuserdatauv(L, sizeof *s, 0);
	memset(s, 0, sizeof *s);
	luaL_setmetatable(L, TRACE_META);
	char why[1024];
	int err = ft_trace_open(&s->t, &o, &ps, why, sizeof why);
	if (err)
		return ft_fail(L, err, "ft.trace: %s", why);
	s->open = true;
	return 1;
}

static int l_start(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	struct session *s = check_open(L);
	if (s->t.enabled)
		return luaL_error(L, "ft.trace session already started");
	ft_trace_start(&s->t);
	return 0;
}

static const char *event_name(const struct ft_trace *t, const struct ft_trace_event *e)
{
	if (e->kind == FT_TRACE_SWITCH_IN)
		return "switch:in";
	if (e->kind == FT_TRACE_SWITCH_OUT)
		return e->preempt ? "switch:preempt" : "switch:out";
	return t->opts.events[e->kind].name;
}

/* s:stop() -> {n, time = {}, name = {}, cpu = {}, tid = {}, lost, counts,
 * start_ns, stop_ns, ring_bytes, rings}: the events in time order, as
 * columns. */
static int l_stop(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	struct session *s = check_open(L);
	if (!s->t.enabled)
		return luaL_error(L, "ft.trace session not started");
	struct ft_trace *t = &s->t;
	ft_trace_stop(t);
	int n = (int)t->n;
	lua_createtable(L, 0, 12);
	ft_set_integer(L, "n", (int64_t)t->n);
	ft_set_integer(L, "lost", t->lost);
	ft_set_integer(L, "start_ns", t->start_ns);
	ft_set_integer(L, "stop_ns", t->stop_ns);
	ft_set_integer(L, "ring_bytes", (int64_t)t->opts.ring_bytes);
	ft_set_integer(L, "rings", t->n_rings);
	lua_createtable(L, 0, t->opts.n_events);
	for (int e = 0; e < t->opts.n_events; e++) {
		lua_pushinteger(L, t->counts[e]);
		lua_setfield(L, -2, t->opts.events[e].name);
	}
	lua_setfield(L, -2, "counts");
	static const char *const columns[] = { "time", "name", "cpu", "tid" };
	for (int c = 0; c < 4; c++) {
		lua_createtable(L, n, 0);
		for (int i = 0; i < n; i++) {
			const struct ft_trace_event *e = &t->events[i];
			switch (c) {
			case 0: lua_pushinteger(L, e->time); break;
			case 1: lua_pushstring(L, event_name(t, e)); break;
			case 2: lua_pushinteger(L, e->cpu); break;
			default: lua_pushinteger(L, e->tid); break;
			}
			lua_rawseti(L, -2, i + 1);
		}
		lua_setfield(L, -2, columns[c]);
	}
	return 1;
}

/* The samples at arg checked against the pass over b. */
static struct ft_samples *check_pass_samples(lua_State *L, int arg, const struct ft_buffer *b)
{
	struct ft_samples *s = ft_check_samples(L, arg);
	if (s->capacity < b->pages)
		luaL_argerror(L, arg, lua_pushfstring(L, "samples hold %I entries, the pass needs %I (one per page)",
		                                      (lua_Integer)s->capacity, (lua_Integer)b->pages));
	return s;
}

/* A timed pass's answer: ns, start_ns, scale, chunks = {{first =, start_ns =}}, end_ns. */
static int push_timing(lua_State *L, const struct ft_timer *timer, int64_t ns, uint64_t tsc0, int64_t start,
                       uint64_t tsc1, int64_t end, const int64_t *at, const int64_t *firsts, size_t k)
{
	double scale = 1;
	if (timer->kind == FT_TIMER_TSC && tsc1 > tsc0 && timer->ns_q32 > 0) {
		double ns_per_tick = (double)(end - start) / (double)(tsc1 - tsc0);
		scale = ns_per_tick / ((double)timer->ns_q32 / 4294967296.0);
	}
	lua_pushinteger(L, ns);
	lua_pushinteger(L, start);
	lua_pushnumber(L, scale);
	lua_createtable(L, (int)k, 0);
	for (size_t c = 0; c < k; c++) {
		lua_createtable(L, 0, 2);
		lua_pushinteger(L, firsts[c]);
		lua_setfield(L, -2, "first");
		lua_pushinteger(L, at[c]);
		lua_setfield(L, -2, "start_ns");
		lua_rawseti(L, -2, (lua_Integer)c + 1);
	}
	lua_pushinteger(L, end);
	return 5;
}

/* Written now, before the pass stores into it: n int64 entries (at least one). */
static int64_t *new_starts(lua_State *L, size_t n)
{
	int64_t *at = lua_newuserdatauv(L, (n ? n : 1) * sizeof *at, 0);
	memset(at, 0, (n ? n : 1) * sizeof *at);
	return at;
}

/* ft.touch_timed_at(b, value, samples) -> ns, start_ns, scale, chunks, end_ns:
 * b:touch_timed with what puts its samples on the clock of ft.trace's
 * events. The pass is walked in 64 MiB chunks as core/pass.c walks it,
 * and the time between two chunks is in no sample (a few microseconds
 * each, measured: a 256 MiB first touch's faults fell one page later per
 * chunk), so each chunk's start is read here on CLOCK_MONOTONIC, the
 * events' own clock, just before its kernel: chunks = {{first = page
 * index from 0, start_ns}, ...}. Page i of a
 * chunk ended at its start_ns + scale * (the chunk's samples up to i).
 * The samples are TSC ticks converted at the rate the timer was calibrated
 * at when the program started; CLOCK_MONOTONIC is slewed by NTP meanwhile,
 * so the rate is measured again over the pass from (TSC, CLOCK_MONOTONIC)
 * pairs taken just before and after it: scale is that rate over the
 * calibrated one (1 for the clock_gettime timer). end_ns is the clock after
 * the pass: the samples leave out the time the thread was off the CPU
 * between two pages, so start_ns + ns can end before the last fault. */
static int l_touch_timed_at(lua_State *L)
{
	ft_check_nargs(L, 3);
	struct ft_buffer *b = ft_check_buffer(L, 1);
	unsigned char v = ft_check_byte(L, 2);
	struct ft_samples *s = check_pass_samples(L, 3, b);
	const struct ft_timer *timer = ft_timer(L); /* calibrated before the pass */
	size_t nchunks = ft_pass_chunks(b), k;
	int64_t *at = new_starts(L, nchunks), *firsts = new_starts(L, nchunks);
	uint64_t tsc0, tsc1;
	int64_t start, end, ns;
	ft_tsc_pair(&tsc0, &start);
	int err = ft_pass_touch_timed_at(b, timer, v, s->v, at, &k, &ns);
	ft_tsc_pair(&tsc1, &end);
	s->n = b->pages;
	ft_samples_changed(s);
	if (err)
		return ft_stopped_error(L);
	for (size_t c = 0; c < k; c++)
		firsts[c] = (int64_t)(c * ft_pass_chunk_pages(b));
	return push_timing(L, timer, ns, tsc0, start, tsc1, end, at, firsts, k);
}

/* ft.touch_timed_walk(b, value, samples [, {stride =, backward =, shift =,
 * index =, pages =}]) -> as ft.touch_timed_at, over the walk's order
 * (core/pass.h): samples[j] is the j-th store's time, chunks' first the j
 * of each piece; pages: the span, the order over pages 0 to pages - 1
 * again and again, b.pages stores in all;
 * shift: the bytes (0 to 63) the kernel's samples sit off a 64-byte line
 * (samples keep a spare line for it: FT_SAMPLES_SPARE); index: an ft.samples that gets the page of each j, after the pass. */
static int l_touch_timed_walk(lua_State *L)
{
	static const struct ft_opt known[] = {
		{ "stride", FT_OPT_INTEGER, NULL, NULL },
		{ "backward", FT_OPT_BOOLEAN, NULL, NULL },
		{ "shift", FT_OPT_INTEGER, NULL, NULL },
		{ "index", FT_OPT_ANY, NULL, NULL },
		{ "pages", FT_OPT_INTEGER, NULL, NULL },
		{ NULL, 0, NULL, NULL }
	};
	ft_check_nargs(L, 4);
	struct ft_buffer *b = ft_check_buffer(L, 1);
	unsigned char v = ft_check_byte(L, 2);
	struct ft_samples *s = check_pass_samples(L, 3, b);
	int o = ft_check_opts(L, 4, "ft.touch_timed_walk", known);
	lua_Integer stride = lua_isnil(L, o) ? 1 : lua_tointeger(L, o);
	lua_Integer shift = lua_isnil(L, o + 2) ? 0 : lua_tointeger(L, o + 2);
	lua_Integer most = (lua_Integer)(b->pages ? b->pages : 1);
	lua_Integer span = lua_isnil(L, o + 4) ? most : lua_tointeger(L, o + 4);
	if (span < 1 || span > most)
		return luaL_error(L, "ft.touch_timed_walk option pages = %I: expected a number of pages from 1 to %I "
		                  "(the buffer's)", span, most);
	if (stride < 0 || stride > span)
		return luaL_error(L, "ft.touch_timed_walk option stride = %I: expected a number of pages from 0 "
		                  "(every store into page 0) to %I%s",
		                  stride, span, span < most ? " (the walk's pages)" : "");
	if (shift < 0 || shift > 63)
		return luaL_error(L, "ft.touch_timed_walk option shift = %I: expected bytes from 0 to 63", shift);
	struct ft_samples *index = NULL;
	if (!lua_isnil(L, o + 3)) {
		index = luaL_testudata(L, o + 3, FT_SAMPLES_META);
		if (!index || index->capacity < b->pages)
			return luaL_error(L, "ft.touch_timed_walk option index: expected an ft.samples of at least %I "
			                  "entries (one per page)", (lua_Integer)b->pages);
		if (index == s) /* the order would overwrite the times */
			return luaL_error(L, "ft.touch_timed_walk option index: the samples array itself; give another");
	}
	struct ft_walk w = { (size_t)stride, lua_toboolean(L, o + 1), (size_t)span };
	const struct ft_timer *timer = ft_timer(L);
	size_t nchunks = ft_pass_walk_chunks(b, &w), k;
	int64_t *at = new_starts(L, nchunks), *firsts = new_starts(L, nchunks);
	uint64_t tsc0, tsc1;
	int64_t start, end, ns;
	ft_tsc_pair(&tsc0, &start);
	int err = ft_pass_touch_timed_walk(b, timer, v, &w, (size_t)shift, s->v, at, firsts, &k, &ns);
	ft_tsc_pair(&tsc1, &end);
	s->n = b->pages;
	ft_samples_changed(s);
	if (err == ENOMEM)
		return ft_error_errno(L, err, "ft.touch_timed_walk: the walk's plan of %I pieces", (lua_Integer)nchunks);
	if (err)
		return ft_stopped_error(L);
	if (index) {
		ft_walk_order(&w, b->pages, index->v);
		index->n = b->pages;
		ft_samples_changed(index);
	}
	return push_timing(L, timer, ns, tsc0, start, tsc1, end, at, firsts, k);
}

/* ft.plant_dontneed(b, stride) -> pages advised | nil, message, errno */
static int l_plant_dontneed(lua_State *L)
{
	ft_check_nargs(L, 2);
	struct ft_buffer *b = ft_check_buffer(L, 1);
	lua_Integer stride = luaL_checkinteger(L, 2);
	luaL_argcheck(L, stride >= 1, 2, "stride must be a positive number of pages");
	size_t pages;
	int err = ft_trace_plant_dontneed(b, (size_t)stride, &pages);
	if (err)
		return ft_fail_errno(L, err, "madvise(dontneed) every %I pages failed", stride);
	lua_pushinteger(L, (lua_Integer)pages);
	return 1;
}

/* ft.affinity([cpus]) -> the calling thread's CPUs before the call; with a
 * list, the thread is moved onto those (a planted task shares one CPU with
 * the pass only if both are pinned). A refusal: nil, message, errno. */
static int l_affinity(lua_State *L)
{
	ft_check_nargs(L, 1);
	cpu_set_t old, set;
	if (sched_getaffinity(0, sizeof old, &old) != 0)
		return ft_fail_errno(L, errno, "sched_getaffinity failed");
	if (!lua_isnoneornil(L, 1)) {
		luaL_checktype(L, 1, LUA_TTABLE);
		CPU_ZERO(&set);
		lua_Integer n = luaL_len(L, 1);
		luaL_argcheck(L, n >= 1, 1, "expected a non-empty list of CPU numbers");
		for (lua_Integer i = 1; i <= n; i++) {
			lua_geti(L, 1, i);
			lua_Integer c = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : -1;
			if (c < 0 || c >= CPU_SETSIZE)
				return luaL_error(L, "ft.affinity: cpus[%I] must be a CPU number from 0 to %d", i,
				                  CPU_SETSIZE - 1);
			CPU_SET((int)c, &set);
			lua_pop(L, 1);
		}
		if (sched_setaffinity(0, sizeof set, &set) != 0)
			return ft_fail_errno(L, errno, "sched_setaffinity failed");
	}
	lua_newtable(L);
	lua_Integer k = 0;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &old)) {
			lua_pushinteger(L, c);
			lua_rawseti(L, -2, ++k);
		}
	}
	return 1;
}

/* the field kernel_excluded */
static int l_fields(lua_State *L)
{
	struct session *s = luaL_checkudata(L, 1, TRACE_META);
	if (strcmp(lua_tostring(L, 2), "kernel_excluded") != 0)
		return 0;
	lua_pushboolean(L, s->t.kernel_excluded);
	return 1;
}

static const luaL_Reg methods[] = {
	{ "start", l_start },
	{ "stop", l_stop },
	{ "close", l_close },
	{ NULL, NULL }
};

void ft_open_trace(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "trace", l_trace },
		{ "touch_timed_at", l_touch_timed_at },
		{ "touch_timed_walk", l_touch_timed_walk },
		{ "plant_dontneed", l_plant_dontneed },
		{ "affinity", l_affinity },
		{ NULL, NULL }
	};
	ft_new_resource_meta(L, TRACE_META, l_close, l_tostring, methods, l_fields);
	luaL_setfuncs(L, functions, 0);
}
