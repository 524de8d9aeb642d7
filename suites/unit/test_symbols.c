/*
 * test_symbols.c — function symbols (symbols.c) and the pid provider's
 * sites (prov_pid.c), on an ELF file written here by note_elfw.h.
 *
 * Layout (ET_EXEC): one r-x PT_LOAD, file offset 0x1000 at 0x401000, so a
 * function's uprobe offset is its address - 0x400000.
 *   .text  AX 0x401000 (off 0x1000) 0x800    .plt AX 0x401800    .data WA 0x401900
 * .symtab: f_one (0x401000, 0x20), f_two LOCAL (0x401020, 0x10), alias_a
 *   WEAK + alias_b (both 0x401040, 0x30), dup (0x4010a0, size 0), two
 *   LOCAL static_x (0x4010c0, 0x4010d0), and what must be left out:
 *   an ifunc, an object, an undefined function, a function in .plt, one
 *   in .data, one at value 0, one SHN_ABS.
 * .dynsym: f_one again (one entry), dup with size 8 (the larger wins),
 *   only_dyn (0x4010e0, 0x10), and a compat f_one@OLD at 0x4010f0 whose
 *   .gnu.version entry is hidden (left out).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "note_elfw.h"
#include "elf.h"
#include "log.h"
#include "provider.h"
#include "spec.h"
#include "symbols.h"

static char tmpdir[64], elfpath[PATH_MAX];

enum { SEC_TEXT = 1, SEC_PLT = 2, SEC_DATA = 3 };

static void sym(struct nw_buf *tab, struct nw_buf *str, const char *name,
		int bind, int type, uint16_t shndx, uint64_t value,
		uint64_t size)
{
	Elf64_Sym s = {
		.st_name = name ? nw_str(str, name) : 0,
		.st_info = ELF64_ST_INFO(bind, type),
		.st_shndx = shndx,
		.st_value = value,
		.st_size = size,
	};

	nw_put(tab, &s, sizeof(s));
}

static void write_fixture(void)
{
	static struct nw_buf st, ss, dt, ds;
	struct nw_elf e = { .nw_type = ET_EXEC, .nw_size = 0x3000, .nw_nph = 1 };
	/* The last .dynsym f_one is a non-default version (f_one@OLD). */
	static const uint16_t versym[] = { 0, 1, 2, 2, 0x8003 };
	struct nw_sec *s;

	sym(&st, &ss, NULL, 0, 0, SHN_UNDEF, 0, 0);
	sym(&st, &ss, "f_one", STB_GLOBAL, STT_FUNC, SEC_TEXT, 0x401000, 0x20);
	sym(&st, &ss, "f_two", STB_LOCAL, STT_FUNC, SEC_TEXT, 0x401020, 0x10);
	sym(&st, &ss, "alias_b", STB_GLOBAL, STT_FUNC, SEC_TEXT, 0x401040, 0x30);
	sym(&st, &ss, "alias_a", STB_WEAK, STT_FUNC, SEC_TEXT, 0x401040, 0x30);
	sym(&st, &ss, "ifn", STB_GLOBAL, STT_GNU_IFUNC, SEC_TEXT, 0x401080, 8);
	sym(&st, &ss, "obj", STB_GLOBAL, STT_OBJECT, SEC_DATA, 0x401900, 8);
	sym(&st, &ss, "undef", STB_GLOBAL, STT_FUNC, SHN_UNDEF, 0, 0);
	sym(&st, &ss, "in_plt", STB_LOCAL, STT_FUNC, SEC_PLT, 0x401810, 0x10);
	sym(&st, &ss, "in_data", STB_LOCAL, STT_FUNC, SEC_DATA, 0x401910, 0x10);
	sym(&st, &ss, "at_zero", STB_LOCAL, STT_FUNC, SEC_TEXT, 0, 0x10);
	sym(&st, &ss, "absolute", STB_GLOBAL, STT_FUNC, SHN_ABS, 0x401090, 4);
	sym(&st, &ss, "dup", STB_GLOBAL, STT_FUNC, SEC_TEXT, 0x4010a0, 0);
	sym(&st, &ss, "static_x", STB_LOCAL, STT_FUNC, SEC_TEXT, 0x4010c0, 4);
	sym(&st, &ss, "static_x", STB_LOCAL, STT_FUNC, SEC_TEXT, 0x4010d0, 4);
	sym(&dt, &ds, NULL, 0, 0, SHN_UNDEF, 0, 0);
	sym(&dt, &ds, "f_one", STB_GLOBAL, STT_FUNC, SEC_TEXT, 0x401000, 0x20);
	sym(&dt, &ds, "dup", STB_GLOBAL, STT_FUNC, SEC_TEXT, 0x4010a0, 8);
	sym(&dt, &ds, "only_dyn", STB_GLOBAL, STT_FUNC, SEC_TEXT, 0x4010e0, 0x10);
	sym(&dt, &ds, "f_one", STB_GLOBAL, STT_FUNC, SEC_TEXT, 0x4010f0, 0x10);

	e.nw_ph[0] = nw_load(PF_R | PF_X, 0x1000, 0x401000, 0x1000, 0x1000);
	nw_add_sec(&e, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
		   0x401000, 0x1000, NULL, 0x800);
	nw_add_sec(&e, ".plt", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
		   0x401800, 0x1800, NULL, 0x100);
	nw_add_sec(&e, ".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE,
		   0x401900, 0x1900, NULL, 0x100);
	s = nw_add_sec(&e, ".symtab", SHT_SYMTAB, 0, 0, 0x2000, st.nb_b, st.nb_n);
	s->ns_link = 5, s->ns_entsize = sizeof(Elf64_Sym), s->ns_info = 1;
	nw_add_sec(&e, ".strtab", SHT_STRTAB, 0, 0, 0x2400, ss.nb_b, ss.nb_n);
	s = nw_add_sec(&e, ".dynsym", SHT_DYNSYM, SHF_ALLOC, 0, 0x2800, dt.nb_b, dt.nb_n);
	s->ns_link = 7, s->ns_entsize = sizeof(Elf64_Sym), s->ns_info = 1;
	nw_add_sec(&e, ".dynstr", SHT_STRTAB, SHF_ALLOC, 0, 0x2c00, ds.nb_b, ds.nb_n);
	s = nw_add_sec(&e, ".gnu.version", SHT_GNU_versym, SHF_ALLOC, 0, 0x2e00,
		       versym, sizeof(versym));
	s->ns_link = 6, s->ns_entsize = 2;
	snprintf(elfpath, sizeof(elfpath), "%s/fn.elf", tmpdir);
	if (nw_write(&e, elfpath)) {
		printf("Bail out! cannot write %s: %s\n", elfpath, strerror(errno));
		exit(2);
	}
}

/* A stripped object: no .symtab, no .dynsym; no function, and nothing
 * to sort or free (func_syms_free must take the empty set). */
static void test_func_syms_none(void)
{
	struct nw_elf e = { .nw_type = ET_EXEC, .nw_size = 0x3000, .nw_nph = 1 };
	struct elf_obj *eo = NULL;
	struct func_syms fss;
	char path[sizeof(tmpdir) + 16];

	e.nw_ph[0] = nw_load(PF_R | PF_X, 0x1000, 0x401000, 0x1000, 0x1000);
	snprintf(path, sizeof(path), "%s/nosym.elf", tmpdir);
	if (nw_write(&e, path)) {
		UNIT_TRUE(0, "write the symbol-less fixture");
		return;
	}
	UNIT_EQ_INT(elf_obj_open(path, 0, &eo), 0, "open a symbol-less ELF");
	if (eo) {
		UNIT_EQ_INT(func_syms_read(eo, &fss), 0, "func_syms_read of a symbol-less ELF");
		UNIT_EQ_INT(fss.fss_n, 0, "a symbol-less ELF has no function");
		func_syms_free(&fss);
		elf_obj_close(eo);
	}
	unlink(path);
}

/* A second symbol table libelf cannot read (entry size 0) after a good
 * one: -ENOEXEC, and nothing of the first kept (ustack keeps an object
 * without symbols on it, relying on that). */
static void test_func_syms_bad_second(void)
{
	static struct nw_buf st, ss;
	struct nw_elf e = { .nw_type = ET_EXEC, .nw_size = 0x3000, .nw_nph = 1 };
	struct elf_obj *eo = NULL;
	struct func_syms fss;
	struct nw_sec *sec;
	char path[sizeof(tmpdir) + 16];

	sym(&st, &ss, NULL, 0, 0, SHN_UNDEF, 0, 0);
	sym(&st, &ss, "f_one", STB_GLOBAL, STT_FUNC, 1, 0x401000, 0x20);
	e.nw_ph[0] = nw_load(PF_R | PF_X, 0x1000, 0x401000, 0x1000, 0x1000);
	nw_add_sec(&e, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x401000, 0x1000, NULL, 0x800);
	sec = nw_add_sec(&e, ".symtab", SHT_SYMTAB, 0, 0, 0x2000, st.nb_b, st.nb_n);
	sec->ns_link = 3, sec->ns_entsize = sizeof(Elf64_Sym), sec->ns_info = 1;
	nw_add_sec(&e, ".strtab", SHT_STRTAB, 0, 0, 0x2400, ss.nb_b, ss.nb_n);
	sec = nw_add_sec(&e, ".dynsym", SHT_DYNSYM, SHF_ALLOC, 0, 0x2800, st.nb_b, st.nb_n);
	sec->ns_link = 3, sec->ns_entsize = 0, sec->ns_info = 1;
	snprintf(path, sizeof(path), "%s/bad2.elf", tmpdir);
	if (nw_write(&e, path) || elf_obj_open(path, 0, &eo)) {
		UNIT_TRUE(0, "write and open the fixture with a bad second symbol table");
		unlink(path);
		return;
	}
	unit_quiet(1);
	UNIT_EQ_INT(func_syms_read(eo, &fss), -ENOEXEC, "a symbol table of entry size 0 after a good one: -ENOEXEC");
	unit_quiet(0);
	UNIT_TRUE(fss.fss_n == 0 && fss.fss_v == NULL, "... and nothing of the good one kept");
	elf_obj_close(eo);
	unlink(path);
}

static void test_func_syms(void)
{
	static const struct { const char *n; uint64_t a, sz; } want[] = {
		{ "f_one", 0x401000, 0x20 },    { "f_two", 0x401020, 0x10 },
		{ "alias_a", 0x401040, 0x30 },  { "alias_b", 0x401040, 0x30 },
		{ "dup", 0x4010a0, 8 },         { "static_x", 0x4010c0, 4 },
		{ "static_x", 0x4010d0, 4 },    { "only_dyn", 0x4010e0, 0x10 },
	};
	struct elf_obj *eo = NULL;
	struct func_syms fss;
	char what[96];

	UNIT_EQ_INT(elf_obj_open(elfpath, 0, &eo), 0, "open the symbol fixture");
	if (!eo)
		return;
	UNIT_EQ_INT(func_syms_read(eo, &fss), 0, "func_syms_read");
	UNIT_EQ_INT(fss.fss_n, sizeof(want) / sizeof(want[0]),
		    "functions kept: no ifunc, object, undef, .plt, .data, 0, ABS, "
		    "hidden version; symtab+dynsym deduped");
	for (size_t i = 0; i < fss.fss_n && i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(what, sizeof(what), "function %zu: name", i);
		UNIT_EQ_STR(fss.fss_v[i].fs_name, want[i].n, what);
		snprintf(what, sizeof(what), "function %zu (%s): address", i, want[i].n);
		UNIT_EQ_INT(fss.fss_v[i].fs_addr, want[i].a, what);
		snprintf(what, sizeof(what), "function %zu (%s): size", i, want[i].n);
		UNIT_EQ_INT(fss.fss_v[i].fs_size, want[i].sz, what);
	}
	func_syms_free(&fss);
	elf_obj_close(eo);
}

/* Resolve "pid:ELF:FUNC:WHERE" with @nargs; returns pv_resolve's result. */
static int resolve(const char *func, const char *where, int nargs,
		   struct site_set *ss)
{
	char text[PATH_MAX + 128];
	struct probe_req req;
	struct target tg = { 0 };
	int n;

	snprintf(text, sizeof(text), "pid:%s:%s:%s", elfpath, func, where);
	if (probe_req_parse(text, &req))
		return -1000;
	req.pr_nargs = nargs;
	n = provider_find("pid")->pv_resolve(&req, &tg, ss);
	probe_req_free(&req);
	return n;
}

static int reg(const char *name)
{
	int size, shift;

	return spec_reg_lookup(name, &size, &shift);
}

static void check_entry_spec(const struct site *st)
{
	static const char *const regs[] = { "rdi", "rsi", "rdx", "rcx", "r8", "r9" };
	const struct pc_spec *s = &st->st_spec;
	char what[64];

	UNIT_EQ_INT(s->ps_nargs, 8, "entry --args 8: 8 operands");
	for (int i = 0; i < 8; i++) {
		const struct pc_arg *a = &s->ps_args[i];

		snprintf(what, sizeof(what), "entry arg %d: kind", i);
		UNIT_EQ_INT(a->pa_kind, i < 6 ? PC_ARG_REG : PC_ARG_MEM, what);
		snprintf(what, sizeof(what), "entry arg %d: 8 bytes unsigned", i);
		UNIT_TRUE(a->pa_size == 8 && !a->pa_signed, what);
		snprintf(what, sizeof(what), "entry arg %d: register", i);
		UNIT_EQ_INT(a->pa_reg_off, reg(i < 6 ? regs[i] : "rsp"), what);
		snprintf(what, sizeof(what), "entry arg %d: displacement", i);
		UNIT_EQ_INT(a->pa_val, i < 6 ? 0 : 8 * (i - 5), what);
	}
	UNIT_EQ_STR(st->st_args, "8@%rdi 8@%rsi 8@%rdx 8@%rcx 8@%r8 8@%r9 "
		    "8@8(%rsp) 8@16(%rsp)", "entry operands as text");
	UNIT_EQ_INT(st->st_retprobe, 0, "entry: not a uretprobe");
}

static void test_resolve_entry_return(void)
{
	struct site_set ss = { 0 };

	/* A glob over two aliases: one site, the alphabetically first name. */
	UNIT_EQ_INT(resolve("alias_*", "entry", 8, &ss), 1, "alias_*: one site");
	if (ss.ss_n == 1) {
		UNIT_EQ_STR(ss.ss_v[0].st_provider, "alias_a", "alias site named alias_a");
		UNIT_EQ_STR(ss.ss_v[0].st_name, "entry", "event name entry");
		UNIT_EQ_INT(ss.ss_v[0].st_pc, 0x401040, "alias: pc");
		UNIT_EQ_INT(ss.ss_v[0].st_off, 0x1040, "alias: uprobe offset");
		check_entry_spec(&ss.ss_v[0]);
	}
	site_set_free(&ss);

	UNIT_EQ_INT(resolve("f_one", "return", 6, &ss), 1, "f_one:return: one site");
	if (ss.ss_n == 1) {
		const struct pc_spec *s = &ss.ss_v[0].st_spec;

		UNIT_EQ_INT(ss.ss_v[0].st_retprobe, 1, "return: uretprobe");
		UNIT_EQ_INT(ss.ss_v[0].st_off, 0x1000, "return: at the entry address");
		UNIT_EQ_INT(s->ps_flags & PC_SPEC_RETURN, PC_SPEC_RETURN, "return: flag");
		UNIT_EQ_INT(s->ps_nargs, 1, "return: one operand, --args ignored");
		UNIT_EQ_INT(s->ps_args[0].pa_reg_off, reg("rax"), "return: %rax");
		UNIT_TRUE(s->ps_args[0].pa_size == 8 && !s->ps_args[0].pa_signed,
			  "return: 8 bytes unsigned");
	}
	site_set_free(&ss);

	/* --args takes 0..PC_MAX_ARGS (12): the last six from the stack. */
	UNIT_EQ_INT(resolve("f_one", "entry", PC_MAX_ARGS, &ss), 1, "--args 12: one site");
	UNIT_EQ_INT(ss.ss_n ? ss.ss_v[0].st_spec.ps_nargs : 99, PC_MAX_ARGS,
		    "--args 12: twelve operands, the most a site has");
	UNIT_EQ_INT(ss.ss_n ? (int)ss.ss_v[0].st_spec.ps_args[11].pa_val : -1, 48,
		    "--args 12: the twelfth at 48(%rsp)");
	site_set_free(&ss);
	unit_quiet(1);
	UNIT_EQ_INT(resolve("f_one", "entry", PC_MAX_ARGS + 1, &ss), -EINVAL, "--args 13: refused");
	unit_quiet(0);
	UNIT_EQ_INT((int)ss.ss_n, 0, "--args 13: no site");
	site_set_free(&ss);

	UNIT_EQ_INT(resolve("static_x", "entry", 0, &ss), 2,
		    "two static functions of one name: two sites");
	UNIT_EQ_INT(ss.ss_n ? ss.ss_v[0].st_spec.ps_nargs : 99, 0, "--args 0: no operands");
	site_set_free(&ss);
	UNIT_EQ_INT(resolve("*", "entry", 6, &ss), 7, "'*': 8 names, 7 addresses");
	UNIT_EQ_INT(resolve("f_*", "entry", 6, &ss), 2, "f_*: f_one, f_two");
	site_set_sort(&ss);
	UNIT_EQ_INT(ss.ss_n, 7, "identical sites of two requests attached once");
	site_set_free(&ss);
	UNIT_EQ_INT(resolve("alias_b", "entry", 6, &ss), 1, "alias_b by name");
	UNIT_EQ_INT(resolve("alias_a", "entry", 6, &ss), 1, "alias_a by name");
	site_set_sort(&ss);
	UNIT_EQ_INT(ss.ss_n, 2, "two aliases named: two sites, same address");
	site_set_free(&ss);
	UNIT_EQ_INT(resolve("nosuch", "entry", 6, &ss), 0, "unknown function: no match");
	UNIT_EQ_INT(resolve("ifn", "entry", 6, &ss), 0, "ifunc resolver: no match");
	UNIT_EQ_INT(resolve("in_plt", "entry", 6, &ss), 0, ".plt: no match");
	site_set_free(&ss);
}

static void test_resolve_offsets(void)
{
	struct site_set ss = { 0 };

	UNIT_EQ_INT(resolve("f_one", "0x1F", 8, &ss), 1, "f_one:0x1F: one site");
	if (ss.ss_n == 1) {
		UNIT_EQ_STR(ss.ss_v[0].st_name, "0x1f", "offset event name, lower case");
		UNIT_EQ_INT(ss.ss_v[0].st_pc, 0x40101f, "offset: pc");
		UNIT_EQ_INT(ss.ss_v[0].st_off, 0x101f, "offset: uprobe offset");
		UNIT_EQ_INT(ss.ss_v[0].st_spec.ps_nargs, 0, "offset: no arguments");
		UNIT_EQ_INT(ss.ss_v[0].st_retprobe, 0, "offset: not a uretprobe");
	}
	site_set_free(&ss);
	UNIT_EQ_INT(resolve("dup", "0x7", 6, &ss), 1, "size from .dynsym (8): 0x7 fits");
	site_set_free(&ss);
	/* An offset may be written with all 16 digits of a 64-bit value. */
	UNIT_EQ_INT(resolve("f_one", "0x000000000000001f", 6, &ss), 1,
		    "f_one:0x000000000000001f (16 digits): one site");
	if (ss.ss_n == 1)
		UNIT_EQ_STR(ss.ss_v[0].st_name, "0x1f", "... named 0x1f");
	site_set_free(&ss);
	unit_quiet(1);
	UNIT_EQ_INT(resolve("f_one", "0x0000000000000001f", 6, &ss), -EINVAL,
		    "17 digits: -EINVAL (more than 64 bits)");
	UNIT_EQ_INT(resolve("f_one", "0x20", 6, &ss), -EINVAL, "offset == size: -EINVAL");
	UNIT_EQ_INT(resolve("f_*", "0x18", 6, &ss), -EINVAL,
		    "offset beyond one matched function (f_two, 0x10): -EINVAL");
	UNIT_EQ_INT(resolve("f_one", "0xzz", 6, &ss), -EINVAL, "0xzz: -EINVAL");
	UNIT_EQ_INT(resolve("f_one", "0x", 6, &ss), -EINVAL, "0x: -EINVAL");
	UNIT_EQ_INT(resolve("f_one", "16", 6, &ss), -EINVAL, "decimal: -EINVAL");
	UNIT_EQ_INT(resolve("f_one", "entry", 13, &ss), -EINVAL, "13 arguments: -EINVAL");
	UNIT_EQ_INT(resolve("f_one", "entry", -1, &ss), -EINVAL, "-1 arguments: -EINVAL");
	unit_quiet(0);
	site_set_free(&ss);
}

/* A function whose address no loadable segment holds (0x402100; the one
 * segment ends at 0x402000): refused, no site at an unset offset.  A file
 * of its own: the main fixture's counts stay as they are. */
static void test_outside_segments(void)
{
	static struct nw_buf st, ss;
	struct nw_elf e = { .nw_type = ET_EXEC, .nw_size = 0x3000, .nw_nph = 1 };
	struct site_set sites = { 0 };
	char keep[PATH_MAX];
	struct nw_sec *s;

	sym(&st, &ss, NULL, 0, 0, SHN_UNDEF, 0, 0);
	sym(&st, &ss, "beyond", STB_GLOBAL, STT_FUNC, SEC_TEXT, 0x402100, 0x10);
	e.nw_ph[0] = nw_load(PF_R | PF_X, 0x1000, 0x401000, 0x1000, 0x1000);
	nw_add_sec(&e, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
		   0x401000, 0x1000, NULL, 0x1200);
	s = nw_add_sec(&e, ".symtab", SHT_SYMTAB, 0, 0, 0x2400, st.nb_b, st.nb_n);
	s->ns_link = 3, s->ns_entsize = sizeof(Elf64_Sym), s->ns_info = 1;
	nw_add_sec(&e, ".strtab", SHT_STRTAB, 0, 0, 0x2800, ss.nb_b, ss.nb_n);
	snprintf(keep, sizeof(keep), "%s", elfpath);
	snprintf(elfpath, sizeof(elfpath), "%s/outside.elf", tmpdir);
	if (nw_write(&e, elfpath)) {
		UNIT_TRUE(0, "write outside.elf");
		return;
	}
	unit_capture(1);
	UNIT_EQ_INT(resolve("beyond", "entry", 0, &sites), -ENOEXEC,
		    "a function outside every segment: -ENOEXEC");
	unit_capture(0);
	UNIT_TRUE(strstr(unit_captured, "beyond at 0x402100 is in no loadable segment") != NULL,
		  "it is named with its address");
	site_set_free(&sites);
	unlink(elfpath);
	snprintf(elfpath, sizeof(elfpath), "%s", keep);
}

/*
 * More sections than a symbol's st_shndx can name (extended numbering:
 * e_shnum 0, the count in section 0's sh_size).  Section 0xfeff, the last
 * ordinary index, holds f_feff, a function; f_ff00 claims index 0xff00,
 * SHN_LORESERVE, which names no section even in a file that has a
 * section 0xff00: not a function of ours.  (A `>` for `>=`, or a limit
 * one lower, in sym_section_ok: bcb7cee7, b72fd79a.)
 */
enum { XN_SECS = 0xff01, XN_SHOFF = 0x2000 };

static int write_extended(const char *path)
{
	static const char names[] = "\0.shstrtab\0.symtab\0.strtab\0.x\0.text";
	static const char strs[] = "\0f_feff\0f_ff00";
	const Elf64_Sym syms[3] = {
		{ 0 },
		{ .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		  .st_shndx = 0xfeff, .st_value = 0x401000, .st_size = 0x10 },
		{ .st_name = 8, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		  .st_shndx = SHN_LORESERVE, .st_value = 0x401010, .st_size = 0x10 },
	};
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_phoff = sizeof(Elf64_Ehdr), .e_shoff = XN_SHOFF,
		.e_ehsize = sizeof(Elf64_Ehdr), .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1,
		.e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 0, .e_shstrndx = SHN_XINDEX,
	};
	Elf64_Phdr ph = nw_load(PF_R | PF_X, 0x1000, 0x401000, 0x1000, 0x1000);
	Elf64_Shdr *sh = calloc(XN_SECS, sizeof(*sh));
	int fd, bad;

	if (!sh)
		return -1;
	sh[0].sh_size = XN_SECS;
	sh[0].sh_link = 1;
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = 0x200,
			      .sh_size = sizeof(names), .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = 11, .sh_type = SHT_SYMTAB, .sh_offset = 0x300,
			      .sh_size = sizeof(syms), .sh_link = 3, .sh_info = 1,
			      .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) };
	sh[3] = (Elf64_Shdr){ .sh_name = 19, .sh_type = SHT_STRTAB, .sh_offset = 0x400,
			      .sh_size = sizeof(strs), .sh_addralign = 1 };
	for (size_t i = 4; i < XN_SECS; i++)
		sh[i] = (Elf64_Shdr){ .sh_name = 27, .sh_type = SHT_PROGBITS, .sh_addralign = 1 };
	for (size_t i = 0xfeff; i <= 0xff00; i++)
		sh[i] = (Elf64_Shdr){ .sh_name = 30, .sh_type = SHT_PROGBITS,
				      .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				      .sh_addr = 0x401000 + (i - 0xfeff) * 0x10,
				      .sh_offset = 0x1000 + (i - 0xfeff) * 0x10, .sh_size = 0x10,
				      .sh_addralign = 16 };
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bad = fd < 0 || pwrite(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	      pwrite(fd, &ph, sizeof(ph), eh.e_phoff) != sizeof(ph) ||
	      pwrite(fd, names, sizeof(names), 0x200) != sizeof(names) ||
	      pwrite(fd, syms, sizeof(syms), 0x300) != sizeof(syms) ||
	      pwrite(fd, strs, sizeof(strs), 0x400) != sizeof(strs) ||
	      pwrite(fd, sh, XN_SECS * sizeof(*sh), XN_SHOFF) != (ssize_t)(XN_SECS * sizeof(*sh));
	if (fd >= 0)
		close(fd);
	free(sh);
	return bad ? -1 : 0;
}

static void test_extended_sections(void)
{
	struct elf_obj *eo = NULL;
	struct func_syms fss = { 0 };
	char path[sizeof(tmpdir) + 16];

	snprintf(path, sizeof(path), "%s/xn.elf", tmpdir);
	if (write_extended(path)) {
		UNIT_TRUE(0, "write the fixture with 0xff01 sections");
		return;
	}
	UNIT_EQ_INT(elf_obj_open(path, 0, &eo), 0, "open an ELF with 0xff01 sections");
	if (eo) {
		UNIT_EQ_INT(func_syms_read(eo, &fss), 0, "func_syms_read of it");
		UNIT_EQ_INT(fss.fss_n, 1, "one function: f_feff in section 0xfeff; "
			    "not f_ff00, whose index 0xff00 is SHN_LORESERVE");
		UNIT_EQ_STR(fss.fss_n ? fss.fss_v[0].fs_name : "", "f_feff", "... and it is f_feff");
		func_syms_free(&fss);
		elf_obj_close(eo);
	}
	unlink(path);
}

static void test_list(void)
{
	struct site_set ss = { 0 };

	UNIT_EQ_INT(provider_find("pid")->pv_list(elfpath, "shown", 0, &ss), 7,
		    "list: one entry site per address");
	if (ss.ss_n)
		UNIT_TRUE(!strcmp(ss.ss_v[0].st_path, "shown") &&
			  ss.ss_v[0].st_spec.ps_nargs == 6,
			  "list: shown path, 6 arguments");
	site_set_free(&ss);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pc-unit-symbols-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 2;
	}
	write_fixture();
	test_func_syms();
	test_func_syms_none();
	test_func_syms_bad_second();
	test_resolve_entry_return();
	test_resolve_offsets();
	test_outside_segments();
	test_list();
	test_extended_sections();
	unlink(elfpath);
	rmdir(tmpdir);
	return unit_done();
}
