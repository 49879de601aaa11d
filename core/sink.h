/* The compiler sink: a value passed here is treated as read and memory as
 * clobbered, so no pass that produced it can be deleted or moved. */
#ifndef FT_SINK_H
#define FT_SINK_H

#define FT_SINK(x) __asm__ volatile("" ::"r"(x) : "memory")

#endif
