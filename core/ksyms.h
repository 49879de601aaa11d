/* Kernel symbol names for instruction pointers: the text symbols of
 * /proc/kallsyms, sorted by address, found by binary search. */
#ifndef FT_KSYMS_H
#define FT_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ft_ksym {
	uint64_t addr;
	uint32_t name;  /* offset into names */
};

struct ft_ksyms {
	struct ft_ksym *syms;
	size_t n;
	char *names;
	bool hidden;    /* every address read as 0: kptr_restrict hides them */
};

/* Reads path (/proc/kallsyms). Returns 0 or errno. */
int ft_ksyms_load(struct ft_ksyms *k, const char *path);
void ft_ksyms_free(struct ft_ksyms *k);

/* The symbol holding addr (the last one at or below it), or NULL below
 * the first. */
const struct ft_ksym *ft_ksyms_find(const struct ft_ksyms *k, uint64_t addr);

static inline const char *ft_ksym_name(const struct ft_ksyms *k, const struct ft_ksym *s)
{
	return k->names + s->name;
}

#endif
