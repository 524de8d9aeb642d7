/*
 * uprobe_pmu.c — fd-based uprobes through the uprobe PMU (Linux 4.17).
 *
 * perf_event_open() with the "uprobe" dynamic PMU creates a uprobe that
 * lives exactly as long as the file descriptor: a tracer that dies leaves
 * nothing behind in tracefs.  Semaphores use the kernel's reference counter
 * (Linux 4.20, commit 1cc33161a83d "uprobes: Support SDT markers having
 * reference count (semaphore)"): the PMU advertises it as format field
 * ref_ctr_offset, "config:32-63"; the kernel then increments the counter
 * in every mm where it installs the breakpoint and decrements it on removal,
 * including processes that map the object later.  We read the bit
 * positions from sysfs rather than assuming them.  Whether the PMU and
 * its ref_ctr_offset field are there is the feature registry's (rows
 * uprobe_pmu and ref_ctr_offset); this file only uses them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include "features.h"
#include "log.h"
#include "uprobe_pmu.h"

#define PMU_DIR "/sys/bus/event_source/devices/uprobe"

static int read_small_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* Read at every use: the decision that the PMU is there, and its cache,
 * are the feature registry's (features_sys.c). */
int uprobe_pmu_type(void)
{
	char buf[32];
	int err = read_small_file(UPROBE_PMU_TYPE_PATH, buf, sizeof(buf));
	int type;

	if (err)
		return err;
	/* Type 0 is PERF_TYPE_HARDWARE: an empty or garbled file must not
	 * turn the uprobe into a hardware event. */
	if (sscanf(buf, "%d", &type) != 1 || type <= 0) {
		pc_err("uprobe: %s: unexpected type '%s'", UPROBE_PMU_TYPE_PATH, buf);
		return -EINVAL;
	}
	return type;
}

/* "config:32-63" or "config:0" -> lowest bit; -ENOENT if absent. */
int uprobe_pmu_bit(const char *field, int *lo)
{
	char path[256], buf[64];
	int err;

	snprintf(path, sizeof(path), PMU_DIR "/format/%s", field);
	err = read_small_file(path, buf, sizeof(buf));
	if (err)
		return err;
	if (sscanf(buf, "config:%d", lo) != 1) {
		pc_err("uprobe: %s: unexpected format '%s'", path, buf);
		return -EINVAL;
	}
	return 0;
}

/* The config bits of a uretprobe and of a semaphore's offset. */
static int config_bits(const char *path, uint64_t ref_ctr_off, int retprobe,
		       __u64 *config)
{
	char why[256];
	int bit, err;

	*config = 0;
	if (retprobe) {
		if (uprobe_pmu_bit("retprobe", &bit))
			return -EOPNOTSUPP;
		*config |= 1ULL << bit;
	}
	if (ref_ctr_off) {
		if (!feature_has(FEATURE_REF_CTR_OFFSET, why, sizeof(why))) {
			pc_err("uprobe: cannot enable the semaphore at offset "
			       "0x%llx of '%s': %s",
			       (unsigned long long)ref_ctr_off, path, why);
			return -EOPNOTSUPP;
		}
		if ((err = uprobe_pmu_bit("ref_ctr_offset", &bit)))
			return err;
		*config |= ref_ctr_off << bit;
	}
	return 0;
}

int uprobe_pmu_open(const char *path, uint64_t off, uint64_t ref_ctr_off,
		    int retprobe, pid_t pid)
{
	struct perf_event_attr attr;
	int type, fd, err;

	if (!feature_has(FEATURE_UPROBE_PMU, NULL, 0))
		return -ENOENT;         /* the registry's reason names the file */
	type = uprobe_pmu_type();
	if (type < 0)
		return type;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	err = config_bits(path, ref_ctr_off, retprobe, &attr.config);
	if (err)
		return err;
	attr.uprobe_path = (uint64_t)(uintptr_t)path;
	attr.probe_offset = off;
	attr.sample_period = 1;
	/* pid -1 needs a cpu; the BPF program still runs on every cpu. */
	fd = syscall(__NR_perf_event_open, &attr, pid, pid == -1 ? 0 : -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	return fd;
}
