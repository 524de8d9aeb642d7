/*
 * privs.h — what a refused operation needed, in words.
 *
 * The kernel refuses with EPERM or EACCES and never says which capability
 * its check asked for; which one it asks depends on the kernel and even
 * its patch level (the perf PMU's uprobes: CAP_PERFMON, then CAP_SYS_ADMIN
 * again with the fix for CVE-2025-38466).  For each operation the tracer
 * makes, privs.c lists what the kernel's checks may ask and names what the
 * caller lacks, from its effective set.  A reduced-capability failure
 * reported without a capability's name is a defect (privileges.bats).
 */
#ifndef PC_PRIVS_H
#define PC_PRIVS_H

#include <stddef.h>
#include <stdint.h>

enum priv_op {
	PRIV_BPF,               /* maps, kprobe-type programs, uprobe_multi links */
	PRIV_PERF_UPROBE,       /* perf_event_open on the uprobe PMU */
	PRIV_PERF_TRACEPOINT,   /* perf_event_open on a tracefs uprobe event */
	PRIV_PERF_EVENT,        /* any perf_event_open (the paranoid level's gate) */
	PRIV_TRACEFS,           /* writing tracefs's uprobe_events */
	PRIV_PROC_MAP_FILES,    /* /proc/PID/map_files (deleted and memfd objects) */
	PRIV_BTF_MODULES,       /* libbpf listing the modules' BTF for a kfunc */
};

/*
 * For @err (a negative errno) from @op: NULL unless it is -EPERM or
 * -EACCES, else "<strerror>: <what @op needs>; the caller <lacks what>"
 * in @buf.  @path: the file written or opened (PRIV_TRACEFS,
 * PRIV_PROC_MAP_FILES; NULL otherwise).
 */
const char *privs_why(enum priv_op op, int err, const char *path, char *buf,
		      size_t len);

/* The caller's effective capabilities, bit n for capability n (capget);
 * 0 and errno set if it cannot be read.  PROBECHECK_PRIVS_CAPS=HEX
 * replaces the answer (unit tests: a caller with any set). */
uint64_t privs_effective(void);

/* 1 if the caller has CAP_SYS_ADMIN, which every check of the table
 * accepts: the attach modes skip their permission experiments then. */
int privs_sys_admin(void);

/* "CAP_BPF, CAP_PERFMON" for the bits of @caps (the first unknown
 * ones as numbers); "none" for 0. */
const char *privs_names(uint64_t caps, char *buf, size_t len);

#endif
