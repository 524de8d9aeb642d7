/*
 * pc-libbpf-usdt — a reference tracer built only on libbpf's own USDT
 * support (bpf_program__attach_usdt + usdt.bpf.h) and its uprobe attach by
 * function name, for harness/tracers/libbpf.  It shares no code with
 * probecheck (providers/ is linked into every tool by the Makefile, and
 * unused here): its values are libbpf's, which is the point.
 *
 *   pc-libbpf-usdt [--ready FILE] [--args N] (-c CMD | -p PID) PROBE...
 *   pc-libbpf-usdt --simple-command CMD
 *
 *   usdt:PATH:PROV:NAME:SIGNS:STRMASK   SIGNS one s/u per argument (the
 *       note's sign, for printing only), STRMASK the arguments to read
 *       as strings (bit i = argument i, decimal)
 *   func:PATH:FUNC:entry|return|0xOFF   --args N raw arguments at entry
 *       (0..12: registers, then the stack), %rax at return
 *
 * PROV, NAME and FUNC are exact names (the wrapper expands globs).
 *
 * -c: CMD's process is forked first and blocks on a pipe; every probe is
 * attached with its pid (libbpf passes it to perf_event_open, and the
 * kernel's uprobe filter then matches that process's mm: it installs the
 * breakpoints when the exec'd program and, later, each library are
 * mapped, so a pid before exec is enough: measured for the exec'd
 * program and for a library dlopen'ed later, with its semaphore);
 * then --ready, then CMD runs as `/bin/sh -c 'exec CMD'` for a simple
 * command (dash forks otherwise).  Tracing ends when it exits; exit 1 if
 * it exited non-zero.  -p: until SIGINT/SIGTERM or the process is gone.
 * --simple-command prints "yes" if CMD is simple (shcmd.h), else "no".
 *
 * stdout: one JSON line per event.  stderr: libbpf's warnings, notes on
 * unreadable arguments (once per probe), and the summary line
 *   probecheck: summary: delivered=D dropped=X hits=H
 * (hits: runs of the BPF programs; dropped: ring full; delivered: printed).
 * Exit: 0 ok, 1 attach/runtime failure or CMD failed, 2 bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#define LU_TYPES_ONLY
#include "libbpf_usdt.bpf.c"	/* struct lu_event, lu_conf: one definition */
#include "tools/libbpf_usdt.skel.h"
#include "shcmd.h"

#define PROG "pc-libbpf-usdt"

struct probe {
	char *spec;		/* as given, for messages */
	int func;		/* 0 usdt, 1 function */
	char *path, *prov, *name, *signs;	/* usdt */
	char *fn;		/* func */
	__u32 kind;
	unsigned long long off;
	__u32 strmask;
	char label[512];	/* "PROV:NAME", "FUNC:entry", ... */
	int noted;		/* an unreadable argument was reported */
};

static struct probe *probes;
static int nprobes;
static unsigned long long delivered;

static void err(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* libbpf's warnings name what failed (which probe, which operand);
 * its info/debug chatter only with LU_DEBUG set.  The last warning is
 * kept: an attach failure repeats it, so its one line says why. */
static char last_warn[256];

static int libbpf_msg(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list aq;
	size_t n;

	if (level == LIBBPF_WARN) {
		va_copy(aq, ap);
		vsnprintf(last_warn, sizeof(last_warn), fmt, aq);
		va_end(aq);
		n = strlen(last_warn);
		if (n && last_warn[n - 1] == '\n')
			last_warn[n - 1] = 0;
	}
	if (level == LIBBPF_WARN || getenv("LU_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: " PROG " [--ready FILE] [--args N] (-c CMD | -p PID) "
		"usdt:PATH:PROV:NAME:SIGNS:STRMASK | func:PATH:FUNC:WHERE ...\n"
		"       " PROG " --simple-command CMD\n");
	return 2;
}

/* Split @s at ':' into exactly @n fields (the last may be empty). */
static int split(char *s, char **f, int n)
{
	int i;

	for (i = 0; i < n - 1; i++) {
		char *c = strchr(s, ':');

		if (!c)
			return -1;
		*c = 0;
		f[i] = s;
		s = c + 1;
	}
	f[i] = s;
	return strchr(s, ':') ? -1 : 0;
}

static int parse_probe(struct probe *p, const char *arg)
{
	char *s = strdup(arg), *f[6], *end;

	p->spec = strdup(arg);
	if (!s || !p->spec)
		return -1;
	if (!strncmp(s, "usdt:", 5)) {
		if (split(s + 5, f, 5) || !*f[0] || !*f[1] || !*f[2])
			return -1;
		p->path = f[0], p->prov = f[1], p->name = f[2], p->signs = f[3];
		errno = 0;
		p->strmask = strtoul(f[4], &end, 0);
		if (errno || *end || !*f[4])
			return -1;
		p->kind = LU_KIND_USDT;
		snprintf(p->label, sizeof(p->label), "%s:%s", p->prov, p->name);
		return 0;
	}
	if (!strncmp(s, "func:", 5)) {
		if (split(s + 5, f, 3) || !*f[0] || !*f[1])
			return -1;
		p->func = 1, p->path = f[0], p->fn = f[1];
		if (!strcmp(f[2], "entry")) {
			p->kind = LU_KIND_ENTRY;
			snprintf(p->label, sizeof(p->label), "%s:entry", p->fn);
		} else if (!strcmp(f[2], "return")) {
			p->kind = LU_KIND_RETURN;
			snprintf(p->label, sizeof(p->label), "%s:return", p->fn);
		} else if (!strncmp(f[2], "0x", 2) || !strncmp(f[2], "0X", 2)) {
			errno = 0;
			p->off = strtoull(f[2], &end, 16);
			if (errno || *end || !f[2][2])
				return -1;
			p->kind = LU_KIND_OFFSET;
			snprintf(p->label, sizeof(p->label), "%s:0x%llx", p->fn, p->off);
		} else {
			return -1;
		}
		return 0;
	}
	return -1;
}

/* ---- output --------------------------------------------------------- */

/* Length of a valid UTF-8 sequence at @p (2..4), 0 if not one. */
static int utf8_len(const unsigned char *p)
{
	int n = *p >= 0xf0 && *p < 0xf5 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 && *p < 0xe0 ? 2 : 0;

	if (*p >= 0xf5)
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* @s: a string the BPF side read, at most @max bytes with its NUL. */
static void json_str(const char *s, size_t max)
{
	char buf[LU_STR_LEN + 1];
	const unsigned char *p = (const unsigned char *)buf;
	int n;

	snprintf(buf, sizeof(buf), "%.*s", (int)max, s);	/* NUL-ended here */
	putchar('"');
	for (; *p; p++) {
		switch (*p) {
		case '"':  fputs("\\\"", stdout); break;
		case '\\': fputs("\\\\", stdout); break;
		case '\n': fputs("\\n", stdout); break;
		case '\t': fputs("\\t", stdout); break;
		case '\r': fputs("\\r", stdout); break;
		default:
			if (*p >= 0x80 && (n = utf8_len(p)) > 0) {
				fwrite(p, 1, n, stdout);
				p += n - 1;
			} else if (*p < 0x20 || *p >= 0x7f) {
				printf("\\u%04x", *p);
			} else {
				putchar(*p);
			}
		}
	}
	putchar('"');
}

static int on_event(void *ctx, void *data, size_t size)
{
	const struct lu_event *e = data;
	const struct lu_event_str *es = data;
	struct probe *p;
	int n, i;

	delivered++;
	if (e->cookie >= (unsigned)nprobes)
		return 0;
	p = &probes[e->cookie];
	n = e->nargs;
	if (!p->func && n < 0) {
		/* bpf_usdt_arg_cnt failed: every declared argument unread */
		if (!p->noted++)
			err("%s: bpf_usdt_arg_cnt: %s; arguments printed as null",
			    p->label, strerror(-n));
		n = strlen(p->signs);
	}
	if (n > LU_MAX_ARGS)
		n = LU_MAX_ARGS;
	printf("{\"probe\":\"%s\",\"pid\":%u,\"tid\":%u,\"args\":[", p->label, e->pid, e->tid);
	for (i = 0; i < n; i++) {
		int bad = e->nargs < 0 || (e->errmask >> i & 1);
		int str = !bad && (e->strmask >> i & 1);

		if (i)
			putchar(',');
		if (str && size >= sizeof(*es) && !(e->strerr >> i & 1)) {
			json_str(es->str[i], LU_STR_LEN);
			continue;
		}
		if (bad || str) {
			if (!p->noted++)
				err("%s: argument %d unreadable (%s); printed as null", p->label, i,
				    str ? "bpf_probe_read_user_str" : strerror(-e->err));
			fputs("null", stdout);
		} else if (!p->func && p->signs[0] && i < (int)strlen(p->signs) && p->signs[i] == 's') {
			printf("%" PRId64, (int64_t)e->args[i]);
		} else {
			printf("%" PRIu64, (uint64_t)e->args[i]);
		}
	}
	fputs("]}\n", stdout);
	return 0;
}

/* ---- the command's process ------------------------------------------ */

/* Fork CMD's process, blocked until a byte arrives on *go (EOF: exit 127). */
static pid_t spawn_blocked(const char *cmd, const sigset_t *oldmask, int *go)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c, *line = NULL;

		close(p[1]);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		/* As probecheck decides it (shcmd.h): dash forks for
		 * `sh -c 'prog args'`, so a simple command gets exec. */
		if (shcmd_is_simple(cmd) && asprintf(&line, "exec %s", cmd) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", line ? line : cmd, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	*go = p[1];
	return pid;
}

static int write_ready(const char *path)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f) || rename(tmp, path)) {
		err("--ready '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- attach ----------------------------------------------------------- */

static struct bpf_link **links;

static int attach_all(struct libbpf_usdt_bpf *skel, pid_t pid, unsigned nargs_entry)
{
	int cfd = bpf_map__fd(skel->maps.lu_conf);

	for (int i = 0; i < nprobes; i++) {
		struct probe *p = &probes[i];
		struct lu_conf c = { .kind = p->kind, .strmask = p->strmask,
				     .nargs = p->kind == LU_KIND_ENTRY ? nargs_entry : 0 };
		__u32 key = i;

		if (bpf_map_update_elem(cfd, &key, &c, BPF_ANY)) {
			err("lu_conf: %s", strerror(errno));
			return -1;
		}
		if (!p->func) {
			LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = i);

			links[i] = bpf_program__attach_usdt(skel->progs.lu_usdt, pid, p->path,
							    p->prov, p->name, &uo);
		} else {
			LIBBPF_OPTS(bpf_uprobe_opts, fo, .bpf_cookie = i, .func_name = p->fn,
				    .retprobe = p->kind == LU_KIND_RETURN);

			links[i] = bpf_program__attach_uprobe_opts(skel->progs.lu_func, pid,
								   p->path, p->off, &fo);
		}
		if (!links[i]) {
			err("%s: attach failed: %s%s%s%s", p->spec, strerror(errno),
			    last_warn[0] ? " (" : "", last_warn,
			    last_warn[0] ? ")" : "");
			return -1;
		}
	}
	return 0;
}

/*
 * Each link is a perf-event uprobe (libbpf 1.1 has no uprobe_multi), and
 * the kernel releases one at a time, waiting for a grace period under a
 * mutex (about 110 ms each on 6.18): detaching N probes takes N x 0.1 s,
 * in threads or not (measured).  That is the tracer's cost, kept.
 */
static void detach_all(void)
{
	for (int i = 0; i < nprobes; i++) {
		bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
}

static void summary(struct libbpf_usdt_bpf *skel)
{
	int ncpu = libbpf_num_possible_cpus();
	unsigned long long tot[LU_NCOUNTS] = { 0 };

	if (ncpu > 0) {
		__u64 v[ncpu];

		for (__u32 k = 0; k < LU_NCOUNTS; k++) {
			if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.lu_counts), &k, v))
				continue;
			for (int c = 0; c < ncpu; c++)
				tot[k] += v[c];
		}
	}
	fflush(stdout);
	fprintf(stderr, "probecheck: summary: delivered=%llu dropped=%llu hits=%llu\n",
		delivered, tot[LU_DROPPED], tot[LU_HITS]);
}

int main(int argc, char **argv)
{
	const char *ready = NULL, *cmd = NULL;
	unsigned nargs_entry = 6;
	pid_t pid = 0, child = 0;
	struct libbpf_usdt_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	sigset_t mask, oldmask;
	int go = -1, sfd = -1, pidfd = -1, rc = 1, i, status = 0, reaped = 0, sig = 0;
	char *end;

	if (argc == 3 && !strcmp(argv[1], "--simple-command")) {
		puts(shcmd_is_simple(argv[2]) ? "yes" : "no");
		return 0;
	}
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--ready") && i + 1 < argc) {
			ready = argv[++i];
		} else if (!strcmp(argv[i], "--args") && i + 1 < argc) {
			nargs_entry = strtoul(argv[++i], &end, 10);
			if (*end || !*argv[i] || nargs_entry > LU_MAX_ARGS)
				return usage();
		} else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
			cmd = argv[++i];
		} else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			pid = strtol(argv[++i], &end, 10);
			if (*end || pid <= 0)
				return usage();
		} else {
			return usage();
		}
	}
	if (i >= argc || !cmd == !pid)
		return usage();
	nprobes = argc - i;
	if (nprobes > LU_MAX_PROBES) {
		err("at most %d probes", LU_MAX_PROBES);
		return 2;
	}
	probes = calloc(nprobes, sizeof(*probes));
	links = calloc(nprobes, sizeof(*links));
	if (!probes || !links)
		return 1;
	for (int k = 0; k < nprobes; k++)
		if (parse_probe(&probes[k], argv[i + k])) {
			err("bad probe '%s'", argv[i + k]);
			return 2;
		}
	libbpf_set_print(libbpf_msg);

	/* SIGINT/SIGTERM/SIGCHLD through a signalfd: no races with poll. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &oldmask);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		err("signalfd: %s", strerror(errno));
		return 1;
	}
	if (cmd) {
		child = spawn_blocked(cmd, &oldmask, &go);
		if (child < 0) {
			err("fork: %s", strerror(errno));
			return 1;
		}
		pid = child;
	}
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		err("pid %d: %s", pid, strerror(errno));
		rc = errno == ESRCH ? 2 : 1;
		goto out;
	}

	skel = libbpf_usdt_bpf__open_and_load();
	if (!skel) {
		err("loading the BPF programs: %s", strerror(errno));
		goto out;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.lu_ring), on_event, NULL, NULL);
	if (!rb) {
		err("ring buffer: %s", strerror(errno));
		goto out;
	}
	if (attach_all(skel, pid, nargs_entry))
		goto out;
	if (ready && write_ready(ready))
		goto out;
	if (child) {
		if (write(go, "g", 1) != 1) {
			err("releasing the command: %s", strerror(errno));
			goto out;
		}
		close(go);
		go = -1;
	}

	for (;;) {
		struct pollfd pf[3] = {
			{ .fd = ring_buffer__epoll_fd(rb), .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
			{ .fd = pidfd, .events = POLLIN },
		};
		struct signalfd_siginfo si;

		if (poll(pf, 3, -1) < 0 && errno != EINTR) {
			err("poll: %s", strerror(errno));
			goto out;
		}
		if (pf[0].revents && ring_buffer__consume(rb) < 0) {
			err("ring buffer: consume failed");
			goto out;
		}
		fflush(stdout);
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				sig = si.ssi_signo;
		if (sig || pf[2].revents)
			break;
	}
	/* The process is gone or we were asked to stop: every event it
	 * produced is committed to the ring already. */
	if (sig && child)
		kill(child, sig);
	if (child) {
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
		reaped = 1;
	}
	detach_all();
	ring_buffer__consume(rb);
	summary(skel);
	rc = 0;
	if (child && !sig) {
		if (WIFEXITED(status) && WEXITSTATUS(status)) {
			err("command exited with status %d", WEXITSTATUS(status));
			rc = 1;
		} else if (WIFSIGNALED(status)) {
			err("command killed by signal %d", WTERMSIG(status));
			rc = 1;
		}
	}
out:
	detach_all();
	ring_buffer__free(rb);
	libbpf_usdt_bpf__destroy(skel);
	fflush(stdout);
	if (go >= 0)
		close(go);      /* a child never released exits 127 */
	if (child && !reaped)
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
	return rc;
}
