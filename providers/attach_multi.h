/*
 * attach_multi.h — uprobe_multi links (Linux 6.6) through the raw bpf(2)
 * syscall: every site of one object in one BPF link.
 */
#ifndef PC_ATTACH_MULTI_H
#define PC_ATTACH_MULTI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* enum bpf_attach_type in include/uapi/linux/bpf.h (6.6+). */
#define UMULTI_ATTACH_TYPE      48      /* BPF_TRACE_UPROBE_MULTI */
#define UMULTI_F_RETURN         1u      /* BPF_F_UPROBE_MULTI_RETURN */

/*
 * One link attaching @prog_fd (loaded with expected_attach_type
 * UMULTI_ATTACH_TYPE) at @cnt offsets of @path, with a ref_ctr_offset
 * (0: none) and a BPF cookie each; @retprobe: all of them uretprobes.
 * @pid: -1 every process, else the kernel's filter on that process.
 * The link fd, or -errno (the kernel does not say which offset failed;
 * the uprobes it registered before the failure are gone again).
 */
int umulti_link_create(int prog_fd, const char *path, const uint64_t *offs,
		       const uint64_t *ref_ctr_offs, const uint64_t *cookies,
		       uint32_t cnt, int retprobe, pid_t pid);

/* What umulti_probe found; a *_why says what failed when a flag is 0. */
struct umulti_caps {
	int  uc_link;           /* a link is made and its uprobe fires */
	int  uc_pid;            /* with a pid, every thread of it is seen */
	char uc_link_why[160];
	char uc_pid_why[200];
};

/*
 * Probe by behaviour, never by version: a throw-away counting program is
 * attached by one uprobe_multi link, filtered on a forked child of ours,
 * at a function of our own executable; the child calls it from its main
 * thread and from a second thread.  Main thread seen: uc_link; both seen:
 * uc_pid (before Linux 6.10 the link's filter compared threads, not
 * processes, and the second thread's hit was lost).  Results are cached
 * for the process.  0, or -errno when the probe itself could not run.
 */
int umulti_probe(struct umulti_caps *c);

#endif
