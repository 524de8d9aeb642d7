#ifndef PC_UPROBE_PMU_H
#define PC_UPROBE_PMU_H

#include <stdint.h>
#include <sys/types.h>

/* A perf_event fd for a uprobe at @off of @path; -errno on failure. */
int uprobe_pmu_open(const char *path, uint64_t off, uint64_t ref_ctr_off,
		    int retprobe, pid_t pid);

#endif
