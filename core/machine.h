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

/* What kind of guest this is, as the kernel itself says it. */
struct ft_machine_kind {
	char hypervisor[32];      /* the kernel log's "Hypervisor detected: NAME", "none", "unknown" */
	char hypervisor_source[192]; /* where that name came from, or why it is unknown */
	char cpuid[16];           /* CPUID leaf 0x40000000's vendor signature, "" with no hypervisor bit */
	int shadow_page_tables;   /* 1 shadowed (PVM), 0 not (bare metal), -1 unknown */
	int zero_page;            /* 1 a read fault may map the shared zero page, 0 it never does */
	char zero_page_why[160];
	int rdtscp;               /* /proc/cpuinfo's rdtscp flag */
};

void ft_machine_read(struct ft_machine *m);
/* Reads the kernel log (as root: klogctl), so once per run, not per pass.
 * FTRUN_MACHINE_ROOT names a directory that stands in for the kernel in
 * the tests: kernel.log, cpuid (the vendor signature; missing: no
 * hypervisor bit), proc/cmdline, proc/cpuinfo and
 * sys/module/kernel/parameters/pvm_no_zero_page. */
void ft_machine_read_kind(struct ft_machine_kind *k);

#endif
