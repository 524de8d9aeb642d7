# faults.bats' machinery, shared by faults.bats, faultsattach.bats and
# faultsdetach.bats: the tracer under strace, frozen at a chosen system
# call, and the checks that nothing is left (the header of faults.bats
# says how a fault lands where it should).  Loaded after helpers/common.

PC_REQUIRES=(root uprobe_pmu ref_ctr_offset bpf)

NSITES=10
# libbpf attaches a program to a perf event with a BPF link where the
# kernel has perf links (5.15, with bpf_cookie), else with the
# PERF_EVENT_IOC_SET_BPF ioctl: one ioctl more per site at attach.
attach_ioctls() { if pc_cap bpf_cookie; then echo 1; else echo 2; fi; }
NHALF=5         # fxm:n0..n4, then fxm:s0..s4

# use MODE: the attach mode of this test, or SKIP; sets MODE and FXM.
use() {
	MODE=$1
	requires cmd:strace "file:$PC_FIXTURES/fx_many"
	FXM=$PC_FIXTURES/fx_many
	# shellcheck disable=SC2046  # a list of capabilities
	requires $(pc_mode_caps "$MODE")
	if [[ $MODE == tracefs ]]; then
		"$PC_BIN" trace --help 2>&1 | grep -q -- '--attach' ||
			skip "requires --attach=tracefs: probecheck has no --attach option"
	fi
}

# probes: the NSITES sites, as PROBE arguments.
probes() {
	echo "usdt:$FXM:fxm:n[0-4]" "usdt:$FXM:fxm:s[0-4]"
}

# start_target [STEP...]: spawn fx_many (default: hit every site every 2 ms
# until killed), wait for its ready file; PID gets its pid.  Its sites must
# be untouched before any tracer comes.
start_target() {
	(($#)) || set -- loop:2000
	pc_spawn PID "$FXM" --oracle "$BATS_TEST_TMPDIR/oracle.json" \
		"ready:$BATS_TEST_TMPDIR/target.ready" "$@"
	pc_wait_file "$BATS_TEST_TMPDIR/target.ready"
	assert_target_restored
}

# ---------------------------------------------------------------------------
# The tracer under strace, frozen at a chosen system call.

# st_start SYSCALL N PATHFILTER TRACE-ARGS...: spawn `probecheck trace
# --attach MODE --ready R TRACE-ARGS` under strace, with SIGSTOP injected on
# its Nth SYSCALL (counting only calls on PATHFILTER, if not empty).  Sets
# ST_PID (strace), ST_LOG, ST_READY, ST_ERRF (the tracer's stderr).
st_start() {
	local sys=$1 n=$2 path=$3
	local -a filter=()
	shift 3
	[[ -n $path ]] && filter=(-P "$path")
	ST_LOG=$BATS_TEST_TMPDIR/strace.log
	ST_READY=$BATS_TEST_TMPDIR/tracer.ready
	ST_TRACEE=
	pc_spawn ST_PID strace "${PC_STRACE_ENV[@]}" -o "$ST_LOG" -e trace="$sys" "${filter[@]}" \
		-e inject="$sys":signal=SIGSTOP:when="$n" \
		"$PC_BIN" trace --attach "$MODE" --ready "$ST_READY" "$@"
	ST_ERRF=$BATS_TEST_TMPDIR/spawn.$PC_NSPAWN.err
}

# st_tracee: ST_TRACEE = the tracer's pid (strace's only child).
st_tracee() {
	local dl
	_pc_deadline dl "$PC_TIMEOUT"
	while _pc_before "$dl"; do
		ST_TRACEE=$(cat "/proc/$ST_PID/task/$ST_PID/children" 2>/dev/null) || true
		ST_TRACEE=${ST_TRACEE% }
		[[ $ST_TRACEE =~ ^[0-9]+$ ]] && return 0
		pc_inv_alive "$ST_PID" || break
		pc_nap 0.01	# strace forks the tracer right away, bounded
	done
	fail "cannot find the tracer under strace: $(cat "$ST_ERRF")"
}

# st_wait_ready: the tracer has attached everything (its ready file).
st_wait_ready() {
	pc_wait_file "$ST_READY"
	st_tracee
	assert_equal "$(cat "$ST_READY")" "$ST_TRACEE"
}

# st_wait_stopped: the injected SIGSTOP has frozen the tracer.
st_wait_stopped() {
	local dl
	_pc_deadline dl "$PC_TIMEOUT"
	while _pc_before "$dl"; do
		grep -q -- '--- stopped by SIGSTOP ---' "$ST_LOG" 2>/dev/null && break
		pc_inv_alive "$ST_PID" || break
		pc_nap 0.01	# polling strace's log for the stop, bounded
	done
	grep -q -- '--- stopped by SIGSTOP ---' "$ST_LOG" ||
		fail "the tracer did not stop where strace was to stop it: $(cat "$ST_ERRF")"
	[[ -n $ST_TRACEE ]] || st_tracee
	pc_log "tracer $ST_TRACEE frozen by strace"
}

# st_finish [SIGNAL]: send SIGNAL (if any) to the frozen tracer, let it go
# on, wait (at most PC_TIMEOUT, then SIGKILL and fail) for it to end.
# ST_STATUS: its exit status as strace passes it on (128+N: killed by N).
st_finish() {
	local dl
	[[ -n ${1:-} ]] && kill -"$1" "$ST_TRACEE"
	kill -CONT "$ST_TRACEE" 2>/dev/null || true
	_pc_deadline dl "$PC_TIMEOUT"
	while pc_inv_alive "$ST_PID" && _pc_before "$dl"; do
		pc_nap 0.01	# no event to wait on for strace's end, bounded
	done
	if pc_inv_alive "$ST_PID"; then
		kill -KILL "$ST_TRACEE" 2>/dev/null
		fail "the tracer did not end within ${PC_TIMEOUT}s: $(cat "$ST_ERRF")"
	fi
	ST_STATUS=0
	wait "$ST_PID" || ST_STATUS=$?
	pc_log "tracer $ST_TRACEE under strace: exit status $ST_STATUS"
	_pc_log_file "strace" "$ST_LOG"
	_pc_log_file "tracer stderr" "$ST_ERRF"
}

# ---------------------------------------------------------------------------
# What the machine looks like.

# perf_fds PID: how many perf events PID holds open.
perf_fds() {
	local n=0 f
	for f in /proc/"$1"/fd/*; do
		[[ $(readlink "$f" 2>/dev/null) == 'anon_inode:[perf_event]' ]] && n=$((n + 1))
	done
	echo "$n"
}

# touched: the target's sites and semaphores that differ from the file.
touched() {
	pc_inv_sites "$PID"
}

# assert_target_restored: every site and semaphore of the target as in its
# file (it must be alive: a dead target proves nothing).
assert_target_restored() {
	local v
	pc_inv_alive "$PID" || fail "the target $PID is gone: nothing to check"
	v=$(touched)
	[[ -z $v ]] || printf '%s\n' "$v" | batslib_decorate "target not restored" | fail
}

# assert_frozen_with N: the frozen tracer holds N perf events, and exactly
# the first N sites in attach order hold an int3 (semaphores: those of
# the fxm:s sites among them).
assert_frozen_with() {
	local n=$1 v want=() i
	assert_equal "$(perf_fds "$ST_TRACEE")" "$n"
	for ((i = 0; i < n && i < NHALF; i++)); do want+=("probe site fxm:n$i"); done
	for ((i = NHALF; i < n; i++)); do want+=("probe site fxm:s$((i - NHALF))"); done
	for ((i = NHALF; i < n; i++)); do want+=("semaphore of fxm:s$((i - NHALF))"); done
	v=$(touched)
	assert_equal "$(awk '{ print $1, $2, $3 }' <<<"$v" | sort)" \
		"$(printf '%s\n' "${want[@]}" | sort)"
	# A semaphore is counted once per mm, whatever the number of tracers.
	! grep '^semaphore' <<<"$v" | grep -v 'reads 1, the file has 0$' ||
		fail "a semaphore reads other than 1 while traced"
}

# entries_of TPID: the uprobe_events lines of tracer TPID's group.
entries_of() {
	pc_inv_uprobe_all | grep -E "^[pr]:probecheck_$1_[0-9]+/" || true
}

# record_of TPID: the stash record of tracer TPID (path), or nothing.
record_of() {
	local n
	while read -r n; do
		[[ $n == "$1"-* ]] && echo "$(pc_inv_stash_dir)/$n"
	done < <(pc_inv_stash_names)
	return 0
}

# assert_nothing_left: no uprobe, stash record, BPF object or process of
# ours (pc_check_clean, with the stash), and the target restored if alive.
assert_nothing_left() {
	local new
	new=$(pc_inv_uprobe_ours | pc_inv_uprobe_scope | pc_inv_new_lines "$PC_T/uprobes.before")
	[[ -z $new ]] || fail "uprobes of ours left: $new"
	new=$(pc_inv_stash_names | pc_inv_new_lines "$PC_T/stash.before")
	[[ -z $new ]] || fail "stash records left: $new"
	pc_check_clean
	if pc_inv_alive "$PID"; then
		assert_target_restored
	fi
}

# assert_left_for_cleanup TPID N: the dead tracer TPID left exactly N
# tracefs entries, and its stash record lists all NSITES (it records every
# entry before creating the first) including those N.
assert_left_for_cleanup() {
	local tpid=$1 n=$2 rec e
	rec=$(record_of "$tpid")
	[[ -n $rec ]] || fail "no stash record of tracer $tpid: its entries cannot be cleaned up"
	assert_equal "$(pc_inv_stash_owner "${rec##*/}")" "$tpid dead"
	assert_equal "$(grep -c '^tracefs ' "$rec")" "$NSITES"
	assert_equal "$(entries_of "$tpid" | wc -l)" "$n"
	while read -r e; do
		[[ -z $e ]] && continue
		e=${e%% *}
		grep -qx "tracefs ${e#*:}" "$rec" || fail "entry ${e#*:} is not in the record $rec"
	done <<<"$(entries_of "$tpid")"
}

# cleanup_after TPID N: `probecheck cleanup` removes the N entries tracer
# TPID left, reports the others of its record as gone already, removes the
# record, and refuses or fails nothing.
cleanup_after() {
	local tpid=$1 n=$2
	run -0 pc cleanup
	assert_equal "$(grep -c "^removed tracefs probecheck_${tpid}_" <<<"$output")" "$n"
	assert_equal "$(grep -c "^tracefs probecheck_${tpid}_.* was gone already$" <<<"$output")" $((NSITES - n))
	assert_line --regexp "^removed record .*/${tpid}-[0-9]+ \(tracer $tpid started at [0-9]+ is gone\)$"
	assert_line --regexp "^cleanup: [0-9]+ records? removed \([0-9]+ tracefs entr(y|ies)\), [0-9]+ live tracers? left alone, 0 refused, 0 failed$"
}

# after_death TPID N: the tracer TPID was killed with N entries in place:
# in perf mode nothing is left at all; in tracefs mode exactly its entries
# and its record are, until `probecheck cleanup`.  Either way the target's
# sites and semaphores are back at once: no entry has a consumer.
after_death() {
	if pc_inv_alive "$PID"; then
		assert_target_restored
	fi
	if [[ $MODE == tracefs ]]; then
		assert_left_for_cleanup "$1" "$2"
		cleanup_after "$1" "$2"
	fi
	assert_nothing_left
}

# assert_summary_sane FILE: one summary line with delivered + dropped = hits.
assert_summary_sane() {
	local line
	line=$(grep '^probecheck: summary: ' "$1") || fail "no summary line in $1"
	[[ $line =~ delivered=([0-9]+)\ dropped=([0-9]+)\ hits=([0-9]+)\ unreadable=[0-9]+\ truncated=[0-9]+$ ]] ||
		fail "malformed summary: $line"
	((BASH_REMATCH[1] + BASH_REMATCH[2] == BASH_REMATCH[3])) ||
		fail "delivered + dropped != hits: $line"
}

# ---------------------------------------------------------------------------
# The scenarios, each a function of the attach mode.

# The tracer is SIGKILLed when K sites are attached.
attach_kill() {
	use "$1"
	local k=$2
	start_target
	st_start perf_event_open "$k" "" -p "$PID" $(probes)
	st_wait_stopped
	assert_frozen_with "$k"
	[[ $MODE == perf ]] || assert_equal "$(entries_of "$ST_TRACEE" | wc -l)" "$k"
	st_finish KILL
	assert_equal "$ST_STATUS" 137
	after_death "$ST_TRACEE" "$k"
}

# SIGINT/SIGTERM when half the sites are attached: the attach completes
# (ready file), then the tracer stops, detaches everything and exits 0.
attach_stop() {
	use "$1"
	start_target
	st_start perf_event_open 6 "" -p "$PID" $(probes)
	st_wait_stopped
	assert_frozen_with 6
	st_finish "$2"
	assert_equal "$ST_STATUS" 0
	[[ -e $ST_READY ]] || fail "the attach did not complete before the tracer stopped"
	assert_summary_sane "$ST_ERRF"
	assert_nothing_left
}

# The signal while events flow (the trace has some): INT/TERM exit 0,
# KILL leaves only what cleanup undoes.
tracing_signal() {
	use "$1"
	local sig=$2 out=$BATS_TEST_TMPDIR/trace.json tpid
	start_target
	pc_trace_bg "$out" --json --attach "$MODE" -p "$PID" $(probes)
	tpid=$PC_TRACE_PID
	pc_wait_until "$PC_TIMEOUT" test -s "$out"	# events reached the file
	pc_trace_stop "$sig"
	if [[ $sig == KILL ]]; then
		assert_equal "$PC_TRACE_STATUS" 137
		after_death "$tpid" "$NSITES"
	else
		assert_equal "$PC_TRACE_STATUS" 0
		assert_summary_sane "$out.err"
		assert_nothing_left
	fi
}

# SIGINT, then SIG when K of the links are destroyed (K-1 sites fully
# closed, the Kth disabled): KILL leaves what cleanup undoes (all entries:
# they go after the links); INT/TERM let the detach finish, then the
# tracer dies of the signal it had blocked (or exits 0).
detach_signal() {
	use "$1"
	local sig=$2 k=5 st
	start_target
	st_start ioctl $((NSITES * $(attach_ioctls) + k)) 'anon_inode:[perf_event]' -p "$PID" $(probes)
	st_wait_ready
	kill -INT "$ST_TRACEE"
	st_wait_stopped
	assert_frozen_with $((NSITES - k + 1))
	st_finish "$sig"
	if [[ $sig == KILL ]]; then
		assert_equal "$ST_STATUS" 137
		after_death "$ST_TRACEE" "$NSITES"
		return
	fi
	st=$(kill -l "$sig")
	[[ $ST_STATUS == 0 || $ST_STATUS == $((128 + st)) ]] ||
		fail "exit status $ST_STATUS after SIG$sig during detach: expected 0 or $((128 + st))"
	assert_summary_sane "$ST_ERRF"
	assert_nothing_left
}

# The traced process goes away while the tracer is frozen after site 6:
# `kill` (SIGKILL) or `exit` (it returns from main).  The tracer must say
# so, undo what it attached itself, and exit 1.
target_gone_during_attach() {
	use "$1"
	local how=$2 go
	if [[ $how == exit ]]; then
		go=$(pc_fifo go)
		start_target "wait:$go"
	else
		start_target
	fi
	st_start perf_event_open 6 "" -p "$PID" $(probes)
	st_wait_stopped
	assert_frozen_with 6
	if [[ $how == exit ]]; then
		pc_fifo_write "$go" go
		PC_KILL_STATUS=0
		wait "$PID" || PC_KILL_STATUS=$?
		assert_equal "$PC_KILL_STATUS" 0
	else
		pc_kill "$PID" KILL
		assert_equal "$PC_KILL_STATUS" 137
	fi
	st_finish
	assert_equal "$ST_STATUS" 1
	[[ $(cat "$ST_ERRF") == *"trace: pid $PID exited during attach"* ]] ||
		fail "no clear error for the vanished target: $(cat "$ST_ERRF")"
	assert_nothing_left
}

# -c: the command (blocked until the attach is done) is SIGKILLed while the
# tracer is frozen after site 6.
command_killed_during_attach() {
	use "$1"
	local child
	st_start perf_event_open 6 "" -c "$FXM loop:2000" $(probes)
	st_wait_stopped
	child=$(cat "/proc/$ST_TRACEE/task/$ST_TRACEE/children")
	child=${child% }
	[[ $child =~ ^[0-9]+$ ]] || fail "no command process: '$child'"
	assert_equal "$(perf_fds "$ST_TRACEE")" 6
	kill -KILL "$child"
	st_finish
	assert_equal "$ST_STATUS" 1
	[[ $(cat "$ST_ERRF") == *"trace: pid $child exited during attach"* ]] ||
		fail "no clear error for the vanished command: $(cat "$ST_ERRF")"
	[[ $(cat "$ST_ERRF") == *"command killed by signal 9"* ]] ||
		fail "the command's death is not reported: $(cat "$ST_ERRF")"
	assert_nothing_left
}

# tracefs only: SIGINT, then SIG when K of the NSITES entries are removed.
entries_signal() {
	use "$1"
	local sig=$2 k=3 st
	start_target
	st_start write $((NSITES + k)) "$PC_TRACEFS/uprobe_events" -p "$PID" $(probes)
	st_wait_ready
	kill -INT "$ST_TRACEE"
	st_wait_stopped
	# Every link is gone, so no site is touched; K entries are removed.
	assert_equal "$(perf_fds "$ST_TRACEE")" 0
	assert_target_restored
	assert_equal "$(entries_of "$ST_TRACEE" | wc -l)" $((NSITES - k))
	st_finish "$sig"
	if [[ $sig == KILL ]]; then
		assert_equal "$ST_STATUS" 137
		after_death "$ST_TRACEE" $((NSITES - k))
		return
	fi
	st=$(kill -l "$sig")
	[[ $ST_STATUS == 0 || $ST_STATUS == $((128 + st)) ]] ||
		fail "exit status $ST_STATUS after SIG$sig during detach: expected 0 or $((128 + st))"
	assert_nothing_left
}
