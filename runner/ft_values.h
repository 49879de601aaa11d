/* Values between Lua states (the crossing module): plain values encoded
 * into bytes in one state and decoded in another, buffers and memfds as
 * views, and the lending that keeps an owner alive while its views run. */
#ifndef FT_RUNNER_VALUES_H
#define FT_RUNNER_VALUES_H

#include <stddef.h>

#include "ft_aux.h"

struct ft_blob {
	char *p;
	size_t n, cap;
};

/* A blob owned by a userdata pushed on the stack, so an error while
 * encoding leaks nothing; ft_blob_take hands its bytes to the caller. */
struct ft_blob *ft_blob_push(lua_State *L);
char *ft_blob_take(struct ft_blob *b, size_t *n);

/* Appends the value at idx. keep: a table that collects every buffer and
 * memfd that crossed (as keys), for lending; 0 when none may cross. An
 * offending value raises "what: PATH is ...", PATH naming where it sits
 * (args[2].x[3]). */
void ft_values_encode(lua_State *L, int idx, enum ft_cross cross, int keep, const char *what,
                      struct ft_blob *out);
/* Pushes the one value encoded in [p, p+n). */
void ft_values_decode(lua_State *L, const char *p, size_t n, enum ft_cross cross);

/* Lends (+1) or gives back (-1) every buffer and memfd of a keep table:
 * while lent, the main state cannot unmap, free or close them. */
void ft_values_lend(lua_State *L, int keep, int delta);
/* The descriptors a task process inherits for the memfds of a keep table,
 * into fds (at most max); returns how many, or -1 when there are more. */
int ft_values_kept_fds(lua_State *L, int keep, int *fds, int max);

#endif
