/*
 * target.c — the objects a PROBE's PATH means for a target (target.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "log.h"
#include "procmaps.h"
#include "target.h"

/*
 * @fn on one object, and the request's options on each site it added:
 * the one place they reach a site, for every provider, for the sites of
 * the first resolution as for follow.c's late ones.  pr_nargs needs the
 * provider (it shapes the pid provider's operands); pr_str_mask and
 * pr_buf_mask only the spec.
 */
static int one_object(const struct probe_req *req,
		      const struct target_obj *ob, target_obj_fn fn, void *ctx,
		      struct site_set *out)
{
	size_t first = out->ss_n;
	int n = fn(req, ob, ctx, out);

	for (size_t i = first; i < out->ss_n; i++) {
		struct pc_spec *sp = &out->ss_v[i].st_spec;

		sp->ps_str_mask = req->pr_str_mask;
		sp->ps_buf_mask = req->pr_buf_mask;
		for (int a = 0; a < PC_MAX_ARGS; a++)
			sp->ps_args[a].pa_buf_len = req->pr_buf_len[a];
	}
	return n;
}

/* '*': every object @tg's process maps; one that offers nothing is not an
 * error, since '*' never promised that each object has probes. */
static int every_object(const struct probe_req *req, const struct target *tg,
			target_obj_fn fn, void *ctx, struct site_set *out)
{
	const struct pm_objects *m = tg->tg_maps;
	int total = 0, n;

	for (size_t i = 0; i < m->po_n; i++) {
		const struct pm_object *po = &m->po_v[i];
		struct target_obj ob = { po->po_path, po->po_open_path, po,
					 tg->tg_pid, 1 };

		n = one_object(req, &ob, fn, ctx, out);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

/* An explicit PATH in @tg's process: the object mapped there, else the
 * file in the process's root: not mapped (yet), a uprobe on the file
 * still works by inode. */
static int path_in_process(const struct probe_req *req,
			   const struct target *tg, target_obj_fn fn,
			   void *ctx, struct site_set *out)
{
	const struct pm_object *po = procmaps_find(tg->tg_maps, req->pr_path);
	char opened[4096];
	struct target_obj ob = { req->pr_path, opened, NULL, 0, 0 };

	if (po) {
		ob = (struct target_obj){ po->po_path, po->po_open_path, po,
					  tg->tg_pid, 0 };
		return one_object(req, &ob, fn, ctx, out);
	}
	/* Cut short, it would name another file (or none). */
	if ((size_t)snprintf(opened, sizeof(opened), "/proc/%d/root%s",
			     tg->tg_pid, req->pr_path) >= sizeof(opened)) {
		pc_err("probe '%s': %s: '/proc/%d/root%s'", req->pr_text,
		       pc_strerror(ENAMETOOLONG), (int)tg->tg_pid, req->pr_path);
		return -ENAMETOOLONG;
	}
	return one_object(req, &ob, fn, ctx, out);
}

int target_resolve(const struct probe_req *req, const struct target *tg,
		   target_obj_fn fn, void *ctx, struct site_set *out)
{
	struct target_obj ob = { req->pr_path, req->pr_path, NULL, 0, 0 };
	int all = !strcmp(req->pr_path, "*");

	if (tg->tg_pid && tg->tg_maps)
		return all ? every_object(req, tg, fn, ctx, out) :
			     path_in_process(req, tg, fn, ctx, out);
	if (all) {
		pc_err("probe '%s': PATH '*' needs -p PID (or -c with --follow)",
		       req->pr_text);
		return -EINVAL;
	}
	return one_object(req, &ob, fn, ctx, out);
}
