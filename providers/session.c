/*
 * session.c — load the BPF program, attach sites, consume the ring.
 *
 * Each site gets its own fd-based uprobe (uprobe_pmu.c; in the tracefs
 * mode a named uprobe_events entry, attach_tracefs.c) and a BPF link
 * whose cookie is the site's index in the site set; pc_specs[index] holds
 * the site's operand spec.  Sites are attached in order; when one fails,
 * all links made so far are destroyed, which closes their perf fds, which
 * unregisters the uprobes and drops the semaphore counts they raised.
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
#include "uprobe_pmu.h"
#include "attach_tracefs.h"

struct pc_session {
	struct pc_bpf *ps_skel;
	struct ring_buffer *ps_ring;
	struct bpf_link **ps_links;
	size_t ps_nlinks;
	uint64_t ps_delivered;
	session_event_fn ps_event;
	void *ps_ctx;
	session_ctl_fn ps_ctl;
	void *ps_ctl_ctx;
	int ps_tracefs;                 /* SESSION_ATTACH_TRACEFS */
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

/* Programs nobody attaches are not loaded: tp_btf needs BTF (5.5+). */
static void session_select_progs(struct pc_bpf *skel, unsigned progs)
{
	bpf_program__set_autoload(skel->progs.pc_fork,
				  !!(progs & SESSION_PROG_FOLLOW));
	bpf_program__set_autoload(skel->progs.pc_exit,
				  !!(progs & SESSION_PROG_FOLLOW));
	bpf_program__set_autoload(skel->progs.pc_exec,
				  !!(progs & SESSION_PROG_EXEC));
	bpf_program__set_autoload(skel->progs.pc_dlhook,
				  !!(progs & SESSION_PROG_DLHOOK));
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
		pc_err("bpf: cannot open the BPF object: %s", strerror(-err));
		goto fail;
	}
	s->ps_skel->rodata->pc_filter_pids = !!o->so_filter_pids;
	s->ps_ctl = o->so_ctl;
	s->ps_ctl_ctx = o->so_ctl_ctx;
	s->ps_tracefs = o->so_attach == SESSION_ATTACH_TRACEFS;
	session_select_progs(s->ps_skel, o->so_progs);
	err = pc_bpf__load(s->ps_skel);
	if (err) {
		pc_err("bpf: cannot load the BPF program: %s", strerror(-err));
		goto fail;
	}
	s->ps_ring = ring_buffer__new(bpf_map__fd(s->ps_skel->maps.pc_ring),
				      ring_event, s, NULL);
	if (!s->ps_ring) {
		err = -errno;
		pc_err("bpf: cannot open the event ring: %s", strerror(-err));
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
		       strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * Each close waits for RCU grace periods under the kernel's event_mutex
 * (~0.1 s per site on 6.x, measured: 300 sites, 30 s), so closing from
 * several threads gains nothing.  A uprobe_multi link (6.6+) syncs once.
 */
static void detach_from(struct pc_session *s, size_t first)
{
	for (size_t i = s->ps_nlinks; i-- > first;)
		bpf_link__destroy(s->ps_links[i]);
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
	struct bpf_link **links = realloc(s->ps_links, n * sizeof(*links));
	struct tfs_entry **tfs;

	if (!links)
		return -ENOMEM;
	s->ps_links = links;
	if (!(tfs = realloc(s->ps_tfs, n * sizeof(*tfs))))
		return -ENOMEM;
	s->ps_tfs = tfs;
	return s->ps_tracefs ? tfs_prepare(ss->ss_v + first, ss->ss_n - first)
			     : 0;
}

static const char *attach_reason(int err, const struct site *st)
{
	if (err == -EINVAL && st->st_sema_off)
		return "invalid argument (another uprobe at this address "
		       "with a different semaphore offset?)";
	return strerror(-err);
}

static int attach_one(struct pc_session *s, const struct site *st,
		      __u32 id, pid_t pid)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = id);
	struct tfs_entry *ent = NULL;
	struct bpf_link *link;
	int fd, err;

	err = bpf_map__update_elem(s->ps_skel->maps.pc_specs, &id, sizeof(id),
				   &st->st_spec, sizeof(st->st_spec), BPF_ANY);
	if (err) {
		pc_err("bpf: cannot store the spec of %s:%s: %s",
		       st->st_provider, st->st_name, strerror(errno));
		return -errno;
	}
	if (s->ps_tracefs)
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
		       strerror(-err));
		return err;
	}
	s->ps_tfs[s->ps_nlinks] = ent;
	s->ps_links[s->ps_nlinks++] = link;
	return 0;
}

int session_attach(struct pc_session *s, const struct site_set *ss, pid_t pid)
{
	int err;

	if (ss->ss_n > PC_MAX_SPECS) {
		pc_err("attach: %zu sites exceed the limit of %d", ss->ss_n,
		       PC_MAX_SPECS);
		return -E2BIG;
	}
	err = links_grow(s, ss, 0);
	for (size_t i = 0; i < ss->ss_n && !err; i++)
		err = attach_one(s, &ss->ss_v[i], i, pid);
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
	err = links_grow(s, ss, first);
	for (size_t i = first; i < ss->ss_n && !err; i++)
		err = attach_one(s, &ss->ss_v[i], i, pid);
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
