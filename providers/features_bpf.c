/*
 * features_bpf.c — registry rows (features.h) the bpf(2) system call and
 * the kernel's BTF answer: bpf, bpf_cookie, sleepable_uprobe,
 * bpf_find_vma and bpf_preempt_disable.  By behaviour where a throw-away object can show
 * it; from the kernel's BTF where a behaviour probe would need a program
 * of its own (bpf_find_vma's callback) or a BTF id anyway (a kfunc).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "features.h"
#include "log.h"
#include "privs.h"

/* A one-element array map: what every session makes first. */
int feature_probe_bpf(enum feature_id id, char *why, size_t len)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	snprintf(why, len, "bpf syscall refused (BPF_MAP_CREATE of an array "
		 "map: %s; %s)", pc_strerror(errno), feature_needs(id));
	return 0;
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

int feature_probe_bpf_cookie(enum feature_id id, char *why, size_t len)
{
	if (helper_loads(BPF_FUNC_get_attach_cookie))
		return 1;
	snprintf(why, len, "bpf_get_attach_cookie not allowed in kprobe "
		 "programs (%s): a program calling it did not load",
		 feature_needs(id));
	return 0;
}

/*
 * A kprobe-type program loaded sleepable, calling bpf_copy_from_user into
 * its stack: before 5.19 the verifier refuses a sleepable kprobe-type
 * program ("Only fentry/fexit/fmod_ret and lsm programs can be
 * sleepable"); since, only the attach to a kprobe is refused, and a uprobe
 * is what --sleepable attaches to.
 */
int feature_probe_sleepable(enum feature_id id, char *why, size_t len)
{
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_copy_from_user },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = BPF_F_SLEEPABLE);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", prog,
			       sizeof(prog) / sizeof(prog[0]), &o);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	snprintf(why, len, "a sleepable kprobe-type program calling "
		 "bpf_copy_from_user did not load (%s; %s)", pc_strerror(errno),
		 feature_needs(id));
	return 0;
}

int feature_btf_has_enum_value(const struct btf *btf, const char *type,
			       const char *value)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	const struct btf_type *t;
	const struct btf_enum *e;

	if (id <= 0)
		return 0;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), value))
			return 1;
	return 0;
}

/*
 * bpf_find_vma and bpf_preempt_disable, in one read of the kernel's BTF
 * (about 9 ms here: only when a decision needs one of them).
 */
int feature_probe_kernel_btf(enum feature_id id, char *why, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	char fv_why[120], pd_why[120];
	int fv, pd;

	if (!btf) {
		/* libbpf looked in /sys/kernel/btf and for vmlinux files:
		 * its ESRCH means none.  Nothing to look the names up in,
		 * and nothing a program of ours could be loaded against. */
		int err = errno;

		snprintf(why, len, "no kernel BTF to look it up in (libbpf: %s)",
			 err == ESRCH ? "no vmlinux BTF found" : pc_strerror(err));
		feature_note(FEATURE_BPF_FIND_VMA, 0, why);
		feature_note(FEATURE_BPF_PREEMPT_DISABLE, 0, why);
		return 0;
	}
	fv = feature_btf_has_enum_value(btf, "bpf_func_id", "BPF_FUNC_find_vma");
	pd = btf__find_by_name_kind(btf, "bpf_preempt_disable", BTF_KIND_FUNC) > 0;
	btf__free(btf);
	snprintf(fv_why, sizeof(fv_why), "the kernel's BTF has no "
		 "BPF_FUNC_find_vma in enum bpf_func_id (%s)",
		 feature_needs(FEATURE_BPF_FIND_VMA));
	snprintf(pd_why, sizeof(pd_why), "the kernel's BTF has no kfunc "
		 "bpf_preempt_disable (%s)",
		 feature_needs(FEATURE_BPF_PREEMPT_DISABLE));
	/* Both rows answered here, @id's too: the first answer stands, so
	 * nothing written to @why after this would be read (a copy of its
	 * reason into @why was dead code: draw s8-20261129-a's 4163c19c). */
	feature_note(FEATURE_BPF_FIND_VMA, fv, fv_why);
	feature_note(FEATURE_BPF_PREEMPT_DISABLE, pd, pd_why);
	return id == FEATURE_BPF_FIND_VMA ? fv : pd;
}

/*
 * Does the kernel have module BTF?  libbpf's own test (probe_module_btf):
 * the name field of a BTF object's info came with it (Linux 5.11).  Only
 * then does libbpf list the modules' BTF; 5.10 has none to list.
 */
static int module_btf_supported(void)
{
	struct btf *btf = btf__new_empty();
	struct bpf_btf_info info;
	__u32 len = sizeof(info);
	char name[16];
	int ok = 0;

	if (!btf)
		return 0;
	if (btf__add_int(btf, "int", 4, BTF_INT_SIGNED) > 0 &&
	    !btf__load_into_kernel(btf)) {
		memset(&info, 0, sizeof(info));
		info.name = (__u64)(unsigned long)name;
		info.name_len = sizeof(name);
		ok = !bpf_obj_get_info_by_fd(btf__fd(btf), &info, &len);
	}
	btf__free(btf);
	return ok;
}

/*
 * Where the kernel's vmlinux BTF lacks the site program's weak kfunc
 * (bpf_preempt_disable), libbpf 1.1 looks for it in the modules' BTF and
 * fails the whole load if it may not list them (-EPERM without
 * CAP_SYS_ADMIN; later libbpf skips them).  0, or -EPERM when that
 * listing is refused.
 */
static int module_btf_listable(void)
{
	__u32 id;

	if (feature_has(FEATURE_BPF_PREEMPT_DISABLE, NULL, 0) ||
	    !module_btf_supported() ||
	    !bpf_btf_get_next_id(0, &id) || errno != EPERM)
		return 0;
	return -EPERM;
}

/* The least a session loads: an array map and a kprobe-type program.
 * Refused, the reason names the capability the caller lacks. */
int feature_probe_bpf_tracing(enum feature_id id, char *why, size_t len)
{
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int map = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
	int err = map < 0 ? -errno : 0, fd = -1;
	const char *what = "BPF_MAP_CREATE of an array map";
	char r[400];

	if (!err) {
		close(map);
		what = "BPF_PROG_LOAD of a kprobe program";
		fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", prog, 2,
				   NULL);
		err = fd < 0 ? -errno : 0;
	}
	if (!err) {
		close(fd);
		err = module_btf_listable();
		what = "BPF_BTF_GET_NEXT_ID (libbpf's kfunc lookup)";
		if (!err)
			return 1;
		privs_why(PRIV_BTF_MODULES, err, NULL, r, sizeof(r));
		snprintf(why, len, "%s: %s", what, r);
		return 0;
	}
	if (!privs_why(PRIV_BPF, err, NULL, r, sizeof(r)))
		snprintf(r, sizeof(r), "%s", pc_strerror(-err));
	snprintf(why, len, "%s: %s", what, r);
	return 0;
}
