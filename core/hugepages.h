/* The page sizes anonymous memory can be faulted in, beyond the base page:
 * multi-size THP folios (/sys/kernel/mm/transparent_hugepage/hugepages-NkB/,
 * the PMD size among them) and hugetlb pools (/sys/kernel/mm/hugepages/
 * hugepages-NkB/). Every write goes through the restore log (restore.h).
 * Functions return 0 or an errno value; ft_folio_file and ft_hugetlb_file
 * name the file a message should mention. */
#ifndef FT_HUGEPAGES_H
#define FT_HUGEPAGES_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"

#define FT_THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define FT_HUGETLB_DIR "/sys/kernel/mm/hugepages"

enum { FT_SIZES_MAX = 32 };

/* FT_THP_DIR/hugepages-<kb>kB/<name>, or FT_THP_DIR/<name> when kb is 0. */
void ft_folio_file(char *out, size_t len, size_t kb, const char *name);
void ft_hugetlb_file(char *out, size_t len, size_t kb, const char *name);

/* The folio sizes the kernel offers for anonymous faults, ascending: the
 * hugepages-NkB entries that have an `enabled` file (an order-1 entry may
 * exist for shmem alone, without one). */
int ft_folio_sizes(size_t kb[FT_SIZES_MAX], size_t *n);

/* A size's own setting (never, madvise, always, inherit); kb 0: the
 * top-level `enabled`, which "inherit" follows. */
int ft_folio_enabled(size_t kb, char *value, size_t len);

/* Every counter in hugepages-<kb>kB/stats/ (anon_fault_alloc, ...). */
int ft_folio_stats(size_t kb, ft_counter_fn fn, void *ctx);

/* Sets one size's `enabled`; *before gets what it was. */
int ft_folio_set(size_t kb, const char *value, char *before, size_t len);

/* The hugetlb page sizes the kernel has pools for, ascending. */
int ft_hugetlb_sizes(size_t kb[FT_SIZES_MAX], size_t *n);

struct ft_hugetlb {
	int64_t nr, free, resv, surplus, overcommit;
};

/* *failed: the name of the file that could not be read. */
int ft_hugetlb_read(size_t kb, struct ft_hugetlb *h, const char **failed);

/* Sets nr_hugepages; *before gets what it was. The kernel may grant
 * fewer pages than asked without an error: read the pool back. */
int ft_hugetlb_set(size_t kb, int64_t nr, int64_t *before);

/* One line on stderr for each THP size whose enabled setting differs from
 * the kernel's boot default (inherit for the PMD size, never for the
 * others), unless a run holding the settings lock explains it or a boot
 * option set them. Returns how many. */
int ft_folio_warn_unexpected(void);

#endif
