/*
 * features.c — the feature registry (features.h): one table, one cache.
 *
 * A row is a key, the probe that decides it and what the kernel needs for
 * it, with the commit that added it cited beside the row (as libbpf does
 * in src/features.c).  The probes live in features_*.c; this file only
 * runs each at most once per process and keeps the answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "features.h"
#include "log.h"
#include "privs.h"

struct feature_row {
	const char *fr_key;             /* as printed and required */
	feature_probe_fn *fr_probe;
	const char *fr_needs;           /* kernel version/config, for reasons and docs */
};

static const struct feature_row rows[FEATURE_FAKE] = {
	/* 33ea4b24277b ("perf/core: Implement the 'perf_uprobe' PMU") */
	[FEATURE_UPROBE_PMU] = { "uprobe_pmu", feature_probe_uprobe_pmu,
		"CONFIG_UPROBE_EVENTS, Linux 4.17+" },
	/* a6ca88b241d5 ("trace_uprobe: support reference counter in
	 * fd-based uprobe"), on 1cc33161a83d ("uprobes: Support SDT markers
	 * having reference count (semaphore)") */
	[FEATURE_REF_CTR_OFFSET] = { "ref_ctr_offset", feature_probe_ref_ctr_offset,
		"Linux 4.20+" },
	/* 7adfc6c9b315 ("bpf: Add bpf_get_attach_cookie() BPF helper to
	 * access bpf_cookie value") */
	[FEATURE_BPF_COOKIE] = { "bpf_cookie", feature_probe_bpf_cookie,
		"Linux 5.15+" },
	/* 89ae89f53d20 ("bpf: Add multi uprobe link") */
	[FEATURE_UPROBE_MULTI] = { "uprobe_multi", feature_probe_uprobe_multi,
		"Linux 6.6+" },
	/* 46ba0e49b642 ("bpf: fix multi-uprobe PID filtering logic"), also
	 * in 6.6.35 and 6.9.5 */
	[FEATURE_UPROBE_MULTI_PID] = { "uprobe_multi_pid", feature_probe_uprobe_multi,
		"Linux 6.10+" },
	/* f3f096cfedf8 ("tracing: Provide trace events interface for uprobes") */
	[FEATURE_TRACEFS] = { "tracefs", feature_probe_tracefs,
		"tracefs mounted, CONFIG_UPROBE_EVENTS, Linux 3.5+" },
	/* ff474a78cef5 ("uprobe: Add uretprobe syscall to speed up return
	 * probe"); seccomp passes it through since 6.14 (6.12.y) */
	[FEATURE_URETPROBE_SYSCALL] = { "uretprobe_syscall", feature_probe_x86_syscall,
		"x86-64, Linux 6.11+" },
	/* 56101b69c919 ("uprobes/x86: Add uprobe syscall to speed up uprobe") */
	[FEATURE_UPROBE_SYSCALL] = { "uprobe_syscall", feature_probe_x86_syscall,
		"x86-64, Linux 6.18+" },
	/* ba2bfc97b462 ("uprobes/x86: Add support to optimize uprobes") */
	[FEATURE_UPROBE_OPTIMIZE] = { "uprobe_optimize", feature_probe_uprobe_optimize,
		"x86-64, Linux 6.18+" },
	/* What the x86 uprobe decoder (arch_uprobe_analyze_insn) takes, by
	 * kernel as measured (ci/kernel-caps): the cs-prefixed nop10 (the
	 * site 7.3 optimizes) on 7.2, not on 6.18; ds- and lock-prefixed
	 * instructions on none. */
	[FEATURE_PROBE_NOP10] = { "probe_nop10", feature_probe_x86_insn,
		"x86-64, a uprobe decoder taking the cs prefix (7.2: yes, 6.18: no)" },
	[FEATURE_PROBE_DS_PREFIX] = { "probe_ds_prefix", feature_probe_x86_insn,
		"x86-64, a uprobe decoder taking the ds prefix (none measured)" },
	[FEATURE_PROBE_LOCK_PREFIX] = { "probe_lock_prefix", feature_probe_x86_insn,
		"x86-64, a uprobe decoder taking the lock prefix (none measured)" },
	/* Not the kernel's: the suites need root for tracefs and the
	 * invariants; the tracer itself asks the kernel and reports what it
	 * refuses. */
	[FEATURE_ROOT] = { "root", feature_probe_root,
		"effective uid 0" },
	/* 341dfcf8d78e ("btf: expose BTF info through sysfs") */
	[FEATURE_BTF] = { "btf", feature_probe_btf,
		"CONFIG_DEBUG_INFO_BTF, Linux 5.4+" },
	/* 99c55f7d47c0 ("bpf: introduce BPF syscall and maps") */
	[FEATURE_BPF] = { "bpf", feature_probe_bpf,
		"CONFIG_BPF_SYSCALL, root or CAP_BPF" },
	/* 7c7e3d31e785 ("bpf: Introduce helper bpf_find_vma"): sites by
	 * place find their mapping with it (pc.bpf.c) */
	[FEATURE_BPF_FIND_VMA] = { "bpf_find_vma", feature_probe_kernel_btf,
		"Linux 5.17+" },
	/* fc7566ad0a82 ("bpf: Introduce bpf_preempt_[disable,enable]
	 * kfuncs"): the preemption guard (ci/kernel-issues K5) */
	[FEATURE_BPF_PREEMPT_DISABLE] = { "bpf_preempt_disable", feature_probe_kernel_btf,
		"Linux 6.10+" },
	/* "bpf: implement sleepable uprobes by chaining gps" and "bpf:
	 * allow sleepable uprobe programs to attach" (Delyan Kratunov,
	 * 2022): trace --sleepable */
	[FEATURE_SLEEPABLE_UPROBE] = { "sleepable_uprobe", feature_probe_sleepable,
		"Linux 5.19+" },
	/* The caller's, not only the kernel's: what every attach mode
	 * needs (a map and a kprobe-type program), and what the perf mode
	 * needs besides (privs.c has what each kernel's check asks). */
	[FEATURE_BPF_TRACING] = { "bpf_tracing", feature_probe_bpf_tracing,
		"CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN" },
	[FEATURE_PERF_UPROBE] = { "perf_uprobe", feature_probe_perf_uprobe,
		"the uprobe PMU; CAP_PERFMON, or CAP_SYS_ADMIN with the fix for "
		"CVE-2025-38466" },
	/* The gate of every perf_event_open (tracefs events too):
	 * kernel.perf_event_paranoid; at 3 (Debian's) CAP_SYS_ADMIN. */
	[FEATURE_PERF_EVENT] = { "perf_event", feature_probe_perf_event,
		"CAP_PERFMON, or CAP_SYS_ADMIN where kernel.perf_event_paranoid is 3" },
};

#define FAKE_ENV "PROBECHECK_FEATURE_FAKE"

/* The cache: every row's answer, decided once. */
enum { FS_UNKNOWN, FS_PROBING, FS_DECIDED };
static struct {
	int fs_state;
	int fs_has;
	char fs_why[400];
} cache[FEATURE_FAKE + 1];

/* A key the caps file and `requires` can carry: [a-z][a-z0-9_]*, and
 * not KEY_why, which readers take for a reason. */
static int key_ok(const char *k)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789_";
	size_t n = strlen(k);

	if (!n || k[0] < 'a' || k[0] > 'z' || strspn(k, chars) != n)
		return 0;
	return n < 4 || strcmp(k + n - 4, "_why");
}

/* PROBECHECK_FEATURE_FAKE's key, or NULL: read once, refused (said
 * once) when it is not a new key. */
static const char *fake_key(void)
{
	static int done;
	static const char *key;
	const char *env;

	if (done)
		return key;
	done = 1;
	env = getenv(FAKE_ENV);
	if (!env || !*env)
		return NULL;
	for (int i = 0; i < FEATURE_FAKE; i++)
		if (!strcmp(env, rows[i].fr_key)) {
			pc_err("features: %s='%s': a row of the table "
			       "already; no fake row", FAKE_ENV, env);
			return NULL;
		}
	if (!key_ok(env)) {
		pc_err("features: %s='%s': not a key ([a-z][a-z0-9_]*, not ending "
		       "in _why); no fake row", FAKE_ENV, env);
		return NULL;
	}
	key = env;
	return key;
}

enum feature_id feature_count(void)
{
	return fake_key() ? FEATURE_FAKE + 1 : FEATURE_FAKE;
}

const char *feature_key(enum feature_id id)
{
	if (id < FEATURE_FAKE)
		return rows[id].fr_key;
	return id == FEATURE_FAKE ? fake_key() : NULL;
}

const char *feature_needs(enum feature_id id)
{
	if (id < FEATURE_FAKE)
		return rows[id].fr_needs;
	return "nothing: a test row";
}

void feature_note(enum feature_id id, int r, const char *why)
{
	char caps[300];

	if (id > FEATURE_FAKE || cache[id].fs_state == FS_DECIDED)
		return;         /* the first answer stands */
	cache[id].fs_has = r > 0;
	if (r == -EPERM || r == -EACCES)    /* name the caller's rights */
		snprintf(cache[id].fs_why, sizeof(cache[id].fs_why),
			 "the probe could not run: %s (the caller: uid %u, %s)",
			 pc_strerror(-r), (unsigned)geteuid(),
			 privs_names(privs_effective(), caps, sizeof(caps)));
	else if (r < 0)
		snprintf(cache[id].fs_why, sizeof(cache[id].fs_why),
			 "the probe could not run: %s", pc_strerror(-r));
	else
		snprintf(cache[id].fs_why, sizeof(cache[id].fs_why), "%s",
			 r > 0 ? "" : why && *why ? why : "absent");
	cache[id].fs_state = FS_DECIDED;
}

static void probe(enum feature_id id)
{
	char why[sizeof(cache[id].fs_why)] = "";
	int r = 0;

	cache[id].fs_state = FS_PROBING;
	if (id == FEATURE_FAKE)
		snprintf(why, sizeof(why), "fake row for tests (%s=%s)",
			 FAKE_ENV, fake_key());
	else
		r = rows[id].fr_probe(id, why, sizeof(why));
	/* Still FS_PROBING unless the probe noted its own row (then this
	 * answer is ignored: the first one stands).  A reset to FS_UNKNOWN
	 * here was a no-op: feature_note decides either state alike (draw
	 * s8-20261129-c's abf1cd2d changed only it). */
	feature_note(id, r, why);
}

int feature_has(enum feature_id id, char *why, size_t len)
{
	const char *said = "no such row in the feature table";
	int has = 0;

	if (id < feature_count()) {
		if (cache[id].fs_state == FS_UNKNOWN)
			probe(id);
		/* A probe asking for its own row would loop: absent. */
		if (cache[id].fs_state == FS_PROBING)
			said = "its probe asked for itself";
		else
			said = cache[id].fs_why;
		has = cache[id].fs_state == FS_DECIDED && cache[id].fs_has;
	}
	if (why && len)
		snprintf(why, len, "%s", has ? "" : said);
	return has;
}
