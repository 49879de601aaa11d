/* The read-eval-print loop, after lua.c's: "return LINE" first so an
 * expression prints, more lines while a statement is unfinished, readline
 * with history and completion on a terminal. */
#ifndef FT_RUNNER_REPL_H
#define FT_RUNNER_REPL_H

#include <lua.h>

/* How main runs a chunk (under its message handler and SIGINT hook) and
 * reports a failure; the REPL uses both, as lua.c's doREPL does. */
typedef int (*ft_docall)(lua_State *L, int narg, int nres);
typedef int (*ft_report)(lua_State *L, int status);

/* Reads stdin to its end. Piped stdin is a REPL too, not a script (lua.c
 * runs it as one): `echo 'ft.page_size()' | ftrun` prints 4096, each
 * statement runs as it completes, and an error does not end the rest.
 * `ftrun -` runs stdin as one script. */
void ft_repl(lua_State *L, ft_docall docall, ft_report report);

#endif
