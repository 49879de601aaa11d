#include "interrupt.h"

volatile sig_atomic_t ft_interrupted;
