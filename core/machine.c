#include "machine.h"

#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* strings here are truncated on purpose: a description, not a key */
static void copy(char *out, size_t size, const char *in)
{
	size_t n = strnlen(in, size - 1);
	memcpy(out, in, n);
	out[n] = '\0';
}

/* A regular file opened for reading, or NULL with errno set: a FIFO or a
 * device under FTRUN_MACHINE_ROOT would hang the open or never end. */
static FILE *open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	int err = fstat(fd, &st) != 0 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
	if (err) {
		close(fd);
		errno = err;
		return NULL;
	}
	FILE *f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

static void read_line(const char *path, char *out, size_t size)
{
	out[0] = '\0';
	FILE *f = open_regular(path);
	if (!f)
		return;
	if (fgets(out, (int)size, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* "always [madvise] never" -> "madvise" */
static void read_choice(const char *path, char *out, size_t size)
{
	char line[256];
	read_line(path, line, sizeof line);
	char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
	if (open && close) {
		*close = '\0';
		copy(out, size, open + 1);
	} else {
		copy(out, size, line);
	}
}

static void read_cpuinfo(struct ft_machine *m)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		const char *value = colon + 2 <= line + strlen(line) ? colon + 2 : "";
		if (!m->cpu_model[0] && strncmp(line, "model name", 10) == 0) {
			copy(m->cpu_model, sizeof m->cpu_model, value);
			m->cpu_model[strcspn(m->cpu_model, "\n")] = '\0';
		} else if (m->cpu_mhz == 0 && strncmp(line, "cpu MHz", 7) == 0) {
			m->cpu_mhz = atof(value);
		}
	}
	fclose(f);
}

/* out: at least 13 bytes */
static void read_cpuid_vendor(char *out)
{
	unsigned a, b, c, d;
	out[0] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
		return; /* the CPUID "hypervisor present" bit */
	__cpuid(0x40000000, a, b, c, d);
	memcpy(out, &b, 4);
	memcpy(out + 4, &c, 4);
	memcpy(out + 8, &d, 4);
	out[12] = '\0';
}

static void read_hypervisor(struct ft_machine *m)
{
	read_cpuid_vendor(m->hypervisor);
}

static int count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int count = 0;
	size_t len = strlen(prefix);
	for (struct dirent *e; (e = readdir(d));)
		count += strncmp(e->d_name, prefix, len) == 0 &&
		         e->d_name[len] >= '0' && e->d_name[len] <= '9';
	closedir(d);
	return count;
}

/* Feature bit 5 (VIRTIO_BALLOON_F_REPORTING) of the balloon device that the
 * driver accepted, from the virtio device's features string. */
static int read_free_page_reporting(void)
{
	const char *dir = "/sys/bus/virtio/drivers/virtio_balloon";
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int state = -1;
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, "virtio", 6) != 0)
			continue;
		char path[512], features[256];
		snprintf(path, sizeof path, "%s/%s/features", dir, e->d_name);
		read_line(path, features, sizeof features);
		if (strlen(features) > 5)
			state = features[5] == '1';
	}
	closedir(d);
	return state;
}

void ft_machine_read(struct ft_machine *m)
{
	memset(m, 0, sizeof *m);
	read_cpuinfo(m);
	struct utsname u;
	if (uname(&u) == 0)
		copy(m->kernel, sizeof m->kernel, u.release);
	m->page_size = (size_t)sysconf(_SC_PAGESIZE);
	read_choice("/sys/kernel/mm/transparent_hugepage/enabled", m->thp_enabled, sizeof m->thp_enabled);
	read_choice("/sys/kernel/mm/transparent_hugepage/defrag", m->thp_defrag, sizeof m->thp_defrag);
	char pmd[32];
	read_line("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", pmd, sizeof pmd);
	m->thp_pmd_size = (size_t)strtoull(pmd, NULL, 10);
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
	          m->clocksource, sizeof m->clocksource);
	read_hypervisor(m);
	m->cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	m->numa_nodes = count_entries("/sys/devices/system/node", "node");
	m->free_page_reporting = read_free_page_reporting();
}

/* path under FTRUN_MACHINE_ROOT when that is set */
static const char *stand_in(char *buf, size_t size, const char *path)
{
	const char *root = getenv("FTRUN_MACHINE_ROOT");
	if (!root || !*root)
		return path;
	snprintf(buf, size, "%s%s", root, path);
	return buf;
}

/* A file's first MiB (the kernel's log buffer is no larger by default),
 * NUL-terminated and malloc'd, or NULL with *err set. */
static char *read_all(const char *path, int *err)
{
	FILE *f = open_regular(path);
	if (!f) {
		*err = errno;
		return NULL;
	}
	size_t size = 4096, len = 0;
	char *text = malloc(size);
	for (size_t n; text && (n = fread(text + len, 1, size - len - 1, f)) > 0;) {
		len += n;
		if (size - len - 1 == 0 && size >= (1u << 20))
			break;
		if (size - len - 1 == 0) {
			char *more = realloc(text, size * 2);
			if (!more)
				free(text);
			text = more;
			size *= 2;
		}
	}
	fclose(f);
	if (!text) {
		*err = ENOMEM;
		return NULL;
	}
	text[len] = '\0';
	return text;
}

/* The kernel's message buffer (klogctl's READ_ALL, what dmesg prints). */
static char *read_kernel_log(int *err)
{
	char buf[512];
	const char *fake = stand_in(buf, sizeof buf, "/kernel.log");
	if (fake == buf)
		return read_all(fake, err);
	int size = klogctl(10, NULL, 0); /* SYSLOG_ACTION_SIZE_BUFFER */
	if (size <= 0)
		size = 1 << 20;
	char *text = malloc((size_t)size + 1);
	if (!text) {
		*err = ENOMEM;
		return NULL;
	}
	int n = klogctl(3, text, size); /* SYSLOG_ACTION_READ_ALL */
	if (n < 0) {
		*err = errno;
		free(text);
		return NULL;
	}
	text[n] = '\0';
	return text;
}

/* The text after needle up to the end of its line, or 0 if it is absent. */
static int line_after(const char *text, const char *needle, char *out, size_t size)
{
	const char *at = text ? strstr(text, needle) : NULL;
	if (!at)
		return 0;
	at += strlen(needle);
	size_t n = strcspn(at, "\r\n");
	copy(out, size, at);
	if (n < size)
		out[n] = '\0';
	return 1;
}

static void read_kind_cpuid(struct ft_machine_kind *k)
{
	char buf[512];
	const char *fake = stand_in(buf, sizeof buf, "/cpuid");
	if (fake != buf) {
		read_cpuid_vendor(k->cpuid);
		return;
	}
	read_line(fake, k->cpuid, sizeof k->cpuid);
}

/* The hypervisor as the kernel named it when it booted, not the CPUID
 * string: a PVM guest runs in its host's user mode, so its CPUID answers
 * for whatever lies beneath the host ("bhyve bhyve " on this round's
 * machines), and /sys/hypervisor exists only for Xen. */
static void read_kind_hypervisor(struct ft_machine_kind *k)
{
	int err = 0;
	char *log = read_kernel_log(&err);
	char name[sizeof k->hypervisor];
	if (line_after(log, "Hypervisor detected: ", name, sizeof name)) {
		copy(k->hypervisor, sizeof k->hypervisor, name);
		snprintf(k->hypervisor_source, sizeof k->hypervisor_source,
		         "kernel log: Hypervisor detected: %s", name);
	} else if (!log) {
		copy(k->hypervisor, sizeof k->hypervisor, "unknown");
		snprintf(k->hypervisor_source, sizeof k->hypervisor_source,
		         "the kernel log is unreadable (%s%s)", strerror(err),
		         err == EPERM ? ": with kernel.dmesg_restrict=1 it needs CAP_SYSLOG" : "");
	} else if (!strstr(log, "Linux version ")) {
		copy(k->hypervisor, sizeof k->hypervisor, "unknown");
		snprintf(k->hypervisor_source, sizeof k->hypervisor_source,
		         "the kernel log no longer holds its boot lines");
	} else if (k->cpuid[0]) {
		copy(k->hypervisor, sizeof k->hypervisor, "unknown");
		snprintf(k->hypervisor_source, sizeof k->hypervisor_source,
		         "the kernel log names no hypervisor; CPUID says \"%s\"", k->cpuid);
	} else {
		copy(k->hypervisor, sizeof k->hypervisor, "none");
		snprintf(k->hypervisor_source, sizeof k->hypervisor_source,
		         "the kernel log names no hypervisor and CPUID has no hypervisor bit");
	}
	free(log);
}

/* The word of the kernel command line (before "--", the init's part) that
 * sets name, or 0. */
static int cmdline_word(const char *cmdline, const char *name, char *out, size_t size)
{
	size_t len = strlen(name);
	for (const char *w = cmdline; w && *w;) {
		w += strspn(w, " \t\n");
		size_t n = strcspn(w, " \t\n");
		if (n == 2 && strncmp(w, "--", 2) == 0)
			return 0;
		if (n >= len && strncmp(w, name, len) == 0 && (n == len || w[len] == '=')) {
			copy(out, n + 1 < size ? n + 1 : size, w);
			return 1;
		}
		w += n;
	}
	return 0;
}

/* A kernel boolean as the kernel parses one: bare, or 1, y, Y, on. */
static int kernel_true(const char *value)
{
	return !*value || strchr("1yY", *value) || strcmp(value, "on") == 0;
}

/* The kernel's own parameter (sysfs) first, the command line when the
 * kernel exposes none: the parameter is what the kernel parsed. */
static void read_kind_zero_page(struct ft_machine_kind *k)
{
	char buf[512], param[16], cmdline[4096], word[128];
	const char *path = "/sys/module/kernel/parameters/pvm_no_zero_page";
	read_line(stand_in(buf, sizeof buf, path), param, sizeof param);
	read_line(stand_in(buf, sizeof buf, "/proc/cmdline"), cmdline, sizeof cmdline);
	int on_cmdline = cmdline_word(cmdline, "pvm_no_zero_page", word, sizeof word);
	const char *value = on_cmdline && strchr(word, '=') ? strchr(word, '=') + 1 : "";
	int withheld = param[0] ? kernel_true(param) : on_cmdline && kernel_true(value);
	k->zero_page = !withheld;
	if (on_cmdline && (!param[0] || kernel_true(param) == kernel_true(value)))
		snprintf(k->zero_page_why, sizeof k->zero_page_why, "%s on the kernel command line", word);
	else if (param[0])
		snprintf(k->zero_page_why, sizeof k->zero_page_why, "pvm_no_zero_page=%s in %s", param, path);
	else
		snprintf(k->zero_page_why, sizeof k->zero_page_why,
		         "the kernel has no pvm_no_zero_page parameter");
}

static int cpu_flag(const char *path, const char *flag)
{
	FILE *f = open_regular(path);
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		size_t len = strlen(flag);
		for (char *w = strchr(line, ':'); w && *w;) {
			w += strspn(w, ": \t\n");
			size_t n = strcspn(w, " \t\n");
			found |= n == len && strncmp(w, flag, len) == 0;
			w += n;
		}
		break;
	}
	free(line);
	fclose(f);
	return found;
}

void ft_machine_read_kind(struct ft_machine_kind *k)
{
	memset(k, 0, sizeof *k);
	read_kind_cpuid(k);
	read_kind_hypervisor(k);
	/* PVM has no hardware paging for its guests: shadow tables by design.
	 * A KVM guest cannot see whether its host uses EPT/NPT or shadows. */
	k->shadow_page_tables = strcmp(k->hypervisor, "PVM") == 0 ? 1
	                        : strcmp(k->hypervisor, "none") == 0 ? 0 : -1;
	read_kind_zero_page(k);
	char buf[512];
	k->rdtscp = cpu_flag(stand_in(buf, sizeof buf, "/proc/cpuinfo"), "rdtscp");
}
