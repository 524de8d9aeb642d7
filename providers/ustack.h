/*
 * ustack.h — user stack frames to (object, function, offset, build ID),
 * by probecheck's own ELF reader (symbols.c, elf.c), for --ustack.
 *
 * A frame's address is looked up in the objects its process maps now
 * (/proc/PID/maps, read at the process's first frame and again when an
 * address falls in none of them: a library loaded since).  An address is
 * in an object when, less that object's load bias, it lies in one of its
 * executable PT_LOAD segments; its function is the symbol whose [value,
 * value + size) holds it.  Nothing is guessed: an address no object or
 * no sized function symbol holds stays unresolved (NULL), never the
 * nearest name below it.  A process gone before its first frame was
 * looked up, and never noted at a barrier (ustack_syms_note), cannot be
 * resolved: its maps are gone with it.
 */
#ifndef PC_USTACK_H
#define PC_USTACK_H

#include <stdint.h>
#include <sys/types.h>

struct ustack_frame {
	uint64_t uf_addr;
	const char *uf_obj;     /* path as the process sees it; NULL: none */
	const char *uf_sym;     /* function; NULL: no symbol holds it */
	uint64_t uf_off;        /* from the function's start (uf_sym) */
	const char *uf_build_id;/* hex; NULL: the object has none */
};

struct ustack_syms;

int  ustack_syms_new(struct ustack_syms **out);
void ustack_syms_free(struct ustack_syms *z);
/*
 * Read what @pid maps now, for its later frames: at a barrier (follow.c
 * stops a process after exec and after its linker loaded objects), so
 * that a process gone before its events were read is still resolved.
 * 0, -ESRCH, -ENOMEM.
 */
int  ustack_syms_note(struct ustack_syms *z, pid_t pid);
/*
 * Resolve @addr of process @pid into @f (its strings belong to @z and
 * live until ustack_syms_free).  0 (resolved or not: see uf_obj,
 * uf_sym), -ESRCH (the process is gone and was never read), -ENOMEM.
 */
int  ustack_resolve(struct ustack_syms *z, pid_t pid, uint64_t addr,
		    struct ustack_frame *f);

#endif
