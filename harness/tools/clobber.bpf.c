/*
 * clobber.bpf.c — a deliberately broken tracer, for the integrity suite:
 * uprobe programs that change the traced program's state.
 *
 *   pc_clobber_reg  flips bit 0 of %rbx through pt_regs.  Writable uprobe
 *                   contexts came with 7384893d970e ("bpf: Allow uprobe
 *                   program to change context registers"); kernels without
 *                   it refuse to load the program (6.18.44 here does).
 *   pc_clobber_mem  writes a qword at -48(%rsp) with bpf_probe_write_user
 *                   (4.8+, root): in the red zone, but outside the 32
 *                   bytes an optimized uprobe's CALL overwrites.
 * The integrity oracle (fixtures/fx_integ.c) must report either, and must
 * not mistake it for the kernel's red-zone signature (K1).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int pc_clobber_reg(struct pt_regs *ctx)
{
	ctx->bx ^= 0x1;
	return 0;
}

SEC("uprobe")
int pc_clobber_mem(struct pt_regs *ctx)
{
	__u64 v = 0xc10bbe5c10bbe5ull;

	bpf_probe_write_user((void *)(ctx->sp - 48), &v, sizeof(v));
	return 0;
}
