#include "perfcount.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} events[FT_COUNTERS] = {
	[FT_PAGE_FAULTS] = { "page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	[FT_MINOR_FAULTS] = { "minor_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	[FT_MAJOR_FAULTS] = { "major_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	[FT_CONTEXT_SWITCHES] = { "context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	[FT_CPU_MIGRATIONS] = { "cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	[FT_TASK_CLOCK] = { "task_clock_ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	[FT_CYCLES] = { "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	[FT_INSTRUCTIONS] = { "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	[FT_DTLB_LOAD_MISSES] = { "dtlb_load_misses", PERF_TYPE_HW_CACHE,
		PERF_COUNT_HW_CACHE_DTLB | PERF_COUNT_HW_CACHE_OP_READ << 8 |
		PERF_COUNT_HW_CACHE_RESULT_MISS << 16 },
};

enum { FORMAT = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
                PERF_FORMAT_TOTAL_TIME_RUNNING };

const char *ft_counter_name(enum ft_counter c)
{
	return events[c].name;
}

/* The task clock reads alone: as a member of a software group a group
 * read returned its value as of the last context switch (0 around a pass
 * that never switched), and as the leader it made the page-fault members
 * miss faults (kernel 6.18). */
static int group_of(int i)
{
	return i == FT_TASK_CLOCK ? 1 : i >= FT_FIRST_HARDWARE ? 2 : 0;
}

static int open_one(struct ft_counters *c, int i, bool exclude_kernel)
{
	struct perf_event_attr attr = ft_perf_attr(events[i].type, events[i].config);
	attr.read_format = FORMAT;
	attr.exclude_kernel = exclude_kernel;
	attr.exclude_hv = 1;
	int group = group_of(i);
	int fd = ft_perf_open(&attr, c->leader[group]);
	if (fd < 0)
		return errno;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &c->id[i]) != 0) {
		int err = errno;
		close(fd);
		return err;
	}
	c->fd[i] = fd;
	if (c->leader[group] < 0)
		c->leader[group] = fd;
	return 0;
}

static void close_all(struct ft_counters *c)
{
	for (int i = 0; i < FT_COUNTERS; i++) {
		if (c->fd[i] >= 0)
			close(c->fd[i]);
		c->fd[i] = -1;
	}
	for (int g = 0; g < FT_GROUPS; g++)
		c->leader[g] = -1;
}

int ft_counters_open(struct ft_counters *c, const struct ft_perf_settings *s,
                     char *why, size_t size)
{
	memset(c, 0, sizeof *c);
	for (int i = 0; i < FT_COUNTERS; i++)
		c->fd[i] = -1;
	for (int g = 0; g < FT_GROUPS; g++)
		c->leader[g] = -1;
	why[0] = '\0';
	/* The kernel side counts context switches (and every event while in
	 * the kernel); perf_event_paranoid 2 allows only exclude_kernel, so a
	 * refused first open is tried again without it. The settings explain
	 * a refusal, never predict one (paranoid 3 is 2 on some kernels). */
	for (int i = 0; i < FT_FIRST_HARDWARE; i++) {
		int err = open_one(c, i, c->kernel_excluded);
		if ((err == EACCES || err == EPERM) && !c->kernel_excluded && i == 0) {
			c->kernel_excluded = true;
			err = open_one(c, i, true);
		}
		if (err) {
			ft_perf_explain(s, err, events[i].name, !c->kernel_excluded, why, size);
			close_all(c);
			return err;
		}
	}
	for (int i = FT_FIRST_HARDWARE; i < FT_COUNTERS; i++) {
		int err = open_one(c, i, c->kernel_excluded);
		if (err)
			ft_perf_explain(s, err, events[i].name, !c->kernel_excluded,
			                c->absent[i], sizeof c->absent[i]);
	}
	return 0;
}

/* read_format with PERF_FORMAT_GROUP: nr, time_enabled, time_running,
 * then {value, id} per member. */
static int read_group(const struct ft_counters *c, int leader, int64_t v[FT_COUNTERS])
{
	uint64_t buf[3 + 2 * FT_COUNTERS];
	ssize_t n = read(leader, buf, sizeof buf);
	if (n < 0)
		return errno;
	if (n < (ssize_t)(3 * sizeof *buf) || buf[0] > FT_COUNTERS)
		return EIO;
	uint64_t enabled = buf[1], running = buf[2];
	for (uint64_t k = 0; k < buf[0]; k++) {
		uint64_t value = buf[3 + 2 * k], id = buf[4 + 2 * k];
		if (running == 0)
			value = 0; /* never scheduled: not counted */
		else if (running < enabled)
			value = (uint64_t)((unsigned __int128)value * enabled / running);
		for (int i = 0; i < FT_COUNTERS; i++)
			if (c->fd[i] >= 0 && c->id[i] == id)
				v[i] = running ? (int64_t)value : -1;
	}
	return 0;
}

int ft_counters_read(const struct ft_counters *c, int64_t v[FT_COUNTERS])
{
	for (int i = 0; i < FT_COUNTERS; i++)
		v[i] = -1;
	for (int g = 0; g < FT_GROUPS; g++) {
		if (c->leader[g] < 0)
			continue;
		int err = read_group(c, c->leader[g], v);
		if (err)
			return err;
	}
	return 0;
}

void ft_counters_close(struct ft_counters *c)
{
	close_all(c);
}
