#include "ft.h"

#include <string.h>

#include "ft_aux.h"
#include "ft_openers.h"

#ifndef FT_CFLAGS
#define FT_CFLAGS "unknown"
#endif
#ifndef FT_GIT_COMMIT
#define FT_GIT_COMMIT "unknown"
#define FT_GIT_DIRTY 0
#endif
#if FT_GIT_DIRTY
#define FT_GIT_TREE "built from a changed tree"
#else
#define FT_GIT_TREE "built from a clean tree"
#endif

const char *ft_version_line(void)
{
	if (strcmp(FT_GIT_COMMIT, "unknown") == 0)
		return "ftrun " FT_VERSION " (" LUA_RELEASE "), commit unknown (not built in a git checkout)";
	return "ftrun " FT_VERSION " (" LUA_RELEASE "), commit " FT_GIT_COMMIT " (" FT_GIT_TREE ")";
}

/* ft.version, and how this binary was built, for every run's provenance. */
static void open_build(lua_State *L)
{
	ft_set_string(L, "version", FT_VERSION);
	lua_createtable(L, 0, 4);
#ifdef __clang__
	ft_set_string(L, "compiler", __VERSION__);
#else
	ft_set_string(L, "compiler", "gcc " __VERSION__);
#endif
	ft_set_string(L, "cflags", FT_CFLAGS);
	ft_set_string(L, "commit", FT_GIT_COMMIT);
	lua_pushboolean(L, FT_GIT_DIRTY);
	lua_setfield(L, -2, "dirty");
	lua_setfield(L, -2, "build");
}

static const ft_opener openers[] = {
	ft_open_buffer, ft_open_memfd, ft_open_samples, ft_open_timer, ft_open_system,
	ft_open_files, ft_open_parallel, ft_open_tasks, ft_open_hugepages, ft_open_counters,
	ft_open_profile, ft_open_trace, ft_open_reporting, ft_open_floor, open_build, NULL
};

void ft_open_libs(lua_State *L)
{
	ft_open_state(L, openers);
}
