/*
 * trace.h — state shared by the pieces of `probecheck trace`.
 */
#ifndef PC_TRACE_H
#define PC_TRACE_H

#include <stdint.h>
#include <sys/types.h>
#include "site.h"

struct attach_ops;
struct probe_req;

struct trace_opts {
	int    to_json;
	uint32_t to_str_mask;   /* --str: argument indexes read as strings */
	uint32_t to_buf_mask;   /* --buf N,LEN: argument N points to LEN bytes */
	uint16_t to_buf_len[PC_MAX_ARGS];
	int    to_sleepable;    /* --sleepable: fault pages in (pc.bpf.c) */
	const char *to_ready;   /* --ready FILE */
	const char *to_cmd;     /* -c */
	pid_t  to_pid;          /* -p */
	int    to_all;          /* -a: every process mapping the objects */
	int    to_follow;       /* --follow: descendants, exec, '*' later */
	int    to_nargs;        /* --args N: pid entry arguments (default 6) */
	unsigned to_ustack;     /* --ustack[=N]: user stack frames, 0: none */
	const struct attach_ops *to_attach;     /* --attach; NULL: auto */
	char **to_probes;       /* PROBE arguments as typed: trace_resolve
				 * parses them */
	int    to_nprobes;
};

struct ustack_syms;

struct trace_out {
	const struct site_set *tr_sites;  /* pe_spec_id indexes this */
	int    tr_json;
	struct ustack_syms *tr_syms;      /* --ustack's symbolizer */
	/* Arguments printed as not read with an errno, strings cut: the
	 * summary's unreadable= and truncated=. */
	unsigned long long tr_unreadable, tr_truncated;
};

/* session_event_fn for the event ring: one output line per event. */
void trace_print_event(void *ctx, const struct pc_event *ev,
		       const char (*strs)[PC_STR_LEN],
		       const struct pc_ustack *stk);

/*
 * trace's options and PROBE arguments (argv[0] is "trace") into @o, which
 * the caller zeroed: 0, 1 after printing the usage for --help, or -EINVAL
 * with a message.  Probes are kept as typed, not parsed.
 */
int trace_parse_opts(int argc, char **argv, struct trace_opts *o);

/*
 * Parse every PROBE once into @reqs (to_nprobes of them, zeroed by the
 * caller, who frees them with probe_reqs_free whatever this returns),
 * with --args and --str in each request, and resolve it into sites: 0,
 * or -errno after a message (-ENOMEM: a runtime failure, else bad input).
 */
int trace_resolve(const struct trace_opts *o, struct probe_req *reqs,
		  struct site_set *ss);

/* Attach, run, drain, detach; returns an exit code.  @reqs: the parsed
 * PROBE list, for follow.c ('*' probes searched again later). */
int trace_run(const struct trace_opts *o, const struct probe_req *reqs,
	      struct site_set *ss);

#endif
