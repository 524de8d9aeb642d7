/*
 * test_umulti.c — what the uprobe_multi experiment's hit count means
 * (features_multi.c: two calls, from two threads of the filtered pid).
 * The kernels of the matrix give 0 (no link before 6.6) or 2 (6.10 on);
 * 6.6-6.9 give 1 (their link filtered by thread, 46ba0e49b642), which
 * only this test shows the registry answering.
 *
 * And the link's attr as umulti_link_create builds it: every byte past
 * the fields it sets is zero, whatever was on the stack before (the
 * kernel refuses a non-zero byte after the command's last field with
 * EINVAL, before it looks at the program: a bad program fd must be the
 * error it gives).  And a link the kernel gives descriptor 0 (a tracer
 * started with stdin closed) is a link, not an error.
 *
 * And the probe answers the row it is asked for: with BPF_LINK_CREATE
 * refused (seccomp, in a child) neither row is there, and uprobe_multi_pid
 * says it is for want of the link, in uprobe_multi's words (87fb5b69 of
 * draw fresh-20261207-d swapped the rows: the registry, which keeps the
 * rows the probe notes, cannot see it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "unit.h"
#include "attach_multi.h"
#include "features.h"
#include "features_multi.h"
#include "procmaps.h"

/* Leave non-zero bytes where the next call's locals will be. */
__attribute__((noinline)) static void dirty_stack(void)
{
	volatile unsigned char junk[8192];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

static void test_attr_zeroed(void)
{
	static const uint64_t off = 0x1000;
	int fd;

	if (!feature_has(FEATURE_UPROBE_MULTI, NULL, 0)) {
		UNIT_TRUE(1, "attr tail zeroed # SKIP no uprobe_multi link on this kernel");
		return;
	}
	dirty_stack();
	fd = umulti_link_create(-1, "/proc/self/exe", &off, NULL, NULL, 1, 0, 0);
	UNIT_EQ_INT(fd, -EBADF, "a bad program fd refused as such, not the attr (EINVAL)");
}

/* A function of ours for the link to point at. */
__attribute__((noinline, used)) void umulti_fd0_target(void)
{
	__asm__ volatile("" ::: "memory");
}

static void test_link_at_fd0(void)
{
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
	uint64_t off = 0;
	int pfd, saved, fd;

	if (!feature_has(FEATURE_UPROBE_MULTI, NULL, 0)) {
		UNIT_TRUE(1, "link at fd 0 # SKIP no uprobe_multi link on this kernel");
		return;
	}
	pfd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "pc_fd0", "GPL", prog, 2, &opts);
	UNIT_TRUE(pfd >= 0, "a program for the link");
	UNIT_EQ_INT(procmaps_self_offset((const void *)umulti_fd0_target, &off), 0,
		    "the target's file offset");
	saved = fcntl(0, F_DUPFD_CLOEXEC, 3);
	close(0);
	errno = ENOENT;         /* stale, as any earlier failed call leaves it */
	fd = umulti_link_create(pfd, "/proc/self/exe", &off, NULL, NULL, 1, 0, 0);
	UNIT_EQ_INT(fd, 0, "with descriptor 0 free, the link is descriptor 0 (not an error)");
	if (fd >= 0)
		close(fd);
	if (saved >= 0) {
		dup2(saved, 0);
		close(saved);
	}
	if (pfd >= 0)
		close(pfd);
}

/* bpf(BPF_LINK_CREATE, ...) refused with EINVAL from now on, as a kernel
 * without BPF links (before 5.7) answers; everything else allowed. */
static int deny_link_create(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_bpf, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_LINK_CREATE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) ? -errno : 0;
}

struct rows_seen {
	int rs_err, rs_link, rs_pid;
	char rs_link_why[256], rs_pid_why[256];
};

static void test_rows_apart(void)
{
	static const char prefix[] = "no uprobe_multi link: ";
	struct rows_seen r = { .rs_err = -1 };
	int p[2], st = -1;
	pid_t pid;

	if (pipe(p) || (pid = fork()) < 0) {
		UNIT_TRUE(0, "pipe and fork for the seccomp child");
		return;
	}
	if (!pid) {
		close(p[0]);
		r.rs_err = deny_link_create();
		r.rs_link = feature_probe_uprobe_multi(FEATURE_UPROBE_MULTI, r.rs_link_why,
						       sizeof(r.rs_link_why));
		r.rs_pid = feature_probe_uprobe_multi(FEATURE_UPROBE_MULTI_PID, r.rs_pid_why,
						      sizeof(r.rs_pid_why));
		_exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	UNIT_EQ_INT(read(p[0], &r, sizeof(r)), sizeof(r), "the seccomp child's answers");
	close(p[0]);
	waitpid(pid, &st, 0);
	UNIT_EQ_INT(st, 0, "the seccomp child");
	UNIT_EQ_INT(r.rs_err, 0, "BPF_LINK_CREATE refused by seccomp");
	UNIT_EQ_INT(r.rs_link, 0, "no BPF links: uprobe_multi absent");
	UNIT_EQ_INT(r.rs_pid, 0, "... uprobe_multi_pid too");
	UNIT_TRUE(!strncmp(r.rs_pid_why, prefix, sizeof(prefix) - 1) &&
		  !strcmp(r.rs_pid_why + sizeof(prefix) - 1, r.rs_link_why) && r.rs_link_why[0],
		  "uprobe_multi_pid's reason is the missing link, in uprobe_multi's words");
	if (strncmp(r.rs_pid_why, prefix, sizeof(prefix) - 1))
		printf("#   uprobe_multi: '%s'\n#   uprobe_multi_pid: '%s'\n",
		       r.rs_link_why, r.rs_pid_why);
}

static struct umulti_seen judge(uint64_t hits)
{
	struct umulti_seen c;

	memset(&c, 0, sizeof(c));
	umulti_judge(hits, &c);
	return c;
}

int main(void)
{
	struct umulti_seen c;

	test_rows_apart();
	c = judge(0);
	UNIT_TRUE(!c.us_link && !c.us_pid, "no hit: no uprobe_multi, no pid filter");
	UNIT_TRUE(strstr(c.us_link_why, "not seen") != NULL, "no hit: said why");
	c = judge(1);
	UNIT_TRUE(c.us_link, "one hit (6.6-6.9): uprobe_multi works");
	UNIT_TRUE(!c.us_pid, "one hit: its pid filter loses other threads");
	UNIT_TRUE(strstr(c.us_pid_why, "fixed in Linux 6.10") != NULL, "one hit: said why");
	c = judge(2);
	UNIT_TRUE(c.us_link && c.us_pid, "two hits: both");
	UNIT_EQ_STR(c.us_link_why, "", "two hits: nothing to say");
	UNIT_EQ_STR(c.us_pid_why, "", "two hits: nothing to say of the pid");
	c = judge(3);
	UNIT_TRUE(c.us_link && !c.us_pid, "three hits for two calls: no pid filter to trust");
	UNIT_TRUE(strstr(c.us_pid_why, "3 hits counted for 2 calls") != NULL, "three hits: said");
	test_attr_zeroed();
	test_link_at_fd0();
	return unit_done();
}
