/*
 * prov_usdt.c — the USDT provider: probes from .note.stapsdt.
 *
 * Kernel mechanism: one uprobe per site at the note's pc (as a file offset
 * through PT_LOAD), with the semaphore's file offset as the uprobe's
 * ref_ctr_offset (Linux 4.20+) when the note names one.  The kernel keys
 * uprobes by (inode, offset), so a site in a library fires in every
 * process that maps it, including those that map it after we attach.
 *
 * Probe syntax: usdt:PATH:PROVIDER:NAME, PROVIDER and NAME shell globs.
 * PATH names objects as target.h says: with -p PID through /proc/PID/root,
 * and "*" = every ELF object the process maps (those without notes are
 * passed over in silence).
 *
 * Quirks: operands the tracer cannot read (floating point, %xmm) are
 * marked per argument and reported; the other arguments keep their
 * numbers.  rip-relative and symbolic operands are resolved from the
 * object's .symtab/.dynsym at resolve time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elf.h"
#include "log.h"
#include "note.h"
#include "provider.h"
#include "spec.h"
#include "target.h"

static int sym_cb(void *ctx, const char *name, uint64_t *addr)
{
	return elf_obj_sym_addr(ctx, name, addr);
}

static int site_from_note(struct elf_obj *eo, const struct usdt_note *n,
			  const struct target_obj *ob, struct site_set *out)
{
	struct site *st = site_set_add(out);
	int nargs;

	if (!st)
		return -ENOMEM;
	st->st_path = strdup(ob->ob_shown);
	st->st_open_path = strdup(ob->ob_opened);
	st->st_provider = strdup(n->un_provider);
	st->st_name = strdup(n->un_name);
	st->st_args = strdup(n->un_args);
	if (!st->st_path || !st->st_open_path || !st->st_provider ||
	    !st->st_name || !st->st_args)
		return -ENOMEM;
	st->st_note_pc = n->un_pc;
	st->st_note_base = n->un_base;
	st->st_note_sema = n->un_sema;
	st->st_pc = n->un_pc_vaddr;
	st->st_off = n->un_pc_off;
	st->st_sema_off = n->un_sema_off;
	st->st_sema_vaddr = n->un_sema_vaddr;
	elf_obj_place(eo, &st->st_kdev, &st->st_ino);
	if (ob->ob_map) {
		st->st_pid = ob->ob_pid;
		st->st_bias = ob->ob_map->po_bias;
	}
	nargs = spec_parse(n->un_args, n->un_pc_vaddr, sym_cb, eo,
			   &st->st_spec, &st->st_bad_mask, st->st_bad_why,
			   sizeof(st->st_bad_why));
	if (nargs < 0) {
		pc_err("usdt: '%s': %s:%s: cannot parse arguments '%s': %s",
		       ob->ob_shown, n->un_provider, n->un_name, n->un_args,
		       st->st_bad_why);
		return nargs;
	}
	return 0;
}

/*
 * Sites of one object matching @prov/@name (NULL: all).  Returns the
 * number added, or -errno.  ob_quiet: an object of "*" without notes is
 * simply not a candidate.
 */
static int object_sites(const struct target_obj *ob, const char *prov,
			const char *name, struct site_set *out)
{
	struct elf_obj *eo = NULL;
	struct usdt_notes notes = { 0 };
	int err, added = 0;

	err = elf_obj_open(ob->ob_opened, ob->ob_quiet ? ELF_QUIET : 0, &eo);
	if (!err)
		err = usdt_notes_read(eo, &notes);
	if (err) {
		/* Out of memory says nothing about the object: not skipped. */
		if (ob->ob_quiet && err != -ENOMEM)
			err = 0;
		goto out;
	}
	for (size_t i = 0; i < notes.un_n; i++) {
		const struct usdt_note *n = &notes.un_v[i];

		if (prov && (!site_glob(prov, n->un_provider) ||
			     !site_glob(name, n->un_name)))
			continue;
		err = site_from_note(eo, n, ob, out);
		if (err)
			goto out;
		added++;
	}
	err = added;
out:
	usdt_notes_free(&notes);
	elf_obj_close(eo);
	return err;
}

/* target_obj_fn: the notes matching PROVIDER and NAME. */
static int usdt_obj_sites(const struct probe_req *req,
			  const struct target_obj *ob, void *ctx,
			  struct site_set *out)
{
	return object_sites(ob, req->pr_a, req->pr_b, out);
}

static int usdt_resolve(const struct probe_req *req, const struct target *tg,
			struct site_set *out)
{
	return target_resolve(req, tg, usdt_obj_sites, NULL, out);
}

static int usdt_list(const char *path, const char *shown, int quiet,
		     struct site_set *out)
{
	struct target_obj ob = { shown, path, NULL, 0, quiet };

	return object_sites(&ob, NULL, NULL, out);
}

const struct provider usdt_provider = {
	.pv_name = "usdt",
	.pv_syntax = "usdt:PATH:PROVIDER:NAME",
	.pv_usage = "PROVIDER, NAME: globs",
	.pv_listed = 1,
	.pv_resolve = usdt_resolve,
	.pv_list = usdt_list,
};
