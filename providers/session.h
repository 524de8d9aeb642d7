/*
 * session.h — one tracing session: the BPF object, its attachments and the
 * event ring.  Attaching is all-or-nothing per batch, not per session: a
 * batch is one call of session_attach, session_attach_from or
 * session_attach_hook, and when any of its sites fails, that batch's
 * attachments are undone before the error is returned; those of earlier
 * batches stay attached.  So when session_attach is the first batch (as
 * in trace_run.c) its failure leaves nothing attached; what a failed
 * later batch (follow.c: hooks, objects mapped since) means for the trace
 * is the caller's decision.
 */
#ifndef PC_SESSION_H
#define PC_SESSION_H

#include <stdint.h>
#include <sys/types.h>
#include "site.h"

struct pc_session;

/* Called for every event; @strs is NULL unless the spec asked for
 * strings, @stk NULL unless the session captures stacks (so_ustack). */
typedef void (*session_event_fn)(void *ctx, const struct pc_event *ev,
				 const char (*strs)[PC_STR_LEN],
				 const struct pc_ustack *stk);

/* Called for every control record (pe_spec_id == PC_CTL_ID, follow.c). */
typedef void (*session_ctl_fn)(void *ctx, const struct pc_event *ev);

/* BPF programs beyond pc_usdt, loaded only when asked for (follow.c). */
enum session_prog {
	SESSION_PROG_FOLLOW = 1,        /* pc_fork, pc_exit */
	SESSION_PROG_EXEC = 2,          /* pc_exec */
	SESSION_PROG_DLHOOK = 4,        /* pc_dlhook */
};

struct attach_ops;

struct session_opts {
	int so_filter_pids;     /* only tgids added with session_add_pid */
	int so_follow;          /* ... and their descendants (pc.bpf.c) */
	session_event_fn so_event;
	void *so_ctx;
	unsigned so_progs;      /* enum session_prog bits */
	session_ctl_fn so_ctl;  /* control records; NULL: dropped */
	void *so_ctl_ctx;
	/* The attach mode (attach.h); NULL: auto, decided by attach_choose
	 * for sites attached with a pid if @so_per_process. */
	const struct attach_ops *so_attach;
	int so_per_process;
	unsigned so_ustack;     /* user stack frames per event, 0: none */
	/* Site programs loaded sleepable, faulting in the pages their reads
	 * need (pc.bpf.c, prefault); refused where the kernel cannot. */
	int so_sleepable;
};

int  session_open(const struct session_opts *o, struct pc_session **out);
int  session_add_pid(struct pc_session *s, pid_t pid);
/*
 * Attach every site of @ss (kept by reference: the caller keeps @ss alive
 * while events may arrive, since the event's pe_spec_id indexes it).
 * @pid: -1 for every process mapping the object, else that process only.
 */
int  session_attach(struct pc_session *s, const struct site_set *ss, pid_t pid);
/*
 * Attach sites @first..ss_n-1 of @ss, added after session_attach (cookie =
 * index, as there).  All-or-nothing for this batch only: on failure the
 * batch's attachments are undone, earlier ones stay.
 */
int  session_attach_from(struct pc_session *s, const struct site_set *ss,
			 size_t first, pid_t pid);
/*
 * A hook: @st attached through the session's mode with the hook program
 * (pc_dlhook), cookie @cookie, kept apart from the sites.
 */
int  session_attach_hook(struct pc_session *s, const struct site *st,
			 unsigned cookie, pid_t pid);
/* Detach the hooks only: no more barriers (follow.c), sites stay. */
void session_detach_hooks(struct pc_session *s);
/* The attach mode in use: "perf", "tracefs" or "multi". */
const char *session_attach_name(const struct pc_session *s);
/* The BPF skeleton, for follow.c's tracepoints and hooks. */
struct pc_bpf *session_bpf(struct pc_session *s);
/* Wait up to @timeout_ms for events; returns events consumed or -errno. */
int  session_poll(struct pc_session *s, int timeout_ms);
/* Consume everything already in the ring without waiting. */
int  session_drain(struct pc_session *s);
/*
 * Detach every site but keep the ring and counters: after it no hit can
 * happen, so a drain then delivers everything and the counts are final.
 */
void session_detach(struct pc_session *s);
int session_ring_state(struct pc_session *s, char *buf, size_t n);
void session_counts(struct pc_session *s, uint64_t *hits, uint64_t *drops,
		    uint64_t *delivered);
/* One pc_counters entry (enum pc_counter), summed over CPUs. */
uint64_t session_counter(struct pc_session *s, unsigned which);
/* 0, or the -errno of the first counter (session_counter, session_counts,
 * session_skipped) that could not be read, said once with pc_err: the
 * counts given since are not the kernel's. */
int  session_counters_err(const struct pc_session *s);
/* One site's counts (pc_bpf.h): seen, hits, and delivered here. */
struct session_site_count {
	uint64_t sc_seen, sc_hits, sc_delivered;
};
int session_site_counts(struct pc_session *s, __u32 id,
			struct session_site_count *c);
/* Runs of the follow tracepoint programs the kernel skipped (K6). */
struct session_skipped {
	uint64_t sk_fork, sk_exit, sk_exec;	/* by the kernel (K6) */
	uint64_t sk_exec_seen;			/* pc_exec_seen's, likewise */
	uint64_t sk_emul_fork, sk_emul_exit;	/* PROBECHECK_SKIP_TP */
};
void session_skipped(struct pc_session *s, struct session_skipped *k);
/* Detach everything and free; safe on NULL. */
void session_close(struct pc_session *s);

/* The ring's epoll fd, for callers that poll several fds. */
int  session_epoll_fd(struct pc_session *s);
#endif
