#include "perf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int ft_perf_open(struct perf_event_attr *attr, int group_fd)
{
	/* this thread (pid 0) on any CPU (-1) */
	return (int)syscall(SYS_perf_event_open, attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

struct perf_event_attr ft_perf_attr(uint32_t type, uint64_t config)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = type;
	attr.config = config;
	return attr;
}

static int read_setting(const char *dir, const char *name, int *err)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f) {
		*err = errno;
		return FT_SETTING_UNREADABLE;
	}
	int v;
	*err = 0;
	if (fscanf(f, "%d", &v) != 1) {
		*err = ferror(f) ? errno : EINVAL;
		v = FT_SETTING_UNREADABLE;
	}
	fclose(f);
	return v;
}

const char *ft_perf_setting_text(int value, int err, char *buf, size_t size)
{
	if (value == FT_SETTING_UNREADABLE)
		snprintf(buf, size, "(could not be read: %s)",
		         err == EINVAL ? "not a number" : strerror(err ? err : EIO));
	else
		snprintf(buf, size, "%d", value);
	return buf;
}

/* CapEff of /proc/self/status: the capabilities in force. */
static uint64_t effective_caps(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 0;
	char line[256];
	uint64_t caps = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "CapEff: %" SCNx64, &caps) == 1)
			break;
	fclose(f);
	return caps;
}

enum { CAP_SYS_ADMIN_BIT = 21, CAP_SYSLOG_BIT = 34, CAP_PERFMON_BIT = 38 };

void ft_perf_settings_read(struct ft_perf_settings *s, const char *dir)
{
	memset(s, 0, sizeof *s);
	snprintf(s->dir, sizeof s->dir, "%s", dir ? dir : FT_PROC_SYS_KERNEL);
	s->paranoid = read_setting(s->dir, "perf_event_paranoid", &s->paranoid_err);
	s->kptr_restrict = read_setting(s->dir, "kptr_restrict", &s->kptr_restrict_err);
	s->max_sample_rate = read_setting(s->dir, "perf_event_max_sample_rate", &s->max_sample_rate_err);
	uint64_t caps = effective_caps();
	s->cap_perfmon = caps & (1ull << CAP_PERFMON_BIT | 1ull << CAP_SYS_ADMIN_BIT);
	s->cap_syslog = caps & (1ull << CAP_SYSLOG_BIT);
}

/* Whether the settings account for a refusal of events that see the kernel
 * (kernel = true) or only this process's user space; else the reason. */
static bool settings_allow(const struct ft_perf_settings *s, bool kernel, char *why, size_t size)
{
	why[0] = '\0';
	if (s->cap_perfmon)
		return true; /* CAP_PERFMON (or CAP_SYS_ADMIN) is not subject to paranoid */
	if (s->paranoid == FT_SETTING_UNREADABLE) {
		/* missing from the real /proc/sys is the kernel's answer; anywhere
		 * else (a FTRUN_PROC_SYS stand-in) nothing is known of the setting */
		if (s->paranoid_err == ENOENT && strcmp(s->dir, FT_PROC_SYS_KERNEL) == 0)
			snprintf(why, size, "%s/perf_event_paranoid is missing: the kernel has no "
			         "perf events (CONFIG_PERF_EVENTS)", s->dir);
		else
			snprintf(why, size, "%s/perf_event_paranoid could not be read (%s): the "
			         "setting that refused it is not known", s->dir, s->paranoid_err == EINVAL
			         ? "not a number" : strerror(s->paranoid_err ? s->paranoid_err : EIO));
		return false;
	}
	/* 2: own user space only; 3 and above: nothing at all on kernels with
	 * Debian's patch, the same as 2 on others (hence only an explanation) */
	if (s->paranoid >= 3 || (kernel && s->paranoid >= 2)) {
		snprintf(why, size, "%s/perf_event_paranoid is %d: %s needs it at %d or below "
		         "(or CAP_PERFMON)", s->dir, s->paranoid,
		         kernel ? "sampling the kernel" : "perf events in user space", kernel ? 1 : 2);
		return false;
	}
	return true;
}

bool ft_kallsyms_allowed(const struct ft_perf_settings *s, char *why, size_t size)
{
	why[0] = '\0';
	int k = s->kptr_restrict;
	if (k == FT_SETTING_UNREADABLE || k == 0) {
		/* kptr_restrict 0 shows addresses to everyone perf may show the
		 * kernel to: CAP_SYSLOG, or perf_event_paranoid <= 1 */
		if (s->cap_syslog || (s->paranoid != FT_SETTING_UNREADABLE && s->paranoid <= 1))
			return true;
		char k_text[96], p_text[96];
		ft_perf_setting_text(k, s->kptr_restrict_err, k_text, sizeof k_text);
		ft_perf_setting_text(s->paranoid, s->paranoid_err, p_text, sizeof p_text);
		snprintf(why, size, "/proc/kallsyms hides kernel addresses: %s/kptr_restrict is %s "
		         "but %s/perf_event_paranoid is %s; it must be 1 or below (or CAP_SYSLOG)",
		         s->dir, k_text, s->dir, p_text);
		return false;
	}
	if (k == 1 && s->cap_syslog)
		return true;
	snprintf(why, size, "/proc/kallsyms hides kernel addresses: %s/kptr_restrict is %d; "
	         "it must be %s", s->dir, k, k >= 2 ? "1 or below (with CAP_SYSLOG, or 0 for others)"
	         : "0 without CAP_SYSLOG");
	return false;
}

static bool has_cpu_pmu(void)
{
	struct stat st;
	return stat("/sys/bus/event_source/devices/cpu", &st) == 0 ||
	       stat("/sys/bus/event_source/devices/cpu_core", &st) == 0;
}

void ft_perf_explain(const struct ft_perf_settings *s, int err, const char *what,
                     bool kernel, char *why, size_t size)
{
	if (err == EACCES || err == EPERM) {
		char reason[512];
		if (!settings_allow(s, kernel, reason, sizeof reason))
			snprintf(why, size, "%s: %s", what, reason);
		else
			snprintf(why, size, "%s: %s, with %s/perf_event_paranoid %s (a seccomp filter or "
			         "a security module may forbid perf_event_open)", what, strerror(err),
			         s->dir, ft_perf_setting_text(s->paranoid, s->paranoid_err, reason,
			                                      sizeof reason));
	} else if ((err == ENOENT || err == ENODEV || err == EOPNOTSUPP) && !has_cpu_pmu()) {
		snprintf(why, size, "%s: %s: no hardware PMU (no cpu in "
		         "/sys/bus/event_source/devices: a guest without a virtual PMU)",
		         what, strerror(err));
	} else if (err == ENOSYS) {
		snprintf(why, size, "%s: the kernel has no perf_event_open (CONFIG_PERF_EVENTS)", what);
	} else {
		snprintf(why, size, "%s: %s", what, strerror(err));
	}
}

int ft_perf_try(const struct ft_perf_settings *s, bool kernel, char *why, size_t size)
{
	struct perf_event_attr attr = ft_perf_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.disabled = 1;
	attr.exclude_kernel = !kernel;
	attr.exclude_hv = 1;
	why[0] = '\0';
	int fd = ft_perf_open(&attr, -1);
	if (fd < 0) {
		int err = errno;
		ft_perf_explain(s, err, "perf_event_open (cpu-clock)", kernel, why, size);
		return err;
	}
	close(fd);
	return 0;
}
