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
 */
#include <errno.h>
#include <fcntl.h>
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
