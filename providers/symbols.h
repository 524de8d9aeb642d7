/*
 * symbols.h — the functions an ELF object defines, from its symbol tables.
 *
 * Both .symtab (complete, absent when stripped) and .dynsym (exported
 * functions only, always there in a shared object) are read; a function in
 * both appears once.  Several names at one address (aliases: memcpy and
 * __memcpy, or __attribute__((alias))) stay separate entries: each name is
 * a probe name, the address is the same site.
 *
 * Kept: STT_FUNC symbols defined in an executable section that is not a
 * PLT (.plt, .plt.got, .plt.sec: stubs have no symbol of their own anyway,
 * only the synthetic "f@plt" names objdump makes up), with a nonzero value.
 *
 * Left out: .dynsym entries of a non-default symbol version (hidden in
 * .gnu.version; readelf shows memcpy@GLIBC_2.2.5 with one '@'): compat
 * code for binaries linked against an old library, under the same name as
 * the current function — a probe there would silently see no calls.
 *
 * Left out: STT_GNU_IFUNC.  An ifunc's symbol value is its *resolver*, run
 * once by ld.so at relocation time; a probe there would never see a call
 * of the function.  The implementations the resolver picks
 * (__memcpy_avx_unaligned_erms, ...) are ordinary STT_FUNC symbols in
 * .symtab and are traced by their own names.
 */
#ifndef PC_SYMBOLS_H
#define PC_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include "elf.h"

struct func_sym {
	char    *fs_name;
	uint64_t fs_addr;       /* link-time vaddr (st_value) */
	uint64_t fs_size;       /* st_size; 0: unknown (hand-written asm) */
	unsigned char fs_bind;  /* STB_LOCAL, STB_GLOBAL, STB_WEAK */
};

struct func_syms {
	struct func_sym *fss_v; /* sorted by (address, name), no duplicates */
	size_t fss_n, fss_cap;
};

/*
 * Every function @eo defines.  0 (an object with no function symbols is
 * not an error: fss_n is 0), -ENOMEM, or -ENOEXEC for a symbol table
 * libelf cannot read (with a message).  On an error @out is empty
 * (nothing to free).
 */
int  func_syms_read(struct elf_obj *eo, struct func_syms *out);
void func_syms_free(struct func_syms *fss);

#endif
