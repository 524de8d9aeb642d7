/*
 * test_outputs.c — what a provider function writes is all its own: an
 * output struct's bytes do not depend on what the caller's memory held
 * before the call (stack garbage, a reused struct, a heap block a realloc
 * handed over), and a free leaves its struct all zeros, ready to be used
 * again.  Each case runs once over 0xa5 bytes and once over zeros and the
 * two results must be byte-identical; malloc'd memory is 0xa5 too
 * (M_PERTURB), so a byte the code leaves unset shows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "provider.h"
#include "site.h"
#include "spec.h"
#include "stash.h"
#include "symbols.h"
#include "elf.h"
#include "ustack.h"
#include "note.h"
#include "procmaps.h"

#define POISON 0xa5

static int all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* Frees that leave nothing behind: a struct with nothing in it (NULL
 * pointers, count 0) but garbage in its capacity is zero afterwards. */
static void test_frees(void)
{
	struct site_set ss;
	struct func_syms fss;
	struct probe_req req;

	memset(&ss, POISON, sizeof(ss));
	ss.ss_v = NULL;
	ss.ss_n = 0;
	site_set_free(&ss);
	UNIT_TRUE(all_zero(&ss, sizeof(ss)), "site_set_free: every byte of the set zero");
	memset(&fss, POISON, sizeof(fss));
	fss.fss_v = NULL;
	fss.fss_n = 0;
	func_syms_free(&fss);
	UNIT_TRUE(all_zero(&fss, sizeof(fss)), "func_syms_free: every byte zero");
	memset(&req, POISON, sizeof(req));
	req.pr_kind = req.pr_path = req.pr_a = req.pr_b = NULL;
	probe_req_free(&req);
	UNIT_TRUE(all_zero(&req, sizeof(req)), "probe_req_free: every byte zero");
}

/* A set's new sites are zero in every byte, in a block realloc filled
 * with 0xa5, and a freed set takes sites again. */
static void test_site_add(void)
{
	struct site_set ss = { 0 };
	int zero = 1;

	for (int i = 0; i < 40; i++) {
		struct site *st = site_set_add(&ss);

		if (!st || !all_zero(st, sizeof(*st)))
			zero = 0;
		if (st)
			st->st_pc = (uint64_t)i + 1;
	}
	UNIT_TRUE(zero, "site_set_add: 40 new sites, each zero in every byte");
	site_set_free(&ss);
	UNIT_TRUE(site_set_add(&ss) != NULL && ss.ss_n == 1, "a freed set takes a site again");
	site_set_free(&ss);
}

/* One operand and one argument list parsed over 0xa5 and over zeros. */
static void test_spec(void)
{
	struct pc_arg a1, a0;
	struct pc_spec s1, s0;
	uint32_t bad1 = 0, bad0 = 0;
	char why[128];
	const char *ops[] = { "-4@%edi", "8@-16(%rbp)", "1@$7", "-8@8(%rax,%rbx,4)" };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		char what[96];

		memset(&a1, POISON, sizeof(a1));
		memset(&a0, 0, sizeof(a0));
		spec_parse_arg(ops[i], 0x1000, NULL, NULL, &a1, why, sizeof(why));
		spec_parse_arg(ops[i], 0x1000, NULL, NULL, &a0, why, sizeof(why));
		snprintf(what, sizeof(what), "spec_parse_arg '%s': the same bytes over 0xa5 and zeros", ops[i]);
		UNIT_TRUE(!memcmp(&a1, &a0, sizeof(a1)), what);
	}
	memset(&s1, POISON, sizeof(s1));
	memset(&s0, 0, sizeof(s0));
	spec_parse("-4@%edi 8@-16(%rbp)", 0x1000, NULL, NULL, &s1, &bad1, why, sizeof(why));
	spec_parse("-4@%edi 8@-16(%rbp)", 0x1000, NULL, NULL, &s0, &bad0, why, sizeof(why));
	/* Its other fields are the caller's (spec.c). */
	UNIT_TRUE(!memcmp(s1.ps_args, s0.ps_args, sizeof(s1.ps_args)) &&
		  s1.ps_nargs == s0.ps_nargs && bad1 == bad0,
		  "spec_parse of two operands: the same argument slots over 0xa5 and zeros");
}

/* A request parsed over 0xa5 and over zeros: its options the same. */
static void test_probe_req(void)
{
	struct probe_req r1, r0;

	memset(&r1, POISON, sizeof(r1));
	memset(&r0, 0, sizeof(r0));
	UNIT_EQ_INT(probe_req_parse("usdt:/bin/true:p:n", &r1), 0, "probe_req_parse over 0xa5");
	UNIT_EQ_INT(probe_req_parse("usdt:/bin/true:p:n", &r0), 0, "probe_req_parse over zeros");
	UNIT_TRUE(r1.pr_nargs == r0.pr_nargs && r1.pr_str_mask == r0.pr_str_mask,
		  "... the same options in both");
	probe_req_free(&r1);
	probe_req_free(&r0);
}

/* A cleanup of an empty stash reports zeros whatever the report held. */
static void test_stash_report(void)
{
	char dir[] = "/tmp/pc-outputs.XXXXXX";
	struct stash_report r1, r0;

	if (!mkdtemp(dir)) {
		UNIT_TRUE(0, "a stash directory");
		return;
	}
	setenv("PROBECHECK_STASH", dir, 1);
	memset(&r1, POISON, sizeof(r1));
	memset(&r0, 0, sizeof(r0));
	UNIT_EQ_INT(stash_cleanup(NULL, 1, &r1), 0, "stash_cleanup of an empty stash, over 0xa5");
	UNIT_EQ_INT(stash_cleanup(NULL, 1, &r0), 0, "... and over zeros");
	UNIT_TRUE(all_zero(&r1, sizeof(r1)) && all_zero(&r0, sizeof(r0)),
		  "... each report all zeros");
	unsetenv("PROBECHECK_STASH");
	rmdir(dir);
}

/* A frame in this executable resolved over 0xa5 and over zeros. */
static void test_ustack_frame(void)
{
	struct ustack_syms *z = NULL;
	struct ustack_frame f1, f0;
	uint64_t pc = (uint64_t)(uintptr_t)test_ustack_frame + 4;

	UNIT_EQ_INT(ustack_syms_new(&z), 0, "a symbolizer");
	memset(&f1, POISON, sizeof(f1));
	memset(&f0, 0, sizeof(f0));
	UNIT_EQ_INT(ustack_resolve(z, getpid(), pc, &f1), 0, "a frame of ours, over 0xa5");
	UNIT_EQ_INT(ustack_resolve(z, getpid(), pc, &f0), 0, "... and over zeros");
	UNIT_TRUE(!memcmp(&f1, &f0, sizeof(f1)), "... the same bytes");
	UNIT_TRUE(f0.uf_sym && !strcmp(f0.uf_sym, "test_ustack_frame"), "... in test_ustack_frame");
	/* An address nothing maps: a frame of nulls, whatever f held. */
	memset(&f1, POISON, sizeof(f1));
	memset(&f0, 0, sizeof(f0));
	UNIT_EQ_INT(ustack_resolve(z, getpid(), 0x10, &f1), 0, "an address nothing maps, over 0xa5");
	UNIT_EQ_INT(ustack_resolve(z, getpid(), 0x10, &f0), 0, "... and over zeros");
	UNIT_TRUE(!memcmp(&f1, &f0, sizeof(f1)) && !f0.uf_obj && !f0.uf_sym && !f0.uf_build_id,
		  "... the same bytes: no object, no symbol, no build ID");
	ustack_syms_free(z);
}

/* Readers that fail or find nothing leave an empty result, whatever
 * their output held (a caller frees it by its counts). */
static void test_empty_results(void)
{
	struct usdt_notes un;
	struct func_syms f1, f0;
	struct pm_objects pm;
	struct elf_obj *eo = NULL;

	UNIT_EQ_INT(elf_obj_open("/proc/self/exe", 0, &eo), 0, "our own executable opened");
	if (!eo)
		return;
	memset(&un, POISON, sizeof(un));
	unit_quiet(1);
	UNIT_EQ_INT(usdt_notes_read(eo, &un), -ENODATA, "usdt_notes_read of an object without notes: -ENODATA");
	unit_quiet(0);
	UNIT_TRUE(all_zero(&un, sizeof(un)), "... and no notes, over 0xa5");
	memset(&f1, POISON, sizeof(f1));
	memset(&f0, 0, sizeof(f0));
	UNIT_EQ_INT(func_syms_read(eo, &f1), 0, "func_syms_read over 0xa5");
	UNIT_EQ_INT(func_syms_read(eo, &f0), 0, "... and over zeros");
	UNIT_TRUE(f1.fss_n == f0.fss_n && f1.fss_cap == f0.fss_cap && f0.fss_n > 0,
		  "... the same count and capacity");
	func_syms_free(&f1);
	func_syms_free(&f0);
	elf_obj_close(eo);
	memset(&pm, POISON, sizeof(pm));
	UNIT_EQ_INT(procmaps_read(0x7ffffff0, PM_QUIET, &pm), -ESRCH, "procmaps_read of no process: -ESRCH");
	UNIT_TRUE(all_zero(&pm, sizeof(pm)), "... and no objects, over 0xa5");
}

int main(void)
{
	mallopt(M_PERTURB, POISON);
	test_frees();
	test_site_add();
	test_spec();
	test_probe_req();
	test_stash_report();
	test_ustack_frame();
	test_empty_results();
	return unit_done();
}
