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
 * thread, losing hits of every other thread: umulti_probe tells by
 * behaviour.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "attach_multi.h"
#include "install_check.h"
#include "log.h"
#include "procmaps.h"

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

/* ---- the feature probe ---- */

/* What the probe's link points at: a call the compiler must keep. */
__attribute__((noinline)) void umulti_probe_target(void)
{
	__asm__ volatile("" ::: "memory");
}

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })

/* counts[0]++ on every hit: a kprobe-type program for uprobe_multi. */
static int load_counter(int map_fd)
{
	const struct bpf_insn prog[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
		INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0,
		     map_fd),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0,
		     BPF_ADD),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "pc_probe", "GPL", prog,
			       sizeof(prog) / sizeof(prog[0]), &opts);

	return fd < 0 ? -errno : fd;
}

static void *second_thread(void *arg)
{
	umulti_probe_target();
	return arg;
}

/* The child: wait for the link, call the target from two threads. */
static void __attribute__((noreturn)) probe_child(int go)
{
	pthread_t t;
	char c;

	if (read(go, &c, 1) != 1)
		_exit(1);       /* no link: nothing to call */
	umulti_probe_target();
	if (pthread_create(&t, NULL, second_thread, NULL) ||
	    pthread_join(t, NULL))
		_exit(2);
	_exit(0);
}

/* Fork the child, link on it, let it run; *hits = what was counted.
 * A link the kernel refuses is a finding (uc_link_why), not an error. */
static int run_child(int prog_fd, int map_fd, uint64_t off,
		     struct umulti_caps *c, uint64_t *hits)
{
	uint64_t cookie = 0, zero = 0;
	int p[2], st = 0, link, err = 0;
	__u32 key = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		close(p[1]);
		probe_child(p[0]);
	}
	close(p[0]);
	link = umulti_link_create(prog_fd, "/proc/self/exe", &off, &zero,
				  &cookie, 1, 0, pid);
	if (link < 0)
		snprintf(c->uc_link_why, sizeof(c->uc_link_why),
			 "BPF_LINK_CREATE with BPF_TRACE_UPROBE_MULTI: %s "
			 "(no uprobe_multi link; Linux 6.6+)", pc_strerror(-link));
	else if (write(p[1], "g", 1) != 1)
		err = -errno;
	close(p[1]);    /* without a link the child exits uncalled */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (link < 0)
		return 0;
	if (!err && WIFSIGNALED(st))
		snprintf(c->uc_link_why, sizeof(c->uc_link_why),
			 "the probe's child was killed by signal %d at the "
			 "probed call (a uprobe under an emulator?)",
			 WTERMSIG(st));
	else if (!err && bpf_map_lookup_elem(map_fd, &key, hits))
		err = -errno;
	close(link);
	return err;
}

static int probe_once(struct umulti_caps *c)
{
	int map_fd, prog_fd = -1, err;
	uint64_t off, hits = 0;

	err = procmaps_self_offset((const void *)umulti_probe_target, &off);
	if (err)
		return err;
	map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pc_probe_cnt", 4, 8, 1,
				NULL);
	if (map_fd < 0)
		return -errno;
	prog_fd = load_counter(map_fd);
	if (prog_fd < 0) {
		snprintf(c->uc_link_why, sizeof(c->uc_link_why),
			 "kprobe program with expected_attach_type "
			 "BPF_TRACE_UPROBE_MULTI refused: %s", pc_strerror(-prog_fd));
		close(map_fd);
		return 0;
	}
	err = run_child(prog_fd, map_fd, off, c, &hits);
	close(prog_fd);
	close(map_fd);
	if (err || c->uc_link_why[0])
		return err;
	c->uc_link = hits >= 1;
	c->uc_pid = hits == 2;
	if (!c->uc_link)
		snprintf(c->uc_link_why, sizeof(c->uc_link_why),
			 "uprobe_multi link made, but the probed call was not seen");
	else if (hits == 1)
		snprintf(c->uc_pid_why, sizeof(c->uc_pid_why),
			 "with a pid, a hit in a second thread of that process "
			 "was lost (filter by thread, fixed in Linux 6.10)");
	else if (hits != 2)
		snprintf(c->uc_pid_why, sizeof(c->uc_pid_why),
			 "with a pid, %llu hits counted for 2 calls",
			 (unsigned long long)hits);
	return 0;
}

int umulti_probe(struct umulti_caps *c)
{
	static struct umulti_caps cache;
	static int done, err;

	if (!done) {
		err = probe_once(&cache);
		done = 1;
	}
	*c = cache;
	if (!c->uc_link && !c->uc_pid_why[0])
		snprintf(c->uc_pid_why, sizeof(c->uc_pid_why),
			 "no uprobe_multi link: %s", c->uc_link_why);
	return err;
}

/* ---- the attach mode ---------------------------------------------------- */

static int multi_caps(char *why, size_t len)
{
	struct umulti_caps c;
	int err = umulti_probe(&c);

	if (err) {
		snprintf(why, len, "the uprobe_multi probe could not run: %s",
			 pc_strerror(-err));
		return err;
	}
	if (!c.uc_link) {
		snprintf(why, len, "%s", c.uc_link_why);
		return -EOPNOTSUPP;
	}
	snprintf(why, len, "%s", c.uc_pid_why);
	return ATTACH_CAP_BATCH | (c.uc_pid ? ATTACH_CAP_PID_ALL : 0);
}

static void group_error(const struct site *l, uint32_t cnt, int err)
{
	/* The kernel does not say which one failed. */
	pc_err("uprobe_multi: '%s': %u %s, the first %s:%s at offset 0x%llx: "
	       "%s", l->st_path, cnt, l->st_retprobe ? "uretprobes" : "uprobes",
	       l->st_provider, l->st_name, (unsigned long long)l->st_off,
	       err == -EINVAL ? "invalid argument (two sites at one address "
	       "with different semaphore offsets?)" : pc_site_strerror(-err));
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
