/*
 * stash.c — the on-disk record of what each tracer made that outlives it.
 *
 * Why: a tracefs uprobe_events entry (attach_tracefs.c) stays in the
 * kernel after its creator dies, even by SIGKILL, and nothing in the
 * kernel says who made it.  So each tracer writes down, before creating
 * such a thing, what it is about to create, and crosses it out after
 * destroying it; `probecheck cleanup` (run at every probecheck start)
 * undoes what dead tracers wrote down.  Same idea as dtprobed's DOF stash
 * (seed 001): state on disk so a later process can clean up.
 *
 * Layout: one directory, root-only (0700, owned by us), holding one file
 * per tracer named PID-START (START = field 22 of /proc/PID/stat, clock
 * ticks after boot: pid reuse gives another name).  A record reads
 *
 *     probecheck-stash 1
 *     tracer 4242 81726354
 *     tracefs probecheck_4242_81726354/p_803_1a2b3_5519
 *
 * A tracer is alive when /proc/PID/stat exists, shows the same start time
 * and is not a zombie; everything else is dead.  Records are replaced
 * atomically (temporary file, fsync, rename, fsync of the directory) under
 * flock(2) on the directory, which also serialises concurrent cleanups.
 *
 * Trust: the directory is opened with O_NOFOLLOW and checked (a directory,
 * ours, mode 0700) and every later access is relative to that fd; records
 * are regular files of ours, checked line by line before anything is
 * undone; a name that does not fit the scheme (or would build a path with
 * "/" or "..") gets the whole record refused and left alone.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "log.h"
#include "procstat.h"
#include "stash.h"

#define STASH_MAGIC     "probecheck-stash"
#define STASH_MAX_SIZE  (16u << 20)     /* 65536 sites x ~80 bytes, with room */
#define PID_LIMIT       4194304         /* PID_MAX_LIMIT on 64-bit */


/* ---- processes --------------------------------------------------------- */

int stash_start_time(pid_t pid, unsigned long long *start)
{
	struct proc_stat ps;
	int err = proc_stat_read(pid, &ps);

	if (!err)
		*start = ps.ps_start;
	return err;
}

int stash_self(struct tracer_id *id)
{
	int err;

	id->ti_pid = getpid();
	err = stash_start_time(id->ti_pid, &id->ti_start);
	if (err)
		pc_err("stash: cannot read the start time of this process "
		       "(/proc/%d/stat): %s", id->ti_pid, pc_strerror(-err));
	return err;
}

int stash_tracer_alive(const struct tracer_id *id)
{
	struct proc_stat ps;
	int err = proc_stat_read(id->ti_pid, &ps);

	if (err == -ESRCH)
		return 0;
	if (err)
		return 1;       /* cannot tell: never clean up after the living */
	return ps.ps_start == id->ti_start && ps.ps_state != 'Z' &&
	       ps.ps_state != 'X';
}

const char *stash_dir(void)
{
	const char *d = getenv("PROBECHECK_STASH");

	return d && *d ? d : STASH_DEFAULT_DIR;
}

/* ---- the directory ----------------------------------------------------- */

/* Split @path into its parent (opened) and last component (@name). */
static int open_parent(const char *path, char *name, size_t len)
{
	char buf[4096], *slash;
	size_t n = strlen(path);
	int fd;

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n);
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (slash && !slash[1])
		return -EINVAL;         /* "/" itself */
	if (strlen(slash ? slash + 1 : buf) >= len)
		return -ENAMETOOLONG;
	strcpy(name, slash ? slash + 1 : buf);
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if (slash == buf)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	fd = open(slash ? buf : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The directory we opened must be a 0700 directory of ours. */
static int check_dir(int fd, const char *path, int created, int quiet)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (created && (st.st_mode & 07777) != 0700 && !fchmod(fd, 0700))
		st.st_mode = (st.st_mode & ~07777) | 0700;  /* umask */
	if (st.st_uid != geteuid()) {
		pc_err_unless(quiet, "stash: '%s': owned by uid %u, not by us (uid %u): "
		       "refusing it", path, st.st_uid, geteuid());
		return -EPERM;
	}
	if ((st.st_mode & 07777) != 0700) {
		pc_err_unless(quiet, "stash: '%s': mode %04o, expected 0700: refusing it",
		       path, st.st_mode & 07777);
		return -EPERM;
	}
	return 0;
}

/*
 * Open the stash directory; with @create make it first.  -ENOENT (quiet)
 * when it does not exist and !@create; other errors come with a message.
 */
static int stash_open_dir(int create, int quiet, int *out)
{
	const char *path = stash_dir();
	char name[256];
	struct stat st;
	int pfd, fd = -1, err = 0, created = 0;

	pfd = open_parent(path, name, sizeof(name));
	if (pfd < 0) {
		if (pfd != -ENOENT || create)
			pc_err_unless(quiet, "stash: '%s': %s", path, pc_strerror(-pfd));
		return pfd;
	}
	if (create && !mkdirat(pfd, name, 0700))
		created = 1;
	else if (create && errno != EEXIST)
		err = -errno;
	if (!err && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW))
		err = -errno;
	if (err) {
		if (err != -ENOENT || create)
			pc_err_unless(quiet, "stash: '%s': %s", path, pc_strerror(-err));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		pc_err_unless(quiet, "stash: '%s': %s: refusing it", path,
		       S_ISLNK(st.st_mode) ? "is a symbolic link"
					   : "is not a directory");
		err = S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
		goto out;
	}
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pc_err_unless(quiet, "stash: '%s': %s", path, pc_strerror(-err));
		goto out;
	}
	err = check_dir(fd, path, created, quiet);
out:
	close(pfd);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	*out = fd;
	return 0;
}

/* ---- records ----------------------------------------------------------- */

static void record_name(const struct tracer_id *id, char *buf, size_t len)
{
	snprintf(buf, len, "%d-%llu", (int)id->ti_pid, id->ti_start);
}

static const struct stash_kind *kind_of(const char *item, const char **arg)
{
	for (size_t i = 0; stash_kinds[i]; i++) {
		size_t n = strlen(stash_kinds[i]->sk_name);

		if (!strncmp(item, stash_kinds[i]->sk_name, n) && item[n] == ' ') {
			*arg = item + n + 1;
			return stash_kinds[i];
		}
	}
	return NULL;
}

/* Is @item something @owner may record?  0 or -EINVAL. */
static int item_check(const struct tracer_id *owner, const char *item)
{
	const char *arg;
	const struct stash_kind *k = kind_of(item, &arg);

	return k && !k->sk_check(owner, arg) ? 0 : -EINVAL;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= w;
	}
	return 0;
}

static int write_record(int dfd, const struct tracer_id *id, char *const *items,
			size_t n, const char *name)
{
	char tmp[300], head[128];
	int fd, err;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	if (unlinkat(dfd, tmp, 0) && errno != ENOENT)
		return -errno;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	snprintf(head, sizeof(head), STASH_MAGIC " %d\ntracer %d %llu\n",
		 STASH_VERSION, (int)id->ti_pid, id->ti_start);
	err = write_all(fd, head, strlen(head));
	for (size_t i = 0; i < n && !err; i++) {
		err = write_all(fd, items[i], strlen(items[i]));
		if (!err)
			err = write_all(fd, "\n", 1);
	}
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(dfd, tmp, dfd, name))
		err = -errno;
	if (err)
		unlinkat(dfd, tmp, 0);
	return err;
}

int stash_record_write(const struct tracer_id *id, char *const *items, size_t n)
{
	char name[64];
	int dfd, err = 0;

	for (size_t i = 0; i < n; i++) {
		if (item_check(id, items[i])) {
			pc_err("stash: refusing to record '%s': not a name of "
			       "this tracer's scheme", items[i]);
			return -EINVAL;
		}
	}
	/* Nothing to delete in a directory that does not exist. */
	err = stash_open_dir(n > 0, 0, &dfd);
	if (err)
		return err == -ENOENT && !n ? 0 : err;
	record_name(id, name, sizeof(name));
	flock(dfd, LOCK_EX);
	if (n)
		err = write_record(dfd, id, items, n, name);
	else if (unlinkat(dfd, name, 0) && errno != ENOENT)
		err = -errno;
	if (!err && fsync(dfd))
		err = -errno;
	close(dfd);     /* drops the lock */
	if (err)
		pc_err("stash: '%s/%s': %s", stash_dir(), name, pc_strerror(-err));
	return err;
}

/* ---- cleanup ----------------------------------------------------------- */

int stash_name_parse(const char *name, struct tracer_id *id, int *tmp)
{
	unsigned long long pid, start;
	char canon[80];

	*tmp = name[0] == '.';
	if (sscanf(name + *tmp, "%llu-%llu", &pid, &start) != 2 || pid == 0 ||
	    pid > PID_LIMIT)
		return -EINVAL;
	id->ti_pid = pid;
	id->ti_start = start;
	/* Only what write_record() writes: no signs, spaces, zeros, suffixes. */
	snprintf(canon, sizeof(canon), "%s%d-%llu%s", *tmp ? "." : "",
		 (int)pid, start, *tmp ? ".tmp" : "");
	return strcmp(name, canon) ? -EINVAL : 0;
}

/* Read a record (a regular file of ours, not too big) NUL-terminated. */
static int read_record(int dfd, const char *name, char **out)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd, err = 0;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
		err = -EPERM;
	else if ((size_t)st.st_size > STASH_MAX_SIZE)
		err = -EFBIG;
	else if (!(buf = malloc(st.st_size + 1)))
		err = -ENOMEM;
	else if ((n = read(fd, buf, st.st_size)) != st.st_size)
		err = n < 0 ? -errno : -EIO;
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[st.st_size] = 0;
	*out = buf;
	return 0;
}

int stash_record_parse(char *buf, const struct tracer_id *id, char ***items,
		       size_t *n, const char **why)
{
	char *line, *save = buf, **v = NULL;
	unsigned long long pid, start;
	int version, used, lineno = 0, err = -EINVAL;
	size_t cap = 0;

	*n = 0;
	while ((line = strsep(&save, "\n")) != NULL) {
		if (!save && !*line)
			break;          /* after the final newline */
		lineno++;
		if (lineno == 1) {
			used = 0;
			if (sscanf(line, STASH_MAGIC " %d%n", &version, &used) != 1 ||
			    line[used] || version != STASH_VERSION) {
				*why = "not a version 1 record";
				goto bad;
			}
		} else if (lineno == 2) {
			used = 0;
			if (sscanf(line, "tracer %llu %llu%n", &pid, &start, &used) != 2 ||
			    line[used] || pid != (unsigned long long)id->ti_pid ||
			    start != id->ti_start) {
				*why = "its tracer line does not match its name";
				goto bad;
			}
		} else {
			if (item_check(id, line)) {
				*why = "an item that is not a name of its tracer's scheme";
				goto bad;
			}
			if (*n == cap) {
				char **nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

				if (!nv) {
					*why = "out of memory";
					err = -ENOMEM;
					goto bad;
				}
				v = nv;
			}
			v[(*n)++] = line;
		}
	}
	if (lineno < 2) {
		*why = "truncated";
		goto bad;
	}
	*items = v;
	return 0;
bad:
	free(v);
	return err;
}

struct cleanup_ctx {
	int cc_dfd;
	FILE *cc_out;
	const char *cc_prefix;
	int cc_quiet;
	int cc_err;             /* first problem */
	struct stash_report *cc_r;
};

static void say(struct cleanup_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One line on @out per thing removed, for the user to see. */
static void say(struct cleanup_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->cc_out)
		return;
	va_start(ap, fmt);
	fputs(c->cc_prefix, c->cc_out);
	vfprintf(c->cc_out, fmt, ap);
	fputc('\n', c->cc_out);
	va_end(ap);
}

static void problem(struct cleanup_ctx *c, int err, unsigned *count)
{
	(*count)++;
	if (!c->cc_err)
		c->cc_err = err;
}

/* Undo every item of a dead tracer's record, then remove the record. */
static void undo_record(struct cleanup_ctx *c, const char *name,
			const struct tracer_id *id)
{
	char *buf = NULL, **items = NULL;
	const char *why = NULL, *arg;
	size_t n = 0, failed = 0;
	int err;

	err = read_record(c->cc_dfd, name, &buf);
	if (err == -ENOENT)
		goto out;               /* another cleanup was faster */
	if (err)
		why = err == -EPERM ? "not a regular file of ours" : pc_strerror(-err);
	else
		err = stash_record_parse(buf, id, &items, &n, &why);
	if (err) {
		if (!c->cc_quiet)
			pc_err("stash: '%s/%s': %s: record refused, left alone",
			       stash_dir(), name, why);
		problem(c, err, &c->cc_r->sr_refused);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct stash_kind *k = kind_of(items[i], &arg);

		err = k->sk_undo(arg);
		if (err && err != -ENOENT) {
			if (!c->cc_quiet)
				pc_err("stash: '%s/%s': cannot remove %s: %s: "
				       "record kept", stash_dir(), name, items[i],
				       pc_strerror(-err));
			failed++;
			continue;
		}
		if (err)
			say(c, "%s %s was gone already", k->sk_name, arg);
		else
			say(c, "removed %s %s", k->sk_name, arg);
		c->cc_r->sr_items += !err;
	}
	if (failed) {
		problem(c, -EBUSY, &c->cc_r->sr_failed);
		goto out;
	}
	if (unlinkat(c->cc_dfd, name, 0) && errno != ENOENT) {
		problem(c, -errno, &c->cc_r->sr_failed);
		goto out;
	}
	c->cc_r->sr_removed++;
	say(c, "removed record %s/%s (tracer %d started at %llu is gone)",
	    stash_dir(), name, (int)id->ti_pid, id->ti_start);
out:
	free(items);
	free(buf);
}

static void cleanup_one(struct cleanup_ctx *c, const char *name)
{
	struct tracer_id id;
	int tmp;

	if (stash_name_parse(name, &id, &tmp)) {
		if (!c->cc_quiet)
			pc_err("stash: '%s/%s': not a record name: left alone",
			       stash_dir(), name);
		problem(c, -EINVAL, &c->cc_r->sr_refused);
		return;
	}
	if (stash_tracer_alive(&id)) {
		c->cc_r->sr_live++;
		return;
	}
	if (!tmp) {
		undo_record(c, name, &id);
		return;
	}
	/* An unfinished replacement: the record it replaced is what counts. */
	if (unlinkat(c->cc_dfd, name, 0) && errno != ENOENT)
		problem(c, -errno, &c->cc_r->sr_failed);
	else
		say(c, "removed unfinished record %s/%s", stash_dir(), name);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every name in the directory but . and .., sorted; -errno. */
static int list_dir(int dfd, char ***out, size_t *n)
{
	struct dirent *de;
	char **v = NULL, **nv;
	size_t cap = 0;
	int fd = dup(dfd), err = 0;
	DIR *d;

	*n = 0;
	if (fd < 0 || !(d = fdopendir(fd))) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[*n] = strdup(de->d_name))) {
			err = -ENOMEM;
			break;
		}
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_names);
	*out = v;
	return err;
}

int stash_cleanup(FILE *out, int quiet, struct stash_report *r)
{
	struct cleanup_ctx c = { .cc_out = out, .cc_quiet = quiet, .cc_r = r,
				 .cc_prefix = quiet ? "probecheck: cleanup: " : "" };
	char **names = NULL;
	size_t n = 0;
	int err;

	memset(r, 0, sizeof(*r));
	err = stash_open_dir(0, quiet, &c.cc_dfd);
	if (err)
		return err == -ENOENT ? 0 : err;
	flock(c.cc_dfd, LOCK_EX);
	err = list_dir(c.cc_dfd, &names, &n);
	for (size_t i = 0; i < n; i++) {
		if (!err)
			cleanup_one(&c, names[i]);
		free(names[i]);
	}
	free(names);
	close(c.cc_dfd);
	if (err) {
		if (!quiet)
			pc_err("stash: '%s': %s", stash_dir(), pc_strerror(-err));
		return err;
	}
	return c.cc_err;
}
