/*
 * test_stash.c — tracefs entry names (providers/attach_tracefs.c) and the
 * stash records (providers/stash.c), in a scratch directory.
 *
 * Expected names are written out by hand from the scheme in
 * attach_tracefs.c; records are read back byte for byte.  Cleanup is run
 * on records of dead tracers whose entries do not exist: removing them
 * answers ENOENT (or uprobe_events is absent), which counts as done.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "unit.h"
#include "attach_tracefs.h"
#include "log.h"
#include "stash.h"

static char dir[256];

static void test_names(void)
{
	struct tracer_id id = { 4194304, ULLONG_MAX };
	char g[TFS_NAME_MAX], e[TFS_NAME_MAX];

	tfs_group_name(&id, g, sizeof(g));
	UNIT_EQ_STR(g, "probecheck_4194304_18446744073709551615", "longest group");
	UNIT_TRUE(strlen(g) < TFS_NAME_MAX, "group fits MAX_EVENT_NAME_LEN");
	tfs_event_name(0xfe00, 0x51016a, 0x5519, 0, 0, e, sizeof(e));
	UNIT_EQ_STR(e, "p_fe00_51016a_5519", "entry event");
	tfs_event_name(0xfe00, 0x51016a, 0x5519, 1, 2, e, sizeof(e));
	UNIT_EQ_STR(e, "r_fe00_51016a_5519_2", "return event, third at its place");
	tfs_event_name(UINT64_MAX, UINT64_MAX, UINT64_MAX, 1, 65535, e, sizeof(e));
	UNIT_EQ_INT(strlen(e), 58, "longest event: 58 characters");
	/* A buffer the suffix does not fit: cut inside it, nothing past it. */
	{
		char small[32];

		memset(small, 'X', sizeof(small));
		tfs_event_name(0xfe00, 0x51016a, 0x5519, 1, 65535, small, 21);
		UNIT_EQ_STR(small, "r_fe00_51016a_5519_6", "a 21-byte buffer: the suffix cut to fit");
		UNIT_TRUE(!memcmp(small + 21, "XXXXXXXXXXX", 11), "... and not a byte written past it");
	}
}

static void test_item_check(void)
{
	static const struct {
		const char *name;
		int ok;
	} cases[] = {
		{ "probecheck_42_7/p_fe00_51016a_5519", 1 },
		{ "probecheck_42_7/r_0_0_0", 1 },
		{ "probecheck_42_7/p_1_2_3_1", 1 },
		{ "probecheck_42_7/p_1_2_3_65535", 1 },
		{ "probecheck_42_8/p_1_2_3", 0 },       /* another tracer */
		{ "probecheck_4_27/p_1_2_3", 0 },
		{ "probecheck_42_7p_1_2_3", 0 },
		{ "fgn_42_7/p_1_2_3", 0 },
		{ "probecheck_42_7/P_1_2_3", 0 },
		{ "probecheck_42_7/x_1_2_3", 0 },
		{ "probecheck_42_7/p_01_2_3", 0 },      /* not canonical */
		{ "probecheck_42_7/p_A_2_3", 0 },
		{ "probecheck_42_7/p_+1_2_3", 0 },
		{ "probecheck_42_7/p_1_2", 0 },
		{ "probecheck_42_7/p_1_2_3_0", 0 },
		{ "probecheck_42_7/p_1_2_3_01", 0 },
		{ "probecheck_42_7/p_1_2_3_", 0 },
		{ "probecheck_42_7/p_1_2_3/../x", 0 },
		{ "probecheck_42_7/../../p_1_2_3", 0 },
		{ "probecheck_42_7/p_1_2_3 x", 0 },
		{ "probecheck_42_7/", 0 },
		{ "", 0 },
	};
	struct tracer_id id = { 42, 7 };
	char what[160];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(what, sizeof(what), "'%s' %s", cases[i].name,
			 cases[i].ok ? "accepted" : "refused");
		UNIT_EQ_INT(tfs_item_check(&id, cases[i].name),
			    cases[i].ok ? 0 : -EINVAL, what);
	}
}

static void test_liveness(void)
{
	struct tracer_id self, other;
	unsigned long long st;

	UNIT_EQ_INT(stash_self(&self), 0, "own start time");
	UNIT_EQ_INT(self.ti_pid, getpid(), "own pid");
	UNIT_EQ_INT(stash_tracer_alive(&self), 1, "we are alive");
	other = self;
	other.ti_start++;
	UNIT_EQ_INT(stash_tracer_alive(&other), 0, "same pid, other start: dead");
	other.ti_pid = 4194304 + 1;     /* above PID_MAX_LIMIT */
	UNIT_EQ_INT(stash_start_time(other.ti_pid, &st), -ESRCH, "no such pid");
	UNIT_EQ_INT(stash_tracer_alive(&other), 0, "no such pid: dead");
}

static char *slurp(const char *path)
{
	static char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = 0;
	return buf;
}

static void test_records(void)
{
	struct tracer_id id = { 42, 7 };
	char *items[] = { "tracefs probecheck_42_7/p_1_2_3",
			  "tracefs probecheck_42_7/r_1_2_3_1" };
	char *bad[] = { "tracefs probecheck_1_1/p_1_2_3" };
	char stash[300], path[400];
	struct stash_report r;
	struct stat sb;

	snprintf(stash, sizeof(stash), "%s/stash", dir);
	setenv("PROBECHECK_STASH", stash, 1);
	UNIT_EQ_STR(stash_dir(), stash, "PROBECHECK_STASH is the stash");
	UNIT_EQ_INT(stash_record_write(&id, NULL, 0), 0,
		    "deleting without a directory: nothing to do");
	UNIT_EQ_INT(stat(stash, &sb), -1, "... and no directory made");
	UNIT_EQ_INT(stash_record_write(&id, items, 2), 0, "record written");
	UNIT_EQ_INT(stat(stash, &sb), 0, "directory made");
	UNIT_EQ_INT(sb.st_mode & 07777, 0700, "directory 0700");
	snprintf(path, sizeof(path), "%s/42-7", stash);
	UNIT_EQ_STR(slurp(path), "probecheck-stash 1\ntracer 42 7\n"
		    "tracefs probecheck_42_7/p_1_2_3\n"
		    "tracefs probecheck_42_7/r_1_2_3_1\n", "record content");
	unit_quiet(1);
	UNIT_EQ_INT(stash_record_write(&id, bad, 1), -EINVAL,
		    "another tracer's entry is not recorded");
	unit_quiet(0);
	UNIT_EQ_STR(slurp(path) ? "present" : "gone", "present",
		    "a refused write keeps the record");

	/* 42 with start time 7 is not running: its record goes. */
	UNIT_EQ_INT(stash_cleanup(NULL, 1, &r), 0, "cleanup");
	UNIT_EQ_INT(r.sr_removed, 1, "one record removed");
	UNIT_EQ_INT(r.sr_refused + r.sr_failed + r.sr_live, 0, "nothing else");
	UNIT_EQ_STR(slurp(path) ? "present" : "gone", "gone", "record gone");

	UNIT_EQ_INT(stash_record_write(&id, items, 1), 0, "rewritten");
	UNIT_EQ_INT(stash_record_write(&id, NULL, 0), 0, "deleted");
	UNIT_EQ_STR(slurp(path) ? "present" : "gone", "gone", "deleted: gone");

	/* stdin closed: the stash's parent directory opens at fd 0. */
	{
		int saved, rc;

		unit_quiet(1);
		saved = unit_fd0_free();
		rc = stash_record_write(&id, items, 1);
		unit_fd0_back(saved);
		unit_quiet(0);
		UNIT_EQ_INT(rc, 0, "written with fd 0 free (the directory opened there)");
		UNIT_EQ_STR(slurp(path) ? "present" : "gone", "present", "... and there");
		UNIT_EQ_INT(stash_record_write(&id, NULL, 0), 0, "... deleted");
	}

	chmod(stash, 0755);
	unit_quiet(1);
	UNIT_EQ_INT(stash_record_write(&id, items, 1), -EPERM, "0755: refused");
	UNIT_EQ_INT(stash_cleanup(NULL, 0, &r), -EPERM, "0755: cleanup refused");
	rmdir(stash);
	UNIT_EQ_INT(symlink(dir, stash), 0, "stash as a symlink");
	UNIT_EQ_INT(stash_record_write(&id, items, 1), -ELOOP, "symlink: refused");
	unit_quiet(0);
	unlink(stash);
	unsetenv("PROBECHECK_STASH");
	UNIT_EQ_STR(stash_dir(), STASH_DEFAULT_DIR, "default stash");
}

/*
 * Record names: pid 1 is a pid (init's), 0 is not; PID_MAX_LIMIT
 * (4194304) is the largest pid the kernel hands out, one more is not a
 * pid, in a record's name or in an unfinished one's.
 */
static void test_name_parse(void)
{
	static const struct {
		const char *name;
		int ok, tmp;
		long long pid;
		unsigned long long start;
	} cases[] = {
		{ "1-5", 1, 0, 1, 5 },
		{ ".1-5.tmp", 1, 1, 1, 5 },
		{ "0-5", 0, 0, 0, 0 },
		{ ".0-5.tmp", 0, 1, 0, 0 },
		{ "4194304-7", 1, 0, 4194304, 7 },
		{ ".4194304-7.tmp", 1, 1, 4194304, 7 },
		{ "4194305-7", 0, 0, 0, 0 },
		{ ".4194305-7.tmp", 0, 1, 0, 0 },
	};
	char what[160];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tracer_id id = { -1, 0 };
		int tmp = -1;

		snprintf(what, sizeof(what), "name '%s' %s", cases[i].name,
			 cases[i].ok ? "parses" : "refused");
		UNIT_EQ_INT(stash_name_parse(cases[i].name, &id, &tmp),
			    cases[i].ok ? 0 : -EINVAL, what);
		snprintf(what, sizeof(what), "name '%s' tmp flag", cases[i].name);
		UNIT_EQ_INT(tmp, cases[i].tmp, what);
		if (!cases[i].ok)
			continue;
		snprintf(what, sizeof(what), "name '%s' pid", cases[i].name);
		UNIT_EQ_INT(id.ti_pid, cases[i].pid, what);
		snprintf(what, sizeof(what), "name '%s' start", cases[i].name);
		UNIT_EQ_INT(id.ti_start, cases[i].start, what);
	}
}

/*
 * A dead tracer's record of @size bytes (sparse: all NULs), cleaned up
 * quietly: cleanup's result, the first problem it met.
 */
static int cleanup_sized(const char *stash, off_t size, struct stash_report *r)
{
	char path[400];
	int fd, err;

	snprintf(path, sizeof(path), "%s/42-7", stash);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, size)) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	err = stash_cleanup(NULL, 1, r);
	unlink(path);
	return err;
}

/*
 * The size limit, STASH_MAX_SIZE (16 MiB), is the largest record read:
 * one of exactly that size is read and then refused for its content
 * (NULs: "truncated", -EINVAL); one byte more is not read at all
 * (-EFBIG).  The return value is the first problem, so it tells them apart.
 */
static void test_record_size(void)
{
	const off_t max = 16 << 20;
	char stash[300];
	struct stash_report r;

	snprintf(stash, sizeof(stash), "%s/stash", dir);
	setenv("PROBECHECK_STASH", stash, 1);
	if (mkdir(stash, 0700)) {
		perror(stash);
		UNIT_TRUE(0, "stash directory for the size checks");
		return;
	}
	UNIT_EQ_INT(cleanup_sized(stash, max, &r), -EINVAL,
		    "record of STASH_MAX_SIZE: read, refused for its content");
	UNIT_EQ_INT(r.sr_refused, 1, "... refused once");
	UNIT_EQ_INT(r.sr_removed + r.sr_failed + r.sr_live, 0, "... nothing else");
	UNIT_EQ_INT(cleanup_sized(stash, max + 1, &r), -EFBIG,
		    "record of STASH_MAX_SIZE + 1: too big to read");
	UNIT_EQ_INT(r.sr_refused, 1, "... refused once");
	UNIT_EQ_INT(cleanup_sized(stash, 0, &r), -EINVAL,
		    "empty record: read, refused (truncated)");
	rmdir(stash);
	unsetenv("PROBECHECK_STASH");
}

/*
 * stash_record_parse on every kind of record cleanup can meet: a record
 * with no item is whole (two lines; 941e84ff took it for truncated), one
 * line or none is truncated, and each wrong line is named.
 */
static void test_record_parse(void)
{
	static const struct {
		const char *text;
		int rc;
		int n;
		const char *why;
	} cases[] = {
		{ "probecheck-stash 1\ntracer 42 7\n", 0, 0, NULL },
		{ "probecheck-stash 1\ntracer 42 7", 0, 0, NULL },
		{ "probecheck-stash 1\ntracer 42 7\ntracefs probecheck_42_7/p_1_2_3\n", 0, 1, NULL },
		{ "probecheck-stash 1\n", -EINVAL, 0, "truncated" },
		{ "", -EINVAL, 0, "truncated" },
		{ "probecheck-stash 2\ntracer 42 7\n", -EINVAL, 0, "not a version 1 record" },
		{ "probecheck-stash 1 \ntracer 42 7\n", -EINVAL, 0, "not a version 1 record" },
		{ "probecheck-stash 1\ntracer 42 8\n", -EINVAL, 0,
		  "its tracer line does not match its name" },
		{ "probecheck-stash 1\ntracer 42 7 \n", -EINVAL, 0,
		  "its tracer line does not match its name" },
		{ "probecheck-stash 1\ntracer 42 7\n\n", -EINVAL, 0,
		  "an item that is not a name of its tracer's scheme" },
		{ "probecheck-stash 1\ntracer 42 7\ntracefs probecheck_1_1/p_1_2_3\n", -EINVAL, 0,
		  "an item that is not a name of its tracer's scheme" },
		/* The kind is a whole word followed by one space. */
		{ "probecheck-stash 1\ntracer 42 7\ntracefsx probecheck_42_7/p_1_2_3\n", -EINVAL, 0,
		  "an item that is not a name of its tracer's scheme" },
		{ "probecheck-stash 1\ntracer 42 7\ntracefs\tprobecheck_42_7/p_1_2_3\n", -EINVAL, 0,
		  "an item that is not a name of its tracer's scheme" },
		{ "probecheck-stash 1\ntracer 42 7\ntrace probecheck_42_7/p_1_2_3\n", -EINVAL, 0,
		  "an item that is not a name of its tracer's scheme" },
		{ "probecheck-stash 1\ntracer 42 7\ntracefs probecheck_42_7/p_1_2_3\n"
		  "tracefs probecheck_42_7/r_4_5_6_2\n", 0, 2, NULL },
	};
	struct tracer_id id = { 42, 7 };
	char buf[256], what[160];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = NULL;
		char **items = NULL;
		size_t n = 99;
		int rc;

		snprintf(buf, sizeof(buf), "%s", cases[i].text);
		rc = stash_record_parse(buf, &id, &items, &n, &why);
		snprintf(what, sizeof(what), "record %zu parsed: %d", i, cases[i].rc);
		UNIT_EQ_INT(rc, cases[i].rc, what);
		if (!rc) {
			snprintf(what, sizeof(what), "record %zu: %d items", i, cases[i].n);
			UNIT_EQ_INT((int)n, cases[i].n, what);
		} else {
			snprintf(what, sizeof(what), "record %zu: why", i);
			UNIT_EQ_STR(why ? why : "(none)", cases[i].why, what);
		}
		free(items);
	}
}

/* A record written in the stash @stash (and deleted), or refused with
 * @expect. */
static void write_in(const char *stash, const char *where, int expect)
{
	struct tracer_id id = { 42, 7 };
	char *items[] = { "tracefs probecheck_42_7/p_1_2_3" };
	char what[160], path[5000];
	int rc;

	setenv("PROBECHECK_STASH", stash, 1);
	unit_quiet(1);
	rc = stash_record_write(&id, items, 1);
	unit_quiet(0);
	snprintf(what, sizeof(what), "stash %s: %s", where, expect ? pc_strerror(-expect) : "written");
	UNIT_EQ_INT(rc, expect, what);
	if (!rc) {
		snprintf(path, sizeof(path), "%s/42-7", stash);
		UNIT_EQ_STR(slurp(path) ? "present" : "gone", "present", "... the record there");
		UNIT_EQ_INT(stash_record_write(&id, NULL, 0), 0, "... deleted");
	}
	unsetenv("PROBECHECK_STASH");
}

/*
 * The stash's own name at NAME_MAX: 254 and 255 characters are names a
 * directory can have, 256 is refused before any system call (a name
 * counted two characters long was refused at 254: 9beb7502).
 */
static void test_dir_name_limit(void)
{
	char stash[600], what[80];
	struct stat sb;

	for (int len = 254; len <= 256; len++) {
		int n = snprintf(stash, sizeof(stash), "%s/", dir);

		memset(stash + n, 's', len);
		stash[n + len] = 0;
		snprintf(what, sizeof(what), "named with %d characters", len);
		write_in(stash, what, len == 256 ? -ENAMETOOLONG : 0);
		if (len == 256)
			UNIT_EQ_INT(stat(stash, &sb), -1, "... and nothing made");
		else
			rmdir(stash);
	}
}

/*
 * The stash path split into parent and name (open_parent): trailing
 * slashes dropped, "/", "." and ".." refused, a relative name opened in
 * the working directory, a name right under "/", and the 4096-byte
 * bound: 4095 bytes is a path (its parent does not exist), 4096 refused
 * before it is copied.
 */
static void test_stash_paths(void)
{
	char stash[5000], cwd[PATH_MAX];
	struct stat sb;

	write_in("/", "\"/\"", -EINVAL);
	snprintf(stash, sizeof(stash), "%s/sub/..", dir);
	write_in(stash, "ending in \"..\"", -EINVAL);
	snprintf(stash, sizeof(stash), "%s/.", dir);
	write_in(stash, "ending in \".\"", -EINVAL);
	snprintf(stash, sizeof(stash), "%s/trail///", dir);
	write_in(stash, "with trailing slashes", 0);
	snprintf(stash, sizeof(stash), "%s/trail", dir);
	UNIT_EQ_INT(rmdir(stash), 0, "... made as 'trail'");

	UNIT_EQ_INT(getcwd(cwd, sizeof(cwd)) ? chdir(dir) : -1, 0, "chdir to the scratch directory");
	write_in("rel", "relative", 0);
	snprintf(stash, sizeof(stash), "%s/rel", dir);
	UNIT_EQ_INT(rmdir(stash), 0, "... made in the working directory");
	UNIT_EQ_INT(chdir(cwd), 0, "chdir back");

	snprintf(stash, sizeof(stash), "/test_stash.%d", (int)getpid());
	write_in(stash, "right under /", 0);
	UNIT_EQ_INT(rmdir(stash), 0, "... made under /");

	/* "/aaa.../aaa.../...": components of 199 characters, whose parent
	 * does not exist. */
	memset(stash, 'a', 4096);
	stash[0] = '/';
	for (int i = 200; i < 4096; i += 200)
		stash[i] = '/';
	stash[4095] = 0;
	write_in(stash, "of 4095 bytes", -ENOENT);
	stash[4095] = 'a';
	stash[4096] = 0;
	write_in(stash, "of 4096 bytes", -ENAMETOOLONG);
	stash[200] = 0;
	UNIT_EQ_INT(stat(stash, &sb), -1, "... and nothing made");
}

/*
 * Cleanup never creates the stash: under a parent that does not exist
 * there is nothing to do, and nothing is said; a parent that is a file is
 * an error, said (the two branches of one condition: 90099ae9 of draw
 * fresh-20261207-b swapped them).
 */
static void test_cleanup_no_parent(void)
{
	char stash[340], file[300];
	struct stash_report r;
	int fd, rc;

	snprintf(stash, sizeof(stash), "%s/none/stash", dir);
	setenv("PROBECHECK_STASH", stash, 1);
	unit_capture(1);
	rc = stash_cleanup(NULL, 0, &r);
	unit_capture(0);
	UNIT_EQ_INT(rc, 0, "cleanup, the stash's parent missing: nothing to do");
	UNIT_EQ_STR(unit_captured, "", "... and nothing said");
	snprintf(file, sizeof(file), "%s/file", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(stash, sizeof(stash), "%s/stash", file);
	setenv("PROBECHECK_STASH", stash, 1);
	unit_capture(1);
	rc = stash_cleanup(NULL, 0, &r);
	unit_capture(0);
	UNIT_EQ_INT(rc, -ENOTDIR, "cleanup, the stash's parent a file: -ENOTDIR");
	UNIT_TRUE(strstr(unit_captured, "Not a directory") != NULL, "... said");
	unlink(file);
	unsetenv("PROBECHECK_STASH");
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_stash.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_names();
	test_item_check();
	test_liveness();
	test_records();
	test_name_parse();
	test_record_size();
	test_dir_name_limit();
	test_record_parse();
	test_stash_paths();
	test_cleanup_no_parent();
	rmdir(dir);
	return unit_done();
}
