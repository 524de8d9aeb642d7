/*
 * test_sysfail.c — system calls that fail or come back short, as the
 * kernel really answers them: a process that exits between open() and
 * read() of its /proc files reads 0 bytes or fails with ESRCH; a file we
 * may not read fails with EACCES; reads are interrupted (EINTR) or fail
 * (EIO).  Each caller must answer with its documented error, never with
 * success on what it did not read.
 *
 * The binary interposes open, open64, read, write, renameat, pipe2, fopen,
 * waitpid, epoll_wait (libbpf's ring), stat, fstat, opendir and syscall (bpf: interpose.h) (an executable's definitions win over libc's for the
 * objects linked into it) and passes every call through to the kernel except the one a plan
 * picks: the after-th call of that name (0: the next one) returns -1 with
 * the plan's errno, or 0 bytes (read) or half of them (write) when the
 * errno is 0; a write planned with -E works and leaves errno E.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "unit.h"
#include "attach_tracefs.h"
#include "elf.h"
#include "features.h"
#include "follow.h"
#include "install_check.h"
#include "procmaps.h"
#include "procstat.h"
#include "provider.h"
#include "session.h"
#include "stash.h"
#include "uprobe_pmu.h"
#include "unitsite.h"

static struct {
	const char *call;       /* NULL: nothing planned */
	int after;              /* calls of that name to let through first */
	int err;                /* errno to fail with; 0: a read of 0 bytes */
	int hit;                /* the planned failure happened */
	const char *suffix;     /* read: only of a file whose path ends so */
	int fd;                 /* that file's descriptor, once opened */
	int fill;               /* read: succeed with as many bytes as asked */
	const char *text;       /* read: succeed with these bytes */
} plan;

static void fail_call(const char *call, int after, int err)
{
	plan.call = call;
	plan.after = after;
	plan.err = err;
	plan.hit = 0;
	plan.suffix = NULL;
	plan.fd = -1;
	plan.fill = 0;
	plan.text = NULL;
}

/* A read of the file whose path ends with @suffix fails as planned. */
static void fail_read_of(const char *suffix, int err)
{
	fail_call("read", 0, err);
	plan.suffix = suffix;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Whether this call of @call (on @fd, -1: any) is the planned one. */
static int planned_on(const char *call, int fd)
{
	if (!plan.call || strcmp(plan.call, call))
		return 0;
	if (plan.suffix && fd != plan.fd)
		return 0;
	if (plan.after-- > 0)
		return 0;
	plan.call = NULL;
	plan.hit = 1;
	return 1;
}

static int planned(const char *call)
{
	return planned_on(call, -1);
}

/* bpf(2), which libbpf makes through syscall() (interpose.h): the plan
 * "bpf" fails every call while it stands (libbpf probes the kernel with
 * calls of its own before the one asked for). */
static int unit_syscall_fails(long nr)
{
	if (nr != SYS_bpf || !plan.call || strcmp(plan.call, "bpf"))
		return 0;
	plan.hit = 1;
	errno = plan.err;
	return 1;
}
#include "interpose.h"

static int open_common(const char *call, const char *path, int flags, va_list ap)
{
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;

	int fd;

	if (plan.suffix && plan.call && !strcmp(plan.call, "open") && ends_with(path, plan.suffix)) {
		plan.call = NULL;       /* an open of that file only */
		plan.hit = 1;
		errno = plan.err;
		return -1;
	}
	if (!plan.suffix && planned(call)) {
		errno = plan.err;
		return -1;
	}
	fd = syscall(SYS_openat, AT_FDCWD, path, flags, mode);
	if (plan.suffix && plan.call && ends_with(path, plan.suffix))
		plan.fd = fd;
	return fd;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = open_common("open", path, flags, ap);
	va_end(ap);
	return fd;
}

/* Where _FILE_OFFSET_BITS=64 names it so: the same call. */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

/* openat(2), as the stash opens its directory and files under it. */
int openat(int dfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (planned("openat")) {
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_openat, dfd, path, flags, mode);
}

int openat64(int dfd, const char *path, int flags, ...) __attribute__((alias("openat")));

/* A /proc/PID/stat line as long as the caller's buffer allows: a comm
 * of 15 characters and a tail of spaces (the kernel's own line is never
 * this long, but a reader must not trust that). */
static ssize_t fill_stat(void *buf, size_t n)
{
	static const char line[] = "4242 (fifteen-chars-x) S 77 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 31337 ";

	memset(buf, ' ', n);
	memcpy(buf, line, n < sizeof(line) - 1 ? n : sizeof(line) - 1);
	return (ssize_t)n;
}

ssize_t read(int fd, void *buf, size_t n)
{
	if (planned_on("read", fd)) {
		if (plan.fill)
			return fill_stat(buf, n);
		if (plan.text) {
			size_t k = strlen(plan.text) < n ? strlen(plan.text) : n;

			memcpy(buf, plan.text, k);
			return (ssize_t)k;
		}
		if (!plan.err)
			return 0;
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_read, fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	if (planned_on("pread", fd)) {
		if (!plan.err)
			return 0;
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_pread64, fd, buf, n, off);
}
ssize_t pread64(int fd, void *buf, size_t n, off_t off) __attribute__((alias("pread")));

ssize_t write(int fd, const void *buf, size_t n)
{
	if (planned("write")) {
		ssize_t r;

		if (!plan.err)
			return syscall(SYS_write, fd, buf, n > 1 ? n / 2 : n);
		if (plan.err > 0) {
			errno = plan.err;
			return -1;
		}
		/* -E: the write works and leaves errno E, as a libc call may. */
		r = syscall(SYS_write, fd, buf, n);
		errno = -plan.err;
		return r;
	}
	return syscall(SYS_write, fd, buf, n);
}

int renameat(int olddfd, const char *old, int newdfd, const char *new)
{
	if (planned("renameat")) {
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_renameat, olddfd, old, newdfd, new);
}

/* fopen of a path ending with the plan's suffix fails (planned "fopen"). */
FILE *fopen(const char *path, const char *mode)
{
	static FILE *(*real)(const char *, const char *);

	if (plan.call && !strcmp(plan.call, "fopen") && ends_with(path, plan.suffix)) {
		plan.call = NULL;
		plan.hit = 1;
		errno = plan.err;
		return NULL;
	}
	if (!real)
		real = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
	return real(path, mode);
}

FILE *fopen64(const char *, const char *) __attribute__((alias("fopen")));

int stat(const char *path, struct stat *sb)
{
	if (planned("stat")) {
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_newfstatat, AT_FDCWD, path, sb, 0);
}

int fstat(int fd, struct stat *sb)
{
	if (planned("fstat")) {
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_fstat, fd, sb);
}

DIR *opendir(const char *path)
{
	static DIR *(*real)(const char *);

	if (planned("opendir")) {
		errno = plan.err;
		return NULL;
	}
	if (!real)
		real = (DIR *(*)(const char *))dlsym(RTLD_NEXT, "opendir");
	return real ? real(path) : NULL;
}

/* A planned waitpid reaps the child all the same (no zombie left), then
 * fails as planned. */
pid_t waitpid(pid_t pid, int *st, int options)
{
	pid_t r = syscall(SYS_wait4, pid, st, options, NULL);

	if (r > 0 && planned("waitpid")) {
		errno = plan.err;
		return -1;
	}
	return r;
}

/* libbpf's ring_buffer__poll waits here. */
int epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout)
{
	if (planned("epoll_wait")) {
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_epoll_pwait, epfd, ev, n, timeout, NULL, 8);
}

pid_t fork(void)
{
	static pid_t (*real)(void);

	if (planned("fork")) {
		errno = plan.err;
		return -1;
	}
	if (!real)
		real = (pid_t (*)(void))dlsym(RTLD_NEXT, "fork");
	return real();
}

ssize_t readlink(const char *path, char *buf, size_t n)
{
	if (planned("readlink")) {
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_readlink, path, buf, n);
}

int pipe2(int fds[2], int flags)
{
	if (planned("pipe2")) {
		errno = plan.err;
		return -1;
	}
	return syscall(SYS_pipe2, fds, flags);
}

/* Whether the code under test reaches the definitions above. */
static int calls_are_ours(void)
{
	struct proc_stat ps;

	fail_call("read", 0, EIO);
	proc_stat_read(getpid(), &ps);
	if (plan.hit)
		return 1;
	plan.call = NULL;
	return 0;
}

/* proc_stat_read of our own pid with one call failing as planned. */
static void stat_fails(const char *call, int err, int want, const char *what)
{
	struct proc_stat ps = { 0 };
	int rc;

	fail_call(call, 0, err);
	rc = proc_stat_read(getpid(), &ps);
	UNIT_TRUE(plan.hit, "the planned failure happened");
	plan.call = NULL;
	UNIT_EQ_INT(rc, want, what);
}

static void test_proc_stat_read(void)
{
	struct proc_stat ps = { 0 };

	UNIT_EQ_INT(proc_stat_read(getpid(), &ps), 0, "proc_stat_read: our own stat");
	UNIT_EQ_INT(ps.ps_ppid, getppid(), "proc_stat_read: our parent");
	/* The process went between open and read: 0 bytes, or ESRCH. */
	stat_fails("read", 0, -ESRCH, "read of 0 bytes: -ESRCH, not an unparsed success");
	stat_fails("read", ESRCH, -ESRCH, "read failing with ESRCH: -ESRCH");
	stat_fails("read", EIO, -EIO, "read failing with EIO: -EIO");
	stat_fails("read", EINTR, -EINTR, "read interrupted: -EINTR (the caller decides)");
	stat_fails("open", ENOENT, -ESRCH, "open failing with ENOENT (no such pid): -ESRCH");
	stat_fails("open", EACCES, -EACCES, "open failing with EACCES: -EACCES");
	stat_fails("open", EMFILE, -EMFILE, "open failing with EMFILE: -EMFILE");
	/* A read that fills all it was asked for: parsed within the buffer
	 * (an overflow is the sanitizer build's to see). */
	fail_call("read", 0, 0);
	plan.fill = 1;
	UNIT_EQ_INT(proc_stat_read(getpid(), &ps), 0, "a read that fills the buffer: parsed");
	UNIT_TRUE(plan.hit, "the full read happened");
	plan.call = NULL;
	UNIT_EQ_INT(ps.ps_ppid, 77, "a full buffer: its ppid");
	UNIT_TRUE(ps.ps_start == 31337, "a full buffer: its start time");
}

/*
 * proc_stat_parse on lines the kernel could give and ones it could not:
 * every field a different number, so a parse one field off reads a
 * wrong value, not the same one.  The comm may hold ") " itself (the
 * last ')' ends it); a line cut anywhere before field 22 is -EINVAL.
 */
static void test_proc_stat_parse(void)
{
	static const char tail[] = " 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21";
	static const struct { const char *head; int rc; char state; int ppid; } t[] = {
		{ "1 (sh) S 4", 0, 'S', 4 },
		{ "1 (a) b) (c) R 44", 0, 'R', 44 },     /* comm "a) b) (c" */
		{ "1 ()) Z 3", 0, 'Z', 3 },
		{ "1 (sh S 4", -EINVAL, 0, 0 },           /* no ')' at all */
		{ "1 (sh)S 4", -EINVAL, 0, 0 },           /* no space after it */
		{ "1 (sh) S x", -EINVAL, 0, 0 },          /* no ppid */
	};
	char line[256], what[160];
	struct proc_stat ps;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&ps, 0, sizeof(ps));
		snprintf(line, sizeof(line), "%s%s 2222 23 24\n", t[i].head, tail);
		snprintf(what, sizeof(what), "proc_stat_parse '%s ...'", t[i].head);
		UNIT_EQ_INT(proc_stat_parse(line, &ps), t[i].rc, what);
		if (t[i].rc)
			continue;
		UNIT_EQ_INT(ps.ps_state, t[i].state, "... its state");
		UNIT_EQ_INT(ps.ps_ppid, t[i].ppid, "... its ppid");
		UNIT_TRUE(ps.ps_start == 2222, "... its start time (field 22)");
	}
	UNIT_EQ_INT(proc_stat_parse("1 (sh) ", &ps), -EINVAL, "a line ending after the comm");
	UNIT_EQ_INT(proc_stat_parse("1 (sh)", &ps), -EINVAL, "a line ending at the comm");
	snprintf(line, sizeof(line), "1 (sh) S 4%s", tail);
	UNIT_EQ_INT(proc_stat_parse(line, &ps), -EINVAL, "21 fields: no start time");
	snprintf(line, sizeof(line), "1 (sh) S 4%s x", tail);
	UNIT_EQ_INT(proc_stat_parse(line, &ps), -EINVAL, "field 22 not a number");
	snprintf(line, sizeof(line), "1 (sh) S 4%s 99", tail);
	UNIT_EQ_INT(proc_stat_parse(line, &ps), 0, "22 fields, the last one the start time");
	UNIT_TRUE(ps.ps_start == 99, "... 99");
}

/*
 * stash_record_write into a directory of our own: a write, rename or
 * open that fails leaves the record as it was before (none, or the
 * previous one) and no temporary file; a short or interrupted write is
 * carried on.
 */
static char stash[64];

/* The directory's entries (a temporary ".NAME.tmp" too), sorted, on one
 * line. */
static const char *entries(void)
{
	static char buf[512];
	struct dirent **v;
	int n = scandir(stash, &v, NULL, alphasort);

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i]->d_name, ".") && strcmp(v[i]->d_name, "..")) {
			strncat(buf, v[i]->d_name, sizeof(buf) - strlen(buf) - 2);
			strcat(buf, " ");
		}
		free(v[i]);
	}
	free(v);
	return buf;
}

static void record_fails(const char *call, int after, int err, int want, const char *after_names,
			 char *const *items, size_t n, const char *what)
{
	struct tracer_id id = { 4242, 777 };
	char w[200];
	int rc;

	fail_call(call, after, err);
	rc = stash_record_write(&id, items, n);
	snprintf(w, sizeof(w), "%s: the planned failure happened", what);
	UNIT_TRUE(plan.hit, w);
	plan.call = NULL;
	UNIT_EQ_INT(rc, want, what);
	snprintf(w, sizeof(w), "%s: the directory holds '%s'", what, after_names);
	UNIT_EQ_STR(entries(), after_names, w);
}

static void test_stash_record_write(void)
{
	struct tracer_id id = { 4242, 777 };
	char group[64], ev[96], a[192], b[192];
	char *one[] = { a }, *two[] = { a, b };

	snprintf(stash, sizeof(stash), "/tmp/pc-sysfail.%d", (int)getpid());
	if (mkdir(stash, 0700) || setenv("PROBECHECK_STASH", stash, 1)) {
		UNIT_TRUE(0, "a stash directory of our own");
		return;
	}
	tfs_group_name(&id, group, sizeof(group));
	tfs_event_name(0x801, 0x1234, 0x10, 0, 0, ev, sizeof(ev));
	snprintf(a, sizeof(a), "tracefs %s/%s", group, ev);
	tfs_event_name(0x801, 0x1234, 0x20, 0, 0, ev, sizeof(ev));
	snprintf(b, sizeof(b), "tracefs %s/%s", group, ev);
	/* No record yet: every failure leaves none. */
	record_fails("open", 0, EACCES, -EACCES, "", one, 1, "no record, open fails with EACCES");
	record_fails("openat", 0, EACCES, -EACCES, "", one, 1, "no record, the directory's openat fails with EACCES");
	record_fails("openat", 1, EMFILE, -EMFILE, "", one, 1, "no record, the temporary file's openat fails with EMFILE");
	record_fails("write", 0, ENOSPC, -ENOSPC, "", one, 1, "no record, first write fails with ENOSPC");
	record_fails("write", 1, EIO, -EIO, "", one, 1, "no record, second write fails with EIO");
	record_fails("renameat", 0, EIO, -EIO, "", one, 1, "no record, rename fails with EIO");
	/* Interrupted or short writes are carried on. */
	record_fails("write", 0, EINTR, 0, "4242-777 ", one, 1, "a write interrupted: retried, the record written");
	UNIT_EQ_INT(stash_record_write(&id, NULL, 0), 0, "the record removed");
	record_fails("write", 1, 0, 0, "4242-777 ", one, 1, "a short write: carried on, the record written");
	/* A record there: a failed rewrite keeps it whole. */
	record_fails("write", 2, ENOSPC, -ENOSPC, "4242-777 ", two, 2, "a rewrite whose write fails keeps the old record");
	record_fails("renameat", 0, EIO, -EIO, "4242-777 ", two, 2, "a rewrite whose rename fails keeps the old record");
	{
		char path[128], text[512] = "";
		FILE *f;

		snprintf(path, sizeof(path), "%s/4242-777", stash);
		f = fopen(path, "r");
		if (f) {
			text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
			fclose(f);
		}
		UNIT_TRUE(strstr(text, a) && !strstr(text, b), "the old record holds its one item, not the new two");
	}
	/* A dead tracer's record that cleanup cannot open (its openat, the
	 * second after the directory's, fails with EACCES): refused with
	 * that errno and left alone, not read from no descriptor. */
	{
		struct stash_report r;

		fail_call("openat", 1, EACCES);
		unit_quiet(1);
		UNIT_EQ_INT(stash_cleanup(NULL, 0, &r), -EACCES,
			    "cleanup, the record's openat failing: -EACCES");
		unit_quiet(0);
		UNIT_TRUE(plan.hit, "the planned openat of the record happened");
		plan.call = NULL;
		UNIT_EQ_INT(r.sr_refused, 1, "... the record refused");
		UNIT_EQ_STR(entries(), "4242-777 ", "... and left alone");
	}
	UNIT_EQ_INT(stash_record_write(&id, NULL, 0), 0, "the record removed at the end");
	/* Whatever a failed check left, so that the directory goes too. */
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/.4242-777.tmp", stash);
		unlink(path);
		snprintf(path, sizeof(path), "%s/4242-777", stash);
		unlink(path);
	}
	UNIT_EQ_INT(rmdir(stash), 0, "the stash directory removed");
}

/*
 * tracefs: the event id read after an entry is created.  An id file that
 * reads empty (the entry went between write and read) or fails gives the
 * error with the file named, and tfs_release takes the entry out of
 * uprobe_events and the stash: nothing of ours is left.
 */
static int in_uprobe_events(const char *group)
{
	char line[1024];
	int found = 0;
	FILE *f = fopen("/sys/kernel/tracing/uprobe_events", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		found |= !!strstr(line, group);
	fclose(f);
	return found;
}

/* tfs_perf_open with the id file's read failing with @err (0: empty);
 * what it printed into @msg. */
static int id_fails(const struct site *st, int err, char *msg, size_t len)
{
	struct tfs_entry *ent = NULL;
	int rc;

	unit_capture(1);
	fail_read_of("/id", err);
	rc = tfs_perf_open(st, getpid(), &ent);
	UNIT_TRUE(plan.hit, "the planned read of the id file happened");
	plan.call = NULL;
	UNIT_TRUE(ent == NULL, "no entry handed out");
	tfs_release(&ent, 1);
	unit_capture(0);
	snprintf(msg, len, "%.*s", (int)(len - 1), unit_captured);
	return rc;
}

/* The entry's name exists already (made by hand here, as a tracer in
 * this process that left it would): -EEXIST and said, not appended to
 * (the kernel would add a second probe to it) and left as it was. */
static void tracefs_taken(struct site *st, const char *group)
{
	struct tfs_entry *ent = NULL;
	char event[128], cmd[512];
	struct stat sb;
	int fd, rc;

	if (stat(st->st_open_path, &sb)) {
		UNIT_TRUE(0, "the executable, for the entry's name");
		return;
	}
	tfs_event_name(sb.st_dev, sb.st_ino, st->st_off, 0, 0, event, sizeof(event));
	snprintf(cmd, sizeof(cmd), "p:%s/%s %s:0x%llx\n", group, event, st->st_path,
		 (unsigned long long)st->st_off);
	fd = open("/sys/kernel/tracing/uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0 || write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd)) {
		UNIT_TRUE(0, "an entry of our name made by hand");
		if (fd >= 0)
			close(fd);
		return;
	}
	UNIT_EQ_INT(tfs_prepare(st, 1), 0, "tfs_prepare with the entry's name taken");
	unit_capture(1);
	rc = tfs_perf_open(st, getpid(), &ent);
	unit_capture(0);
	UNIT_EQ_INT(rc, -EEXIST, "tfs_perf_open on an entry that exists: -EEXIST");
	UNIT_TRUE(strstr(unit_captured, "exists already") != NULL, "... and said");
	if (rc >= 0)
		close(rc);      /* a perf event on the entry made by hand */
	tfs_release(&ent, 1);
	UNIT_EQ_INT(in_uprobe_events(group), 1, "the entry made by hand is still there");
	snprintf(cmd, sizeof(cmd), "-:%s/%s\n", group, event);
	UNIT_TRUE(write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd), "... and removed by hand");
	close(fd);
	UNIT_EQ_INT(in_uprobe_events(group), 0, "nothing of ours in uprobe_events");
}

static void test_tracefs_event_id(void)
{
	struct tracer_id self;
	char exe[64], dir[64], group[64], msg[1024], want[160];
	struct site st = { 0 };
	int rc;

	if (access("/sys/kernel/tracing/uprobe_events", W_OK) || stash_self(&self)) {
		UNIT_TRUE(1, "tracefs event id # SKIP /sys/kernel/tracing/uprobe_events not writable");
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/pc-sysfail-stash.%d", (int)getpid());
	snprintf(exe, sizeof(exe), "/tmp/pc-sysfail-true.%d", (int)getpid());
	if (mkdir(dir, 0700) || setenv("PROBECHECK_STASH", dir, 1) ||
	    system("cp /bin/true /tmp/pc-sysfail-true.$PPID") != 0) {
		UNIT_TRUE(0, "a stash and an executable of our own");
		return;
	}
	tfs_group_name(&self, group, sizeof(group));
	st.st_path = st.st_open_path = exe;
	st.st_provider = "fx";
	st.st_name = "id";
	st.st_args = "";
	st.st_off = 0x1000;
	UNIT_EQ_INT(tfs_prepare(&st, 1), 0, "tfs_prepare: the entry named and recorded");

	rc = id_fails(&st, 0, msg, sizeof(msg));
	UNIT_EQ_INT(rc, -EIO, "an id file that reads empty: -EIO");
	snprintf(want, sizeof(want), "/events/%s/", group);
	UNIT_TRUE(strstr(msg, want) && strstr(msg, "/id': ") && strstr(msg, strerror(EIO)),
		  "the message names the id file and the I/O error");
	UNIT_EQ_INT(in_uprobe_events(group), 0, "the entry is out of uprobe_events");

	UNIT_EQ_INT(tfs_prepare(&st, 1), 0, "tfs_prepare again");
	rc = id_fails(&st, EACCES, msg, sizeof(msg));
	UNIT_EQ_INT(rc, -EACCES, "an id file whose read fails with EACCES: -EACCES");
	UNIT_TRUE(strstr(msg, strerror(EACCES)) != NULL, "the message says why");
	UNIT_EQ_INT(in_uprobe_events(group), 0, "the entry is out of uprobe_events again");
	tracefs_taken(&st, group);

	UNIT_EQ_INT(rmdir(dir), 0, "nothing left in the stash (the directory removed)");
	unlink(exe);
}

/* The nop5 optimization probe's go-ahead to its child: a write that
 * fails is its error, the child ends (EOF) and is reaped; a write that
 * works is no error whatever errno held before (a stale errno taken
 * for the write's: 4ebf247d). */
static void test_optimize_go(void)
{
	char why[256];
	int fds = unit_fds(), rc;

	fail_call("write", 0, -EBADF);
	rc = feature_probe_uprobe_optimize(FEATURE_UPROBE_OPTIMIZE, why, sizeof(why));
	UNIT_TRUE(plan.hit, "the planned write of the go-ahead worked, errno EBADF left");
	plan.call = NULL;
	UNIT_TRUE(rc == 0 || rc == 1, "uprobe_optimize probe, errno EBADF after a write that worked: an answer, not -EBADF");
	/* A probe that takes a stale errno for the write's would also go on
	 * past a failed write and wait for its child forever: not tried. */
	if (rc != 0 && rc != 1)
		return;
	fail_call("write", 0, EPIPE);
	rc = feature_probe_uprobe_optimize(FEATURE_UPROBE_OPTIMIZE, why, sizeof(why));
	UNIT_TRUE(plan.hit, "the planned write of the go-ahead failed");
	plan.call = NULL;
	UNIT_EQ_INT(rc, -EPIPE, "uprobe_optimize probe, the go-ahead not written: -EPIPE");
	UNIT_EQ_INT(unit_fds(), fds, "no descriptor left by the failed probe");
	UNIT_EQ_INT(waitpid(-1, NULL, WNOHANG), -1, "its child reaped");
}

/* The nop5 optimization probe's two pipes, each failing in turn: its
 * errno back, no child started, nothing left open (before the probe got
 * to fork, a failed first pipe went unnoticed by a mutant). */
static void test_optimize_pipes(void)
{
	static const int errs[] = { EMFILE, ENFILE };
	char why[256];

	for (int i = 0; i < 2; i++) {
		int fds = unit_fds(), rc;

		fail_call("pipe2", i, errs[i]);
		rc = feature_probe_uprobe_optimize(FEATURE_UPROBE_OPTIMIZE, why, sizeof(why));
		UNIT_TRUE(plan.hit, "the planned pipe2 failure happened");
		plan.call = NULL;
		UNIT_EQ_INT(rc, -errs[i], i ? "uprobe_optimize probe, second pipe fails: its errno"
					    : "uprobe_optimize probe, first pipe fails: its errno");
		UNIT_EQ_INT(unit_fds(), fds, "no descriptor left by the failed probe");
		UNIT_EQ_INT(waitpid(-1, NULL, WNOHANG), -1, "no child started");
	}
}

/* The uprobe_multi probe's child: its pipe or its fork failing is the
 * probe's error, with nothing left open and no child (the fork's failure
 * closing neither end of the pipe went unseen: 86f69e0e of draw
 * pilot-20261207-c). */
static void test_umulti_child_fails(void)
{
	static const char *const calls[] = { "pipe2", "fork" };
	static const int errs[] = { EMFILE, EAGAIN };
	char why[256];

	/* The child is started only where a uprobe_multi program loads
	 * (6.6+); its link working is the same kernel's answer.  Asked of
	 * the probe itself: the registry keeps the answer of an earlier
	 * test that made it fail. */
	if (feature_probe_uprobe_multi(FEATURE_UPROBE_MULTI, why, sizeof(why)) != 1) {
		printf("ok %d - uprobe_multi probe, its child not started # SKIP %s\n",
		       ++unit_n, why);
		return;
	}
	for (int i = 0; i < 2; i++) {
		int fds = unit_fds(), rc;

		fail_call(calls[i], 0, errs[i]);
		rc = feature_probe_uprobe_multi(FEATURE_UPROBE_MULTI, why, sizeof(why));
		UNIT_TRUE(plan.hit, i ? "the planned fork failure happened"
				      : "the planned pipe2 failure happened");
		plan.call = NULL;
		UNIT_EQ_INT(rc, -errs[i], i ? "uprobe_multi probe, fork fails: -EAGAIN"
					    : "uprobe_multi probe, its pipe fails: -EMFILE");
		UNIT_EQ_INT(unit_fds(), fds, "no descriptor left by the failed probe");
		UNIT_EQ_INT(waitpid(-1, NULL, WNOHANG), -1, "no child started");
	}
}

/* install_check_pid with a site's file that cannot be stat'ed: its errno,
 * not a guess from an unread stat of whether the process maps it. */
static void test_install_pid_stat(void)
{
	struct site_set ss = { 0 };
	int rc;

	UNIT_EQ_INT(unit_site_add(&ss, "/proc/self/exe", 0x40), 0, "a site in our own executable");
	fail_call("stat", 0, EACCES);
	unit_capture(1);
	rc = install_check_pid(&ss, 0, getpid());
	unit_capture(0);
	UNIT_TRUE(plan.hit, "the planned stat failure happened");
	plan.call = NULL;
	UNIT_EQ_INT(rc, -EACCES, "install_check_pid, the site's file cannot be stat'ed: -EACCES");
	site_set_free(&ss);
}

/* A return probe on a PMU whose retprobe format cannot be read: refused,
 * no perf event opened with a bit nothing was read into. */
static void test_retprobe_format(void)
{
	int fds = unit_fds(), fd;

	fail_call("open", 0, ENOENT);
	plan.suffix = "/format/retprobe";
	fd = uprobe_pmu_open("/proc/self/exe", 0x40, 0, 1, getpid());
	UNIT_TRUE(plan.hit, "the planned open of format/retprobe failed");
	plan.call = NULL;
	UNIT_EQ_INT(fd, -EOPNOTSUPP, "uprobe_pmu_open of a return probe, no retprobe format: -EOPNOTSUPP");
	if (fd >= 0)
		close(fd);
	UNIT_EQ_INT(unit_fds(), fds, "no perf event left open");
}

/* The same for a semaphore's field (format/ref_ctr_offset) read while
 * opening, after the registry said the PMU has it: its error, never a
 * semaphore shifted by a bit it could not read. */
static void test_ref_ctr_format(void)
{
	int fds = unit_fds(), fd;

	if (!feature_has(FEATURE_REF_CTR_OFFSET, NULL, 0)) {
		UNIT_TRUE(1, "ref_ctr_offset format # SKIP the PMU has no ref_ctr_offset");
		return;
	}
	fail_call("open", 0, ENOENT);
	plan.suffix = "/format/ref_ctr_offset";
	unit_quiet(1);
	fd = uprobe_pmu_open("/proc/self/exe", 0x40, 0x80, 0, getpid());
	unit_quiet(0);
	UNIT_TRUE(plan.hit, "the planned open of format/ref_ctr_offset failed");
	plan.call = NULL;
	UNIT_EQ_INT(fd, -ENOENT, "uprobe_pmu_open with a semaphore, its format field missing: -ENOENT, the reason");
	if (fd >= 0)
		close(fd);
	UNIT_EQ_INT(unit_fds(), fds, "no perf event left open");
}

/* perf_event_open answers fd 0 when stdin is closed: that is the event,
 * whatever errno held before the call (never a stale -errno). */
static void test_pmu_fd0(void)
{
	uint64_t off;
	int saved, fd;

	UNIT_EQ_INT(procmaps_self_offset((const void *)test_pmu_fd0, &off), 0,
		    "the file offset of one of our own functions");
	unit_quiet(1);
	saved = unit_fd0_free();
	errno = EAGAIN;
	fd = uprobe_pmu_open("/proc/self/exe", off, 0, 0, getpid());
	if (fd >= 0)
		close(fd);
	unit_fd0_back(saved);
	unit_quiet(0);
	UNIT_EQ_INT(fd, 0, "uprobe_pmu_open with fd 0 free and errno EAGAIN left from before: the event, at fd 0");
}

/* The nop5 probe's child cannot be waited for: the probe could not run
 * (its errno), never an answer read from a child it did not see end. */
static void test_optimize_wait(void)
{
	char why[256];
	int base = feature_probe_uprobe_optimize(FEATURE_UPROBE_OPTIMIZE, why, sizeof(why)), rc;

	fail_call("waitpid", 0, ECHILD);
	rc = feature_probe_uprobe_optimize(FEATURE_UPROBE_OPTIMIZE, why, sizeof(why));
	UNIT_TRUE(plan.hit, "the planned waitpid failure happened");
	plan.call = NULL;
	if (!feature_has(FEATURE_UPROBE_PMU, why, sizeof(why))) {
		printf("ok %d - uprobe_optimize probe, its child not waited for # SKIP %s\n",
		       ++unit_n, why);
	} else {
		UNIT_TRUE(base >= 0, "uprobe_optimize probe: it runs where the uprobe PMU is");
		UNIT_EQ_INT(rc, -ECHILD, "uprobe_optimize probe, its child not waited for: -ECHILD");
	}
	UNIT_EQ_INT(waitpid(-1, NULL, WNOHANG), -1, "no child left");
}

/* The feature probes that find their own code in /proc/self/maps, with
 * that file unreadable: the probe could not run (its errno), never an
 * answer about the kernel from an offset nothing was read into. */
static void test_probes_without_maps(void)
{
	char why[256];

	fail_call("fopen", 0, EACCES);
	plan.suffix = "/proc/self/maps";
	UNIT_EQ_INT(feature_probe_uprobe_multi(FEATURE_UPROBE_MULTI, why, sizeof(why)), -EACCES,
		    "uprobe_multi probe, /proc/self/maps unreadable: -EACCES");
	UNIT_TRUE(plan.hit, "the planned fopen failure happened");
	fail_call("fopen", 0, EACCES);
	plan.suffix = "/proc/self/maps";
	UNIT_EQ_INT(feature_probe_uprobe_optimize(FEATURE_UPROBE_OPTIMIZE, why, sizeof(why)), -EACCES,
		    "uprobe_optimize probe, /proc/self/maps unreadable: -EACCES");
	UNIT_TRUE(plan.hit, "the planned fopen failure happened");
	plan.call = NULL;
}

/* A PMU format field that cannot be read: its errno, nothing parsed
 * from a buffer nothing was read into. */
static void test_pmu_format(void)
{
	int lo = -1;

	UNIT_EQ_INT(uprobe_pmu_bit("pc_no_such_field", &lo), -ENOENT,
		    "uprobe_pmu_bit of a field the PMU does not have: -ENOENT");
	fail_call("open", 0, EACCES);
	UNIT_EQ_INT(uprobe_pmu_bit("retprobe", &lo), -EACCES,
		    "uprobe_pmu_bit, the format file not readable: -EACCES");
	UNIT_TRUE(plan.hit, "the planned open failure happened");
	plan.call = NULL;
	UNIT_EQ_INT(lo, -1, "nothing parsed");
	/* A format file that reads empty: an unexpected format, quoted as
	 * read (nothing), not a buffer nothing was read into. */
	fail_read_of("/format/retprobe", 0);
	unit_capture(1);
	UNIT_EQ_INT(uprobe_pmu_bit("retprobe", &lo), -EINVAL,
		    "uprobe_pmu_bit, the format file empty: -EINVAL");
	unit_capture(0);
	UNIT_TRUE(plan.hit, "the planned empty read happened");
	plan.call = NULL;
	UNIT_TRUE(strstr(unit_captured, "unexpected format ''") != NULL,
		  "its message quotes the empty format");
	UNIT_EQ_INT(lo, -1, "nothing parsed from it");
	/* The PMU's type file that fails to read: its error, never a type
	 * parsed from what the buffer held. */
	fail_read_of("/uprobe/type", EIO);
	UNIT_EQ_INT(uprobe_pmu_type(), -EIO, "uprobe_pmu_type, the type file's read failing: -EIO");
	UNIT_TRUE(plan.hit, "the planned read failure happened");
	plan.call = NULL;	/* ... or that reads empty: refused, never type 0 (a hardware event). */
	fail_read_of("/uprobe/type", 0);
	unit_capture(1);
	UNIT_EQ_INT(uprobe_pmu_type(), -EINVAL, "uprobe_pmu_type, the type file empty: -EINVAL");
	unit_capture(0);
	UNIT_TRUE(plan.hit, "the planned empty read happened");
	plan.call = NULL;
	UNIT_TRUE(strstr(unit_captured, "unexpected type ''") != NULL,
		  "its message quotes the empty type");
	/* ... or that says 0 (PERF_TYPE_HARDWARE): refused too. */
	fail_read_of("/uprobe/type", 0);
	plan.text = "0\n";
	unit_capture(1);
	UNIT_EQ_INT(uprobe_pmu_type(), -EINVAL, "uprobe_pmu_type, the type file says 0: -EINVAL");
	unit_capture(0);
	UNIT_TRUE(plan.hit, "the planned read of '0' happened");
	plan.call = NULL;
	fail_read_of("/uprobe/type", 0);
	plan.text = "9\n";
	UNIT_EQ_INT(uprobe_pmu_type(), 9, "... and one that says 9: type 9");
	plan.call = NULL;
}

/*
 * follow_start with descendants (--follow) reads /proc for every
 * process's parent: a /proc it cannot open (EMFILE: out of descriptors)
 * is its error, never an empty process table (descendants then never
 * followed, nothing said).
 */
static void test_follow_proc_unopened(void)
{
	struct probe_req req;
	struct follow_opts fo = { .fo_descendants = 1, .fo_attach_pid = -1,
				  .fo_reqs = &req, .fo_nreqs = 1 };
	struct session_opts so = { .so_filter_pids = 1 };
	struct site_set ss = { 0 };
	struct pc_session *s = NULL;
	struct follow *f = NULL;
	int rc;

	if (probe_req_parse("usdt:*:prov:name", &req)) {
		UNIT_TRUE(0, "follow: a '*' probe");
		return;
	}
	if (follow_open(&fo, &ss, &f) == 0) {
		so.so_progs = follow_progs(f);
		so.so_ctl = follow_ctl;
		so.so_ctl_ctx = f;
	}
	if (!f || session_open(&so, &s)) {
		UNIT_TRUE(0, "follow: a follow and its session");
	} else {
		fail_call("opendir", 0, EMFILE);
		unit_quiet(1);
		rc = follow_start(f, s, getpid());
		unit_quiet(0);
		UNIT_TRUE(plan.hit, "the planned opendir of /proc happened");
		plan.call = NULL;
		UNIT_EQ_INT(rc, -EMFILE, "follow_start, /proc not opened: -EMFILE");
	}
	follow_stop(f);
	session_close(s);
	follow_close(f);
	probe_req_free(&req);
	site_set_free(&ss);
}

/*
 * The install check maps each object it reads: an object whose fstat
 * fails (ENOMEM) after the open is the error, and its descriptor is
 * closed, also when it is descriptor 0 (a tracer started with stdin
 * closed).
 */
/*
 * /proc/PID/maps whose read fails part way (a stream that gives its
 * lines, then -1 with the errno a read of /proc can fail with): a
 * process gone meanwhile (ESRCH) is -ESRCH, any other read error -EIO
 * and said, never the lines read so far taken for the whole file.
 */
struct rd_cookie {
	const char *text;
	size_t off;
	int err;
};

static ssize_t rd_read(void *c, char *buf, size_t n)
{
	struct rd_cookie *k = c;
	size_t left = strlen(k->text) - k->off;

	if (!left) {
		errno = k->err;
		return -1;
	}
	n = n < left ? n : left;
	memcpy(buf, k->text + k->off, n);
	k->off += n;
	return (ssize_t)n;
}

static int maps_read_failing(int err, struct pm_objects *out)
{
	static const char text[] =
		"00400000-00401000 r-xp 00000000 08:01 1234 /usr/bin/fx\n";
	struct rd_cookie k = { text, 0, err };
	cookie_io_functions_t io = { .read = rd_read };
	FILE *f = fopencookie(&k, "r", io);
	int rc;

	if (!f)
		return -ENOMEM;
	unit_capture(1);
	rc = procmaps_parse(f, 1, 0, "maps", out);
	unit_capture(0);
	fclose(f);
	return rc;
}

static void test_procmaps_read_error(void)
{
	struct pm_objects out;

	UNIT_EQ_INT(maps_read_failing(ESRCH, &out), -ESRCH,
		    "maps read failing with ESRCH after a line: -ESRCH");
	UNIT_EQ_INT((int)out.po_n, 0, "... no object kept");
	UNIT_EQ_INT(maps_read_failing(EIO, &out), -EIO,
		    "maps read failing with EIO after a line: -EIO");
	UNIT_TRUE(strstr(unit_captured, "reading maps failed"), "... and said");
	UNIT_EQ_INT(maps_read_failing(EACCES, &out), -EIO,
		    "maps read failing with EACCES after a line: -EIO");
	UNIT_EQ_INT(maps_read_failing(0, &out) , -EIO,
		    "maps read failing with no errno after a line: -EIO");
}

/*
 * The event ring's wait failing: a signal (EINTR) is no error, the trace
 * goes on; any other failure (EBADF, EINVAL) is session_poll's error,
 * which ends the trace with it, never a quiet "no events".
 */
static void test_session_poll_fails(void)
{
	struct session_opts so = { 0 };
	struct pc_session *s = NULL;

	if (session_open(&so, &s)) {
		UNIT_TRUE(0, "poll: a session");
		return;
	}
	UNIT_EQ_INT(session_poll(s, 0), 0, "poll: nothing to read: 0 events");
	fail_call("epoll_wait", 0, EINTR);
	UNIT_EQ_INT(session_poll(s, 0), 0, "poll: wait interrupted (EINTR): 0 events, no error");
	UNIT_TRUE(plan.hit, "... the planned epoll_wait failed");
	fail_call("epoll_wait", 0, EBADF);
	UNIT_EQ_INT(session_poll(s, 0), -EBADF, "poll: wait failing with EBADF: -EBADF");
	UNIT_TRUE(plan.hit, "... the planned epoll_wait failed");
	fail_call("epoll_wait", 0, EINVAL);
	UNIT_EQ_INT(session_poll(s, 0), -EINVAL, "poll: wait failing with EINVAL: -EINVAL");
	plan.call = NULL;
	UNIT_EQ_INT(session_poll(s, 0), 0, "poll: afterwards 0 events again");
	session_close(s);
}

/* proc_stat_parse on lines no kernel writes: a parent that is not a
 * number is -EINVAL, never a process with an unset parent. */
static void test_proc_stat_malformed(void)
{
	static const char tail[] = " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 424242 19 20\n";
	char line[256];
	struct proc_stat ps;

	snprintf(line, sizeof(line), "77 (a b) S 1%s", tail);
	UNIT_EQ_INT(proc_stat_parse(line, &ps), 0, "a stat line: parsed");
	UNIT_TRUE(ps.ps_ppid == 1 && ps.ps_start == 424242 && ps.ps_state == 'S',
		  "its state, parent and start time");
	snprintf(line, sizeof(line), "77 (a b) S x%s", tail);
	UNIT_EQ_INT(proc_stat_parse(line, &ps), -EINVAL, "a parent that is not a number: -EINVAL");
	UNIT_EQ_INT(proc_stat_parse("77 (a b) S", &ps), -EINVAL, "no parent at all: -EINVAL");
}

static void test_install_fstat_fd0(void)
{
	struct site_set ss = { 0 };
	int saved, rc, fds;

	unit_site_add(&ss, "/proc/self/exe", 0x40);
	unit_quiet(1);          /* first: its dup of stderr must not take 0 */
	saved = unit_fd0_free();
	fail_call("fstat", 0, ENOMEM);
	rc = install_check_here(&ss, 0, NULL);
	unit_quiet(0);
	UNIT_TRUE(plan.hit, "the planned fstat happened");
	plan.call = NULL;
	UNIT_EQ_INT(rc, -ENOMEM, "install check, fstat failing: -ENOMEM");
	UNIT_TRUE(fcntl(0, F_GETFD) < 0, "its descriptor (0) closed");
	unit_fd0_back(saved);
	/* The same with descriptor 0 taken: the file's lands above it. */
	fds = unit_fds();
	fail_call("fstat", 0, EIO);
	unit_quiet(1);
	rc = install_check_here(&ss, 0, NULL);
	unit_quiet(0);
	UNIT_TRUE(plan.hit, "the planned fstat happened");
	plan.call = NULL;
	UNIT_EQ_INT(rc, -EIO, "install check, fstat failing: -EIO");
	UNIT_EQ_INT(unit_fds(), fds, "its descriptor (above 2) closed");
	site_set_free(&ss);
}

/*
 * install_check_pid for a process that has not mapped the site's object
 * (a child that exec'd sleep has not mapped this test binary): it opens a
 * perf event for our own pid at the site, checks, and closes the event,
 * also one at descriptor 0 (stdin closed).
 */
static void test_install_pid_fd0(void)
{
	struct site_set ss = { 0 };
	uint64_t off;
	int saved, rc, open0, p[2];
	pid_t child;
	char c;

	UNIT_EQ_INT(procmaps_self_offset((const void *)test_install_pid_fd0, &off), 0,
		    "the file offset of one of our own functions");
	unit_site_add(&ss, "/proc/self/exe", off);
	if (pipe2(p, O_CLOEXEC))
		abort();
	child = fork();
	if (child == 0) {
		execl("/bin/sleep", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	/* End of file once the exec closed the child's end: its mm is
	 * sleep's, not a copy of ours. */
	UNIT_EQ_INT(read(p[0], &c, 1), 0, "the child exec'd");
	close(p[0]);
	unit_quiet(1);
	saved = unit_fd0_free();
	rc = install_check_pid(&ss, 0, child);
	open0 = fcntl(0, F_GETFD) >= 0;
	unit_fd0_back(saved);
	unit_quiet(0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	UNIT_EQ_INT(rc, 0, "install check of a site the process has not mapped: 0");
	UNIT_TRUE(!open0, "its perf event, at descriptor 0, closed");
	site_set_free(&ss);
}

/*
 * The ELF reader's first read, the identification bytes, failing (EIO)
 * or coming back empty (a file truncated under us): its errno, or "not an
 * ELF file", each said naming the file; nothing left open.
 */
static void test_elf_ident_read(void)
{
	struct elf_obj *eo = (struct elf_obj *)1;
	int fds = unit_fds(), rc;

	fail_call("pread", 0, EIO);
	unit_capture(1);
	rc = elf_obj_open("/proc/self/exe", 0, &eo);
	unit_capture(0);
	UNIT_TRUE(plan.hit, "the planned pread failure happened");
	plan.call = NULL;
	UNIT_EQ_INT(rc, -EIO, "elf_obj_open, the identification unreadable: -EIO");
	UNIT_TRUE(eo == NULL, "... no object");
	UNIT_TRUE(strstr(unit_captured, "'/proc/self/exe': read: Input/output error") != NULL,
		  "... said, naming the file and the error");
	fail_call("pread", 0, 0);
	unit_capture(1);
	rc = elf_obj_open("/proc/self/exe", 0, &eo);
	unit_capture(0);
	plan.call = NULL;
	UNIT_EQ_INT(rc, -ENOEXEC, "elf_obj_open, no identification read: -ENOEXEC");
	UNIT_TRUE(strstr(unit_captured, "'/proc/self/exe': not an ELF file") != NULL,
		  "... said as not an ELF file");
	UNIT_EQ_INT(unit_fds(), fds, "no descriptor left by either");
}

/* The x86 probes' children and our own path: a fork the system refuses
 * (EAGAIN: out of processes), a child that cannot be waited for, and a
 * /proc/self/exe that cannot be read are each the probe's error, never
 * a capability decided from nothing. */
static void test_x86_probes_fail(void)
{
	char why[256];

	fail_call("fork", 0, EAGAIN);
	UNIT_EQ_INT(feature_probe_x86_syscall(FEATURE_URETPROBE_SYSCALL, why, sizeof(why)), -EAGAIN,
		    "uretprobe_syscall, fork failing: -EAGAIN");
	UNIT_TRUE(plan.hit, "the planned fork failure happened");
	fail_call("waitpid", 0, ECHILD);
	UNIT_EQ_INT(feature_probe_x86_syscall(FEATURE_UPROBE_SYSCALL, why, sizeof(why)), -ECHILD,
		    "uprobe_syscall, its child not waited for: -ECHILD");
	UNIT_TRUE(plan.hit, "the planned waitpid failure happened");
	fail_call("readlink", 0, EACCES);
	UNIT_EQ_INT(feature_probe_x86_insn(FEATURE_PROBE_NOP10, why, sizeof(why)), -EACCES,
		    "probe_nop10, /proc/self/exe unreadable: -EACCES");
	UNIT_TRUE(plan.hit, "the planned readlink failure happened");
	plan.call = NULL;
	UNIT_EQ_INT(feature_probe_x86_insn(FEATURE_PROBE_DS_PREFIX, why, sizeof(why)) >= 0, 1,
		    "probe_ds_prefix with nothing failing: an answer");
}

/* sleepable_uprobe: its program refused (EPERM, as without CAP_BPF; any
 * refusal reads as the kernel lacking it) is "no" with the kernel's words
 * and what it needs; with nothing failing, an answer. */
static void test_sleepable_probe(void)
{
	char why[256];

	fail_call("bpf", 0, EPERM);
	UNIT_EQ_INT(feature_probe_sleepable(FEATURE_SLEEPABLE_UPROBE, why, sizeof(why)), 0,
		    "sleepable_uprobe, its program refused: no");
	UNIT_TRUE(plan.hit, "the planned bpf failure happened");
	UNIT_EQ_STR(why, "a sleepable kprobe-type program calling bpf_copy_from_user "
		    "did not load (Operation not permitted; Linux 5.19+)",
		    "... saying which program, the error and what it needs");
	plan.call = NULL;
	UNIT_TRUE(feature_probe_sleepable(FEATURE_SLEEPABLE_UPROBE, why, sizeof(why)) >= 0,
		  "sleepable_uprobe with nothing failing: an answer");
}

int main(void)
{
	if (calls_are_ours()) {
		test_sleepable_probe();
		test_proc_stat_read();
		test_proc_stat_parse();
		test_stash_record_write();
		test_tracefs_event_id();
		test_optimize_pipes();
		test_optimize_go();
		test_pmu_format();
		test_probes_without_maps();
		test_optimize_wait();
		test_install_pid_stat();
		test_retprobe_format();
		test_follow_proc_unopened();
		test_install_fstat_fd0();
		test_install_pid_fd0();
		test_umulti_child_fails();
		test_elf_ident_read();
		test_proc_stat_malformed();
		test_ref_ctr_format();
		test_pmu_fd0();
		test_x86_probes_fail();
		test_session_poll_fails();
		test_procmaps_read_error();
	}
	else
		UNIT_TRUE(1, "system call failures # SKIP open and read are not ours");
	return unit_done();
}
