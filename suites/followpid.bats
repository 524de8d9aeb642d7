#!/usr/bin/env bats
# followpid.bats — the --follow set under pid reuse: an entry the exit
# tracepoint program did not remove (K6 skips it; PROBECHECK_SKIP_TP=exit
# makes it certain) must not admit a new process that got the same pid.
# The set knows each process by its start time (providers/bpf/pc.bpf.c).
# serial: it sets the machine's next pid (ns_last_pid) and forks: any fork
# elsewhere on the machine takes the pid first, as other suites beside it do.
# bats file_tags=follow,serial

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)

FXV=${PC_FOLLOW_VARIANT:-gcc_O2_pie}

# run_as_pid PID [CMD...]: run CMD (in the foreground) as process PID,
# which must be free: the next pid is set through ns_last_pid; a fork
# elsewhere in between takes it, then try again.  Without CMD the process
# just exits (no exec: only its exit meets the set).
run_as_pid() {
	local want=$1 n st
	shift
	for ((n = 0; n < 100; n++)); do
		echo $((want - 1)) >/proc/sys/kernel/ns_last_pid || return 1
		st=0
		( [[ $BASHPID == "$want" ]] || exit 99; (($#)) || exit 0; exec "$@" ) || st=$?
		((st == 99)) || return "$st"
	done
	fail "run_as_pid: could not get pid $want in 100 tries"
}

@test "followpid.recycled-pid: --follow: a pid recycled after an exit the tracepoint program skipped is not traced, and its exit is no followed exit: the set knows each process by its start time" {
	pc_probecheck_only "its exit-skip emulation (PROBECHECK_SKIP_TP)"
	local fx o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json go child
	fx=$(private fx_stale)
	go=$(pc_fifo go)
	PROBECHECK_SKIP_TP=exit pc_trace_bg "$t" --json --follow \
		-c "$fx --oracle $o fork [ fire:fx:a0:1 ] ready:$BATS_TEST_TMPDIR/forked wait:$go fire:fx:a0:1" "usdt:$fx:fx:a0"
	pc_wait_file "$BATS_TEST_TMPDIR/forked"
	child=$(jq -r 'select(.step == "reap") | .child' "$o")
	# A process that only exits with that pid finds the entry first: it
	# is stale (another start time), not a followed process's exit.
	run_as_pid "$child"
	# Not a descendant, with the pid of the child that left its entry.
	run_as_pid "$child" "$fx" --oracle "$o.stranger" fire:fx:a0:3
	assert_equal "$(pc_count_events "$o.stranger")" 3
	pc_fifo_write "$go" go
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	assert_oracle "$o" "$t"
	assert_summary 2 "$t.err"
	run -0 grep -E "probecheck: follow: forks=1 late=0 exits=0 stale=1 .* filtered=3 exec-barriers=0 taken-by-check=0 kernel-skipped: fork=[0-9]+ exit=[0-9]+ exec=[0-9]+ exec-check=[0-9]+ emulated-skipped: fork=0 exit=[12] exec=0 exec-check=0$" "$t.err"
}
