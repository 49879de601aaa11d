#include "ksyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_addr(const void *a, const void *b)
{
	const struct ft_ksym *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Appends s to a growing array: 0 or ENOMEM. */
static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t cap2 = *cap ? *cap * 2 : 4096;
	while (cap2 < need)
		cap2 *= 2;
	void *q = realloc(*p, cap2 * size);
	if (!q)
		return ENOMEM;
	*p = q;
	*cap = cap2;
	return 0;
}

int ft_ksyms_load(struct ft_ksyms *k, const char *path)
{
	memset(k, 0, sizeof *k);
	FILE *f = fopen(path, "r");
	if (!f)
		return errno;
	size_t cap = 0, names_len = 0, names_cap = 0;
	bool any_address = false;
	char line[512];
	int err = 0;
	while (!err && fgets(line, sizeof line, f)) {
		/* "ffffffff81000000 T _text" or "... t name\t[module]": parsed
		 * by hand, sscanf made the 120 000 lines take 100 ms */
		char *end;
		unsigned long long addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		char type = end[1], *name = end + 3;
		any_address |= addr != 0;
		/* text only; __pfx_ symbols are the padding before a function */
		if ((type != 't' && type != 'T' && type != 'w' && type != 'W') ||
		    strncmp(name, "__pfx_", 6) == 0)
			continue;
		name[strcspn(name, "\n")] = '\0';
		for (char *tab = strchr(name, '\t'); tab; tab = strchr(tab, '\t'))
			*tab = ' ';
		size_t len = strlen(name) + 1;
		if ((err = grow((void **)&k->syms, &cap, k->n + 1, sizeof *k->syms)) ||
		    (err = grow((void **)&k->names, &names_cap, names_len + len, 1)))
			break;
		memcpy(k->names + names_len, name, len);
		k->syms[k->n++] = (struct ft_ksym){ addr, (uint32_t)names_len };
		names_len += len;
	}
	if (!err && ferror(f))
		err = EIO;
	fclose(f);
	if (err) {
		ft_ksyms_free(k);
		return err;
	}
	k->hidden = !any_address;
	qsort(k->syms, k->n, sizeof *k->syms, by_addr);
	return 0;
}

void ft_ksyms_free(struct ft_ksyms *k)
{
	free(k->syms);
	free(k->names);
	memset(k, 0, sizeof *k);
}

const struct ft_ksym *ft_ksyms_find(const struct ft_ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n; /* the answer is below hi */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &k->syms[lo - 1] : NULL;
}
