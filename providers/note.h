/*
 * note.h — USDT notes: reading .note.stapsdt.
 *
 * Each note (owner "stapsdt", type 3) holds, on x86-64: pc, base and
 * semaphore as 8-byte link-time addresses, then provider, name and argument
 * strings.  Prelink moved the object without rewriting notes; the note's
 * base then differs from the address of the .stapsdt.base section, and
 * pc and semaphore must be shifted by the difference.  The adjustment is
 * applied only when both the section and the note's base are non-zero.
 */
#ifndef PC_NOTE_H
#define PC_NOTE_H

#include <stdint.h>
#include <stddef.h>
#include "elf.h"

struct usdt_note {
	char    *un_provider;
	char    *un_name;
	char    *un_args;       /* argument string exactly as in the note */
	uint64_t un_pc;         /* as in the note */
	uint64_t un_base;       /* as in the note */
	uint64_t un_sema;       /* as in the note, 0: no semaphore */
	uint64_t un_pc_vaddr;   /* pc after the .stapsdt.base adjustment */
	uint64_t un_sema_vaddr; /* likewise, 0: no semaphore */
	uint64_t un_pc_off;     /* file offset of the probe site */
	uint64_t un_sema_off;   /* file offset of the semaphore, 0: none */
};

struct usdt_notes {
	struct usdt_note *un_v;
	size_t un_n;
};

/*
 * Read every stapsdt note of @eo.  0 (possibly with un_n == 0 when the
 * section exists but is empty) or -errno with a message:
 * -ENODATA no .note.stapsdt section, -EBADMSG malformed note,
 * -ERANGE address outside every PT_LOAD.
 */
int  usdt_notes_read(struct elf_obj *eo, struct usdt_notes *out);
void usdt_notes_free(struct usdt_notes *n);

#endif
