#!/usr/bin/env bats
# detachkill.bats — SIGKILL of the tracer in the middle of its detach must
# leave no breakpoint in the traced process.
#
# A per-site attach (perf, tracefs) detaches by closing one perf event per
# site, ~0.1 s each on 6.18 and longer in guests: a tracer can be killed
# with half of them closed.  The kernel then closes the rest as the
# tracer exits, and every uprobe is unregistered: no int3 may remain in
# the target's text (it would kill the target with SIGTRAP at its next
# hit, the uprobe being gone) and no semaphore raised.  Found by the soak
# on Debian's 6.1.0-56 guest: after SIGINT then SIGKILL mid-detach, one
# site of a live fx_many kept 'cc' in 2 of 10 iterations, in both attach
# modes; never on 6.18 (400 soak iterations).
#
# Each round: fx_many loops over its probes; the tracer attaches 20 sites
# (-p); SIGINT; once the tracer has closed at least one of its perf events
# (round r: 3r-2 of them) and before it has closed them all, SIGKILL; then
# every site and semaphore of the target is compared with the file.
# Rounds per path: PC_DETACHKILL_ROUNDS (default 5).
# bats file_tags=faults

load helpers/common

PC_REQUIRES=(root uprobe_pmu ref_ctr bpf btf)

# perf_fds PID: perf events PID holds.
perf_fds() {
	find "/proc/$1/fd" -lname 'anon_inode:\[perf_event\]' 2>/dev/null | wc -l
}

# kill_mid_detach K: SIGINT the tracer, SIGKILL it once K of its perf
# events are closed.  Sets LANDED: how many were still open.
kill_mid_detach() {
	local k=$1 n left dl
	n=$(perf_fds "$PC_TRACE_PID")
	kill -INT "$PC_TRACE_PID"
	dl=$(_pc_deadline "$PC_TIMEOUT")
	# No event marks "K fds closed": poll the fd table, bounded.
	while left=$(perf_fds "$PC_TRACE_PID") && ((left > n - k)) && _pc_before "$dl"; do
		sleep 0.002
	done
	kill -KILL "$PC_TRACE_PID" 2>/dev/null || true
	LANDED=$left
	pc_trace_stop KILL
}

# rounds MODE: the rounds of one attach path; fails naming each round
# whose target kept a breakpoint or a raised semaphore.
rounds() {
	local mode=$1 r fx bad='' out n
	local fxm=$PC_FIXTURES/fx_many
	[[ $mode == tracefs ]] && requires tracefs
	for ((r = 1; r <= ${PC_DETACHKILL_ROUNDS:-5}; r++)); do
		pc_spawn fx "$fxm" "ready:$BATS_TEST_TMPDIR/fx.$r" loop:2000
		pc_wait_file "$BATS_TEST_TMPDIR/fx.$r"
		pc_trace_bg "$BATS_TEST_TMPDIR/t.$r" --attach "$mode" -p "$fx" \
			"usdt:$fxm:fxm:n?" "usdt:$fxm:fxm:s?"
		n=$(perf_fds "$PC_TRACE_PID")
		((n == 20)) || fail "round $r: the tracer holds $n perf events, expected 20"
		# Round r kills after 3r-2 closes: 1, 4, 7, 10, 13, ...
		kill_mid_detach $(((3 * r - 2) % 19))
		"$PC_BIN" cleanup >>"$PC_LOG" 2>&1
		out=$(pc_inv_sites "$fx")
		pc_log "round $r: SIGKILL with $LANDED of 20 perf events open; sites: ${out:-clean}"
		# Where the kills landed, in the TAP output for the record.
		echo "# $mode round $r: SIGKILL with $LANDED of 20 perf events open, target ${out:+NOT }clean" >&3
		[[ -z $out ]] || bad+=$'\n'"round $r (killed with $LANDED of 20 events open): $out"
		pc_kill "$fx"
	done
	[[ -z $bad ]] || fail "$mode: breakpoints or semaphores left in a live target after SIGKILL mid-detach:$bad"
}

@test "perf: SIGKILL of the tracer mid-detach leaves no breakpoint or raised semaphore in the target" {
	rounds perf
}

@test "tracefs: SIGKILL of the tracer mid-detach leaves no breakpoint or raised semaphore in the target" {
	rounds tracefs
}
