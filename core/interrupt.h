/* Set by the runner's SIGINT handler; long passes poll it between chunks. */
#ifndef FT_INTERRUPT_H
#define FT_INTERRUPT_H

#include <signal.h>

extern volatile sig_atomic_t ft_interrupted;

#endif
