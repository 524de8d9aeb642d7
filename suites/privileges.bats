#!/usr/bin/env bats
# privileges.bats — the tracer with fewer rights than root: each attach
# mode traces exactly or is refused naming what the caller lacks.
#
# Which mode works with which capabilities depends on the kernel and on
# its patch level: the fix for CVE-2025-38466 (stable 5.10.240, 6.1.146,
# 6.12.39) made the perf PMU's uprobes ask CAP_SYS_ADMIN again, while
# uprobe_multi links ask only CAP_BPF and CAP_PERFMON, and tracefs asks
# whatever its files' modes ask (root's, 0700).  So nothing here expects
# an outcome: `probecheck features`, run as the same caller, predicts each
# mode (attach_MODE), and the trace must agree with it: where it says 1,
# the events are exactly the fixture's; where it says 0, the trace exits 1
# before anything is attached, and both its error and features' reason
# name a capability this caller lacks (CAP_...), never a bare "Permission
# denied".  The outcomes go to the TAP as "# privs:" lines, RESULTS.md's
# table of capabilities by attach mode per kernel.
#
# Callers (setpriv): root with a reduced bounding set (a container run
# with --cap-drop ALL --cap-add ...), and uid 65534 with ambient
# capabilities (a service's AmbientCapabilities=).  Each at
# kernel.perf_event_paranoid as found and at 2 (restored after).
# bats file_tags=privileges

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)

# pv_dir: a directory the unprivileged caller can write its oracle into
# (/tmp: every directory above a test's own is root's, 0700).
pv_dir() {
	pc_shared_dir PV_DIR privs 1777
}

# pv_paranoid N: kernel.perf_event_paranoid set to N until the test ends.
pv_paranoid() {
	local f=/proc/sys/kernel/perf_event_paranoid old
	old=$(<"$f")
	[[ $old == "$1" ]] && return 0
	pc_on_teardown sh -c "echo $old >$f"
	echo "$1" >"$f" || { fail "cannot set $f to $1"; return 1; }
}

# pv_wrap ID: PC_WRAP for caller ID; PV_CAPS gets its capabilities
# (upper case, without CAP_).
pv_wrap() {
	local caps=${1#*:} who=${1%%:*} c set='' amb=''
	PV_CAPS=()
	for c in ${caps//,/ }; do
		PV_CAPS+=("${c^^}")
		set+=",+$c"
	done
	case $who in
	root) PC_WRAP=(setpriv --inh-caps=-all --bounding-set=-all"$set") ;;
	user) [[ -n $set ]] && amb="--ambient-caps=${set#,}"
		PC_WRAP=(setpriv --reuid=65534 --regid=65534 --clear-groups
			--inh-caps=-all"$set" ${amb:+"$amb"} --bounding-set=-all"$set") ;;
	*) fail "pv_wrap: '$1': not root:CAPS or user:CAPS"; return 1 ;;
	esac
}

# pv_lacks TEXT: what TEXT says the caller lacks ("the caller lacks X
# (it has Y)", "the caller is uid U and lacks X"), or nothing.
pv_lacks() {
	grep -oE 'lacks [^;]*' <<<"$1" | head -n 1 | sed -E 's/^lacks //; s/ \(it has .*//'
}

# pv_names_lacking TEXT: TEXT names a capability the caller lacks, and
# not one it has as lacking.
pv_names_lacking() {
	local named c
	named=$(pv_lacks "$1" | grep -oE 'CAP_[A-Z_]+' | sort -u)
	[[ -n $named ]] || { fail "no capability named as lacking: $1"; return 1; }
	for c in $named; do
		[[ " ${PV_CAPS[*]} " != *" ${c#CAP_} "* ]] ||
			{ fail "names $c as lacking, which the caller has: $1"; return 1; }
	done
}

# pv_mode MODE PARANOID: trace through MODE as the caller; agree with
# features; one "# privs:" line.
pv_mode() {
	local mode=$1 fx o t st=0 want why
	fx=$(fx_bin gcc_O2_pie)
	o=$PV_DIR/$mode.$2.o t=$BATS_TEST_TMPDIR/$mode.$2.t
	want=$(sed -n "s/^attach_$mode=//p" "$PV_FEAT")
	why=$(sed -n "s/^attach_${mode}_why=//p" "$PV_FEAT")
	if [[ $mode == auto ]]; then
		# What attach_choose falls to: multi with a pid filter that
		# sees every thread, else perf, else tracefs, else perf's error.
		want=0 why=$(sed -n "s/^attach_perf_why=//p" "$PV_FEAT")
		grep -qx 'attach_perf=1' "$PV_FEAT" && want=1
		grep -qx 'attach_tracefs=1' "$PV_FEAT" && want=1
		grep -qx 'attach_multi=1' "$PV_FEAT" && grep -qx 'uprobe_multi_pid=1' "$PV_FEAT" && want=1
	fi
	[[ -z $PV_WANT || $want == "$PV_WANT" ]] ||
		{ fail "$mode: features says attach_$mode=$want ($why); every kernel since 5.8 must say $PV_WANT for this caller"; return 1; }
	pc trace --attach="$mode" --json -c "$fx --oracle $o fire:fx:a1:3 fire:fx:a3:2" \
		"usdt:$fx:fx:a1" "usdt:$fx:fx:a3" >"$t" 2>"$t.err" || st=$?
	if ((want == 1)); then
		((st == 0)) || { fail "$mode: features says it works, the trace exited $st: $(tail -n 2 "$t.err")"; return 1; }
		assert_oracle "$o" "$t" || return 1
		echo "# privs: $PV_ID $2 $mode ok $(sed -n 's/^probecheck: attach: //p' "$t.err")" >&3
		return 0
	fi
	((st == 1)) || { fail "$mode: features says no ($why), the trace exited $st, not 1: $(tail -n 2 "$t.err")"; return 1; }
	[[ ! -s $t ]] || { fail "$mode: refused, yet printed events: $(head -n 2 "$t")"; return 1; }
	if [[ -z $(pv_lacks "$why") ]] && grep -qx "attach_$mode=0" "$PV_ROOT"; then
		# Root cannot either, and no capability is said to be
		# missing: the kernel's refusal, said as root's.
		grep -qF "does not work here: $(sed -n "s/^attach_${mode}_why=//p" "$PV_ROOT")" "$t.err" ||
			{ fail "$mode: refused for root too, but not with root's reason: $(cat "$t.err")"; return 1; }
		echo "# privs: $PV_ID $2 $mode refused kernel" >&3
		return 0
	fi
	pv_names_lacking "$why" || return 1
	pv_names_lacking "$(cat "$t.err")" || return 1
	echo "# privs: $PV_ID $2 $mode refused $(pv_lacks "$why" | tr ' ' '_')" >&3
}

# pv_caller ID [WANT]: every mode, at perf_event_paranoid as found and at
# 2; WANT 0: features must refuse every mode (a caller without CAP_PERFMON
# loads no tracing program on any kernel since 5.8).
pv_caller() {
	local -a PC_WRAP PV_CAPS
	local p found
	PV_ID=$1 PV_WANT=${2:-} PV_ROOT=$BATS_TEST_TMPDIR/features.root
	pc features >"$PV_ROOT" || { fail "features as root exited $?"; return 1; }
	pv_dir && pv_wrap "$1" || return 1
	found=$(</proc/sys/kernel/perf_event_paranoid)
	for p in "$found" 2; do
		[[ $p == "$found" ]] || pv_paranoid "$p" || return 1
		PV_FEAT=$BATS_TEST_TMPDIR/features.$p
		pc features >"$PV_FEAT" || { fail "features as $1 exited $?"; return 1; }
		for m in perf tracefs multi auto; do
			pv_mode "$m" "paranoid=$p" || return 1
		done
		[[ $p != "$found" ]] || [[ $found != 2 ]] || break
	done
}

@test "privileges.root-bpf-perfmon: root with only CAP_BPF and CAP_PERFMON: each mode exact or refused naming what it lacks, as features predicts" {
	pv_caller root:bpf,perfmon
}

@test "privileges.root-bpf-perfmon-sysadmin: root with CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN: each mode exact or refused with the capability, as features predicts" {
	pv_caller root:bpf,perfmon,sys_admin
}

@test "privileges.user-bpf-perfmon: uid 65534 with ambient CAP_BPF and CAP_PERFMON: each mode exact or refused naming what it lacks, as features predicts" {
	pv_caller user:bpf,perfmon
}

@test "privileges.user-bpf-perfmon-sysadmin: uid 65534 with CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN: as features predicts, the capability named" {
	pv_caller user:bpf,perfmon,sys_admin
}

@test "privileges.user-bpf: uid 65534 with CAP_BPF alone: every mode refused, each naming a capability it lacks" {
	pv_caller user:bpf 0
}

@test "privileges.user-none: uid 65534 without capabilities: every mode refused, each naming a capability it lacks" {
	pv_caller user: 0
}
