/*
 * fuzz_note.c — the USDT note parser (providers/note.c).
 *
 * The input is wrapped into a small ELF file (suites/unit/note_elfw.h) so
 * that the fuzzer's time goes into the notes, not into libelf's header
 * checks (fuzz_elf.c has those):
 *
 *   u8  flags   1: a .stapsdt.base section   2: .note.stapsdt aligned to 8
 *               4: .note.stapsdt is PROGBITS, not NOTE   8: ET_EXEC
 *               16: opened quietly (ELF_QUIET)
 *   u8  nload   PT_LOAD segments, nload % 5 of them, each
 *               u64 vaddr, u64 offset, u64 filesz, u64 memsz
 *   u64 base    sh_addr of .stapsdt.base
 *   ...         the rest: the bytes of .note.stapsdt
 *
 * A segment's offset is taken modulo 64 MiB and its file size cut to end
 * there; the file is made that long (a memfd is sparse: a hole costs
 * nothing), so real objects' segments fit as they are.  The file is opened
 * as elf_obj_open opens any path (/proc/self/fd/N), read with
 * usdt_notes_read, and every note's arguments parsed as prov_usdt.c does.
 *
 * Checked: on success, every note's addresses are moved by the prelink
 * difference exactly when note.h says, its offsets agree with
 * elf_obj_vaddr_to_off of those addresses, and its strings are there; on
 * failure, -EBADMSG, -ENODATA or -ERANGE and nothing returned.
 */
#include "fuzz.h"
#include <errno.h>
#include "../unit/note_elfw.h"
#include "elf.h"
#include "note.h"
#include "spec.h"

#define FUZZ_NOTE_VMAX (64ULL << 20)

static int note_sym(void *ctx, const char *name, uint64_t *addr)
{
	return elf_obj_sym_addr(ctx, name, addr);
}

/* @base: sh_addr of .stapsdt.base, 0 when there is none. */
static void check_notes(struct elf_obj *eo, const struct usdt_notes *ns,
			uint64_t base)
{
	for (size_t i = 0; i < ns->un_n; i++) {
		const struct usdt_note *n = &ns->un_v[i];
		uint64_t shift = base && n->un_base ? base - n->un_base : 0;
		struct pc_spec spec;
		uint32_t bad;
		uint64_t off;
		char why[160];

		fuzz_check(n->un_provider && n->un_name && n->un_args);
		/* note.h: moved by the prelink difference when both are set */
		fuzz_check(n->un_pc_vaddr == n->un_pc + shift);
		fuzz_check(n->un_sema_vaddr == (n->un_sema ? n->un_sema + shift : 0));
		fuzz_check(!elf_obj_vaddr_to_off(eo, n->un_pc_vaddr, &off) &&
			   off == n->un_pc_off);
		fuzz_check(!n->un_sema == !n->un_sema_vaddr);
		if (n->un_sema_vaddr)
			fuzz_check(!elf_obj_vaddr_to_off(eo, n->un_sema_vaddr, &off) &&
				   off == n->un_sema_off);
		else
			fuzz_check(n->un_sema_off == 0);
		spec_parse(n->un_args, n->un_pc_vaddr, note_sym, eo, &spec,
			   &bad, why, sizeof(why));
	}
}

PC_FUZZ_TARGET(note)
{
	const uint8_t *p = data;
	size_t n = size, fsize;
	struct nw_elf e = { 0 };
	struct nw_sec *s;
	struct elf_obj *eo;
	struct usdt_notes notes;
	unsigned char *img, base_byte = 0;
	unsigned flags, nload;
	uint64_t base, note_off, end = 0;
	char path[64];
	int fd, err;

	flags = fuzz_take(&p, &n, 1);
	nload = fuzz_take(&p, &n, 1) % 5;
	for (unsigned i = 0; i < nload; i++) {
		Elf64_Phdr *ph = &e.nw_ph[e.nw_nph++];
		uint64_t vaddr = fuzz_take(&p, &n, 8), off = fuzz_take(&p, &n, 8);
		uint64_t filesz = fuzz_take(&p, &n, 8), memsz = fuzz_take(&p, &n, 8);

		off %= FUZZ_NOTE_VMAX;
		if (filesz > FUZZ_NOTE_VMAX - off)
			filesz = FUZZ_NOTE_VMAX - off;
		*ph = nw_load(PF_R | PF_X, off, vaddr, filesz, memsz);
		if (off + filesz > end)
			end = off + filesz;
	}
	base = fuzz_take(&p, &n, 8);

	e.nw_type = (flags & 8) ? ET_EXEC : ET_DYN;
	note_off = (64 + e.nw_nph * sizeof(Elf64_Phdr) + 7) & ~7ULL;
	e.nw_size = note_off + n + 1;
	s = nw_add_sec(&e, ".note.stapsdt", (flags & 4) ? SHT_PROGBITS : SHT_NOTE,
		       SHF_ALLOC, 0, note_off, p, n);
	s->ns_align = (flags & 2) ? 8 : 4;
	if (flags & 1)
		nw_add_sec(&e, ".stapsdt.base", SHT_PROGBITS, SHF_ALLOC, base,
			   note_off + n, &base_byte, 1);
	fsize = nw_image(&e, &img);
	if (!fsize)
		abort();
	fd = fuzz_memfd(img, fsize, end > fsize ? end : fsize, path, sizeof(path));
	free(img);
	if (fd < 0)
		abort();
	fuzz_fd_check(fd);

	err = elf_obj_open(path, (flags & 16) ? ELF_QUIET : 0, &eo);
	if (!err) {
		memset(&notes, 0xa5, sizeof(notes));
		err = usdt_notes_read(eo, &notes);
		fuzz_check(!err || err == -EBADMSG || err == -ENODATA ||
			   err == -ERANGE);
		if (err)
			fuzz_check(!notes.un_v && !notes.un_n);
		else
			check_notes(eo, &notes, (flags & 1) ? base : 0);
		usdt_notes_free(&notes);
		elf_obj_close(eo);
	}
	close(fd);
	return 0;
}
