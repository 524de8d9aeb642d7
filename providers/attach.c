/*
 * attach.c — the table of attach modes and the one place "auto" is
 * decided.  The modes themselves are attach_perf.c, attach_tracefs.c and
 * attach_multi.c, each ending in its ops table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "log.h"

const struct attach_ops *const attach_modes[] = {
	&attach_perf_ops,
	&attach_tracefs_ops,
	&attach_multi_ops,
	NULL,
};

void attach_mode_names(char *buf, size_t len, const char *last_sep)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; attach_modes[i] && used < len; i++) {
		const char *sep = !i ? "" : attach_modes[i + 1] ? ", " : last_sep;
		int n = snprintf(buf + used, len - used, "%s%s", sep,
				 attach_modes[i]->ao_name);

		if (n < 0)
			break;
		used += n;
	}
}

const struct attach_ops *attach_mode_find(const char *name)
{
	for (size_t i = 0; attach_modes[i]; i++)
		if (!strcmp(name, attach_modes[i]->ao_name))
			return attach_modes[i];
	return NULL;
}

const struct attach_ops *attach_choose(const struct attach_ops *want,
				       int per_process)
{
	char why[256];
	int caps;

	if (want)
		return want;
	caps = attach_multi_ops.ao_caps(why, sizeof(why));
	if (caps < 0) {
		pc_dbg("attach: auto: perf (%s)", why);
		return &attach_perf_ops;
	}
	if (per_process && !(caps & ATTACH_CAP_PID_ALL)) {
		pc_dbg("attach: auto: perf (%s)", why);
		return &attach_perf_ops;
	}
	return &attach_multi_ops;
}

/* Does a kprobe-type program calling helper @func load?  By behaviour:
 * r1 (the context) is passed on, the result dropped.  No verifier log
 * (valgrind cannot see the kernel write one). */
static int helper_loads(int func)
{
	const struct bpf_insn prog[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = func },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", prog, 3, NULL);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/*
 * What the tracer reads from the kernel's own BTF, in one pass (about 9 ms
 * here, so once per process and only when asked): the bpf_find_vma helper
 * (its callback argument would make a behaviour probe a program of its
 * own) and the bpf_preempt_disable kfunc (a probe would need its BTF id
 * anyway).
 */
static struct {
	int read, find_vma, preempt_disable;
} kbtf;

static void kbtf_read(void)
{
	struct btf *btf;
	int id;

	if (kbtf.read)
		return;
	kbtf.read = 1;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return;
	kbtf.preempt_disable = btf__find_by_name_kind(btf, "bpf_preempt_disable",
						      BTF_KIND_FUNC) > 0;
	id = btf__find_by_name_kind(btf, "bpf_func_id", BTF_KIND_ENUM);
	if (id > 0) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e = btf_enum(t);

		for (int i = 0; i < btf_vlen(t) && !kbtf.find_vma; i++)
			kbtf.find_vma = !strcmp(btf__name_by_offset(btf, e[i].name_off),
						"BPF_FUNC_find_vma");
	}
	btf__free(btf);
}

int attach_preempt_guard(char *why, size_t len)
{
	const char *env = getenv("PROBECHECK_PREEMPT_GUARD");
	int guard;

	if (env && !strcmp(env, "0")) {
		snprintf(why, len, "off (PROBECHECK_PREEMPT_GUARD=0)");
		return 0;
	}
	kbtf_read();
	guard = kbtf.preempt_disable;
	snprintf(why, len, "%s", guard ? "on: site programs run with bpf_preempt_disable"
		 : "off: the kernel has no bpf_preempt_disable (Linux 6.10+)");
	return guard;
}

int attach_cookie_works(void)
{
	static int cookie = -1;

	if (cookie < 0)
		cookie = helper_loads(BPF_FUNC_get_attach_cookie);
	return cookie;
}

/* Decided once: the kernel's vmlinux BTF is read only when places are
 * used (it costs tens of ms at every start otherwise). */
static enum attach_site_id decide(char *said, size_t len)
{
	const char *force = getenv("PROBECHECK_SITE_ID");
	int forced_place = force && !strcmp(force, "place");
	int cookie = attach_cookie_works();
	const char *how;

	if (!forced_place && (cookie || (force && !strcmp(force, "cookie")))) {
		snprintf(said, len, "by BPF cookie%s", cookie ? ""
			 : " (PROBECHECK_SITE_ID=cookie: the kernel has none)");
		return ATTACH_ID_COOKIE;
	}
	kbtf_read();
	how = kbtf.find_vma ? "bpf_find_vma" : "mm->mmap";
	snprintf(said, len, "by place%s; mappings found with %s",
		 forced_place ? " (PROBECHECK_SITE_ID=place)"
		 : ": no bpf_cookie in kprobe programs (Linux 5.15+)", how);
	return how[0] == 'b' ? ATTACH_ID_PLACE_FINDVMA : ATTACH_ID_PLACE_LIST;
}

enum attach_site_id attach_site_id(char *why, size_t len)
{
	static int done;
	static enum attach_site_id id;
	static char said[200];

	if (!done) {
		id = decide(said, sizeof(said));
		done = 1;
		pc_dbg("attach: sites told apart %s", said);
	}
	if (why)
		snprintf(why, len, "%s", said);
	return id;
}

const char *attach_site_reason(int err, const struct site *st)
{
	if (err == -EINVAL && st->st_sema_off)
		return "invalid argument (another uprobe at this address "
		       "with a different semaphore offset?)";
	return pc_site_strerror(-err);
}
