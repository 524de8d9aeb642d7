/*
 * session.c — load the BPF program, attach sites, consume the ring.
 *
 * How a site becomes a uprobe is the attach mode's business (attach.h:
 * perf, tracefs, multi); the session stores each site's operand spec at
 * pc_specs[index], hands the mode a batch with cookie = index, and keeps
 * the links the mode makes in order.  Attaching is all-or-nothing per
 * batch: when a site fails, the batch's links are released, which
 * unregisters their uprobes and drops the semaphore counts they raised.
 * Hooks (follow.c's _dl_debug_state barrier) are sites like any other,
 * through the same mode, kept apart so they can be detached first.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "features.h"
#include "idcount.h"
#include "log.h"
#include "privs.h"
#include "pc.skel.h"
#include "session.h"

/* Links in the order made; a batch is undone by releasing its tail. */
struct link_vec {
	struct attach_link *lv_v;
	size_t lv_n, lv_cap;
};

struct pc_session {
	struct pc_bpf *ps_skel;
	struct ring_buffer *ps_ring;
	const struct attach_ops *ps_ops;
	/* The programs of sites and hooks: by cookie, or both the one
	 * pc_place_* program (kernels without bpf_cookie). */
	struct bpf_program *ps_site_prog, *ps_hook_prog;
	int ps_places_fd;               /* by place: pc_places, else -1 */
	struct link_vec ps_sites;
	struct link_vec ps_hooks;
	uint64_t ps_delivered;
	/* Delivered events by site index, for -v; an event whose count
	 * cannot be stored only misses from that breakdown (the total is
	 * ps_delivered). */
	struct id_counts ps_site_delivered;
	session_event_fn ps_event;
	void *ps_ctx;
	session_ctl_fn ps_ctl;
	void *ps_ctl_ctx;
	int ps_counter_err;             /* first counter read that failed */
};
static int ring_event(void *ctx, void *data, size_t len)
{
	struct pc_session *s = ctx;
	const struct pc_event_str *es = data;
	const struct pc_ustack *stk = NULL;

	if (len < sizeof(struct pc_event))
		return 0;
	if (len >= sizeof(struct pc_event_stk))
		stk = &((const struct pc_event_stk *)data)->ks_stack;
	if (es->ps_ev.pe_spec_id == PC_CTL_ID) {
		if (s->ps_ctl)
			s->ps_ctl(s->ps_ctl_ctx, &es->ps_ev);
		return 0;
	}
	s->ps_delivered++;
	id_counts_add(&s->ps_site_delivered, es->ps_ev.pe_spec_id, PC_MAX_SPECS);
	s->ps_event(s->ps_ctx, &es->ps_ev,
		    len >= sizeof(*es) ? (const char (*)[PC_STR_LEN])es->ps_str
				       : NULL, stk);
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG && !pc_log_verbose)
		return 0;
	fputs("probecheck: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/*
 * The programs of this session's sites and hooks, the only ones loaded:
 * tp_btf needs BTF (5.5+), a program typed for uprobe_multi cannot attach
 * to a perf event, one reading the cookie does not load before 5.15, and
 * pc_place_list's CO-RE reads of mm->mmap fail to relocate on 6.1+.
 */
static void session_select_progs(struct pc_session *s, unsigned progs)
{
	struct pc_bpf *skel = s->ps_skel;
	unsigned multi = s->ps_ops->ao_multi_prog;
	enum attach_site_id id = multi ? ATTACH_ID_COOKIE : attach_site_id(NULL, 0);
	struct bpf_program *all[] = {
		skel->progs.pc_usdt, skel->progs.pc_usdt_multi,
		skel->progs.pc_dlhook, skel->progs.pc_dlhook_multi,
		skel->progs.pc_place_list, skel->progs.pc_place_findvma,
	};

	if (multi) {
		s->ps_site_prog = skel->progs.pc_usdt_multi;
		s->ps_hook_prog = skel->progs.pc_dlhook_multi;
	} else if (id == ATTACH_ID_COOKIE) {
		s->ps_site_prog = skel->progs.pc_usdt;
		s->ps_hook_prog = skel->progs.pc_dlhook;
	} else {
		s->ps_site_prog = s->ps_hook_prog = id == ATTACH_ID_PLACE_LIST
			? skel->progs.pc_place_list : skel->progs.pc_place_findvma;
	}
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		bpf_program__set_autoload(all[i], all[i] == s->ps_site_prog ||
			(all[i] == s->ps_hook_prog && (progs & SESSION_PROG_DLHOOK)));
	if (multi) {
		bpf_program__set_expected_attach_type(skel->progs.pc_usdt_multi,
			(enum bpf_attach_type)multi);
		bpf_program__set_expected_attach_type(skel->progs.pc_dlhook_multi,
			(enum bpf_attach_type)multi);
	}
	bpf_program__set_autoload(skel->progs.pc_fork,
				  !!(progs & SESSION_PROG_FOLLOW));
	bpf_program__set_autoload(skel->progs.pc_exit,
				  !!(progs & SESSION_PROG_FOLLOW));
	bpf_program__set_autoload(skel->progs.pc_exec,
				  !!(progs & SESSION_PROG_EXEC));
	bpf_program__set_autoload(skel->progs.pc_exec_seen,
				  !!(progs & SESSION_PROG_EXEC));
}

/* PROBECHECK_SKIP_TP=fork,exit,exec,execcheck: pc_skip_tp (pc_bpf.h),
 * else 0.  execcheck skips the exec barrier's check (pc_exec_seen). */
static int skip_tp(__u32 *bits)
{
	const char *env = getenv("PROBECHECK_SKIP_TP");
	char buf[32], *tok, *save;

	*bits = 0;
	if (!env || !*env)
		return 0;
	/* Cut, it could lose or change a word: refused instead. */
	if (strlen(env) >= sizeof(buf)) {
		pc_err("bpf: PROBECHECK_SKIP_TP='%s': too long (at most %zu "
		       "characters: fork, exit, exec, execcheck)", env,
		       sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", env);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "fork"))
			*bits |= PC_SKIP_FORK;
		else if (!strcmp(tok, "exit"))
			*bits |= PC_SKIP_EXIT;
		else if (!strcmp(tok, "exec"))
			*bits |= PC_SKIP_EXEC;
		else if (!strcmp(tok, "execcheck"))
			*bits |= PC_SKIP_EXEC_CHECK;
		else {
			pc_err("bpf: PROBECHECK_SKIP_TP='%s': '%s' is not fork, "
			       "exit, exec or execcheck", env, tok);
			return -EINVAL;
		}
	}
	pc_dbg("bpf: the tracepoint programs skip runs as K6 would "
	       "(PROBECHECK_SKIP_TP=%s)", env);
	return 0;
}

const char *session_attach_name(const struct pc_session *s)
{
	return s->ps_ops->ao_name;
}

/*
 * --sleepable: the site program loaded sleepable, told to prefault.  Only
 * the cookie programs take it: every kernel that runs sleepable uprobes
 * (5.19+) has bpf_cookie (5.15+), so the pc_place_* programs of kernels
 * without a cookie never need to (a kernel made to look cookie-less, as
 * pc-deny does, is refused with that reason).
 */
static int session_sleepable(struct pc_session *s)
{
	struct pc_bpf *skel = s->ps_skel;
	char why[256];

	if (!feature_has(FEATURE_SLEEPABLE_UPROBE, why, sizeof(why))) {
		pc_err("--sleepable: this kernel cannot run sleepable uprobe "
		       "programs: %s", why);
		return -EOPNOTSUPP;
	}
	if (s->ps_site_prog != skel->progs.pc_usdt &&
	    s->ps_site_prog != skel->progs.pc_usdt_multi) {
		pc_err("--sleepable: sites are told apart by place here (no "
		       "bpf_cookie), and only the cookie programs are sleepable");
		return -EOPNOTSUPP;
	}
	skel->rodata->pc_sleepable = 1;
	return bpf_program__set_flags(s->ps_site_prog,
		bpf_program__flags(s->ps_site_prog) | BPF_F_SLEEPABLE);
}

int session_open(const struct session_opts *o, struct pc_session **out)
{
	struct pc_session *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	libbpf_set_print(libbpf_print);
	s->ps_places_fd = -1;
	s->ps_event = o->so_event;
	s->ps_ctx = o->so_ctx;
	s->ps_ctl = o->so_ctl;
	s->ps_ctl_ctx = o->so_ctl_ctx;
	s->ps_ops = attach_choose(o->so_attach, o->so_per_process);
	if (o->so_attach) {
		/* Asked for by name: refused here, with the mode's own reason,
		 * before its programs meet a verifier that cannot take them
		 * (the *_multi programs read bpf_cookie: before 5.15 the load
		 * fails with a verifier log, not a reason). */
		char why[400];

		err = s->ps_ops->ao_caps(why, sizeof(why));
		if (err < 0) {
			pc_err("attach: --attach=%s does not work here: %s",
			       s->ps_ops->ao_name, why);
			goto fail;
		}
	}
	s->ps_skel = pc_bpf__open();
	if (!s->ps_skel) {
		err = -errno;
		pc_err("bpf: cannot open the BPF object: %s", pc_strerror(-err));
		goto fail;
	}
	s->ps_skel->rodata->pc_filter_pids = !!o->so_filter_pids;
	s->ps_skel->rodata->pc_follow = !!o->so_follow;
	s->ps_skel->rodata->pc_ustack = o->so_ustack;
	err = skip_tp((__u32 *)&s->ps_skel->rodata->pc_skip_tp);
	if (err)
		goto fail;
	{
		char why[100];

		s->ps_skel->rodata->pc_preempt_guard = attach_preempt_guard(why, sizeof(why));
		pc_dbg("bpf: preemption guard %s (pc_preempt_guard=%u)", why,
		       s->ps_skel->rodata->pc_preempt_guard);
	}
	session_select_progs(s, o->so_progs);
	if (o->so_sleepable) {
		err = session_sleepable(s);
		if (err)
			goto fail;
	}
	err = pc_bpf__load(s->ps_skel);
	if (err) {
		char buf[400];
		const char *why = privs_why(PRIV_BPF, err, NULL, buf,
					    sizeof(buf));

		/* libbpf's own refusals come back as EINVAL: the registry's
		 * experiment names what this caller lacks, if it is that. */
		if (!why && !feature_has(FEATURE_BPF_TRACING, buf, sizeof(buf)))
			why = buf;
		pc_err("bpf: cannot load the BPF program: %s",
		       why ? why : pc_strerror(-err));
		goto fail;
	}
	/* Only the pc_place_* programs serve sites and hooks alike. */
	s->ps_places_fd = s->ps_site_prog == s->ps_hook_prog
		? bpf_map__fd(s->ps_skel->maps.pc_places) : -1;
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
	__u64 any = 0;          /* start time not checked (pc.bpf.c) */

	if (bpf_map__update_elem(s->ps_skel->maps.pc_pids, &key, sizeof(key),
				 &any, sizeof(any), BPF_ANY)) {
		int err = -errno;

		pc_err("bpf: cannot add pid %d to the filter: %s", pid,
		       pc_strerror(-err));
		return err;
	}
	return 0;
}

static int link_push(void *ctx, const struct attach_link *l)
{
	struct link_vec *lv = ctx;

	if (lv->lv_n == lv->lv_cap) {
		size_t cap = lv->lv_cap ? 2 * lv->lv_cap : 16;
		struct attach_link *v = realloc(lv->lv_v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		lv->lv_v = v;
		lv->lv_cap = cap;
	}
	lv->lv_v[lv->lv_n++] = *l;
	return 0;
}

/* Release the links of @lv from @first on (the mode closes them in
 * reverse and then its own state). */
static void links_release(struct pc_session *s, struct link_vec *lv,
			  size_t first)
{
	s->ps_ops->ao_release(lv->lv_v + first, lv->lv_n - first);
	lv->lv_n = first;
}

void session_detach(struct pc_session *s)
{
	links_release(s, &s->ps_hooks, 0);
	links_release(s, &s->ps_sites, 0);
}

void session_detach_hooks(struct pc_session *s)
{
	links_release(s, &s->ps_hooks, 0);
}

static int spec_store(struct pc_session *s, const struct site *st, __u32 id)
{
	if (bpf_map__update_elem(s->ps_skel->maps.pc_specs, &id, sizeof(id),
				 &st->st_spec, sizeof(st->st_spec), BPF_ANY)) {
		int err = -errno;

		pc_err("bpf: cannot store the spec of %s:%s: %s",
		       st->st_provider, st->st_name, pc_strerror(-err));
		return err;
	}
	return 0;
}

/* The batch @r into @lv; its links released again on failure. */
static int attach_batch(struct pc_session *s, struct link_vec *lv,
			const struct attach_req *r)
{
	const struct site_set *ss = r->ar_ss;
	size_t n0 = lv->lv_n;
	int err = 0;

	if (s->ps_ops->ao_prepare)
		err = s->ps_ops->ao_prepare(ss->ss_v + r->ar_first,
					    ss->ss_n - r->ar_first);
	if (!err)
		err = s->ps_ops->ao_open(r);
	if (err)
		links_release(s, lv, n0);
	return err;
}

int session_attach_from(struct pc_session *s, const struct site_set *ss,
			size_t first, pid_t pid)
{
	struct attach_req r = { .ar_ss = ss, .ar_first = first, .ar_pid = pid,
				.ar_prog = s->ps_site_prog,
				.ar_places_fd = s->ps_places_fd,
				.ar_push = link_push, .ar_ctx = &s->ps_sites };
	int err = 0;

	if (ss->ss_n > PC_MAX_SPECS) {
		pc_err("attach: %zu sites exceed the limit of %d", ss->ss_n,
		       PC_MAX_SPECS);
		return -E2BIG;
	}
	if (first >= ss->ss_n)
		return 0;
	for (size_t i = first; i < ss->ss_n && !err; i++)
		err = spec_store(s, &ss->ss_v[i], i);
	return err ?: attach_batch(s, &s->ps_sites, &r);
}

int session_attach(struct pc_session *s, const struct site_set *ss, pid_t pid)
{
	return session_attach_from(s, ss, 0, pid);
}

int session_attach_hook(struct pc_session *s, const struct site *st,
			unsigned cookie, pid_t pid)
{
	struct site_set one = { .ss_v = (struct site *)st, .ss_n = 1 };
	struct attach_req r = { .ar_ss = &one, .ar_pid = pid,
				.ar_prog = s->ps_hook_prog,
				.ar_places_fd = s->ps_places_fd,
				.ar_cookie_add = s->ps_places_fd >= 0
						 ? cookie | PC_ID_HOOK : cookie,
				.ar_push = link_push, .ar_ctx = &s->ps_hooks };

	return attach_batch(s, &s->ps_hooks, &r);
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

/* A count that cannot be read is not 0: the first failure is said once
 * and kept (session_counters_err), and the summary says the counts are
 * unknown instead of printing zeros. */
static void counter_failed(struct pc_session *s, const char *what, int err)
{
	if (s->ps_counter_err)
		return;
	s->ps_counter_err = err;
	pc_err("session: %s cannot be read: %s; the counts are unknown", what,
	       pc_strerror(-err));
}

static uint64_t counter_sum(struct pc_session *s, __u32 key)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0, *v;

	if (ncpu <= 0) {
		counter_failed(s, "the number of CPUs", ncpu < 0 ? ncpu : -EINVAL);
		return 0;
	}
	v = calloc(ncpu, sizeof(*v));
	if (!v) {
		counter_failed(s, "pc_counters", -ENOMEM);
		return 0;
	}
	if (!bpf_map__lookup_elem(s->ps_skel->maps.pc_counters, &key,
				  sizeof(key), v, ncpu * sizeof(*v), 0))
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	else
		counter_failed(s, "pc_counters", -errno);
	free(v);
	return sum;
}

int session_counters_err(const struct pc_session *s)
{
	return s->ps_counter_err;
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

int session_site_counts(struct pc_session *s, __u32 id,
			struct session_site_count *c)
{
	struct pc_site_count v;

	if (bpf_map__lookup_elem(s->ps_skel->maps.pc_site_counts, &id,
				 sizeof(id), &v, sizeof(v), 0))
		return -errno;
	c->sc_seen = v.sc_seen;
	c->sc_hits = v.sc_hits;
	c->sc_delivered = id_counts_get(&s->ps_site_delivered, id);
	return 0;
}

/*
 * Runs of @prog the kernel skipped because the program was already
 * running on that CPU (bpf_prog_info.recursion_misses, 5.12+; 0 before,
 * or for a program not loaded).  Uprobe programs are never skipped so;
 * tracepoint programs are (K6).
 */
static uint64_t prog_misses(struct pc_session *s, const struct bpf_program *prog)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(prog);

	memset(&info, 0, sizeof(info));
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		counter_failed(s, "a program's recursion_misses", -errno);
		return 0;
	}
	return info.recursion_misses;
}

void session_skipped(struct pc_session *s, struct session_skipped *k)
{
	k->sk_fork = prog_misses(s, s->ps_skel->progs.pc_fork);
	k->sk_exit = prog_misses(s, s->ps_skel->progs.pc_exit);
	k->sk_exec = prog_misses(s, s->ps_skel->progs.pc_exec);
	k->sk_exec_seen = prog_misses(s, s->ps_skel->progs.pc_exec_seen);
	k->sk_emul_fork = counter_sum(s, PC_CNT_SKIP_FORK);
	k->sk_emul_exit = counter_sum(s, PC_CNT_SKIP_EXIT);
}


/*
 * Where the consumer stands, for a summary whose counts disagree: hits
 * counted but never delivered are either still in the ring (the record at
 * the consumer position is BUSY: reserved and never committed, and libbpf
 * stops there) or never written.  Read through our own read-only mapping
 * of the map: libbpf 1.1 has no accessor for its positions.
 */
int session_ring_state(struct pc_session *s, char *buf, size_t n)
{
	int fd = bpf_map__fd(s->ps_skel->maps.pc_ring);
	size_t pg = sysconf(_SC_PAGESIZE), size = bpf_map__max_entries(s->ps_skel->maps.pc_ring);
	unsigned long *cons, *prod;
	uint32_t hdr;
	void *c, *p;

	c = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		return -errno;
	p = mmap(NULL, pg + size, PROT_READ, MAP_SHARED, fd, pg);
	if (p == MAP_FAILED) {
		int e = -errno;

		munmap(c, pg);
		return e;
	}
	cons = c;
	prod = p;
	if (*cons == *prod) {
		snprintf(buf, n, "empty: consumer and producer at %lu", *cons);
	} else {
		hdr = *(volatile uint32_t *)((char *)p + pg + (*cons & (size - 1)));
		snprintf(buf, n, "consumer at %lu, producer at %lu, record there: %slen %u",
			 *cons, *prod,
			 hdr & BPF_RINGBUF_BUSY_BIT ? "BUSY " :
			 hdr & BPF_RINGBUF_DISCARD_BIT ? "discarded " : "",
			 hdr & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT));
	}
	munmap(p, pg + size);
	munmap(c, pg);
	return 0;
}

void session_close(struct pc_session *s)
{
	if (!s)
		return;
	if (s->ps_ops)
		session_detach(s);
	free(s->ps_sites.lv_v);
	id_counts_free(&s->ps_site_delivered);
	free(s->ps_hooks.lv_v);
	ring_buffer__free(s->ps_ring);
	pc_bpf__destroy(s->ps_skel);
	free(s);
}

int session_epoll_fd(struct pc_session *s)
{
	return ring_buffer__epoll_fd(s->ps_ring);
}
