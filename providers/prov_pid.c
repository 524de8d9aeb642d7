/*
 * prov_pid.c — the pid provider: function entry, return and offset probes.
 *
 * Kernel mechanism: a uprobe at a function's first instruction (entry), a
 * uretprobe on the same address (return: the kernel swaps the return
 * address on the stack at entry for a trampoline and fires when the
 * function returns through it), or a uprobe at FUNCTION+OFFSET.  Sites
 * come from the object's symbol tables (symbols.c), not from notes, so any
 * unstripped function is a probe; no semaphore is ever involved.
 *
 * Probe syntax: pid:PATH:FUNCTION:WHERE, FUNCTION a shell glob, WHERE one
 * of "entry", "return" or "0xOFFSET" (hex, relative to the function).  PATH
 * as for usdt (target.h): with -p PID resolved in the process's root, and
 * "*" = every object the process maps (those it cannot read are passed
 * over).  Events are named FUNCTION:WHERE: the site's provider field is
 * the function name and its name field the WHERE, with offsets printed as
 * 0x%llx ("main:0x1c").
 *
 * Arguments, by the SysV x86-64 calling convention, all 8 bytes unsigned:
 *   entry   N arguments (trace --args N, default 6, at most PC_MAX_ARGS):
 *           0-5 in %rdi %rsi %rdx %rcx %r8 %r9; 6 and up on the stack.  At
 *           the entry breakpoint the call has pushed the return address,
 *           so argument 6 is at 8(%rsp), 7 at 16(%rsp), ...  For a type
 *           narrower than 8 bytes the upper bits are whatever the caller
 *           left there (the ABI does not define them).
 *   return  one: %rax, the raw 64-bit register (an int returning -1 reads
 *           as 4294967295: only %eax is defined).
 *   offset  none: past the first instruction the registers no longer hold
 *           the arguments.  0x0 is the entry address under another name:
 *           it fires with entry, each site its own uprobe and its own event.
 *
 * Quirks: an offset must be below the function's st_size (else: error,
 * exit 2) and must fall on an instruction boundary, which is NOT checked
 * (no disassembler here): a mid-instruction offset puts int3 inside an
 * instruction and corrupts the traced program or is refused by the kernel.
 * Aliases (several names at one address): a FUNCTION glob matching two of
 * them gives one site, named by the alphabetically first matching name;
 * two PROBE arguments naming two aliases give two sites at the same
 * address, both fire.  A static function defined in several files is one
 * probe with several sites.  Return probes: the kernel keeps at most 64
 * pending returns per thread (MAX_URETPROBE_DEPTH), so recursion deeper
 * than that loses return events; a longjmp over a probed frame loses its
 * return too.  Symbols: see symbols.h (no ifuncs, no compat versions).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elf.h"
#include "log.h"
#include "provider.h"
#include "spec.h"
#include "symbols.h"
#include "target.h"

#define PID_NARGS_DEFAULT 6     /* trace's --args default; list uses it */

enum pid_kind { PID_ENTRY, PID_RETURN, PID_OFFSET };

/* The WHERE field, parsed. */
struct pid_where {
	enum pid_kind pw_kind;
	uint64_t pw_off;        /* PID_OFFSET */
	int      pw_nargs;      /* PID_ENTRY */
	char     pw_name[24];   /* event name: entry, return, 0x1c */
};

/* The argument registers of the SysV x86-64 ABI, in order. */
static const char *const pid_arg_regs[] = {
	"%rdi", "%rsi", "%rdx", "%rcx", "%r8", "%r9",
};

static int pid_parse_where(const struct probe_req *req, struct pid_where *w)
{
	const char *s = req->pr_b;

	memset(w, 0, sizeof(*w));
	if (!strcmp(s, "entry") || !strcmp(s, "return")) {
		w->pw_kind = !strcmp(s, "entry") ? PID_ENTRY : PID_RETURN;
		w->pw_nargs = req->pr_nargs;
		snprintf(w->pw_name, sizeof(w->pw_name), "%s", s);
		if (w->pw_nargs < 0 || w->pw_nargs > PC_MAX_ARGS) {
			pc_err("probe '%s': %d arguments: at most %d",
			       req->pr_text, w->pw_nargs, PC_MAX_ARGS);
			return -EINVAL;
		}
		return 0;
	}
	/* Hex digits only: strtoull alone would take " -1" too. */
	if (strncmp(s, "0x", 2) || !s[2] || strlen(s + 2) > 16 ||
	    strspn(s + 2, "0123456789abcdefABCDEF") != strlen(s + 2)) {
		pc_err("probe '%s': '%s' is not entry, return or 0xOFFSET",
		       req->pr_text, s);
		return -EINVAL;
	}
	w->pw_kind = PID_OFFSET;
	w->pw_off = strtoull(s + 2, NULL, 16);
	snprintf(w->pw_name, sizeof(w->pw_name), "0x%llx",
		 (unsigned long long)w->pw_off);
	return 0;
}

/* "8@%rdi 8@%rsi ... 8@8(%rsp) ..." for @nargs entry arguments. */
static void pid_entry_ops(int nargs, char *buf, size_t len)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (int i = 0; i < nargs && pos < len; i++) {
		if (i < 6)
			pos += snprintf(buf + pos, len - pos, "%s8@%s",
					i ? " " : "", pid_arg_regs[i]);
		else
			pos += snprintf(buf + pos, len - pos, " 8@%d(%%rsp)",
					8 * (i - 5));
	}
}

/*
 * The site's operands, written as a note's operand string (kept in
 * st_args, so `list` shows what is fetched) and turned into the BPF spec
 * by the same parser as USDT operands.
 */
static int pid_site_spec(struct site *st, const struct pid_where *w)
{
	char ops[256], why[160];
	int n;

	if (w->pw_kind == PID_ENTRY)
		pid_entry_ops(w->pw_nargs, ops, sizeof(ops));
	else
		snprintf(ops, sizeof(ops), "%s",
			 w->pw_kind == PID_RETURN ? "8@%rax" : "");
	st->st_args = strdup(ops);
	if (!st->st_args)
		return -ENOMEM;
	n = spec_parse(ops, st->st_pc, NULL, NULL, &st->st_spec,
		       &st->st_bad_mask, why, sizeof(why));
	if (n < 0 || st->st_bad_mask) {
		pc_err("pid: internal: operands '%s': %s", ops, why);
		return n < 0 ? n : -EINVAL;
	}
	if (w->pw_kind == PID_RETURN) {
		st->st_retprobe = 1;
		st->st_spec.ps_flags |= PC_SPEC_RETURN;
	}
	return 0;
}

static int pid_site_add(struct elf_obj *eo, const struct target_obj *o,
			const struct func_sym *fs, const struct pid_where *w,
			struct site_set *out)
{
	struct site *st;
	uint64_t pc = fs->fs_addr + w->pw_off;

	if (w->pw_kind == PID_OFFSET && w->pw_off >= fs->fs_size) {
		pc_err("pid: '%s': %s+%s: offset beyond the function's 0x%llx "
		       "bytes", o->ob_shown, fs->fs_name, w->pw_name,
		       (unsigned long long)fs->fs_size);
		return -EINVAL;
	}
	st = site_set_add(out);
	if (!st)
		return -ENOMEM;
	st->st_path = strdup(o->ob_shown);
	st->st_open_path = strdup(o->ob_opened);
	st->st_provider = strdup(fs->fs_name);
	st->st_name = strdup(w->pw_name);
	if (!st->st_path || !st->st_open_path || !st->st_provider ||
	    !st->st_name)
		return -ENOMEM;
	st->st_pc = pc;
	st->st_note_pc = pc;
	elf_obj_place(eo, &st->st_kdev, &st->st_ino);
	if (elf_obj_vaddr_to_off(eo, pc, &st->st_off)) {
		pc_err("pid: '%s': %s at 0x%llx is in no loadable segment",
		       o->ob_shown, fs->fs_name, (unsigned long long)pc);
		return -ENOEXEC;
	}
	if (o->ob_map) {
		st->st_pid = o->ob_pid;
		st->st_bias = o->ob_map->po_bias;
	}
	return pid_site_spec(st, w);
}

/*
 * Sites of one object for functions matching @glob (NULL: all).  Symbols
 * are sorted by (address, name), so the first match at an address is the
 * alphabetically first alias: one site per address.  Returns the number
 * added or -errno.  ob_quiet: an object of "*" that cannot be read is not
 * a candidate.
 */
static int pid_object_sites(const struct target_obj *o, const char *glob,
			    const struct pid_where *w, struct site_set *out)
{
	struct elf_obj *eo = NULL;
	struct func_syms fss = { 0 };
	int err, added = 0;
	uint64_t last = 0;

	err = elf_obj_open(o->ob_opened, o->ob_quiet ? ELF_QUIET : 0, &eo);
	if (!err)
		err = func_syms_read(eo, &fss);
	if (err) {
		/* Out of memory says nothing about the object: not skipped. */
		if (o->ob_quiet && err != -ENOMEM)
			err = 0;
		goto out;
	}
	for (size_t i = 0; i < fss.fss_n; i++) {
		const struct func_sym *fs = &fss.fss_v[i];

		if ((added && fs->fs_addr == last) ||
		    (glob && !site_glob(glob, fs->fs_name)))
			continue;
		err = pid_site_add(eo, o, fs, w, out);
		if (err)
			goto out;
		last = fs->fs_addr;
		added++;
	}
	err = added;
out:
	func_syms_free(&fss);
	elf_obj_close(eo);
	return err;
}

/* target_obj_fn: the functions matching FUNCTION, at WHERE (@ctx). */
static int pid_obj_sites(const struct probe_req *req,
			 const struct target_obj *ob, void *ctx,
			 struct site_set *out)
{
	return pid_object_sites(ob, req->pr_a, ctx, out);
}

/* WHERE first: a bad one is refused before any object is looked for. */
static int pid_resolve(const struct probe_req *req, const struct target *tg,
		       struct site_set *out)
{
	struct pid_where w;
	int err;

	err = pid_parse_where(req, &w);
	if (err)
		return err;
	return target_resolve(req, tg, pid_obj_sites, &w, out);
}

/* Every function's entry, with the default arguments. */
static int pid_list(const char *path, const char *shown, int quiet,
		    struct site_set *out)
{
	struct pid_where w = { .pw_kind = PID_ENTRY,
			       .pw_nargs = PID_NARGS_DEFAULT,
			       .pw_name = "entry" };
	struct target_obj o = { shown, path, NULL, 0, quiet };

	return pid_object_sites(&o, NULL, &w, out);
}

const struct provider pid_provider = {
	.pv_name = "pid",
	.pv_syntax = "pid:PATH:FUNCTION:entry|return|0xOFF",
	.pv_usage = "FUNCTION: glob",
	.pv_resolve = pid_resolve,
	.pv_list = pid_list,
};
