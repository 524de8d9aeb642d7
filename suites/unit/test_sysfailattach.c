/*
 * test_sysfailattach.c — every bpf(), perf_event_open() and mmap() a
 * session makes, made to fail in turn, as the kernel can answer them:
 * bpf EPERM (locked down), ENOMEM (memlock) and E2BIG (the n-th call
 * with the errno (n + mode) mod 3, so that across the attach modes each
 * call meets each), perf_event_open EMFILE, EACCES and ENOENT (no uprobe
 * PMU), mmap ENOMEM.  For the n-th call of each (n = 0, 1, ... until a
 * session no longer makes that many),
 * session_open, session_attach of a_good on fx_attachfail, the reads of
 * the counts a trace's summary makes, and session_close run, and then:
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
#include "interpose.h"
#include "nomem.h"
#include "attachfail.h"
#include "attach.h"
#include "follow.h"
#include "provider.h"
#include "session.h"

static struct {
	long nr;                /* __NR_bpf, __NR_perf_event_open, or -1: mmap */
	int after;              /* calls of it to let through first */
	int err;
	int hit;
	int active;
	int in_counts;          /* read_counts is running */
	int hit_in_counts;      /* the planned failure was one of its reads */
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
	plan.hit_in_counts = plan.in_counts;
	return 1;
}

static int unit_syscall_fails(long nr)
{
	if (!planned(nr))
		return 0;
	errno = plan.err;
	return 1;
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
/* Sessions run as --follow does (follow_open, the descendants added,
 * sites attached for every process, follow_start's tracepoints, linker
 * hooks and /proc walk, then follow_stop and follow_close), for one mode:
 * what follow.c asks of the kernel is the same in all of them. */
static int following;
static struct probe_req star;   /* usdt:*:...: the '*' a follow needs */
static char tag[48];            /* "perf", "perf --follow" */

/* @what prefixed with the mode: "[multi] what". */
static const char *L(const char *what)
{
	static char buf[200];

	snprintf(buf, sizeof(buf), "[%s] %s", tag, what);
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

/* The counts a trace's summary reads (trace_run.c): an error (said) when
 * any of them cannot be read, never zeros taken for counts. */
static int read_counts(struct pc_session *s)
{
	uint64_t hits, drops, delivered;
	struct session_skipped k;

	plan.in_counts = 1;
	session_counts(s, &hits, &drops, &delivered);
	session_skipped(s, &k);
	(void)session_counter(s, PC_CNT_SEEN);
	plan.in_counts = 0;
	return session_counters_err(s);
}

/*
 * Open a session, attach a_good alone, and close it all, as the CLI does
 * (with --follow when @following); *on: a_good's semaphore while attached
 * (read with @pause set to 1 around the read, so that a countdown does not
 * count it), -1 if it never was.  The first error, or 0.
 */
static int session_cycle(pid_t pid, struct site_set *ss, const struct site *a, int *on,
			 void (*pause)(int))
{
	struct session_opts so = { .so_attach = mode };
	struct follow_opts fo = { .fo_descendants = 1, .fo_attach_pid = -1,
				  .fo_reqs = &star, .fo_nreqs = 1 };
	struct pc_session *s = NULL;
	struct follow *f = NULL;
	size_t keep = ss->ss_n;
	int rc = 0;

	if (following) {
		rc = follow_open(&fo, ss, &f);
		so.so_filter_pids = so.so_follow = 1;
		so.so_progs = follow_progs(f);
		so.so_ctl = follow_ctl;
		so.so_ctl_ctx = f;
	}
	if (!rc)
		rc = session_open(&so, &s);
	if (!rc && following)
		rc = session_add_pid(s, pid);
	if (!rc) {
		ss->ss_n = 1;   /* a_good alone: it attaches */
		rc = session_attach(s, ss, following ? -1 : pid);
	}
	if (!rc && following)
		rc = follow_start(f, s, pid);
	if (!rc) {
		if (pause)
			pause(1);
		*on = sema(pid, a);
		if (pause)
			pause(0);
	}
	if (!rc)
		rc = read_counts(s);
	follow_stop(f);
	session_close(s);
	follow_close(f);
	ss->ss_n = keep;
	return rc;
}

/* The lines of @msg that are probecheck's own errors (pc_err).  Not
 * counted: libbpf's warnings, passed on as "probecheck: libbpf: ...", and
 * the line follow.c adds after a failed linker hook to say what it costs
 * (the failure itself has its own line just before). */
static int errors_in(const char *msg)
{
	static const char *const not_errors[] = {
		"libbpf: ",
		"follow: the _dl_debug_state hook in ",
	};
	int n = 0;

	for (const char *p = msg; (p = strstr(p, "probecheck: ")); p++) {
		int err = p == msg || p[-1] == '\n';

		for (size_t i = 0; err && i < sizeof(not_errors) / sizeof(not_errors[0]); i++)
			err = !!strncmp(p + 12, not_errors[i], strlen(not_errors[i]));
		n += err;
	}
	return n;
}

/* Run one session with the plan armed; its stderr into @msg.  Returns
 * the first error (open or attach), 0 if both worked; *sema_on: a_good's
 * semaphore while attached (-1 if it never was). */
static int one_session(pid_t pid, struct site_set *ss, const struct site *a,
		       char *msg, size_t len, int *sema_on)
{
	unit_capture(1);
	*sema_on = -1;
	plan.active = 1;
	plan.hit = plan.hit_in_counts = 0;
	int rc = session_cycle(pid, ss, a, sema_on, NULL);
	plan.active = 0;
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
		snprintf(w, sizeof(w), "[%s] %s #%d fails with %s", tag, call, n,
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
		} else if (!rc && plan.hit_in_counts) {
			printf("# %s: a read of the counts failed, yet no error\n", w);
			bad = 1;
		} else if (!rc && on != 1) {
			printf("# %s: no error, yet a_good's semaphore read %d while attached\n", w, on);
			bad = 1;
		}
		settled(pid, a);
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
		 tag, n, call, names, fails);
	UNIT_TRUE(!bad && n > 0 && n < 400 && rc == 0 && on == 1, w);
}

#ifndef NOMEM_SKIP
static struct {
	pid_t pid;
	struct site_set *ss;
	const struct site *a;
	int fds;
} sx;

static void countdown_pause(int on)
{
	static long armed;

	if (on) {
		armed = countdown;
		countdown = -1;
	} else {
		countdown = armed;
	}
}

/* session_open, attach a_good, close: under the countdown. */
static int session_run(void *ctx)
{
	long armed;
	int rc, on = -1;

	(void)ctx;
	unit_quiet(1);
	rc = session_cycle(sx.pid, sx.ss, sx.a, &on, countdown_pause);
	unit_quiet(0);
	armed = countdown;
	countdown = -1;
	if (!rc && on != 1)
		UNIT_EQ_INT(on, 1, L("allocations: a session without error has a_good attached"));
	settled(sx.pid, sx.a);
	if (sema(sx.pid, sx.a) != 0 || site_clean(sx.pid, sx.a) != 1 || unit_fds() != sx.fds) {
		/* Which of the three, for a failure seen once under load. */
		printf("# allocation countdown %ld: semaphore %d, site clean %d, fds %d (before %d)\n",
		       armed, sema(sx.pid, sx.a), site_clean(sx.pid, sx.a), unit_fds(), sx.fds);
		UNIT_TRUE(0, L("allocations: after close, semaphore 0, site clean, no descriptor more"));
	}
	countdown = armed;
	return rc;
}

static void alloc_countdown(pid_t pid, struct site_set *ss, const struct site *a)
{
	static char name[64];
	struct sweep sw = { .name = name, .run = session_run, .min = 3 };

	/* A copy: L()'s buffer is reused inside session_run. */
	snprintf(name, sizeof(name), "[%s] session", tag);
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

	snprintf(tag, sizeof(tag), "%s%s", mode->ao_name, following ? " --follow" : "");
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

	if (probe_req_parse("usdt:*:pc_none:pc_none", &star))
		UNIT_TRUE(0, "a '*' probe, parsed");
	if (fixture_up(&pid, &ss, &a, &b) == 0) {
		for (mode_i = 0; (mode = attach_modes[mode_i]); mode_i++)
			test_mode(pid, &ss, a);
		mode_i = 0;
		mode = attach_modes[0];
		following = 1;
		test_mode(pid, &ss, a);
		following = 0;
	}
	probe_req_free(&star);
	release_fixture(pid);
	site_set_free(&ss);
	return unit_done();
}
