/*
 * attach_multi.c — uprobe_multi links: one BPF link for many uprobes.
 *
 * Kernel mechanism: BPF_LINK_CREATE with attach_type
 * BPF_TRACE_UPROBE_MULTI (Linux 6.6, "bpf: Add multi uprobe link") takes
 * one path and arrays of offsets, ref_ctr_offsets and cookies; the
 * program must be a kprobe-type program loaded with that
 * expected_attach_type.  The link registers every uprobe
 * (or none: a failure unregisters what it made) and closing its fd
 * unregisters them all with one RCU synchronisation, where per-site perf
 * events pay one each on close (~0.1 s per site on 6.x; 300 sites on
 * 6.18, measured in one run: perf 49.2 s, multi 0.19 s).
 *
 * Quirks: libbpf 1.1 (Debian 12) and the 6.1 uapi headers know neither
 * the attach type nor the attr fields, so the attr is spelled out here,
 * checked against include/uapi/linux/bpf.h.  With a pid the link filters
 * by process; before Linux 6.10 (commit "bpf: fix multi-uprobe PID
 * filtering logic") it compared the hitting *thread* with the pid's main
 * thread, losing hits of every other thread.  Whether the kernel has the
 * link, and a filter that sees every thread, is the feature registry's
 * (rows uprobe_multi and uprobe_multi_pid, probed in features_multi.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "attach_multi.h"
#include "features.h"
#include "install_check.h"
#include "log.h"
#include "privs.h"

/* union bpf_attr's link_create as of Linux 6.6, uprobe_multi member. */
struct umulti_attr {
	__u32 ua_prog_fd;
	__u32 ua_target_fd;
	__u32 ua_attach_type;
	__u32 ua_link_flags;
	__aligned_u64 ua_path;
	__aligned_u64 ua_offsets;
	__aligned_u64 ua_ref_ctr_offsets;
	__aligned_u64 ua_cookies;
	__u32 ua_cnt;
	__u32 ua_flags;         /* UMULTI_F_RETURN */
	__u32 ua_pid;           /* 0: no filter */
	__u32 ua_pad;
};
_Static_assert(offsetof(struct umulti_attr, ua_path) == 16, "uapi layout");
_Static_assert(offsetof(struct umulti_attr, ua_cnt) == 48, "uapi layout");
_Static_assert(offsetof(struct umulti_attr, ua_pid) == 56, "uapi layout");

int umulti_link_create(int prog_fd, const char *path, const uint64_t *offs,
		       const uint64_t *ref_ctr_offs, const uint64_t *cookies,
		       uint32_t cnt, int retprobe, pid_t pid)
{
	struct umulti_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.ua_prog_fd = prog_fd;
	a.ua_attach_type = UMULTI_ATTACH_TYPE;
	a.ua_path = (uintptr_t)path;
	a.ua_offsets = (uintptr_t)offs;
	a.ua_ref_ctr_offsets = (uintptr_t)ref_ctr_offs;
	a.ua_cookies = (uintptr_t)cookies;
	a.ua_cnt = cnt;
	a.ua_flags = retprobe ? UMULTI_F_RETURN : 0;
	a.ua_pid = pid > 0 ? (__u32)pid : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* ---- the attach mode ---------------------------------------------------- */

/* The registry decides (features_multi.c): a link, and whether its pid
 * filter sees every thread. */
static int multi_caps(char *why, size_t len)
{
	if (!feature_has(FEATURE_UPROBE_MULTI, why, len))
		return -EOPNOTSUPP;
	if (feature_has(FEATURE_UPROBE_MULTI_PID, why, len))
		return ATTACH_CAP_BATCH | ATTACH_CAP_PID_ALL;
	return ATTACH_CAP_BATCH;
}

static void group_error(const struct site *l, uint32_t cnt, int err)
{
	char buf[400];
	const char *why = privs_why(PRIV_BPF, err, NULL, buf, sizeof(buf));

	if (!why)
		why = err == -EINVAL ? "invalid argument (two sites at one "
			"address with different semaphore offsets?)"
			: pc_site_strerror(-err);
	/* The kernel does not say which one failed. */
	pc_err("uprobe_multi: '%s': %u %s, the first %s:%s at offset 0x%llx: "
	       "%s", l->st_path, cnt, l->st_retprobe ? "uretprobes" : "uprobes",
	       l->st_provider, l->st_name, (unsigned long long)l->st_off, why);
}

/*
 * One link for the sites of the batch from @lead on that share its object
 * and direction and are not @done yet.  @buf holds three arrays of the
 * batch's size: offsets, ref_ctr_offsets, cookies.
 */
static int attach_group(const struct attach_req *r, size_t lead,
			uint8_t *done, uint64_t *buf)
{
	const struct site_set *ss = r->ar_ss;
	const struct site *l = &ss->ss_v[lead];
	size_t n = ss->ss_n - r->ar_first;
	uint64_t *offs = buf, *refs = buf + n, *cookies = buf + 2 * n;
	struct attach_link link = { .al_places_fd = -1 };
	uint32_t cnt = 0;
	int err;

	for (size_t i = lead; i < ss->ss_n; i++) {
		const struct site *st = &ss->ss_v[i];

		if (done[i - r->ar_first] || st->st_retprobe != l->st_retprobe ||
		    strcmp(st->st_open_path, l->st_open_path))
			continue;
		done[i - r->ar_first] = 1;
		offs[cnt] = st->st_off;
		refs[cnt] = st->st_sema_off;
		cookies[cnt++] = i + r->ar_cookie_add;
	}
	link.al_fd = umulti_link_create(bpf_program__fd(r->ar_prog),
					l->st_open_path, offs, refs, cookies,
					cnt, l->st_retprobe, r->ar_pid);
	if (link.al_fd < 0) {
		group_error(l, cnt, link.al_fd);
		/* Name the refused sites: each one tried on its own, in our
		 * own mm (install_check.c). */
		if (link.al_fd == -PC_ENOTSUPP)
			install_check_pid(ss, lead, getpid());
		return link.al_fd;
	}
	err = r->ar_push(r->ar_ctx, &link);
	if (err)
		close(link.al_fd);
	return err;
}

static int multi_open(const struct attach_req *r)
{
	size_t n = r->ar_ss->ss_n - r->ar_first;
	uint64_t *buf = calloc(3 * n, sizeof(*buf));
	uint8_t *done = calloc(n, 1);
	int err = buf && done ? 0 : -ENOMEM;

	for (size_t i = r->ar_first; i < r->ar_ss->ss_n && !err; i++)
		if (!done[i - r->ar_first])
			err = attach_group(r, i, done, buf);
	free(buf);
	free(done);
	return err;
}

/* One RCU synchronisation per link, not per uprobe. */
static void multi_release(struct attach_link *v, size_t n)
{
	while (n-- > 0)
		close(v[n].al_fd);
}

const struct attach_ops attach_multi_ops = {
	.ao_name = "multi",
	.ao_multi_prog = UMULTI_ATTACH_TYPE,
	.ao_caps = multi_caps,
	.ao_open = multi_open,
	.ao_release = multi_release,
};
