/* ft.mmap's and ft.malloc's buffers, as the other bindings and the
 * crossing module (ft_values.c) see them. */
#ifndef FT_RUNNER_BUFFER_H
#define FT_RUNNER_BUFFER_H

#include "../core/buffer.h"
#include "ft_aux.h"

/* The userdata: h.owns, __gc releases b (an owner, or a task process's
 * own mapping of a shared memfd); h.view, no unmap or free through it.
 * User value 1: the memfd a file mapping was made from. */
struct ft_lbuffer {
	struct ft_lendable h; /* first: lent and given back through it */
	struct ft_buffer b;
};

/* An open buffer (a released one is an error). */
struct ft_buffer *ft_check_buffer(lua_State *L, int arg);
/* Pushes a buffer that holds nothing yet, owner of itself. */
struct ft_lbuffer *ft_push_buffer(lua_State *L);
/* Whether it, and the owner it is a view of, still hold the memory. */
bool ft_buffer_is_open(const struct ft_lbuffer *lb);

#endif
