/* Set by the runner's SIGINT handler; long passes poll it between chunks.
 * A task (core/tasks.h) has one more reason to stop: another task of its
 * group failed. Its thread points ft_stop_request at the group's flag, so
 * the passes keep their signatures (bench/ref.c calls them too). */
#ifndef FT_INTERRUPT_H
#define FT_INTERRUPT_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

extern volatile sig_atomic_t ft_interrupted;

/* NULL outside a task; a non-zero value asks the task to stop. */
extern _Thread_local const atomic_int *ft_stop_request;

static inline bool ft_should_stop(void)
{
	return ft_interrupted ||
	       (ft_stop_request && atomic_load_explicit(ft_stop_request, memory_order_relaxed));
}

#endif
