/*
 * fuzz_elf.c — the ELF reader (providers/elf.c) and what reads through it:
 * notes (note.c) and function symbols (symbols.c).
 *
 * Input: a whole file.  It is written to a memfd and opened by path
 * (/proc/self/fd/N), quietly when its size is odd.  elf_obj_open checks
 * the headers, program headers and section headers against the file
 * size; then every question the providers ask is asked: sections by name,
 * vaddr -> offset and load bias for every PT_LOAD and the entry point,
 * symbols by name (.symtab, .dynsym), the USDT notes with their operands
 * (symbolic ones resolved through the object, as prov_usdt.c does) and
 * the function symbols (prov_pid.c's list).
 *
 * Checked: an offset elf_obj_vaddr_to_off gives lies in the file part of
 * a PT_LOAD; function symbols come sorted by (address, name) without
 * duplicates.
 */
#include "fuzz.h"
#include <errno.h>
#include "elf.h"
#include "note.h"
#include "spec.h"
#include "symbols.h"

static const char *const elf_fuzz_sections[] = {
	".note.stapsdt", ".stapsdt.base", ".probes", ".text", ".symtab",
	".dynsym", ".gnu.version", ".shstrtab",
};

static const char *const elf_fuzz_syms[] = {
	"main", "_start", "g", "arr", "fx_sema_a", "",
};

static int elf_sym(void *ctx, const char *name, uint64_t *addr)
{
	return elf_obj_sym_addr(ctx, name, addr);
}

static void check_off(const struct elf_obj *eo, uint64_t vaddr)
{
	uint64_t off;
	int ok = 0;

	if (elf_obj_vaddr_to_off(eo, vaddr, &off))
		return;
	for (size_t i = 0; i < eo->eo_nphdr && !ok; i++) {
		const GElf_Phdr *ph = &eo->eo_phdrs[i];

		ok = ph->p_type == PT_LOAD && off >= ph->p_offset &&
		     off - ph->p_offset < ph->p_filesz;
	}
	fuzz_check(ok);
}

static void check_segments(const struct elf_obj *eo)
{
	uint64_t bias;

	check_off(eo, eo->eo_ehdr.e_entry);
	elf_obj_load_bias(eo, 0x7f0000000000ULL, ~0xfffULL, &bias);
	for (size_t i = 0; i < eo->eo_nphdr; i++) {
		const GElf_Phdr *ph = &eo->eo_phdrs[i];
		uint64_t page = ph->p_offset & ~0xfffULL;

		check_off(eo, ph->p_vaddr);
		check_off(eo, ph->p_vaddr + ph->p_filesz - 1);
		check_off(eo, ph->p_vaddr + ph->p_memsz);
		if (ph->p_type != PT_LOAD || !ph->p_filesz)
			continue;
		/* Its first page mapped at 0x7f0000000000. */
		elf_obj_load_bias(eo, 0x7f0000000000ULL, page, &bias);
	}
}

static void check_notes(struct elf_obj *eo)
{
	struct usdt_notes ns;
	struct pc_spec spec;
	uint32_t bad;
	char why[160];

	if (usdt_notes_read(eo, &ns))
		return;
	for (size_t i = 0; i < ns.un_n; i++)
		spec_parse(ns.un_v[i].un_args, ns.un_v[i].un_pc_vaddr, elf_sym,
			   eo, &spec, &bad, why, sizeof(why));
	usdt_notes_free(&ns);
}

static void check_funcs(struct elf_obj *eo)
{
	struct func_syms fss;

	if (func_syms_read(eo, &fss))
		return;
	for (size_t i = 1; i < fss.fss_n; i++) {
		const struct func_sym *a = &fss.fss_v[i - 1], *b = &fss.fss_v[i];

		fuzz_check(a->fs_addr < b->fs_addr ||
			   (a->fs_addr == b->fs_addr && strcmp(a->fs_name, b->fs_name) < 0));
	}
	func_syms_free(&fss);
}

PC_FUZZ_TARGET(elf)
{
	struct elf_obj *eo;
	GElf_Shdr sh;
	Elf_Scn *scn;
	uint64_t addr, kdev, ino;
	char path[64];
	int fd;

	fd = fuzz_memfd(data, size, size, path, sizeof(path));
	if (fd < 0)
		abort();
	fuzz_fd_check(fd);
	if (!elf_obj_open(path, (size & 1) ? ELF_QUIET : 0, &eo)) {
		for (size_t i = 0; i < sizeof(elf_fuzz_sections) / sizeof(elf_fuzz_sections[0]); i++)
			elf_obj_find_section(eo, elf_fuzz_sections[i], &sh, &scn);
		for (size_t i = 0; i < sizeof(elf_fuzz_syms) / sizeof(elf_fuzz_syms[0]); i++)
			elf_obj_sym_addr(eo, elf_fuzz_syms[i], &addr);
		check_segments(eo);
		check_notes(eo);
		check_funcs(eo);
		fuzz_check(!elf_obj_place(eo, &kdev, &ino));
		elf_obj_close(eo);
	}
	close(fd);
	return 0;
}
