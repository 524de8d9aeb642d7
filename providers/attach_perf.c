/*
 * attach_perf.c — the perf attach mode: one fd-based uprobe (uprobe_pmu.c)
 * per site and a BPF link on it whose cookie is the site's index.
 *
 * Closing the link closes the perf event, which unregisters the uprobe and
 * drops the semaphore count it raised: a tracer that dies leaves nothing.
 * Each close waits for RCU grace periods under the kernel's event_mutex
 * (~0.1 s per site on 6.x, measured: 300 sites, 30 s), so closing from
 * several threads gains nothing; attach_multi.c is the fast path.
 */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "features.h"
#include "log.h"
#include "uprobe_pmu.h"

/* The registry's uprobe_pmu row (features_sys.c). */
/*
 * The PMU, the programs, and the PMU's permission for this caller.  That
 * last experiment registers and unregisters a uprobe (a grace period on
 * some kernels), so it runs only for a caller without CAP_SYS_ADMIN,
 * which every kernel's check accepts (privs.c).
 */
static int perf_caps(char *why, size_t len)
{
	if (!feature_has(FEATURE_UPROBE_PMU, why, len) ||
	    !feature_has(FEATURE_BPF_TRACING, why, len))
		return -EOPNOTSUPP;
	if (!privs_sys_admin() &&
	    !feature_has(FEATURE_PERF_UPROBE, why, len))
		return -EACCES;
	return 0;
}

/*
 * By place: map @st's place to @id in pc_places before its uprobe can
 * fire.  A uretprobe fires at the return address, not at its place, and
 * two sites at one place would share an id: both need the cookie.
 */
static int place_store(const struct attach_req *r, const struct site *st,
		       __u32 id, struct attach_link *l)
{
	int err;

	if (st->st_retprobe) {
		pc_err("uprobe: '%s' %s:%s: a return probe needs bpf_cookie "
		       "(Linux 5.15+): its hits are at the return address, not "
		       "its place", st->st_path, st->st_provider, st->st_name);
		return -EOPNOTSUPP;
	}
	/* The file as resolved (st_kdev, st_ino: a process may be gone by
	 * now, its /proc path with it). */
	l->al_place = (struct pc_place){ .pl_dev = st->st_kdev,
					 .pl_ino = st->st_ino,
					 .pl_off = st->st_off };
	if (bpf_map_update_elem(r->ar_places_fd, &l->al_place, &id, BPF_NOEXIST)) {
		err = -errno;
		if (err != -EEXIST)
			attach_site_error(st, err, PRIV_BPF);
		else
			pc_err("uprobe: '%s' offset 0x%llx (%s:%s): another site of "
			       "this tracer is at this place: telling them apart "
			       "needs bpf_cookie (Linux 5.15+)", st->st_path,
			       (unsigned long long)st->st_off, st->st_provider,
			       st->st_name);
		return err;
	}
	l->al_places_fd = r->ar_places_fd;
	return 0;
}

/* Attach @prog to perf event @fd of site @i; the link owns @fd once made. */
int attach_perf_link(const struct attach_req *r, size_t i, int fd,
		     void *priv)
{
	const struct site *st = &r->ar_ss->ss_v[i];
	LIBBPF_OPTS(bpf_perf_event_opts, opts);
	struct attach_link l = { .al_fd = -1, .al_priv = priv,
				 .al_places_fd = -1 };
	int err = 0;

	if (r->ar_places_fd >= 0)
		err = place_store(r, st, i + r->ar_cookie_add, &l);
	else
		opts.bpf_cookie = i + r->ar_cookie_add;
	if (!err) {
		l.al_link = bpf_program__attach_perf_event_opts(r->ar_prog, fd,
								&opts);
		if (!l.al_link) {
			err = -errno;
			pc_err("bpf: cannot attach to %s:%s in '%s': %s",
			       st->st_provider, st->st_name, st->st_path,
			       attach_site_reason(err, st, PRIV_BPF));
		}
	}
	if (!err)
		err = r->ar_push(r->ar_ctx, &l);
	if (err) {
		if (l.al_link)
			bpf_link__destroy(l.al_link);
		else
			close(fd);
		attach_place_forget(&l);
	}
	return err;
}

void attach_place_forget(struct attach_link *l)
{
	if (l->al_places_fd >= 0)
		bpf_map_delete_elem(l->al_places_fd, &l->al_place);
	l->al_places_fd = -1;
}

void attach_site_error(const struct site *st, int err, enum priv_op op)
{
	pc_err("uprobe: '%s' offset 0x%llx (%s:%s): %s", st->st_path,
	       (unsigned long long)st->st_off, st->st_provider, st->st_name,
	       attach_site_reason(err, st, op));
}

static int perf_open(const struct attach_req *r)
{
	char why[400];
	int err = perf_caps(why, sizeof(why));

	if (err < 0) {
		pc_err("uprobe: %s", why);
		return err;
	}
	for (size_t i = r->ar_first; i < r->ar_ss->ss_n && !err; i++) {
		const struct site *st = &r->ar_ss->ss_v[i];
		int fd = uprobe_pmu_open(st->st_open_path, st->st_off,
					 st->st_sema_off, st->st_retprobe,
					 r->ar_pid);

		if (fd < 0) {
			attach_site_error(st, fd, PRIV_PERF_UPROBE);
			return fd;
		}
		err = attach_perf_link(r, i, fd, NULL);
	}
	return err;
}

static void perf_release(struct attach_link *v, size_t n)
{
	while (n-- > 0) {
		bpf_link__destroy(v[n].al_link);
		attach_place_forget(&v[n]);
	}
}

const struct attach_ops attach_perf_ops = {
	.ao_name = "perf",
	.ao_caps = perf_caps,
	.ao_open = perf_open,
	.ao_release = perf_release,
};
