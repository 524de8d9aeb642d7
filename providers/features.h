/*
 * features.h — the one registry of what this kernel and machine can do.
 *
 * Modelled on libbpf's feature_probes[] (src/features.c): one table of
 * rows {key, probe, what the kernel needs}, each row probed by behaviour
 * the first time someone asks, never by version, and the answer cached
 * for the process in one cache (features.c).  Every consumer asks here:
 * `probecheck features` prints every row, the attach modes' ao_caps and
 * attach_choose decide from them, uprobe_pmu_open refuses a semaphore
 * the kernel cannot count, harness/lib/caps.bash copies every row of
 * `features` into the run's capability file and the suites' `requires`
 * read that.  A row added to the table reaches all of them.
 *
 * Where the probes are: features_sys.c (the file system and the process:
 * root, btf, tracefs, the uprobe PMU and its ref_ctr_offset field),
 * features_bpf.c (bpf, bpf_cookie and what the kernel's BTF says),
 * features_multi.c (uprobe_multi and its pid filter), features_x86.c
 * (syscalls and instruction forms of x86 uprobes).  Nothing else in
 * providers/, harness/cli/ or harness/lib/ probes the kernel
 * (suites/structure.bats greps for it).
 *
 * Test hook: PROBECHECK_FEATURE_FAKE=NAME (NAME a key: [a-z][a-z0-9_]*,
 * not one of the table's) appends a row NAME, always absent, why "fake
 * row for tests (PROBECHECK_FEATURE_FAKE)", as FEATURE_FAKE.  It shows
 * that a row travels from this table to `probecheck features`, the
 * capability file and RESULTS.md with nothing else changed
 * (suites/features.bats).
 */
#ifndef PC_FEATURES_H
#define PC_FEATURES_H

#include <stddef.h>

/* The rows, in the order `probecheck features` prints them. */
enum feature_id {
	FEATURE_UPROBE_PMU,             /* uprobe_pmu */
	FEATURE_REF_CTR_OFFSET,         /* ref_ctr_offset */
	FEATURE_BPF_COOKIE,             /* bpf_cookie */
	FEATURE_UPROBE_MULTI,           /* uprobe_multi */
	FEATURE_UPROBE_MULTI_PID,       /* uprobe_multi_pid */
	FEATURE_TRACEFS,                /* tracefs */
	FEATURE_URETPROBE_SYSCALL,      /* uretprobe_syscall */
	FEATURE_UPROBE_SYSCALL,         /* uprobe_syscall */
	FEATURE_UPROBE_OPTIMIZE,        /* uprobe_optimize */
	FEATURE_PROBE_NOP10,            /* probe_nop10 */
	FEATURE_PROBE_DS_PREFIX,        /* probe_ds_prefix */
	FEATURE_PROBE_LOCK_PREFIX,      /* probe_lock_prefix */
	FEATURE_ROOT,                   /* root */
	FEATURE_BTF,                    /* btf */
	FEATURE_BPF,                    /* bpf */
	FEATURE_BPF_FIND_VMA,           /* bpf_find_vma */
	FEATURE_BPF_PREEMPT_DISABLE,    /* bpf_preempt_disable */
	FEATURE_SLEEPABLE_UPROBE,       /* sleepable_uprobe */
	FEATURE_BPF_TRACING,            /* bpf_tracing: for this caller */
	FEATURE_PERF_UPROBE,            /* perf_uprobe: for this caller */
	FEATURE_PERF_EVENT,             /* perf_event: for this caller */
	FEATURE_FAKE,                   /* PROBECHECK_FEATURE_FAKE's row, if set */
};

/*
 * 1 if the row is present.  0 if absent, @why (may be NULL) saying what
 * was missing; a probe that could not run counts as absent, @why "the
 * probe could not run: <errno>".  The first call probes; later calls
 * read the cache.
 */
int feature_has(enum feature_id id, char *why, size_t len);

/* The rows there are: FEATURE_FAKE, or FEATURE_FAKE + 1 with the fake
 * row.  Iterate `for (id = 0; id < feature_count(); id++)`. */
enum feature_id feature_count(void);
/* The row's key ("uprobe_pmu"), as printed and as `requires` names it. */
const char *feature_key(enum feature_id id);
/* What the kernel needs for it, with the commit that added it. */
const char *feature_needs(enum feature_id id);

/*
 * For the probe files only.  A probe answers for @id: 1 present, 0
 * absent with @why, or -errno when it could not run.  One experiment
 * that decides several rows (uprobe_multi and its pid filter, the two
 * facts read from the kernel's BTF) answers the others with
 * feature_note(), so it runs once.
 */
typedef int feature_probe_fn(enum feature_id id, char *why, size_t len);
void feature_note(enum feature_id id, int r, const char *why);

/* features_sys.c */
feature_probe_fn feature_probe_root, feature_probe_btf, feature_probe_tracefs,
	feature_probe_uprobe_pmu, feature_probe_ref_ctr_offset,
	feature_probe_perf_uprobe, feature_probe_perf_event;
/* features_bpf.c */
feature_probe_fn feature_probe_bpf, feature_probe_bpf_cookie,
	feature_probe_kernel_btf, feature_probe_sleepable,
	feature_probe_bpf_tracing;
struct btf;
/* 1 when @btf has an enum @type with a value named @value, else 0. */
int feature_btf_has_enum_value(const struct btf *btf, const char *type,
			       const char *value);
/* features_multi.c */
feature_probe_fn feature_probe_uprobe_multi;
/* features_x86.c */
feature_probe_fn feature_probe_x86_syscall, feature_probe_uprobe_optimize,
	feature_probe_x86_insn;

#endif
