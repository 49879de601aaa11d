/* The resources that can be lent to tasks, ft.mmap's and ft.malloc's
 * buffers (ft_buffer.c) and ft.memfd's files (ft_memfd.c), as the other
 * bindings and the crossing module (ft_values.c) see them. Each userdata
 * starts with struct ft_lendable (ft_aux.h): h.owns, __gc releases it;
 * h.view, a task's view, no release through it. */
#ifndef FT_RUNNER_LENDABLE_H
#define FT_RUNNER_LENDABLE_H

#include "../core/buffer.h"
#include "../core/memfd.h"
#include "ft_aux.h"

/* __gc unmaps or frees b (an owner, or a task process's own mapping of a
 * shared memfd). User value 1: the memfd a file mapping was made from. */
struct ft_lbuffer {
	struct ft_lendable h; /* first: lent and given back through it */
	struct ft_buffer b;
};

/* __gc closes the descriptor. */
struct ft_lmemfd {
	struct ft_lendable h; /* first: lent and given back through it */
	struct ft_memfd m;
};

/* The open object at arg (a released one is an error). */
struct ft_buffer *ft_check_buffer(lua_State *L, int arg);
struct ft_memfd *ft_check_memfd(lua_State *L, int arg);

/* Push an object that holds nothing yet, owner of itself. */
struct ft_lbuffer *ft_push_buffer(lua_State *L);
struct ft_lmemfd *ft_push_memfd(lua_State *L);

/* Whether it, and the owner it is a view of, still hold the resource. */
bool ft_buffer_is_open(const struct ft_lbuffer *lb);
bool ft_memfd_is_open(const struct ft_lmemfd *lm);

/* The descriptor of the open memfd at idx, else -1. */
int ft_memfd_fd(lua_State *L, int idx);

#endif
