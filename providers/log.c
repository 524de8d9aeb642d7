#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "log.h"

int pc_log_verbose;

void pc_verr(int quiet, const char *fmt, va_list ap)
{
	if (quiet)
		return;
	fputs("probecheck: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pc_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pc_verr(0, fmt, ap);
	va_end(ap);
}

void pc_err_unless(int quiet, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pc_verr(quiet, fmt, ap);
	va_end(ap);
}

void pc_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!pc_log_verbose)
		return;
	va_start(ap, fmt);
	fputs("probecheck: debug: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* include/linux/errno.h: never meant for userspace, yet returned to it. */
static const char *const kernel_errno[] = {
	[512 - 512] = "ERESTARTSYS (512): interrupted, to be restarted",
	[513 - 512] = "ERESTARTNOINTR (513): to be restarted",
	[514 - 512] = "ERESTARTNOHAND (514): to be restarted if no handler",
	[515 - 512] = "ENOIOCTLCMD (515): no such ioctl command",
	[516 - 512] = "ERESTART_RESTARTBLOCK (516): to be restarted",
	[517 - 512] = "EPROBE_DEFER (517): driver probe deferred",
	[518 - 512] = "EOPENSTALE (518): open found a stale dentry",
	[519 - 512] = "ENOPARAM (519): parameter not supported",
	[521 - 512] = "EBADHANDLE (521): illegal NFS file handle",
	[522 - 512] = "ENOTSYNC (522): update synchronization mismatch",
	[523 - 512] = "EBADCOOKIE (523): cookie is stale",
	[524 - 512] = "ENOTSUPP (524): operation not supported by the kernel",
	[525 - 512] = "ETOOSMALL (525): buffer or request too small",
	[526 - 512] = "ESERVERFAULT (526): an operation the server could not do",
	[527 - 512] = "EBADTYPE (527): type not supported by the server",
	[528 - 512] = "EJUKEBOX (528): request initiated, but will not complete before timeout",
	[529 - 512] = "EIOCBQUEUED (529): iocb queued, will get completion event",
	[530 - 512] = "ERECALLCONFLICT (530): conflict with recalled state",
};

const char *pc_strerror(int err)
{
	if (err >= 512 && err <= 530 && kernel_errno[err - 512])
		return kernel_errno[err - 512];
	return strerror(err);
}

const char *pc_site_strerror(int err)
{
	/* arch_uprobe_analyze_insn() refuses the instruction (on x86:
	 * prefixes or opcodes it cannot single-step or emulate). */
	if (err == PC_ENOTSUPP)
		return "the kernel cannot probe the instruction at this site "
		       "(ENOTSUPP, 524: its uprobe decoder refuses it)";
	return pc_strerror(err);
}
