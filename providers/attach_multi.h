/*
 * attach_multi.h — uprobe_multi links (Linux 6.6) through the raw bpf(2)
 * syscall: every site of one object in one BPF link.  Whether the kernel
 * has them: features.h (uprobe_multi, uprobe_multi_pid).
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

#endif
