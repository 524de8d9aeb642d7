#!/usr/bin/env bats
# preempt.bats — hits that interleave on one CPU.  Uprobe BPF programs
# run preemptible (the kernel disables migration only), so on a kernel
# that preempts kernel code (PREEMPT_LAZY, x86's only model left in 7.x;
# RT) a thread can hit a site while another thread's program is stopped
# mid-run on the same CPU.  Each program's state must stay its own.  The
# tracer runs its site programs with bpf_preempt_disable where the kernel
# has it (6.10+, features: preempt_guard); here the same 8-thread burst
# runs guarded (must be exact: that is the tracer) and then unguarded
# (PROBECHECK_PREEMPT_GUARD=0: what differs is the kernel's, K5 in
# ci/kernel-issues).
#
# bats file_tags=preempt

load helpers/common

PC_REQUIRES=(root bpf uprobe_pmu)

FXV=${PC_PREEMPT_VARIANT:-gcc_O2_pie}
BURST='threads:8 [ barrier fire:fx:a3:50 ] fire:fx:a3:1'

# burst N GUARD: one traced burst into $BATS_TEST_TMPDIR/{o,t,e}.N; prints
# nothing when exact, else one line of evidence (summary, ring, oraclecmp).
burst() {
	local n=$1 fx o t e cmp
	fx=$(fx_bin "$FXV")
	o=$BATS_TEST_TMPDIR/o.$n.json t=$BATS_TEST_TMPDIR/t.$n.json e=$BATS_TEST_TMPDIR/e.$n
	PROBECHECK_PREEMPT_GUARD=$2 pc trace --json -c "$fx --oracle $o $BURST" \
		"usdt:$fx:fx:a3" >"$t" 2>"$e" || true
	cmp=$("$PC_TOOLS/oraclecmp" "$o" "$t" 2>&1 | tail -n 1)
	[[ $cmp == "oraclecmp: 401 events match" ]] && grep -q 'summary: delivered=401 dropped=0 hits=401' "$e" &&
		return 0
	echo "run $n: $(grep -E 'summary:' "$e" | sed 's/^probecheck: //') ;$(grep -o ' ring .*' "$e" || echo ' ring not reported') ; ${cmp#oraclecmp: }"
}

@test "8 threads at one site with the guard on: every event exact" {
	requires preempt_guard
	local bad
	bad=$(burst 1 1)
	[[ -z $bad ]] || fail "guarded: $bad"
}

@test "8 threads at one site, unguarded, 5 runs: each hit's record its own (K5)" {
	local n bad guarded=0 busy=() other=()
	# The same burst guarded first where the kernel allows it: exact, or
	# the tracer is at fault whatever happens unguarded.
	if pc_cap preempt_guard; then
		bad=$(burst 0 1)
		[[ -z $bad ]] || fail "guarded: $bad"
		guarded=1
	fi
	for n in 1 2 3 4 5; do
		bad=$(burst "$n" 0)
		[[ -z $bad ]] && continue
		# The kernel's signature: after every thread exited, a record is
		# still reserved and never committed; no correct program run to
		# its end leaves one.  Events mixed up with nothing lost count too
		# when the only change from an exact guarded burst is preemption.
		if [[ $bad == *"record there: BUSY"* ]] || ((guarded)); then
			busy+=("$bad")
		else
			other+=("$bad")
		fi
	done
	((${#other[@]} == 0)) || fail "events lost without the kernel's signature: ${other[*]}"
	((${#busy[@]} == 0)) || pc_kernel_symptom preempt-interleave "${busy[@]}"
}
