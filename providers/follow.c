/*
 * follow.c — descendants (--follow) and objects mapped after attach ('*').
 *
 * Descendants.  A uprobe perf event for one pid covers that process's mm
 * only, and the kernel offers no "inherit" for uprobes.  So --follow
 * attaches every site system-wide (pid -1) and filters in BPF by the tgid
 * set pc_pids, which the tp_btf program on sched_process_fork grows (a
 * child joins when its parent is in the set; it fires before the child is
 * woken) and sched_process_exit shrinks.  Consequence, and the mode's
 * semantics: the kernel installs the breakpoints and raises the semaphores
 * in EVERY process that maps a traced object, followed or not; the
 * others' hits are dropped in BPF and counted nowhere.  Descendants that
 * exist when -p PID --follow starts are found in /proc (parent pids) and
 * added until a pass over /proc adds nothing, which closes the race with
 * forks during the walk: a fork by a process already in the set is seen
 * by the tracepoint.
 *
 * Exec keeps the tgid, so the process stays followed.  Uprobes are keyed by
 * (inode, offset): an exec of the same binary, or of a binary named by an
 * explicit PATH, hits the existing uprobes with no help from us.
 *
 * PATH '*' means "every object the process maps", also later.  New objects
 * come with exec (the new executable and its interpreter) and from the
 * dynamic linker (DT_NEEDED libraries at startup, dlopen).  Both are
 * caught at a barrier: a BPF program, in the process's own context,
 * sends it SIGSTOP and queues a control record; here we read
 * /proc/PID/maps, resolve the '*' probes in objects not seen before,
 * attach them, and send SIGCONT.  The barriers are sched_process_exec (no
 * instruction of the new image has run) and a uprobe on the dynamic
 * linker's debugger hook _dl_debug_state (r_brk), taken only when
 * _r_debug.r_state is RT_CONSISTENT: new objects are mapped but not yet
 * relocated or initialised, and dlopen() has not returned.
 *
 * Soundness of SIGSTOP as a barrier.  SIGSTOP cannot be blocked or caught;
 * sent from BPF it is pending before the task returns to user mode, so the
 * process runs nothing until it is continued — by our SIGCONT, which is
 * sent only after the attach (a SIGCONT arriving before the stop took
 * effect discards the pending stop, but the attach is done by then).
 * Visible side effects, documented in README.md: the parent gets SIGCHLD
 * with CLD_STOPPED/CLD_CONTINUED; a parent waiting with WUNTRACED or
 * WCONTINUED sees the stop (a job-control shell would report its
 * foreground job stopped and take the terminal back); a SIGCONT handler
 * runs at each barrier; a process stopped by its user at the same moment
 * is continued by us; and a tracer killed by SIGKILL between stop and
 * continue leaves the process stopped.  On a normal end, the programs that
 * stop processes are detached first, then the ring is drained, continuing
 * every process still waiting.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "elf.h"
#include "follow.h"
#include "log.h"
#include "pc.skel.h"
#include "procmaps.h"
#include "procstat.h"
#include "provider.h"

/* An object (dev, inode) some followed process mapped. */
struct fw_obj {
	unsigned long fo_dev, fo_ino;
	int fo_resolved;        /* the '*' probes were searched in it */
	int fo_hook_checked;    /* looked for _dl_debug_state in it */
};

struct fw_pids {
	pid_t *fp_v;
	size_t fp_n, fp_cap;
};

struct follow {
	struct follow_opts fw_o;
	struct site_set   *fw_ss;
	struct pc_session *fw_s;
	const struct probe_req **fw_reqs;  /* the '*' probes, borrowed */
	int                fw_nreqs;
	struct fw_obj     *fw_objs;
	size_t             fw_nobjs, fw_capobjs;
	struct bpf_link   *fw_links[4];     /* fork, exit, exec twice */
	int                fw_nlinks;
	int                fw_ndlhooks;
	int                fw_stopping;
	unsigned long      fw_nstops;
};

int follow_open(const struct follow_opts *o, struct site_set *ss,
		struct follow **out)
{
	struct follow *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->fw_o = *o;
	f->fw_ss = ss;
	f->fw_reqs = calloc(o->fo_nreqs ? o->fo_nreqs : 1,
			    sizeof(*f->fw_reqs));
	if (!f->fw_reqs) {
		follow_close(f);
		return -ENOMEM;
	}
	for (int i = 0; i < o->fo_nreqs; i++)
		if (!strcmp(o->fo_reqs[i].pr_path, "*"))
			f->fw_reqs[f->fw_nreqs++] = &o->fo_reqs[i];
	if (!o->fo_descendants && !f->fw_nreqs) {
		follow_close(f);
		return 0;
	}
	*out = f;
	return 0;
}

unsigned follow_progs(const struct follow *f)
{
	if (!f)
		return 0;
	return (f->fw_o.fo_descendants ? SESSION_PROG_FOLLOW : 0) |
	       (f->fw_nreqs ? SESSION_PROG_EXEC | SESSION_PROG_DLHOOK : 0);
}

static struct fw_obj *obj_get(struct follow *f, unsigned long dev,
			      unsigned long ino)
{
	for (size_t i = 0; i < f->fw_nobjs; i++)
		if (f->fw_objs[i].fo_dev == dev && f->fw_objs[i].fo_ino == ino)
			return &f->fw_objs[i];
	if (f->fw_nobjs == f->fw_capobjs) {
		size_t cap = f->fw_capobjs ? 2 * f->fw_capobjs : 32;
		struct fw_obj *v = realloc(f->fw_objs, cap * sizeof(*v));

		if (!v)
			return NULL;
		f->fw_objs = v;
		f->fw_capobjs = cap;
	}
	f->fw_objs[f->fw_nobjs] = (struct fw_obj){ .fo_dev = dev, .fo_ino = ino };
	return &f->fw_objs[f->fw_nobjs++];
}

static int add_link(struct follow *f, struct bpf_link *link, const char *what)
{
	if (!link) {
		int err = -errno;

		pc_err("follow: cannot attach %s: %s", what, pc_strerror(-err));
		return err;
	}
	if (f->fw_nlinks >= (int)(sizeof(f->fw_links) / sizeof(f->fw_links[0]))) {
		bpf_link__destroy(link);
		pc_err("follow: cannot attach %s: no room for its link", what);
		return -E2BIG;
	}
	f->fw_links[f->fw_nlinks++] = link;
	return 0;
}

/*
 * If @po is a dynamic linker (defines _dl_debug_state and _r_debug), put
 * the barrier uprobe on _dl_debug_state.  The program reads r_state at
 * (hook address + delta): ip-relative, so the load bias cancels out.
 */
static int hook_linker(struct follow *f, const struct pm_object *po)
{
	struct pc_bpf *skel = session_bpf(f->fw_s);
	struct site st = { .st_provider = "follow",
			   .st_name = "_dl_debug_state" };
	uint64_t fn, rd;
	struct elf_obj *eo;
	__u32 idx = f->fw_ndlhooks;
	__s64 delta;
	int err;

	/* Not ELF, unreadable: not a linker.  Out of memory is ours: the
	 * object is never checked again, and a linker not hooked is every
	 * later dlopen not followed, quietly. */
	err = elf_obj_open(po->po_open_path, ELF_QUIET, &eo);
	if (err)
		return err == -ENOMEM ? err : 0;
	err = elf_obj_sym_addr(eo, "_dl_debug_state", &fn) ||
	      elf_obj_sym_addr(eo, "_r_debug", &rd) ||
	      elf_obj_vaddr_to_off(eo, fn, &st.st_off) ||
	      elf_obj_place(eo, &st.st_kdev, &st.st_ino);
	elf_obj_close(eo);
	if (err)
		return 0;
	if (idx == PC_MAX_DLHOOKS) {
		pc_err("follow: '%s': more than %d dynamic linkers: its dlopen "
		       "calls are not followed", po->po_path, PC_MAX_DLHOOKS);
		return 0;
	}
	delta = (__s64)(rd + offsetof(struct r_debug, r_state) - fn);
	if (bpf_map__update_elem(skel->maps.pc_dlhooks, &idx, sizeof(idx),
				 &delta, sizeof(delta), BPF_ANY)) {
		err = -errno;
		pc_err("follow: cannot store the _dl_debug_state hook of '%s': "
		       "%s", po->po_path, pc_strerror(-err));
		return err;
	}
	st.st_path = (char *)po->po_path;
	st.st_open_path = (char *)po->po_open_path;
	err = session_attach_hook(f->fw_s, &st, idx, f->fw_o.fo_attach_pid);
	if (err) {
		pc_err("follow: the _dl_debug_state hook in '%s' not attached: "
		       "dlopen is not followed", po->po_path);
		return err;
	}
	f->fw_ndlhooks++;
	pc_dbg("follow: hooked _dl_debug_state in '%s' at offset 0x%llx",
	       po->po_path, (unsigned long long)st.st_off);
	return 0;
}

/* The '*' probes in @fresh, objects of @pid not searched before. */
static int resolve_fresh(struct follow *f, pid_t pid,
			 const struct pm_objects *fresh)
{
	struct target tg = { .tg_pid = pid, .tg_maps = fresh };
	struct site_set *ss = f->fw_ss;
	size_t first = ss->ss_n;
	int err;

	for (int i = 0; i < f->fw_nreqs; i++) {
		const struct probe_req *req = f->fw_reqs[i];

		err = provider_find(req->pr_kind)->pv_resolve(req, &tg, ss);
		if (err >= 0)
			continue;
		pc_err("follow: pid %d: probe '%s' not resolved in the "
		       "objects mapped since: %s", pid, req->pr_text,
		       pc_strerror(-err));
		/* An object's own fault (a bad note) spoils that object
		 * only; running out of memory is ours, and the objects
		 * are marked searched: never again, so it must end the
		 * trace, not lose their probes quietly. */
		if (err == -ENOMEM)
			return err;
	}
	site_set_drop_same(ss, first);
	for (size_t i = first; i < ss->ss_n; i++) {
		const struct site *st = &ss->ss_v[i];

		if (st->st_bad_mask)
			pc_err("usdt: '%s' %s:%s at 0x%llx: %s (traced as null)",
			       st->st_path, st->st_provider, st->st_name,
			       (unsigned long long)st->st_pc, st->st_bad_why);
		pc_dbg("follow: pid %d: %s:%s in '%s'", pid, st->st_provider,
		       st->st_name, st->st_path);
	}
	err = session_attach_from(f->fw_s, ss, first, f->fw_o.fo_attach_pid);
	if (err)
		pc_err("follow: pid %d: probes in objects mapped since attach "
		       "not attached", pid);
	return err;
}

/* Hook and search every object of @pid not seen before. */
static int follow_scan(struct follow *f, pid_t pid)
{
	struct pm_objects maps, fresh = { 0 };
	/* The process may be gone: not an error. */
	int err = procmaps_read(pid, PM_QUIET, &maps);

	if (err)
		return err == -ESRCH ? 0 : err;
	fresh.po_v = calloc(maps.po_n + 1, sizeof(*fresh.po_v));
	if (!fresh.po_v) {
		procmaps_free(&maps);
		return -ENOMEM;
	}
	for (size_t i = 0; i < maps.po_n && !err; i++) {
		const struct pm_object *po = &maps.po_v[i];
		struct fw_obj *ob = obj_get(f, po->po_dev, po->po_ino);

		if (!ob) {
			err = -ENOMEM;
			break;
		}
		if (!ob->fo_hook_checked) {
			ob->fo_hook_checked = 1;
			err = hook_linker(f, po);
		}
		if (!ob->fo_resolved) {
			ob->fo_resolved = 1;
			fresh.po_v[fresh.po_n++] = *po;   /* strings stay in maps */
		}
	}
	if (!err && fresh.po_n)
		err = resolve_fresh(f, pid, &fresh);
	free(fresh.po_v);
	procmaps_free(&maps);
	return err;
}

void follow_ctl(void *ctx, const struct pc_event *ev)
{
	struct follow *f = ctx;
	pid_t pid = ev->pe_pid;

	if (!f)
		return;
	f->fw_nstops++;
	pc_dbg("follow: pid %d stopped at %s", pid,
	       ev->pe_args[0] == PC_CTL_EXEC ? "exec" : "_dl_debug_state");
	if (!f->fw_stopping && follow_scan(f, pid) == -ENOMEM)
		pc_err("follow: pid %d: its new objects not searched: %s", pid,
		       pc_strerror(ENOMEM));
	if (kill(pid, SIGCONT) && errno != ESRCH)
		pc_err("follow: cannot continue pid %d: %s", pid, pc_strerror(errno));
}

static int pids_add(struct fw_pids *p, pid_t pid)
{
	if (p->fp_n == p->fp_cap) {
		size_t cap = p->fp_cap ? 2 * p->fp_cap : 16;
		pid_t *v = realloc(p->fp_v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->fp_v = v;
		p->fp_cap = cap;
	}
	p->fp_v[p->fp_n++] = pid;
	return 0;
}

static int pids_has(const struct fw_pids *p, pid_t pid)
{
	for (size_t i = 0; i < p->fp_n; i++)
		if (p->fp_v[i] == pid)
			return 1;
	return 0;
}

/* Every (pid, ppid) in /proc now; threads are not listed there. */
static int proc_parents(struct fw_pids *pid, struct fw_pids *ppid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		struct proc_stat ps;
		pid_t p;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		p = atoi(de->d_name);
		if (proc_stat_read(p, &ps))
			continue;       /* exited meanwhile */
		err = pids_add(pid, p) ?: pids_add(ppid, ps.ps_ppid);
	}
	closedir(d);
	return err;
}

/* @root's descendants into the BPF set and @out, until a pass adds none. */
static int add_descendants(struct follow *f, pid_t root, struct fw_pids *out)
{
	int err = pids_add(out, root), added = 1;

	while (!err && added) {
		struct fw_pids pid = { 0 }, ppid = { 0 };
		int more = 1;

		added = 0;
		err = proc_parents(&pid, &ppid);
		while (!err && more) {
			more = 0;
			for (size_t i = 0; i < pid.fp_n && !err; i++) {
				if (!pids_has(out, ppid.fp_v[i]) ||
				    pids_has(out, pid.fp_v[i]))
					continue;
				err = session_add_pid(f->fw_s, pid.fp_v[i]) ?:
				      pids_add(out, pid.fp_v[i]);
				more = added = 1;
			}
		}
		free(pid.fp_v);
		free(ppid.fp_v);
	}
	return err;
}

/* Objects the initial resolution searched (sites found in a process). */
static int mark_resolved(struct follow *f)
{
	for (size_t i = 0; i < f->fw_ss->ss_n; i++) {
		const struct site *st = &f->fw_ss->ss_v[i];
		struct fw_obj *ob;
		struct stat sb;

		if (!st->st_pid || stat(st->st_open_path, &sb))
			continue;
		ob = obj_get(f, sb.st_dev, sb.st_ino);
		if (!ob)
			return -ENOMEM;
		ob->fo_resolved = 1;
	}
	return 0;
}

int follow_start(struct follow *f, struct pc_session *s, pid_t root)
{
	struct fw_pids procs = { 0 };
	struct pc_bpf *skel = session_bpf(s);
	int err = 0;

	if (!f)
		return 0;
	f->fw_s = s;
	if (f->fw_o.fo_descendants)
		err = add_link(f, bpf_program__attach(skel->progs.pc_fork),
			       "sched_process_fork") ?:
		      add_link(f, bpf_program__attach(skel->progs.pc_exit),
			       "sched_process_exit") ?:
		      add_descendants(f, root, &procs);
	else
		err = pids_add(&procs, root);
	if (!err && f->fw_nreqs)
		/* The barrier first, its check after (and destroyed
		 * before it): a tracepoint's programs run in the order
		 * they were attached, and the check must find the
		 * barrier's mark of the same exec (pc.bpf.c). */
		err = add_link(f, bpf_program__attach(skel->progs.pc_exec),
			       "sched_process_exec") ?:
		      add_link(f, bpf_program__attach(skel->progs.pc_exec_seen),
			       "sched_process_exec") ?: mark_resolved(f);
	/* Twice: the second pass sees what was mapped during the first,
	 * before the linker hook was there. */
	for (int pass = 0; pass < 2 && f->fw_nreqs; pass++)
		for (size_t i = 0; i < procs.fp_n && !err; i++)
			err = follow_scan(f, procs.fp_v[i]);
	free(procs.fp_v);
	return err;
}

void follow_stop(struct follow *f)
{
	if (!f || f->fw_stopping)
		return;
	f->fw_stopping = 1;
	while (f->fw_nlinks > 0)
		bpf_link__destroy(f->fw_links[--f->fw_nlinks]);
	if (!f->fw_s)
		return;
	session_detach_hooks(f->fw_s);
	pc_dbg("follow: %lu barriers", f->fw_nstops);
}

#define ULL(x) ((unsigned long long)(x))

/*
 * Execs for which neither exec program ran: the barrier's skips (the
 * kernel's, K6, and PROBECHECK_SKIP_TP's) less those its check found (and
 * took the barrier for, when the process was followed).  Whose execs they
 * were is not known: any of them may have been a followed process's.
 */
static uint64_t exec_missed(struct pc_session *s, const struct session_skipped *k)
{
	uint64_t skipped = k->sk_exec + session_counter(s, PC_CNT_SKIP_EXEC);
	uint64_t caught = session_counter(s, PC_CNT_EXEC_CAUGHT);

	return skipped > caught ? skipped - caught : 0;
}

/* The follow line's tail when PROBECHECK_SKIP_TP emulated skips: kept
 * apart from the kernel's own (K6), which can come on top of them. */
static const char *emulated(struct pc_session *s, const struct session_skipped *k)
{
	static char buf[160];
	uint64_t ex = session_counter(s, PC_CNT_SKIP_EXEC);
	uint64_t chk = session_counter(s, PC_CNT_SKIP_EXEC_CHECK);

	if (!k->sk_emul_fork && !k->sk_emul_exit && !ex && !chk)
		return "";
	snprintf(buf, sizeof(buf), " emulated-skipped: fork=%llu exit=%llu "
		 "exec=%llu exec-check=%llu", ULL(k->sk_emul_fork),
		 ULL(k->sk_emul_exit), ULL(ex), ULL(chk));
	return buf;
}

/*
 * How the tgid set changed, and whether a followed process's events can
 * be missing although every hit counted was delivered: a child the set
 * could not take, a barrier not taken, or a fork the kernel did not run
 * our program for (K6) while hits came from processes outside the set (a
 * child orphaned before its first hit is one of those; the others are
 * recovered at their first hit, pc.bpf.c's join_by_ancestry).
 */
int follow_verdict(struct follow *f, uint64_t filtered)
{
	struct pc_session *s = f ? f->fw_s : NULL;
	struct session_skipped k;
	uint64_t full, lost, late, sk_fork, exec_lost, taken;
	int bad = 0;

	if (!s)
		return 0;
	session_skipped(s, &k);
	full = session_counter(s, PC_CNT_FOLLOW_FULL);
	lost = session_counter(s, PC_CNT_CTL_LOST);
	late = session_counter(s, PC_CNT_LATE);
	sk_fork = k.sk_fork + k.sk_emul_fork;
	taken = session_counter(s, PC_CNT_EXEC_TAKEN);
	if (pc_log_verbose || full || late || sk_fork || k.sk_exit ||
	    k.sk_emul_exit || k.sk_exec || k.sk_exec_seen || taken ||
	    *emulated(s, &k))
		fprintf(stderr, "probecheck: follow: forks=%llu late=%llu "
			"exits=%llu stale=%llu not-followed=%llu filtered=%llu "
			"exec-barriers=%llu taken-by-check=%llu "
			"kernel-skipped: fork=%llu exit=%llu exec=%llu "
			"exec-check=%llu%s\n",
			ULL(session_counter(s, PC_CNT_FORKS)), ULL(late),
			ULL(session_counter(s, PC_CNT_EXITS)),
			ULL(session_counter(s, PC_CNT_STALE)), ULL(full),
			ULL(filtered), ULL(session_counter(s, PC_CNT_EXEC_STOPS)),
			ULL(taken), ULL(k.sk_fork), ULL(k.sk_exit),
			ULL(k.sk_exec), ULL(k.sk_exec_seen), emulated(s, &k));
	if (full) {
		pc_err("follow: %llu processes not followed: the pid set could "
		       "not take them (it holds 4096)", ULL(full));
		bad = -1;
	}
	if (lost) {
		pc_err("follow: %llu barriers not taken (event ring full): "
		       "objects mapped then were not searched", ULL(lost));
		bad = -1;
	}
	if (f->fw_o.fo_descendants && sk_fork && filtered) {
		pc_err("follow: the fork tracepoint program did not run for "
		       "%llu forks (K6: %llu skipped by the kernel, %llu "
		       "emulated) and %llu hits came from processes outside "
		       "the set: a child orphaned before its first hit may be "
		       "among them, its events lost", ULL(sk_fork),
		       ULL(k.sk_fork), ULL(k.sk_emul_fork), ULL(filtered));
		bad = -1;
	}
	exec_lost = f->fw_nreqs ? exec_missed(s, &k) : 0;
	if (exec_lost) {
		pc_err("follow: neither the exec barrier nor its check ran for "
		       "%llu execs (K6: the kernel skipped the barrier %llu "
		       "and its check %llu times; %llu emulated): a followed "
		       "process among them was searched only at its dynamic "
		       "linker's barrier, a static one not at all",
		       ULL(exec_lost), ULL(k.sk_exec), ULL(k.sk_exec_seen),
		       ULL(session_counter(s, PC_CNT_SKIP_EXEC)));
		bad = -1;
	}
	return bad;
}

void follow_close(struct follow *f)
{
	if (!f)
		return;
	follow_stop(f);
	free(f->fw_reqs);       /* the requests are the caller's */
	free(f->fw_objs);
	free(f);
}
