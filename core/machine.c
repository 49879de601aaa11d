#include "machine.h"

#include <cpuid.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* strings here are truncated on purpose: a description, not a key */
static void copy(char *out, size_t size, const char *in)
{
	size_t n = strnlen(in, size - 1);
	memcpy(out, in, n);
	out[n] = '\0';
}

static void read_line(const char *path, char *out, size_t size)
{
	out[0] = '\0';
	FILE *f = fopen(path, "r");
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

static void read_hypervisor(struct ft_machine *m)
{
	unsigned a, b, c, d;
	m->hypervisor[0] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
		return; /* the CPUID "hypervisor present" bit */
	__cpuid(0x40000000, a, b, c, d);
	memcpy(m->hypervisor, &b, 4);
	memcpy(m->hypervisor + 4, &c, 4);
	memcpy(m->hypervisor + 8, &d, 4);
	m->hypervisor[12] = '\0';
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
