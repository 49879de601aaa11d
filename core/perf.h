/* perf_event_open(2) and the settings that decide what it may see:
 * kernel.perf_event_paranoid, kernel.kptr_restrict,
 * kernel.perf_event_max_sample_rate and the process's capabilities. The
 * sysctl directory is a parameter so a test can point it at fake values. */
#ifndef FT_PERF_H
#define FT_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define FT_PROC_SYS_KERNEL "/proc/sys/kernel"

/* glibc has no wrapper. Returns the fd, or -1 with errno set. */
int ft_perf_open(struct perf_event_attr *attr, int group_fd);

/* An attr of this kernel's size for one event, every other field 0. */
struct perf_event_attr ft_perf_attr(uint32_t type, uint64_t config);

enum { FT_SETTING_UNREADABLE = -1000 };

struct ft_perf_settings {
	char dir[256];          /* where the three values were read */
	int paranoid;           /* FT_SETTING_UNREADABLE when missing */
	int kptr_restrict;
	int max_sample_rate;
	/* why each could not be read (EINVAL: not a number), else 0 */
	int paranoid_err, kptr_restrict_err, max_sample_rate_err;
	bool cap_perfmon;       /* CAP_PERFMON or CAP_SYS_ADMIN: paranoid does not apply */
	bool cap_syslog;        /* CAP_SYSLOG: kallsyms addresses with kptr_restrict <= 1 */
};

/* dir NULL: /proc/sys/kernel. */
void ft_perf_settings_read(struct ft_perf_settings *s, const char *dir);

/* A setting's value as text for a message: "2", or "(could not be read:
 * REASON)" when it was not read, so no value is ever given as a cause. */
const char *ft_perf_setting_text(int value, int err, char *buf, size_t size);

/* Whether this process may open events that see the kernel (kernel = true)
 * or only its own user space: a cpu-clock event is opened and closed.
 * 0, or the errno with why explained as ft_perf_explain does. The settings
 * only explain a refusal, never predict one: perf_event_paranoid 3 refuses
 * user space on Debian's kernels and means 2 on others. */
int ft_perf_try(const struct ft_perf_settings *s, bool kernel, char *why, size_t size);

/* Whether /proc/kallsyms shows this process real addresses; else why. */
bool ft_kallsyms_allowed(const struct ft_perf_settings *s, char *why, size_t size);

/* The reason an open of `what` failed with err, in words: for EACCES and
 * EPERM the setting, its value and what it must be, when the settings
 * account for the refusal. */
void ft_perf_explain(const struct ft_perf_settings *s, int err, const char *what,
                     bool kernel, char *why, size_t size);

#endif
