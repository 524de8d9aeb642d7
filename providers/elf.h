/*
 * elf.h — the ELF facts the providers need, read with libelf.
 *
 * An elf_obj is one opened ELF file.  Addresses are link-time virtual
 * addresses; a uprobe wants a file offset, which comes from the PT_LOAD
 * segment containing the address (not from a section: lld emits segments
 * whose p_vaddr != p_offset, and a semaphore lives in .probes, not .text).
 */
#ifndef PC_ELF_H
#define PC_ELF_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include <gelf.h>

struct elf_obj {
	char   *eo_path;        /* path as opened */
	int     eo_fd;
	Elf    *eo_elf;
	GElf_Ehdr eo_ehdr;      /* e_type: ET_EXEC, ET_DYN */
	size_t  eo_nphdr;
	GElf_Phdr *eo_phdrs;    /* copy of the program headers */
	int     eo_quiet;       /* opened with ELF_QUIET */
	int     eo_hush;        /* first attempt of elf_obj_open: libelf's
				 * "corrupt" is not reported yet (elf.c) */
	int     eo_placed;      /* eo_kdev, eo_ino known (elf_obj_place) */
	uint64_t eo_kdev, eo_ino;
};

/* The caller tries an object that need not qualify ('*', a process's
 * maps): problems with it, now or later, are not reported. */
#define ELF_QUIET 1u

/* 0 or -errno (-ENOENT missing, -ENOEXEC not ELF/truncated/not x86-64). */
int  elf_obj_open(const char *path, unsigned flags, struct elf_obj **out);
/* pc_err about @eo, unless it was opened with ELF_QUIET (also for note.c
 * and symbols.c: what they read of @eo). */
void elf_obj_err(const struct elf_obj *eo, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void elf_obj_close(struct elf_obj *eo);
/*
 * Whether libelf's error @err (an elf_errno() value) is out of memory:
 * a NULL from elf_getdata or elf_strptr is then ours to report as
 * -ENOMEM, not a section or name the file lacks.
 */
int  elf_lib_oom(int err);
/* The opened file's device (the kernel's encoding, (major << 20) | minor)
 * and inode: the file a uprobe on it is keyed by, overlayfs's real file
 * for one on overlayfs (realfile.h).  Found once per object: every site
 * of it asks (on overlayfs that is mountinfo read, and layers looked
 * up).  0 or -errno. */
int  elf_obj_place(struct elf_obj *eo, uint64_t *kdev, uint64_t *ino);

/* Section by name: 0 and *shdr / *scn, or -ENOENT. */
int  elf_obj_find_section(struct elf_obj *eo, const char *name,
			  GElf_Shdr *shdr, Elf_Scn **scn);

/* Link-time vaddr -> file offset through PT_LOAD.  0 or -ERANGE. */
int  elf_obj_vaddr_to_off(const struct elf_obj *eo, uint64_t vaddr,
			  uint64_t *off);

/*
 * Symbol value (link-time vaddr) from .symtab, then .dynsym; 0 or -ENOENT.
 * Used for rip-relative and symbolic SIB operands.
 */
int  elf_obj_sym_addr(struct elf_obj *eo, const char *name, uint64_t *addr);

/*
 * Load bias of this object in a process, given one mapping of it: the
 * mapping's start address and file offset (from /proc/PID/maps).
 * bias = runtime address - link-time address.
 */
int  elf_obj_load_bias(const struct elf_obj *eo, uint64_t map_start,
		       uint64_t map_off, uint64_t *bias);

#endif
