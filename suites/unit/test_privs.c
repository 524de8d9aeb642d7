/*
 * test_privs.c — a refusal names what the caller lacks (privs.c), for
 * callers this test cannot become: PROBECHECK_PRIVS_CAPS gives the
 * effective set.  privileges.bats runs the real callers on the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "privs.h"
#include "unit.h"

#define BIT(n) (1ULL << (n))
enum { DAC = 1, SYS_ADMIN = 21, SYS_RESOURCE = 24, PERFMON = 38, BPF = 39 };

static char buf[600];

static const char *why_as(unsigned long long caps, enum priv_op op, int err,
			  const char *path)
{
	char hex[32];

	snprintf(hex, sizeof(hex), "%llx", caps);
	setenv("PROBECHECK_PRIVS_CAPS", hex, 1);
	return privs_why(op, err, path, buf, sizeof(buf));
}

static int has(const char *s, const char *part)
{
	return s && strstr(s, part);
}

static void bpf_rows(void)
{
	const char *w = why_as(BIT(BPF), PRIV_BPF, -EPERM, NULL);

	UNIT_TRUE(has(w, "Operation not permitted: "), "the errno first");
	UNIT_TRUE(has(w, "the caller lacks CAP_PERFMON or CAP_SYS_ADMIN (it has CAP_BPF)"),
		  "BPF alone: lacks PERFMON (or SYS_ADMIN), has BPF");
	w = why_as(0, PRIV_BPF, -EPERM, NULL);
	UNIT_TRUE(has(w, "lacks (CAP_BPF or CAP_SYS_ADMIN) and (CAP_PERFMON or "
		      "CAP_SYS_ADMIN) (it has none)"), "none: both clauses named");
	w = why_as(BIT(PERFMON), PRIV_BPF, -EACCES, NULL);
	UNIT_TRUE(has(w, "lacks CAP_BPF or CAP_SYS_ADMIN (it has CAP_PERFMON)"),
		  "PERFMON alone: lacks BPF");
	w = why_as(BIT(SYS_ADMIN), PRIV_BPF, -EPERM, NULL);
	UNIT_TRUE(has(w, "the caller has them"), "SYS_ADMIN holds both clauses");
	UNIT_TRUE(why_as(0, PRIV_BPF, -ENOENT, NULL) == NULL,
		  "not a permission: no reason of ours");
	UNIT_TRUE(why_as(0, PRIV_BPF, -EINVAL, NULL) == NULL, "EINVAL: none");
}

static void perf_rows(void)
{
	const char *w = why_as(BIT(BPF) | BIT(PERFMON), PRIV_PERF_UPROBE,
			       -EACCES, NULL);

	UNIT_TRUE(has(w, "Permission denied: "), "EACCES's words first");
	UNIT_TRUE(has(w, "CVE-2025-38466"), "the fix that asks it is named");
	UNIT_TRUE(has(w, "the caller lacks CAP_SYS_ADMIN (it has CAP_BPF, CAP_PERFMON)"),
		  "BPF+PERFMON: the perf PMU lacks SYS_ADMIN");
	w = why_as(BIT(BPF) | BIT(PERFMON) | BIT(SYS_ADMIN), PRIV_PERF_UPROBE,
		   -EACCES, NULL);
	UNIT_TRUE(has(w, "the caller has them, so another check"),
		  "with SYS_ADMIN: another check refused");
	w = why_as(BIT(BPF), PRIV_PERF_TRACEPOINT, -EACCES, NULL);
	UNIT_TRUE(has(w, "lacks CAP_PERFMON or CAP_SYS_ADMIN"), "a tracefs event: PERFMON");
	w = why_as(BIT(BPF) | BIT(PERFMON), PRIV_BTF_MODULES, -EPERM, NULL);
	UNIT_TRUE(has(w, "BPF_BTF_GET_NEXT_ID needs CAP_SYS_ADMIN; the caller lacks CAP_SYS_ADMIN"),
		  "libbpf's module BTF listing: SYS_ADMIN");
	w = why_as(0, PRIV_PROC_MAP_FILES, -EPERM, NULL);
	UNIT_TRUE(has(w, "lacks CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN"),
		  "map_files: CHECKPOINT_RESTORE or SYS_ADMIN");
}

/* Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK: with every
 * clause held, a finite limit and no CAP_SYS_RESOURCE is the reason. */
static void memlock(void)
{
	struct rlimit old, low = { 65536, 65536 };
	const char *w;

	if (getrlimit(RLIMIT_MEMLOCK, &old) || setrlimit(RLIMIT_MEMLOCK, &low)) {
		UNIT_TRUE(0, "RLIMIT_MEMLOCK could be set for the test");
		return;
	}
	w = why_as(BIT(BPF) | BIT(PERFMON), PRIV_BPF, -EPERM, NULL);
	UNIT_TRUE(has(w, "RLIMIT_MEMLOCK is 65536 bytes"), "the limit named");
	UNIT_TRUE(has(w, "CAP_SYS_RESOURCE"), "and what may raise it");
	w = why_as(BIT(BPF) | BIT(PERFMON) | BIT(SYS_RESOURCE), PRIV_BPF, -EPERM,
		   NULL);
	UNIT_TRUE(!has(w, "RLIMIT_MEMLOCK"), "SYS_RESOURCE raises it: not the reason");
	if (!getuid())      /* only root may raise it back */
		setrlimit(RLIMIT_MEMLOCK, &old);
}

/* uprobe_events' owner and mode, or its directory's, and the caller's
 * uid: as another uid (a child with seteuid) the reason names both. */
static void tracefs(void)
{
	char dir[] = "/tmp/pc-unit-privs.XXXXXX", path[64];
	const char *w;
	int fd, st = 0;
	pid_t pid;

	if (!mkdtemp(dir)) {
		UNIT_TRUE(0, "a directory for the test");
		return;
	}
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd >= 0)
		close(fd);
	chmod(dir, 0700);
	w = why_as(0, PRIV_TRACEFS, -EACCES, path);
	UNIT_TRUE(has(w, "the caller is its owner or has CAP_DAC_OVERRIDE"),
		  "as the owner: another reason");
	pid = geteuid() ? -1 : fork();
	if (pid == 0) {
		int ok = !seteuid(65534);

		w = why_as(0, PRIV_TRACEFS, -EACCES, path);
		ok = ok && has(w, "needs uid 0 or CAP_DAC_OVERRIDE");
		ok = ok && has(w, "mode 0700");      /* its directory's */
		ok = ok && has(w, "the caller is uid 65534 and lacks CAP_DAC_OVERRIDE");
		if (!ok)
			fprintf(stderr, "tracefs as uid 65534: %s\n", w ? w : "NULL");
		_exit(!ok);
	}
	if (pid > 0) {
		waitpid(pid, &st, 0);
		UNIT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st),
			  "as uid 65534: the directory's owner and mode, the uid, DAC_OVERRIDE");
	}
	unlink(path);
	rmdir(dir);
}

/* Every sentence fits the callers' 400-byte buffers (their why[400])
 * with room for a prefix of 100 (ci/mutants-equivalent relies on it):
 * a caller with every capability but the one asked lists only those the
 * tracer's checks ask, and the longest errno text is kept. */
static void lengths(void)
{
	const unsigned long long all = (1ULL << 41) - 1;
	const unsigned long long sets[] = { 0, all & ~BIT(SYS_ADMIN), all,
		all & ~BIT(SYS_ADMIN) & ~BIT(BPF) & ~BIT(PERFMON) };
	size_t longest = 0;

	for (int op = PRIV_BPF; op <= PRIV_BTF_MODULES; op++)
		for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
			const char *w = why_as(sets[i], op, -EPERM,
					       "/sys/kernel/debug/tracing/uprobe_events");

			if (w && strlen(w) > longest)
				longest = strlen(w);
		}
	UNIT_TRUE(longest > 250 && longest < 300,
		  "the longest sentence is 250 to 299 characters (293 measured)");
	UNIT_TRUE(has(why_as(all & ~BIT(SYS_ADMIN), PRIV_PERF_UPROBE, -EPERM, NULL),
		      "(it has CAP_BPF, CAP_PERFMON)"),
		  "of a caller's capabilities, only those the checks ask are listed");
}

static void names(void)
{
	char n[200];

	UNIT_EQ_STR(privs_names(0, n, sizeof(n)), "none", "no capabilities: none");
	UNIT_EQ_STR(privs_names(BIT(BPF) | BIT(PERFMON) | BIT(DAC), n, sizeof(n)),
		    "CAP_BPF, CAP_PERFMON, CAP_DAC_OVERRIDE",
		    "highest number first, by name");
	UNIT_EQ_STR(privs_names(BIT(63), n, sizeof(n)), "capability 63",
		    "an unnamed one by number");
	setenv("PROBECHECK_PRIVS_CAPS", "8000000000", 1);
	UNIT_TRUE(privs_effective() == BIT(BPF), "the override is hex");
	UNIT_TRUE(!privs_sys_admin(), "BPF alone: no CAP_SYS_ADMIN");
	setenv("PROBECHECK_PRIVS_CAPS", "200000", 1);
	UNIT_TRUE(privs_sys_admin(), "bit 21: CAP_SYS_ADMIN");
	unsetenv("PROBECHECK_PRIVS_CAPS");
	UNIT_TRUE(getuid() || (privs_effective() & BIT(SYS_ADMIN)),
		  "root's own set (capget) has CAP_SYS_ADMIN");
}

int main(void)
{
	bpf_rows();
	perf_rows();
	memlock();
	tracefs();
	lengths();
	names();
	return unit_done();
}
