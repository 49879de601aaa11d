/* The main state's ft module, in linit.c's role: ft.c knows every opener
 * and nothing else. */
#ifndef FT_RUNNER_FT_H
#define FT_RUNNER_FT_H

#include <lua.h>

#define FT_VERSION "0.1.0"

/* The main state's start: the standard libraries, then ft preloaded and
 * set as the global ft. (A task's state opens its own set: task.c.) */
void ft_open_libs(lua_State *L);

/* What --version prints: the version, Lua's, and the commit the binary was
 * built from, so an installed copy still says what it is. */
const char *ft_version_line(void);

#endif
