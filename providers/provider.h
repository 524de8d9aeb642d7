/*
 * provider.h — one typed ops table per provider.
 *
 * A provider turns what the user wrote (one PROBE argument, or one file to
 * list) into probe sites.  Attaching, fetching arguments and delivering
 * events are the core's job and are the same for every provider.
 *
 * Each providers/prov_*.c file holds static helpers and ends with its
 * table; providers/providers.c lists them.  Every hook is mandatory, so no
 * caller ever tests a hook for NULL.
 */
#ifndef PC_PROVIDER_H
#define PC_PROVIDER_H

#include <stdint.h>
#include <sys/types.h>
#include "site.h"
#include "procmaps.h"

/*
 * One PROBE argument split at ':' — e.g. usdt:PATH:PROVIDER:NAME — with
 * the options that apply to each probe.  Parsed once (probe_req_parse),
 * by the command that was given it, and read by everyone after: the
 * providers, and follow.c for the '*' probes it resolves again later.
 *
 * Lifetime: the request owns its four strings (probe_req_free frees
 * them); pr_text is borrowed from the caller (argv) and must outlive it.
 * `trace` keeps its PROBE list, an array it frees with probe_reqs_free,
 * from the parse until after the run (cmd_trace.c); follow.c keeps
 * pointers into that array until follow_close, and the providers read a
 * request only during the call.
 */
struct probe_req {
	const char *pr_text;    /* as typed, for messages */
	char *pr_kind;          /* "usdt" */
	char *pr_path;          /* PATH, or "*" (every object of -p PID) */
	char *pr_a;             /* usdt: PROVIDER glob */
	char *pr_b;             /* usdt: NAME glob */
	/* The options, zeroed by probe_req_parse and set once by its
	 * caller; a site gets them where it is made, never patched later:
	 * pr_nargs in the pid provider's operands, pr_str_mask in
	 * target_resolve (target.h), for every provider. */
	int   pr_nargs;         /* pid entry: arguments to fetch, 0..PC_MAX_ARGS
				 * (trace --args, default 6) */
	uint32_t pr_str_mask;   /* bit i: argument i is read as a string
				 * (trace --str) */
	uint32_t pr_buf_mask;   /* bit i: argument i points to pr_buf_len[i]
				 * bytes (trace --buf) */
	uint16_t pr_buf_len[PC_MAX_ARGS];
};

/* What the probes are resolved against. */
struct target {
	pid_t tg_pid;           /* 0: no process (list FILE, trace -c) */
	const struct pm_objects *tg_maps;  /* objects of tg_pid, or NULL */
};

struct provider {
	const char *pv_name;    /* prefix of PROBE: "usdt" */
	const char *pv_syntax;  /* for usage: "usdt:PATH:PROVIDER:NAME" */
	const char *pv_usage;   /* for usage, after it: "PROVIDER, NAME: globs" */
	int pv_listed;          /* `list` shows its sites (pid: every function
				 * would be listed, so no) */
	/*
	 * Append every site matching @req to @out, in the objects
	 * target_resolve (target.h) says PATH means, each site with @req's
	 * options.  Returns the number of sites added (0 is not an error
	 * here: the caller says "no probe matches"), or -errno after a
	 * message naming the object and reason.
	 */
	int (*pv_resolve)(const struct probe_req *req, const struct target *tg,
			  struct site_set *out);
	/*
	 * Append every site of one object (@path as opened, @shown as the
	 * user sees it).  Returns sites added or -errno with a message,
	 * none if @quiet (an object of a process that need not have any).
	 */
	int (*pv_list)(const char *path, const char *shown, int quiet,
		       struct site_set *out);
};

/* NULL-terminated, in providers.c. */
extern const struct provider *const pc_providers[];
const struct provider *provider_find(const char *name);

/* Split "kind:path:a:b" (path may not contain ':'); 0 or -EINVAL + message
 * or -ENOMEM.  @req is zeroed first, so it can be freed either way. */
int  probe_req_parse(const char *text, struct probe_req *req);
void probe_req_free(struct probe_req *req);
/* Free each of @n requests (parsed or still zeroed) and the array. */
void probe_reqs_free(struct probe_req *v, int n);

#endif
