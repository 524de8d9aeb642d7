/*
 * attach.h — the attach modes: how a site becomes a uprobe that runs one
 * of the session's BPF programs.
 *
 * Each mode is one file ending in its table (attach_perf.c,
 * attach_tracefs.c, attach_multi.c); attach_modes[] lists them and
 * attach_choose() is the only place "auto" is decided.  session.c is the
 * only caller of the ops: it stores each site's spec, then hands the mode
 * a batch and keeps the links the mode makes, in order, so that undoing a
 * batch is releasing its links in reverse.
 */
#ifndef PC_ATTACH_H
#define PC_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "site.h"
#include "pc_bpf.h"
#include "privs.h"

struct bpf_link;
struct bpf_program;

/* One attachment made by a mode, owned by the session until released. */
struct attach_link {
	struct bpf_link *al_link;       /* libbpf link (perf, tracefs) or NULL */
	int al_fd;                      /* raw link fd (multi) or -1 */
	void *al_priv;                  /* the mode's own (tracefs: its entry) */
	int al_places_fd;               /* by place: the map holding al_place */
	struct pc_place al_place;
};

/* Keeps a link; a mode calls it as soon as a link exists. */
typedef int (*attach_push_fn)(void *ctx, const struct attach_link *l);

/*
 * A batch: sites ar_first.. of ar_ss, the id of site i being
 * i + ar_cookie_add (the index pc_specs or pc_dlhooks is read at): its
 * BPF cookie, or, by place (ar_places_fd >= 0: a kernel without
 * bpf_cookie), the value of its place in that map (pc_bpf.h).
 */
struct attach_req {
	const struct site_set *ar_ss;
	size_t ar_first;
	uint64_t ar_cookie_add;
	pid_t ar_pid;                   /* -1: every process, else that one */
	const struct bpf_program *ar_prog;  /* loaded per ao_multi_prog */
	int ar_places_fd;               /* pc_places, or -1: by cookie */
	attach_push_fn ar_push;
	void *ar_ctx;
};

/* What a mode can do, for `features` and auto. */
enum attach_cap {
	ATTACH_CAP_NAMED = 1,           /* leaves named entries: the stash covers them */
	ATTACH_CAP_BATCH = 2,           /* one link per object: a batch fails whole */
	ATTACH_CAP_PID_ALL = 4,         /* a pid filter sees every thread */
};

struct attach_ops {
	const char *ao_name;            /* "perf", "tracefs", "multi" */
	/* Links run the *_multi programs, loaded with this expected attach
	 * type; 0: the plain programs, attached to perf events. */
	unsigned ao_multi_prog;
	/* Usable on this kernel: ATTACH_CAP_* bits, or -errno with @why set
	 * (from the feature registry, features.h). */
	int (*ao_caps)(char *why, size_t len);
	/* Before any site of a batch is opened (tracefs: stash the names).
	 * NULL: nothing to do.  0 or -errno with a message. */
	int (*ao_prepare)(const struct site *v, size_t n);
	/* Attach the batch, pushing each link as made; on failure, links
	 * already pushed stay for ao_release.  0 or -errno with a message
	 * naming the site. */
	int (*ao_open)(const struct attach_req *r);
	/* Undo @n links (closing them in reverse), then the mode's own state. */
	void (*ao_release)(struct attach_link *v, size_t n);
};

extern const struct attach_ops attach_perf_ops;
extern const struct attach_ops attach_tracefs_ops;
extern const struct attach_ops attach_multi_ops;

/* Every mode, in the order `usage` lists them; NULL-terminated. */
extern const struct attach_ops *const attach_modes[];

/* "perf, tracefs<sep>multi": every mode's name, for messages and usage. */
void attach_mode_names(char *buf, size_t len, const char *last_sep);
/* By name; "auto" and unknown names: NULL. */
const struct attach_ops *attach_mode_find(const char *name);
/*
 * The mode for @want (NULL: auto).  Auto is multi when its link works and,
 * if @per_process (sites attached with a pid), its pid filter sees every
 * thread; else perf, or tracefs where this caller may not use perf and
 * may use tracefs.  Decided from the feature registry (rows uprobe_multi,
 * uprobe_multi_pid, perf_uprobe, tracefs), said at -v.
 */
const struct attach_ops *attach_choose(const struct attach_ops *want,
				       int per_process);

/*
 * How sites are told apart at a hit.  By cookie where the kernel lets a
 * kprobe-type program read it (5.15+), else by place: the program looks
 * the hit's (device, inode, offset) up, finding the mapping with
 * bpf_find_vma (5.17+) or by walking mm->mmap (before 6.1): registry
 * rows bpf_cookie and bpf_find_vma, decided once.
 * PROBECHECK_SITE_ID=place forces places (tests of the fallback on a new
 * kernel), =cookie forces cookies.  @why: what was decided and why.
 */
enum attach_site_id {
	ATTACH_ID_COOKIE,
	ATTACH_ID_PLACE_FINDVMA,
	ATTACH_ID_PLACE_LIST,
};
enum attach_site_id attach_site_id(char *why, size_t len);

/* 1 if the site programs should run with preemption off: the kernel has
 * bpf_preempt_disable (registry row) and PROBECHECK_PREEMPT_GUARD is not
 * 0 (the K5 reproduction turns it off).  @why: the decision in words. */
int attach_preempt_guard(char *why, size_t len);

/* The reason a site could not be opened, in words (EINVAL explained). */
const char *attach_site_reason(int err, const struct site *st,
			       enum priv_op op);

/* For the modes (attach_perf.c).  Report site @st failing with @err. */
void attach_site_error(const struct site *st, int err, enum priv_op op);
/* Link r->ar_prog to perf event @fd of site @i, cookie @i, and push it
 * with @priv; the link owns @fd once made, else @fd is closed here. */
int  attach_perf_link(const struct attach_req *r, size_t i, int fd,
		      void *priv);
/* By place: drop @l's place from pc_places (after its link is gone). */
void attach_place_forget(struct attach_link *l);

#endif
