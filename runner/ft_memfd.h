/* ft.memfd's objects, as the buffer and crossing modules see them. */
#ifndef FT_RUNNER_MEMFD_H
#define FT_RUNNER_MEMFD_H

#include "../core/memfd.h"
#include "ft_aux.h"

/* The userdata: h.owns, __gc closes the descriptor; h.view, no close. */
struct ft_lmemfd {
	struct ft_lendable h; /* first: lent and given back through it */
	struct ft_memfd m;
};

/* An open memfd (a closed one is an error). */
struct ft_memfd *ft_check_memfd(lua_State *L, int arg);
/* Pushes a memfd with no descriptor yet, owner of itself. */
struct ft_lmemfd *ft_push_memfd(lua_State *L);
bool ft_memfd_is_open(const struct ft_lmemfd *lm);
/* The descriptor of the open memfd at idx, else -1. */
int ft_memfd_fd(lua_State *L, int idx);

#endif
