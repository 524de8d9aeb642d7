/*
 * pc_bpf.h — the contract between the BPF programs and userspace.
 *
 * Included by the .bpf.c programs (with vmlinux.h) and by C code (with
 * <linux/types.h>).  One BPF program serves every probe site: the BPF cookie
 * of each attachment is the index of that site's argument spec in the
 * `specs` array map, so thousands of sites with different operand specs
 * share one program.
 */
#ifndef PC_BPF_H
#define PC_BPF_H

#define PC_MAX_ARGS   12
#define PC_STR_LEN    256       /* bytes kept per string argument, incl. NUL */
#define PC_MAX_SPECS  65536

/* How one argument is fetched.  Filled by spec_parse_arg() in userspace. */
enum pc_arg_kind {
	PC_ARG_NONE  = 0,       /* unused slot */
	PC_ARG_CONST = 1,       /* pa_val is the value */
	PC_ARG_REG   = 2,       /* value of register pa_reg_off (>> pa_reg_shift) */
	PC_ARG_MEM   = 3,       /* *(base + idx << scale + pa_val [+ ip bias]) */
	PC_ARG_BAD   = 4,       /* operand we cannot read: reported, never guessed */
};

/*
 * One argument.  Register fields are byte offsets into the kernel's
 * struct pt_regs (x86-64), or -1 for "no register".
 *
 * PC_ARG_MEM with pa_ip_rel: the operand named a link-time address
 * (sym(%rip), sym(,%idx,scale), ...).  pa_val then holds
 * (link-time address - link-time probe pc), and the BPF side adds the
 * runtime probe address (pt_regs->ip at the breakpoint), which makes the
 * load bias of the object cancel out without userspace knowing it.
 */
struct pc_arg {
	__u8  pa_kind;          /* enum pc_arg_kind */
	__u8  pa_size;          /* 1, 2, 4 or 8 bytes */
	__u8  pa_signed;        /* sign-extend from pa_size, else zero-extend */
	__u8  pa_reg_shift;     /* 8 for %ah/%bh/%ch/%dh, else 0 */
	__s16 pa_reg_off;       /* base register, -1 none */
	__s16 pa_idx_off;       /* index register, -1 none */
	__u8  pa_scale_shift;   /* log2 of SIB scale (0..3) */
	__u8  pa_ip_rel;        /* add runtime probe address, see above */
	__u16 pa_buf_len;       /* ps_buf_mask: bytes read at the pointer */
	__u8  pa_pad[4];
	__s64 pa_val;           /* constant, or displacement */
};

struct pc_spec {
	__u32 ps_nargs;         /* 0..PC_MAX_ARGS */
	__u32 ps_str_mask;      /* bit i: fetch arg i as a user string */
	__u32 ps_probe_id;      /* userspace's index of the probe name */
	__u32 ps_flags;         /* PC_SPEC_* */
	__u32 ps_buf_mask;      /* bit i: arg i points to pa_buf_len bytes */
	__u32 ps_pad;
	struct pc_arg ps_args[PC_MAX_ARGS];
};

#define PC_SPEC_RETURN  1       /* return probe: arg 0 is the return value */

/*
 * Event header, followed by PC_MAX_ARGS strings when ps_str_mask or
 * ps_buf_mask != 0.
 *
 * An argument is its value (bytes), or it says why not: pe_err_mask bit i
 * with pe_errno[i] the errno of the user-memory read that failed (EFAULT:
 * the page had no page-table entry and a uprobe program cannot fault it
 * in), or 0 where no read was tried (an operand the tracer cannot decode,
 * a NULL string pointer).  A string longer than PC_STR_LEN - 1 bytes sets
 * pe_trunc_mask bit i: its first PC_STR_LEN - 1 bytes are kept.
 */
struct pc_event {
	__u64 pe_ts;            /* bpf_ktime_get_ns() */
	__u32 pe_pid;           /* tgid */
	__u32 pe_tid;
	__u32 pe_cpu;
	__u32 pe_spec_id;       /* cookie: index into the specs map */
	__u32 pe_nargs;
	__u32 pe_err_mask;      /* bit i: arg i could not be read */
	__u32 pe_trunc_mask;    /* bit i: string arg i cut at PC_STR_LEN - 1 */
	__u32 pe_nspid;         /* tgid and tid in the process's own pid */
	__u32 pe_nstid;         /* namespace (a container's view) */
	__u8  pe_errno[PC_MAX_ARGS];
	__u64 pe_args[PC_MAX_ARGS];
};

struct pc_event_str {
	struct pc_event ps_ev;
	char ps_str[PC_MAX_ARGS][PC_STR_LEN];
};

/*
 * --ustack: the user stack of the hit, as bpf_get_stack(BPF_F_USER_STACK)
 * walks it (the kernel's frame-pointer unwinder, perf_callchain_user):
 * pu_ip[0] is the probed instruction (a return probe's: the return
 * address), then one return address per frame.  127 is the kernel's
 * default kernel.perf_event_max_stack: it never walks further.
 */
#define PC_MAX_STACK  127

struct pc_ustack {
	__s32 pu_n;             /* frames in pu_ip, or bpf_get_stack's -errno */
	__u32 pu_pad;
	__u64 pu_ip[PC_MAX_STACK];
};

/* With --ustack every event is one of these: the strings (empty unless
 * the spec reads some), then the stack. */
struct pc_event_stk {
	struct pc_event_str ks_es;
	struct pc_ustack ks_stack;
};

/*
 * Indexes of the per-CPU `counters` array map.  A site hit is SEEN when
 * its program runs, whoever hit it; it is a HIT when it passed the pid
 * filter (with no filter, every seen hit is one); a hit is then either
 * delivered (the consumer counts those) or a DROP.  So
 *   seen = hits + filtered out,   hits = delivered + dropped.
 * The follow counters say how the tgid set changed (pc.bpf.c, --follow).
 */
enum pc_counter {
	PC_CNT_HITS = 0,        /* site hits that passed the pid filter */
	PC_CNT_DROPS = 1,       /* hits whose event did not fit in the ring */
	PC_CNT_FOLLOW_FULL = 2, /* followed processes the set could not take */
	PC_CNT_CTL_LOST = 3,    /* barriers not taken: ring full, signal failed */
	PC_CNT_SEEN = 4,        /* site hits before the pid filter */
	PC_CNT_FORKS = 5,       /* children added by the fork tracepoint */
	PC_CNT_LATE = 6,        /* children added at their first hit or
				   barrier: the fork tracepoint missed them */
	PC_CNT_EXITS = 7,       /* processes removed at their exit */
	PC_CNT_STALE = 8,       /* entries of a recycled pid, removed */
	PC_CNT_SKIP_FORK = 9,   /* fork and exit runs skipped on purpose, */
	PC_CNT_SKIP_EXIT = 10,  /* as K6 skips them (pc_skip_tp) */
	PC_CNT_EXEC_STOPS = 11, /* exec barriers taken for wanted processes */
	PC_CNT_EXEC_CAUGHT = 12,/* execs (any process's) whose barrier
				   program did not run, found by the second
				   program (pc_exec_seen) */
	PC_CNT_SKIP_EXEC = 13,  /* exec barriers skipped on purpose */
	PC_CNT_EXEC_TAKEN = 14, /* barriers the second program took */
	PC_CNT_SKIP_EXEC_CHECK = 15, /* its runs skipped on purpose */
	PC_CNT_MAX,
};

/* pc_skip_tp: the tracepoint programs that act as if the kernel skipped
 * every run of theirs for the set's processes (PROBECHECK_SKIP_TP). */
#define PC_SKIP_FORK 1
#define PC_SKIP_EXIT 2
#define PC_SKIP_EXEC 4
#define PC_SKIP_EXEC_CHECK 8

/* Per site (`pc_site_counts`, by the site's index): see above. */
struct pc_site_count {
	__u64 sc_seen;
	__u64 sc_hits;
};

/*
 * How far up its parents a process not in the tgid set is looked for a
 * followed ancestor (pc.bpf.c, join_by_ancestry).
 */
#define PC_MAX_ANCESTRY 16

/*
 * Control records (follow.c) share the ring with events: a struct
 * pc_event whose pe_spec_id is PC_CTL_ID and pe_args[0] a pc_ctl_kind.
 * The BPF side has stopped the process (SIGSTOP) before submitting one;
 * userspace attaches what the process now maps, then sends SIGCONT.
 */
#define PC_CTL_ID       0xffffffffu
#define PC_MAX_DLHOOKS  16      /* dynamic linkers hooked (pc_dlhooks) */

enum pc_ctl_kind {
	PC_CTL_EXEC = 1,        /* sched_process_exec: a new image */
	PC_CTL_DLOPEN = 2,      /* _dl_debug_state with r_state RT_CONSISTENT */
};

/*
 * Kernels without bpf_cookie (before 5.15) identify a site by its place,
 * as the kernel identifies a uprobe: the file (device, inode) and the
 * offset in it (session.c, pc.bpf.c's pc_place_*).  pc_places maps a
 * place to what the cookie would have been: a site's index, or a dynamic
 * linker hook's index with PC_ID_HOOK set.  Devices are the kernel's
 * encoding, (major << 20) | minor.
 */
struct pc_place {
	__u64 pl_dev;
	__u64 pl_ino;
	__u64 pl_off;
};
#define PC_ID_HOOK      0x80000000u
#define PC_MAX_VMAS     4096    /* mappings searched for a hit's place */

#endif /* PC_BPF_H */
