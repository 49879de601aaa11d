#include "interrupt.h"

volatile sig_atomic_t ft_interrupted;
_Thread_local const atomic_int *ft_stop_request;
