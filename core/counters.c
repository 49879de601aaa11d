#include "counters.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static int64_t timeval_ns(struct timeval tv)
{
	return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000;
}

int ft_rusage(struct ft_rusage *out)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return errno;
	out->minflt = ru.ru_minflt;
	out->majflt = ru.ru_majflt;
	out->utime_ns = timeval_ns(ru.ru_utime);
	out->stime_ns = timeval_ns(ru.ru_stime);
	out->maxrss_kb = ru.ru_maxrss;
	return 0;
}

int64_t ft_faults(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return (int64_t)ru.ru_minflt + ru.ru_majflt;
}

int ft_thread_usage(struct ft_thread_usage *out)
{
	struct rusage ru;
	struct timespec ts;
	if (getrusage(RUSAGE_THREAD, &ru) != 0 || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return errno;
	out->minflt = ru.ru_minflt;
	out->majflt = ru.ru_majflt;
	out->utime_ns = timeval_ns(ru.ru_utime);
	out->stime_ns = timeval_ns(ru.ru_stime);
	out->cpu_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return 0;
}

int ft_read_counters(const char *path, ft_counter_fn fn, void *ctx)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return errno;
	char key[128];
	long long value;
	char line[256];
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%127[^: ]%*[: ]%lld", key, &value) == 2)
			fn(key, value, ctx);
	}
	fclose(f);
	return 0;
}
