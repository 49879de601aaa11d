/* ft.samples(n): a C array of integers with the statistics of core/samples. */
#include <string.h>

#include <lauxlib.h>

#include "ft_openers.h"
#include "ft_samples.h"

#define SAMPLES_META FT_SAMPLES_META

struct ft_samples *ft_check_samples(lua_State *L, int arg)
{
	struct ft_samples *s = luaL_checkudata(L, arg, SAMPLES_META);
	if (!s->v)
		luaL_error(L, "samples are released");
	return s;
}

static struct ft_samples *check_nonempty(lua_State *L)
{
	struct ft_samples *s = ft_check_samples(L, 1);
	if (s->n == 0)
		luaL_error(L, "samples are empty");
	return s;
}

static int l_samples(lua_State *L)
{
	ft_check_nargs(L, 1);
	lua_Integer n = ft_check_positive(L, 1, "count must be a positive integer");
	struct ft_samples *s = lua_newuserdatauv(L, sizeof *s, 0);
	memset(s, 0, sizeof *s);
	luaL_setmetatable(L, SAMPLES_META);
	if (ft_samples_init(s, (size_t)n))
		return luaL_error(L, "cannot allocate %I samples", n);
	return 1;
}

static lua_Integer check_threshold(lua_State *L)
{
	ft_check_method_nargs(L, 2);
	return luaL_checkinteger(L, 2);
}

static int l_min(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	lua_pushinteger(L, ft_samples_min(check_nonempty(L)));
	return 1;
}

static int l_max(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	lua_pushinteger(L, ft_samples_max(check_nonempty(L)));
	return 1;
}

static int push_percentile(lua_State *L, struct ft_samples *s, double p)
{
	bool ok;
	int64_t v = ft_samples_percentile(s, p, &ok);
	if (!ok)
		return luaL_error(L, "cannot allocate the sorted copy of %I samples",
		                  (lua_Integer)s->n);
	lua_pushinteger(L, v);
	return 1;
}

static int l_percentile(lua_State *L)
{
	ft_check_method_nargs(L, 2);
	struct ft_samples *s = check_nonempty(L);
	double p = luaL_checknumber(L, 2);
	luaL_argcheck(L, p >= 0 && p <= 100, 2, "percentile must be within 0 to 100");
	return push_percentile(L, s, p);
}

static int l_median(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	return push_percentile(L, check_nonempty(L), 50);
}

static int l_count_above(lua_State *L)
{
	lua_Integer t = check_threshold(L);
	lua_pushinteger(L, (lua_Integer)ft_samples_count_above(ft_check_samples(L, 1), t));
	return 1;
}

static int l_mean_above(lua_State *L)
{
	lua_Integer t = check_threshold(L);
	lua_pushnumber(L, ft_samples_mean_above(ft_check_samples(L, 1), t));
	return 1;
}

/* s:runs_above(t) -> number of contiguous runs above t, longest run */
static int l_runs_above(lua_State *L)
{
	lua_Integer t = check_threshold(L);
	size_t runs, longest;
	ft_samples_runs_above(ft_check_samples(L, 1), t, &runs, &longest);
	lua_pushinteger(L, (lua_Integer)runs);
	lua_pushinteger(L, (lua_Integer)longest);
	return 2;
}

/* s:histogram(per_octave, from_log2, bins) -> {counts...}: log-spaced bins,
 * the first below 2^from_log2 ns, the last everything beyond. */
static int l_histogram(lua_State *L)
{
	ft_check_method_nargs(L, 4);
	struct ft_samples *s = ft_check_samples(L, 1);
	lua_Integer per = luaL_checkinteger(L, 2), from = luaL_checkinteger(L, 3), bins = luaL_checkinteger(L, 4);
	luaL_argcheck(L, per >= 1 && per <= 64, 2, "bins per octave must be within 1 to 64");
	luaL_argcheck(L, from >= 0 && from <= 40, 3, "the first edge must be within 2^0 to 2^40 ns");
	luaL_argcheck(L, bins >= 2 && bins <= 4096, 4, "the bin count must be within 2 to 4096");
	int64_t *counts = lua_newuserdatauv(L, (size_t)bins * sizeof *counts, 0);
	ft_samples_log_histogram(s, (int)per, (int)from, (size_t)bins, counts);
	lua_createtable(L, (int)bins, 0);
	for (lua_Integer k = 0; k < bins; k++) {
		lua_pushinteger(L, counts[k]);
		lua_rawseti(L, -2, k + 1);
	}
	return 1;
}

/* s:pack_i32() -> the samples as a string of little-endian int32, clamped
 * to its range (the file a page map is drawn from). */
static int l_pack_i32(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	struct ft_samples *s = ft_check_samples(L, 1);
	luaL_Buffer b;
	unsigned char *out = (unsigned char *)luaL_buffinitsize(L, &b, 4 * s->n);
	ft_samples_pack_i32(s, out);
	luaL_pushresultsize(&b, 4 * s->n);
	return 1;
}

static size_t check_index(lua_State *L, struct ft_samples *s)
{
	lua_Integer i = luaL_checkinteger(L, 2);
	if (i < 1 || (size_t)i > s->n)
		luaL_error(L, "sample index %I out of range 1..%I", i, (lua_Integer)s->n);
	return (size_t)i - 1;
}

static const luaL_Reg methods[] = {
	{ "min", l_min },
	{ "max", l_max },
	{ "median", l_median },
	{ "percentile", l_percentile },
	{ "count_above", l_count_above },
	{ "mean_above", l_mean_above },
	{ "runs_above", l_runs_above },
	{ "histogram", l_histogram },
	{ "pack_i32", l_pack_i32 },
	{ NULL, NULL }
};

/* s[i] for integers, methods for names. */
static int l_index(lua_State *L)
{
	struct ft_samples *s = ft_check_samples(L, 1);
	if (lua_type(L, 2) == LUA_TSTRING) {
		lua_pushvalue(L, 2);
		if (lua_rawget(L, lua_upvalueindex(1)) == LUA_TNIL)
			return luaL_error(L, "ft.samples has no method '%s'", lua_tostring(L, 2));
		return 1;
	}
	lua_pushinteger(L, s->v[check_index(L, s)]);
	return 1;
}

static int l_newindex(lua_State *L)
{
	struct ft_samples *s = ft_check_samples(L, 1);
	size_t i = check_index(L, s);
	s->v[i] = luaL_checkinteger(L, 3);
	ft_samples_changed(s);
	return 0;
}

static int l_len(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)ft_check_samples(L, 1)->n);
	return 1;
}

static int l_gc(lua_State *L)
{
	ft_samples_free(luaL_checkudata(L, 1, SAMPLES_META));
	return 0;
}

static int l_tostring(lua_State *L)
{
	struct ft_samples *s = luaL_checkudata(L, 1, SAMPLES_META);
	lua_pushfstring(L, "ft.samples (%I of %I)", (lua_Integer)s->n, (lua_Integer)s->capacity);
	return 1;
}

void ft_open_samples(lua_State *L)
{
	ft_new_resource_meta(L, SAMPLES_META, l_gc, l_tostring, NULL, NULL);
	luaL_getmetatable(L, SAMPLES_META);
	luaL_newlib(L, methods);
	lua_pushcclosure(L, l_index, 1); /* s[i] as well as methods */
	lua_setfield(L, -2, "__index");
	static const luaL_Reg meta[] = {
		{ "__newindex", l_newindex }, { "__len", l_len }, { NULL, NULL }
	};
	luaL_setfuncs(L, meta, 0);
	lua_pop(L, 1);
	lua_pushcfunction(L, l_samples);
	lua_setfield(L, -2, "samples");
}
