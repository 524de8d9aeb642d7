/*
 * session.h — one tracing session: the BPF object, its attachments and the
 * event ring.  Attaching is all-or-nothing: when any site fails, every
 * attachment made so far is undone before the error is returned.
 */
#ifndef PC_SESSION_H
#define PC_SESSION_H

#include <stdint.h>
#include <sys/types.h>
#include "site.h"

struct pc_session;

/* Called for every event; @strs is NULL unless the spec asked for strings. */
typedef void (*session_event_fn)(void *ctx, const struct pc_event *ev,
				 const char (*strs)[PC_STR_LEN]);

struct session_opts {
	int so_filter_pids;     /* only tgids added with session_add_pid */
	session_event_fn so_event;
	void *so_ctx;
};

int  session_open(const struct session_opts *o, struct pc_session **out);
int  session_add_pid(struct pc_session *s, pid_t pid);
/*
 * Attach every site of @ss (kept by reference: the caller keeps @ss alive
 * while events may arrive, since the event's pe_spec_id indexes it).
 * @pid: -1 for every process mapping the object, else that process only.
 */
int  session_attach(struct pc_session *s, const struct site_set *ss, pid_t pid);
/* Wait up to @timeout_ms for events; returns events consumed or -errno. */
int  session_poll(struct pc_session *s, int timeout_ms);
/* Consume everything already in the ring without waiting. */
int  session_drain(struct pc_session *s);
void session_counts(struct pc_session *s, uint64_t *hits, uint64_t *drops,
		    uint64_t *delivered);
/* Detach everything and free; safe on NULL. */
void session_close(struct pc_session *s);

/* Kernel facts, probed once: 0 or -errno with a message. */
int  uprobe_pmu_type(void);
int  uprobe_pmu_bit(const char *field, int *lo);  /* format/<field> */



/* The ring's epoll fd, for callers that poll several fds. */
int  session_epoll_fd(struct pc_session *s);
#endif
