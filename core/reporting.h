/* The guest's free page reporting module (page_reporting): the pages the
 * guest hands back to the host while free, which the host must supply again
 * at their next first touch. Its parameters are machine settings like THP's,
 * so a write goes through the restore log (restore.h); its counters are read
 * around every pass. Functions return 0 or an errno value (ENOENT: no such
 * module in this kernel). */
#ifndef FT_REPORTING_H
#define FT_REPORTING_H

#include <stddef.h>
#include <stdint.h>

#define FT_REPORTING_DIR "/sys/module/page_reporting/parameters"

/* The writable parameters, then the counters; NULL-terminated. */
extern const char *const ft_reporting_params[];
extern const char *const ft_reporting_counters[];

/* FT_REPORTING_DIR/<name>. */
void ft_reporting_file(char *out, size_t len, const char *name);

/* A parameter's or counter's value as text ("Y", "9", ...). */
int ft_reporting_read(const char *name, char *value, size_t len);

/* reported_kib: the KiB handed back to the host since boot. */
int ft_reporting_kib(int64_t *kib);

/* Sets a writable parameter (EINVAL for any other name); *before gets
 * what it was. */
int ft_reporting_set(const char *name, const char *value, char *before, size_t len);

#endif
