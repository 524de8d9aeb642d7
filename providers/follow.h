/*
 * follow.h — following processes and the objects they map after attach.
 *
 * Two jobs, both driven by control records from the BPF side (pc_bpf.h):
 *   - --follow: descendants (fork, vfork, clone) join the tgid filter in
 *     BPF, and sites are attached system-wide (pid -1) so that a child's
 *     new mm has them too;
 *   - PATH '*' with -p or --follow: objects mapped later (exec, dlopen) are
 *     searched for the '*' probes and attached while the process is
 *     stopped at a barrier, before it runs past them.
 * All functions are safe on NULL (nothing to follow).
 */
#ifndef PC_FOLLOW_H
#define PC_FOLLOW_H

#include <stdint.h>
#include <sys/types.h>
#include "session.h"
#include "site.h"

struct follow;
struct probe_req;

struct follow_opts {
	int      fo_descendants;  /* --follow */
	pid_t    fo_attach_pid;   /* perf event pid for late sites: -1, or -p's */
	/* Every PROBE, parsed, options and all (provider.h); the follow
	 * keeps pointers to the '*' ones: the caller's array outlives it. */
	const struct probe_req *fo_reqs;
	int      fo_nreqs;
};

/* *out is NULL when there is nothing to follow (no --follow, no '*'). */
int  follow_open(const struct follow_opts *o, struct site_set *ss,
		 struct follow **out);
/* The session_prog bits the session must load for us. */
unsigned follow_progs(const struct follow *f);
/* session_ctl_fn: a process stopped at a barrier; ctx is the follow. */
void follow_ctl(void *ctx, const struct pc_event *ev);
/*
 * After the initial attach: attach the tracepoints, add @root's existing
 * descendants (--follow), hook dynamic linkers and attach '*' probes in
 * objects mapped since the probes were resolved.  0 or -errno.
 */
int  follow_start(struct follow *f, struct pc_session *s, pid_t root);
/*
 * Before the last drain of the ring: no new barriers after this; records
 * still queued only resume their process (SIGCONT).
 */
void follow_stop(struct follow *f);
/*
 * After the last drain: prints how the tgid set changed (always with -v,
 * else when something disagrees) and -1 when a followed process's events
 * may be missing (children not followed, barriers not taken, forks the
 * kernel skipped while other processes' hits were @filtered out), else 0.
 */
int  follow_verdict(struct follow *f, uint64_t filtered);
void follow_close(struct follow *f);

#endif
