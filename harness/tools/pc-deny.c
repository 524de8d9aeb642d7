/*
 * pc-deny — run a command with some system calls refused, as a kernel
 * without a feature (or a locked-down one) would refuse them:
 *
 *   pc-deny [-e ERRNO] CALL[:ARG0]... -- COMMAND [ARG...]
 *
 * CALL is bpf or perf_event_open; ARG0 the call's first
 * argument, a number or, for bpf, a command name (PROG_LOAD, LINK_CREATE,
 * MAP_CREATE, MAP_LOOKUP_ELEM, ...).  Each listed call fails with ERRNO (a number or EINVAL,
 * EPERM, EACCES, ENOSYS, EOPNOTSUPP, E2BIG, ENOENT; default EINVAL) before the kernel sees
 * it; every other call runs.  The filter is seccomp's, inherited by
 * children and kept across exec, so the tracer's feature probes and its
 * fallbacks meet the refusal exactly as they would meet an older kernel's
 * (suites/features.bats).  Not the uretprobe and uprobe system calls:
 * the kernel lets them through every seccomp filter (its trampolines make
 * them; measured on 6.18: an ENOSYS filter on 335 and 336 changes
 * nothing).  Exit 2 on bad usage, 1 if the filter cannot be
 * installed, else the command's exec.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DENY_MAX 16

struct name_nr {
	const char *nn_name;
	long nn_nr;
};

static const struct name_nr calls[] = {
	{ "bpf", SYS_bpf }, { "perf_event_open", SYS_perf_event_open },
	{ NULL, 0 },
};

static const struct name_nr bpf_cmds[] = {
	{ "MAP_CREATE", BPF_MAP_CREATE }, { "PROG_LOAD", BPF_PROG_LOAD },
	{ "LINK_CREATE", BPF_LINK_CREATE }, { "BTF_LOAD", BPF_BTF_LOAD },
	{ "PROG_ATTACH", BPF_PROG_ATTACH }, { "MAP_LOOKUP_ELEM", BPF_MAP_LOOKUP_ELEM },
	{ NULL, 0 },
};

static const struct name_nr no_names[] = { { NULL, 0 } };

static const struct name_nr errnos[] = {
	{ "EINVAL", EINVAL }, { "EPERM", EPERM }, { "ENOSYS", ENOSYS },
	{ "EOPNOTSUPP", EOPNOTSUPP }, { "E2BIG", E2BIG }, { "ENOENT", ENOENT },
	{ "EACCES", EACCES },
	{ NULL, 0 },
};

struct deny {
	long dn_nr;
	long dn_arg0;           /* -1: any */
};

static int lookup(const struct name_nr *t, const char *s, long *out)
{
	char *end;

	for (; t->nn_name; t++)
		if (!strcmp(s, t->nn_name)) {
			*out = t->nn_nr;
			return 0;
		}
	errno = 0;
	*out = strtol(s, &end, 0);
	return errno || end == s || *end || *out < 0 ? -1 : 0;
}

static int parse_deny(const char *arg, struct deny *d)
{
	char call[64];
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);

	if (n >= sizeof(call))
		return -1;
	memcpy(call, arg, n);
	call[n] = 0;
	if (lookup(calls, call, &d->dn_nr))
		return -1;
	d->dn_arg0 = -1;
	if (colon && lookup(d->dn_nr == SYS_bpf ? bpf_cmds : no_names,
			    colon + 1, &d->dn_arg0))
		return -1;
	return 0;
}

/* One test per denied call: arch, nr, then arg0's low 32 bits (every
 * argument used here is an int). */
static int install(const struct deny *d, size_t n, long err)
{
	struct sock_filter f[4 + DENY_MAX * 4];
	size_t k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
				offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
				AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	for (size_t i = 0; i < n; i++) {
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					offsetof(struct seccomp_data, nr));
		if (d[i].dn_arg0 < 0) {
			f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						d[i].dn_nr, 0, 1);
			f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
			continue;
		}
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					d[i].dn_nr, 0, 3);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					offsetof(struct seccomp_data, args[0]));
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					(__u32)d[i].dn_arg0, 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	struct sock_fprog prog = { .len = (unsigned short)k, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: pc-deny [-e ERRNO] CALL[:ARG0]... -- COMMAND [ARG...]\n"
		"  CALL: bpf perf_event_open; bpf's ARG0 may be "
		"PROG_LOAD, LINK_CREATE, MAP_CREATE, BTF_LOAD, PROG_ATTACH, MAP_LOOKUP_ELEM\n");
}

int main(int argc, char **argv)
{
	struct deny d[DENY_MAX];
	size_t n = 0;
	long err = EINVAL;
	int i = 1, rc;

	if (i + 1 < argc && !strcmp(argv[i], "-e")) {
		if (lookup(errnos, argv[i + 1], &err) || err > 4095) {
			fprintf(stderr, "pc-deny: -e '%s': not an errno\n", argv[i + 1]);
			return 2;
		}
		i += 2;
	}
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (n == DENY_MAX || parse_deny(argv[i], &d[n])) {
			fprintf(stderr, "pc-deny: '%s': not CALL[:ARG0] (or more than %d)\n",
				argv[i], DENY_MAX);
			usage();
			return 2;
		}
		n++;
	}
	if (!n || i + 1 >= argc) {
		usage();
		return 2;
	}
	rc = install(d, n, err);
	if (rc) {
		fprintf(stderr, "pc-deny: cannot install the seccomp filter: %s\n",
			strerror(-rc));
		return 1;
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "pc-deny: '%s': %s\n", argv[i + 1], strerror(errno));
	return 127;
}
