/* ft.mmap's and ft.malloc's buffers, as the other bindings and the
 * crossing module see them. */
#ifndef FT_RUNNER_BUFFER_H
#define FT_RUNNER_BUFFER_H

#include "../core/buffer.h"
#include "ft_aux.h"

/* An open buffer (a released one is an error). */
struct ft_buffer *ft_check_buffer(lua_State *L, int arg);

/* A buffer as it crosses into a task: threads share the memory (root is
 * the main state's object, lent while the tasks run); a process inherits
 * fd, the memfd behind a shared mapping, and maps it itself. */
struct ft_buffer_wire {
	struct ft_buffer b;
	void *root;
	int fd;
};
/* Fills *w, or returns why the buffer cannot cross; adds to keep what
 * must be lent (threads) or inherited (processes). */
const char *ft_buffer_export(lua_State *L, int idx, enum ft_cross cross, int keep,
                             struct ft_buffer_wire *w);
/* Pushes a view: same methods, no unmap or free. */
void ft_buffer_import(lua_State *L, const struct ft_buffer_wire *w, enum ft_cross cross);

#endif
