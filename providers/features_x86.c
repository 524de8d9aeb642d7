/*
 * features_x86.c — registry rows (features.h) of what the x86 kernel does
 * with a uprobe beyond the breakpoint, probed by behaviour in forked
 * children, never by version.
 *
 *   uretprobe_syscall  syscall 335 exists (6.11, ff474a78cef5): the return
 *                      trampoline enters the kernel through it, so a
 *                      seccomp filter sees it (passed through since 6.14)
 *   uprobe_syscall     syscall 336 exists (6.18, 56101b69c919): the
 *                      optimized-uprobe trampoline's way in
 *   uprobe_optimize    a uprobe on a 5-byte nop (0f 1f 44 00 00) is
 *                      rewritten into a CALL into a [uprobes-trampoline]
 *                      mapping after it was hit (6.18, ba2bfc97b462); the
 *                      red zone and fork problems of ci/kernel-issues K1,
 *                      K2 live on that path
 *
 *   probe_nop10        a uprobe on a 10-byte cs nopw (66 2e 0f 1f 84 00..):
 *                      the site 7.3 optimizes; older decoders refuse its
 *                      cs prefix
 *   probe_ds_prefix    a uprobe on a ds-prefixed nopl (3e 0f 1f 40 00)
 *   probe_lock_prefix  a uprobe on lock orq $0,(%rsp) (f0 48 83 0c 24 00)
 *                      Each is registered on our own text for our own pid
 *                      (the object is mapped, so the kernel analyses the
 *                      instruction at once): ENOTSUPP (524) means refused.
 *                      Such a site, attached before its object is mapped,
 *                      would be dropped in silence (install_check.c).
 *
 * Both syscalls refuse a caller outside their trampoline with SIGILL, so
 * a child that makes the call tells: ENOSYS means absent, death by SIGILL
 * means present.  The children are made undumpable so the SIGILL leaves
 * no core file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include "features.h"
#include "log.h"
#include "procmaps.h"
#include "uprobe_pmu.h"

/* The site: a 5-byte nop and a return, in our own text. */
void pc_feat_nop5_site(void);
__asm__(".text\n"
	".globl pc_feat_nop5_site\n"
	".type pc_feat_nop5_site, @function\n"
	"pc_feat_nop5_site:\n"
	"\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"\tret\n"
	".size pc_feat_nop5_site, .-pc_feat_nop5_site\n");

/* Instruction forms a uprobe decoder may refuse, never executed. */
void pc_feat_nop10_site(void), pc_feat_ds_site(void), pc_feat_lock_site(void);
#define FEAT_SITE(name, bytes) \
	".globl " name "\n.type " name ", @function\n" name ":\n\t" \
	".byte " bytes "\n\tret\n.size " name ", .-" name "\n"
__asm__(".text\n"
	FEAT_SITE("pc_feat_nop10_site", "0x66,0x2e,0x0f,0x1f,0x84,0,0,0,0,0")
	FEAT_SITE("pc_feat_ds_site", "0x3e,0x0f,0x1f,0x40,0x00")
	FEAT_SITE("pc_feat_lock_site", "0xf0,0x48,0x83,0x0c,0x24,0x00"));

/* Syscall NR in a child: 1 present, 0 absent (ENOSYS), -errno if the
 * probe itself failed; WHY says what was seen when not 1. */
static int probe_syscall(long nr, char *why, size_t len)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		prctl(PR_SET_DUMPABLE, 0);
		long r = syscall(nr);
		_exit(r == -1 && errno == ENOSYS ? 10 : 11);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -errno;
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGILL)
		return 1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 10) {
		snprintf(why, len, "syscall %ld: ENOSYS", nr);
		return 0;
	}
	/* Present but not refusing us as documented: say so, count as 1. */
	snprintf(why, len, "syscall %ld from outside its trampoline: wait "
		 "status 0x%x, not SIGILL", nr, st);
	return 1;
}

struct nop5_seen {
	unsigned char ns_bytes[5];      /* the site after three hits */
	int ns_tramp;                   /* a [uprobes-trampoline] mapping */
};

static int has_trampoline(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "[uprobes-trampoline]") != NULL;
	fclose(f);
	return found;
}

/* The child: wait for the uprobe, hit the site, report what it became. */
static void __attribute__((noreturn)) nop5_child(int go, int out)
{
	struct nop5_seen s;
	char c;

	if (read(go, &c, 1) != 1)
		_exit(1);
	for (int i = 0; i < 3; i++)
		pc_feat_nop5_site();
	memcpy(s.ns_bytes, (const void *)&pc_feat_nop5_site, 5);
	s.ns_tramp = has_trampoline();
	_exit(write(out, &s, sizeof(s)) == sizeof(s) ? 0 : 2);
}

/* Attach a perf uprobe to the child's site, let it run, read the result. */
static int nop5_run(pid_t pid, int go, int res, uint64_t off,
		    struct nop5_seen *s)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd, err = 0;

	if (n < 0)
		return -errno;
	exe[n] = 0;
	fd = uprobe_pmu_open(exe, off, 0, 0, pid);
	if (fd < 0)
		return fd;
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		err = -errno;
	if (!err && write(go, "g", 1) != 1)
		err = -errno;
	if (!err && read(res, s, sizeof(*s)) != sizeof(*s))
		err = -EIO;
	close(fd);
	return err;
}

static int probe_optimize(char *why, size_t len)
{
	struct nop5_seen s = { { 0 }, 0 };
	int go[2], res[2], st, err;
	uint64_t off = 0;
	pid_t pid;

	if ((err = procmaps_self_offset((const void *)pc_feat_nop5_site, &off)))
		return err;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(res, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	pid = fork();
	if (!pid) {
		close(go[1]);
		close(res[0]);
		nop5_child(go[0], res[1]);
	}
	close(go[0]);
	close(res[1]);
	err = pid < 0 ? -errno : nop5_run(pid, go[1], res[0], off, &s);
	close(go[1]);                   /* an unstarted child reads EOF */
	close(res[0]);
	if (pid > 0 && waitpid(pid, &st, 0) != pid && !err)
		err = -errno;
	/* Its report read, the child must still end as it says: a short
	 * write or a crash after the hits is no answer. */
	else if (!err && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		err = -ECHILD;
	if (err)
		return err;
	if (s.ns_bytes[0] == 0xe8 && s.ns_tramp)
		return 1;
	snprintf(why, len, "a uprobe on a nop5 hit 3 times: the site reads "
		 "%02x %02x %02x %02x %02x%s", s.ns_bytes[0], s.ns_bytes[1],
		 s.ns_bytes[2], s.ns_bytes[3], s.ns_bytes[4],
		 s.ns_tramp ? "" : ", no [uprobes-trampoline] mapping");
	return 0;
}

/* 1 if a uprobe at @fn registers (our own pid: installed at once into
 * our own text, removed at close), 0 if refused (WHY), -errno. */
static int probe_insn(void (*fn)(void), char *why, size_t len)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const unsigned char *b = (const unsigned char *)fn;
	uint64_t off = 0;
	int fd, err;

	if (n < 0)
		return -errno;
	exe[n] = 0;
	if ((err = procmaps_self_offset((const void *)fn, &off)))
		return err;
	fd = uprobe_pmu_open(exe, off, 0, 0, getpid());
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (fd != -PC_ENOTSUPP)
		return fd;
	snprintf(why, len, "a uprobe on %02x %02x %02x %02x %02x ...: %s",
		 b[0], b[1], b[2], b[3], b[4], pc_site_strerror(PC_ENOTSUPP));
	return 0;
}

/* uretprobe_syscall (335), uprobe_syscall (336). */
int feature_probe_x86_syscall(enum feature_id id, char *why, size_t len)
{
	return probe_syscall(id == FEATURE_URETPROBE_SYSCALL ? 335 : 336,
			     why, len);
}

int feature_probe_uprobe_optimize(enum feature_id id, char *why, size_t len)
{
	return probe_optimize(why, len);
}

/* probe_nop10, probe_ds_prefix, probe_lock_prefix: one site each. */
int feature_probe_x86_insn(enum feature_id id, char *why, size_t len)
{
	void (*site)(void) = id == FEATURE_PROBE_NOP10 ? pc_feat_nop10_site
			   : id == FEATURE_PROBE_DS_PREFIX ? pc_feat_ds_site
			   : pc_feat_lock_site;

	return probe_insn(site, why, len);
}
