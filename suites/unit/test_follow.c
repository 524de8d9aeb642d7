/*
 * test_follow.c — a followed process that is gone when the tracer gets to
 * it is not an error, and not a message.
 *
 * Two windows no CLI run can hit on purpose: a root or descendant listed
 * and then reaped before follow_start reads its maps, and a process
 * stopped at a barrier and killed before follow_ctl reads its maps and
 * continues it.  Here the pid is one reaped before the call, which is
 * what the tracer meets when it loses either race: /proc/PID is gone and
 * kill() says ESRCH.  Each call must succeed without a word on stderr.
 * A live process, the control, is scanned and continued the same way;
 * for it, the linker hook (an int3 on _dl_debug_state in this process)
 * is there after follow_start and gone after follow_stop, before the
 * session closes: follow_stop ends the barriers, the drain after it
 * continues the last ones.
 * Needs root (the session loads BPF and attaches tracepoints).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "unit.h"
#include "follow.h"
#include "pc_bpf.h"
#include "provider.h"
#include "session.h"

static char err_path[] = "/tmp/pc-unit-follow.XXXXXX";
static int err_fd = -1, saved_fd = -1;

/* stderr into err_path from here until stderr_take. */
static void stderr_catch(void)
{
	fflush(stderr);
	(void)!ftruncate(err_fd, 0);
	saved_fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	dup2(err_fd, 2);
}

/* What was written to stderr since stderr_catch (at most @len - 1 bytes). */
static const char *stderr_take(char *buf, size_t len)
{
	ssize_t n;

	fflush(stderr);
	dup2(saved_fd, 2);
	close(saved_fd);
	n = pread(err_fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/* A pid that was a child of ours and is reaped: gone from /proc. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid > 0 && waitpid(pid, NULL, 0) != pid)
		return -1;
	return pid;
}

/* The first byte of this process's _dl_debug_state: the linker hook's
 * site (an int3 while attached, as this process's own mm shows it). */
static int hook_byte(void)
{
	const unsigned char *fn = dlsym(RTLD_DEFAULT, "_dl_debug_state");

	return fn ? *fn : -1;
}

static void hook_there(const char *how)
{
	char what[128];

	snprintf(what, sizeof(what), "%s: after follow_start, an int3 on this process's _dl_debug_state", how);
	UNIT_EQ_INT(hook_byte(), 0xcc, what);
}

static void hook_gone(const char *how)
{
	char what[128];

	snprintf(what, sizeof(what), "%s: after follow_stop, before the session closes: no int3 on it", how);
	UNIT_TRUE(hook_byte() >= 0 && hook_byte() != 0xcc, what);
}

/* follow_start (once per follow, as the CLI calls it) with root @pid. */
static void test_start(int descendants, const char *how, pid_t pid, const char *which)
{
	struct probe_req req;
	struct follow_opts fo = { .fo_descendants = descendants, .fo_attach_pid = -1,
				  .fo_reqs = &req, .fo_nreqs = 1 };
	struct session_opts so = { .so_filter_pids = 1 };
	struct site_set ss = { 0 };
	struct pc_session *s = NULL;
	struct follow *f = NULL;
	char what[160], err[512];
	int rc;

	UNIT_TRUE(pid > 0, "a pid to follow");
	UNIT_EQ_INT(probe_req_parse("usdt:*:prov:name", &req), 0, "a '*' probe, parsed");
	UNIT_EQ_INT(follow_open(&fo, &ss, &f), 0, "follow_open with a '*' probe");
	so.so_progs = follow_progs(f);
	so.so_ctl = follow_ctl;
	so.so_ctl_ctx = f;
	UNIT_EQ_INT(session_open(&so, &s), 0, "session_open");
	if (f && s && pid > 0) {
		stderr_catch();
		rc = follow_start(f, s, pid);
		stderr_take(err, sizeof(err));
		snprintf(what, sizeof(what), "%s: follow_start with %s: 0", how, which);
		UNIT_EQ_INT(rc, 0, what);
		snprintf(what, sizeof(what), "%s: follow_start with %s: nothing said", how, which);
		UNIT_EQ_STR(err, "", what);
		if (pid == getpid())
			hook_there(how);
	}
	follow_stop(f);
	if (pid == getpid())
		hook_gone(how);
	session_close(s);
	follow_close(f);
	probe_req_free(&req);
	site_set_free(&ss);
}

static void test_ctl(void)
{
	struct probe_req req;
	struct follow_opts fo = { .fo_attach_pid = -1, .fo_reqs = &req, .fo_nreqs = 1 };
	struct pc_event ev = { .pe_args = { PC_CTL_EXEC } };
	struct site_set ss = { 0 };
	struct follow *f = NULL;
	char err[512];
	int st = 0;
	pid_t live;

	UNIT_EQ_INT(probe_req_parse("usdt:*:prov:name", &req), 0, "a '*' probe, parsed");
	UNIT_EQ_INT(follow_open(&fo, &ss, &f), 0, "follow_open with a '*' probe");
	ev.pe_pid = gone_pid();
	UNIT_TRUE((int)ev.pe_pid > 0, "a reaped child's pid");
	stderr_catch();
	follow_ctl(f, &ev);
	UNIT_EQ_STR(stderr_take(err, sizeof(err)), "",
		    "follow_ctl for a process killed at its barrier: nothing said");
	/* The control: a stopped child is continued (and says nothing);
	 * stopping first, as at the tracer's end: with no session here its
	 * maps are not searched. */
	follow_stop(f);
	live = fork();
	if (live == 0) {
		raise(SIGSTOP);
		_exit(7);
	}
	UNIT_TRUE(live > 0 && waitpid(live, &st, WUNTRACED) == live && WIFSTOPPED(st),
		  "control: a child stopped as at a barrier");
	ev.pe_pid = live;
	stderr_catch();
	follow_ctl(f, &ev);
	UNIT_EQ_STR(stderr_take(err, sizeof(err)), "", "control: follow_ctl says nothing");
	UNIT_TRUE(live > 0 && waitpid(live, &st, 0) == live && WIFEXITED(st) &&
		  WEXITSTATUS(st) == 7, "control: follow_ctl continued the stopped child");
	follow_close(f);
	probe_req_free(&req);
	site_set_free(&ss);
}

/*
 * @n copies of a small library (each its own inode) dlopened into this
 * process, so a scan meets more new objects at once than a process
 * usually maps (follow_scan's list of them is sized from the maps).
 * Returns how many were loaded (many_libs_drop closes them, removes the
 * files).
 */
#define MANY_LIBS 80
static void *many_libs[MANY_LIBS];
static char many_dir[] = "/tmp/pc-unit-libs.XXXXXX";

/* @n children of ours, each blocked reading a pipe until kids_end closes
 * its other end (a barrier: they are in /proc once fork returns). */
static int kids_start(pid_t *v, int n, int *wfd)
{
	int fds[2], k = 0;

	if (pipe2(fds, O_CLOEXEC))
		return 0;
	for (; k < n; k++) {
		char c;

		v[k] = fork();
		if (v[k] == 0) {
			close(fds[1]);
			_exit(read(fds[0], &c, 1) == 0 ? 0 : 1);
		}
		if (v[k] < 0)
			break;
	}
	close(fds[0]);
	*wfd = fds[1];
	return k;
}

static void kids_end(const pid_t *v, int n, int wfd)
{
	close(wfd);
	for (int k = 0; k < n; k++)
		waitpid(v[k], NULL, 0);
}

static int many_libs_load(void)
{
	static const char src[] = "/usr/lib/x86_64-linux-gnu/libdl.so.2";
	char path[256], cmd[600];
	int n = 0;

	if (!mkdtemp(many_dir))
		return 0;
	for (int i = 0; i < MANY_LIBS; i++) {
		snprintf(path, sizeof(path), "%s/lib%d.so", many_dir, i);
		snprintf(cmd, sizeof(cmd), "cp %s %s", src, path);
		if (system(cmd) || !(many_libs[i] = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
			break;
		n++;
	}
	return n;
}

static void many_libs_drop(void)
{
	char cmd[300];

	for (int i = 0; i < MANY_LIBS; i++)
		if (many_libs[i])
			dlclose(many_libs[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", many_dir);
	(void)!system(cmd);
}

int main(void)
{
	err_fd = mkstemp(err_path);
	if (err_fd < 0) {
		printf("not ok 1 - setup: '%s': %s\n", err_path, strerror(errno));
		return 1;
	}
	unlink(err_path);
	test_ctl();
	for (int d = 0; d < 2; d++) {
		const char *how = d ? "--follow" : "'*' with -p";

		test_start(d, how, gone_pid(), "a root gone since");
		/* The control: this process, alive, read and searched. */
		test_start(d, how, getpid(), "a live root");
	}
	/* The root and 15 children: the process list exactly full (16),
	 * so the sanitizer build sees a scan one past its end. */
	{
		pid_t kids[15];
		int wfd = -1, n = kids_start(kids, 15, &wfd);

		UNIT_EQ_INT(n, 15, "15 children started");
		test_start(1, "--follow", getpid(), "a live root and 15 children (16 processes)");
		kids_end(kids, n, wfd);
	}
	/* Again with 80 more objects, every one new to the scan (the
	 * sanitizer build sees a list sized short of them). */
	UNIT_EQ_INT(many_libs_load(), MANY_LIBS, "80 copies of libdl.so.2 dlopened");
	test_start(1, "--follow", getpid(), "a live root mapping 80 more objects");
	many_libs_drop();
	close(err_fd);
	return unit_done();
}
