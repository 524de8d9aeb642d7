/*
 * attach.c — the table of attach modes and the one place "auto" is
 * decided.  The modes themselves are attach_perf.c, attach_tracefs.c and
 * attach_multi.c, each ending in its ops table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
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

const struct attach_ops *attach_choose(const struct attach_ops *want,
				       int per_process)
{
	char why[256];
	int caps;

	if (want)
		return want;
	caps = attach_multi_ops.ao_caps(why, sizeof(why));
	if (caps < 0) {
		pc_dbg("attach: auto: perf (%s)", why);
		return &attach_perf_ops;
	}
	if (per_process && !(caps & ATTACH_CAP_PID_ALL)) {
		pc_dbg("attach: auto: perf (%s)", why);
		return &attach_perf_ops;
	}
	return &attach_multi_ops;
}

enum attach_site_id attach_site_id(char *why, size_t len)
{
	static int done;
	static enum attach_site_id id;
	static char said[200];
	const char *force = getenv("PROBECHECK_SITE_ID");
	int cookie, findvma;

	if (!done) {
		cookie = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
					BPF_FUNC_get_attach_cookie, NULL) == 1;
		findvma = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
					BPF_FUNC_find_vma, NULL) == 1;
		id = findvma ? ATTACH_ID_PLACE_FINDVMA : ATTACH_ID_PLACE_LIST;
		if (force && !strcmp(force, "place"))
			snprintf(said, sizeof(said), "by place (PROBECHECK_SITE_ID=place), "
				 "mappings found with %s", findvma ? "bpf_find_vma" : "mm->mmap");
		else if (cookie || (force && !strcmp(force, "cookie")))
			id = ATTACH_ID_COOKIE,
			snprintf(said, sizeof(said), "by BPF cookie%s",
				 cookie ? "" : " (PROBECHECK_SITE_ID=cookie: the kernel has none)");
		else
			snprintf(said, sizeof(said), "by place: no bpf_cookie in kprobe "
				 "programs (Linux 5.15+); mappings found with %s",
				 findvma ? "bpf_find_vma" : "mm->mmap");
		done = 1;
		pc_dbg("attach: sites told apart %s", said);
	}
	if (why)
		snprintf(why, len, "%s", said);
	return id;
}

const char *attach_site_reason(int err, const struct site *st)
{
	if (err == -EINVAL && st->st_sema_off)
		return "invalid argument (another uprobe at this address "
		       "with a different semaphore offset?)";
	return pc_site_strerror(-err);
}
