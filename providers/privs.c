/*
 * privs.c — what a refused operation needed, in words (privs.h).
 *
 * Each operation's row is what the kernel's permission checks ask for it,
 * as clauses: every clause must hold, and a clause holds when the caller
 * has any one of its capabilities.  The rows are read from the kernel's
 * checks and measured on the matrix's kernels (privileges.bats):
 *  - bpf(): maps need bpf_capable() (CAP_BPF or CAP_SYS_ADMIN), a
 *    kprobe-type program also perfmon_capable() (CAP_PERFMON or
 *    CAP_SYS_ADMIN); kernels before 5.11 also charge both to
 *    RLIMIT_MEMLOCK, which only CAP_SYS_RESOURCE may raise past its hard
 *    limit.
 *  - the perf PMU's uprobes: perfmon_capable() from 5.8, capable
 *    (CAP_SYS_ADMIN) again with the fix for CVE-2025-38466 (stable
 *    5.10.240, 6.1.146, 6.12.39): the row asks CAP_SYS_ADMIN, which holds
 *    on either.
 *  - a tracefs event through perf_event_open: perfmon_capable() unless
 *    kernel.perf_event_paranoid allows it; at 3, Debian's default (its
 *    patch "perf: Add sysctl to disallow all unprivileged use"), any
 *    perf_event_open asks capable(CAP_SYS_ADMIN): measured on Debian
 *    5.10.0-46 and 6.12.118 as root with CAP_BPF and CAP_PERFMON.
 *  - /proc/PID/map_files: CAP_SYS_ADMIN, or CAP_CHECKPOINT_RESTORE (5.9+),
 *    in the initial user namespace.
 *  - uprobe_events: the file's permission bits (root, 0600): its owner or
 *    CAP_DAC_OVERRIDE.
 *  - libbpf 1.1 (Debian 12's) resolving a kfunc the vmlinux BTF lacks:
 *    it lists the modules' BTF (BPF_BTF_GET_NEXT_ID: CAP_SYS_ADMIN) and
 *    fails the whole load when refused (measured on Debian 6.1.0-57).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "log.h"
#include "privs.h"

#define CAP(n) (1ULL << (n))
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

static const char *const cap_names[] = {
	[CAP_DAC_OVERRIDE] = "CAP_DAC_OVERRIDE",
	[CAP_SYS_PTRACE] = "CAP_SYS_PTRACE",
	[CAP_SYS_ADMIN] = "CAP_SYS_ADMIN",
	[CAP_SYS_RESOURCE] = "CAP_SYS_RESOURCE",
	[CAP_PERFMON] = "CAP_PERFMON",
	[CAP_BPF] = "CAP_BPF",
	[CAP_CHECKPOINT_RESTORE] = "CAP_CHECKPOINT_RESTORE",
};

#define MAX_CLAUSES 2
struct priv_row {
	const char *pr_what;            /* "<op> needs ..." */
	uint64_t pr_any[MAX_CLAUSES];   /* 0: no more clauses */
};

static const struct priv_row rows[] = {
	[PRIV_BPF] = { "a BPF map or tracing program needs CAP_BPF and "
		"CAP_PERFMON (or CAP_SYS_ADMIN)",
		{ CAP(CAP_BPF) | CAP(CAP_SYS_ADMIN),
		  CAP(CAP_PERFMON) | CAP(CAP_SYS_ADMIN) } },
	[PRIV_PERF_UPROBE] = { "a uprobe through the perf PMU needs "
		"CAP_SYS_ADMIN on kernels with the fix for CVE-2025-38466 "
		"(5.10.240, 6.1.146, 6.12.39 and later), CAP_PERFMON before; "
		"--attach=multi or tracefs may not",
		{ CAP(CAP_SYS_ADMIN) } },
	[PRIV_PERF_TRACEPOINT] = { "a tracefs event through perf_event_open "
		"needs CAP_PERFMON (or CAP_SYS_ADMIN) unless "
		"kernel.perf_event_paranoid allows it",
		{ CAP(CAP_PERFMON) | CAP(CAP_SYS_ADMIN) } },
	[PRIV_PERF_EVENT] = { "a perf event needs CAP_PERFMON (or "
		"CAP_SYS_ADMIN) unless kernel.perf_event_paranoid allows it",
		{ CAP(CAP_PERFMON) | CAP(CAP_SYS_ADMIN) } },
	[PRIV_PROC_MAP_FILES] = { "another process's deleted or memfd file, "
		"opened through /proc/PID/map_files, needs CAP_SYS_ADMIN (or "
		"CAP_CHECKPOINT_RESTORE, 5.9+)",
		{ CAP(CAP_SYS_ADMIN) | CAP(CAP_CHECKPOINT_RESTORE) } },
	[PRIV_BTF_MODULES] = { "the program's kfunc bpf_preempt_disable is not "
		"in this kernel's vmlinux BTF (Linux 6.10+), so libbpf 1.1 "
		"lists the modules' BTF for it, and BPF_BTF_GET_NEXT_ID needs "
		"CAP_SYS_ADMIN",
		{ CAP(CAP_SYS_ADMIN) } },
	[PRIV_TRACEFS] = { NULL, { CAP(CAP_DAC_OVERRIDE) } },
};

uint64_t privs_effective(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	const char *fake = getenv("PROBECHECK_PRIVS_CAPS");

	if (fake && *fake)
		return strtoull(fake, NULL, 16);
	if (syscall(SYS_capget, &h, d))
		return 0;
	return (uint64_t)d[1].effective << 32 | d[0].effective;
}

/* The names of @caps joined by @sep, highest number first (CAP_BPF,
 * CAP_PERFMON before CAP_SYS_ADMIN, which would do for either); "none"
 * for 0. */
static const char *join_caps(uint64_t caps, const char *sep, char *buf,
			     size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned c = 64; c-- > 0 && n < len;) {
		const char *name = c < sizeof(cap_names) / sizeof(cap_names[0])
			? cap_names[c] : NULL;

		if (!(caps & CAP(c)))
			continue;
		n += name ? snprintf(buf + n, len - n, "%s%s", n ? sep : "", name)
			  : snprintf(buf + n, len - n, "%scapability %u",
				     n ? sep : "", c);
	}
	if (!caps)
		snprintf(buf, len, "none");
	return buf;
}

int privs_sys_admin(void)
{
	return !!(privs_effective() & CAP(CAP_SYS_ADMIN));
}

const char *privs_names(uint64_t caps, char *buf, size_t len)
{
	return join_caps(caps, ", ", buf, len);
}

/* "CAP_PERFMON or CAP_SYS_ADMIN" for the clause @eff does not hold;
 * "(A or B) and (C or B)" for two; empty when every clause holds. */
static void lacking(const struct priv_row *r, uint64_t eff, char *buf,
		    size_t len)
{
	int n = 0, many = 0;

	for (int i = 0; i < MAX_CLAUSES && r->pr_any[i]; i++)
		many += !(r->pr_any[i] & eff);
	many = many > 1;
	buf[0] = '\0';
	for (int i = 0; i < MAX_CLAUSES && r->pr_any[i]; i++) {
		char names[160];

		if (r->pr_any[i] & eff || (size_t)n >= len)
			continue;
		join_caps(r->pr_any[i], " or ", names, sizeof(names));
		n += snprintf(buf + n, len - n, many ? "%s(%s)" : "%s%s",
			      n ? " and " : "", names);
	}
}

/* Every clause held and still refused: what else it can be. */
static const char *other_reason(enum priv_op op)
{
	static char buf[200];
	struct rlimit rl;

	if (op == PRIV_BPF && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	    rl.rlim_cur != RLIM_INFINITY &&
	    !(privs_effective() & CAP(CAP_SYS_RESOURCE))) {
		snprintf(buf, sizeof(buf), "RLIMIT_MEMLOCK is %llu bytes and "
			 "kernels before 5.11 charge BPF memory to it: raise "
			 "it, or CAP_SYS_RESOURCE lets the tracer raise it",
			 (unsigned long long)rl.rlim_cur);
		return buf;
	}
	return "so another check refused it (an LSM, lockdown, or a sysctl)";
}

/*
 * The file's owner and mode decide, or those of the directory above it
 * that the caller cannot search (tracefs's own root is 0700): their
 * owner's uid or CAP_DAC_OVERRIDE.
 */
static const char *tracefs_why(const char *path, uint64_t eff, char *buf,
			       size_t len, const char *err)
{
	char at[256];
	struct stat sb;
	uid_t uid = geteuid();
	char *slash;

	snprintf(at, sizeof(at), "%s", path ? path : "");
	while (at[0] && stat(at, &sb) && (slash = strrchr(at, '/')) && slash != at)
		*slash = '\0';
	if (!at[0] || stat(at, &sb)) {
		snprintf(buf, len, "%s: writing %s needs its owner's uid or "
			 "CAP_DAC_OVERRIDE", err, path ? path : "uprobe_events");
		return buf;
	}
	if (uid != sb.st_uid && !(eff & CAP(CAP_DAC_OVERRIDE)))
		snprintf(buf, len, "%s: writing %s needs uid %u or "
			 "CAP_DAC_OVERRIDE (%s: owner uid %u, mode %04o); the "
			 "caller is uid %u and lacks CAP_DAC_OVERRIDE", err, path,
			 (unsigned)sb.st_uid, at, (unsigned)sb.st_uid,
			 (unsigned)(sb.st_mode & 07777), (unsigned)uid);
	else
		snprintf(buf, len, "%s: writing %s: the caller is its owner or "
			 "has CAP_DAC_OVERRIDE, %s", err, path,
			 other_reason(PRIV_TRACEFS));
	return buf;
}

/* A perf event refused at kernel.perf_event_paranoid 3 to a caller without
 * CAP_SYS_ADMIN: Debian's level, whatever else the caller has.  Only
 * where 3 means that (a software event on ourselves refused too): the
 * mainline kernel takes 3 as 2. */
static int paranoid_3(enum priv_op op, uint64_t eff)
{
	struct perf_event_attr attr = { .size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
		.disabled = 1 };
	FILE *f;
	int level = 0, fd;

	if ((op != PRIV_PERF_EVENT && op != PRIV_PERF_TRACEPOINT &&
	     op != PRIV_PERF_UPROBE) || (eff & CAP(CAP_SYS_ADMIN)))
		return 0;
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &level) != 1)
		level = 0;
	fclose(f);
	if (level < 3)
		return 0;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return fd < 0 && errno == EACCES;
}

const char *privs_why(enum priv_op op, int err, const char *path, char *buf,
		      size_t len)
{
	uint64_t eff = privs_effective(), shown;
	char miss[200], have[300];

	if ((err != -EPERM && err != -EACCES) ||
	    op >= sizeof(rows) / sizeof(rows[0]))
		return NULL;
	if (op == PRIV_TRACEFS)
		return tracefs_why(path, eff, buf, len, pc_strerror(-err));
	if (paranoid_3(op, eff)) {
		snprintf(buf, len, "%s: kernel.perf_event_paranoid is 3 (Debian's "
			 "default): every perf_event_open needs CAP_SYS_ADMIN; the "
			 "caller lacks CAP_SYS_ADMIN (it has %s)", pc_strerror(-err),
			 privs_names(eff & (CAP(CAP_BPF) | CAP(CAP_PERFMON)), have,
				     sizeof(have)));
		return buf;
	}
	lacking(&rows[op], eff, miss, sizeof(miss));
	/* Of the caller's, those a tracer's checks ask: the sentence stays
	 * short of the callers' 400-byte buffers whatever else it has. */
	shown = CAP(CAP_BPF) | CAP(CAP_PERFMON) | CAP(CAP_SYS_ADMIN);
	for (int i = 0; i < MAX_CLAUSES; i++)
		shown |= rows[op].pr_any[i];
	if (miss[0])
		snprintf(buf, len, "%s: %s; the caller lacks %s (it has %s)",
			 pc_strerror(-err), rows[op].pr_what, miss,
			 privs_names(eff & shown, have, sizeof(have)));
	else
		snprintf(buf, len, "%s: %s; the caller has them, %s",
			 pc_strerror(-err), rows[op].pr_what, other_reason(op));
	return buf;
}
