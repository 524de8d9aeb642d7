/*
 * features_sys.c — registry rows (features.h) the file system and the
 * process answer: root, btf, tracefs, and the uprobe PMU with its
 * ref_ctr_offset format field.  Each probe answers 1, or 0 with the
 * reason; the kernel version each needs is the table's (features.c).
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include "features.h"
#include "log.h"
#include "privs.h"
#include "procmaps.h"
#include "features_multi.h"
#include "uprobe_pmu.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

int feature_probe_root(enum feature_id id, char *why, size_t len)
{
	uid_t uid = geteuid();

	if (!uid)
		return 1;
	snprintf(why, len, "not running as root (uid %u)", (unsigned)uid);
	return 0;
}

/* Readable, not parsed: features_bpf.c reads what the tracer needs. */
int feature_probe_btf(enum feature_id id, char *why, size_t len)
{
	if (!access(VMLINUX_BTF, R_OK))
		return 1;
	if (errno == ENOENT)
		snprintf(why, len, "no kernel BTF (%s missing)", VMLINUX_BTF);
	else
		snprintf(why, len, "no kernel BTF (%s: %s)", VMLINUX_BTF,
			 pc_strerror(errno));
	return 0;
}

/*
 * uprobe_events writable, where attach_tracefs.c looks for it (tfs_root).
 * access(), not open(): a trace's first open of uprobe_events is its
 * first entry's, after the stash record (tracefs.bats stops the tracer
 * there).
 */
int feature_probe_tracefs(enum feature_id id, char *why, size_t len)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/uprobe_events",
		"/sys/kernel/debug/tracing/uprobe_events",
	};
	int err;

	if (!access(paths[0], W_OK))
		return 1;
	err = errno;
	/* The debugfs path only where the first is missing, as tfs_root. */
	if (err == ENOENT && !access(paths[1], W_OK))
		return 1;
	if (privs_why(PRIV_TRACEFS, -err, paths[0], why, len))
		return 0;
	snprintf(why, len, "%s: %s (tracefs not mounted, or no "
		 "CONFIG_UPROBE_EVENTS)", paths[0], pc_strerror(err));
	return 0;
}

/* The PMU's sysfs type file, which perf_event_open needs (uprobe_pmu.c). */
int feature_probe_uprobe_pmu(enum feature_id id, char *why, size_t len)
{
	int type = uprobe_pmu_type();

	if (type >= 0)
		return 1;
	if (type == -ENOENT)
		snprintf(why, len, "no uprobe PMU (%s missing: %s)",
			 UPROBE_PMU_TYPE_PATH, feature_needs(id));
	else
		snprintf(why, len, "no uprobe PMU (%s: %s: %s)",
			 UPROBE_PMU_TYPE_PATH, pc_strerror(-type), feature_needs(id));
	return 0;
}

/* The format field through which perf_event_open takes a semaphore's
 * offset ("config:32-63"). */
int feature_probe_ref_ctr_offset(enum feature_id id, char *why, size_t len)
{
	int lo, err = uprobe_pmu_bit("ref_ctr_offset", &lo);

	if (!err)
		return 1;
	snprintf(why, len, "uprobe PMU has no format field ref_ctr_offset "
		 "(%s; %s)", pc_strerror(-err), feature_needs(id));
	return 0;
}

/*
 * A uprobe through the PMU, as this caller: opened on a function of our
 * own executable that nothing calls, filtered on ourselves, then closed.
 * The PMU's permission check runs before anything is registered; the
 * kernel's answer, not a version, decides (CAP_SYS_ADMIN again in stable
 * kernels with the fix for CVE-2025-38466).
 */
int feature_probe_perf_uprobe(enum feature_id id, char *why, size_t len)
{
	char r[400];
	uint64_t off;
	int fd;

	if (!feature_has(FEATURE_UPROBE_PMU, r, sizeof(r))) {
		snprintf(why, len, "%s", r);
		return 0;
	}
	fd = procmaps_self_offset((const void *)umulti_probe_target, &off);
	if (!fd)
		fd = uprobe_pmu_open("/proc/self/exe", off, 0, 0, getpid());
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (!privs_why(PRIV_PERF_UPROBE, fd, NULL, r, sizeof(r)))
		snprintf(r, sizeof(r), "%s", pc_strerror(-fd));
	snprintf(why, len, "perf_event_open of a uprobe on the PMU: %s", r);
	return 0;
}

/* A software event on ourselves: what kernel.perf_event_paranoid lets this
 * caller open at all (Debian's level 3 asks CAP_SYS_ADMIN of any). */
int feature_probe_perf_event(enum feature_id id, char *why, size_t len)
{
	struct perf_event_attr attr = { .size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
		.disabled = 1 };
	char r[400];
	int fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1,
			 PERF_FLAG_FD_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	fd = -errno;
	if (!privs_why(PRIV_PERF_EVENT, fd, NULL, r, sizeof(r)))
		snprintf(r, sizeof(r), "%s", pc_strerror(-fd));
	snprintf(why, len, "perf_event_open of a software event: %s", r);
	return 0;
}
