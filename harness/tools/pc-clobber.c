/*
 * pc-clobber — a deliberately broken tracer: at one probe site of one
 * process it flips bit 0 of %rbx, or, where the kernel refuses uprobe
 * programs that write registers, writes -48(%rsp) with
 * bpf_probe_write_user (harness/tools/clobber.bpf.c), until SIGINT or
 * SIGTERM.  For suites/integrity.bats: the integrity oracle must catch a
 * tracer that changes the traced program's state.
 *
 *   pc-clobber --ready FILE PID PATH OFFSET
 *
 * OFFSET: the site's file offset (hex or decimal).  FILE is created once
 * the uprobe is attached and holds what is clobbered: "%rbx" or
 * "-48(%rsp)".  Exit: 0 after a signal, 1 runtime failure, 2 bad usage,
 * 3 the kernel allows neither program: the caller SKIPs.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "tools/clobber.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

/* libbpf's messages (the verifier's log) only with PC_CLOBBER_DEBUG set. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return getenv("PC_CLOBBER_DEBUG") ? vfprintf(stderr, fmt, ap) : 0;
}

/* The skeleton with only one of its programs loaded: @reg the register
 * writer, else the memory writer.  NULL when the kernel refuses it. */
static struct clobber_bpf *load(int reg)
{
	struct clobber_bpf *skel = clobber_bpf__open();

	if (!skel)
		return NULL;
	bpf_program__set_autoload(skel->progs.pc_clobber_reg, reg);
	bpf_program__set_autoload(skel->progs.pc_clobber_mem, !reg);
	if (clobber_bpf__load(skel)) {
		clobber_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

int main(int argc, char **argv)
{
	struct clobber_bpf *skel;
	struct bpf_program *prog;
	struct bpf_link *link;
	const char *what;
	char *end;
	unsigned long off;
	int pid, fd, err;

	if (argc != 6 || strcmp(argv[1], "--ready")) {
		fprintf(stderr, "usage: pc-clobber --ready FILE PID PATH OFFSET\n");
		return 2;
	}
	pid = atoi(argv[3]);
	errno = 0;
	off = strtoul(argv[5], &end, 0);
	if (pid <= 0 || errno || *end) {
		fprintf(stderr, "pc-clobber: bad PID '%s' or OFFSET '%s'\n", argv[3], argv[5]);
		return 2;
	}
	libbpf_set_print(quiet);
	what = "%rbx";
	skel = load(1);
	if (!skel) {
		what = "-48(%rsp)";
		skel = load(0);
	}
	if (!skel) {
		fprintf(stderr, "pc-clobber: the kernel refuses uprobe programs that write registers "
			"or user memory: %s\n", strerror(errno));
		return 3;
	}
	prog = *what == '%' ? skel->progs.pc_clobber_reg : skel->progs.pc_clobber_mem;
	link = bpf_program__attach_uprobe(prog, 0, pid, argv[4], off);
	err = libbpf_get_error(link);
	if (err) {
		fprintf(stderr, "pc-clobber: '%s' +0x%lx in pid %d: cannot attach: %s\n",
			argv[4], off, pid, strerror(-err));
		clobber_bpf__destroy(skel);
		return err == -EINVAL || err == -EPERM || err == -EOPNOTSUPP ? 3 : 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, what, strlen(what)) != (ssize_t)strlen(what)) {
		fprintf(stderr, "pc-clobber: '%s': %s\n", argv[2], strerror(errno));
		stop = 1;
	}
	if (fd >= 0)
		close(fd);
	while (!stop)
		pause();
	bpf_link__destroy(link);
	clobber_bpf__destroy(skel);
	return fd < 0;
}
