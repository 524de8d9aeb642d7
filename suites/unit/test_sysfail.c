/*
 * test_sysfail.c — system calls that fail or come back short, as the
 * kernel really answers them: a process that exits between open() and
 * read() of its /proc files reads 0 bytes or fails with ESRCH; a file we
 * may not read fails with EACCES; reads are interrupted (EINTR) or fail
 * (EIO).  Each caller must answer with its documented error, never with
 * success on what it did not read.
 *
 * The binary interposes open, open64 and read (an executable's
 * definitions win over libc's for the objects linked into it) and passes
 * every call through to the kernel except the one a plan picks: the
 * after-th call of that name (0: the next one) returns -1 with the plan's
 * errno, or 0 bytes when the errno is 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "unit.h"
#include "procstat.h"

static struct {
	const char *call;       /* NULL: nothing planned */
	int after;              /* calls of that name to let through first */
	int err;                /* errno to fail with; 0: a read of 0 bytes */
	int hit;                /* the planned failure happened */
} plan;

static void fail_call(const char *call, int after, int err)
{
	plan.call = call;
	plan.after = after;
	plan.err = err;
	plan.hit = 0;
}

/* Whether this call of @call is the planned one. */
static int planned(const char *call)
{
	if (!plan.call || strcmp(plan.call, call))
		return 0;
	if (plan.after-- > 0)
		return 0;
	plan.call = NULL;
	plan.hit = 1;
	return 1;
}

static int open_common(const char *call, const char *path, int flags, va_list ap)
{
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;

	if (planned(call)) {
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = open_common("open", path, flags, ap);
	va_end(ap);
	return fd;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = open_common("open", path, flags, ap);
	va_end(ap);
	return fd;
}

ssize_t read(int fd, void *buf, size_t n)
{
	if (planned("read")) {
		if (!plan.err)
			return 0;
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_read, fd, buf, n);
}

/* Whether the code under test reaches the definitions above. */
static int calls_are_ours(void)
{
	struct proc_stat ps;

	fail_call("read", 0, EIO);
	proc_stat_read(getpid(), &ps);
	if (plan.hit)
		return 1;
	plan.call = NULL;
	return 0;
}

/* proc_stat_read of our own pid with one call failing as planned. */
static void stat_fails(const char *call, int err, int want, const char *what)
{
	struct proc_stat ps = { 0 };
	int rc;

	fail_call(call, 0, err);
	rc = proc_stat_read(getpid(), &ps);
	UNIT_TRUE(plan.hit, "the planned failure happened");
	plan.call = NULL;
	UNIT_EQ_INT(rc, want, what);
}

static void test_proc_stat_read(void)
{
	struct proc_stat ps = { 0 };

	UNIT_EQ_INT(proc_stat_read(getpid(), &ps), 0, "proc_stat_read: our own stat");
	UNIT_EQ_INT(ps.ps_ppid, getppid(), "proc_stat_read: our parent");
	/* The process went between open and read: 0 bytes, or ESRCH. */
	stat_fails("read", 0, -ESRCH, "read of 0 bytes: -ESRCH, not an unparsed success");
	stat_fails("read", ESRCH, -ESRCH, "read failing with ESRCH: -ESRCH");
	stat_fails("read", EIO, -EIO, "read failing with EIO: -EIO");
	stat_fails("read", EINTR, -EINTR, "read interrupted: -EINTR (the caller decides)");
	stat_fails("open", ENOENT, -ESRCH, "open failing with ENOENT (no such pid): -ESRCH");
	stat_fails("open", EACCES, -EACCES, "open failing with EACCES: -EACCES");
	stat_fails("open", EMFILE, -EMFILE, "open failing with EMFILE: -EMFILE");
}

int main(void)
{
	if (calls_are_ours())
		test_proc_stat_read();
	else
		UNIT_TRUE(1, "system call failures # SKIP open and read are not ours");
	return unit_done();
}
