/*
 * site.h — probe sites, the common currency between providers and the core.
 *
 * Vocabulary: a *probe* is what the user names (provider:name); a *site*
 * is one address in one ELF object where it fires.  One probe may have
 * many sites (inlining, repeated macros).  Each site carries the operand
 * spec the BPF program uses to fetch its arguments.
 */
#ifndef PC_SITE_H
#define PC_SITE_H

#include <linux/types.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include "pc_bpf.h"

struct site {
	char    *st_path;       /* object path as the user/process sees it */
	char    *st_open_path;  /* path opened (through /proc/PID/root) */
	char    *st_provider;   /* e.g. "fx" */
	char    *st_name;       /* e.g. "p_int" */
	char    *st_args;       /* operand string as in the note, "" if none */
	uint64_t st_note_pc;    /* note fields, unadjusted */
	uint64_t st_note_base;
	uint64_t st_note_sema;
	uint64_t st_pc;         /* link-time vaddr after base adjustment */
	uint64_t st_off;        /* file offset: the uprobe's offset */
	uint64_t st_kdev, st_ino; /* its file as the kernel names it (kernel
				 * dev_t encoding): a site's place, attach.h */
	uint64_t st_sema_off;   /* file offset: ref_ctr_offset, 0 none */
	uint64_t st_sema_vaddr; /* link-time vaddr of the semaphore, 0 none */
	pid_t    st_pid;        /* process the site was found in, 0 none */
	uint64_t st_bias;       /* load bias in st_pid (valid if st_pid) */
	int      st_retprobe;   /* uretprobe */
	uint32_t st_bad_mask;   /* operands we cannot read */
	char     st_bad_why[160];
	struct pc_spec st_spec;
};

struct site_set {
	struct site *ss_v;
	size_t ss_n, ss_cap;
};

/* Append a zeroed site; NULL on ENOMEM.  Strings are owned by the set. */
struct site *site_set_add(struct site_set *ss);
void site_set_free(struct site_set *ss);
/* Sort by (path, provider, name, pc) and drop exact duplicates. */
void site_set_sort(struct site_set *ss);
/*
 * Drop each site from @first on that an earlier one already is: the same
 * offset, kind (entry or return), provider and name in the same file as
 * the kernel keys a uprobe (st_kdev, st_ino: an explicit PATH and '*'
 * naming one object; a container's path through /proc/PID/root and the
 * host's layer directory; two containers of one image), keeping the
 * order.  Attached twice, each hit would be reported twice.
 */
void site_set_drop_same(struct site_set *ss, size_t first);

/* Shell-style glob match used for PROVIDER and NAME ("*", "?", "[..]"). */
int  site_glob(const char *pattern, const char *s);

#endif
