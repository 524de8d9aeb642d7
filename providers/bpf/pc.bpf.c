// SPDX-License-Identifier: GPL-2.0
/*
 * pc.bpf.c — the one program behind every USDT site.
 *
 * Kernel mechanism: a uprobe (perf_event_open on the uprobe PMU, or one
 * uprobe of a uprobe_multi link) runs this program with the user
 * registers at the breakpoint.  The BPF cookie of the
 * attachment (5.15+) indexes pc_specs, which says how to fetch each argument:
 * from a register, from user memory, or as a constant.  Extension to 64 bits
 * follows the operand's declared size and sign, so -1@%al reads as -1 and
 * 1@%al as 255.
 *
 * Accounting (pc_bpf.h): every run of a site's program counts SEEN, in
 * pc_counters and for the site in pc_site_counts; one that passes the pid
 * filter counts HITS too; a hit whose event does not fit in the ring
 * counts in DROPS.  The consumer counts what it receives; delivered +
 * dropped == hits exactly, and seen - hits were other processes' hits.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "pc_bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The kernel's MAX_PID_NS_LEVEL: namespaces nest at most 32 deep. */
#define PC_MAX_PIDNS_LEVEL 32

/* Set before load: when non-zero only tgids in pc_pids produce events. */
const volatile __u32 pc_filter_pids = 0;
/* Set before load with --follow: descendants of the set join it. */
const volatile __u32 pc_follow = 0;
/* Set before load from PROBECHECK_SKIP_TP, to test the tracer under K6. */
const volatile __u32 pc_skip_tp = 0;
/* Set before load with --ustack[=N]: frames per event (pc_bpf.h). */
const volatile __u32 pc_ustack = 0;

/*
 * Set before load when the kernel has bpf_preempt_disable (6.10+): the
 * site programs then run with preemption off.  Uprobe programs run
 * preemptible (migrate_disable only, no bpf_prog_active), and on a kernel
 * that preempts kernel code (PREEMPT_LAZY, the only model left on x86 in
 * 7.x) a second hit on the same CPU ran while the first was stopped
 * mid-program: on Debian's 7.2 that lost and mixed up records, a record
 * left BUSY for good (K5 in ci/kernel-issues).  Weak externs: an older
 * kernel leaves them unresolved, and the verifier removes the calls
 * behind this frozen flag before it would refuse them.
 */
const volatile __u32 pc_preempt_guard = 0;
extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;

/*
 * Set before load with --sleepable: the site programs are loaded sleepable
 * (5.19+) and, before the event is taken, fault in the user pages its
 * arguments will be read from (prefault).  A uprobe program's reads
 * (bpf_probe_read_user*) cannot fault: a page without a page-table entry
 * reads as EFAULT even with its data in the page cache.  The reads stay
 * the non-faulting ones, under the preemption guard; only the faulting
 * touch, which may sleep, is outside it.  With 0 the verifier removes the
 * call before it would refuse bpf_copy_from_user in a non-sleepable
 * program.
 */
const volatile __u32 pc_sleepable = 0;

#define GUARDED(body) ({					\
	int __r;						\
	if (pc_preempt_guard)					\
		bpf_preempt_disable();				\
	__r = (body);						\
	if (pc_preempt_guard)					\
		bpf_preempt_enable();				\
	__r;							\
})

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PC_MAX_SPECS);
	__type(key, __u32);
	__type(value, struct pc_spec);
} pc_specs SEC(".maps");

/*
 * The traced tgids.  The value is the process's start time
 * (group_leader->start_boottime) when BPF added it, 0 when userspace did:
 * an entry whose process has gone without its exit being seen (the kernel
 * can skip a tracepoint program's run: K6) is told from a new process
 * that got the same pid.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} pc_pids SEC(".maps");

/* tgid -> start time of processes found not to descend from the set: their
 * next hits skip the walk up their parents. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} pc_strangers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PC_MAX_SPECS);
	__type(key, __u32);
	__type(value, struct pc_site_count);
} pc_site_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} pc_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PC_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} pc_counters SEC(".maps");

/* prefault's string read: only its result matters. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[PC_STR_LEN]);
} pc_scratch SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&pc_counters, &which);

	if (c)
		__sync_fetch_and_add(c, 1);   /* two hits may share a CPU (K5) */
}

static __always_inline __u64 extend(__u64 v, const struct pc_arg *a)
{
	int bits = (8 - a->pa_size) * 8;

	if (a->pa_size >= 8 || a->pa_size == 0)
		return v;
	if (a->pa_signed)
		return (__u64)(((__s64)(v << bits)) >> bits);
	return (v << bits) >> bits;
}

static __always_inline __u64 reg_at(struct pt_regs *ctx, __s16 off, int *err)
{
	__u64 v = 0;

	/* ctx cannot be indexed with a variable offset directly. */
	if (off < 0 || off > (int)(sizeof(struct pt_regs) - 8)) {
		*err = -1;
		return 0;
	}
	if (bpf_probe_read_kernel(&v, sizeof(v), (void *)ctx + off))
		*err = -1;
	return v;
}

/*
 * Read exactly the operand's size: reading 8 bytes for a 1-byte operand
 * could fault at the end of a mapping.  Constant sizes keep the verifier
 * happy.
 */
static __always_inline int read_user(__u64 *v, __u8 size, __u64 addr)
{
	switch (size) {
	case 1: return bpf_probe_read_user(v, 1, (void *)addr);
	case 2: return bpf_probe_read_user(v, 2, (void *)addr);
	case 4: return bpf_probe_read_user(v, 4, (void *)addr);
	case 8: return bpf_probe_read_user(v, 8, (void *)addr);
	default: return -1;
	}
}

/* A helper's negative result as fetch_arg's *err: its errno, or -1. */
static __always_inline int err_of(long r)
{
	return r < 0 && r > -256 ? (int)-r : -1;
}

/* Where a memory operand is: *err -1 if a register of it cannot be read. */
static __always_inline __u64 mem_addr(struct pt_regs *ctx,
				      const struct pc_arg *a, int *err)
{
	__u64 addr = (__u64)a->pa_val;

	if (a->pa_reg_off >= 0)
		addr += reg_at(ctx, a->pa_reg_off, err);
	if (a->pa_idx_off >= 0)
		addr += reg_at(ctx, a->pa_idx_off, err)
			<< (a->pa_scale_shift & 3);
	if (a->pa_ip_rel)
		addr += PT_REGS_IP(ctx);
	return addr;
}

/*
 * One argument.  *err: 0 read, the errno (> 0) of a user-memory read that
 * failed, -1 for an operand that cannot be read at all.
 */
static __always_inline __u64 fetch_arg(struct pt_regs *ctx,
				       const struct pc_arg *a, int *err)
{
	__u64 v = 0, addr;
	int r;

	switch (a->pa_kind) {
	case PC_ARG_CONST:
		return extend((__u64)a->pa_val, a);
	case PC_ARG_REG:
		v = reg_at(ctx, a->pa_reg_off, err) >> (a->pa_reg_shift & 63);
		return extend(v, a);
	case PC_ARG_MEM:
		addr = mem_addr(ctx, a, err);
		if (*err)
			return 0;
		r = read_user(&v, a->pa_size, addr);
		if (r)
			*err = err_of(r);
		return extend(v, a);
	default:
		*err = -1;
		return 0;
	}
}

static __always_inline __u64 born(struct task_struct *t)
{
	return BPF_CORE_READ(t, group_leader, start_boottime);
}

/* @t's process is in the set: its entry, and the entry is not a recycled
 * pid's.  Such an entry is removed. */
static __always_inline int member(struct task_struct *t, __u32 tgid)
{
	__u64 *v = bpf_map_lookup_elem(&pc_pids, &tgid);

	if (!v)
		return 0;
	if (*v == 0 || *v == born(t))
		return 1;
	if (!bpf_map_delete_elem(&pc_pids, &tgid))
		count(PC_CNT_STALE);
	return 0;
}

static __always_inline void join(__u32 tgid, __u64 start, __u32 counter)
{
	if (bpf_map_update_elem(&pc_pids, &tgid, &start, BPF_ANY))
		count(PC_CNT_FOLLOW_FULL);
	else
		count(counter);
}

/*
 * --follow: a process not in the set whose parent, grandparent, ... is,
 * joins it here, at its first hit or barrier.  The fork tracepoint adds
 * children before they run, but the kernel can skip that program's run
 * (K6: on a kernel that preempts tracepoint programs, a run stopped
 * mid-program makes it skip the next one on that CPU).  Only a child
 * orphaned before its first hit escapes this: trace_run reports the
 * skipped runs and such hits (filtered) together.
 */
static __always_inline int join_by_ancestry(struct task_struct *t, __u32 tgid)
{
	__u64 start = born(t), *seen = bpf_map_lookup_elem(&pc_strangers, &tgid);
	struct task_struct *p = t;

	if (seen && *seen == start)
		return 0;
	for (int i = 0; i < PC_MAX_ANCESTRY; i++) {
		__u32 ptgid;

		p = BPF_CORE_READ(p, real_parent);
		ptgid = p ? BPF_CORE_READ(p, tgid) : 0;
		if (ptgid <= 1)
			break;
		if (member(p, ptgid)) {
			join(tgid, start, PC_CNT_LATE);
			return 1;
		}
	}
	bpf_map_update_elem(&pc_strangers, &tgid, &start, BPF_ANY);
	return 0;
}

static __always_inline int pid_wanted(void)
{
	struct task_struct *t;
	__u32 tgid;

	if (!pc_filter_pids)
		return 1;
	t = (struct task_struct *)bpf_get_current_task();
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (member(t, tgid))
		return 1;
	return pc_follow && join_by_ancestry(t, tgid);
}

static __always_inline void count_site(__u32 id, int hit)
{
	struct pc_site_count *c = bpf_map_lookup_elem(&pc_site_counts, &id);

	count(PC_CNT_SEEN);
	if (hit)
		count(PC_CNT_HITS);
	if (!c)
		return;
	__sync_fetch_and_add(&c->sc_seen, 1);
	if (hit)
		__sync_fetch_and_add(&c->sc_hits, 1);
}

/* Argument @i could not be read: @err as fetch_arg sets it. */
static __always_inline void set_err(struct pc_event *e, int i, int err)
{
	e->pe_err_mask |= 1u << i;
	if (i < PC_MAX_ARGS)
		e->pe_errno[i] = err > 0 && err < 256 ? err : 0;
}

/*
 * @t's id in the pid namespace it was created in, the innermost one: what
 * getpid()/gettid() return inside a container.  struct pid holds one upid
 * per level, from the initial namespace (0) down to its own.
 */
static __always_inline __u32 ns_nr(struct task_struct *t)
{
	struct pid *p = BPF_CORE_READ(t, thread_pid);
	unsigned int lvl = BPF_CORE_READ(p, level);

	return BPF_CORE_READ(p, numbers[lvl & (PC_MAX_PIDNS_LEVEL - 1)].nr);
}

static __always_inline void fill(struct pt_regs *ctx, struct pc_event *e,
				 const struct pc_spec *s, __u32 id, __u64 pid_tgid)
{
	e->pe_ts = bpf_ktime_get_ns();
	e->pe_pid = pid_tgid >> 32;
	e->pe_tid = (__u32)pid_tgid;
	{
		struct task_struct *t = (void *)bpf_get_current_task();

		e->pe_nstid = ns_nr(t);
		e->pe_nspid = ns_nr(BPF_CORE_READ(t, group_leader));
	}
	e->pe_cpu = bpf_get_smp_processor_id();
	e->pe_spec_id = id;
	e->pe_nargs = s->ps_nargs;
	e->pe_err_mask = 0;
	e->pe_trunc_mask = 0;
	__builtin_memset(e->pe_errno, 0, sizeof(e->pe_errno));
	__builtin_memset(e->pe_args, 0, sizeof(e->pe_args));
	/*
	 * The loop's only back-edge must be its conditional jump: a
	 * `continue` for i >= nargs let clang close the loop with a
	 * fall-through edge, which 6.1's verifier rejects ("back-edge from
	 * insn ..."); newer kernels accept both.
	 */
	for (int i = 0; i < PC_MAX_ARGS && i < s->ps_nargs; i++) {
		int err = 0;

		e->pe_args[i] = fetch_arg(ctx, &s->ps_args[i], &err);
		if (err)
			set_err(e, i, err);
	}
}

/*
 * String @i: the bytes up to the NUL, or the first PC_STR_LEN - 1 marked
 * as cut.  bpf_probe_read_user_str returns PC_STR_LEN both for a string of
 * exactly PC_STR_LEN - 1 bytes and for a longer one (it read the byte at
 * PC_STR_LEN - 1 and wrote a NUL over it): that byte tells them apart.
 * A NULL pointer is no string (null, no errno); any other failure keeps
 * its errno and no bytes (the helper zeroes the buffer).
 */
static __always_inline void fill_str(struct pc_event_str *e, int i, __u64 p)
{
	long r;
	char c = 0;

	if (!p) {
		set_err(&e->ps_ev, i, -1);
		return;
	}
	r = bpf_probe_read_user_str(e->ps_str[i], PC_STR_LEN, (void *)p);
	if (r < 0) {
		set_err(&e->ps_ev, i, err_of(r));
		return;
	}
	if (r == PC_STR_LEN &&
	    (bpf_probe_read_user(&c, 1, (void *)(p + PC_STR_LEN - 1)) || c))
		e->ps_ev.pe_trunc_mask |= 1u << i;
}

/* Buffer @i: exactly pa_buf_len bytes (1..PC_STR_LEN), or none. */
static __always_inline void fill_buf(struct pc_event_str *e, int i, __u64 p,
				     __u32 len)
{
	long r;

	if (len < 1 || len > PC_STR_LEN) {
		set_err(&e->ps_ev, i, -1);
		return;
	}
	r = bpf_probe_read_user(e->ps_str[i], len, (void *)p);
	if (r < 0)
		set_err(&e->ps_ev, i, err_of(r));
}

static __always_inline void fill_strings(struct pc_event_str *e,
					 const struct pc_spec *s)
{
	for (int i = 0; i < PC_MAX_ARGS; i++) {
		__u32 bit = 1u << i;

		e->ps_str[i][0] = 0;
		if (!((s->ps_str_mask | s->ps_buf_mask) & bit) || i >= s->ps_nargs)
			continue;
		if (e->ps_ev.pe_err_mask & bit)
			continue;
		if (s->ps_buf_mask & bit)
			fill_buf(e, i, e->ps_ev.pe_args[i], s->ps_args[i].pa_buf_len);
		else
			fill_str(e, i, e->ps_ev.pe_args[i]);
	}
}

/* The frame count is bounded here, not by the caller: the verifier must
 * see the size argument within the buffer on every kernel. */
static __always_inline void fill_stack(struct pt_regs *ctx, struct pc_ustack *k)
{
	__u32 n = pc_ustack < PC_MAX_STACK ? pc_ustack : PC_MAX_STACK;
	long len = bpf_get_stack(ctx, k->pu_ip, n * sizeof(__u64),
				 BPF_F_USER_STACK);

	k->pu_n = len < 0 ? (__s32)len : (__s32)(len / sizeof(__u64));
	k->pu_pad = 0;
}

/* One hit of site @id (its index in pc_specs). */
static __always_inline int handle_id(struct pt_regs *ctx, __u32 id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	const struct pc_spec *s;

	if (!pid_wanted()) {
		count_site(id, 0);
		return 0;
	}
	count_site(id, 1);
	s = bpf_map_lookup_elem(&pc_specs, &id);
	if (!s)
		goto drop;

	if (pc_ustack) {
		struct pc_event_stk *e;

		e = bpf_ringbuf_reserve(&pc_ring, sizeof(*e), 0);
		if (!e)
			goto drop;
		fill(ctx, &e->ks_es.ps_ev, s, id, pid_tgid);
		fill_strings(&e->ks_es, s);
		fill_stack(ctx, &e->ks_stack);
		bpf_ringbuf_submit(e, 0);
	} else if (s->ps_str_mask | s->ps_buf_mask) {
		struct pc_event_str *e;

		e = bpf_ringbuf_reserve(&pc_ring, sizeof(*e), 0);
		if (!e)
			goto drop;
		fill(ctx, &e->ps_ev, s, id, pid_tgid);
		fill_strings(e, s);
		bpf_ringbuf_submit(e, 0);
	} else {
		struct pc_event *e;

		e = bpf_ringbuf_reserve(&pc_ring, sizeof(*e), 0);
		if (!e)
			goto drop;
		fill(ctx, e, s, id, pid_tgid);
		bpf_ringbuf_submit(e, 0);
	}
	return 0;
drop:
	count(PC_CNT_DROPS);
	return 0;
}

#define PC_PAGE 4096ULL

/* Fault in the page of @addr as the program's own load would (a read
 * fault: nothing is written).  Sleepable programs only. */
static __always_inline void touch(__u64 addr)
{
	char c;

	bpf_copy_from_user(&c, 1, (void *)addr);
}

static __always_inline void touch_range(__u64 addr, __u64 len)
{
	touch(addr);
	if (len > 1 && (addr & ~(PC_PAGE - 1)) != ((addr + len - 1) & ~(PC_PAGE - 1)))
		touch(addr + len - 1);
}

/*
 * --sleepable: every page the hit's reads will need, present.  A string
 * is touched at its start, and on the next page only if a read from a
 * present first page still fails (it runs on into that page): never a
 * page the string does not reach.  A page reclaimed again before the read
 * reads as EFAULT, as without --sleepable: marked, not made up.
 */
static __noinline int prefault(struct pt_regs *ctx)
{
	__u32 id = (__u32)bpf_get_attach_cookie(ctx), zero = 0;
	const struct pc_spec *s;
	char *tmp;

	if (!pid_wanted())
		return 0;
	s = bpf_map_lookup_elem(&pc_specs, &id);
	tmp = bpf_map_lookup_elem(&pc_scratch, &zero);
	if (!s || !tmp)
		return 0;
	for (int i = 0; i < PC_MAX_ARGS && i < s->ps_nargs; i++) {
		const struct pc_arg *a = &s->ps_args[i];
		__u32 bit = 1u << i;
		int err = 0;
		__u64 p;

		if (a->pa_kind == PC_ARG_MEM) {
			p = mem_addr(ctx, a, &err);
			if (!err)
				touch_range(p, a->pa_size);
		}
		if (!((s->ps_str_mask | s->ps_buf_mask) & bit))
			continue;
		err = 0;
		p = fetch_arg(ctx, a, &err);
		if (err || !p)
			continue;
		if (s->ps_buf_mask & bit) {
			touch_range(p, a->pa_buf_len);
			continue;
		}
		touch(p);
		if (((p | (PC_PAGE - 1)) + 1 < p + PC_STR_LEN) &&
		    bpf_probe_read_user_str(tmp, PC_STR_LEN, (void *)p) < 0)
			touch((p | (PC_PAGE - 1)) + 1);
	}
	return 0;
}

/* Not inlined: GUARDED's caller then keeps ctx in a register across the
 * bpf_preempt_disable call instead of on the stack (structure.bats reads
 * the object to check that nothing is spilled before the guard is up). */
static __noinline int handle(struct pt_regs *ctx)
{
	return handle_id(ctx, (__u32)bpf_get_attach_cookie(ctx));
}

SEC("uprobe")
int pc_usdt(struct pt_regs *ctx)
{
	if (pc_sleepable)
		prefault(ctx);
	return GUARDED(handle(ctx));
}

/*
 * The same body for uprobe_multi links (6.6+, attach_multi.c): the kernel
 * wants a program loaded with expected_attach_type BPF_TRACE_UPROBE_MULTI,
 * which cannot attach to a perf event, so it is a second program;
 * session.c sets the type and loads only the one its mode uses.  The
 * cookie is per uprobe of the link, so handle() is unchanged.
 */
SEC("uprobe")
int pc_usdt_multi(struct pt_regs *ctx)
{
	if (pc_sleepable)
		prefault(ctx);
	return GUARDED(handle(ctx));
}

/*
 * Following processes (--follow) and barriers (follow.c).
 *
 * pc_pids grows with sched_process_fork: a child whose parent's tgid is in
 * the set joins it (threads share the tgid and need nothing).  The
 * tracepoint fires in the parent before the child is woken, so the child
 * cannot hit a probe before it is in the set.  sched_process_exit removes
 * a tgid when its last thread exits (signal->live already decremented), so
 * a recycled pid is not traced.
 *
 * A barrier stops the current process with SIGSTOP, sent from its own
 * context: it is pending before the task returns to user mode, so not one
 * user instruction runs until userspace has attached what the process
 * maps now and sent SIGCONT.  The record is reserved first: a process is
 * never stopped without userspace being told.
 */
#define PC_SIGSTOP 19
#define PC_RT_CONSISTENT 0      /* <link.h> r_debug.r_state */

/* Per hooked dynamic linker: &_r_debug.r_state - &_dl_debug_state. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PC_MAX_DLHOOKS);
	__type(key, __u32);
	__type(value, __s64);
} pc_dlhooks SEC(".maps");

/*
 * Guarded like the site programs: the kernel counts a tracepoint program
 * as running from before its first instruction to after its last, and
 * skips it on that CPU meanwhile (K6); preemption off shrinks that
 * window to the kernel's few instructions around the program.
 */
static __noinline int fork_join(struct task_struct *parent,
				struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);

	if (ptgid == ctgid || !member(parent, ptgid))
		return 0;
	if (pc_skip_tp & PC_SKIP_FORK)
		count(PC_CNT_SKIP_FORK);
	else
		join(ctgid, born(child), PC_CNT_FORKS);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(pc_fork, struct task_struct *parent, struct task_struct *child)
{
	return GUARDED(fork_join(parent, child));
}

/*
 * The entry of the exiting process's tgid is its own only if the start
 * times agree (member()): after an exit this program skipped (K6), the
 * pid's next owner, followed or not, finds the old entry.  Its exit
 * removes that entry as stale, not as a followed process leaving (a 6.1
 * guest: a short-lived process that took the recycled pid before the
 * test's stranger was counted as a followed exit, 2026-11-27).
 */
static __noinline int exit_leave(struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u64 *v;

	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	v = bpf_map_lookup_elem(&pc_pids, &tgid);
	if (!v)
		return 0;
	if (*v && *v != born(p)) {
		if (!bpf_map_delete_elem(&pc_pids, &tgid))
			count(PC_CNT_STALE);
		return 0;
	}
	if (pc_skip_tp & PC_SKIP_EXIT)
		count(PC_CNT_SKIP_EXIT);
	else if (!bpf_map_delete_elem(&pc_pids, &tgid))
		count(PC_CNT_EXITS);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(pc_exit, struct task_struct *p)
{
	return GUARDED(exit_leave(p));
}

static __always_inline int stop_and_tell(__u32 kind)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct pc_event *e;

	e = bpf_ringbuf_reserve(&pc_ring, sizeof(*e), 0);
	if (!e) {
		count(PC_CNT_CTL_LOST);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->pe_ts = bpf_ktime_get_ns();
	e->pe_pid = pid_tgid >> 32;
	e->pe_tid = (__u32)pid_tgid;
	e->pe_cpu = bpf_get_smp_processor_id();
	e->pe_spec_id = PC_CTL_ID;
	e->pe_args[0] = kind;
	if (bpf_send_signal(PC_SIGSTOP)) {
		bpf_ringbuf_discard(e, 0);
		count(PC_CNT_CTL_LOST);
		return 0;
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/*
 * K6 can skip the barrier program for any exec.  The second program runs
 * after it for the same exec (tracepoint programs run in the order they
 * were attached, follow.c) under its own recursion guard, and finds the
 * barrier's mark for this exec (thread id -> bprm) or none: none means
 * the barrier did not run, and it takes the barrier itself for a wanted
 * process.  Only an exec both skipped goes unseen, and the counts say so
 * (follow.c: exec_missed).  LRU: a mark whose check was skipped is never
 * deleted; an old bprm address reused by a later exec of the same thread
 * reads as "ran", which only makes the count of unseen execs larger.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} pc_exec_marks SEC(".maps");

static __noinline int exec_barrier(__u64 bprm)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	int wanted = pid_wanted();

	if (wanted && (pc_skip_tp & PC_SKIP_EXEC)) {
		count(PC_CNT_SKIP_EXEC);
		return 0;
	}
	bpf_map_update_elem(&pc_exec_marks, &tid, &bprm, BPF_ANY);
	if (!wanted)
		return 0;
	count(PC_CNT_EXEC_STOPS);
	return stop_and_tell(PC_CTL_EXEC);
}

static __noinline int exec_check(__u64 bprm)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *mark = bpf_map_lookup_elem(&pc_exec_marks, &tid);
	int ran = mark && *mark == bprm;
	int wanted = pid_wanted();

	if (wanted && (pc_skip_tp & PC_SKIP_EXEC_CHECK)) {
		count(PC_CNT_SKIP_EXEC_CHECK);
		return 0;
	}
	if (mark)
		bpf_map_delete_elem(&pc_exec_marks, &tid);
	if (ran)
		return 0;
	count(PC_CNT_EXEC_CAUGHT);
	if (!wanted)
		return 0;
	count(PC_CNT_EXEC_STOPS);
	count(PC_CNT_EXEC_TAKEN);
	return stop_and_tell(PC_CTL_EXEC);
}

/* Guarded like fork and exit: a preempted run makes the kernel skip every
 * other exec's on its CPU (K6). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(pc_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	return GUARDED(exec_barrier((__u64)bprm));
}

/* The barrier's check, a program of its own: the kernel's recursion guard
 * is per program, so when it skips pc_exec for an exec it almost always
 * runs this one. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(pc_exec_seen, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	return GUARDED(exec_check((__u64)bprm));
}

/*
 * On _dl_debug_state, the debugger hook the dynamic linker calls around
 * every change of its link map (r_brk).  Only RT_CONSISTENT means new
 * objects are mapped (RT_ADD comes before mapping, RT_DELETE before
 * unmapping); it comes before relocation and constructors, so before
 * dlopen() returns.  r_state is read ip-relative like a sym(%rip) operand.
 */
static __always_inline int dlhook_idx(struct pt_regs *ctx, __u32 idx)
{
	__s32 state = -1;
	__s64 *delta;

	if (!pid_wanted())
		return 0;
	delta = bpf_map_lookup_elem(&pc_dlhooks, &idx);
	if (!delta || bpf_probe_read_user(&state, sizeof(state),
					  (void *)(PT_REGS_IP(ctx) + *delta)))
		return 0;
	if (state != PC_RT_CONSISTENT)
		return 0;
	return stop_and_tell(PC_CTL_DLOPEN);
}

static __always_inline int dlhook(struct pt_regs *ctx)
{
	return dlhook_idx(ctx, (__u32)bpf_get_attach_cookie(ctx));
}

SEC("uprobe")
int pc_dlhook(struct pt_regs *ctx)
{
	/* Not guarded: with preemption off, kernels with "bpf: Send signals
	 * asynchronously if !preemptible" defer bpf_send_signal to a per-CPU
	 * irq_work that refuses a second signal while one is pending (EBUSY),
	 * and a lost stop is a library attached late.  Its state is small. */
	return dlhook(ctx);
}

/* The same, for a session whose attach mode is uprobe_multi (attach.h). */
SEC("uprobe")
int pc_dlhook_multi(struct pt_regs *ctx)
{
	return dlhook(ctx);
}

/*
 * Sites by place, for kernels without bpf_cookie (pc_bpf.h).  The place
 * of a hit is the mapping that holds its address: (device, inode) of the
 * mapped file and address - vm_start + vm_pgoff * page size.  Two ways to
 * find the mapping, one program each (session.c loads the one the kernel
 * has): the list mm->mmap (before 6.1: every kernel without cookies) and
 * bpf_find_vma (5.17+: lets a new kernel run the same lookup, to test it).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PC_MAX_SPECS);
	__type(key, struct pc_place);
	__type(value, __u32);
} pc_places SEC(".maps");

/* The mm and mapping as kernels before 6.1 lay them out (CO-RE). */
struct vm_area_struct___list {
	unsigned long vm_start, vm_end;
	struct vm_area_struct___list *vm_next;
	unsigned long vm_pgoff;
	struct file *vm_file;
} __attribute__((preserve_access_index));

struct mm_struct___list {
	struct vm_area_struct___list *mmap;
} __attribute__((preserve_access_index));

static __always_inline int place_fill(struct pc_place *pl, __u64 ip,
				      __u64 start, __u64 pgoff,
				      struct file *f)
{
	struct inode *in = BPF_CORE_READ(f, f_inode);
	__u32 dev = BPF_CORE_READ(in, i_sb, s_dev);

	if (!in)
		return -1;
	pl->pl_dev = dev;
	pl->pl_ino = BPF_CORE_READ(in, i_ino);
	pl->pl_off = ip - start + (pgoff << 12);
	return 0;
}

/* A site's index, or a hook's with PC_ID_HOOK, by the hit's place. */
static __always_inline int by_place(struct pt_regs *ctx,
				    const struct pc_place *pl)
{
	__u32 *id = bpf_map_lookup_elem(&pc_places, pl);

	if (!id) {
		count(PC_CNT_SEEN);
		if (pid_wanted()) {
			count(PC_CNT_HITS);
			count(PC_CNT_DROPS);    /* not ours: never unaccounted */
		}
		return 0;
	}
	if (*id & PC_ID_HOOK)
		return dlhook_idx(ctx, *id & ~PC_ID_HOOK);
	return handle_id(ctx, *id);
}

static __noinline int place_list(struct pt_regs *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	struct mm_struct___list *mm = (void *)BPF_CORE_READ(t, mm);
	struct vm_area_struct___list *v = BPF_CORE_READ(mm, mmap);
	__u64 ip = PT_REGS_IP(ctx);
	struct pc_place pl = {};

	/* by_place after the loop, not inside it: the verifier then walks
	 * its body once, not once per iteration (5.10's 1M-insn limit). */
	for (int i = 0; i < PC_MAX_VMAS && v; i++) {
		__u64 start = BPF_CORE_READ(v, vm_start);

		if (ip >= start && ip < BPF_CORE_READ(v, vm_end)) {
			place_fill(&pl, ip, start, BPF_CORE_READ(v, vm_pgoff),
				   BPF_CORE_READ(v, vm_file));
			break;
		}
		v = BPF_CORE_READ(v, vm_next);
	}
	return by_place(ctx, &pl);      /* not found: counted as a drop */
}

struct find_ctx {
	__u64 ip;
	struct pc_place pl;
	int found;
};

static long find_cb(struct task_struct *t, struct vm_area_struct *v,
		    struct find_ctx *fc)
{
	if (!place_fill(&fc->pl, fc->ip, v->vm_start, v->vm_pgoff, v->vm_file))
		fc->found = 1;
	return 0;
}

SEC("uprobe")
int pc_place_list(struct pt_regs *ctx)
{
	return GUARDED(place_list(ctx));
}

static __noinline int place_findvma(struct pt_regs *ctx)
{
	struct find_ctx fc = { .ip = PT_REGS_IP(ctx) };

	bpf_find_vma(bpf_get_current_task_btf(), fc.ip, find_cb, &fc, 0);
	return by_place(ctx, &fc.pl);
}

SEC("uprobe")
int pc_place_findvma(struct pt_regs *ctx)
{
	return GUARDED(place_findvma(ctx));
}
