/* What the machine is, read once per run so every result says where it
 * came from. Strings are empty when a source is missing. */
#ifndef FT_MACHINE_H
#define FT_MACHINE_H

#include <stddef.h>

struct ft_machine {
	char cpu_model[128];
	char kernel[128];         /* uname release */
	size_t page_size;
	char thp_enabled[64];     /* the bracketed choice of .../transparent_hugepage/enabled */
	char thp_defrag[64];
	size_t thp_pmd_size;      /* hpage_pmd_size, 0 if unknown */
	char clocksource[64];
	char hypervisor[16];      /* CPUID vendor signature, "" on bare metal */
	int cpus_online;
	int numa_nodes;
	double cpu_mhz;           /* /proc/cpuinfo's "cpu MHz" of the first CPU */
	int free_page_reporting;  /* virtio-balloon free page reporting: 1 on, 0 off, -1 no balloon */
};

void ft_machine_read(struct ft_machine *m);

#endif
