/*
 * attachfail.h — fx_attachfail for the unit tests that attach to it
 * (test_session, test_place): the fixture started and waited for, its
 * fxatt:* sites resolved as the CLI resolves them, and readers of what an
 * attachment leaves in it (semaphore, site byte) and in this process
 * (fds).  fx_attachfail's every attach fails at b_dup2: b_dup1 and b_dup2
 * share an address with different semaphore offsets.
 * Static functions: each test includes it once, after defining
 * _GNU_SOURCE and including unit.h.
 */
#ifndef PC_UNIT_ATTACHFAIL_H
#define PC_UNIT_ATTACHFAIL_H

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
#include <time.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "procmaps.h"
#include "provider.h"

static char fx_path[PATH_MAX], tmpdir[] = "/tmp/pc-unit-attachfail.XXXXXX";
static char ready[PATH_MAX], fifo[PATH_MAX], stash[PATH_MAX];

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

static int site_clean(pid_t pid, const struct site *st);

/*
 * Wait, at most 2 s, for @st's uprobe in @pid to be gone (semaphore 0,
 * the file's byte back) after we released it: another process may hold
 * our perf event for a moment after we closed it (reading
 * /proc/PID/fdinfo/FD takes a reference to the file: the suites'
 * invariant checks read every process's), and the kernel unregisters the
 * uprobe only when that last reference drops (measured: 14-26 ms under a
 * loop of such reads, 2026-12-06; make check's faults suite failed on
 * it).  Returns the ms waited, or -1 if it never went (the check that
 * follows then fails on what it reads).
 */
static int settled(pid_t pid, const struct site *st)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	for (int ms = 0; ms <= 2000; ms += 2) {
		if (sema(pid, st) == 0 && site_clean(pid, st) == 1) {
			if (ms)
				printf("# %s: released %d ms after our close (a "
				       "reference held elsewhere)\n", st->st_name, ms);
			return ms;
		}
		nanosleep(&ts, NULL);
	}
	return -1;
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

static int setup_paths(void)
{
	char self[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (k <= 0)
		return -1;
	self[k] = 0;
	/* A suite's own copy (run-suites), else the build's. */
	if (getenv("PROBECHECK_FIXTURES"))
		snprintf(fx_path, sizeof(fx_path), "%s/fx_attachfail",
			 getenv("PROBECHECK_FIXTURES"));
	else
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

/*
 * Start the fixture and resolve its fxatt:* sites into @ss: 0 when the
 * four are there with a_good first (@a) and b_dup1 (@b), else -1 (the
 * TAP lines say what was wrong).  @a may be set either way.  Without the
 * fixture or temporary files, not ok and exit 1: nothing can run.
 */
static int fixture_up(pid_t *pid, struct site_set *ss, const struct site **a,
		      const struct site **b)
{
	if (setup_paths()) {
		printf("not ok 1 - setup: fixture '%s' or temporary files: %s\n",
		       fx_path, strerror(errno));
		exit(1);
	}
	*pid = start_fixture();
	UNIT_TRUE(*pid > 0 && wait_ready(*pid) == 0, "fx_attachfail is ready");
	UNIT_EQ_INT(resolve(*pid, ss), 4, "fxatt:* resolves to 4 sites");
	*a = find(ss, "a_good");
	*b = find(ss, "b_dup1");
	UNIT_TRUE(*a && *b && ss->ss_n == 4 && *a == &ss->ss_v[0],
		  "a_good sorts first, b_dup1 is there");
	return *a && *b && ss->ss_n == 4 && *a == &ss->ss_v[0] ? 0 : -1;
}

/* Let the fixture exit (it waits on the fifo), reap it, remove the files. */
static void release_fixture(pid_t pid)
{
	int fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0) {
		(void)!write(fd, "\n", 1);
		close(fd);
	} else if (pid > 0) {
		kill(pid, SIGKILL);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	unlink(ready);
	unlink(fifo);
	rmdir(stash);
	rmdir(tmpdir);
}

#endif
