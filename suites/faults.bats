#!/usr/bin/env bats
# faults.bats — the tracer dies, or is told to stop, at every stage of its
# life, and so does its target; afterwards (after `probecheck cleanup`, for
# what can outlive a tracer: the named entries of the tracefs attach mode)
# every invariant holds: no uprobe of ours, no BPF object of ours, the
# surviving target's probe sites hold their file's bytes (no int3) and its
# semaphores read 0, no stash record.  Both attach modes: perf (fd-based
# uprobes, which the kernel removes when the fd closes) and tracefs (named
# uprobe_events entries, which only we remove: by detaching, or by cleanup
# from the stash record of a dead tracer).
#
# The target is fx_many, whose sites the tracer attaches in order
# (path, provider, name, pc); the tests take fxm:n0..n4 (no semaphore),
# then fxm:s0..s4 (one semaphore each): NSITES = 10.  Ten is enough for a
# fault to land with sites on both sides of it, and each perf site costs
# ~0.1 s at detach (an RCU wait per close), which 27 tests pay.
#
# Landing "during attach" and "during detach" without sleeps: the tracer
# runs under strace with a SIGSTOP injected on a chosen system call, so it
# freezes at an exact point (the call completes, the tracer stops before
# acting on its result); the test checks that the freeze is where it
# thinks (perf fds open, int3s in the target, entries in tracefs), then
# delivers the fault and lets it go on.
#   attach, after site K:       the Kth perf_event_open (one per site)
#   detach, links (both modes): ATTACH_IOCTLS ioctls per site on its perf
#                               fd at attach (PERF_EVENT_IOC_ENABLE; before
#                               it ..._SET_BPF where the kernel has no BPF
#                               link for perf events, 5.15, which came with
#                               bpf_cookie) and one at detach (..._DISABLE,
#                               in reverse order), so the
#                               (NSITES * ATTACH_IOCTLS + K)th ioctl on a
#                               perf fd (strace -P 'anon_inode:[perf_event]')
#                               is the Kth detach
#   detach, tracefs entries:    the (NSITES + K)th write to uprobe_events
#                               (one "p:" per entry, then one "-:" each)
# SIGINT and SIGTERM are blocked in the tracer (it reads them from a
# signalfd in its event loop), so one that arrives during attach takes
# effect after the attach completes, and one during detach after the detach
# completes: the tracer then dies of it.  SIGKILL is immediate.
#
# Sites, semaphores and addresses come from readelf and /proc/PID/maps via
# pc_inv_sites (harness/lib/invariants.bash), never from the tracer under test.
# A soak with random fault points is harness/run/soak (`make soak`); a sample of
# it runs here.
# bats file_tags=faults

load helpers/common

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
	dl=$(_pc_deadline "$PC_TIMEOUT")
	while _pc_before "$dl"; do
		ST_TRACEE=$(cat "/proc/$ST_PID/task/$ST_PID/children" 2>/dev/null) || true
		ST_TRACEE=${ST_TRACEE% }
		[[ $ST_TRACEE =~ ^[0-9]+$ ]] && return 0
		pc_inv_alive "$ST_PID" || break
		sleep 0.01	# strace forks the tracer right away, bounded
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
	dl=$(_pc_deadline "$PC_TIMEOUT")
	while _pc_before "$dl"; do
		grep -q -- '--- stopped by SIGSTOP ---' "$ST_LOG" 2>/dev/null && break
		pc_inv_alive "$ST_PID" || break
		sleep 0.01	# polling strace's log for the stop, bounded
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
	dl=$(_pc_deadline "$PC_TIMEOUT")
	while pc_inv_alive "$ST_PID" && _pc_before "$dl"; do
		sleep 0.01	# no event to wait on for strace's end, bounded
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
	[[ $line =~ delivered=([0-9]+)\ dropped=([0-9]+)\ hits=([0-9]+)$ ]] ||
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

# ---------------------------------------------------------------------------
# perf attach mode (the default)

@test "faults.perf-kill-first-site: perf: tracer SIGKILLed after the first site is attached: nothing left, target restored" {
	attach_kill perf 1
}

@test "faults.perf-kill-six-sites: perf: tracer SIGKILLed with 6 of 10 sites attached: nothing left, target restored" {
	attach_kill perf 6
}

@test "faults.perf-kill-before-ready: perf: tracer SIGKILLed after the last site is attached, before ready: nothing left" {
	attach_kill perf 10
}

@test "faults.perf-int-during-attach: perf: SIGINT during attach: the attach completes, then a clean detach, exit 0" {
	attach_stop perf INT
}

@test "faults.perf-term-during-attach: perf: SIGTERM during attach: the attach completes, then a clean detach, exit 0" {
	attach_stop perf TERM
}

@test "faults.perf-int-tracing: perf: SIGINT while tracing: exit 0, nothing left" {
	tracing_signal perf INT
}

@test "faults.perf-term-tracing: perf: SIGTERM while tracing: exit 0, nothing left" {
	tracing_signal perf TERM
}

@test "faults.perf-kill-tracing: perf: SIGKILL while tracing: the kernel undoes it all, target restored" {
	tracing_signal perf KILL
}

@test "faults.perf-kill-during-detach: perf: SIGKILL during detach (5 of 10 links gone): nothing left" {
	detach_signal perf KILL
}

@test "faults.perf-second-int-detach: perf: a second SIGINT during detach: the detach completes, nothing left" {
	detach_signal perf INT
}

@test "faults.perf-term-during-detach: perf: SIGTERM during detach: the detach completes, nothing left" {
	detach_signal perf TERM
}

@test "faults.perf-target-killed-attach: perf: target SIGKILLed during attach: exit 1 'exited during attach', nothing left" {
	target_gone_during_attach perf kill
}

@test "faults.perf-target-exits-attach: perf: target exiting during attach: exit 1 'exited during attach', nothing left" {
	target_gone_during_attach perf exit
}

@test "faults.perf-cmd-killed-attach: perf: -c command SIGKILLed during attach: exit 1, both reported, nothing left" {
	command_killed_during_attach perf
}

# ---------------------------------------------------------------------------
# tracefs attach mode

@test "faults.tracefs-kill-first-site: tracefs: tracer SIGKILLed after the first site: its entry and record stay until cleanup, then nothing" {
	attach_kill tracefs 1
}

@test "faults.tracefs-kill-six-sites: tracefs: tracer SIGKILLed with 6 of 10 sites attached: 6 entries recorded, cleanup removes them" {
	attach_kill tracefs 6
}

@test "faults.tracefs-kill-before-ready: tracefs: tracer SIGKILLed after the last site, before ready: cleanup removes all 10" {
	attach_kill tracefs 10
}

@test "faults.tracefs-int-during-attach: tracefs: SIGINT during attach: the attach completes, then a clean detach, no record" {
	attach_stop tracefs INT
}

@test "faults.tracefs-term-during-attach: tracefs: SIGTERM during attach: the attach completes, then a clean detach, no record" {
	attach_stop tracefs TERM
}

@test "faults.tracefs-int-tracing: tracefs: SIGINT while tracing: exit 0, no entry, no record" {
	tracing_signal tracefs INT
}

@test "faults.tracefs-term-tracing: tracefs: SIGTERM while tracing: exit 0, no entry, no record" {
	tracing_signal tracefs TERM
}

@test "faults.tracefs-kill-tracing: tracefs: SIGKILL while tracing: target restored at once, entries until cleanup" {
	tracing_signal tracefs KILL
}

@test "faults.tracefs-kill-during-detach: tracefs: SIGKILL during detach of the links: all entries recorded, cleanup removes them" {
	detach_signal tracefs KILL
}

@test "faults.tracefs-second-int-detach: tracefs: a second SIGINT during detach of the links: the detach completes, nothing left" {
	detach_signal tracefs INT
}

@test "faults.tracefs-term-during-detach: tracefs: SIGTERM during detach of the links: the detach completes, nothing left" {
	detach_signal tracefs TERM
}

@test "faults.tracefs-kill-during-removal: tracefs: SIGKILL during removal of the entries (3 of 10 gone): cleanup removes the other 7" {
	entries_signal tracefs KILL
}

@test "faults.tracefs-term-during-removal: tracefs: SIGTERM during removal of the entries: the removal completes, no record" {
	entries_signal tracefs TERM
}

@test "faults.tracefs-target-killed-attach: tracefs: target SIGKILLed during attach: exit 1 'exited during attach', nothing left" {
	target_gone_during_attach tracefs kill
}

@test "faults.tracefs-target-exits-attach: tracefs: target exiting during attach: exit 1 'exited during attach', nothing left" {
	target_gone_during_attach tracefs exit
}

@test "faults.tracefs-cmd-killed-attach: tracefs: -c command SIGKILLed during attach: exit 1, both reported, nothing left" {
	command_killed_during_attach tracefs
}

# ---------------------------------------------------------------------------
# Random fault points: a sample of harness/run/soak, 3 per mode (1.6 s each
# here; 10 was 48 s of make check's 8 minutes, 5 25 s); `make soak` runs 200.

@test "faults.soak-sample: soak sample: 3 random faults per attach mode (perf, tracefs, multi), every invariant holds after cleanup" {
	requires cmd:strace "file:$PC_FIXTURES/fx_many"
	run -0 "$PROBECHECK_ROOT/harness/run/soak" -n 3
	assert_line --regexp '^soak: perf: 3 iterations, 0 leaks,'
	if pc_cap tracefs; then
		assert_line --regexp '^soak: tracefs: 3 iterations, 0 leaks,'
	fi
	if pc_cap uprobe_multi; then
		assert_line --regexp '^soak: multi: 3 iterations, 0 leaks,'
	fi
	# Leaks a SIGKILLed tracer could not have caused are the kernel's
	# (K3, reported deterministically by detachkill.bats): counted apart.
	grep -E '^soak: .*kernel K3' <<<"$output" | sed 's/^/# /' >&3 || true
}

# ---------------------------------------------------------------------------
# The checker itself: each new invariant broken on purpose in a nested run.

# nested NAME [VAR=VALUE...]: run the tests on stdin ("TEST name {") as
# their own bats file with the same helpers; TAP output in $output.
nested() {
	local f=$BATS_TEST_TMPDIR/$1.bats
	{
		echo "load '$PROBECHECK_ROOT/suites/helpers/common'"
		sed 's/^\([[:space:]]*\)TEST /\1@test /'
	} >"$f"
	env $(compgen -e | grep '^BATS_' | sed 's/^/-u /') "${@:2}" \
		PC_RUN_TAG="$PC_TAG/nested" BATS_TEST_TIMEOUT=60 bats --tap "$f" 2>&1
}

@test "faults.checker-sites: checker: an int3 or a raised semaphore left in a surviving fixture fails the test" {
	requires "file:$PC_FIXTURES/fx_many"
	run -1 nested sites <<-EOF
		start() {
			# Blocked on a fifo: it must not run into the int3.
			pc_spawn P "$PC_FIXTURES/fx_many" "ready:\$BATS_TEST_TMPDIR/r" "wait:\$(pc_fifo hold)"
			pc_wait_file "\$BATS_TEST_TMPDIR/r"
		}
		# poke PID VADDR HEX: write bytes at link-time VADDR of fx_many.
		poke() {
			printf "\$3" | dd of=/proc/\$1/mem bs=1 conv=notrunc status=none \
				seek=\$((\$(pc_runtime_addr "\$1" "$PC_FIXTURES/fx_many" "\$2")))
		}
		note() {
			pc_elf_notes "$PC_FIXTURES/fx_many" | awk -v p="\$1" '\$1 ":" \$2 == p { print \$3, \$5 }'
		}
		TEST "sites.untouched-fixture: untouched" { start; }
		TEST "sites.int3-left: int3" { start; read -r pc sema < <(note fxm:n7); poke "\$P" "\$pc" '\\xcc'; }
		TEST "sites.sema-raised: semaphore" { start; read -r pc sema < <(note fxm:s3); poke "\$P" "\$sema" '\\x01'; }
	EOF
	assert_line "ok 1 sites.untouched-fixture: untouched"
	assert_line "not ok 2 sites.int3-left: int3"
	assert_output --regexp "probe site fxm:n7 of '$PC_FIXTURES/fx_many' in pid [0-9]+ at 0x[0-9a-f]+ holds 'cc [0-9a-f ]+', the file has '90 [0-9a-f ]+'"
	assert_line "not ok 3 sites.sema-raised: semaphore"
	assert_output --regexp "semaphore of fxm:s3 of '$PC_FIXTURES/fx_many' in pid [0-9]+ at 0x[0-9a-f]+ reads 1, the file has 0"
}

@test "faults.checker-stash: checker: a stash record left by a test fails it; one from before the test does not" {
	local stash=$BATS_TEST_TMPDIR/stash
	mkdir -m 0700 "$stash"
	printf 'probecheck-stash 1\ntracer 4000001 1\n' >"$stash/4000001-1"
	run -1 nested stashrec PROBECHECK_STASH="$stash" <<-EOF
		TEST "stashrec.leaves-nothing: leaves nothing" { :; }
		TEST "stashrec.leaves-record: leaves a record" {
			printf 'probecheck-stash 1\ntracer 4000002 1\n' >"$stash/4000002-1"
		}
	EOF
	assert_line "ok 1 stashrec.leaves-nothing: leaves nothing"
	assert_line "not ok 2 stashrec.leaves-record: leaves a record"
	assert_output --partial "stash record left: $stash/4000002-1 (tracer 4000002 dead)"
	refute_output --partial "stash record left: $stash/4000001-1"
	# The failing test's teardown ran `probecheck cleanup`: its record went.
	[[ ! -e $stash/4000002-1 ]] || fail "teardown did not clean up the record it reported"
}
