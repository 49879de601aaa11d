/* ft.memfd's objects, as the buffer and crossing modules see them. */
#ifndef FT_RUNNER_MEMFD_H
#define FT_RUNNER_MEMFD_H

#include "../core/memfd.h"
#include "ft_aux.h"

/* An open memfd (a closed one is an error). */
struct ft_memfd *ft_check_memfd(lua_State *L, int arg);

/* A memfd as it crosses into a task: threads share the descriptor (root
 * is the main state's object, lent while the tasks run); a process
 * inherits it under the same number. */
struct ft_memfd_wire {
	struct ft_memfd m;
	void *root;
};
/* Fills *w, or returns why the memfd cannot cross; adds it to keep (a
 * table of what must be lent or inherited). */
const char *ft_memfd_export(lua_State *L, int idx, enum ft_cross cross, int keep,
                            struct ft_memfd_wire *w);
/* Pushes a view: no close. */
void ft_memfd_import(lua_State *L, const struct ft_memfd_wire *w, enum ft_cross cross);
/* The descriptor of the open memfd at idx, else -1. */
int ft_memfd_fd(lua_State *L, int idx);

#endif
