#ifndef PC_UPROBE_PMU_H
#define PC_UPROBE_PMU_H

#include <stdint.h>
#include <sys/types.h>

/*
 * fd-based uprobes through the uprobe PMU.  Whether the kernel has them:
 * features.h (uprobe_pmu, ref_ctr_offset).  The two readers below are the
 * mechanism's; outside this file only the registry's probes call them.
 */

/* The PMU's perf type, read now, or -errno (no message: the caller
 * says it). */
#define UPROBE_PMU_TYPE_PATH "/sys/bus/event_source/devices/uprobe/type"
int uprobe_pmu_type(void);
/* format/<field> "config:32-63" -> *lo = 32; -ENOENT if absent. */
int uprobe_pmu_bit(const char *field, int *lo);

/* A perf_event fd for a uprobe at @off of @path; -errno on failure
 * (-ENOENT: no uprobe PMU; -EOPNOTSUPP, said: a semaphore and no
 * ref_ctr_offset). */
int uprobe_pmu_open(const char *path, uint64_t off, uint64_t ref_ctr_off,
		    int retprobe, pid_t pid);

#endif
