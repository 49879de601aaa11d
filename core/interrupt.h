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

/* Set while stderr holds a line written without its newline (a run's
 * progress line): a signal, an error or a message of the runner's own
 * ends that line first, so it never lands mid-line. */
extern volatile sig_atomic_t ft_stderr_line_open;

/* Ends the open line on stderr, if one is; async-signal-safe. */
void ft_stderr_end_line(void);

/* NULL outside a task; a non-zero value asks the task to stop. */
extern _Thread_local const atomic_int *ft_stop_request;

static inline bool ft_should_stop(void)
{
	return ft_interrupted ||
	       (ft_stop_request && atomic_load_explicit(ft_stop_request, memory_order_relaxed));
}

#endif
