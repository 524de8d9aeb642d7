/*
 * features_multi.c — registry rows (features.h) uprobe_multi and
 * uprobe_multi_pid, decided by one experiment, never by version.
 *
 * A throw-away counting program is attached by one uprobe_multi link
 * (89ae89f53d20 "bpf: Add multi uprobe link", Linux 6.6), filtered on a
 * forked child of ours, at a function of our own executable; the child
 * calls it from its main thread and from a second thread.  Main thread
 * seen: uprobe_multi; both seen: uprobe_multi_pid.  Before Linux 6.10
 * (46ba0e49b642 "bpf: fix multi-uprobe PID filtering logic") the link's
 * filter compared the hitting *thread* with the pid's main thread, and
 * the second thread's hit was lost.  The link itself is made as the
 * attach mode makes it (umulti_link_create, attach_multi.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach_multi.h"
#include "features.h"
#include "features_multi.h"
#include "log.h"
#include "privs.h"
#include "procmaps.h"

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
 * A link the kernel refuses is a finding (us_link_why), not an error. */
static int run_child(int prog_fd, int map_fd, uint64_t off,
		     struct umulti_seen *c, uint64_t *hits)
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
		snprintf(c->us_link_why, sizeof(c->us_link_why),
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
		snprintf(c->us_link_why, sizeof(c->us_link_why),
			 "the probe's child was killed by signal %d at the "
			 "probed call (a uprobe under an emulator?)",
			 WTERMSIG(st));
	else if (!err && bpf_map_lookup_elem(map_fd, &key, hits))
		err = -errno;
	close(link);
	return err;
}

/* @what refused with @err: 0 with the reason in @c (a finding), naming
 * the capability the caller lacks when it is a permission; a map refused
 * otherwise is an experiment that could not run (@err). */
static int refused(int err, const char *what, struct umulti_seen *c)
{
	char r[sizeof(c->us_link_why) - 100];

	if (!privs_why(PRIV_BPF, err, NULL, r, sizeof(r))) {
		if (!strcmp(what, "BPF_MAP_CREATE"))
			return err;
		snprintf(r, sizeof(r), "%s", pc_strerror(-err));
	}
	snprintf(c->us_link_why, sizeof(c->us_link_why), "%s refused: %s",
		 what, r);
	return 0;
}

/* 0 with @c filled in, or -errno when the experiment could not run. */
static int experiment(struct umulti_seen *c)
{
	int map_fd, prog_fd = -1, err;
	uint64_t off, hits = 0;

	err = procmaps_self_offset((const void *)umulti_probe_target, &off);
	if (err)
		return err;
	map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pc_probe_cnt", 4, 8, 1,
				NULL);
	if (map_fd < 0)
		return refused(-errno, "BPF_MAP_CREATE", c);
	prog_fd = load_counter(map_fd);
	if (prog_fd < 0) {
		close(map_fd);
		return refused(prog_fd, "kprobe program with expected_attach_type "
			       "BPF_TRACE_UPROBE_MULTI", c);
	}
	err = run_child(prog_fd, map_fd, off, c, &hits);
	close(prog_fd);
	close(map_fd);
	if (err || c->us_link_why[0])
		return err;
	umulti_judge(hits, c);
	return 0;
}

void umulti_judge(uint64_t hits, struct umulti_seen *c)
{
	c->us_link = hits >= 1;
	c->us_pid = hits == 2;
	if (!c->us_link)
		snprintf(c->us_link_why, sizeof(c->us_link_why),
			 "uprobe_multi link made, but the probed call was not seen");
	else if (hits == 1)
		snprintf(c->us_pid_why, sizeof(c->us_pid_why),
			 "with a pid, a hit in a second thread of that process "
			 "was lost (filter by thread, fixed in Linux 6.10)");
	else if (hits != 2)
		snprintf(c->us_pid_why, sizeof(c->us_pid_why),
			 "with a pid, %llu hits counted for 2 calls",
			 (unsigned long long)hits);
}

/* Both rows from one run: the one asked for is returned, the other
 * noted. */
int feature_probe_uprobe_multi(enum feature_id id, char *why, size_t len)
{
	struct umulti_seen c = { 0 };
	int err = experiment(&c);

	if (err) {
		feature_note(FEATURE_UPROBE_MULTI, err, NULL);
		feature_note(FEATURE_UPROBE_MULTI_PID, err, NULL);
		return err;
	}
	if (!c.us_link && !c.us_pid_why[0])
		snprintf(c.us_pid_why, sizeof(c.us_pid_why),
			 "no uprobe_multi link: %s", c.us_link_why);
	feature_note(FEATURE_UPROBE_MULTI, c.us_link, c.us_link_why);
	feature_note(FEATURE_UPROBE_MULTI_PID, c.us_pid, c.us_pid_why);
	if (id == FEATURE_UPROBE_MULTI_PID) {
		snprintf(why, len, "%s", c.us_pid_why);
		return c.us_pid;
	}
	snprintf(why, len, "%s", c.us_link_why);
	return c.us_link;
}
