/*
 * test_nomem.c — out-of-memory paths of the readers: every allocation in
 * turn is made to fail (nomem.h), and the code under test must answer
 * -ENOMEM and give back all it took (nothing leaks on the way out).
 * test_nomemprov.c does the same for what is built on them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/sdt.h>
#include "nomem.h"
#include "attach_tracefs.h"
#include "elf.h"
#include "ustack.h"
#include "follow.h"
#include "idcount.h"
#include "note.h"
#include "procmaps.h"
#include "provider.h"
#include "spec.h"
#include "stash.h"
#include "symbols.h"

#ifndef NOMEM_SKIP
/*
 * probe_req_parse: fail its k-th allocation for k = 0, 1, ... until it
 * succeeds.  Each failed call is -ENOMEM and frees the fields it had
 * already copied; the successful one's fields all go with probe_req_free.
 */
static void test_probe_req_parse(void)
{
	const char *text = "usdt:/bin/true:prov:name";
	struct probe_req req;
	char what[160];
	long before, after;
	int rc = -ENOMEM, k, failed = 0;

	for (k = 0; k < 64 && rc == -ENOMEM; k++) {
		before = live;
		countdown = k;
		rc = probe_req_parse(text, &req);
		countdown = -1;
		if (!rc)
			probe_req_free(&req);
		after = live;
		if (rc) {
			failed++;
			snprintf(what, sizeof(what),
				 "probe_req_parse, allocation %d fails: -ENOMEM", k);
			UNIT_EQ_INT(rc, -ENOMEM, what);
		} else {
			UNIT_EQ_STR(req.pr_kind, NULL, "probe_req_free zeroes the request");
		}
		snprintf(what, sizeof(what), "probe_req_parse, allocation %d fails: "
			 "nothing left allocated", k);
		if (!rc)
			snprintf(what, sizeof(what), "probe_req_parse succeeds with %d "
				 "allocations: probe_req_free frees them all", k);
		UNIT_EQ_INT(after - before, 0, what);
	}
	UNIT_EQ_INT(rc, 0, "probe_req_parse succeeds once allocations do");
	/* If none failed, the countdown never reached the allocator. */
	/* Four fields, each its own string: four allocations to fail. */
	UNIT_TRUE(failed >= 4, "every field's allocation was made to fail");
}

/*
 * probe_req_parse refusing a probe after it copied all four fields (an
 * unknown kind, an empty last field): -EINVAL, every copy given back.
 */
static void test_probe_req_refused(void)
{
	static const char *const bad[] = {
		"nosuch:/bin/true:prov:name", "usdt:/bin/true:prov:",
		"usdt::prov:name", "usdt:/bin/true:prov:name:extra",
	};
	struct probe_req req;
	char what[160];
	long before;

	unit_quiet(1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		before = live;
		snprintf(what, sizeof(what), "probe_req_parse '%s': -EINVAL", bad[i]);
		UNIT_EQ_INT(probe_req_parse(bad[i], &req), -EINVAL, what);
		snprintf(what, sizeof(what), "probe_req_parse '%s': nothing left allocated", bad[i]);
		UNIT_EQ_INT(live - before, 0, what);
	}
	unit_quiet(0);
}

/*
 * follow_open with a '*' probe (the follow itself, its table of the '*'
 * requests; the requests are the caller's, parsed before): every
 * allocation failure is -ENOMEM with nothing left; the successful one is
 * undone by follow_close.
 */
static void test_follow_open(void)
{
	struct probe_req req = { .pr_text = "usdt:*:prov:name", .pr_kind = "usdt",
				 .pr_path = "*", .pr_a = "prov", .pr_b = "name" };
	struct follow_opts o = { .fo_attach_pid = -1, .fo_reqs = &req, .fo_nreqs = 1 };
	struct site_set ss = { 0 };
	struct follow *f;
	char what[160];
	long before;
	int rc = -ENOMEM, k, failed = 0;

	for (k = 0; k < 64 && rc == -ENOMEM; k++) {
		before = live;
		countdown = k;
		rc = follow_open(&o, &ss, &f);
		countdown = -1;
		if (!rc) {
			UNIT_TRUE(f != NULL, "follow_open: a '*' probe makes a follow");
			follow_close(f);
		} else {
			failed++;
			snprintf(what, sizeof(what), "follow_open, allocation %d fails: -ENOMEM", k);
			UNIT_EQ_INT(rc, -ENOMEM, what);
		}
		snprintf(what, sizeof(what), "follow_open, allocation %d %s: nothing left allocated",
			 k, rc ? "fails" : "not needed");
		UNIT_EQ_INT(live - before, 0, what);
	}
	UNIT_EQ_INT(rc, 0, "follow_open succeeds once allocations do");
	UNIT_TRUE(failed >= 2, "the follow's and its request table's allocations were made to fail");
}


/* usdt_notes_read on this binary's own notes (three probes below). */
static int notes_run(void *ctx)
{
	struct usdt_notes n;
	int rc = usdt_notes_read(ctx, &n);

	if (!rc) {
		/* A tolerated failure must not cost a note. */
		UNIT_EQ_INT((int)n.un_n, 3, "usdt_notes_read: this binary's three notes");
		usdt_notes_free(&n);
	}
	return rc;
}

static void test_usdt_notes_read(void)
{
	struct elf_obj *eo = NULL;
	struct sweep sw = { "usdt_notes_read", NULL, notes_run, NULL, NULL, 4, 0 };

	DTRACE_PROBE1(nomem, one, 1);
	DTRACE_PROBE2(nomem, two, 1, 2);
	DTRACE_PROBE3(nomem, three, 1, 2, 3);
	if (elf_obj_open("/proc/self/exe", 0, &eo)) {
		UNIT_TRUE(0, "usdt_notes_read: this binary opens");
		return;
	}
	sw.ctx = eo;
	/* Once first: libelf reads the section's data into memory of its
	 * own, which is not ours to count. */
	notes_run(eo);
	sweep(&sw);
	elf_obj_close(eo);
}

/* func_syms_read on this binary's symbol table; its count when every
 * allocation succeeds is what a tolerated failure must still give. */
struct syms_ctx {
	struct elf_obj *eo;
	size_t want;
};

static int syms_run(void *ctx)
{
	struct syms_ctx *c = ctx;
	struct func_syms fss = { 0 };
	int rc = func_syms_read(c->eo, &fss);

	if (!rc) {
		if (c->want)
			UNIT_EQ_INT((int)fss.fss_n, (int)c->want, "func_syms_read: every function");
		c->want = fss.fss_n;
		func_syms_free(&fss);
	}
	return rc;
}

/* The same on a file opened anew for every run: libelf then loads the
 * symbol and string tables under the countdown too (once loaded, they
 * stay with the handle, and a failure inside elf_strptr never comes). */
static void syms_fresh_prepare(void *ctx)
{
	struct syms_ctx *c = ctx;

	if (elf_obj_open("/proc/self/exe", 0, &c->eo))
		c->eo = NULL;
}

static int syms_fresh_run(void *ctx)
{
	struct syms_ctx *c = ctx;

	return c->eo ? syms_run(ctx) : -EIO;
}

static void syms_fresh_after(void *ctx)
{
	struct syms_ctx *c = ctx;

	elf_obj_close(c->eo);
	c->eo = NULL;
}

static void test_func_syms_read(void)
{
	static struct syms_ctx c;
	struct sweep sw = { "func_syms_read", NULL, syms_run, NULL, &c, 3, 0 };

	if (elf_obj_open("/proc/self/exe", 0, &c.eo)) {
		UNIT_TRUE(0, "func_syms_read: this binary opens");
		return;
	}
	UNIT_EQ_INT(syms_run(&c), 0, "func_syms_read: this binary's functions");
	UNIT_TRUE(c.want > 20, "func_syms_read: more than 20 functions here");
	sweep(&sw);
	elf_obj_close(c.eo);
	c.eo = NULL;
	{
		struct sweep fresh = { "func_syms_read, the file opened anew", syms_fresh_prepare,
				       syms_fresh_run, syms_fresh_after, &c, 3, 0 };

		sweep(&fresh);
	}
}

/* elf_obj_open of this binary (libelf's allocations are counted too).
 * libelf says "out of memory" for most of its own failures (-ENOMEM
 * here, not a corrupt file: elf.c elf_failed) but "invalid operand" for
 * one of them (elfutils 0.188): -ENOEXEC is let through for that one. */
/* The program headers of a good open, for a success to be compared with:
 * a failure inside libelf's reading of them must not open an object
 * whose headers are zeros. */
static GElf_Phdr eo_ref[32];
static size_t eo_nref;

static int eo_run(void *ctx)
{
	struct elf_obj *eo = NULL;
	int rc = elf_obj_open("/proc/self/exe", 0, &eo);

	(void)ctx;
	if (!rc && eo_nref &&
	    (eo->eo_nphdr != eo_nref || memcmp(eo->eo_phdrs, eo_ref, eo_nref * sizeof(*eo_ref))))
		UNIT_TRUE(0, "elf_obj_open: a success has the object's own program headers");
	if (!rc)
		elf_obj_close(eo);
	else
		UNIT_TRUE(eo == NULL, "elf_obj_open: a failure leaves *out NULL");
	return rc;
}

static void test_elf_obj_open(void)
{
	struct elf_obj *eo = NULL;

	if (!elf_obj_open("/proc/self/exe", 0, &eo) && eo->eo_nphdr <= 32) {
		eo_nref = eo->eo_nphdr;
		memcpy(eo_ref, eo->eo_phdrs, eo_nref * sizeof(*eo_ref));
	}
	elf_obj_close(eo);
	UNIT_TRUE(eo_nref > 0, "elf_obj_open: our own program headers, for reference");
	struct sweep sw = { "elf_obj_open", NULL, eo_run, NULL, NULL, 4, -ENOEXEC };

	sweep(&sw);
}

/* spec_parse of six operands, one of them symbolic. */
static int sym_addr(void *ctx, const char *name, uint64_t *addr)
{
	(void)ctx;
	if (strcmp(name, "counter"))
		return -ENOENT;
	*addr = 0x4000;
	return 0;
}

static int spec_run(void *ctx)
{
	struct pc_spec spec;
	uint32_t bad = 0;
	char why[128] = "";
	int rc;

	(void)ctx;
	memset(&spec, 0, sizeof(spec));
	rc = spec_parse("-4@%eax 8@-8(%rbp) 4@$5 -8@counter(%rip) 1@%dl 2@%r9w",
			0x1000, sym_addr, NULL, &spec, &bad, why, sizeof(why));
	if (rc < 0)
		return rc;
	UNIT_EQ_INT(rc, 6, "spec_parse: six operands");
	UNIT_EQ_INT((int)bad, 0, "spec_parse: every operand readable");
	return 0;
}

static void test_spec_parse(void)
{
	struct sweep sw = { "spec_parse", NULL, spec_run, NULL, NULL, 1, 0 };

	sweep(&sw);
}

/* procmaps_parse of maps text with four objects (one mapped twice). */
struct pm_ctx {
	FILE *f;
};

static const char pm_text[] =
	"55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 1001 /usr/bin/a\n"
	"55d0c0a01000-55d0c0a02000 r-xp 00001000 fd:01 1001 /usr/bin/a\n"
	"7f0000000000-7f0000001000 r-xp 00000000 fd:01 1002 /usr/lib/libb.so\n"
	"7f0000100000-7f0000101000 r-xp 00000000 fd:01 1003 /usr/lib/libc.so\n"
	"7f0000200000-7f0000201000 r-xp 00000000 fd:01 1004 /usr/lib/libd.so\n"
	"7ffd00000000-7ffd00001000 rw-p 00000000 00:00 0 [stack]\n";

static void pm_prepare(void *ctx)
{
	struct pm_ctx *c = ctx;

	c->f = fmemopen((void *)pm_text, sizeof(pm_text) - 1, "r");
}

static int pm_run(void *ctx)
{
	struct pm_ctx *c = ctx;
	struct pm_objects o = { 0 };
	int rc;

	if (!c->f)
		return -EIO;
	rc = procmaps_parse(c->f, 1, PM_QUIET, "maps", &o);
	if (!rc) {
		UNIT_EQ_INT((int)o.po_n, 4, "procmaps_parse: four objects");
		procmaps_free(&o);
	}
	return rc;
}

static void pm_after(void *ctx)
{
	struct pm_ctx *c = ctx;

	if (c->f)
		fclose(c->f);
	c->f = NULL;
}

/* Its first allocation is getline's: it once ended the file there. */
/* stash_record_parse of a record with 20 tracefs items (its list of
 * items grows past 16): parsed in place, so prepare() copies the text. */
struct rec_ctx {
	struct tracer_id id;
	char text[4096];
	char buf[4096];
};

static void rec_prepare(void *ctx)
{
	struct rec_ctx *c = ctx;

	memcpy(c->buf, c->text, sizeof(c->buf));
}

static int rec_run(void *ctx)
{
	struct rec_ctx *c = ctx;
	const char *why = NULL;
	char **items = NULL;
	size_t n = 0;
	int rc = stash_record_parse(c->buf, &c->id, &items, &n, &why);

	if (!rc) {
		UNIT_EQ_INT((int)n, 20, "stash_record_parse: twenty items");
		free(items);
	}
	return rc;
}

static void test_stash_record_parse(void)
{
	static struct rec_ctx c = { .id = { 4242, 777 } };
	struct sweep sw = { "stash_record_parse", rec_prepare, rec_run, NULL, &c, 2, 0 };
	char group[64], event[96];
	size_t len;

	tfs_group_name(&c.id, group, sizeof(group));
	len = (size_t)snprintf(c.text, sizeof(c.text), "probecheck-stash 1\ntracer 4242 777\n");
	for (int i = 1; i <= 20; i++) {
		tfs_event_name(0x801, 0x1234, (uint64_t)i * 16, 0, 0, event, sizeof(event));
		len += (size_t)snprintf(c.text + len, sizeof(c.text) - len, "tracefs %s/%s\n",
					group, event);
	}
	sweep(&sw);
}

static void test_procmaps_parse(void)
{
	struct pm_ctx c = { NULL };
	struct sweep sw = { "procmaps_parse", pm_prepare, pm_run, pm_after, &c, 3, 0 };
	/* An empty line is malformed, not the end of the file. */
	static const char gap[] =
		"55d0c0a01000-55d0c0a02000 r-xp 00001000 fd:01 1001 /usr/bin/a\n"
		"\n"
		"7f0000000000-7f0000001000 r-xp 00000000 fd:01 1002 /usr/lib/libb.so\n";
	struct pm_objects o = { 0 };
	FILE *f;

	sweep(&sw);
	f = fmemopen((void *)gap, sizeof(gap) - 1, "r");
	UNIT_TRUE(f != NULL, "fmemopen of maps text with an empty line");
	if (!f)
		return;
	UNIT_EQ_INT(procmaps_parse(f, 1, PM_QUIET, "maps", &o), -EINVAL,
		    "procmaps_parse: an empty line between two mappings: -EINVAL, never a shorter list");
	fclose(f);
}


/* A symbolizer made, one of our own functions resolved through it (its
 * maps, its object, symbols and build ID read), and one address nothing
 * maps: every allocation of that failing in turn is -ENOMEM. */
static int ustack_run(void *ctx)
{
	struct ustack_syms *z = NULL;
	struct ustack_frame f;
	uint64_t pc = (uint64_t)(uintptr_t)ustack_run + 1;
	int rc;

	(void)ctx;
	rc = ustack_syms_new(&z);
	if (!rc)
		rc = ustack_resolve(z, getpid(), pc, &f);
	if (!rc && (!f.uf_sym || strcmp(f.uf_sym, "ustack_run") || !f.uf_build_id))
		rc = -EINVAL;   /* a success must be the whole answer */
	if (!rc)
		rc = ustack_resolve(z, getpid(), 0x10, &f);
	ustack_syms_free(z);
	return rc;
}

/* A failure of libelf's own allocations may read as a corrupt object
 * (procmaps.h): that frame is then unresolved (-EINVAL above); ours must
 * be -ENOMEM. */
static void test_ustack_resolve(void)
{
	struct sweep sw = { "ustack_resolve", NULL, ustack_run, NULL, NULL, 3, -EINVAL };

	sweep(&sw);
}

#endif

#ifndef NOMEM_SKIP
/* id_counts_add: its one allocation failing is -ENOMEM, the counts as
 * they were (the id already counted once stays at 1). */
static int ic_run(void *ctx)
{
	struct id_counts *c = ctx;
	int err = id_counts_add(c, 3, 100);

	if (err)
		return err;
	err = id_counts_add(c, 80, 100);
	UNIT_TRUE(!err || (id_counts_get(c, 3) == 1 && id_counts_get(c, 80) == 0 && c->ic_n == 67),
		  "id_counts_add failing: the table as it was");
	return err;
}

static void ic_after(void *ctx)
{
	id_counts_free(ctx);
}

static void test_id_counts_add(void)
{
	struct id_counts c = { 0 };
	struct sweep sw = { "id_counts_add", NULL, ic_run, ic_after, &c, 2, 0 };

	sweep(&sw);
}
#endif

int main(void)
{
#ifdef NOMEM_SKIP
	UNIT_TRUE(1, "allocation failures # SKIP the sanitizer owns malloc");
#else
	if (allocator_is_ours()) {
		test_probe_req_parse();
		test_probe_req_refused();
		test_follow_open();
		test_usdt_notes_read();
		test_procmaps_parse();
		test_stash_record_parse();
		test_func_syms_read();
		test_spec_parse();
		test_elf_obj_open();
		test_ustack_resolve();
		test_id_counts_add();
	}
	else
		UNIT_TRUE(1, "allocation failures # SKIP malloc is not ours (valgrind?)");
#endif
	return unit_done();
}
