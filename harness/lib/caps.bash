# caps.bash — what this kernel and machine can do, probed once per run.
#
# harness/run/run-suites calls pc_caps_probe once and exports PROBECHECK_CAPS
# (the file it wrote); `requires` in helpers/common.bash only reads it.  A
# suite run directly with bats probes once per bats run instead, into
# $BATS_RUN_TMPDIR.
#
# The file is key=value lines.  Every capability has KEY=1 or KEY=0, and
# KEY_why=... says what was missing when it is 0, so a SKIP can name it.
# Sourced by bash only; defines functions, runs nothing.

PC_TRACEFS=${PC_TRACEFS:-/sys/kernel/tracing}

# _pc_cap FILE KEY OK WHY: record one capability.
_pc_cap() {
	if [[ $3 == 1 ]]; then
		printf '%s=1\n' "$2" >>"$1"
	else
		printf '%s=0\n%s_why=%s\n' "$2" "$2" "$4" >>"$1"
	fi
}

# pc_tracefs_mount: tracefs at $PC_TRACEFS, mounting it if we may.
# Prints "mounted" if it did the mount.  Fails if tracefs is not there.
pc_tracefs_mount() {
	[[ -e $PC_TRACEFS/uprobe_events ]] && return 0
	[[ $(id -u) == 0 ]] || return 1
	grep -qw tracefs /proc/filesystems || return 1
	mount -t tracefs nodev "$PC_TRACEFS" 2>/dev/null || return 1
	[[ -e $PC_TRACEFS/uprobe_events ]] || return 1
	echo mounted
}

# _pc_cap_feature FILE KEY FEATURE FEATURES: KEY as `probecheck features`
# said FEATURE=0/1 (with FEATURE_why) in the text FEATURES.
_pc_cap_feature() {
	local v why
	v=$(sed -n "s/^$3=\([01]\)\$/\1/p" <<<"$4")
	why=$(sed -n "s/^$3_why=//p" <<<"$4")
	[[ -n $v ]] || { v=0 why="'probecheck features' did not report $3: ${4:-no output}"; }
	_pc_cap "$1" "$2" "$v" "$why"
}

# pc_caps_probe FILE: probe everything once, write FILE.
pc_caps_probe() {
	local f=$1 m ok feat
	local pcbin=${PROBECHECK_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}/probecheck
	: >"$f" || return 1
	printf 'kernel=%s\n' "$(uname -r)" >>"$f"
	printf 'probed_at=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$f"

	[[ $(id -u) == 0 ]] && ok=1 || ok=0
	_pc_cap "$f" root $ok "not running as root (uid $(id -u))"

	[[ -r /sys/kernel/btf/vmlinux ]] && ok=1 || ok=0
	_pc_cap "$f" btf $ok "no kernel BTF (/sys/kernel/btf/vmlinux missing)"

	# Kernel features, probed by the tracer itself, by behaviour
	# (harness/cli/cmd_features.c): fd-based uprobes (4.17), semaphores as
	# reference counters (4.20), BPF cookies (5.15), a uprobe_multi link
	# made and hit (6.6), its pid filter seeing every thread (6.10).
	m=$(pc_tracefs_mount) && ok=1 || ok=0
	# A features probe that cannot run is the tracer failing, not the
	# kernel lacking something: no capability file, so the run stops
	# (every test SKIPping "not reported" would hide it).
	if ! feat=$("$pcbin" features 2>&1); then
		printf 'caps: %s features failed: %s\n' "$pcbin" "$feat" >&2
		rm -f "$f"
		return 1
	fi
	_pc_cap_feature "$f" uprobe_pmu uprobe_pmu "$feat"
	_pc_cap_feature "$f" ref_ctr ref_ctr_offset "$feat"
	_pc_cap_feature "$f" bpf_cookie bpf_cookie "$feat"
	_pc_cap_feature "$f" uprobe_multi uprobe_multi "$feat"
	_pc_cap_feature "$f" uprobe_multi_pid uprobe_multi_pid "$feat"
	# Site programs run with preemption off (bpf_preempt_disable, 6.10).
	_pc_cap_feature "$f" preempt_guard preempt_guard "$feat"
	# x86 (harness/cli/features_x86.c): the uretprobe (6.11) and uprobe
	# (6.18) syscalls, and nop5 sites rewritten into CALLs (6.18).
	_pc_cap_feature "$f" uretprobe_syscall uretprobe_syscall "$feat"
	_pc_cap_feature "$f" uprobe_syscall uprobe_syscall "$feat"
	_pc_cap_feature "$f" uprobe_optimize uprobe_optimize "$feat"
	# Instruction forms the kernel's uprobe decoder may refuse (a site on
	# one, attached before its object is mapped, is dropped in silence).
	_pc_cap_feature "$f" probe_nop10 probe_nop10 "$feat"
	_pc_cap_feature "$f" probe_ds_prefix probe_ds_prefix "$feat"
	_pc_cap_feature "$f" probe_lock_prefix probe_lock_prefix "$feat"
	if ((ok)); then
		_pc_cap_feature "$f" tracefs tracefs "$feat"
	else
		_pc_cap "$f" tracefs 0 "tracefs not mounted at $PC_TRACEFS and cannot be mounted"
	fi
	[[ $m == mounted ]] && printf 'tracefs_mounted_by_harness=1\n' >>"$f"
	grep '^attach_auto' <<<"$feat" >>"$f" || true

	if ! command -v bpftool >/dev/null 2>&1; then
		_pc_cap "$f" bpf 0 "bpftool not installed, cannot check the bpf syscall"
	else
		bpftool prog show >/dev/null 2>&1 && ok=1 || ok=0
		_pc_cap "$f" bpf $ok "bpf syscall refused ('bpftool prog show' failed)"
	fi
	return 0
}

# pc_caps_file: the caps file for this run, probing once if nobody did.
pc_caps_file() {
	local f
	if [[ -n ${PROBECHECK_CAPS:-} && -s $PROBECHECK_CAPS ]]; then
		echo "$PROBECHECK_CAPS"
		return 0
	fi
	f=${BATS_RUN_TMPDIR:?not under bats and PROBECHECK_CAPS unset}/pc-caps
	if [[ ! -s $f ]]; then
		# Written aside and renamed: a reader never sees half a file.
		pc_caps_probe "$f.$$" && mv -f "$f.$$" "$f" || return 1
	fi
	echo "$f"
}
