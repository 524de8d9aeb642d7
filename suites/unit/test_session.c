/*
 * test_session.c — session_attach's all-or-nothing promise, seen from the
 * traced process while the session is still open.
 *
 * The CLI closes the session right after a failed attach, and
 * session_close undoes the same links, so no suite can tell a rollback
 * inside session_attach from none at all.  Here the session stays open
 * and the test reads the target's memory: on fx_attachfail every attach
 * fails at b_dup2 (see fixtures/fx_attachfail.c), so after the error
 * a_good's and b_dup1's semaphores must read 0 again and their sites hold
 * the file's bytes, with no perf event left in this process.
 *
 * A positive control first attaches a_good alone and sees semaphore 1 and
 * an int3, so the readers below can tell a leaked attachment from none.
 * Every case runs in each attach mode the kernel has (perf; tracefs when
 * uprobe_events is writable, with the stash in the test's directory;
 * multi when a uprobe_multi link works), labels prefixed with the mode;
 * a missing mode is one SKIP line with the reason.
 * Needs root and a kernel with uprobes; the fixture is found beside this
 * binary, in ../fixtures/.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "unit.h"
#include "attach.h"
#include "log.h"
#include "procmaps.h"
#include "provider.h"
#include "session.h"

static char fx_path[PATH_MAX], tmpdir[] = "/tmp/pc-unit-session.XXXXXX";
static char ready[PATH_MAX], fifo[PATH_MAX], stash[PATH_MAX];
static const struct attach_ops *mode;   /* the attach mode under test */

/* @what prefixed with the mode: "[multi] what". */
static const char *L(const char *what)
{
	static char buf[200];

	snprintf(buf, sizeof(buf), "[%s] %s", mode->ao_name, what);
	return buf;
}

/* What one attachment of the mode leaves open in this process. */
static const char *att_fd_kind(void)
{
	return mode == &attach_multi_ops ? "anon_inode:bpf_link"
					    : "anon_inode:[perf_event]";
}

/* Wait (inotify, no sleeping) until the fixture renamed its ready file
 * into tmpdir; 0 or -1 if it died or 10 s passed. */
static int wait_ready(pid_t child)
{
	int in = inotify_init1(IN_CLOEXEC), ok = -1;
	char buf[4096];

	if (in < 0 || inotify_add_watch(in, tmpdir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0)
		goto out;
	for (int i = 0; i < 100; i++) {
		struct pollfd p = { in, POLLIN, 0 };

		if (access(ready, F_OK) == 0) {
			ok = 0;
			break;
		}
		if (waitpid(child, NULL, WNOHANG) == child)
			break;
		if (poll(&p, 1, 100) > 0 && read(in, buf, sizeof(buf)) < 0)
			break;
	}
out:
	if (in >= 0)
		close(in);
	return ok;
}

static pid_t start_fixture(void)
{
	char r[PATH_MAX + 8], w[PATH_MAX + 8];
	pid_t pid;

	snprintf(r, sizeof(r), "ready:%s", ready);
	snprintf(w, sizeof(w), "wait:%s", fifo);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl(fx_path, fx_path, r, w, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The sites of fxatt:* in @pid, sorted as the CLI sorts them. */
static int resolve(pid_t pid, struct site_set *ss)
{
	struct pm_objects maps = { 0 };
	struct target tg = { .tg_pid = pid };
	struct probe_req req;
	char text[PATH_MAX + 32];
	int n;

	if (procmaps_read(pid, 0, &maps))
		return -1;
	tg.tg_maps = &maps;
	snprintf(text, sizeof(text), "usdt:%s:fxatt:*", fx_path);
	n = probe_req_parse(text, &req);
	if (!n)
		n = provider_find("usdt")->pv_resolve(&req, &tg, ss);
	probe_req_free(&req);
	procmaps_free(&maps);
	site_set_sort(ss);
	return n;
}

static const struct site *find(const struct site_set *ss, const char *name)
{
	for (size_t i = 0; i < ss->ss_n; i++)
		if (!strcmp(ss->ss_v[i].st_name, name))
			return &ss->ss_v[i];
	return NULL;
}

/* The 16-bit semaphore of @st in @pid, or -1. */
static int sema(pid_t pid, const struct site *st)
{
	char p[64];
	unsigned short v;
	int fd;
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/mem", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, &v, sizeof(v), (off_t)(st->st_sema_vaddr + st->st_bias));
	close(fd);
	return n == sizeof(v) ? v : -1;
}

/* 1 if the byte at @st's site in @pid equals the file's, 0 if not, -1. */
static int site_clean(pid_t pid, const struct site *st)
{
	char p[64];
	unsigned char mem, file;
	int fd, ffd;
	ssize_t a, b;

	snprintf(p, sizeof(p), "/proc/%d/mem", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	ffd = open(fx_path, O_RDONLY | O_CLOEXEC);
	a = fd < 0 ? -1 : pread(fd, &mem, 1, (off_t)(st->st_pc + st->st_bias));
	b = ffd < 0 ? -1 : pread(ffd, &file, 1, (off_t)st->st_off);
	if (fd >= 0)
		close(fd);
	if (ffd >= 0)
		close(ffd);
	return a == 1 && b == 1 ? mem == file : -1;
}

/* fds of this process whose link reads @kind. */
static int own_fds(const char *kind)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char p[300], l[64];
	int n = 0;
	ssize_t k;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		k = readlink(p, l, sizeof(l) - 1);
		if (k > 0 && (l[k] = 0, !strcmp(l, kind)))
			n++;
	}
	closedir(d);
	return n;
}

/* a_good alone: the readers must see what an attachment does. */
static void test_control(pid_t pid, struct site_set *ss, const struct site *a)
{
	struct session_opts so = { .so_attach = mode };
	struct pc_session *s = NULL;
	size_t n = ss->ss_n;

	char ring[160] = "";

	UNIT_EQ_INT(session_open(&so, &s), 0, L("control: session_open"));
	if (!s)
		return;
	/* The accounting-mismatch diagnostic (K5) on a ring nothing wrote. */
	UNIT_EQ_INT(session_ring_state(s, ring, sizeof(ring)), 0, L("control: ring state read"));
	UNIT_EQ_STR(ring, "empty: consumer and producer at 0", L("control: a new ring is empty"));
	ss->ss_n = 1;   /* a_good sorts first */
	UNIT_EQ_INT(session_attach(s, ss, pid), 0, L("control: a_good attaches"));
	ss->ss_n = n;
	UNIT_EQ_INT(sema(pid, a), 1, L("control: a_good's semaphore reads 1"));
	UNIT_EQ_INT(site_clean(pid, a), 0, L("control: a_good's site holds an int3"));
	session_close(s);
	UNIT_EQ_INT(sema(pid, a), 0, L("control: 0 after session_close"));
	UNIT_EQ_INT(site_clean(pid, a), 1, L("control: file byte after session_close"));
}

static void expect_clean(pid_t pid, const struct site *a, const struct site *b,
			 const char *when)
{
	char w[160];

	snprintf(w, sizeof(w), "%s: a_good's semaphore is 0", when);
	UNIT_EQ_INT(sema(pid, a), 0, L(w));
	snprintf(w, sizeof(w), "%s: b_dup1's semaphore is 0", when);
	UNIT_EQ_INT(sema(pid, b), 0, L(w));
	snprintf(w, sizeof(w), "%s: a_good's site holds the file's byte", when);
	UNIT_EQ_INT(site_clean(pid, a), 1, L(w));
	snprintf(w, sizeof(w), "%s: the b_dup site holds the file's byte", when);
	UNIT_EQ_INT(site_clean(pid, b), 1, L(w));
}

/* The whole set: fails at b_dup2, and must undo a_good and b_dup1 itself. */
static void test_rollback(pid_t pid, struct site_set *ss, const struct site *a,
			  const struct site *b)
{
	struct session_opts so = { .so_attach = mode };
	struct pc_session *s = NULL;
	int err;

	UNIT_EQ_INT(session_open(&so, &s), 0, L("rollback: session_open"));
	if (!s)
		return;
	err = session_attach(s, ss, pid);
	UNIT_EQ_INT(err, -EINVAL, L("rollback: session_attach fails with EINVAL at b_dup2"));
	expect_clean(pid, a, b, "rollback, session still open");
	UNIT_EQ_INT(own_fds(att_fd_kind()), 0, L("rollback: no attachment fd left open"));
	UNIT_EQ_INT(own_fds("anon_inode:[perf_event]"), 0, L("rollback: no perf event left open"));
	session_close(s);
	expect_clean(pid, a, b, "rollback, after session_close");
}

/* session_attach_from: the failing batch is undone, the earlier one stays. */
static void test_batch(pid_t pid, struct site_set *ss, const struct site *a,
		       const struct site *b)
{
	struct session_opts so = { .so_attach = mode };
	struct pc_session *s = NULL;
	size_t n = ss->ss_n;

	UNIT_EQ_INT(session_open(&so, &s), 0, L("batch: session_open"));
	if (!s)
		return;
	ss->ss_n = 1;
	UNIT_EQ_INT(session_attach(s, ss, pid), 0, L("batch: a_good attaches"));
	ss->ss_n = n;
	UNIT_EQ_INT(session_attach_from(s, ss, 1, pid), -EINVAL,
		    L("batch: the rest fails with EINVAL at b_dup2"));
	UNIT_EQ_INT(sema(pid, a), 1, L("batch: a_good (earlier batch) still 1"));
	UNIT_EQ_INT(site_clean(pid, a), 0, L("batch: a_good's int3 stays"));
	UNIT_EQ_INT(sema(pid, b), 0, L("batch: b_dup1 undone, semaphore 0"));
	UNIT_EQ_INT(site_clean(pid, b), 1, L("batch: b_dup site holds the file's byte"));
	UNIT_EQ_INT(own_fds(att_fd_kind()), 1,
		    L("batch: one attachment fd open (a_good's)"));
	session_close(s);
	expect_clean(pid, a, b, "batch, after session_close");
	UNIT_EQ_INT(own_fds(att_fd_kind()), 0, L("batch: no attachment fd after session_close"));
}

/*
 * One site more than the specs map holds: refused before anything is
 * stored or attached, naming the limit (the map would refuse the last
 * spec with the same E2BIG, after 65536 stores and with another message).
 */
static void test_limit(pid_t pid, const struct site *a)
{
	struct session_opts so = { .so_attach = mode };
	struct site_set big = { .ss_n = PC_MAX_SPECS + 1 };
	struct pc_session *s = NULL;
	char err[512] = "", path[PATH_MAX];
	int fd, saved, rc;

	big.ss_v = malloc(big.ss_n * sizeof(*big.ss_v));
	if (!big.ss_v || session_open(&so, &s)) {
		UNIT_TRUE(0, L("limit: setup"));
		free(big.ss_v);
		return;
	}
	for (size_t i = 0; i < big.ss_n; i++)
		big.ss_v[i] = *a;       /* shallow: the strings stay a's */
	snprintf(path, sizeof(path), "%s/limit.err", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	rc = session_attach_from(s, &big, 0, pid);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	(void)!pread(fd, err, sizeof(err) - 1, 0);
	close(fd);
	unlink(path);
	UNIT_EQ_INT(rc, -E2BIG, L("limit: 65537 sites: -E2BIG"));
	UNIT_TRUE(strstr(err, "65537 sites exceed the limit of 65536"),
		  L("limit: the message names the count and the limit"));
	UNIT_EQ_INT(sema(pid, a), 0, L("limit: nothing attached (a_good's semaphore 0)"));
	session_close(s);
	free(big.ss_v);
}

/* Why @mode cannot run here, or NULL. */
static const char *mode_missing(void)
{
	static char why[256];

	return mode->ao_caps(why, sizeof(why)) < 0 ? why : NULL;
}

static void test_mode(pid_t pid, struct site_set *ss, const struct site *a,
		      const struct site *b)
{
	const char *why = mode_missing();

	if (why) {
		printf("ok %d - %s # SKIP %s\n", ++unit_n,
		       L("every case"), why);
		return;
	}
	test_control(pid, ss, a);
	test_rollback(pid, ss, a, b);
	test_batch(pid, ss, a, b);
}

static int setup_paths(void)
{
	char self[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (k <= 0)
		return -1;
	self[k] = 0;
	snprintf(fx_path, sizeof(fx_path), "%s/../fixtures/fx_attachfail",
		 dirname(self));
	if (!realpath(fx_path, self))
		return -1;
	strcpy(fx_path, self);
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(ready, sizeof(ready), "%s/ready", tmpdir);
	snprintf(fifo, sizeof(fifo), "%s/go", tmpdir);
	/* tracefs mode records its entries here, not in /run/probecheck. */
	snprintf(stash, sizeof(stash), "%s/stash", tmpdir);
	setenv("PROBECHECK_STASH", stash, 1);
	return mkfifo(fifo, 0600);
}

int main(void)
{
	struct site_set ss = { 0 };
	const struct site *a, *b;
	pid_t pid;
	int fd;

	if (setup_paths()) {
		printf("not ok 1 - setup: fixture '%s' or temporary files: %s\n",
		       fx_path, strerror(errno));
		return 1;
	}
	pid = start_fixture();
	UNIT_TRUE(pid > 0 && wait_ready(pid) == 0, "fx_attachfail is ready");
	UNIT_EQ_INT(resolve(pid, &ss), 4, "fxatt:* resolves to 4 sites");
	a = find(&ss, "a_good");
	b = find(&ss, "b_dup1");
	UNIT_TRUE(a && b && ss.ss_n == 4 && a == &ss.ss_v[0],
		  "a_good sorts first, b_dup1 is there");
	if (a && b && ss.ss_n == 4 && a == &ss.ss_v[0])
		for (size_t m = 0; (mode = attach_modes[m]); m++)
			test_mode(pid, &ss, a, b);
	mode = attach_modes[0];
	if (a)
		test_limit(pid, a);
	/* Release the fixture: it exits after its wait step. */
	fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, "\n", 1);
		close(fd);
	} else if (pid > 0) {
		kill(pid, SIGKILL);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	site_set_free(&ss);
	unlink(ready);
	unlink(fifo);
	rmdir(stash);
	rmdir(tmpdir);
	return unit_done();
}
