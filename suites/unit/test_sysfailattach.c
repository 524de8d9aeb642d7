/*
 * test_sysfailattach.c — every bpf(), perf_event_open() and mmap() a
 * session makes, made to fail in turn, as the kernel can answer them:
 * bpf EPERM (locked down), ENOMEM (memlock) and E2BIG (the n-th call
 * with the errno (n + mode) mod 3, so that across the attach modes each
 * call meets each), perf_event_open EMFILE, EACCES and ENOENT (no uprobe
 * PMU), mmap ENOMEM.  For the n-th call of each (n = 0, 1, ... until a
 * session no longer makes that many),
 * session_open, session_attach of a_good on fx_attachfail and
 * session_close run, and then:
 *   - either something failed, with a message on stderr, or the session
 *     worked: a_good's semaphore read 1 while attached (libbpf's own
 *     feature probes may fail and be done without);
 *   - after session_close: a_good's semaphore is 0 and its site holds the
 *     file's byte, this process holds no more descriptors than before,
 *     and (tracefs) uprobe_events holds nothing of ours.
 * Then the allocation countdown (nomem.h) over the allocations of our
 * own code in a session (libbpf's are libbpf's to test): each failure is
 * -ENOMEM, and nothing stays allocated, attached or open.  Memory given
 * back on the system call failures is checked by make sanitize
 * (LeakSanitizer at exit), where the countdown is skipped.
 *
 * About 25 sessions a mode, most of their time waiting for the kernel
 * (a perf event's close waits for an RCU grace period): a suite runs
 * this (faults.syscall-countdown), beside the others, not make check's
 * unit phase, where it would wait alone.
 *
 * The calls are interposed here: syscall() (libbpf and the attach modes
 * call bpf and perf_event_open through it) and mmap(), each passing every
 * call to libc's (dlsym RTLD_NEXT) but the planned one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "unit.h"
#include "nomem.h"
#include "attachfail.h"
#include "attach.h"
#include "session.h"

static struct {
	long nr;                /* __NR_bpf, __NR_perf_event_open, or -1: mmap */
	int after;              /* calls of it to let through first */
	int err;
	int hit;
	int active;
} plan;

#define PLAN_MMAP (-1L)

static int planned(long nr)
{
	if (!plan.active || plan.nr != nr)
		return 0;
	if (plan.after-- > 0)
		return 0;
	plan.active = 0;
	plan.hit = 1;
	return 1;
}

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (planned(nr)) {
		errno = plan.err;
		return -1;
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);

	if (planned(PLAN_MMAP)) {
		errno = plan.err;
		return MAP_FAILED;
	}
	if (!real)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	return real(addr, len, prot, flags, fd, off);
}

void *mmap64(void *, size_t, int, int, int, off_t) __attribute__((alias("mmap")));

static const struct attach_ops *mode;
static size_t mode_i;

/* @what prefixed with the mode: "[multi] what". */
static const char *L(const char *what)
{
	static char buf[200];

	snprintf(buf, sizeof(buf), "[%s] %s", mode->ao_name, what);
	return buf;
}

/* Entries of this process's group (probecheck_PID_START: other
 * tracers, other tests' included, may be running). */
static int ours_in_uprobe_events(void)
{
	char line[1024], group[64];
	int n = 0;
	FILE *f = fopen("/sys/kernel/tracing/uprobe_events", "r");

	snprintf(group, sizeof(group), ":probecheck_%d_", (int)getpid());
	while (f && fgets(line, sizeof(line), f))
		n += !!strstr(line, group);
	if (f)
		fclose(f);
	return n;
}

/* The lines of @msg that are probecheck's own errors (pc_err; libbpf's
 * warnings, passed on as "probecheck: libbpf: ...", are not ours). */
static int errors_in(const char *msg)
{
	int n = 0;

	for (const char *p = msg; (p = strstr(p, "probecheck: ")); p++)
		n += (p == msg || p[-1] == '\n') && strncmp(p + 12, "libbpf: ", 8);
	return n;
}

/* Run one session with the plan armed; its stderr into @msg.  Returns
 * the first error (open or attach), 0 if both worked; *sema_on: a_good's
 * semaphore while attached (-1 if it never was). */
static int one_session(pid_t pid, struct site_set *ss, const struct site *a,
		       char *msg, size_t len, int *sema_on)
{
	struct session_opts so = { .so_attach = mode };
	struct pc_session *s = NULL;
	int rc;

	unit_capture(1);
	*sema_on = -1;
	plan.active = 1;
	plan.hit = 0;
	rc = session_open(&so, &s);
	if (!rc) {
		ss->ss_n = 1;   /* a_good alone: it attaches */
		rc = session_attach(s, ss, pid);
		if (!rc)
			*sema_on = sema(pid, a);
	}
	plan.active = 0;
	if (s)
		session_close(s);
	unit_capture(0);
	snprintf(msg, len, "%s", unit_captured);
	return rc;
}

/* The n-th call of @nr failing with errs[(n + mode_i) % nerr], for every
 * n a session reaches. */
static void sys_countdown(pid_t pid, struct site_set *ss, const struct site *a,
		      long nr, const char *call, const int *errs, int nerr)
{
	char msg[4096], w[200], names[64] = "";
	int fds = unit_fds(), bad = 0, n, rc, on, fails = 0, err;
	size_t keep = ss->ss_n;

	for (int i = 0; i < nerr; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? "/" : "", strerrorname_np(errs[i]));
	for (n = 0; n < 400; n++) {
		err = errs[(n + mode_i) % nerr];
		plan.nr = nr;
		plan.after = n;
		plan.err = err;
		rc = one_session(pid, ss, a, msg, sizeof(msg), &on);
		ss->ss_n = keep;
		if (!plan.hit)
			break;
		fails += rc < 0;
		snprintf(w, sizeof(w), "[%s] %s #%d fails with %s", mode->ao_name, call, n,
			 strerrorname_np(err));
		if (rc < 0 && !msg[0]) {
			printf("# %s: error %d without a message\n", w, rc);
			bad = 1;
		} else if (rc < 0 && errors_in(msg) != 1) {
			/* A failure goes straight to the cleanup: a step run
			 * after it fails again, says so, and returns its own
			 * error instead of the first one. */
			printf("# %s: error %d with %d error lines\n", w, rc, errors_in(msg));
			bad = 1;
		} else if (!rc && on != 1) {
			printf("# %s: no error, yet a_good's semaphore read %d while attached\n", w, on);
			bad = 1;
		}
		if (sema(pid, a) != 0 || site_clean(pid, a) != 1 || unit_fds() != fds ||
		    own_fds("anon_inode:[perf_event]") || ours_in_uprobe_events()) {
			printf("# %s: after session_close: semaphore %d, site clean %d, fds %d (before %d), "
			       "uprobe_events entries %d\n", w, sema(pid, a), site_clean(pid, a),
			       unit_fds(), fds, ours_in_uprobe_events());
			bad = 1;
		}
		if (bad) {
			printf("# %s: rc %d, stderr: %.300s\n", w, rc, msg);
			break;
		}
	}
	snprintf(w, sizeof(w), "[%s] each of %d %s calls failing with %s (%d failed the session): "
		 "an error with its message or a working session, nothing left after close",
		 mode->ao_name, n, call, names, fails);
	UNIT_TRUE(!bad && n > 0 && n < 400 && rc == 0 && on == 1, w);
}

#ifndef NOMEM_SKIP
static struct {
	pid_t pid;
	struct site_set *ss;
	const struct site *a;
	int fds;
} sx;

/* session_open, attach a_good, close: under the countdown. */
static int session_run(void *ctx)
{
	struct session_opts so = { .so_attach = mode };
	struct pc_session *s = NULL;
	size_t keep = sx.ss->ss_n;
	long armed;
	int rc, on = -1;

	(void)ctx;
	unit_quiet(1);
	rc = session_open(&so, &s);
	if (!rc) {
		sx.ss->ss_n = 1;
		rc = session_attach(s, sx.ss, sx.pid);
		sx.ss->ss_n = keep;
		armed = countdown;
		countdown = -1;
		if (!rc)
			on = sema(sx.pid, sx.a);
		countdown = armed;
	}
	session_close(s);
	unit_quiet(0);
	armed = countdown;
	countdown = -1;
	if (!rc && on != 1)
		UNIT_EQ_INT(on, 1, L("allocations: a session without error has a_good attached"));
	if (sema(sx.pid, sx.a) != 0 || site_clean(sx.pid, sx.a) != 1 || unit_fds() != sx.fds)
		UNIT_TRUE(0, L("allocations: after close, semaphore 0, site clean, no descriptor more"));
	countdown = armed;
	return rc;
}

static void alloc_countdown(pid_t pid, struct site_set *ss, const struct site *a)
{
	static char name[64];
	struct sweep sw = { .name = name, .run = session_run, .min = 3 };

	/* A copy: L()'s buffer is reused inside session_run. */
	snprintf(name, sizeof(name), "[%s] session", mode->ao_name);
	sx.pid = pid;
	sx.ss = ss;
	sx.a = a;
	sx.fds = unit_fds();
	nomem_ours_only = 1;
	sweep(&sw);
	nomem_ours_only = 0;
}
#endif

static void test_mode(pid_t pid, struct site_set *ss, const struct site *a)
{
	char why[256];

	if (mode->ao_caps(why, sizeof(why)) < 0) {
		printf("ok %d - [%s] every countdown # SKIP %s\n", ++unit_n, mode->ao_name, why);
		return;
	}
	static const int bpf_errs[] = { EPERM, ENOMEM, E2BIG }, nomem[] = { ENOMEM },
			 pe_errs[] = { EMFILE, EACCES, ENOENT };

	sys_countdown(pid, ss, a, __NR_bpf, "bpf", bpf_errs, 3);
	sys_countdown(pid, ss, a, PLAN_MMAP, "mmap", nomem, 1);
#ifndef NOMEM_SKIP
	if (allocator_is_ours())
		alloc_countdown(pid, ss, a);
	else
		printf("ok %d - %s # SKIP the allocator is not ours (valgrind?)\n", ++unit_n,
		       L("allocations"));
#endif
	if (mode == &attach_multi_ops)
		return;
	for (int i = 0; i < 3; i++)
		sys_countdown(pid, ss, a, __NR_perf_event_open, "perf_event_open", pe_errs + i, 1);
}

int main(void)
{
	struct site_set ss = { 0 };
	const struct site *a, *b;
	pid_t pid;

	if (fixture_up(&pid, &ss, &a, &b) == 0)
		for (mode_i = 0; (mode = attach_modes[mode_i]); mode_i++)
			test_mode(pid, &ss, a);
	release_fixture(pid);
	site_set_free(&ss);
	return unit_done();
}
