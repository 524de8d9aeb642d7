/*
 * test_note.c — ELF reading, stapsdt notes and /proc/PID/maps.
 *
 * Every ELF file here is written at test time by note_elfw.h with a layout
 * chosen so that wrong arithmetic gives a different number: segments whose
 * p_vaddr - p_offset differ from one another (as lld emits), a semaphore in
 * a data segment with its own delta, notes whose base disagrees with
 * .stapsdt.base.  Expected values are worked out by hand in the comments.
 * Files live in a mkdtemp() directory under /tmp and are removed at exit.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "unit.h"
#include "note_elfw.h"
#include "elf.h"
#include "note.h"
#include "procmaps.h"
#include "log.h"
#include "provider.h"
#include "site.h"
#include "target.h"

static char tmpdir[64];

static const char *tpath(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", tmpdir, name);
	return p;
}

/* ---- stderr capture: expected errors are checked, not printed ---------- */

static char cap_buf[4096];
static int cap_fd = -1, cap_saved = -1;

static void cap_begin(void)
{
	fflush(stderr);
	cap_fd = open(tpath("stderr"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	cap_saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
	dup2(cap_fd, 2);
}

static const char *cap_end(void)
{
	ssize_t n;

	fflush(stderr);
	dup2(cap_saved, 2);
	close(cap_saved);
	n = pread(cap_fd, cap_buf, sizeof(cap_buf) - 1, 0);
	cap_buf[n > 0 ? n : 0] = '\0';
	close(cap_fd);
	unlink(tpath("stderr"));
	return cap_buf;
}

static void check_msg(const char *msg, const char *needle, const char *what)
{
	int ok = strstr(msg, needle) != NULL;

	UNIT_TRUE(ok, what);
	if (!ok)
		printf("#   wanted '%s' in stderr: '%s'\n", needle, msg);
}

/* Open expecting failure @err; returns the captured message. */
static const char *open_fails(const char *path, int err, const char *what)
{
	struct elf_obj *eo = (void *)1;
	const char *msg;
	int rc;

	cap_begin();
	rc = elf_obj_open(path, 0, &eo);
	msg = cap_end();
	UNIT_EQ_INT(rc, err, what);
	UNIT_TRUE(eo == NULL, "failed open leaves *out NULL");
	if (!rc)
		elf_obj_close(eo);
	return msg;
}

static struct elf_obj *open_ok(const char *path, const char *what)
{
	struct elf_obj *eo = NULL;

	UNIT_EQ_INT(elf_obj_open(path, 0, &eo), 0, what);
	return eo;
}

/* ---- layouts ------------------------------------------------------------ */

static const unsigned char zeros[0x400];

enum base_mode { BASE_AT_SECTION, BASE_SECTION_ADDR_ZERO, BASE_NO_SECTION };

/*
 * ET_EXEC as GNU ld lays it out.  Text segment: vaddr = 0x400000 + offset.
 * Data segment: vaddr = 0x401000 + offset, so 0x403010 (.probes) is at file
 * offset 0x2010; its bss runs from 0x403100 to 0x404000.
 *   PT_LOAD r-x off 0x0000 va 0x400000 filesz 0x2000 memsz 0x2000
 *   PT_LOAD rw- off 0x2000 va 0x403000 filesz 0x0100 memsz 0x1000
 * .stapsdt.base at 0x400f00, .text at 0x401000, notes at offset 0x1800.
 */
static void exec_layout(struct nw_elf *e, const struct nw_buf *notes,
			enum base_mode bm)
{
	memset(e, 0, sizeof(*e));
	e->nw_type = ET_EXEC;
	e->nw_size = 0x2100;
	e->nw_nph = 2;
	e->nw_ph[0] = nw_load(PF_R | PF_X, 0, 0x400000, 0x2000, 0x2000);
	e->nw_ph[1] = nw_load(PF_R | PF_W, 0x2000, 0x403000, 0x100, 0x1000);
	nw_add_sec(e, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
		   0x401000, 0x1000, zeros, 0x100);
	if (bm != BASE_NO_SECTION)
		nw_add_sec(e, ".stapsdt.base", SHT_PROGBITS, SHF_ALLOC,
			   bm == BASE_AT_SECTION ? 0x400f00 : 0, 0xf00, zeros, 1);
	if (notes) {
		if (notes->nb_n > 0x800)
			abort();
		nw_add_sec(e, ".note.stapsdt", SHT_NOTE, 0, 0, 0x1800,
			   notes->nb_b, notes->nb_n);
	}
	nw_add_sec(e, ".probes", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE,
		   0x403010, 0x2010, zeros, 0x10);
	nw_add_sec(e, ".bss", SHT_NOBITS, SHF_ALLOC | SHF_WRITE,
		   0x403100, 0x2100, NULL, 0x100);
}

/*
 * ET_DYN as lld lays it out: segments are not page-aligned in the file and
 * each has its own vaddr - offset (0, 0x1000, 0x2000).
 *   PT_LOAD r-- off 0x000 va 0x0000 filesz 0x5a4
 *   PT_LOAD r-x off 0x5b0 va 0x15b0 filesz 0x200
 *   PT_LOAD rw- off 0x7b0 va 0x27b0 filesz 0x040 memsz 0x100
 * .stapsdt.base at 0x5a0, notes at offset 0x800.
 */
static void lld_layout(struct nw_elf *e, const struct nw_buf *notes)
{
	memset(e, 0, sizeof(*e));
	e->nw_type = ET_DYN;
	e->nw_size = 0x900;
	e->nw_nph = 3;
	e->nw_ph[0] = nw_load(PF_R, 0, 0, 0x5a4, 0x5a4);
	e->nw_ph[1] = nw_load(PF_R | PF_X, 0x5b0, 0x15b0, 0x200, 0x200);
	e->nw_ph[2] = nw_load(PF_R | PF_W, 0x7b0, 0x27b0, 0x40, 0x100);
	nw_add_sec(e, ".stapsdt.base", SHT_PROGBITS, SHF_ALLOC, 0x5a0, 0x5a0,
		   zeros, 1);
	nw_add_sec(e, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
		   0x15b0, 0x5b0, zeros, 0x200);
	nw_add_sec(e, ".probes", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE,
		   0x27b0, 0x7b0, zeros, 0x10);
	if (notes)
		nw_add_sec(e, ".note.stapsdt", SHT_NOTE, 0, 0, 0x800,
			   notes->nb_b, notes->nb_n);
}

/*
 * ET_DYN as GNU ld lays out a PIE: page-aligned segments, the data segment
 * one page further in vaddr than in the file.
 *   PT_LOAD r-- off 0x0000 va 0x0000 filesz 0x600
 *   PT_LOAD r-x off 0x1000 va 0x1000 filesz 0x200
 *   PT_LOAD rw- off 0x2df0 va 0x3df0 filesz 0x220 memsz 0x300
 */
static void gnu_pie_layout(struct nw_elf *e)
{
	memset(e, 0, sizeof(*e));
	e->nw_type = ET_DYN;
	e->nw_size = 0x3010;
	e->nw_nph = 3;
	e->nw_ph[0] = nw_load(PF_R, 0, 0, 0x600, 0x600);
	e->nw_ph[1] = nw_load(PF_R | PF_X, 0x1000, 0x1000, 0x200, 0x200);
	e->nw_ph[2] = nw_load(PF_R | PF_W, 0x2df0, 0x3df0, 0x220, 0x300);
	nw_add_sec(e, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
		   0x1000, 0x1000, zeros, 0x200);
}

static const char *write_elf(const struct nw_elf *e, const char *name)
{
	const char *p = tpath(name);

	if (nw_write(e, p)) {
		printf("Bail out! cannot write %s: %s\n", p, strerror(errno));
		exit(2);
	}
	return p;
}

/* Read notes expecting success. */
static int notes_of(const char *path, struct usdt_notes *n)
{
	struct elf_obj *eo = NULL;
	int rc;

	memset(n, 0, sizeof(*n));
	rc = elf_obj_open(path, 0, &eo);
	if (rc)
		return rc;
	rc = usdt_notes_read(eo, n);
	elf_obj_close(eo);
	return rc;
}

/* Read notes expecting failure; returns the captured message. */
static const char *notes_fail(const char *path, int err, const char *what)
{
	struct usdt_notes n;
	const char *msg;
	int rc;

	cap_begin();
	rc = notes_of(path, &n);
	msg = cap_end();
	UNIT_EQ_INT(rc, err, what);
	UNIT_TRUE(n.un_n == 0 && n.un_v == NULL, "failed read leaves no notes");
	if (!rc)
		usdt_notes_free(&n);
	return msg;
}

/* ---- elf.c -------------------------------------------------------------- */

static void test_vaddr_to_off(void)
{
	static const struct { uint64_t va; int rc; uint64_t off; } xc[] = {
		{ 0x400000, 0, 0x0 },      { 0x401010, 0, 0x1010 },
		{ 0x401fff, 0, 0x1fff },   { 0x402000, -ERANGE, 0 }, /* gap */
		{ 0x403000, 0, 0x2000 },   { 0x403010, 0, 0x2010 },
		{ 0x4030ff, 0, 0x20ff },   { 0x403100, -ERANGE, 0 }, /* bss */
		{ 0x403fff, -ERANGE, 0 },  { 0x404000, -ERANGE, 0 },
		{ 0x3fffff, -ERANGE, 0 },  { 0, -ERANGE, 0 },
	}, lc[] = {
		{ 0x0, 0, 0x0 },           { 0x5a3, 0, 0x5a3 },
		{ 0x5a4, -ERANGE, 0 },     { 0x15af, -ERANGE, 0 },
		{ 0x15b0, 0, 0x5b0 },      { 0x17af, 0, 0x7af },
		{ 0x17b0, -ERANGE, 0 },    { 0x27b0, 0, 0x7b0 },
		{ 0x27ef, 0, 0x7ef },      { 0x27f0, -ERANGE, 0 }, /* bss */
	};
	struct nw_elf e;
	struct elf_obj *eo;
	char what[128];
	size_t i;

	exec_layout(&e, NULL, BASE_AT_SECTION);
	eo = open_ok(write_elf(&e, "exec.elf"), "open ET_EXEC");
	if (eo) {
		UNIT_EQ_INT(eo->eo_ehdr.e_type, ET_EXEC, "ET_EXEC: e_type");
		UNIT_EQ_INT(eo->eo_nphdr, 2, "ET_EXEC: program headers copied");
		UNIT_EQ_INT(eo->eo_phdrs[1].p_vaddr, 0x403000, "ET_EXEC: phdr[1].p_vaddr");
		UNIT_EQ_INT(eo->eo_phdrs[1].p_offset, 0x2000, "ET_EXEC: phdr[1].p_offset");
		for (i = 0; i < sizeof(xc) / sizeof(xc[0]); i++) {
			uint64_t off = 0xdead;
			int rc = elf_obj_vaddr_to_off(eo, xc[i].va, &off);

			snprintf(what, sizeof(what), "ET_EXEC: vaddr 0x%llx -> rc",
				 (unsigned long long)xc[i].va);
			UNIT_EQ_INT(rc, xc[i].rc, what);
			snprintf(what, sizeof(what), "ET_EXEC: vaddr 0x%llx -> offset",
				 (unsigned long long)xc[i].va);
			if (!xc[i].rc)
				UNIT_EQ_INT(off, xc[i].off, what);
		}
		elf_obj_close(eo);
	}

	lld_layout(&e, NULL);
	eo = open_ok(write_elf(&e, "lld.elf"), "open lld-style ET_DYN");
	if (eo) {
		UNIT_EQ_INT(eo->eo_ehdr.e_type, ET_DYN, "lld: e_type");
		for (i = 0; i < sizeof(lc) / sizeof(lc[0]); i++) {
			uint64_t off = 0xdead;
			int rc = elf_obj_vaddr_to_off(eo, lc[i].va, &off);

			snprintf(what, sizeof(what), "lld: vaddr 0x%llx -> rc",
				 (unsigned long long)lc[i].va);
			UNIT_EQ_INT(rc, lc[i].rc, what);
			snprintf(what, sizeof(what), "lld: vaddr 0x%llx -> offset",
				 (unsigned long long)lc[i].va);
			if (!lc[i].rc)
				UNIT_EQ_INT(off, lc[i].off, what);
		}
		elf_obj_close(eo);
	}
}

static void test_sections(void)
{
	struct nw_elf e;
	struct elf_obj *eo;
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;

	exec_layout(&e, NULL, BASE_AT_SECTION);
	eo = open_ok(write_elf(&e, "sec.elf"), "open for sections");
	if (!eo)
		return;
	UNIT_EQ_INT(elf_obj_find_section(eo, ".probes", &sh, &scn), 0,
		    "section .probes found");
	UNIT_EQ_INT(sh.sh_addr, 0x403010, ".probes sh_addr");
	UNIT_EQ_INT(sh.sh_offset, 0x2010, ".probes sh_offset");
	UNIT_TRUE(scn != NULL, ".probes Elf_Scn returned");
	UNIT_EQ_INT(elf_obj_find_section(eo, ".stapsdt.base", &sh, NULL), 0,
		    "section .stapsdt.base found");
	UNIT_EQ_INT(sh.sh_addr, 0x400f00, ".stapsdt.base sh_addr");
	UNIT_EQ_INT(elf_obj_find_section(eo, ".probe", &sh, NULL), -ENOENT,
		    "prefix of a section name is not a match");
	UNIT_EQ_INT(elf_obj_find_section(eo, ".note.stapsdt", &sh, NULL),
		    -ENOENT, "absent section -> -ENOENT");
	elf_obj_close(eo);
}

/*
 * .symtab: main, only_symtab, both, dup twice (first wins), undef (UNDEF,
 * with a bogus value that must not be returned).  .dynsym: only_dynsym,
 * both (must lose to .symtab), undef (defined here: the answer).
 */
static void test_symbols(void)
{
	struct nw_buf st = { .nb_n = 0 }, ss = { .nb_n = 0 };
	struct nw_buf dt = { .nb_n = 0 }, ds = { .nb_n = 0 };
	static const struct { const char *n; int rc; uint64_t v; } c[] = {
		{ "main", 0, 0x401000 },        { "only_symtab", 0, 0x401050 },
		{ "only_dynsym", 0, 0x401090 }, { "both", 0, 0x401060 },
		{ "dup", 0, 0x401070 },         { "undef", 0, 0x4010b0 },
		{ "nosuch", -ENOENT, 0 },       { "", -ENOENT, 0 },
	};
	struct nw_elf e;
	struct nw_sec *s;
	struct elf_obj *eo;
	char what[96];
	size_t i, base;

	nw_sym(&st, &ss, NULL, 0, SHN_UNDEF);    /* index 0 */
	nw_sym(&st, &ss, "main", 0x401000, 1);
	nw_sym(&st, &ss, "only_symtab", 0x401050, 1);
	nw_sym(&st, &ss, "undef", 0xdead, SHN_UNDEF);
	nw_sym(&st, &ss, "both", 0x401060, 1);
	nw_sym(&st, &ss, "dup", 0x401070, 1);
	nw_sym(&st, &ss, "dup", 0x401080, 1);
	nw_sym(&dt, &ds, NULL, 0, SHN_UNDEF);
	nw_sym(&dt, &ds, "only_dynsym", 0x401090, 1);
	nw_sym(&dt, &ds, "both", 0x4010a0, 1);
	nw_sym(&dt, &ds, "undef", 0x4010b0, 1);

	exec_layout(&e, NULL, BASE_AT_SECTION);
	base = e.nw_nsec + 1;   /* index of the next section added */
	/* .dynsym first in the file: lookup order must not follow file order */
	s = nw_add_sec(&e, ".dynsym", SHT_DYNSYM, SHF_ALLOC, 0, 0x1a00, dt.nb_b, dt.nb_n);
	s->ns_link = base + 1, s->ns_entsize = sizeof(Elf64_Sym), s->ns_info = 1;
	nw_add_sec(&e, ".dynstr", SHT_STRTAB, SHF_ALLOC, 0, 0x1b00, ds.nb_b, ds.nb_n);
	s = nw_add_sec(&e, ".symtab", SHT_SYMTAB, 0, 0, 0x1c00, st.nb_b, st.nb_n);
	s->ns_link = base + 3, s->ns_entsize = sizeof(Elf64_Sym), s->ns_info = 1;
	nw_add_sec(&e, ".strtab", SHT_STRTAB, 0, 0, 0x1e00, ss.nb_b, ss.nb_n);

	eo = open_ok(write_elf(&e, "sym.elf"), "open for symbols");
	if (!eo)
		return;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t v = 0xdead;

		snprintf(what, sizeof(what), "symbol '%s' -> rc", c[i].n);
		UNIT_EQ_INT(elf_obj_sym_addr(eo, c[i].n, &v), c[i].rc, what);
		snprintf(what, sizeof(what), "symbol '%s' -> value", c[i].n);
		if (!c[i].rc)
			UNIT_EQ_INT(v, c[i].v, what);
	}
	elf_obj_close(eo);

	/* No symbol tables at all. */
	exec_layout(&e, NULL, BASE_AT_SECTION);
	eo = open_ok(write_elf(&e, "nosym.elf"), "open without symbol tables");
	if (eo) {
		uint64_t v;

		UNIT_EQ_INT(elf_obj_sym_addr(eo, "main", &v), -ENOENT,
			    "no .symtab/.dynsym -> -ENOENT");
		elf_obj_close(eo);
	}
}

static void test_load_bias(void)
{
	static const struct {
		const char *what; uint64_t start, off; int rc; uint64_t bias;
	} pie[] = {
		{ "gnu pie: r-- mapping", 0x7f0000000000, 0x0, 0, 0x7f0000000000 },
		{ "gnu pie: r-x mapping", 0x7f0000001000, 0x1000, 0, 0x7f0000000000 },
		/* 0x3df0 - 0x2df0 + 0x2000 = 0x3000 */
		{ "gnu pie: rw- mapping", 0x7f0000003000, 0x2000, 0, 0x7f0000000000 },
		/* RELRO splits the rw- segment: its second page is its own
		 * mapping, one page into the segment */
		{ "gnu pie: 2nd page of rw- segment", 0x7f0000004000, 0x3000, 0, 0x7f0000000000 },
		{ "gnu pie: offset past every PT_LOAD", 0x7f0000005000, 0x4000, -ERANGE, 0 },
	}, lld[] = {
		{ "lld: lowest mapping", 0x7f1234560000, 0x0, 0, 0x7f1234560000 },
	}, ex[] = {
		{ "exec: text mapping", 0x400000, 0x0, 0, 0 },
		{ "exec: data mapping", 0x403000, 0x2000, 0, 0 },
	};
	struct { struct nw_elf e; const char *file; const void *c; size_t n; } t[3];
	size_t i, j;

	gnu_pie_layout(&t[0].e), t[0].file = "bias_pie.elf", t[0].c = pie, t[0].n = 5;
	lld_layout(&t[1].e, NULL), t[1].file = "bias_lld.elf", t[1].c = lld, t[1].n = 1;
	exec_layout(&t[2].e, NULL, BASE_AT_SECTION), t[2].file = "bias_exec.elf", t[2].c = ex, t[2].n = 2;
	for (i = 0; i < 3; i++) {
		const __typeof__(pie[0]) *c = t[i].c;
		struct elf_obj *eo = open_ok(write_elf(&t[i].e, t[i].file), t[i].file);

		for (j = 0; eo && j < t[i].n; j++) {
			uint64_t bias = 0xdead;

			UNIT_EQ_INT(elf_obj_load_bias(eo, c[j].start, c[j].off, &bias),
				    c[j].rc, c[j].what);
			if (!c[j].rc)
				UNIT_EQ_INT(bias, c[j].bias, c[j].what);
		}
		elf_obj_close(eo);
	}
}

/* ---- bad files ------------------------------------------------------------ */

static void test_bad_files(void)
{
	static const size_t cuts[] = { 0, 3, 15, 40, 63, 64, 100, 0x1810, 0x2050 };
	struct nw_elf e;
	unsigned char *img, *bad;
	const char *msg, *p;
	char what[96];
	size_t n, i, k;

	msg = open_fails(tpath("missing.elf"), -ENOENT, "missing file -> -ENOENT");
	check_msg(msg, "missing.elf': No such file", "missing file: message names it");
	open_fails(tmpdir, -EISDIR, "directory -> -EISDIR");
	open_fails("/dev/null", -ENOEXEC, "character device -> -ENOEXEC");
	if (!mkfifo(tpath("fifo"), 0600))
		open_fails(tpath("fifo"), -ENOEXEC, "FIFO -> -ENOEXEC without blocking");

	nw_write_bytes(p = tpath("text.txt"), "#!/bin/sh\necho not elf\n", 23);
	msg = open_fails(p, -ENOEXEC, "shell script -> -ENOEXEC");
	check_msg(msg, "text.txt': not an ELF file", "non-ELF: message");

	exec_layout(&e, NULL, BASE_AT_SECTION);
	n = nw_image(&e, &img);
	bad = malloc(n);
	/* Truncated: in the ident, the ehdr, the phdrs, the contents, and at
	 * every 8th byte of the section headers. */
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]) + 64; i++) {
		size_t cut = i < sizeof(cuts) / sizeof(cuts[0]) ? cuts[i] :
			     n - 1 - (i - sizeof(cuts) / sizeof(cuts[0])) * 8;

		nw_write_bytes(p = tpath("cut.elf"), img, cut);
		snprintf(what, sizeof(what), "ELF truncated to %zu of %zu bytes -> -ENOEXEC",
			 cut, n);
		msg = open_fails(p, -ENOEXEC, what);
		if (cut >= 64 && !strstr(msg, "truncated")) {
			printf("# message: %s", msg);
			UNIT_TRUE(0, "truncation message says 'truncated'");
		}
	}
	nw_write_bytes(p = tpath("whole.elf"), img, n);
	elf_obj_close(open_ok(p, "the untruncated original opens"));

	/* Corrupt header fields. */
	static const struct { size_t at, len; uint64_t val; const char *what, *msg; } hd[] = {
		{ EI_CLASS, 1, ELFCLASS32, "32-bit class -> -ENOEXEC", "not a 64-bit" },
		{ EI_DATA, 1, ELFDATA2MSB, "big-endian -> -ENOEXEC", "little-endian" },
		{ 18, 2, EM_AARCH64, "aarch64 -> -ENOEXEC", "not an x86-64" },
		{ 18, 2, EM_386, "i386 machine in a 64-bit file -> -ENOEXEC", "not an x86-64" },
		{ 16, 2, ET_REL, "ET_REL -> -ENOEXEC", "not an executable or shared object" },
		{ 16, 2, ET_CORE, "ET_CORE -> -ENOEXEC", "not an executable or shared object" },
		{ 54, 2, 32, "e_phentsize 32 -> -ENOEXEC", "program headers" },
		{ 56, 2, 0x7fff, "e_phnum past the file -> -ENOEXEC", "program headers" },
		{ 58, 2, 40, "e_shentsize 40 -> -ENOEXEC", "section headers" },
		{ 60, 2, 0x7fff, "e_shnum past the file -> -ENOEXEC", "section headers" },
		{ 62, 2, 0x7ff0, "e_shstrndx out of range -> -ENOEXEC", "section name table" },
		{ 40, 8, (uint64_t)-8, "e_shoff near 2^64 -> -ENOEXEC", "section headers" },
		/* phdr[0].p_filesz (at 64 + 32) past the end of the file */
		{ 96, 8, 0x100000, "PT_LOAD filesz past the file -> -ENOEXEC", "PT_LOAD" },
		/* its p_memsz (at 64 + 40) one byte short of its 0x2000 bytes */
		{ 104, 8, 0x1fff, "PT_LOAD memsz below filesz -> -ENOEXEC", "PT_LOAD" },
	};
	for (k = 0; k < sizeof(hd) / sizeof(hd[0]); k++) {
		memcpy(bad, img, n);
		memcpy(bad + hd[k].at, &hd[k].val, hd[k].len);
		nw_write_bytes(p = tpath("hdr.elf"), bad, n);
		msg = open_fails(p, -ENOEXEC, hd[k].what);
		check_msg(msg, hd[k].msg, hd[k].what);
	}
	/* e_shstrndx one past the last section (e_shnum): the first index
	 * out of range. */
	memcpy(bad, img, n);
	memcpy(bad + 62, bad + 60, 2);
	nw_write_bytes(p = tpath("hdr.elf"), bad, n);
	msg = open_fails(p, -ENOEXEC, "e_shstrndx == e_shnum -> -ENOEXEC");
	check_msg(msg, "section name table", "e_shstrndx == e_shnum: message");

	/* A real 32-bit file: Elf32_Ehdr, i386. */
	{
		Elf32_Ehdr h32 = { .e_type = ET_EXEC, .e_machine = EM_386,
				   .e_version = EV_CURRENT,
				   .e_ehsize = sizeof(Elf32_Ehdr) };

		memcpy(h32.e_ident, ELFMAG, SELFMAG);
		h32.e_ident[EI_CLASS] = ELFCLASS32;
		h32.e_ident[EI_DATA] = ELFDATA2LSB;
		h32.e_ident[EI_VERSION] = EV_CURRENT;
		nw_write_bytes(p = tpath("i386.elf"), &h32, sizeof(h32));
		msg = open_fails(p, -ENOEXEC, "32-bit i386 ELF -> -ENOEXEC");
		check_msg(msg, "i386.elf': not a 64-bit ELF file (class 1)",
			  "32-bit: message names file and class");
	}

	/* A section whose contents run past the end of the file. */
	memcpy(bad, img, n);
	{
		Elf64_Ehdr *eh = (Elf64_Ehdr *)bad;
		Elf64_Shdr *sh = (Elf64_Shdr *)(bad + eh->e_shoff);

		sh[1].sh_size = n;      /* .text */
	}
	nw_write_bytes(p = tpath("secsize.elf"), bad, n);
	msg = open_fails(p, -ENOEXEC, "section contents past the file -> -ENOEXEC");
	check_msg(msg, "section contents", "section past the file: message");

	free(bad);
	free(img);
}

/* ---- notes ------------------------------------------------------------- */

static void check_note(const struct usdt_notes *n, size_t i, const char *tag,
		       const char *prov, const char *name, const char *args,
		       uint64_t pc, uint64_t base, uint64_t sema,
		       uint64_t pc_va, uint64_t pc_off,
		       uint64_t sema_va, uint64_t sema_off)
{
	const struct usdt_note *u = &n->un_v[i];
	char w[160];

	if (i >= n->un_n) {
		snprintf(w, sizeof(w), "%s: note %zu exists", tag, i);
		UNIT_TRUE(0, w);
		return;
	}
#define NOTE_CHECK(kind, field, val) do {				\
		snprintf(w, sizeof(w), "%s: note %zu %s", tag, i, #field);	\
		kind(u->field, val, w);					\
	} while (0)
	NOTE_CHECK(UNIT_EQ_STR, un_provider, prov);
	NOTE_CHECK(UNIT_EQ_STR, un_name, name);
	NOTE_CHECK(UNIT_EQ_STR, un_args, args);
	NOTE_CHECK(UNIT_EQ_INT, un_pc, pc);
	NOTE_CHECK(UNIT_EQ_INT, un_base, base);
	NOTE_CHECK(UNIT_EQ_INT, un_sema, sema);
	NOTE_CHECK(UNIT_EQ_INT, un_pc_vaddr, pc_va);
	NOTE_CHECK(UNIT_EQ_INT, un_pc_off, pc_off);
	NOTE_CHECK(UNIT_EQ_INT, un_sema_vaddr, sema_va);
	NOTE_CHECK(UNIT_EQ_INT, un_sema_off, sema_off);
#undef NOTE_CHECK
}

/*
 * Three stapsdt notes among notes that must be skipped: another owner, a
 * stapsdt note of another type, an owner that only starts with "stapsdt".
 */
/* sstrip and some packers drop the section headers: e_shoff, e_shnum and
 * e_shstrndx 0, e_shentsize 0 or left at 64.  The segments are all a
 * tracer needs for offsets; there are no notes to read. */
static void test_no_section_headers(void)
{
	static const uint16_t shentsize[] = { 0, sizeof(Elf64_Shdr) };
	struct nw_elf e;
	struct elf_obj *eo;
	unsigned char *img;
	uint64_t off;
	char what[128];
	size_t n;

	exec_layout(&e, NULL, BASE_AT_SECTION);
	n = nw_image(&e, &img);
	for (size_t i = 0; i < 2; i++) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
		const char *p = tpath("nosh.elf");

		eh->e_shoff = 0;
		eh->e_shnum = 0;
		eh->e_shstrndx = 0;
		eh->e_shentsize = shentsize[i];
		nw_write_bytes(p, img, n);
		snprintf(what, sizeof(what), "no section headers (e_shentsize %u): opens",
			 shentsize[i]);
		eo = open_ok(p, what);
		if (!eo)
			continue;
		UNIT_EQ_INT(elf_obj_vaddr_to_off(eo, 0x401010, &off), 0,
			    "no section headers: an address in PT_LOAD has an offset");
		UNIT_TRUE(off == 0x1010, "no section headers: the offset of 0x401010");
		elf_obj_close(eo);
		notes_fail(p, -ENODATA, "no section headers: no .note.stapsdt -> -ENODATA");
	}
	free(img);
}

/* No program headers (e_phnum 0; e_phentsize 0 as linkers leave it, or
 * 56): nothing of it can be mapped, but it opens, its sections are read,
 * and an address has no file offset or load bias. */
static void test_no_program_headers(void)
{
	static const uint16_t phentsize[] = { 0, sizeof(Elf64_Phdr) };
	struct nw_elf e;
	struct elf_obj *eo;
	unsigned char *img;
	uint64_t off, bias;
	char what[128];
	size_t n;

	exec_layout(&e, NULL, BASE_AT_SECTION);
	n = nw_image(&e, &img);
	for (size_t i = 0; i < 2; i++) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
		const char *p = tpath("noph.elf");

		eh->e_phoff = 0;
		eh->e_phnum = 0;
		eh->e_phentsize = phentsize[i];
		nw_write_bytes(p, img, n);
		snprintf(what, sizeof(what), "no program headers (e_phentsize %u): opens",
			 phentsize[i]);
		eo = open_ok(p, what);
		if (!eo)
			continue;
		UNIT_EQ_INT(elf_obj_vaddr_to_off(eo, 0x401010, &off), -ERANGE,
			    "no program headers: an address has no file offset");
		UNIT_EQ_INT(elf_obj_load_bias(eo, 0x7f0000000000, 0, &bias), -ERANGE,
			    "no program headers: no load bias");
		elf_obj_close(eo);
	}
	free(img);
}

/* Extended numbering: e_shnum 0 with the count in section header 0's
 * sh_size, e_phnum PN_XNUM with it in sh_info (a linker writes these past
 * 0xff00 sections or 0xffff segments; they are legal at any count).  The
 * file opens, its segments and notes are read as the plain one's. */
static void test_extended_numbering(void)
{
	struct nw_buf nb = { .nb_n = 0 };
	struct usdt_notes n;
	struct nw_elf e;
	unsigned char *img;
	size_t len;

	nw_note_sdt(&nb, 0x401010, 0x400f00, 0x403010, "fx", "p_int", "-4@%edi");
	exec_layout(&e, &nb, BASE_AT_SECTION);
	len = nw_image(&e, &img);
	for (int k = 0; k < 2; k++) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
		Elf64_Shdr *sh0 = (Elf64_Shdr *)(img + eh->e_shoff);
		const char *p = tpath("xnum.elf");
		char what[96];

		if (k == 0) {           /* sections */
			sh0->sh_size = eh->e_shnum;
			eh->e_shnum = 0;
		} else {                /* and segments */
			sh0->sh_info = eh->e_phnum;
			eh->e_phnum = PN_XNUM;
		}
		nw_write_bytes(p, img, len);
		snprintf(what, sizeof(what), "extended %s: notes read",
			 k ? "e_shnum and e_phnum" : "e_shnum");
		UNIT_EQ_INT(notes_of(p, &n), 0, what);
		if (n.un_n == 1)
			check_note(&n, 0, what, "fx", "p_int", "-4@%edi",
				   0x401010, 0x400f00, 0x403010, 0x401010, 0x1010, 0x403010, 0x2010);
		else
			UNIT_EQ_INT(n.un_n, 1, "... one note");
		usdt_notes_free(&n);
	}
	free(img);
}

/* A bad operand's reason as the site keeps it: the parser's whole
 * reason, cut only where the site's buffer ends (an operand naming a
 * 70-character symbol the object does not have gives a longer one). */
static void test_bad_reason_cut(void)
{
	char args[128] = "-8@", text[PATH_MAX + 32];
	struct nw_buf nb = { .nb_n = 0 };
	struct site_set ss = { 0 };
	struct target tg = { 0 };
	struct probe_req req;
	struct nw_elf e;
	const char *p = tpath("longreason.elf");
	int n;

	memset(args + 3, 's', 70);
	strcpy(args + 73, "(%rip)");
	nw_note_sdt(&nb, 0x401010, 0x400f00, 0, "fx", "p_long", args);
	exec_layout(&e, &nb, BASE_AT_SECTION);
	nw_write(&e, p);
	snprintf(text, sizeof(text), "usdt:%s:fx:p_long", p);
	if (probe_req_parse(text, &req)) {
		UNIT_TRUE(0, "usdt:FILE:fx:p_long parsed");
		return;
	}
	unit_quiet(1);
	n = provider_find("usdt")->pv_resolve(&req, &tg, &ss);
	unit_quiet(0);
	UNIT_EQ_INT(n, 1, "a site with a 70-character symbol operand");
	if (ss.ss_n == 1) {
		const struct site *st = &ss.ss_v[0];

		UNIT_TRUE(st->st_bad_mask == 1, "... its operand unreadable");
		UNIT_EQ_INT(strlen(st->st_bad_why), sizeof(st->st_bad_why) - 1,
			    "... its reason fills the site's buffer, cut only at its end");
		UNIT_TRUE(!strncmp(st->st_bad_why, "arg 0 '-8@sss", 13), "... and is that operand's");
	}
	site_set_free(&ss);
	probe_req_free(&req);
}

static void test_notes_exec(void)
{
	struct nw_buf nb = { .nb_n = 0 };
	struct usdt_notes n;
	struct nw_elf e;
	unsigned char d[256];
	size_t dl;

	nw_note_raw(&nb, "GNU", 3, "\1\2\3\4", 4, 4);
	nw_note_sdt(&nb, 0x401010, 0x400f00, 0x403010, "fx", "p_int", "-4@%edi 8@%rsi");
	dl = nw_sdt_desc(d, 0x401900, 0x400f00, 0, "fx", "bogus", "");
	nw_note_raw(&nb, "stapsdt", 1, d, dl, dl);
	nw_note_raw(&nb, "stapsdtx", 3, d, dl, dl);
	nw_note_sdt(&nb, 0x401020, 0x400f00, 0, "fx", "p_noargs", "");
	nw_note_sdt(&nb, 0x401030, 0x400f00, 0x403012, "fx2", "p2", "8@-16(%rbp)");
	exec_layout(&e, &nb, BASE_AT_SECTION);

	UNIT_EQ_INT(notes_of(write_elf(&e, "notes_exec.elf"), &n), 0,
		    "ET_EXEC: notes read");
	UNIT_EQ_INT(n.un_n, 3, "ET_EXEC: 3 stapsdt notes, 3 others skipped");
	check_note(&n, 0, "ET_EXEC", "fx", "p_int", "-4@%edi 8@%rsi",
		   0x401010, 0x400f00, 0x403010, 0x401010, 0x1010, 0x403010, 0x2010);
	check_note(&n, 1, "ET_EXEC", "fx", "p_noargs", "",
		   0x401020, 0x400f00, 0, 0x401020, 0x1020, 0, 0);
	check_note(&n, 2, "ET_EXEC", "fx2", "p2", "8@-16(%rbp)",
		   0x401030, 0x400f00, 0x403012, 0x401030, 0x1030, 0x403012, 0x2012);
	usdt_notes_free(&n);
	UNIT_TRUE(n.un_n == 0 && n.un_v == NULL, "usdt_notes_free resets the set");

	/* Section headers that disagree with the segments: .text and .probes
	 * claim other file offsets; the PT_LOAD answer must win. */
	e.nw_sec[0].ns_off = 0x1400;    /* .text */
	e.nw_sec[3].ns_off = 0x1f00;    /* .probes */
	UNIT_EQ_INT(notes_of(write_elf(&e, "notes_lying_sections.elf"), &n), 0,
		    "misleading section headers: notes read");
	check_note(&n, 0, "segments win over sections", "fx", "p_int",
		   "-4@%edi 8@%rsi", 0x401010, 0x400f00, 0x403010,
		   0x401010, 0x1010, 0x403010, 0x2010);
	usdt_notes_free(&n);
}

/* lld-style PIE: pc in a segment with vaddr - offset = 0x1000, semaphore
 * in one with 0x2000. */
static void test_notes_lld(void)
{
	struct nw_buf nb = { .nb_n = 0 };
	struct usdt_notes n;
	struct nw_elf e;

	nw_note_sdt(&nb, 0x15c0, 0x5a0, 0x27b8, "lld", "p1", "-4@%edi");
	nw_note_sdt(&nb, 0x17af, 0x5a0, 0, "lld", "p_last", "");
	nw_note_sdt(&nb, 0x15b0, 0x5a0, 0x27ee, "lld", "p_first", "8@%rax");
	lld_layout(&e, &nb);
	UNIT_EQ_INT(notes_of(write_elf(&e, "notes_lld.elf"), &n), 0,
		    "lld ET_DYN: notes read");
	UNIT_EQ_INT(n.un_n, 3, "lld ET_DYN: 3 notes");
	check_note(&n, 0, "lld", "lld", "p1", "-4@%edi",
		   0x15c0, 0x5a0, 0x27b8, 0x15c0, 0x5c0, 0x27b8, 0x7b8);
	check_note(&n, 1, "lld", "lld", "p_last", "",
		   0x17af, 0x5a0, 0, 0x17af, 0x7af, 0, 0);
	check_note(&n, 2, "lld", "lld", "p_first", "8@%rax",
		   0x15b0, 0x5a0, 0x27ee, 0x15b0, 0x5b0, 0x27ee, 0x7ee);
	usdt_notes_free(&n);
}

/*
 * .stapsdt.base at 0x400f00.  Prelinked notes say base 0x300f00 (shift
 * +0x100000) or 0x500f00 (shift -0x100000).  With a zero on either side,
 * or no section, nothing moves.
 */
static void test_notes_base(void)
{
	struct nw_buf nb = { .nb_n = 0 };
	struct usdt_notes n;
	struct nw_elf e;
	const char *p;

	nw_note_sdt(&nb, 0x301010, 0x300f00, 0x303010, "pre", "up", "1@%al");
	nw_note_sdt(&nb, 0x501020, 0x500f00, 0, "pre", "down", "");
	nw_note_sdt(&nb, 0x501030, 0x500f00, 0x503012, "pre", "down_sema", "");
	exec_layout(&e, &nb, BASE_AT_SECTION);
	UNIT_EQ_INT(notes_of(write_elf(&e, "base_shift.elf"), &n), 0,
		    "prelinked notes: read");
	check_note(&n, 0, "base +0x100000", "pre", "up", "1@%al",
		   0x301010, 0x300f00, 0x303010, 0x401010, 0x1010, 0x403010, 0x2010);
	check_note(&n, 1, "base -0x100000", "pre", "down", "",
		   0x501020, 0x500f00, 0, 0x401020, 0x1020, 0, 0);
	check_note(&n, 2, "base -0x100000", "pre", "down_sema", "",
		   0x501030, 0x500f00, 0x503012, 0x401030, 0x1030, 0x403012, 0x2012);
	usdt_notes_free(&n);

	/* Note base 0 (section present): no adjustment. */
	nb.nb_n = 0;
	nw_note_sdt(&nb, 0x401010, 0, 0x403010, "nb0", "p", "");
	exec_layout(&e, &nb, BASE_AT_SECTION);
	UNIT_EQ_INT(notes_of(write_elf(&e, "base_note0.elf"), &n), 0,
		    "note base 0: read");
	check_note(&n, 0, "note base 0", "nb0", "p", "",
		   0x401010, 0, 0x403010, 0x401010, 0x1010, 0x403010, 0x2010);
	usdt_notes_free(&n);

	/* Section address 0 (note base non-zero): no adjustment. */
	nb.nb_n = 0;
	nw_note_sdt(&nb, 0x401010, 0x300f00, 0x403010, "sa0", "p", "");
	exec_layout(&e, &nb, BASE_SECTION_ADDR_ZERO);
	UNIT_EQ_INT(notes_of(p = write_elf(&e, "base_sec0.elf"), &n), 0,
		    "section addr 0: read");
	check_note(&n, 0, "section addr 0", "sa0", "p", "",
		   0x401010, 0x300f00, 0x403010, 0x401010, 0x1010, 0x403010, 0x2010);
	usdt_notes_free(&n);

	/* No .stapsdt.base section: no adjustment. */
	exec_layout(&e, &nb, BASE_NO_SECTION);
	UNIT_EQ_INT(notes_of(write_elf(&e, "base_none.elf"), &n), 0,
		    "no .stapsdt.base: read");
	check_note(&n, 0, "no .stapsdt.base", "sa0", "p", "",
		   0x401010, 0x300f00, 0x403010, 0x401010, 0x1010, 0x403010, 0x2010);
	usdt_notes_free(&n);
}

static void test_notes_empty_and_missing(void)
{
	struct nw_buf nb = { .nb_n = 0 };
	struct usdt_notes n;
	struct nw_elf e;
	const char *p, *msg;
	char want[PATH_MAX + 64];

	exec_layout(&e, NULL, BASE_AT_SECTION);
	p = write_elf(&e, "nonotes.elf");
	msg = notes_fail(p, -ENODATA, "no .note.stapsdt -> -ENODATA");
	snprintf(want, sizeof(want), "probecheck: usdt: '%s': no .note.stapsdt section\n", p);
	UNIT_EQ_STR(msg, want, "no .note.stapsdt: exact message");

	exec_layout(&e, &nb, BASE_AT_SECTION);     /* zero-length section */
	UNIT_EQ_INT(notes_of(write_elf(&e, "emptynotes.elf"), &n), 0,
		    "empty .note.stapsdt -> 0");
	UNIT_EQ_INT(n.un_n, 0, "empty .note.stapsdt -> no notes");
	usdt_notes_free(&n);

	nw_note_raw(&nb, "GNU", 1, "abcd", 4, 4);
	exec_layout(&e, &nb, BASE_AT_SECTION);
	UNIT_EQ_INT(notes_of(write_elf(&e, "othernotes.elf"), &n), 0,
		    "only foreign notes -> 0");
	UNIT_EQ_INT(n.un_n, 0, "only foreign notes -> no notes");
	usdt_notes_free(&n);

	nw_note_sdt(&nb, 0x401010, 0x400f00, 0, "fx", "p", "");
	exec_layout(&e, &nb, BASE_AT_SECTION);
	e.nw_sec[2].ns_type = SHT_PROGBITS;
	msg = notes_fail(write_elf(&e, "notnote.elf"), -EBADMSG,
			 ".note.stapsdt of type PROGBITS -> -EBADMSG");
	check_msg(msg, "not a note section", "PROGBITS notes: message");
}

/* One good note (index 0), then a bad one (index 1). */
static void test_notes_malformed(void)
{
	static const struct {
		const char *file, *what, *why;
		const char *desc; size_t dlen; uint32_t claim;
	} c[] = {
		{ "zero.elf", "zero-length desc -> -EBADMSG", "shorter than 24",
		  "", 0, 0 },
		{ "short.elf", "16-byte desc -> -EBADMSG", "shorter than 24",
		  "\x10\x10\x40\0\0\0\0\0\0\x0f\x40\0\0\0\0\0", 16, 16 },
		{ "addrs_only.elf", "24-byte desc, no strings -> -EBADMSG", "provider string",
		  "\x10\x10\x40\0\0\0\0\0\0\x0f\x40\0\0\0\0\0\0\0\0\0\0\0\0\0", 24, 24 },
		{ "nonul.elf", "provider without NUL -> -EBADMSG", "provider string",
		  "\x10\x10\x40\0\0\0\0\0\0\x0f\x40\0\0\0\0\0\0\0\0\0\0\0\0\0fxfx", 28, 28 },
		{ "name_past.elf", "name runs past desc -> -EBADMSG", "name string",
		  "\x10\x10\x40\0\0\0\0\0\0\x0f\x40\0\0\0\0\0\0\0\0\0\0\0\0\0fx\0nam", 30, 30 },
		{ "noargs.elf", "args string missing -> -EBADMSG", "argument string",
		  "\x10\x10\x40\0\0\0\0\0\0\x0f\x40\0\0\0\0\0\0\0\0\0\0\0\0\0fx\0p\0", 29, 29 },
		{ "args_past.elf", "args without NUL -> -EBADMSG", "argument string",
		  "\x10\x10\x40\0\0\0\0\0\0\x0f\x40\0\0\0\0\0\0\0\0\0\0\0\0\0fx\0p\0-4@%edi", 35, 35 },
		/* descsz says 31 bytes but the string NUL is byte 31: it is
		 * beyond the descriptor even though it is in the section */
		{ "args_cut.elf", "args NUL just past descsz -> -EBADMSG", "argument string",
		  "\x10\x10\x40\0\0\0\0\0\0\x0f\x40\0\0\0\0\0\0\0\0\0\0\0\0\0fx\0p\0ab\0", 32, 31 },
		{ "claim.elf", "descsz past the section -> -EBADMSG", "run past the section",
		  "\x10\x10\x40\0\0\0\0\0\0\x0f\x40\0\0\0\0\0\0\0\0\0\0\0\0\0fx\0p\0\0", 30, 0x1000 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct nw_buf nb = { .nb_n = 0 };
		struct nw_elf e;
		const char *p, *msg;
		char want[PATH_MAX + 32];

		nw_note_sdt(&nb, 0x401010, 0x400f00, 0, "fx", "good", "");
		nw_note_raw(&nb, "stapsdt", 3, c[i].desc, c[i].claim, c[i].dlen);
		exec_layout(&e, &nb, BASE_AT_SECTION);
		p = write_elf(&e, c[i].file);
		msg = notes_fail(p, -EBADMSG, c[i].what);
		snprintf(want, sizeof(want), "'%s': note 1: malformed", p);
		check_msg(msg, want, "malformed: message names file and note index");
		check_msg(msg, c[i].why, "malformed: message gives the reason");
	}
}

static void test_notes_range(void)
{
	static const struct {
		const char *file, *what, *why; uint64_t pc, sema;
	} c[] = {
		{ "pc_out.elf", "pc outside every PT_LOAD -> -ERANGE", "pc 0x500000",
		  0x500000, 0 },
		{ "pc_gap.elf", "pc between segments -> -ERANGE", "pc 0x402000",
		  0x402000, 0 },
		{ "sema_bss.elf", "semaphore in bss (past p_filesz) -> -ERANGE",
		  "semaphore 0x403100", 0x401010, 0x403100 },
		{ "sema_out.elf", "semaphore outside every PT_LOAD -> -ERANGE",
		  "semaphore 0x600000", 0x401010, 0x600000 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct nw_buf nb = { .nb_n = 0 };
		struct nw_elf e;
		const char *p, *msg;
		char want[PATH_MAX + 32];

		nw_note_sdt(&nb, 0x401010, 0x400f00, 0, "fx", "good", "");
		nw_note_sdt(&nb, c[i].pc, 0x400f00, c[i].sema, "fx", "far", "");
		exec_layout(&e, &nb, BASE_AT_SECTION);
		p = write_elf(&e, c[i].file);
		msg = notes_fail(p, -ERANGE, c[i].what);
		snprintf(want, sizeof(want), "'%s': note 1 (fx:far): ", p);
		check_msg(msg, want, "range: message names file, note and probe");
		check_msg(msg, c[i].why, "range: message gives the address");
	}
}

/* ---- procmaps ------------------------------------------------------------ */

int main(void);

static const struct pm_object *pm_by_base(const struct pm_objects *pm,
					  const char *base)
{
	size_t i;

	for (i = 0; i < pm->po_n; i++) {
		const char *s = strrchr(pm->po_v[i].po_path, '/');

		if (s && !strcmp(s + 1, base))
			return &pm->po_v[i];
	}
	return NULL;
}

static size_t pm_count_path(const struct pm_objects *pm, const char *path)
{
	size_t i, k = 0;

	for (i = 0; i < pm->po_n; i++)
		k += !strcmp(pm->po_v[i].po_path, path);
	return k;
}

/* Bias of @po checked against a function's runtime address. */
static void check_bias(const struct pm_object *po, const char *sym,
		       uintptr_t rt, const char *tag)
{
	struct elf_obj *eo = NULL;
	uint64_t v = 0, lowest = UINT64_MAX;
	char w[128];
	size_t i;

	snprintf(w, sizeof(w), "%s: open through po_open_path", tag);
	UNIT_EQ_INT(elf_obj_open(po->po_open_path, 0, &eo), 0, w);
	if (!eo)
		return;
	snprintf(w, sizeof(w), "%s: symbol %s", tag, sym);
	UNIT_EQ_INT(elf_obj_sym_addr(eo, sym, &v), 0, w);
	snprintf(w, sizeof(w), "%s: bias == &%s - st_value", tag, sym);
	UNIT_EQ_INT(po->po_bias, rt - v, w);
	for (i = 0; i < eo->eo_nphdr; i++)
		if (eo->eo_phdrs[i].p_type == PT_LOAD &&
		    eo->eo_phdrs[i].p_vaddr < lowest)
			lowest = eo->eo_phdrs[i].p_vaddr;
	snprintf(w, sizeof(w), "%s: po_start is the first PT_LOAD's page", tag);
	UNIT_EQ_INT(po->po_start, (lowest & ~0xfffULL) + po->po_bias, w);
	elf_obj_close(eo);
}

/* 100 objects: the object array grows past its first 32 and 64. */
static void test_procmaps_parse_many(void)
{
	struct pm_objects o = { 0 };
	char *text = NULL, what[96];
	size_t len = 0, i, ok = 0;
	FILE *w = open_memstream(&text, &len), *f;

	for (i = 0; w && i < 100; i++)
		fprintf(w, "%zx000-%zx000 r-xp 00000000 fd:01 %zu /lib/o%zu.so\n",
			i + 1, i + 2, 5000 + i, i);
	if (w)
		fclose(w);
	f = text ? fmemopen(text, len, "r") : NULL;
	UNIT_EQ_INT(f ? procmaps_parse(f, 1, PM_QUIET, "maps", &o) : -1, 0, "procmaps_parse of 100 objects");
	if (f)
		fclose(f);
	UNIT_EQ_INT((int)o.po_n, 100, "... 100 objects");
	for (i = 0; i < o.po_n; i++) {
		snprintf(what, sizeof(what), "/lib/o%zu.so", i);
		ok += !strcmp(o.po_v[i].po_path, what) && o.po_v[i].po_ino == 5000 + i &&
		      o.po_v[i].po_start == (i + 1) * 0x1000;
	}
	UNIT_EQ_INT((int)ok, 100, "... each in its order, its path, inode and start");
	procmaps_free(&o);
	free(text);
}

/*
 * procmaps_parse on maps text written here: objects are keyed by device
 * AND inode (the same inode on another device is another file), an
 * object's start and offset are its lowest mapping's wherever that line
 * comes, and what is no object is left out: anonymous, a pseudo path,
 * a file with no executable mapping.  A deleted file is an object opened
 * through /proc/PID/map_files (the mapping's range), not its old path.
 */
/*
 * A file this process maps executable that is no ELF object (a JIT's
 * code file, a data file mapped PROT_EXEC) is skipped without a word,
 * also when the read is not quiet: no ELF reader is asked to open it
 * (draw fresh-20261207-e's e14c972f dropped the check; the object was
 * still dropped, but with an error line per such file).  Beside the
 * test binary: /tmp may be noexec.
 */
static void test_procmaps_not_elf(void)
{
	char path[PATH_MAX];
	struct pm_objects o = { 0 };
	void *map = MAP_FAILED;
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	int fd = -1, rc = -1, named = 0;

	if (n > 0) {
		path[n] = '\0';
		snprintf(strrchr(path, '/'), 32, "/notelf.%d", (int)getpid());
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	}
	if (fd >= 0 && !ftruncate(fd, 4096))
		map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	UNIT_TRUE(map != MAP_FAILED, "a non-ELF file mapped executable");
	if (map != MAP_FAILED) {
		unit_capture(1);
		rc = procmaps_read(getpid(), 0, &o);
		unit_capture(0);
		for (size_t i = 0; i < o.po_n; i++)
			named |= strstr(o.po_v[i].po_path, "/notelf.") != NULL;
		munmap(map, 4096);
	}
	UNIT_EQ_INT(rc, 0, "procmaps_read of ourselves, not quiet: 0");
	UNIT_TRUE(!named, "... the non-ELF file is no object");
	UNIT_TRUE(!strstr(unit_captured, "notelf."), "... and nothing is said of it");
	procmaps_free(&o);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

static void test_procmaps_parse_text(void)
{
	static const char text[] =
		"1000-2000 r--p 00000000 fd:01 1001 /usr/bin/a\n"
		"2000-3000 r-xp 00001000 fd:01 1001 /usr/bin/a\n"
		"5000-6000 r-xp 00000000 fd:02 1001 /other/a\n"
		"6000-7000 r-xp 00000000 fd:01 1003 /usr/bin/a-link\n"
		"7000-8000 r-xp 00000000 00:00 0 \n"
		"8000-9000 r-xp 00000000 fd:01 1005 [pseudo]\n"
		"9000-a000 r-xp 00000000 fd:01 1006 /usr/lib/gone.so (deleted)\n"
		"a000-b000 r--p 00000000 fd:01 1007 /usr/lib/data.so\n"
		"f000-10000 r-xp 00003000 fd:01 1009 /usr/lib/x.so\n"
		"e000-f000 r--p 00002000 fd:01 1009 /usr/lib/x.so\n"
		"10000-11000 r-xp 00000000 fd:01 1003 /usr/bin/a-link2\n";
	static const struct { const char *path; uint64_t start, off; unsigned minor; unsigned long ino; const char *open; } want[] = {
		{ "/usr/bin/a", 0x1000, 0, 1, 1001, NULL },
		{ "/other/a", 0x5000, 0, 2, 1001, NULL },
		{ "/usr/bin/a-link", 0x6000, 0, 1, 1003, NULL },      /* a-link2: the same file */
		{ "/usr/lib/gone.so (deleted)", 0x9000, 0, 1, 1006, "/proc/77/map_files/9000-a000" },
		{ "/usr/lib/x.so", 0xe000, 0x2000, 1, 1009, NULL },
	};
	/* Each followed by a good line: the bad one must end the parse. */
	static const char *bad[] = {
		"1000-2000 r-x 00000000 fd:01 1 /a\n2000-3000 r-xp 00000000 fd:01 2 /b\n",
		"1000-2000 r-xp 00000000 fd:01 /a\n2000-3000 r-xp 00000000 fd:01 2 /b\n",
		"1000-2000 r-xp 00000000 fd01 1 /a\n2000-3000 r-xp 00000000 fd:01 2 /b\n",
		"\n2000-3000 r-xp 00000000 fd:01 2 /b\n",
	};
	struct pm_objects o;
	char what[160], path[64];
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	size_t i;

	memset(&o, 0xff, sizeof(o));    /* procmaps_parse sets all of it */
	UNIT_EQ_INT(f ? procmaps_parse(f, 77, PM_QUIET, "maps", &o) : -1, 0, "procmaps_parse of the text");
	if (f)
		fclose(f);
	UNIT_EQ_INT((int)o.po_n, 5, "... five objects");
	for (i = 0; i < o.po_n && i < sizeof(want) / sizeof(want[0]); i++) {
		const struct pm_object *po = &o.po_v[i];

		snprintf(what, sizeof(what), "object %zu: %s", i, want[i].path);
		UNIT_EQ_STR(po->po_path, want[i].path, what);
		snprintf(path, sizeof(path), "/proc/77/root%s", want[i].path);
		UNIT_EQ_STR(po->po_open_path, want[i].open ? want[i].open : path,
			    want[i].open ? "... deleted: opened through its mapping"
					 : "... opened through the process's root");
		UNIT_EQ_INT(po->po_start, want[i].start, "... its lowest mapping's start");
		UNIT_EQ_INT(po->po_off, want[i].off, "... and that mapping's offset");
		UNIT_EQ_INT(po->po_dev, makedev(0xfd, want[i].minor), "... its device");
		UNIT_EQ_INT(po->po_ino, want[i].ino, "... its inode");
		UNIT_EQ_INT(po->po_bias, 0, "... no bias (not opened)");
	}
	procmaps_free(&o);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&o, 0xff, sizeof(o));
		f = fmemopen((void *)bad[i], strlen(bad[i]), "r");
		snprintf(what, sizeof(what), "unparsable line %zu: -EINVAL", i);
		UNIT_EQ_INT(f ? procmaps_parse(f, 77, PM_QUIET, "maps", &o) : -1, -EINVAL, what);
		if (f)
			fclose(f);
		procmaps_free(&o);
	}
	test_procmaps_parse_many();
}

/* Map @file like the loader would, or as data, for procmaps to find. */
struct pm_fixture {
	void *pf_region;        /* gnu pie mapped r--, r-x, rw- */
	void *pf_noexec, *pf_text, *pf_deleted;
	ino_t pf_deleted_ino;   /* the mapped file's, before it was deleted */
};

static void *map_file(const char *path, void *at, size_t len, int prot,
		      off_t off)
{
	int fd = open(path, O_RDONLY);
	void *p;

	if (fd < 0)
		return MAP_FAILED;
	p = mmap(at, len, prot, MAP_PRIVATE | (at ? MAP_FIXED : 0), fd, off);
	close(fd);
	return p;
}

static int pm_fixture_make(struct pm_fixture *pf)
{
	static char text[4096] = "just text, not an ELF file\n";
	struct nw_elf e;
	char *r;

	gnu_pie_layout(&e);
	write_elf(&e, "mapped.elf");
	write_elf(&e, "noexec.elf");
	write_elf(&e, "deleted.elf");
	write_elf(&e, "deleted.elf (deleted)");  /* a trap for the suffix check */
	nw_write_bytes(tpath("text.bin"), text, sizeof(text));

	r = mmap(NULL, 0x5000, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return -1;
	pf->pf_region = r;
	if (map_file(tpath("mapped.elf"), r, 0x1000, PROT_READ, 0) == MAP_FAILED ||
	    map_file(tpath("mapped.elf"), r + 0x1000, 0x1000,
		     PROT_READ | PROT_EXEC, 0x1000) == MAP_FAILED ||
	    map_file(tpath("mapped.elf"), r + 0x3000, 0x1000,
		     PROT_READ | PROT_WRITE, 0x2000) == MAP_FAILED)
		return -1;
	pf->pf_noexec = map_file(tpath("noexec.elf"), NULL, 0x1000, PROT_READ, 0);
	pf->pf_text = map_file(tpath("text.bin"), NULL, 0x1000,
			       PROT_READ | PROT_EXEC, 0);
	pf->pf_deleted = map_file(tpath("deleted.elf"), NULL, 0x1000,
				  PROT_READ | PROT_EXEC, 0);
	if (pf->pf_noexec == MAP_FAILED || pf->pf_text == MAP_FAILED ||
	    pf->pf_deleted == MAP_FAILED)
		return -1;
	{
		struct stat sb;

		if (stat(tpath("deleted.elf"), &sb))
			return -1;
		pf->pf_deleted_ino = sb.st_ino;
	}
	unlink(tpath("deleted.elf"));
	return 0;
}

static void pm_fixture_free(struct pm_fixture *pf)
{
	if (pf->pf_region && pf->pf_region != MAP_FAILED)
		munmap(pf->pf_region, 0x5000);
	if (pf->pf_noexec && pf->pf_noexec != MAP_FAILED)
		munmap(pf->pf_noexec, 0x1000);
	if (pf->pf_text && pf->pf_text != MAP_FAILED)
		munmap(pf->pf_text, 0x1000);
	if (pf->pf_deleted && pf->pf_deleted != MAP_FAILED)
		munmap(pf->pf_deleted, 0x1000);
}

static void test_procmaps_self(void)
{
	struct pm_fixture pf = { 0 };
	struct pm_objects pm;
	const struct pm_object *po;
	char exe[PATH_MAX], want[PATH_MAX + 32];
	const char *msg;
	ssize_t len;
	size_t i;
	int fx_ok, rc;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	fx_ok = !pm_fixture_make(&pf);
	UNIT_TRUE(fx_ok, "procmaps fixture mappings created");

	rc = procmaps_read(getpid(), 0, &pm);
	UNIT_EQ_INT(rc, 0, "procmaps_read(self)");
	if (rc) {
		pm_fixture_free(&pf);
		return;
	}
	po = procmaps_find(&pm, exe);
	UNIT_TRUE(po != NULL, "own executable found by its path");
	if (po) {
		snprintf(want, sizeof(want), "/proc/%d/root%s", (int)getpid(), exe);
		UNIT_EQ_STR(po->po_open_path, want, "own executable: po_open_path");
		UNIT_EQ_INT(po->po_off, 0, "own executable: lowest mapping at offset 0");
		check_bias(po, "main", (uintptr_t)main, "own executable");
	}
	po = pm_by_base(&pm, "libc.so.6");
	UNIT_TRUE(po != NULL, "libc.so.6 found");
	if (po)
		check_bias(po, "getpid", (uintptr_t)getpid, "libc.so.6");

	for (i = 0; i < pm.po_n; i++) {
		const char *p = pm.po_v[i].po_path;
		size_t n = strlen(p);

		if (p[0] != '/' || pm.po_v[i].po_ino == 0 ||
		    (n > 10 && !strcmp(p + n - 10, " (deleted)")) !=
		    !!strstr(pm.po_v[i].po_open_path, "/map_files/")) {
			printf("# unexpected object '%s' (%s)\n", p, pm.po_v[i].po_open_path);
			UNIT_TRUE(0, "only file-backed objects; the deleted ones through map_files");
		}
	}

	if (fx_ok) {
		uintptr_t r = (uintptr_t)pf.pf_region;

		UNIT_EQ_INT(pm_count_path(&pm, tpath("mapped.elf")), 1,
			    "three mappings of one file -> one object");
		po = procmaps_find(&pm, tpath("mapped.elf"));
		if (po) {
			UNIT_EQ_INT(po->po_start, r, "mapped.elf: lowest mapping start");
			UNIT_EQ_INT(po->po_off, 0, "mapped.elf: its offset");
			UNIT_EQ_INT(po->po_bias, r, "mapped.elf: bias (va 0 at offset 0)");
		}
		UNIT_TRUE(!procmaps_find(&pm, tpath("noexec.elf")),
			  "ELF mapped without exec: not an object");
		UNIT_TRUE(!procmaps_find(&pm, tpath("text.bin")),
			  "non-ELF mapped r-x: skipped");
		po = procmaps_find(&pm, tpath("deleted.elf (deleted)"));
		UNIT_TRUE(!procmaps_find(&pm, tpath("deleted.elf")) && po &&
			  strstr(po->po_open_path, "/map_files/") &&
			  po->po_ino == pf.pf_deleted_ino,
			  "deleted file: the mapped inode, through map_files, not the "
			  "file '... (deleted)' on disk");
	}
	UNIT_TRUE(procmaps_find(&pm, "/no/such/object") == NULL,
		  "procmaps_find: unknown path -> NULL");
	procmaps_free(&pm);
	UNIT_TRUE(pm.po_n == 0 && pm.po_v == NULL, "procmaps_free resets the set");
	pm_fixture_free(&pf);

	cap_begin();
	rc = procmaps_read(INT_MAX, 0, &pm);
	msg = cap_end();
	UNIT_EQ_INT(rc, -ESRCH, "no such process -> -ESRCH");
	check_msg(msg, "pid 2147483647: no such process", "ESRCH: message names the pid");
}

static void cleanup_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlink(tpath(de->d_name));
	closedir(d);
	rmdir(tmpdir);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pc-unit-note-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 2;
	}
	test_vaddr_to_off();
	test_sections();
	test_symbols();
	test_load_bias();
	test_bad_files();
	test_no_section_headers();
	test_extended_numbering();
	test_no_program_headers();
	test_notes_exec();
	test_notes_lld();
	test_notes_base();
	test_notes_empty_and_missing();
	test_notes_malformed();
	test_notes_range();
	test_procmaps_self();
	test_procmaps_parse_text();
	test_procmaps_not_elf();
	test_bad_reason_cut();
	cleanup_tmpdir();
	return unit_done();
}
