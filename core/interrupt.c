#include "interrupt.h"

#include <unistd.h>

volatile sig_atomic_t ft_interrupted;
_Thread_local const atomic_int *ft_stop_request;
volatile sig_atomic_t ft_stderr_line_open;

void ft_stderr_end_line(void)
{
	if (!ft_stderr_line_open)
		return;
	ft_stderr_line_open = 0;
	ssize_t r = write(STDERR_FILENO, "\n", 1);
	(void)r;
}
