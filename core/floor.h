/* The hardware floor under a first touch: what zeroing 4 KiB, a trap into
 * the fault handler and one page-table update cost on this CPU with no
 * bookkeeping around them. Measured C only: each function times a loop of
 * many operations and returns the total, so the clock's own cost is spread
 * over them. Functions return 0 or an errno value (ENOTSUP: this CPU lacks
 * the instruction; EINTR: a SIGINT or the task's stop ended the loop, which
 * looks at the flag every few hundred operations, core/interrupt.h). */
#ifndef FT_FLOOR_H
#define FT_FLOOR_H

#include <stddef.h>
#include <stdint.h>

#define FT_FLOOR_BLOCK 4096 /* the bytes zeroed per operation: one 4 KiB page */

/* The ways the kernel zeroes a page: rep stosb (clear_page_erms, what an
 * ERMS/FSRM CPU uses), clzero (AMD, one cache line per instruction) and
 * non-temporal 8-byte stores (movnti, the pre-zeroing pools' choice). */
enum ft_zero_method { FT_ZERO_REP_STOSB, FT_ZERO_CLZERO, FT_ZERO_MOVNTI, FT_ZERO_METHODS };
extern const char *const ft_zero_method_names[]; /* NULL-ended, in the enum's order */

/* Whether this CPU has the method's instruction (cpuid), and why not. */
int ft_zero_available(enum ft_zero_method method, const char **why);

/* Zeroes count blocks of 4 KiB with method and times them.
 * cold: a region of count blocks, each zeroed once, in address order,
 *   after a sweep that wrote the whole region: every block was last
 *   written a region ago, so with a region several times the last-level
 *   cache its lines are in memory, not in any cache.
 * warm: one block zeroed count times after one untimed zeroing: its lines
 *   are in the first-level cache.
 * *ns gets the timed loop's wall time (CLOCK_MONOTONIC). The region is
 * mapped here and unmapped before returning. */
int ft_zero_blocks(enum ft_zero_method method, int cold, size_t count, int64_t *ns);

/* Minor faults: one access to each of pages pages in address order,
 * every access faulting once into a handler that neither allocates nor
 * zeroes.
 *   zero_page: a read of a fresh anonymous private mapping (no THP): the
 *     handler maps the shared zero page, one read-only PTE.
 *   shmem_write: a write to a shared mapping of a memfd whose pages were
 *     written through pwrite (present and up to date in the page cache):
 *     the handler finds the page and sets one writable PTE, marking the
 *     page dirty and the file's time updated.
 *   shmem_read: a read of the same: the handler maps the page and, by
 *     fault-around, up to fault_around_bytes of its neighbours, so fewer
 *     faults than pages.
 * *ns: the timed loop; *faults: the thread's minor faults around it
 * (getrusage), the control that the loop reached the fault handler;
 * *resident: the growth of the process's resident pages over the loop
 * (/proc/self/statm; INT64_MIN where it cannot be read), the control that the
 * zero page's faults allocated nothing (the shared zero page is not
 * counted resident; a mapped memfd page is). */
enum ft_minor_kind { FT_MINOR_ZERO_PAGE, FT_MINOR_SHMEM_WRITE, FT_MINOR_SHMEM_READ, FT_MINOR_KINDS };
extern const char *const ft_minor_kind_names[]; /* NULL-ended, in the enum's order */

int ft_minor_faults(enum ft_minor_kind kind, size_t pages, int64_t *ns, int64_t *faults, int64_t *resident);

/* The kernel entry and exit alone: count getppid system calls (never
 * cached by libc), timed. */
int ft_syscalls(size_t count, int64_t *ns);

#endif
