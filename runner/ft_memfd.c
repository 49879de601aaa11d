/* ft.memfd(bytes): a file in the page cache to map private or shared
 * (ft.mmap(n, {memfd = m, shared = ...})), so page-cache faults can be
 * measured beside anonymous ones. As with buffers, the userdata exists
 * closed before the file is made, and __gc is __close. */
#include <string.h>

#include <lauxlib.h>

#include "ft_lendable.h"
#include "ft_openers.h"

bool ft_memfd_is_open(const struct ft_lmemfd *lm)
{
	return lm->m.fd >= 0 && ((const struct ft_lmemfd *)lm->h.root)->m.fd >= 0;
}

static struct ft_lmemfd *check_lmemfd(lua_State *L, int arg)
{
	struct ft_lmemfd *lm = luaL_checkudata(L, arg, FT_MEMFD_META);
	if (!ft_memfd_is_open(lm))
		luaL_error(L, "memfd is closed");
	return lm;
}

struct ft_memfd *ft_check_memfd(lua_State *L, int arg)
{
	return &check_lmemfd(L, arg)->m;
}

struct ft_lmemfd *ft_push_memfd(lua_State *L)
{
	struct ft_lmemfd *lm = lua_newuserdatauv(L, sizeof *lm, 0);
	memset(lm, 0, sizeof *lm);
	lm->m.fd = -1;
	lm->h.root = &lm->h;
	lm->h.owns = true;
	luaL_setmetatable(L, FT_MEMFD_META);
	return lm;
}

/* ft.memfd(bytes) -> m: memfd_create + ftruncate; no page is in it yet. */
static int l_memfd(lua_State *L)
{
	ft_check_nargs(L, 1);
	lua_Integer bytes = ft_check_positive(L, 1, "size must be a positive number of bytes");
	struct ft_lmemfd *lm = ft_push_memfd(L);
	int err = ft_memfd_create(&lm->m, "ftrun", (size_t)bytes);
	if (err)
		return ft_fail_errno(L, err, "memfd of %I bytes failed", bytes);
	return 1;
}

/* m:close() -> true. Mappings made from it stay valid (they hold the
 * file); a new mapping of a closed memfd is an error. */
static int l_close(lua_State *L)
{
	ft_check_method_nargs(L, 1);
	struct ft_lmemfd *lm = check_lmemfd(L, 1);
	ft_check_releasable(L, &lm->h, "memfd", "closed");
	int err = ft_memfd_close(&lm->m);
	if (err)
		return ft_error_errno(L, err, "close of a memfd failed");
	lua_pushboolean(L, 1);
	return 1;
}

static int l_gc(lua_State *L)
{
	struct ft_lmemfd *lm = luaL_checkudata(L, 1, FT_MEMFD_META);
	if (lm->h.owns && lm->m.fd >= 0 && !lm->h.lent)
		ft_memfd_close(&lm->m);
	return 0;
}

static int l_tostring(lua_State *L)
{
	struct ft_lmemfd *lm = luaL_checkudata(L, 1, FT_MEMFD_META);
	if (ft_memfd_is_open(lm))
		lua_pushfstring(L, "ft.memfd (%s%I bytes, fd %d)", lm->h.view ? "view, " : "",
		                (lua_Integer)lm->m.bytes, lm->m.fd);
	else
		lua_pushliteral(L, "ft.memfd (closed)");
	return 1;
}

/* Fields: bytes, fd, closed, view. */
static int l_fields(lua_State *L)
{
	struct ft_lmemfd *lm = luaL_checkudata(L, 1, FT_MEMFD_META);
	const char *key = lua_tostring(L, 2);
	if (strcmp(key, "bytes") == 0)
		lua_pushinteger(L, (lua_Integer)lm->m.bytes);
	else if (strcmp(key, "fd") == 0)
		lua_pushinteger(L, lm->m.fd);
	else if (strcmp(key, "closed") == 0)
		lua_pushboolean(L, !ft_memfd_is_open(lm));
	else if (strcmp(key, "view") == 0)
		lua_pushboolean(L, lm->h.view);
	else
		return 0;
	return 1;
}

int ft_memfd_fd(lua_State *L, int idx)
{
	struct ft_lmemfd *lm = luaL_testudata(L, idx, FT_MEMFD_META);
	return lm && ft_memfd_is_open(lm) ? lm->m.fd : -1;
}

void ft_open_memfd(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{ "close", l_close },
		{ NULL, NULL }
	};
	ft_new_resource_meta(L, FT_MEMFD_META, l_gc, l_tostring, methods, l_fields);

	lua_pushcfunction(L, l_memfd);
	lua_setfield(L, -2, "memfd");
}
