/*
 * trace_run.c — attach, release the command, pump events, detach.
 *
 * Synchronisation without sleeps: with -c the command is forked first and
 * blocks reading a pipe; it is released only after every probe is
 * attached (and the --ready file written), so it cannot run ahead of the
 * tracer.  The loop then polls three fds (pump): the ring's epoll fd; a
 * pidfd of -p's process, readable when it exits (-1, so never polled, with
 * -c and -a, and with -p when pidfd_open fails: before Linux 5.3 or under
 * valgrind; then the loop wakes every 250 ms and reads /proc/PID/stat, a
 * zombie counting as gone); and a signalfd for SIGINT, SIGTERM and
 * SIGCHLD.  SIGINT and SIGTERM end the trace (passed on to -c's command
 * first); SIGCHLD wakes the loop to reap -c's command, whose exit ends it.
 * -a ends only by signal.  A hit is written to the ring in the traced
 * process's own context, before it can exit, so the drains after the
 * loop (one before the detach, one after) lose nothing.
 *
 * -c runs CMD through /bin/sh.  dash forks for a plain `sh -c 'prog args'`
 * instead of exec'ing it, so for a simple command we prefix `exec`: the
 * traced process is then the command itself.  A compound command (with
 * ; & | < > ( ) etc., or leading VAR=value) runs as given: only the shell
 * process is traced, unless --follow (then everything it starts is).
 *
 * Modes: -c and -p filter by tgid in BPF and attach per process (-p) or
 * system-wide (--follow, see follow.c); -a attaches system-wide with no
 * filter and runs until SIGINT/SIGTERM.  With -c, tracing ends when CMD
 * exits, even if descendants it started (--follow) still run: they go on
 * untraced, their breakpoints and semaphores removed by the detach.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "cli.h"
#include "follow.h"
#include "install_check.h"
#include "log.h"
#include "procstat.h"
#include "session.h"
#include "shcmd.h"
#include "trace.h"
#include "ustack.h"

/* The command's process before exec: 'v' runs the install check in its
 * own mm (the sites' filter is its pid) and answers one byte on @res:
 * '0' every site installed, '1' some refused (named on stderr), '2' the
 * check failed; 'g' execs the command; EOF exits 127. */
static void __attribute__((noreturn))
blocked_child(const char *cmd, const struct site_set *ss, int ctl, int res)
{
	char *line = NULL, c = 0, out;     /* c: EOF before any byte is no go */
	int r;

	while (read(ctl, &c, 1) == 1 && c != 'g') {
		r = c == 'v' ? install_check_here(ss, 0, NULL) : -EINVAL;
		out = !r ? '0' : r == -PC_ENOTSUPP ? '1' : '2';
		if (write(res, &out, 1) != 1)
			_exit(127);
	}
	if (c != 'g')
		_exit(127);     /* the tracer gave up */
	if (shcmd_is_simple(cmd) && asprintf(&line, "exec %s", cmd) < 0)
		_exit(127);
	execl("/bin/sh", "sh", "-c", line ? line : cmd, (char *)NULL);
	_exit(127);
}

static pid_t spawn_blocked(const char *cmd, const sigset_t *oldmask,
			   const struct site_set *ss, int *ctl_fd, int *res_fd)
{
	int p[2], r[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	if (pipe2(r, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		close(r[0]);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		blocked_child(cmd, ss, p[0], r[1]);
	}
	close(p[0]);
	close(r[1]);
	if (pid < 0) {
		close(p[1]);
		close(r[0]);
		return -errno;
	}
	*ctl_fd = p[1];
	*res_fd = r[0];
	return pid;
}

/*
 * Sites attached before their object was mapped are installed at mmap
 * time, and a site the kernel refuses then is dropped in silence: check
 * each one where the kernel installs it (install_check.c).  0 or -errno.
 */
static int verify_installed(const struct trace_opts *o,
			    const struct site_set *ss, pid_t target,
			    int ctl, int res)
{
	char c = 0;

	if (o->to_all || o->to_follow)
		return install_check_here(ss, 0, NULL);
	if (!o->to_cmd)
		return install_check_pid(ss, 0, target);
	if (write(ctl, "v", 1) != 1 || read(res, &c, 1) != 1) {
		pc_err("trace: install check: the command's process is gone");
		return -ESRCH;
	}
	return c == '0' ? 0 : c == '1' ? -PC_ENOTSUPP : -EIO;
}

static int write_ready(const char *path)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f) ||
	    rename(tmp, path)) {
		int err = errno;

		pc_err("--ready '%s': %s", path, pc_strerror(err));
		return -err;
	}
	return 0;
}

/* What the loop knows about the traced process. */
struct run_state {
	pid_t rs_target;        /* traced process */
	pid_t rs_child;         /* == rs_target with -c, else 0 */
	int   rs_pidfd;         /* -p only; -1 when unavailable */
	int   rs_status;        /* wait status once rs_reaped */
	int   rs_reaped;
	int   rs_released;      /* -c: the command was let run */
};

/* The traced process is gone (a zombie counts: it cannot fire). */
static int target_gone(struct run_state *rs)
{
	struct proc_stat ps = { 0 };   /* unreadable: not gone */

	if (!rs->rs_target)
		return 0;       /* -a: until SIGINT/SIGTERM */
	if (rs->rs_child) {
		if (waitpid(rs->rs_child, &rs->rs_status, WNOHANG) == rs->rs_child)
			rs->rs_reaped = 1;
		return rs->rs_reaped;
	}
	if (proc_stat_read(rs->rs_target, &ps) == -ESRCH)
		return 1;
	return ps.ps_state == 'Z' || ps.ps_state == 'X';
}

/*
 * Returns 1 when tracing should stop, 0 to go on, -errno on failure.
 * pf[0] ring, pf[1] pidfd of -p's target (-1 when unavailable: then a
 * liveness check every 250 ms), pf[2] signalfd (SIGINT, SIGTERM, SIGCHLD).
 */
static int pump(struct pc_session *s, struct pollfd *pf, struct run_state *rs)
{
	struct signalfd_siginfo si;
	int n, timeout = (rs->rs_target && !rs->rs_child && rs->rs_pidfd < 0)
			 ? 250 : -1;

	n = poll(pf, 3, timeout);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (pf[0].revents && session_poll(s, 0) < 0)
		return -EIO;
	if (pf[2].revents && read(pf[2].fd, &si, sizeof(si)) == sizeof(si) &&
	    si.ssi_signo != SIGCHLD) {
		if (rs->rs_child)
			kill(rs->rs_child, si.ssi_signo);
		return 1;
	}
	if (pf[1].revents)
		return 1;
	return target_gone(rs);
}

static int child_status(struct run_state *rs)
{
	int st = rs->rs_status;

	if (!rs->rs_child)
		return EXIT_OK;
	while (!rs->rs_reaped && waitpid(rs->rs_child, &st, 0) < 0)
		if (errno != EINTR)
			return EXIT_RUNTIME;
	/* Never released: it never ran CMD, so its own 127 says nothing;
	 * a signal means someone killed it while we attached. */
	if (!rs->rs_released && WIFEXITED(st))
		return EXIT_RUNTIME;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return EXIT_OK;
	if (WIFEXITED(st))
		pc_err("trace: command exited with status %d", WEXITSTATUS(st));
	else
		pc_err("trace: command killed by signal %d", WTERMSIG(st));
	return EXIT_RUNTIME;
}

/* -v: each site's counts (pc_bpf.h), for the sites anything reached. */
static void site_counts(struct pc_session *s, const struct site_set *ss)
{
	for (size_t i = 0; i < ss->ss_n; i++) {
		const struct site *st = &ss->ss_v[i];
		struct session_site_count c;

		if (session_site_counts(s, i, &c) || !(c.sc_seen | c.sc_delivered))
			continue;
		pc_dbg("site %zu %s:%s '%s' 0x%llx: seen=%llu hits=%llu "
		       "delivered=%llu", i, st->st_provider, st->st_name,
		       st->st_path, (unsigned long long)st->st_off,
		       (unsigned long long)c.sc_seen,
		       (unsigned long long)c.sc_hits,
		       (unsigned long long)c.sc_delivered);
	}
}

/* 0, or -1 when events went missing without being counted as drops, or
 * may have (follow_verdict): the output is not what happened, and the
 * exit status says so. */
static int summary(struct pc_session *s, const struct site_set *ss,
		   struct follow *fw, const struct trace_out *out)
{
	uint64_t hits, drops, delivered, seen = session_counter(s, PC_CNT_SEEN);
	int bad = 0;

	session_counts(s, &hits, &drops, &delivered);
	fflush(stdout);
	fprintf(stderr, "probecheck: attach: %s\n", session_attach_name(s));
	if (session_counters_err(s)) {
		/* Zeros would read as "nothing dropped". */
		fprintf(stderr, "probecheck: summary: delivered=%llu dropped=unknown hits=unknown\n",
			(unsigned long long)delivered);
		return -1;
	}
	fprintf(stderr, "probecheck: summary: delivered=%llu dropped=%llu hits=%llu"
		" unreadable=%llu truncated=%llu\n",
		(unsigned long long)delivered, (unsigned long long)drops,
		(unsigned long long)hits, out->tr_unreadable, out->tr_truncated);
	pc_dbg("summary: seen=%llu filtered=%llu (hits of processes not "
	       "traced)", (unsigned long long)seen,
	       (unsigned long long)(seen - hits));
	if (pc_log_verbose)
		site_counts(s, ss);
	if (delivered + drops != hits) {
		char st[160] = "unreadable";

		session_ring_state(s, st, sizeof(st));
		pc_err("trace: accounting mismatch: delivered + dropped != hits; ring %s", st);
		bad = -1;
	}
	bad = follow_verdict(fw, seen - hits) ?: bad;
	/* The follow verdict's own counters, read just now. */
	return session_counters_err(s) ? -1 : bad;
}

/*
 * -a: no pid filter, sites system-wide.  --follow: sites system-wide too
 * (a child's new mm must have them), filtered by the growing tgid set;
 * follow.c also handles '*' probes in objects mapped later.
 */
static int follow_setup(const struct trace_opts *o,
			const struct probe_req *reqs, struct site_set *ss,
			struct session_opts *so, struct follow **fw)
{
	struct follow_opts fo = {
		.fo_descendants = o->to_follow,
		.fo_attach_pid = o->to_follow ? -1 : o->to_pid,
		.fo_reqs = reqs,
		.fo_nreqs = o->to_nprobes,
	};
	int err = o->to_all ? 0 : follow_open(&fo, ss, fw);

	so->so_filter_pids = !o->to_all;
	so->so_follow = o->to_follow;
	so->so_progs = follow_progs(*fw);
	so->so_ctl = follow_ctl;
	so->so_ctl_ctx = *fw;
	return err;
}

/* --ustack with barriers: the stopped process's objects are read for
 * its frames before follow.c continues it (a process may exit before
 * its events are printed, and its maps go with it). */
struct ustack_ctl {
	struct follow *uc_fw;
	struct ustack_syms *uc_syms;
};

static void ustack_ctl(void *ctx, const struct pc_event *ev)
{
	const struct ustack_ctl *uc = ctx;

	ustack_syms_note(uc->uc_syms, ev->pe_pid);
	follow_ctl(uc->uc_fw, ev);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int trace_run(const struct trace_opts *o, const struct probe_req *reqs,
	      struct site_set *ss)
{
	struct trace_out out = { .tr_sites = ss, .tr_json = o->to_json };
	struct session_opts so = { .so_filter_pids = 1,
				   .so_event = trace_print_event,
				   .so_ctx = &out,
				   .so_ustack = o->to_ustack,
				   .so_sleepable = o->to_sleepable,
				   .so_attach = o->to_attach,
				   /* with a pid, uprobe_multi must also see
				    * every thread */
				   .so_per_process = !o->to_all && !o->to_follow };
	struct run_state rs = { .rs_target = o->to_pid, .rs_pidfd = -1 };
	struct ustack_ctl uc;
	struct pc_session *s = NULL;
	struct follow *fw = NULL;
	struct pollfd pf[3];
	sigset_t mask, old;
	int rc = EXIT_RUNTIME, release = -1, answer = -1, sigfd, err;
	double t0;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (o->to_ustack && ustack_syms_new(&out.tr_syms))
		goto out;
	if (sigfd < 0 || follow_setup(o, reqs, ss, &so, &fw))
		goto out;
	uc = (struct ustack_ctl){ fw, out.tr_syms };
	if (out.tr_syms && fw) {
		so.so_ctl = ustack_ctl;
		so.so_ctl_ctx = &uc;
	}
	if (session_open(&so, &s))
		goto out;
	if (o->to_cmd) {
		pid_t child = spawn_blocked(o->to_cmd, &old, ss, &release,
					    &answer);

		if (!shcmd_is_simple(o->to_cmd) && !o->to_follow)
			pc_err("trace: -c: compound command: only the shell "
			       "process is traced, not the commands it starts");

		if (child < 0) {
			pc_err("trace: cannot start '%s': %s", o->to_cmd,
			       pc_strerror(-child));
			goto out;
		}
		rs.rs_target = rs.rs_child = child;
	} else if (rs.rs_target) {
		/* Linux 5.3; without it (or under valgrind) we poll liveness. */
		rs.rs_pidfd = syscall(SYS_pidfd_open, rs.rs_target, 0);
	}
	if (!o->to_all && session_add_pid(s, rs.rs_target))
		goto out;
	t0 = now_ms();
	err = session_attach(s, ss, o->to_all || o->to_follow ? -1 : rs.rs_target);
	/* make bench reads these two lines (harness/run/bench). */
	pc_dbg("attach: %zu sites in %.3f ms (%s)", ss->ss_n, now_ms() - t0,
	       session_attach_name(s));
	if (err) {
		/* ESRCH, or ENOENT on /proc/PID/root/...: say what happened. */
		if (rs.rs_target > 0 && (err == -ESRCH || target_gone(&rs)))
			pc_err("trace: pid %d exited during attach", rs.rs_target);
		goto out;
	}
	if (verify_installed(o, ss, rs.rs_target, release, answer))
		goto out;       /* all-or-nothing: session_close undoes it */
	if (follow_start(fw, s, rs.rs_target))
		goto out;
	if (o->to_ready && write_ready(o->to_ready))
		goto out;
	if (release >= 0) {
		if (write(release, "g", 1) != 1)
			goto out;
		rs.rs_released = 1;
	}
	pf[0] = (struct pollfd){ .fd = session_epoll_fd(s), .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = rs.rs_pidfd, .events = POLLIN };
	pf[2] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
	while (!(err = pump(s, pf, &rs)))
		fflush(stdout);
	follow_stop(fw);        /* no new stops; the drain continues the last */
	session_drain(s);       /* continue anyone stopped at a barrier */
	/* Detach before the last drain: a -p or -a target still running
	 * would otherwise hit between drain and count. */
	t0 = now_ms();
	session_detach(s);
	pc_dbg("detach: %zu sites in %.3f ms (%s)", ss->ss_n, now_ms() - t0,
	       session_attach_name(s));
	session_drain(s);
	rc = err < 0 ? EXIT_RUNTIME : EXIT_OK;
	if (summary(s, ss, fw, &out))
		rc = EXIT_RUNTIME;
out:
	follow_stop(fw);
	if (fw && s && rc != EXIT_OK)
		session_drain(s);       /* continue a process stopped for us */
	session_close(s);
	follow_close(fw);
	if (release >= 0)
		close(release);         /* an unreleased child exits 127 */
	if (answer >= 0)
		close(answer);
	err = child_status(&rs);
	if (rc == EXIT_OK)
		rc = err;
	if (rs.rs_pidfd >= 0)
		close(rs.rs_pidfd);
	if (sigfd >= 0)
		close(sigfd);
	ustack_syms_free(out.tr_syms);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
