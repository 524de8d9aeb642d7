/*
 * test_nomem.c — out-of-memory paths: every allocation in turn is made to
 * fail, and the code under test must answer -ENOMEM and give back all it
 * took (nothing leaks on the way out).
 *
 * The test binary interposes malloc, calloc, realloc and free (glibc lets
 * an executable do that); they count live allocations and fail the one a
 * countdown picks.  strdup and strndup are the binary's own too, on top
 * of that malloc, so the count does not hang on how libc builds them.
 * Under ASan, and under valgrind (which replaces malloc and free in the
 * executable too), the allocator is not ours and the test is skipped;
 * a self-check at the start finds out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/sdt.h>
#include "unit.h"
#include "attach_tracefs.h"
#include "elf.h"
#include "follow.h"
#include "install_check.h"
#include "log.h"
#include "note.h"
#include "procmaps.h"
#include "provider.h"
#include "site.h"
#include "spec.h"
#include "stash.h"
#include "symbols.h"

#if defined(__SANITIZE_ADDRESS__)
#define NOMEM_SKIP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NOMEM_SKIP 1
#endif
#endif

#ifndef NOMEM_SKIP
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void  __libc_free(void *p);

static long live;               /* allocations not yet freed */
static long countdown = -1;     /* allocations to let through; -1: all */

/* Whether the next allocation may succeed: the countdown's one fails,
 * with errno ENOMEM as malloc's own failure sets it (getline and others
 * tell it from the end of a file by errno). */
static int may_allocate(void)
{
	if (countdown < 0)
		return 1;
	if (countdown-- == 0) {
		countdown = -1;         /* fail once, like a transient ENOMEM */
		errno = ENOMEM;
		return 0;
	}
	return 1;
}

void *malloc(size_t size)
{
	void *p = may_allocate() ? __libc_malloc(size) : NULL;

	live += p != NULL;
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p = may_allocate() ? __libc_calloc(n, size) : NULL;

	live += p != NULL;
	return p;
}

void *realloc(void *old, size_t size)
{
	void *p;

	if (!old)
		return malloc(size);
	if (!size) {
		free(old);
		return NULL;
	}
	p = may_allocate() ? __libc_realloc(old, size) : NULL;
	if (!p)
		errno = ENOMEM;         /* @old is untouched, still live */
	return p;
}

void free(void *p)
{
	live -= p != NULL;
	__libc_free(p);
}

char *strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = malloc(len + 1);

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

char *strdup(const char *s)
{
	return strndup(s, strlen(s));
}

/*
 * Whether calls to malloc and free from another object reach the ones
 * above (called through pointers the compiler cannot see through, as
 * the code under test, compiled apart, calls them).
 */
static int allocator_is_ours(void)
{
	void *(*volatile m)(size_t) = malloc;
	void (*volatile f)(void *) = free;
	long before = live, taken;
	void *p = m(1);

	taken = live - before;
	f(p);
	return taken == 1 && live == before;
}

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

/*
 * sweep: fail the k-th allocation of run() for k = 0, 1, ... until run()
 * makes fewer than k + 1: each failure must be -ENOMEM, or success where
 * the failure is tolerated (stdio falls back to an unbuffered stream; run()
 * checks the result is whole), and give back everything.  prepare() (not
 * counted) makes what run() consumes, run() frees what it made when it
 * succeeds, after() undoes prepare().  At least @min allocations must have
 * failed with -ENOMEM (the countdown reached the code).
 */
struct sweep {
	const char *name;
	void (*prepare)(void *ctx);
	int (*run)(void *ctx);
	void (*after)(void *ctx);	/* undoes prepare(), not counted */
	void *ctx;
	int min;
	int also;	/* another error a failure may give (0: none) */
};

static void sweep(const struct sweep *sw)
{
	char what[200];
	long before;
	int rc = -ENOMEM, k, failed = 0;

	for (k = 0; k < 256; k++) {
		int reached;

		before = live;	/* what prepare() makes, after() frees */
		if (sw->prepare)
			sw->prepare(sw->ctx);
		countdown = k;
		rc = sw->run(sw->ctx);
		reached = countdown == -1;	/* the k-th allocation was made */
		countdown = -1;
		if (sw->after)
			sw->after(sw->ctx);
		if (!reached)
			break;
		if (rc) {
			failed += rc == -ENOMEM;
			snprintf(what, sizeof(what), "%s, allocation %d fails: -ENOMEM", sw->name, k);
			if (sw->also && rc == sw->also)
				UNIT_TRUE(1, what);
			else
				UNIT_EQ_INT(rc, -ENOMEM, what);
		}
		snprintf(what, sizeof(what), "%s, allocation %d %s: nothing left allocated",
			 sw->name, k, rc ? "fails" : "not needed");
		UNIT_EQ_INT(live - before, 0, what);
	}
	snprintf(what, sizeof(what), "%s succeeds once allocations do (%d made)", sw->name, k);
	UNIT_EQ_INT(rc, 0, what);
	snprintf(what, sizeof(what), "%s: at least %d allocations were made to fail",
		 sw->name, sw->min);
	UNIT_TRUE(failed >= sw->min, what);
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
}

/* elf_obj_open of this binary (libelf's allocations are counted too).
 * libelf says "out of memory" for most of its own failures (-ENOMEM
 * here, not a corrupt file: elf.c elf_failed) but "invalid operand" for
 * one of them (elfutils 0.188): -ENOEXEC is let through for that one. */
static int eo_run(void *ctx)
{
	struct elf_obj *eo = NULL;
	int rc = elf_obj_open("/proc/self/exe", 0, &eo);

	(void)ctx;
	if (!rc)
		elf_obj_close(eo);
	else
		UNIT_TRUE(eo == NULL, "elf_obj_open: a failure leaves *out NULL");
	return rc;
}

static void test_elf_obj_open(void)
{
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

	sweep(&sw);
}

/*
 * stash_cleanup of a dead tracer's record (two tracefs entries that are
 * gone already): a failed allocation is -ENOMEM with the record kept for
 * the next cleanup; a success removed it.  Never a record removed whose
 * items were not all undone, never success with the record still there.
 */
struct clean_ctx {
	char dir[64];
	char rec[96];
	char items[2][192];
};

static void clean_prepare(void *ctx)
{
	struct clean_ctx *c = ctx;
	struct tracer_id id = { 4242, 777 };
	char *v[] = { c->items[0], c->items[1] };

	unit_quiet(1);
	stash_record_write(&id, v, 2);
	unit_quiet(0);
}

static int clean_run(void *ctx)
{
	struct clean_ctx *c = ctx;
	struct stash_report r;
	int rc, kept;

	rc = stash_cleanup(NULL, 1, &r);
	kept = !access(c->rec, F_OK);
	if (!rc)
		UNIT_TRUE(!kept && r.sr_removed == 1, "stash_cleanup succeeded: the record removed");
	else if (!kept)
		UNIT_TRUE(0, "stash_cleanup failed: the record kept for the next one");
	return rc;
}

static void clean_after(void *ctx)
{
	unlink(((struct clean_ctx *)ctx)->rec);
}

static void test_stash_cleanup(void)
{
	static struct clean_ctx c;
	struct tracer_id id = { 4242, 777 };
	struct sweep sw = { "stash_cleanup", clean_prepare, clean_run, clean_after, &c, 3, 0 };
	char group[64], event[96];

	if (access("/sys/kernel/tracing/uprobe_events", W_OK)) {
		UNIT_TRUE(1, "stash_cleanup # SKIP uprobe_events is not writable");
		return;
	}
	snprintf(c.dir, sizeof(c.dir), "/tmp/pc-nomem-stash.%d", (int)getpid());
	snprintf(c.rec, sizeof(c.rec), "%s/4242-777", c.dir);
	if (mkdir(c.dir, 0700) || setenv("PROBECHECK_STASH", c.dir, 1)) {
		UNIT_TRUE(0, "stash_cleanup: a stash of our own");
		return;
	}
	tfs_group_name(&id, group, sizeof(group));
	for (int i = 0; i < 2; i++) {
		tfs_event_name(0x801, 0x1234, 16 * (uint64_t)(i + 1), 0, 0, event, sizeof(event));
		snprintf(c.items[i], sizeof(c.items[i]), "tracefs %s/%s", group, event);
	}
	sweep(&sw);
	UNIT_EQ_INT(rmdir(c.dir), 0, "stash_cleanup: nothing left in the stash");
	unsetenv("PROBECHECK_STASH");
}

/*
 * A provider resolving a probe into sites (target_resolve, the notes or
 * the symbol table, the operands): in a file, in a process (its maps
 * read before, not counted), and '*' (every object the process maps,
 * each one quiet).  A failed allocation is -ENOMEM (or libelf's
 * -ENOEXEC, elf_obj_open above); a success is whole: every site.
 */
struct res_ctx {
	const char *text;
	struct target tg;
	int want;               /* sites a success must give */
	struct probe_req req;
};

static void res_prepare(void *ctx)
{
	struct res_ctx *c = ctx;

	if (probe_req_parse(c->text, &c->req))
		memset(&c->req, 0, sizeof(c->req));
}

static int res_run(void *ctx)
{
	struct res_ctx *c = ctx;
	const struct provider *pv = provider_find(c->req.pr_kind ? c->req.pr_kind : "");
	struct site_set out = { 0 };
	char what[200];
	int rc;

	if (!pv)
		return -EINVAL;
	unit_quiet(1);
	rc = pv->pv_resolve(&c->req, &c->tg, &out);
	unit_quiet(0);
	if (rc >= 0) {
		snprintf(what, sizeof(what), "%s%s: all %d sites, none dropped (%zu)",
			 c->text, c->tg.tg_pid ? " (in a process)" : "", c->want, out.ss_n);
		UNIT_TRUE(rc == c->want && (int)out.ss_n == c->want, what);
		rc = 0;
	}
	site_set_free(&out);
	return rc;
}

static void res_after(void *ctx)
{
	probe_req_free(&((struct res_ctx *)ctx)->req);
}

static void resolve_sweep(const char *text, const struct pm_objects *maps, int want)
{
	struct res_ctx c = { text, { maps ? getpid() : 0, maps }, want, { 0 } };
	struct sweep sw = { text, res_prepare, res_run, res_after, &c, 3, -ENOEXEC };

	sweep(&sw);
}

/* The pid provider's probe: a function of our own the compiler keeps. */
__attribute__((noinline, used)) void nomem_pid_target(void)
{
	__asm__ volatile("");
}

static void test_provider_resolve(void)
{
	struct pm_objects maps = { 0 };

	if (procmaps_read(getpid(), 0, &maps)) {
		UNIT_TRUE(0, "provider resolve: our own maps");
		return;
	}
	resolve_sweep("usdt:/proc/self/exe:nomem:*", NULL, 3);
	resolve_sweep("usdt:/proc/self/exe:nomem:*", &maps, 3);
	resolve_sweep("usdt:*:nomem:*", &maps, 3);
	resolve_sweep("pid:/proc/self/exe:nomem_pid_target:entry", NULL, 1);
	resolve_sweep("pid:/proc/self/exe:nomem_pid_target:entry", &maps, 1);
	/* '*' over every object of ours would read libc's thousands of
	 * symbols per allocation swept: over our executable alone. */
	{
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		const struct pm_object *po;

		self[n > 0 ? n : 0] = '\0';
		po = procmaps_find(&maps, self);
		if (po) {
			struct pm_objects exe = { (struct pm_object *)po, 1 };

			resolve_sweep("pid:*:nomem_pid_target:entry", &exe, 1);
		} else {
			UNIT_TRUE(0, "our executable among our maps");
		}
	}
	procmaps_free(&maps);
}

/*
 * The install check: install_check_here maps each object once and reads
 * its sites (no uprobe here: each reads as dropped, -PC_ENOTSUPP, the
 * verdict a run must keep); install_check_pid reads the target's maps
 * first (our own pid: every object mapped, nothing to check, 0).  An
 * allocation failure is -ENOMEM, never a verdict on the sites: with the
 * objects opened for their bias, libelf's "corrupt ELF file" on a failed
 * allocation dropped our own executable from our maps, and the check
 * probed it as an object we did not map (PM_NOBIAS, procmaps.h).
 */
static void ic_add(struct site_set *ss, const char *path, uint64_t off)
{
	struct site *st = site_set_add(ss);

	if (!st)
		return;
	st->st_path = strdup(path);
	st->st_open_path = strdup(path);
	st->st_provider = strdup("unit");
	st->st_name = strdup("site");
	st->st_args = strdup("");
	st->st_off = off;
}

static int ic_here_run(void *ctx)
{
	int rc;

	unit_quiet(1);
	rc = install_check_here(ctx, 0, NULL);
	unit_quiet(0);
	return rc == -PC_ENOTSUPP ? 0 : rc ? rc : -EINVAL;
}

static int ic_pid_run(void *ctx)
{
	int rc;

	unit_quiet(1);
	rc = install_check_pid(ctx, 0, getpid());
	unit_quiet(0);
	return rc;
}

static void test_install_check(void)
{
	struct site_set ss = { 0 };
	struct sweep here = { "install_check_here", NULL, ic_here_run, NULL, &ss, 1, 0 };
	struct sweep pid = { "install_check_pid", NULL, ic_pid_run, NULL, &ss, 2, 0 };

	/* Objects we map (an unmapped one would be probed in the kernel). */
	ic_add(&ss, "/proc/self/exe", 0x40);
	ic_add(&ss, "/proc/self/exe", 0x80);
	ic_add(&ss, "/proc/self/exe", 0xc0);
	if (ss.ss_n != 3) {
		UNIT_TRUE(0, "install check: a site set of three");
		site_set_free(&ss);
		return;
	}
	sweep(&here);
	sweep(&pid);
	site_set_free(&ss);
}
#endif

int main(void)
{
#ifdef NOMEM_SKIP
	UNIT_TRUE(1, "allocation failures # SKIP the sanitizer owns malloc");
#else
	if (allocator_is_ours()) {
		test_probe_req_parse();
		test_follow_open();
		test_usdt_notes_read();
		test_procmaps_parse();
		test_stash_record_parse();
		test_func_syms_read();
		test_spec_parse();
		test_elf_obj_open();
		test_install_check();
		test_provider_resolve();
		test_stash_cleanup();
	}
	else
		UNIT_TRUE(1, "allocation failures # SKIP malloc is not ours (valgrind?)");
#endif
	return unit_done();
}
