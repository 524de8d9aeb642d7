/*
 * attach_tracefs.c — attach through named tracefs uprobe_events entries.
 *
 * Mechanism (Linux 3.5): writing
 *     p:GROUP/EVENT PATH:0xOFF(0xREFCTR)
 * to /sys/kernel/tracing/uprobe_events creates a trace event for a uprobe
 * at file offset OFF of PATH ("r:" for a uretprobe; "(0xREFCTR)" is the
 * semaphore's file offset, Linux 4.20); events/GROUP/EVENT/id is then
 * opened with perf_event_open(PERF_TYPE_TRACEPOINT) and the BPF program is
 * attached to that perf event, exactly as in the perf mode (same cookie).
 * Unlike an fd-based uprobe (uprobe_pmu.c) the entry outlives the perf fd
 * and its creator — even a SIGKILLed one — until someone writes
 * "-:GROUP/EVENT".  Hence the stash (stash.c): every entry is recorded
 * before it is created and crossed out after it is removed, and
 * `probecheck cleanup` removes what dead tracers recorded.
 *
 * Names (the scheme of Oracle DTrace's dt_pid/[pr]_$dev_$ino_$addr, seed
 * 000): GROUP = probecheck_PID_START (this tracer, START from
 * /proc/PID/stat), EVENT = p_DEV_INO_OFF or r_DEV_INO_OFF in hex, with a
 * suffix _N (N = 1, 2, ...) for the N+1-th site of this tracer at the same
 * place.  The kernel keys uprobes by (inode, offset); the name adds the
 * tracer, so two tracers on one site each have an entry of their own and
 * neither can pull the other's from under it.  We remove only entries of
 * our own group, by exact name.  Both names fit the kernel's
 * MAX_EVENT_NAME_LEN (64): the group is at most 39 characters, the event
 * 58.
 *
 * Quirks, measured on 6.18:
 *  - writing a name that already exists does not fail: the kernel appends
 *    a second probe to the existing event (both then fire as one), so a
 *    name we did not make is refused, never written;
 *  - one BPF program can be attached only once per trace event (EEXIST
 *    from the perf link): two sites of one session at the same place
 *    (pid FUNC:entry and FUNC:0x0, each with its own cookie) cannot share
 *    an entry, so each site has its own (the _N suffix);
 *  - "-:GROUP/EVENT" fails with EBUSY while a perf event is open on the
 *    entry, so entries go after the BPF links and their perf fds; with
 *    ENOENT when it is gone already (fine for cleanup);
 *  - opening uprobe_events with O_TRUNC deletes every uprobe on the
 *    machine: we only ever open it O_WRONLY | O_APPEND;
 *  - the definition is split at white space by the kernel: a path with a
 *    blank or a control character is refused here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "attach_tracefs.h"
#include "features.h"
#include "log.h"
#include "privs.h"

/*
 * One named entry of this process, for one site.  [P] set by tfs_prepare,
 * [O] by tfs_perf_open, cleared by tfs_release.
 */
struct tfs_entry {
	char     te_name[2 * TFS_NAME_MAX];     /* [P] GROUP/EVENT */
	uint64_t te_dev, te_ino, te_off;        /* [P] the place, with te_ret */
	int      te_ret;                        /* [P] uretprobe */
	uint64_t te_sema;                       /* [P] ref_ctr offset, 0 none */
	int      te_used;                       /* [O] its site's perf event is open */
	int      te_created;                    /* in tracefs now */
	int      te_id;                         /* events/G/E/id, when created */
};

/* Every entry of this process: the stash record lists exactly these. */
static struct {
	struct tracer_id tf_self;
	char tf_group[TFS_NAME_MAX];
	struct tfs_entry **tf_v;
	size_t tf_n, tf_cap;
	int tf_init;
	int tf_recorded;        /* a record of ours is on disk */
} tfs;

static const char *tfs_root(void)
{
	static const char *root;

	if (!root)
		root = access("/sys/kernel/tracing/uprobe_events", F_OK) &&
		       !access("/sys/kernel/debug/tracing/uprobe_events", F_OK)
		       ? "/sys/kernel/debug/tracing" : "/sys/kernel/tracing";
	return root;
}

void tfs_group_name(const struct tracer_id *id, char *buf, size_t len)
{
	snprintf(buf, len, "probecheck_%d_%llu", (int)id->ti_pid, id->ti_start);
}

void tfs_event_name(uint64_t dev, uint64_t ino, uint64_t off, int ret,
		    unsigned seq, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%c_%llx_%llx_%llx", ret ? 'r' : 'p',
			 (unsigned long long)dev, (unsigned long long)ino,
			 (unsigned long long)off);

	if (seq && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, "_%u", seq);
}

int tfs_item_check(const struct tracer_id *owner, const char *name)
{
	char group[TFS_NAME_MAX], canon[TFS_NAME_MAX];
	/* Set, so that nothing below reads what a failed scan left. */
	unsigned long long dev = 0, ino = 0, off = 0;
	const char *event;
	unsigned seq = 0;
	size_t glen;
	char kind = 0;
	int used = 0, used2 = 0;

	tfs_group_name(owner, group, sizeof(group));
	glen = strlen(group);
	if (strncmp(name, group, glen) || name[glen] != '/')
		return -EINVAL;
	event = name + glen + 1;
	if (sscanf(event, "%c_%llx_%llx_%llx%n", &kind, &dev, &ino, &off,
		   &used) != 4 || (kind != 'p' && kind != 'r'))
		return -EINVAL;
	if (event[used] && (sscanf(event + used, "_%u%n", &seq, &used2) != 1 ||
			    !seq || event[used + used2]))
		return -EINVAL;
	/* Only what tfs_event_name writes: no sign, case or zero variants. */
	tfs_event_name(dev, ino, off, kind == 'r', seq, canon, sizeof(canon));
	return strcmp(event, canon) ? -EINVAL : 0;
}

/* Write one command to uprobe_events: 0 or -errno. */
static int uprobe_events_write(const char *cmd)
{
	char path[256];
	size_t len = strlen(cmd);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/uprobe_events", tfs_root());
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, cmd, len);
	if (n < 0)
		n = -errno;
	close(fd);
	return n < 0 ? (int)n : (size_t)n == len ? 0 : -EIO;
}

int tfs_item_remove(const char *name)
{
	char cmd[3 * TFS_NAME_MAX];

	if (strlen(name) >= 2 * TFS_NAME_MAX ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_/") != strlen(name))
		return -EINVAL;
	snprintf(cmd, sizeof(cmd), "-:%s\n", name);
	return uprobe_events_write(cmd);
}

static int tfs_init(void)
{
	char why[400];
	int err;

	if (tfs.tf_init)
		return 0;
	err = stash_self(&tfs.tf_self);
	if (err)
		return err;
	tfs_group_name(&tfs.tf_self, tfs.tf_group, sizeof(tfs.tf_group));
	if (!feature_has(FEATURE_TRACEFS, why, sizeof(why))) {
		pc_err("tracefs: %s; to mount it: mount -t tracefs nodev "
		       "/sys/kernel/tracing", why);
		return -EOPNOTSUPP;
	}
	tfs.tf_init = 1;
	return 0;
}

static int same_place(const struct tfs_entry *e, const struct stat *sb,
		      const struct site *st)
{
	return e->te_dev == sb->st_dev && e->te_ino == sb->st_ino &&
	       e->te_off == st->st_off;
}

/*
 * A new (unrecorded) entry for @st.  Sites at one place get _1, _2, ...;
 * one uprobe, one semaphore offset: the kernel would refuse a second one
 * (EINVAL), we say which.
 */
static struct tfs_entry *entry_add(const struct site *st, int *err)
{
	char event[TFS_NAME_MAX];
	struct tfs_entry *e, **v;
	unsigned seq = 0;
	struct stat sb;

	if (stat(st->st_open_path, &sb)) {
		*err = -errno;
		pc_err("tracefs: '%s': %s", st->st_path, pc_strerror(-*err));
		return NULL;
	}
	for (size_t i = 0; i < tfs.tf_n; i++) {
		e = tfs.tf_v[i];
		if (!same_place(e, &sb, st))
			continue;
		if (e->te_sema != st->st_sema_off) {
			pc_err("tracefs: '%s' offset 0x%llx: another site at this "
			       "address has semaphore offset 0x%llx, this one 0x%llx",
			       st->st_path, (unsigned long long)st->st_off,
			       (unsigned long long)e->te_sema,
			       (unsigned long long)st->st_sema_off);
			*err = -EINVAL;
			return NULL;
		}
		seq += e->te_ret == !!st->st_retprobe;
	}
	if (tfs.tf_n == tfs.tf_cap) {
		size_t cap = tfs.tf_cap ? 2 * tfs.tf_cap : 16;

		if (!(v = realloc(tfs.tf_v, cap * sizeof(*v)))) {
			*err = -ENOMEM;
			return NULL;
		}
		tfs.tf_v = v;
		tfs.tf_cap = cap;
	}
	if (!(e = calloc(1, sizeof(*e)))) {
		*err = -ENOMEM;
		return NULL;
	}
	e->te_dev = sb.st_dev;
	e->te_ino = sb.st_ino;
	e->te_off = st->st_off;
	e->te_ret = !!st->st_retprobe;
	e->te_sema = st->st_sema_off;
	tfs_event_name(e->te_dev, e->te_ino, e->te_off, e->te_ret, seq, event,
		       sizeof(event));
	snprintf(e->te_name, sizeof(e->te_name), "%s/%s", tfs.tf_group, event);
	tfs.tf_v[tfs.tf_n++] = e;
	return e;
}

/*
 * The recorded, still unused entry for @st: sites are prepared and then
 * opened in the same order, so the first unused one at its place is its.
 */
static struct tfs_entry *entry_find(const struct site *st, int *err)
{
	struct stat sb;

	if (stat(st->st_open_path, &sb)) {
		*err = -errno;
		pc_err("tracefs: '%s': %s", st->st_path, pc_strerror(-*err));
		return NULL;
	}
	for (size_t i = 0; i < tfs.tf_n; i++) {
		struct tfs_entry *e = tfs.tf_v[i];

		if (same_place(e, &sb, st) && e->te_ret == !!st->st_retprobe &&
		    !e->te_used)
			return e;
	}
	/* Never create what the stash does not list. */
	pc_err("tracefs: '%s' offset 0x%llx: no recorded entry (the file "
	       "changed since its sites were recorded?)", st->st_path,
	       (unsigned long long)st->st_off);
	*err = -ESTALE;
	return NULL;
}

/* The stash record: exactly the entries in the table. */
static int record_sync(void)
{
	char **items = NULL;
	int err;

	if (tfs.tf_n && !(items = calloc(tfs.tf_n, sizeof(*items))))
		return -ENOMEM;
	for (size_t i = 0; i < tfs.tf_n; i++) {
		if (asprintf(&items[i], "tracefs %s", tfs.tf_v[i]->te_name) < 0) {
			items[i] = NULL;
			err = -ENOMEM;
			goto out;
		}
	}
	err = stash_record_write(&tfs.tf_self, items, tfs.tf_n);
	if (!err)
		tfs.tf_recorded = tfs.tf_n != 0;
out:
	for (size_t i = 0; i < tfs.tf_n && items; i++)
		free(items[i]);
	free(items);
	return err;
}

int tfs_prepare(const struct site *v, size_t n)
{
	int err = tfs_init();
	size_t before = tfs.tf_n;

	for (size_t i = 0; i < n && !err; i++)
		if (!entry_add(&v[i], &err))
			break;
	if (!err && tfs.tf_n != before)
		err = record_sync();
	return err;
}

/* A definition the kernel will parse as we mean it: no blanks in PATH. */
static int entry_define(const struct site *st, const struct tfs_entry *e,
			char *cmd, size_t len)
{
	const unsigned char *p = (const unsigned char *)st->st_open_path;
	char sema[32] = "";
	int n;

	for (; *p; p++) {
		if (*p <= ' ' || *p == 0x7f) {
			pc_err("tracefs: '%s': a path with blanks or control "
			       "characters cannot be written to uprobe_events",
			       st->st_path);
			return -EINVAL;
		}
	}
	if (e->te_sema)
		snprintf(sema, sizeof(sema), "(0x%llx)",
			 (unsigned long long)e->te_sema);
	n = snprintf(cmd, len, "%c:%s %s:0x%llx%s\n", e->te_ret ? 'r' : 'p',
		     e->te_name, st->st_open_path,
		     (unsigned long long)e->te_off, sema);
	if (n < 0 || (size_t)n >= len) {
		pc_err("tracefs: '%s': path too long for uprobe_events",
		       st->st_path);
		return -ENAMETOOLONG;
	}
	return 0;
}

static int read_event_id(const struct tfs_entry *e, int *id)
{
	char path[512], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/events/%s/id", tfs_root(), e->te_name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = 0;
	*id = atoi(buf);
	return *id > 0 ? 0 : -EINVAL;
}

static int entry_create(const struct site *st, struct tfs_entry *e)
{
	char cmd[4096], path[512];
	int err;

	err = entry_define(st, e, cmd, sizeof(cmd));
	if (err)
		return err;
	/* It would be appended to, not refused: it must not exist. */
	snprintf(path, sizeof(path), "%s/events/%s", tfs_root(), e->te_name);
	if (!access(path, F_OK)) {
		pc_err("tracefs: '%s' exists already and is not ours to share",
		       e->te_name);
		return -EEXIST;
	}
	err = uprobe_events_write(cmd);
	if (err) {
		pc_err("tracefs: cannot create '%s' for '%s' offset 0x%llx: %s "
		       "(see %s/error_log)", e->te_name, st->st_path,
		       (unsigned long long)e->te_off, pc_strerror(-err), tfs_root());
		return err;
	}
	e->te_created = 1;
	err = read_event_id(e, &e->te_id);
	if (err)
		pc_err("tracefs: '%s/events/%s/id': %s", tfs_root(), e->te_name,
		       pc_strerror(-err));
	return err;
}

int tfs_perf_open(const struct site *st, pid_t pid, struct tfs_entry **ent)
{
	struct perf_event_attr attr;
	struct tfs_entry *e;
	int err = 0, fd;

	*ent = NULL;
	e = entry_find(st, &err);
	if (!e)
		return err;
	if (!e->te_created && (err = entry_create(st, e)))
		return err;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = e->te_id;
	attr.sample_period = 1;
	/* pid -1 needs a cpu; the BPF program still runs on every cpu. */
	fd = syscall(__NR_perf_event_open, &attr, pid, pid == -1 ? 0 : -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;  /* the entry stays until tfs_release syncs */
	e->te_used = 1;
	*ent = e;
	return fd;
}

/*
 * Remove entry @name, waiting out a perf event of ours that another
 * process still holds for a moment after we closed it: reading
 * /proc/PID/fdinfo/FD takes a reference to that file (the suites'
 * invariant checks read every process's, as lsof does), so the last
 * reference to a perf event we closed can be the reader's, and until it
 * drops the entry is EBUSY (a siteid run in make check left one behind,
 * 2026-12-06; a loop of `cat /proc/[0-9]*\/fdinfo/\*` delays our
 * releases by 14-26 ms, a `bpftool prog show` loop does not).  Up to
 * about 2 s in growing steps; then the error.
 */
static int entry_remove(const char *name)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	long waited_ms = 0;
	int err;

	while ((err = tfs_item_remove(name)) == -EBUSY && waited_ms < 2000) {
		nanosleep(&ts, NULL);
		waited_ms += ts.tv_nsec / 1000000;
		if (ts.tv_nsec < 200 * 1000 * 1000)
			ts.tv_nsec *= 2;
	}
	if (err == 0 && waited_ms)
		pc_dbg("tracefs: '%s' removed after %ld ms busy", name, waited_ms);
	return err;
}

/* Remove unused entries from tracefs, then from the table. */
static void entries_prune(void)
{
	size_t j = 0;
	int err;

	for (size_t i = 0; i < tfs.tf_n; i++) {
		struct tfs_entry *e = tfs.tf_v[i];

		if (e->te_used) {
			tfs.tf_v[j++] = e;
			continue;
		}
		err = e->te_created ? entry_remove(e->te_name) : 0;
		if (err && err != -ENOENT) {
			/* Kept in the record: `probecheck cleanup` retries. */
			pc_err("tracefs: cannot remove '%s': %s", e->te_name,
			       pc_strerror(-err));
			tfs.tf_v[j++] = e;
			continue;
		}
		free(e);
	}
	tfs.tf_n = j;
}

void tfs_release(struct tfs_entry **ents, size_t n)
{
	size_t before = tfs.tf_n;

	for (size_t i = 0; i < n; i++)
		if (ents[i])
			ents[i]->te_used = 0;
	if (!tfs.tf_init)
		return;
	entries_prune();
	if (tfs.tf_n != before && (tfs.tf_n || tfs.tf_recorded))
		record_sync();
	if (!tfs.tf_n) {
		free(tfs.tf_v);
		tfs.tf_v = NULL;
		tfs.tf_cap = 0;
	}
}

/* ---- the attach mode ---------------------------------------------------- */

/* The registry's tracefs row (features_sys.c): uprobe_events writable. */
static int tfs_caps(char *why, size_t len)
{
	if (!feature_has(FEATURE_TRACEFS, why, len) ||
	    !feature_has(FEATURE_BPF_TRACING, why, len))
		return -EOPNOTSUPP;
	/* A perf event of the caller's, only where the paranoid level can
	 * refuse it: with CAP_SYS_ADMIN no level does, and the experiment
	 * would be one more perf_event_open before the sites' (the faults
	 * suites stop the tracer at the Nth). */
	if (!privs_sys_admin() &&
	    !feature_has(FEATURE_PERF_EVENT, why, len))
		return -EACCES;
	return ATTACH_CAP_NAMED;
}

static int tfs_open(const struct attach_req *r)
{
	int err = 0;

	for (size_t i = r->ar_first; i < r->ar_ss->ss_n && !err; i++) {
		const struct site *st = &r->ar_ss->ss_v[i];
		struct tfs_entry *ent;
		int fd = tfs_perf_open(st, r->ar_pid, &ent);

		if (fd < 0) {
			attach_site_error(st, fd, PRIV_PERF_TRACEPOINT);
			return fd;
		}
		err = attach_perf_link(r, i, fd, ent);
		if (err)
			tfs_release(&ent, 1);
	}
	return err;
}

/* Entries only after every perf event is closed: an open one makes them
 * EBUSY. */
static void tfs_release_links(struct attach_link *v, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		struct tfs_entry *e = v[i].al_priv;

		bpf_link__destroy(v[i].al_link);
		attach_place_forget(&v[i]);
		if (e)
			e->te_used = 0;
	}
	/* One pass and one record rewrite for them all, with any entry
	 * created but never opened (a batch that failed half-way). */
	tfs_release(NULL, 0);
}

const struct attach_ops attach_tracefs_ops = {
	.ao_name = "tracefs",
	.ao_caps = tfs_caps,
	.ao_prepare = tfs_prepare,
	.ao_open = tfs_open,
	.ao_release = tfs_release_links,
};
