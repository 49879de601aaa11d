/* ft.samples, as the buffer's timed pass sees it. */
#ifndef FT_RUNNER_SAMPLES_H
#define FT_RUNNER_SAMPLES_H

#include "../core/samples.h"
#include "ft_aux.h"

struct ft_samples *ft_check_samples(lua_State *L, int arg);

#endif
