/*
 * session.c — load the BPF program, attach sites, consume the ring.
 *
 * Three attach modes.  perf: each site gets its own fd-based uprobe
 * (uprobe_pmu.c) and a BPF link whose cookie is the site's index in the
 * site set; pc_specs[index] holds the site's operand spec.  tracefs: the
 * same with a named uprobe_events entry under each perf event
 * (attach_tracefs.c).  multi: one uprobe_multi link (attach_multi.c) per
 * object and direction (entry/return) of a batch, with the same cookies,
 * run by pc_usdt_multi.  Sites are attached in order; when one fails, all
 * links of the batch made so far are destroyed, which closes their fds,
 * which unregisters the uprobes and drops the semaphore counts they
 * raised (a uprobe_multi link that fails undoes its own uprobes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "pc.skel.h"
#include "session.h"
#include "install_check.h"
#include "uprobe_pmu.h"
#include "attach_tracefs.h"
#include "attach_multi.h"

/* One attachment: a libbpf link (perf, tracefs) or a uprobe_multi fd. */
struct sess_link {
	struct bpf_link *sl_link;
	int sl_fd;
};

struct pc_session {
	struct pc_bpf *ps_skel;
	struct ring_buffer *ps_ring;
	struct sess_link *ps_links;
	size_t ps_nlinks;
	uint64_t ps_delivered;
	session_event_fn ps_event;
	void *ps_ctx;
	session_ctl_fn ps_ctl;
	void *ps_ctl_ctx;
	int ps_mode;                    /* enum session_attach_mode, not AUTO */
	struct tfs_entry **ps_tfs;      /* per link: its tracefs entry, or NULL */
};

static int ring_event(void *ctx, void *data, size_t len)
{
	struct pc_session *s = ctx;
	const struct pc_event_str *es = data;

	if (len < sizeof(struct pc_event))
		return 0;
	if (es->ps_ev.pe_spec_id == PC_CTL_ID) {
		if (s->ps_ctl)
			s->ps_ctl(s->ps_ctl_ctx, &es->ps_ev);
		return 0;
	}
	s->ps_delivered++;
	s->ps_event(s->ps_ctx, &es->ps_ev,
		    len >= sizeof(*es) ? (const char (*)[PC_STR_LEN])es->ps_str
				       : NULL);
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG && !pc_log_verbose)
		return 0;
	if (pc_log_quiet)
		return 0;
	fputs("probecheck: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/* Programs nobody attaches are not loaded: tp_btf needs BTF (5.5+), and
 * a program typed for uprobe_multi cannot attach to a perf event. */
static void session_select_progs(struct pc_bpf *skel, unsigned progs,
				 int mode)
{
	int multi = mode == SESSION_ATTACH_MULTI;

	bpf_program__set_autoload(skel->progs.pc_usdt, !multi);
	bpf_program__set_autoload(skel->progs.pc_usdt_multi, multi);
	if (multi)
		bpf_program__set_expected_attach_type(skel->progs.pc_usdt_multi,
			(enum bpf_attach_type)UMULTI_ATTACH_TYPE);
	bpf_program__set_autoload(skel->progs.pc_fork,
				  !!(progs & SESSION_PROG_FOLLOW));
	bpf_program__set_autoload(skel->progs.pc_exit,
				  !!(progs & SESSION_PROG_FOLLOW));
	bpf_program__set_autoload(skel->progs.pc_exec,
				  !!(progs & SESSION_PROG_EXEC));
	bpf_program__set_autoload(skel->progs.pc_dlhook,
				  !!(progs & SESSION_PROG_DLHOOK));
}

const char *session_attach_name(int mode)
{
	static const char *const names[] = {
		[SESSION_ATTACH_PERF] = "perf",
		[SESSION_ATTACH_TRACEFS] = "tracefs",
		[SESSION_ATTACH_MULTI] = "multi",
		[SESSION_ATTACH_AUTO] = "auto",
	};

	return mode >= 0 && mode <= SESSION_ATTACH_AUTO ? names[mode] : "?";
}

int session_attach_auto(int per_process)
{
	struct umulti_caps c;

	if (umulti_probe(&c) || !c.uc_link) {
		pc_dbg("attach: auto: perf (%s)", c.uc_link_why);
		return SESSION_ATTACH_PERF;
	}
	if (per_process && !c.uc_pid) {
		pc_dbg("attach: auto: perf (%s)", c.uc_pid_why);
		return SESSION_ATTACH_PERF;
	}
	return SESSION_ATTACH_MULTI;
}

int session_attach_mode(const struct pc_session *s)
{
	return s->ps_mode;
}

int session_open(const struct session_opts *o, struct pc_session **out)
{
	struct pc_session *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	libbpf_set_print(libbpf_print);
	s->ps_event = o->so_event;
	s->ps_ctx = o->so_ctx;
	s->ps_skel = pc_bpf__open();
	if (!s->ps_skel) {
		err = -errno;
		pc_err("bpf: cannot open the BPF object: %s", pc_strerror(-err));
		goto fail;
	}
	s->ps_skel->rodata->pc_filter_pids = !!o->so_filter_pids;
	s->ps_ctl = o->so_ctl;
	s->ps_ctl_ctx = o->so_ctl_ctx;
	s->ps_mode = o->so_attach == SESSION_ATTACH_AUTO
		     ? session_attach_auto(1) : o->so_attach;
	session_select_progs(s->ps_skel, o->so_progs, s->ps_mode);
	err = pc_bpf__load(s->ps_skel);
	if (err) {
		pc_err("bpf: cannot load the BPF program: %s", pc_strerror(-err));
		goto fail;
	}
	s->ps_ring = ring_buffer__new(bpf_map__fd(s->ps_skel->maps.pc_ring),
				      ring_event, s, NULL);
	if (!s->ps_ring) {
		err = -errno;
		pc_err("bpf: cannot open the event ring: %s", pc_strerror(-err));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	session_close(s);
	return err;
}

int session_add_pid(struct pc_session *s, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (bpf_map__update_elem(s->ps_skel->maps.pc_pids, &key, sizeof(key),
				 &one, sizeof(one), BPF_ANY)) {
		pc_err("bpf: cannot add pid %d to the filter: %s", pid,
		       pc_strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * Each perf event close waits for RCU grace periods under the kernel's
 * event_mutex (~0.1 s per site on 6.x, measured: 300 sites, 30 s), so
 * closing from several threads gains nothing.  A uprobe_multi link (6.6+)
 * syncs once for all its uprobes (300 sites: 0.19 s against 49 s).
 */
static void detach_from(struct pc_session *s, size_t first)
{
	for (size_t i = s->ps_nlinks; i-- > first;) {
		bpf_link__destroy(s->ps_links[i].sl_link);
		if (s->ps_links[i].sl_fd >= 0)
			close(s->ps_links[i].sl_fd);
	}
	/* tracefs entries only now: an open perf event makes them EBUSY. */
	if (s->ps_tfs)
		tfs_release(s->ps_tfs + first, s->ps_nlinks - first);
	s->ps_nlinks = first;
}

static void detach_all(struct pc_session *s)
{
	detach_from(s, 0);
}

void session_detach(struct pc_session *s)
{
	detach_all(s);
}

/* Room for the links of sites @first.. of @ss; tracefs: their entries
 * recorded in the stash before any is created. */
static int links_grow(struct pc_session *s, const struct site_set *ss,
		      size_t first)
{
	size_t n = s->ps_nlinks + ss->ss_n - first;
	struct sess_link *links = realloc(s->ps_links, n * sizeof(*links));
	struct tfs_entry **tfs;

	if (!links)
		return -ENOMEM;
	s->ps_links = links;
	if (!(tfs = realloc(s->ps_tfs, n * sizeof(*tfs))))
		return -ENOMEM;
	s->ps_tfs = tfs;
	return s->ps_mode == SESSION_ATTACH_TRACEFS
	       ? tfs_prepare(ss->ss_v + first, ss->ss_n - first) : 0;
}

static const char *attach_reason(int err, const struct site *st)
{
	if (err == -EINVAL && st->st_sema_off)
		return "invalid argument (another uprobe at this address "
		       "with a different semaphore offset?)";
	return pc_site_strerror(-err);
}

static int spec_store(struct pc_session *s, const struct site *st, __u32 id)
{
	if (bpf_map__update_elem(s->ps_skel->maps.pc_specs, &id, sizeof(id),
				 &st->st_spec, sizeof(st->st_spec), BPF_ANY)) {
		pc_err("bpf: cannot store the spec of %s:%s: %s",
		       st->st_provider, st->st_name, pc_strerror(errno));
		return -errno;
	}
	return 0;
}

static void links_push(struct pc_session *s, struct bpf_link *link, int fd,
		       struct tfs_entry *ent)
{
	s->ps_tfs[s->ps_nlinks] = ent;
	s->ps_links[s->ps_nlinks++] = (struct sess_link){ link, fd };
}

static int attach_one(struct pc_session *s, const struct site *st,
		      __u32 id, pid_t pid)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = id);
	struct tfs_entry *ent = NULL;
	struct bpf_link *link;
	int fd, err;

	if ((err = spec_store(s, st, id)))
		return err;
	if (s->ps_mode == SESSION_ATTACH_TRACEFS)
		fd = tfs_perf_open(st, pid, &ent);
	else
		fd = uprobe_pmu_open(st->st_open_path, st->st_off,
				     st->st_sema_off, st->st_retprobe, pid);
	if (fd < 0) {
		pc_err("uprobe: '%s' offset 0x%llx (%s:%s): %s", st->st_path,
		       (unsigned long long)st->st_off, st->st_provider,
		       st->st_name, attach_reason(fd, st));
		return fd;
	}
	link = bpf_program__attach_perf_event_opts(s->ps_skel->progs.pc_usdt,
						   fd, &opts);
	if (!link) {
		err = -errno;
		close(fd);
		tfs_release(&ent, 1);
		pc_err("bpf: cannot attach to %s:%s in '%s': %s",
		       st->st_provider, st->st_name, st->st_path,
		       pc_strerror(-err));
		return err;
	}
	links_push(s, link, -1, ent);
	return 0;
}

/*
 * One uprobe_multi link for the sites of batch @first.. that share site
 * @lead's object and direction and are not @done yet.  @buf holds three
 * arrays of the batch's size: offsets, ref_ctr_offsets, cookies.
 */
static int attach_group(struct pc_session *s, const struct site_set *ss,
			size_t first, size_t lead, uint8_t *done,
			uint64_t *buf, pid_t pid)
{
	const struct site *l = &ss->ss_v[lead];
	size_t n = ss->ss_n - first;
	uint64_t *offs = buf, *refs = buf + n, *cookies = buf + 2 * n;
	uint32_t cnt = 0;
	int fd, err;

	for (size_t i = lead; i < ss->ss_n; i++) {
		const struct site *st = &ss->ss_v[i];

		if (done[i - first] || st->st_retprobe != l->st_retprobe ||
		    strcmp(st->st_open_path, l->st_open_path))
			continue;
		if ((err = spec_store(s, st, i)))
			return err;
		done[i - first] = 1;
		offs[cnt] = st->st_off;
		refs[cnt] = st->st_sema_off;
		cookies[cnt++] = i;
	}
	fd = umulti_link_create(bpf_program__fd(s->ps_skel->progs.pc_usdt_multi),
				l->st_open_path, offs, refs, cookies, cnt,
				l->st_retprobe, pid);
	if (fd < 0) {
		/* The kernel does not say which one failed. */
		pc_err("uprobe_multi: '%s': %u %s, the first %s:%s at offset "
		       "0x%llx: %s", l->st_path, cnt,
		       l->st_retprobe ? "uretprobes" : "uprobes",
		       l->st_provider, l->st_name,
		       (unsigned long long)l->st_off,
		       fd == -EINVAL ? "invalid argument (two sites at one "
		       "address with different semaphore offsets?)"
		       : pc_site_strerror(-fd));
		/* Name the refused sites: each one tried on its own, in our
		 * own mm (install_check.c). */
		if (fd == -PC_ENOTSUPP)
			install_check_pid(ss, lead, getpid());
		return fd;
	}
	links_push(s, NULL, fd, NULL);
	return 0;
}

static int attach_multi(struct pc_session *s, const struct site_set *ss,
			size_t first, pid_t pid)
{
	size_t n = ss->ss_n - first;
	uint64_t *buf = calloc(3 * n, sizeof(*buf));
	uint8_t *done = calloc(n, 1);
	int err = buf && done ? 0 : -ENOMEM;

	for (size_t i = first; i < ss->ss_n && !err; i++)
		if (!done[i - first])
			err = attach_group(s, ss, first, i, done, buf, pid);
	free(buf);
	free(done);
	return err;
}

/* Sites @first.. of @ss, in the session's mode; nothing undone here. */
static int attach_batch(struct pc_session *s, const struct site_set *ss,
			size_t first, pid_t pid)
{
	int err = links_grow(s, ss, first);

	if (!err && s->ps_mode == SESSION_ATTACH_MULTI)
		return attach_multi(s, ss, first, pid);
	for (size_t i = first; i < ss->ss_n && !err; i++)
		err = attach_one(s, &ss->ss_v[i], i, pid);
	return err;
}

int session_attach(struct pc_session *s, const struct site_set *ss, pid_t pid)
{
	int err;

	if (ss->ss_n > PC_MAX_SPECS) {
		pc_err("attach: %zu sites exceed the limit of %d", ss->ss_n,
		       PC_MAX_SPECS);
		return -E2BIG;
	}
	err = attach_batch(s, ss, 0, pid);
	if (err)
		detach_all(s);
	return err;
}

int session_attach_from(struct pc_session *s, const struct site_set *ss,
			size_t first, pid_t pid)
{
	size_t n0 = s->ps_nlinks;
	int err;

	if (ss->ss_n > PC_MAX_SPECS) {
		pc_err("attach: %zu sites exceed the limit of %d", ss->ss_n,
		       PC_MAX_SPECS);
		return -E2BIG;
	}
	if (first >= ss->ss_n)
		return 0;
	err = attach_batch(s, ss, first, pid);
	if (err)
		detach_from(s, n0);
	return err;
}

struct pc_bpf *session_bpf(struct pc_session *s)
{
	return s->ps_skel;
}

int session_poll(struct pc_session *s, int timeout_ms)
{
	int n = ring_buffer__poll(s->ps_ring, timeout_ms);

	return n == -EINTR ? 0 : n;
}

int session_drain(struct pc_session *s)
{
	return ring_buffer__consume(s->ps_ring);
}

static uint64_t counter_sum(struct pc_session *s, __u32 key)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0, *v;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (!bpf_map__lookup_elem(s->ps_skel->maps.pc_counters, &key,
				  sizeof(key), v, ncpu * sizeof(*v), 0))
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

uint64_t session_counter(struct pc_session *s, unsigned which)
{
	return counter_sum(s, which);
}

void session_counts(struct pc_session *s, uint64_t *hits, uint64_t *drops,
		    uint64_t *delivered)
{
	*hits = counter_sum(s, PC_CNT_HITS);
	*drops = counter_sum(s, PC_CNT_DROPS);
	*delivered = s->ps_delivered;
}

void session_close(struct pc_session *s)
{
	if (!s)
		return;
	detach_all(s);
	free(s->ps_links);
	free(s->ps_tfs);
	ring_buffer__free(s->ps_ring);
	pc_bpf__destroy(s->ps_skel);
	free(s);
}

int session_epoll_fd(struct pc_session *s)
{
	return ring_buffer__epoll_fd(s->ps_ring);
}
