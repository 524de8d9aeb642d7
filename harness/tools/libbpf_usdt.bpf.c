/*
 * libbpf_usdt.bpf.c — the BPF half of pc-libbpf-usdt, a reference tracer
 * built only on libbpf's own USDT support (usdt.bpf.h): a tracer the
 * suites can compare probecheck with (harness/tracers/libbpf).
 *
 *   lu_usdt   USDT probes (bpf_program__attach_usdt): the argument count
 *             and every argument from libbpf's bpf_usdt_arg_cnt /
 *             bpf_usdt_arg, which extend each operand to 64 bits by the
 *             sign and size libbpf parsed from the note; strings for the
 *             arguments lu_conf marks, read with bpf_probe_read_user_str.
 *   lu_func   function probes (bpf_program__attach_uprobe_opts): raw
 *             SysV argument registers, then the stack, at entry; %rax at
 *             return; nothing at an offset.
 *
 * The probe's index in the request is the cookie (usdt_cookie for USDT,
 * bpf_cookie for function probes); lu_conf[cookie] says what to read.
 * lu_counts counts hits (every run of either program) and drops (ring
 * full): userspace adds what it delivered and prints the summary.
 */
#ifndef LU_TYPES_ONLY
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
/* One spec per (site, cookie): room for many probes of many sites. */
#define BPF_USDT_MAX_SPEC_CNT 4096
#include <bpf/usdt.bpf.h>
#endif

/* ---- shared with pc-libbpf-usdt.c, which includes this file with
 * LU_TYPES_ONLY defined (one definition, no header of its own) ---- */
#define LU_MAX_PROBES	4096
#define LU_MAX_ARGS	12
#define LU_STR_LEN	256

enum { LU_HITS, LU_DROPPED, LU_NCOUNTS };
enum { LU_KIND_USDT, LU_KIND_ENTRY, LU_KIND_RETURN, LU_KIND_OFFSET };

struct lu_conf {		/* lu_conf[cookie], filled before attaching */
	__u32 kind;
	__u32 nargs;		/* function entry: --args */
	__u32 strmask;		/* USDT: bit i, argument i is a string */
};

struct lu_event {
	__u32 pid, tid;
	__u32 cookie, kind;
	__s32 nargs;		/* USDT: bpf_usdt_arg_cnt (< 0: its error) */
	__u32 errmask;		/* bit i: argument i unreadable */
	__u32 strmask;		/* bit i: str[i] follows (lu_event_str) */
	__u32 strerr;		/* bit i: that string unreadable */
	__s32 err;		/* first bpf_usdt_arg error */
	__u32 pad;
	__u64 args[LU_MAX_ARGS];
};

struct lu_event_str {
	struct lu_event e;
	char str[LU_MAX_ARGS][LU_STR_LEN];
};

#ifndef LU_TYPES_ONLY
char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} lu_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LU_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct lu_conf);
} lu_conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LU_NCOUNTS);
	__type(key, __u32);
	__type(value, __u64);
} lu_counts SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&lu_counts, &which);

	if (c)
		(*c)++;
}

/* A record with string room only when the probe has string arguments:
 * the ring takes constant sizes, and 3 KB per event would cut its
 * capacity twelvefold for nothing. */
static __always_inline struct lu_event *reserve(int with_strings)
{
	struct lu_event *e;

	if (with_strings)
		e = bpf_ringbuf_reserve(&lu_ring, sizeof(struct lu_event_str), 0);
	else
		e = bpf_ringbuf_reserve(&lu_ring, sizeof(struct lu_event), 0);
	if (!e) {
		count(LU_DROPPED);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	return e;
}

static __always_inline void head(struct lu_event *e, __u32 cookie, __u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();

	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->cookie = cookie;
	e->kind = kind;
}

/* @with_strings is a constant at each call: the verifier then sees the
 * string writes only on the path that reserved room for them. */
static __always_inline int usdt_event(struct pt_regs *ctx, __u32 cookie,
				      __u32 strmask, const int with_strings)
{
	struct lu_event *e = reserve(with_strings);
	int n, i;

	if (!e)
		return 0;
	head(e, cookie, LU_KIND_USDT);
	n = bpf_usdt_arg_cnt(ctx);
	e->nargs = n;           /* negative: libbpf's error, no arguments */
	e->strmask = strmask;
#pragma unroll
	for (i = 0; i < LU_MAX_ARGS; i++) {
		long v;
		int err;

		if (i >= n)
			break;
		err = bpf_usdt_arg(ctx, i, &v);
		if (err) {
			e->errmask |= 1u << i;
			if (!e->err)
				e->err = err;
			continue;
		}
		e->args[i] = v;
		if (with_strings && (strmask & (1u << i))) {
			struct lu_event_str *es = (void *)e;

			if (bpf_probe_read_user_str(es->str[i], LU_STR_LEN,
						    (void *)v) < 0)
				e->strerr |= 1u << i;
		}
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("usdt")
int lu_usdt(struct pt_regs *ctx)
{
	__u32 cookie = (__u32)bpf_usdt_cookie(ctx);
	struct lu_conf *conf = bpf_map_lookup_elem(&lu_conf, &cookie);
	__u32 strmask = conf ? conf->strmask : 0;

	count(LU_HITS);
	if (strmask)
		return usdt_event(ctx, cookie, strmask, 1);
	return usdt_event(ctx, cookie, 0, 0);
}

/* Entry: %rdi %rsi %rdx %rcx %r8 %r9, then 8(%rsp), 16(%rsp)... (the
 * return address is at 0(%rsp) when the entry uprobe fires). */
SEC("uprobe")
int lu_func(struct pt_regs *ctx)
{
	__u32 cookie = (__u32)bpf_get_attach_cookie(ctx);
	struct lu_conf *conf = bpf_map_lookup_elem(&lu_conf, &cookie);
	struct lu_event *e;
	__u32 kind, n;
	int i;

	count(LU_HITS);
	e = reserve(0);
	if (!e)
		return 0;
	kind = conf ? conf->kind : LU_KIND_OFFSET;
	n = conf ? conf->nargs : 0;
	head(e, cookie, kind);
	if (kind == LU_KIND_RETURN) {
		e->nargs = 1;
		e->args[0] = PT_REGS_RC(ctx);
	} else if (kind == LU_KIND_ENTRY) {
		e->nargs = n;
		e->args[0] = PT_REGS_PARM1(ctx);
		e->args[1] = PT_REGS_PARM2(ctx);
		e->args[2] = PT_REGS_PARM3(ctx);
		e->args[3] = PT_REGS_PARM4(ctx);
		e->args[4] = PT_REGS_PARM5(ctx);
		e->args[5] = ctx->r9;	/* libbpf 1.1 has no PT_REGS_PARM6 */
		for (i = 6; i < LU_MAX_ARGS; i++) {	/* a bounded loop (5.3+) */
			if (i >= n)
				break;
			if (bpf_probe_read_user(&e->args[i], 8,
						(void *)(PT_REGS_SP(ctx) + 8 * (i - 5)))) {
				e->errmask |= 1u << i;
				e->args[i] = 0;
			}
		}
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}
#endif /* !LU_TYPES_ONLY */
