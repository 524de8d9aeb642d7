#ifndef PC_UPROBE_PMU_H
#define PC_UPROBE_PMU_H

#include <stdint.h>
#include <sys/types.h>

/* The PMU's perf type, or -errno (no message: the caller says it). */
#define UPROBE_PMU_TYPE_PATH "/sys/bus/event_source/devices/uprobe/type"
int uprobe_pmu_type(void);
/* format/<field> "config:32-63" -> *lo = 32; -ENOENT if absent. */
int uprobe_pmu_bit(const char *field, int *lo);

/* A perf_event fd for a uprobe at @off of @path; -errno on failure. */
int uprobe_pmu_open(const char *path, uint64_t off, uint64_t ref_ctr_off,
		    int retprobe, pid_t pid);

#endif
