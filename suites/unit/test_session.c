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
#include "unit.h"
#include "attachfail.h"
#include "attach.h"
#include "features.h"
#include "log.h"
#include "session.h"
#include "unitsite.h"
#include "procmaps.h"

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
	settled(pid, a);
	UNIT_EQ_INT(sema(pid, a), 0, L("control: 0 after session_close"));
	UNIT_EQ_INT(site_clean(pid, a), 1, L("control: file byte after session_close"));
}

static void expect_clean(pid_t pid, const struct site *a, const struct site *b,
			 const char *when)
{
	char w[160];

	settled(pid, a);
	settled(pid, b);
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
	settled(pid, b);
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
	int rc;

	big.ss_v = malloc(big.ss_n * sizeof(*big.ss_v));
	if (!big.ss_v || session_open(&so, &s)) {
		UNIT_TRUE(0, L("limit: setup"));
		free(big.ss_v);
		return;
	}
	for (size_t i = 0; i < big.ss_n; i++)
		big.ss_v[i] = *a;       /* shallow: the strings stay a's */
	unit_capture(1);
	rc = session_attach_from(s, &big, 0, pid);
	unit_capture(0);
	UNIT_EQ_INT(rc, -E2BIG, L("limit: 65537 sites: -E2BIG"));
	UNIT_TRUE(strstr(unit_captured, "65537 sites exceed the limit of 65536"),
		  L("limit: the message names the count and the limit"));
	UNIT_EQ_INT(sema(pid, a), 0, L("limit: nothing attached (a_good's semaphore 0)"));
	/* Exactly the limit is allowed: 65536 sites, all attached before
	 * (first = ss_n: nothing new), is 0 and nothing said. */
	big.ss_n = PC_MAX_SPECS;
	unit_capture(1);
	rc = session_attach_from(s, &big, big.ss_n, pid);
	unit_capture(0);
	UNIT_EQ_INT(rc, 0, L("limit: 65536 sites, none new: 0"));
	UNIT_EQ_STR(unit_captured, "", L("limit: ... and nothing said"));
	session_close(s);
	free(big.ss_v);
}

/* Why @mode cannot run here, or NULL. */
static const char *mode_missing(void)
{
	static char why[256];

	return mode->ao_caps(why, sizeof(why)) < 0 ? why : NULL;
}

/* Descriptor 0 free when the site attaches (a tracer started with stdin
 * closed, used as a library): the mode's perf event or link may be 0,
 * which is a descriptor, not an error. */
static void fd0_attach(pid_t pid, struct site_set *ss, const struct site *a)
{
	struct session_opts so = { .so_attach = mode };
	struct pc_session *s = NULL;
	size_t keep = ss->ss_n;
	int rc, on = -1, saved, hold;

	/* 0 held while the session opens (its ring's epoll descriptor must
	 * not be the one freed), free when the site attaches. */
	saved = unit_fd0_free();
	hold = open("/dev/null", O_RDONLY | O_CLOEXEC);
	rc = session_open(&so, &s);
	if (hold >= 0)
		close(hold);
	if (!rc) {
		ss->ss_n = 1;
		rc = session_attach(s, ss, pid);
		on = sema(pid, a);
		ss->ss_n = keep;
	}
	session_close(s);
	/* Before 0 is given back: closed by the session, not by us. */
	int clean = sema(pid, a) == 0 && site_clean(pid, a) == 1 && fcntl(0, F_GETFD) < 0;

	unit_fd0_back(saved);
	UNIT_TRUE(hold == 0 && rc == 0 && on == 1 && clean,
		  L("with descriptor 0 free at attach: a_good attached, descriptor 0 closed by session_close"));
	if (rc || on != 1 || !clean)
		printf("#   rc %d, semaphore %d while attached, clean after %d\n", rc, on, clean);
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
	fd0_attach(pid, ss, a);
}

/*
 * A mode asked for by name and refused: its reason whole, as long as the
 * registry keeps one (255 characters and its NUL).  In a child, which
 * decides the multi row with feature_note before anything probes it.
 */
static void test_reason_whole(void)
{
	char reason[256];
	int st = -1;
	pid_t c;

	memset(reason, 'r', sizeof(reason) - 1);
	memcpy(reason, "no uprobe_multi: ", 17);
	reason[sizeof(reason) - 1] = 0;
	c = fork();
	if (c == 0) {
		struct session_opts so = { .so_attach = &attach_multi_ops };
		struct pc_session *s = NULL;
		const struct attach_ops *auto_mode;
		int rc;

		feature_note(FEATURE_UPROBE_MULTI, 0, reason);
		unit_capture(1);
		rc = session_open(&so, &s);
		unit_capture(0);
		if (rc != -EOPNOTSUPP)
			_exit(1);
		if (!strstr(unit_captured, reason))
			_exit(2);
		/* The automatic choice says the same reason (-v). */
		pc_log_verbose = 1;
		unit_capture(1);
		auto_mode = attach_choose(NULL, 0);
		unit_capture(0);
		_exit(auto_mode != &attach_perf_ops ? 3 : strstr(unit_captured, reason) ? 0 : 4);
	}
	if (c > 0)
		waitpid(c, &st, 0);
	UNIT_EQ_INT(st, 0, "--attach=multi refused with a 255-character reason: -EOPNOTSUPP, "
		    "the reason whole (exit 1: another error, 2: the reason cut); "
		    "the automatic choice perf, saying it whole (3: not perf, 4: cut)");
}

/*
 * session_ring_state, the words for an accounting mismatch: an empty
 * ring, then one record not yet read (its length at the consumer), then
 * the same after the positions passed the ring's size once (16 MiB of
 * records read): offsets are positions modulo the size.
 */
__attribute__((noinline, used)) void ring_target(void)
{
	__asm__ volatile("" ::: "memory");
}

static long ring_seen;

static void ring_count(void *ctx, const struct pc_event *ev, const char (*strs)[PC_STR_LEN],
		       const struct pc_ustack *stk)
{
	ring_seen++;
}

/* Lines of /proc/self/maps of BPF maps (anon_inode:bpf-map). */
static int bpf_mappings(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "bpf-map") != NULL;
	fclose(f);
	return n;
}

static void test_ring_state(void)
{
	struct session_opts so = { .so_event = ring_count };
	struct site_set ss = { 0 };
	struct pc_session *s = NULL;
	unsigned long cons = 0, prod = 0, cons2 = 0, prod2 = 0;
	unsigned len, len2;
	char st[256];
	uint64_t off;
	int maps;

	if (procmaps_self_offset((const void *)ring_target, &off) ||
	    unit_site_add(&ss, "/proc/self/exe", off) || session_open(&so, &s) ||
	    session_attach(s, &ss, -1)) {
		UNIT_TRUE(0, "ring state: a session attached to a function of ours");
		goto out;
	}
	UNIT_EQ_INT(session_ring_state(s, st, sizeof(st)), 0, "ring state of an empty ring: 0");
	UNIT_EQ_STR(st, "empty: consumer and producer at 0", "... says empty, both at 0");
	ring_target();
	maps = bpf_mappings();
	session_ring_state(s, st, sizeof(st));
	UNIT_EQ_INT(bpf_mappings(), maps, "ring state: the ring's pages it mapped are unmapped");
	UNIT_TRUE(sscanf(st, "consumer at %lu, producer at %lu, record there: len %u",
			 &cons, &prod, &len) == 3 && cons == 0 && len > 0 &&
		  prod == ((len + 8 + 7) & ~7UL), "one record unread: consumer 0, producer past its length and header");
	printf("# %s\n", st);
	UNIT_TRUE(session_drain(s) == 1 && ring_seen == 1, "... read: one event");
	if (ring_seen != 1 || !prod) {
		/* No record of the hit: the loop below would never end
		 * (a Debian 5.10 guest ran it for its whole 1800 s). */
		UNIT_TRUE(0, "ring state: the first hit gave one record");
		goto out;
	}
	while (ring_seen < 1 + (long)((16 << 20) / prod)) {
		long before = ring_seen;

		for (int i = 0; i < 1000; i++)
			ring_target();
		if (session_drain(s) < 0 || ring_seen == before) {
			UNIT_TRUE(0, "ring state: every round of 1000 hits gives records");
			goto out;
		}
	}
	ring_target();
	session_ring_state(s, st, sizeof(st));
	printf("# %s\n", st);
	UNIT_TRUE(sscanf(st, "consumer at %lu, producer at %lu, record there: len %u",
			 &cons2, &prod2, &len2) == 3 && cons2 >= (16UL << 20) &&
		  prod2 == cons2 + prod && len2 == len,
		  "after 16 MiB read, one record unread: its length at the consumer's offset");
	session_drain(s);
out:
	session_close(s);
	site_set_free(&ss);
}

int main(void)
{
	struct site_set ss = { 0 };
	const struct site *a, *b;
	pid_t pid;

	test_reason_whole();
	test_ring_state();
	if (fixture_up(&pid, &ss, &a, &b) == 0)
		for (size_t m = 0; (mode = attach_modes[m]); m++)
			test_mode(pid, &ss, a, b);
	mode = attach_modes[0];
	if (a)
		test_limit(pid, a);
	release_fixture(pid);
	site_set_free(&ss);
	return unit_done();
}
