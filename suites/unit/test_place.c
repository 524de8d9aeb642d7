/*
 * test_place.c — sites told apart by place (before 5.15, or
 * PROBECHECK_SITE_ID=place): a site's place entry lives exactly as long
 * as its attachment, within one session.
 *
 * By place, attaching a site first stores its (device, inode, offset) in
 * pc_places with BPF_NOEXIST, so a second site at one place is refused
 * ("telling them apart needs bpf_cookie").  A batch that fails must take
 * its entries back: otherwise the next attach of the same place in that
 * session (--follow or '*' meeting the object again) is refused as
 * "another site", though the first is gone.  No CLI run can show it: the
 * CLI closes the session after a failed attach.
 *
 * On fx_attachfail (attachfail.h) the batch fails at b_dup2, after
 * a_good's and b_dup1's places were stored; then a_good alone attaches
 * again in the same session.  The mode is forced before the first session (the decision is
 * made once per process), so this runs on every kernel with uprobes;
 * perf mode, the one by-place sites use.
 */
#define _GNU_SOURCE
#include "unit.h"
#include "attachfail.h"
#include <bpf/bpf.h>
#include "attach.h"
#include "pc.skel.h"
#include "session.h"

/* Entries in pc_places now, or -1. */
static int places(struct pc_session *s)
{
	int fd = bpf_map__fd(session_bpf(s)->maps.pc_places), n = 0;
	struct pc_place k, next;
	void *prev = NULL;

	if (fd < 0)
		return -1;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return errno == ENOENT ? n : -1;
}

static void test_again(pid_t pid, struct site_set *ss, const struct site *a,
		       const struct site *b)
{
	struct session_opts so = { .so_attach = &attach_perf_ops };
	struct pc_session *s = NULL;
	size_t n = ss->ss_n;
	char why[200];

	UNIT_EQ_INT(session_open(&so, &s), 0, "session_open (perf)");
	if (!s)
		return;
	UNIT_TRUE(attach_site_id(why, sizeof(why)) != ATTACH_ID_COOKIE,
		  "sites are told apart by place (PROBECHECK_SITE_ID=place)");
	UNIT_EQ_INT(places(s), 0, "a new session has no place entry");
	UNIT_EQ_INT(session_attach(s, ss, pid), -EINVAL,
		    "the whole set fails at b_dup2 (the kernel: EINVAL)");
	UNIT_EQ_INT(places(s), 0, "the failed batch took its place entries back");
	settled(pid, a);
	settled(pid, b);
	UNIT_EQ_INT(sema(pid, a), 0, "a_good undone: semaphore 0");
	UNIT_EQ_INT(sema(pid, b), 0, "b_dup1 undone: semaphore 0");
	ss->ss_n = 1;   /* a_good sorts first */
	UNIT_EQ_INT(session_attach(s, ss, pid), 0,
		    "a_good attaches again in the same session");
	ss->ss_n = n;
	UNIT_EQ_INT(places(s), 1, "one place entry: a_good's");
	UNIT_EQ_INT(sema(pid, a), 1, "a_good's semaphore reads 1");
	UNIT_EQ_INT(site_clean(pid, a), 0, "a_good's site holds an int3");
	session_close(s);
	settled(pid, a);
	UNIT_EQ_INT(sema(pid, a), 0, "0 after session_close");
	UNIT_EQ_INT(site_clean(pid, a), 1, "file byte after session_close");
	UNIT_EQ_INT(own_fds("anon_inode:[perf_event]"), 0, "no perf event left open");
}

/* The places map is never descriptor 0, even with stdin closed: libbpf
 * (1.0+, ensure_good_fd) moves descriptors 0-2 of its bpf() calls above
 * them, which makes attach_place_forget's `fd >= 0` and `fd > 0` the
 * same program (37770101 of draw fresh-20261207-d, listed equivalent on
 * this check).  And a forgotten place is gone from the map. */
static void test_forget_no_fd0(void)
{
	struct attach_link l = { .al_place = { 1, 2, 3 } };
	int saved = fcntl(0, F_DUPFD_CLOEXEC, 3), m;
	__u32 v = 7;

	close(0);
	m = bpf_map_create(BPF_MAP_TYPE_HASH, "pc_t0", sizeof(struct pc_place),
			   sizeof(__u32), 4, NULL);
	dup2(saved, 0);
	close(saved);
	UNIT_TRUE(m >= 3, "stdin closed: libbpf's map descriptor is still above 2");
	UNIT_EQ_INT(bpf_map_update_elem(m, &l.al_place, &v, BPF_NOEXIST), 0,
		    "a place stored");
	l.al_places_fd = m;
	attach_place_forget(&l);
	UNIT_TRUE(bpf_map_lookup_elem(m, &l.al_place, &v) && errno == ENOENT,
		  "forgotten: the place is gone from the map");
	UNIT_EQ_INT(l.al_places_fd, -1, "the link holds no map any more");
	if (m >= 0)
		close(m);
}

int main(void)
{
	struct site_set ss = { 0 };
	const struct site *a, *b;
	pid_t pid;

	setenv("PROBECHECK_SITE_ID", "place", 1);
	test_forget_no_fd0();
	if (fixture_up(&pid, &ss, &a, &b) == 0)
		test_again(pid, &ss, a, b);
	release_fixture(pid);
	site_set_free(&ss);
	return unit_done();
}
