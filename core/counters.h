/* What the kernel counts for us: getrusage and the /proc key-value files. */
#ifndef FT_COUNTERS_H
#define FT_COUNTERS_H

#include <stdint.h>

struct ft_rusage {
	int64_t minflt, majflt;
	int64_t utime_ns, stime_ns;
	int64_t maxrss_kb;
};

int ft_rusage(struct ft_rusage *out);

/* minor + major faults of the process: no allocation, one system call. */
int64_t ft_faults(void);

/* The calling thread's own counts (RUSAGE_THREAD) and its CPU time in ns
 * (CLOCK_THREAD_CPUTIME_ID: finer than rusage's microseconds). In a
 * process with one thread these are the process's. */
struct ft_thread_usage {
	int64_t minflt, majflt;
	int64_t utime_ns, stime_ns;
	int64_t cpu_ns;
};
int ft_thread_usage(struct ft_thread_usage *out);

/* Calls fn(key, value, ctx) for every "key value" or "key: value [kB]" line
 * of a /proc file such as /proc/meminfo or /proc/vmstat. Returns 0 or errno. */
typedef void (*ft_counter_fn)(const char *key, int64_t value, void *ctx);
int ft_read_counters(const char *path, ft_counter_fn fn, void *ctx);

#endif
