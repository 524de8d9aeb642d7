/*
 * attach.c — the table of attach modes and the one place "auto" is
 * decided, with the other decisions made from the feature registry
 * (features.h): how sites are told apart, the preemption guard.  The
 * modes themselves are attach_perf.c, attach_tracefs.c and
 * attach_multi.c, each ending in its ops table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "attach.h"
#include "privs.h"
#include "features.h"
#include "log.h"

const struct attach_ops *const attach_modes[] = {
	&attach_perf_ops,
	&attach_tracefs_ops,
	&attach_multi_ops,
	NULL,
};

void attach_mode_names(char *buf, size_t len, const char *last_sep)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; attach_modes[i] && used < len; i++) {
		const char *sep = !i ? "" : attach_modes[i + 1] ? ", " : last_sep;
		int n = snprintf(buf + used, len - used, "%s%s", sep,
				 attach_modes[i]->ao_name);

		if (n < 0)
			break;
		used += n;
	}
}

const struct attach_ops *attach_mode_find(const char *name)
{
	for (size_t i = 0; attach_modes[i]; i++)
		if (!strcmp(name, attach_modes[i]->ao_name))
			return attach_modes[i];
	return NULL;
}

/* Perf, unless this caller may not use it and may use tracefs: a caller
 * with CAP_BPF and CAP_PERFMON only, on a kernel with the fix for
 * CVE-2025-38466 and without uprobe_multi, at perf_event_paranoid 2
 * (measured: Debian 5.10.0-46; privileges.bats). */
static const struct attach_ops *fallback(void)
{
	char why[400];

	if (attach_perf_ops.ao_caps(why, sizeof(why)) >= 0)
		return &attach_perf_ops;
	pc_dbg("attach: auto: not perf (%s)", why);
	if (attach_tracefs_ops.ao_caps(why, sizeof(why)) >= 0)
		return &attach_tracefs_ops;
	pc_dbg("attach: auto: not tracefs (%s): perf, to say why", why);
	return &attach_perf_ops;
}

const struct attach_ops *attach_choose(const struct attach_ops *want,
				       int per_process)
{
	const struct attach_ops *o;
	char why[400];
	int caps;

	if (want)
		return want;
	caps = attach_multi_ops.ao_caps(why, sizeof(why));
	if (caps >= 0 && (!per_process || (caps & ATTACH_CAP_PID_ALL)))
		return &attach_multi_ops;
	o = fallback();
	pc_dbg("attach: auto: %s (%s)", o->ao_name, why);
	return o;
}

int attach_preempt_guard(char *why, size_t len)
{
	const char *env = getenv("PROBECHECK_PREEMPT_GUARD");
	int guard;

	if (env && !strcmp(env, "0")) {
		snprintf(why, len, "off (PROBECHECK_PREEMPT_GUARD=0)");
		return 0;
	}
	guard = feature_has(FEATURE_BPF_PREEMPT_DISABLE, NULL, 0);
	snprintf(why, len, "%s", guard ? "on: site programs run with bpf_preempt_disable"
		 : "off: the kernel has no bpf_preempt_disable (Linux 6.10+)");
	return guard;
}

/* Decided once, from the registry: bpf_find_vma (read from the kernel's
 * BTF, tens of ms) is asked only when places are used. */
static enum attach_site_id decide(char *said, size_t len)
{
	const char *force = getenv("PROBECHECK_SITE_ID");
	int forced_place = force && !strcmp(force, "place");
	int cookie = feature_has(FEATURE_BPF_COOKIE, NULL, 0);
	const char *how;

	if (!forced_place && (cookie || (force && !strcmp(force, "cookie")))) {
		snprintf(said, len, "by BPF cookie%s", cookie ? ""
			 : " (PROBECHECK_SITE_ID=cookie: the kernel has none)");
		return ATTACH_ID_COOKIE;
	}
	how = feature_has(FEATURE_BPF_FIND_VMA, NULL, 0) ? "bpf_find_vma"
							 : "mm->mmap";
	snprintf(said, len, "by place%s; mappings found with %s",
		 forced_place ? " (PROBECHECK_SITE_ID=place)"
		 : ": no bpf_cookie in kprobe programs (Linux 5.15+)", how);
	return how[0] == 'b' ? ATTACH_ID_PLACE_FINDVMA : ATTACH_ID_PLACE_LIST;
}

enum attach_site_id attach_site_id(char *why, size_t len)
{
	static int done;
	static enum attach_site_id id;
	static char said[200];

	if (!done) {
		id = decide(said, sizeof(said));
		done = 1;
		pc_dbg("attach: sites told apart %s", said);
	}
	if (why)
		snprintf(why, len, "%s", said);
	return id;
}

const char *attach_site_reason(int err, const struct site *st,
			       enum priv_op op)
{
	static char buf[400];
	struct rlimit rl;

	if (err == -EINVAL && st->st_sema_off)
		return "invalid argument (another uprobe at this address "
		       "with a different semaphore offset?)";
	/* Seen at 10,000 sites in a guest whose hard limit is 4096. */
	if (err == -EMFILE && !getrlimit(RLIMIT_NOFILE, &rl)) {
		snprintf(buf, sizeof(buf), "too many open files: this attach "
			 "mode holds descriptors per site and RLIMIT_NOFILE is "
			 "%llu (the trace command raised it to its hard limit); "
			 "fewer sites, a higher hard limit, or --attach=multi",
			 (unsigned long long)rl.rlim_cur);
		return buf;
	}
	if (privs_why(op, err, NULL, buf, sizeof(buf)))
		return buf;
	return pc_site_strerror(-err);
}
