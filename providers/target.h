/*
 * target.h — which ELF objects a PROBE's PATH means for a target.
 *
 * Every provider asks the same question before it reads a single note or
 * symbol, so the answer lives here once; a provider says only what a site
 * is in one object (its target_obj_fn).
 *
 *   no process (list FILE, trace -c, trace -a): PATH itself; '*' is
 *       refused, since there is no process whose objects it could mean.
 *   a process (trace -p, or follow.c at a barrier): the object the process
 *       maps at PATH; if none, PATH through /proc/PID/root (not mapped yet:
 *       a uprobe on the file still fires by inode once it is).  '*' is
 *       every object the process maps, each one skipped in silence when it
 *       cannot be read or holds nothing the provider looks for.
 */
#ifndef PC_TARGET_H
#define PC_TARGET_H

#include <sys/types.h>
#include "provider.h"

/* One object PATH means: how the provider opens it and names it. */
struct target_obj {
	const char *ob_shown;           /* as the user or the process sees
					 * it: the sites' st_path */
	const char *ob_opened;          /* as opened (/proc/PID/root/...) */
	const struct pm_object *ob_map; /* its mapping in ob_pid; NULL: not
					 * mapped, or no process */
	pid_t ob_pid;                   /* ob_map's process; 0 without */
	int ob_quiet;                   /* one of '*': an object that cannot
					 * be read or has no sites is no
					 * candidate, and says nothing */
};

/*
 * A provider's sites for @req in one object @ob, appended to @out; @ctx is
 * the provider's own.  Returns the number added, or -errno after a message.
 */
typedef int (*target_obj_fn)(const struct probe_req *req,
			     const struct target_obj *ob, void *ctx,
			     struct site_set *out);

/*
 * @fn on every object @req->pr_path means for @tg.  Each site added gets
 * the request's string mask (pr_str_mask): here, once, for every provider
 * and for follow.c's late sites as for the first ones.  Returns the number
 * of sites added (0: none matched; the caller says so), or the first
 * -errno, after a message.
 */
int target_resolve(const struct probe_req *req, const struct target *tg,
		   target_obj_fn fn, void *ctx, struct site_set *out);

#endif
