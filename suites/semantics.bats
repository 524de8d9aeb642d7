#!/usr/bin/env bats
# semantics.bats — where each trace mode raises a USDT semaphore, whose
# events it reports, and that every counter is back afterwards.
#
# Modes: -p PID, -c CMD, --follow -p, --follow -c, -a; each with the perf
# attach (fd-based uprobes, the default) and the tracefs attach (named
# uprobe_events entries opened as tracepoints).  One scenario for all:
#
#   P   the traced process (-p: started before the tracer; -c: the
#       command); it dlopen()s a library after the attach, then exec()s
#       its own binary, and the new image forks
#   C   that fork child: logs its counters at fork, hits one traced site
#       (sem_a) and never hits the other (sem_b)
#   Q1  another instance of the binary, started before the tracer
#   Q2  another instance, started after the attach
#   (Q1 and Q2 dlopen the library too, after the attach)
#
# Each process logs the counters it reads (oracle "sema" lines); just
# before the tracer goes, and after, pc-peek reads them from outside while
# every process is blocked, with the first byte of C's two sites (cc: a
# breakpoint, 90: the USDT nop).  What the kernel does, measured on 6.18
# (and why):
#   - the counter is raised once per mm in which the uprobe's breakpoint
#     is installed (uprobe_write_opcode with ref_ctr_offset), not per
#     tracer and not per process using the mm;
#   - a per-process perf event (-p, -c; perf or tracefs attach: both open
#     the event for that pid) installs only in the target's mm, which after
#     exec is the new image's: exec keeps the pid, the event and the
#     counter (1 in the new image, its hits reported);
#   - system-wide events (--follow, -a) install in every mm mapping the
#     object, also ones mapped later: other instances read 1, and their
#     is-enabled probes run, untraced under --follow (BPF drops their hits,
#     counted nowhere);
#   - fork copies the parent's memory, breakpoints and counter included:
#     the child reads 1.  Per process, nobody wants the child's mm: the
#     kernel removes a breakpoint at the child's first hit of it
#     (handle_swbp -> no consumer -> remove) and decrements the counter;
#     a site the child never hits keeps its int3 and the 1 until the
#     detach removes them (register_for_each_vma walks every mm mapping
#     the file);
#   - closing the perf fds (exit, SIGKILL) unregisters the uprobes and
#     drops every count at once; a tracefs entry left by a SIGKILLed
#     tracer has no consumer, so it raises nothing, not even in a process
#     mapping the object afterwards; `probecheck cleanup` removes it.
# Events are judged exactly against the oracle of the processes the mode
# traces.  The table of docs/semantics.md cites these tests.
# bats file_tags=semantics

load helpers/common

PC_REQUIRES=(root uprobe_pmu ref_ctr_offset bpf btf)

FXV=${PC_SEMANTICS_VARIANT:-gcc_O2_pie}

# note_sema FILE PROV:NAME: the link-time address of the probe's semaphore.
note_sema() {
	local note
	note=$(pc_elf_note "$1" "$2") || return 1
	read -r _ _ note _ <<<"$note"
	echo "$note"
}

# note_pc FILE PROV:NAME: the link-time address of the probe's site.
note_pc() {
	local note
	note=$(pc_elf_note "$1" "$2") || return 1
	echo "${note%% *}"
}

# site_byte PID VADDR: the first byte of the executable's probe site at
# VADDR in PID: cc while a breakpoint is in, 90 (the USDT nop) without.
site_byte() {
	local a
	a=$(pc_runtime_addr "$1" "$FX" "$2") || return 1
	pc_peek_bytes "$1" "$a" 1
}

# peek PID FILE VADDR: the 16-bit counter at VADDR of FILE in PID.
peek() {
	local a
	a=$(pc_runtime_addr "$1" "$2" "$3") || return 1
	pc_peek "$1" "$a" 2
}

# semas PID PROBE: the values PID logged for PROBE's semaphore, in order.
semas() {
	sema_seen "$O" "$2" "$1"
}

# nth N LIST...: the Nth word (1-based) of LIST.
nth() {
	local n=$1
	shift
	echo "${@:n:1}"
}

# events PID: P's events in the trace.
events() {
	grep -c "\"pid\":$1," "$T" || true
}

# unblock NAME: write to fifo NAME (made by scenario_start).
unblock() {
	pc_fifo_write "$BATS_TEST_TMPDIR/$1" go
}

ready() {
	pc_wait_file "$BATS_TEST_TMPDIR/$1"
}

# peek_all PIDS...: "P=a,b C=a,b,A,B Q1=a,l Q2=a,l" for the named
# processes: the sem_a and sem_b counters (Q: sem_a and the library's),
# for C also the first byte of the sem_a and sem_b sites.
peek_all() {
	local who out=()
	for who in "$@"; do
		case $who in
		P) out+=("P=$(peek "$P" "$FX" "$SA"),$(peek "$P" "$FX" "$SB")") ;;
		C) out+=("C=$(peek "$C" "$FX" "$SA"),$(peek "$C" "$FX" "$SB"),$(site_byte "$C" "$PA"),$(site_byte "$C" "$PB")") ;;
		Q*) out+=("$who=$(peek "${!who}" "$FX" "$SA"),$(peek "${!who}" "$LIB" "$SL")") ;;
		esac
	done
	echo "${out[*]}"
}

# entries PID: how many uprobe_events entries tracer PID's group holds.
entries() {
	pc_inv_uprobe_all | grep -c "^[pr]:probecheck_$1_" || true
}

# wait_gone PID: for processes that are not our children (-c's command
# after its tracer was killed).
wait_gone() {
	pc_wait_until "$PC_TIMEOUT" bash -c "! [[ -e /proc/$1 ]] || [[ \$(awk '{ sub(/.*\\) /, \"\"); print \$1 }' /proc/$1/stat) == Z ]]" ||
		fail "pid $1 still running"
}

# p_script: P's steps (see the top of the file); q_script N: Q1's or Q2's:
# counters while traced, then after the end.
p_script() {
	local d=$BATS_TEST_TMPDIR
	P_SCRIPT=("ready:$d/R0" "wait:$d/F1" sema:fx:sem_a sema:fx:sem_b
		fire:fx:sem_a:1 "dlopen:$LIB" libsema:fxlib:sem libfire:fxlib:sem:1
		exec '[' sema:fx:sem_a fire:fx:sem_a:1
			fork '[' sema:fx:sem_a sema:fx:sem_b fire:fx:sem_a:1 sema:fx:sem_a
				"ready:$d/RC" "wait:$d/FC" sema:fx:sem_a sema:fx:sem_b ']'
			sema:fx:sem_a sema:fx:sem_b ']')
}

q_script() {
	local d=$BATS_TEST_TMPDIR
	echo "ready:$d/RQ$1" "wait:$d/FQ$1" sema:fx:sem_a fire:fx:sem_a:1 \
		"dlopen:$LIB" libsema:fxlib:sem libfire:fxlib:sem:1 \
		"ready:$d/RQ$1b" "wait:$d/FQ$1b" sema:fx:sem_a libsema:fxlib:sem
}

# scenario_start ATTACH HOW: the private binary and library, Q1, P and the tracer,
# Q2; then run everyone to the point where all are blocked holding their
# counters: P in waitpid, C at FC, Q1 and Q2 at FQ1b/FQ2b.
scenario_start() {
	local attach=$1 how=$2 f cmd
	# Explicit: the default (auto) may pick uprobe_multi, whose fork
	# child keeps its breakpoints and counters until the detach.
	local -a mode=(--attach "$attach")
	# shellcheck disable=SC2046  # a list of capabilities
	requires $(pc_mode_caps "$attach")
	if [[ $attach == multi ]]; then
		# A pid filter that loses other threads' hits (before 6.10):
		# auto would not pick multi for -p/-c there.
		[[ $how == all || $how == follow-* ]] || requires uprobe_multi_pid
	fi
	FX=$(private fx_sem)
	LIB=$(private libfx_sem.so "$(fx_lib "$FXV")")
	SA=$(note_sema "$FX" fx:sem_a)
	SB=$(note_sema "$FX" fx:sem_b)
	SL=$(note_sema "$LIB" fxlib:sem)
	PA=$(note_pc "$FX" fx:sem_a)
	PB=$(note_pc "$FX" fx:sem_b)
	O=$BATS_TEST_TMPDIR/o.json
	T=$BATS_TEST_TMPDIR/t.json
	for f in F1 FC FQ1 FQ1b FQ2 FQ2b FQ3; do
		pc_fifo "$f" >/dev/null
	done
	p_script
	pc_spawn Q1 "$FX" --oracle "$O" $(q_script 1)
	ready RQ1
	case $how in
	p) mode+=(-p) ;;
	follow-p) mode+=(--follow -p) ;;
	all) mode+=(-a) ;;
	follow-c) mode+=(--follow) ;;
	esac
	if [[ $how == *c ]]; then
		printf -v cmd '%q ' "$FX" --oracle "$O" "${P_SCRIPT[@]}"
		mode+=(-c "$cmd")
	else
		pc_spawn P "$FX" --oracle "$O" "${P_SCRIPT[@]}"
		ready R0
		[[ $how == all ]] || mode+=("$P")
	fi
	pc_trace_bg "$T" --json "${mode[@]}" "usdt:$FX:fx:sem_a" \
		"usdt:$FX:fx:sem_b" "usdt:$LIB:fxlib:sem"
	if [[ $how == *c ]]; then
		ready R0
		P=$(<"$BATS_TEST_TMPDIR/R0")
	fi
	pc_spawn Q2 "$FX" --oracle "$O" $(q_script 2)
	ready RQ2
	unblock F1
	ready RC
	C=$(<"$BATS_TEST_TMPDIR/RC")
	unblock FQ1
	unblock FQ2
	ready RQ1b
	ready RQ2b
}

# scenario_end HOW END: end the tracer (detach: SIGINT, or with -c the command
# exits; kill: SIGKILL, a process Q3 started then, probecheck cleanup),
# peeking at every counter on the way; then let everyone exit.
scenario_end() {
	local how=$1 end=$2 tpid
	AFTER='' KILLED='' CLEANED='' ENTRIES=''
	if [[ $end == detach && $how == *c ]]; then
		# SIGINT would be passed on to the command.
		unblock FC
		pc_trace_wait
		assert_equal "$PC_TRACE_STATUS" 0
		AFTER=$(peek_all Q1 Q2)
	elif [[ $end == detach ]]; then
		pc_trace_stop INT
		assert_equal "$PC_TRACE_STATUS" 0
		AFTER=$(peek_all P C Q1 Q2)
		unblock FC
	else
		tpid=$PC_TRACE_PID
		pc_trace_stop KILL
		assert_equal "$PC_TRACE_STATUS" 137
		ENTRIES=$(entries "$tpid")
		KILLED=$(peek_all P C Q1 Q2)
		# Mapped after the SIGKILL, before cleanup: a tracefs entry left
		# behind must not raise anything either.
		pc_spawn Q3 "$FX" --oracle "$O" "dlopen:$LIB" sema:fx:sem_a \
			libsema:fxlib:sem "ready:$BATS_TEST_TMPDIR/RQ3" \
			"wait:$BATS_TEST_TMPDIR/FQ3"
		ready RQ3
		KILLED+=" $(peek_all Q3)"
		run -0 pc cleanup
		ENTRIES+=" $(entries "$tpid")"
		CLEANED=$(peek_all P C Q1 Q2 Q3)
		unblock FC
		unblock FQ3
		assert_exit "$Q3" 0
	fi
	unblock FQ1b
	unblock FQ2b
	assert_exit "$Q1" 0
	assert_exit "$Q2" 0
	if [[ $how == *c ]]; then
		wait_gone "$P"
	else
		assert_exit "$P" 0
	fi
}

# measure ATTACH HOW END: the scenario (see the top of the file).
#   ATTACH  perf | tracefs
#   HOW     p | c | follow-p | follow-c | all
#   END     detach (SIGINT; with -c: the command exits) | kill (SIGKILL,
#           then probecheck cleanup)
# Sets SEM (counters while traced: logged by the processes, and C's
# peeked just before the end), EV (events per process), AFTER (peeks
# after a detach), KILLED and CLEANED (peeks after SIGKILL and after
# cleanup, Q3 included), ENTRIES (the killed tracer's tracefs entries
# before and after cleanup).
measure() {
	local child_at_end
	scenario_start "$1" "$2"
	child_at_end=$(peek_all C)
	scenario_end "$2" "$3"
	# P: sem_a sem_b | fire check (pre-exec) | post-exec sema | fire check
	SEM="traced=$(nth 1 $(semas "$P" fx:sem_a)),$(nth 1 $(semas "$P" fx:sem_b))"
	SEM+=" exec=$(nth 3 $(semas "$P" fx:sem_a))"
	SEM+=" lib=$(nth 1 $(semas "$P" fxlib:sem))"
	# C: at fork | fire check | after its hit; sem_b at fork (never hit)
	SEM+=" child=$(nth 1 $(semas "$C" fx:sem_a)),$(nth 3 $(semas "$C" fx:sem_a))"
	SEM+=" child_unhit=$(nth 1 $(semas "$C" fx:sem_b))"
	SEM+=" child_at_end=${child_at_end#C=}"
	SEM+=" other=$(nth 1 $(semas "$Q1" fx:sem_a)),$(nth 1 $(semas "$Q1" fxlib:sem))"
	SEM+=" later=$(nth 1 $(semas "$Q2" fx:sem_a)),$(nth 1 $(semas "$Q2" fxlib:sem))"
	EV="P=$(events "$P") C=$(events "$C") Q1=$(events "$Q1") Q2=$(events "$Q2")"
	pc_log "measured: SEM='$SEM' EV='$EV' AFTER='$AFTER' KILLED='$KILLED'" \
		"CLEANED='$CLEANED' ENTRIES='$ENTRIES'"
}

# traced_exact PID...: the trace holds exactly these processes' oracle
# events (P's include its library's and its exec'd image's).
traced_exact() {
	local re
	re=$(IFS='|'; echo "$*")
	grep -E "\"pid\":($re)," "$O" >"$O.traced" || true
	assert_oracle "$O.traced" "$T"
}

# The measured rows.  Per process: the target only (after exec too); its
# fork child reads 1 until it hits the site, then 0; sites it never hits
# keep 1 until the detach.  System-wide: every mm mapping the object.
PER_PROCESS="traced=1,1 exec=1 lib=1 child=1,0 child_unhit=1 child_at_end=0,1,90,cc other=0,0 later=0,0"
SYSTEM_WIDE="traced=1,1 exec=1 lib=1 child=1,1 child_unhit=1 child_at_end=1,1,cc,cc other=1,1 later=1,1"
ZERO_4="P=0,0 C=0,0,90,90 Q1=0,0 Q2=0,0"

@test "semantics.perf-pid: perf -p: counters and events per process; 0 after detach" {
	measure perf p detach
	assert_equal "$SEM" "$PER_PROCESS"
	assert_equal "$EV" "P=3 C=0 Q1=0 Q2=0"
	traced_exact "$P"
	assert_equal "$AFTER" "$ZERO_4"
}

@test "semantics.perf-cmd: perf -c: counters and events per process; 0 after the command exits" {
	measure perf c detach
	assert_equal "$SEM" "$PER_PROCESS"
	assert_equal "$EV" "P=3 C=0 Q1=0 Q2=0"
	traced_exact "$P"
	assert_equal "$AFTER" "Q1=0,0 Q2=0,0"
}

@test "semantics.perf-follow-pid: perf --follow -p: counters in every mm mapping the object, events of the followed; 0 after detach" {
	measure perf follow-p detach
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_equal "$EV" "P=3 C=1 Q1=0 Q2=0"
	traced_exact "$P" "$C"
	assert_equal "$AFTER" "$ZERO_4"
}

@test "semantics.perf-follow-cmd: perf --follow -c: counters in every mm mapping the object, events of the followed; 0 after the command exits" {
	measure perf follow-c detach
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_equal "$EV" "P=3 C=1 Q1=0 Q2=0"
	traced_exact "$P" "$C"
	assert_equal "$AFTER" "Q1=0,0 Q2=0,0"
}

@test "semantics.perf-all: perf -a: counters and events in every mm mapping the object; 0 after detach" {
	measure perf all detach
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_equal "$EV" "P=3 C=1 Q1=2 Q2=2"
	traced_exact "$P" "$C" "$Q1" "$Q2"
	assert_equal "$AFTER" "$ZERO_4"
}

@test "semantics.tracefs-pid: tracefs -p: counters and events per process; 0 after detach" {
	measure tracefs p detach
	assert_equal "$SEM" "$PER_PROCESS"
	assert_equal "$EV" "P=3 C=0 Q1=0 Q2=0"
	traced_exact "$P"
	assert_equal "$AFTER" "$ZERO_4"
}

@test "semantics.tracefs-cmd: tracefs -c: counters and events per process; 0 after the command exits" {
	measure tracefs c detach
	assert_equal "$SEM" "$PER_PROCESS"
	assert_equal "$EV" "P=3 C=0 Q1=0 Q2=0"
	traced_exact "$P"
	assert_equal "$AFTER" "Q1=0,0 Q2=0,0"
}

@test "semantics.tracefs-follow-pid: tracefs --follow -p: counters in every mm mapping the object, events of the followed; 0 after detach" {
	measure tracefs follow-p detach
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_equal "$EV" "P=3 C=1 Q1=0 Q2=0"
	traced_exact "$P" "$C"
	assert_equal "$AFTER" "$ZERO_4"
}

@test "semantics.tracefs-follow-cmd: tracefs --follow -c: counters in every mm mapping the object, events of the followed; 0 after the command exits" {
	measure tracefs follow-c detach
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_equal "$EV" "P=3 C=1 Q1=0 Q2=0"
	traced_exact "$P" "$C"
	assert_equal "$AFTER" "Q1=0,0 Q2=0,0"
}

@test "semantics.tracefs-all: tracefs -a: counters and events in every mm mapping the object; 0 after detach" {
	measure tracefs all detach
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_equal "$EV" "P=3 C=1 Q1=2 Q2=2"
	traced_exact "$P" "$C" "$Q1" "$Q2"
	assert_equal "$AFTER" "$ZERO_4"
}

# uprobe_multi (one link per object, the pid in the kernel's filter):
# per process, the fork child is not cleaned up at its hit.  A perf
# uprobe's handler answers UPROBE_HANDLER_REMOVE when its filter rejects
# the hitting mm, so the kernel removes that breakpoint and drops the
# counter; the uprobe_multi handler does not, so the child keeps the
# int3 and the 1 at both sites until the detach (its hits still filtered:
# no events).  Measured on 6.18; system-wide it is the perf row.
MULTI_PER_PROCESS="traced=1,1 exec=1 lib=1 child=1,1 child_unhit=1 child_at_end=1,1,cc,cc other=0,0 later=0,0"

@test "semantics.multi-pid: multi -p: counters and events per process, but the fork child keeps its breakpoints and 1 until the detach; 0 after detach" {
	measure multi p detach
	assert_equal "$SEM" "$MULTI_PER_PROCESS"
	assert_equal "$EV" "P=3 C=0 Q1=0 Q2=0"
	traced_exact "$P"
	assert_equal "$AFTER" "$ZERO_4"
}

@test "semantics.multi-cmd: multi -c: counters and events per process, the fork child as under multi -p; 0 after the command exits" {
	measure multi c detach
	assert_equal "$SEM" "$MULTI_PER_PROCESS"
	assert_equal "$EV" "P=3 C=0 Q1=0 Q2=0"
	traced_exact "$P"
	assert_equal "$AFTER" "Q1=0,0 Q2=0,0"
}

@test "semantics.multi-follow-pid: multi --follow -p: counters in every mm mapping the object, events of the followed; 0 after detach" {
	measure multi follow-p detach
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_equal "$EV" "P=3 C=1 Q1=0 Q2=0"
	traced_exact "$P" "$C"
	assert_equal "$AFTER" "$ZERO_4"
}

@test "semantics.multi-all: multi -a: counters and events in every mm mapping the object; 0 after detach" {
	measure multi all detach
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_equal "$EV" "P=3 C=1 Q1=2 Q2=2"
	traced_exact "$P" "$C" "$Q1" "$Q2"
	assert_equal "$AFTER" "$ZERO_4"
}

@test "semantics.multi-pid-kill: multi -p: 0 after SIGKILL of the tracer and after cleanup" {
	measure multi p kill
	assert_killed_clean 0
}

# After SIGKILL: every counter 0 at once (the kernel closes the perf fds),
# a process mapping the object afterwards reads 0, and still 0 after
# probecheck cleanup (which removes a tracefs tracer's entries).
# ENTRIES: the dead tracer's tracefs entries before and after cleanup.
assert_killed_clean() {
	assert_equal "$ENTRIES" "$1 0"
	assert_equal "$KILLED" "$ZERO_4 Q3=0,0"
	assert_equal "$CLEANED" "$ZERO_4 Q3=0,0"
	# Q3's own view, after dlopen: the object and library unraised.
	assert_equal "$(semas "$Q3" fx:sem_a) $(semas "$Q3" fxlib:sem)" "0 0"
}

@test "semantics.perf-pid-kill: perf -p: 0 after SIGKILL of the tracer and after cleanup" {
	measure perf p kill
	assert_equal "$SEM" "$PER_PROCESS"
	assert_killed_clean 0
}

@test "semantics.perf-cmd-kill: perf -c: 0 after SIGKILL of the tracer and after cleanup" {
	measure perf c kill
	assert_equal "$SEM" "$PER_PROCESS"
	assert_killed_clean 0
}

@test "semantics.perf-follow-pid-kill: perf --follow -p: 0 after SIGKILL of the tracer and after cleanup" {
	measure perf follow-p kill
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_killed_clean 0
}

@test "semantics.perf-follow-cmd-kill: perf --follow -c: 0 after SIGKILL of the tracer and after cleanup" {
	measure perf follow-c kill
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_killed_clean 0
}

@test "semantics.perf-all-kill: perf -a: 0 after SIGKILL of the tracer and after cleanup" {
	measure perf all kill
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_killed_clean 0
}

@test "semantics.tracefs-pid-kill: tracefs -p: 0 after SIGKILL of the tracer (entries remain, raising nothing) and after cleanup (entries gone)" {
	measure tracefs p kill
	assert_equal "$SEM" "$PER_PROCESS"
	assert_killed_clean 3
}

@test "semantics.tracefs-cmd-kill: tracefs -c: 0 after SIGKILL of the tracer (entries remain, raising nothing) and after cleanup (entries gone)" {
	measure tracefs c kill
	assert_equal "$SEM" "$PER_PROCESS"
	assert_killed_clean 3
}

@test "semantics.tracefs-follow-pid-kill: tracefs --follow -p: 0 after SIGKILL of the tracer (entries remain, raising nothing) and after cleanup (entries gone)" {
	measure tracefs follow-p kill
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_killed_clean 3
}

@test "semantics.tracefs-follow-cmd-kill: tracefs --follow -c: 0 after SIGKILL of the tracer (entries remain, raising nothing) and after cleanup (entries gone)" {
	measure tracefs follow-c kill
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_killed_clean 3
}

@test "semantics.tracefs-all-kill: tracefs -a: 0 after SIGKILL of the tracer (entries remain, raising nothing) and after cleanup (entries gone)" {
	measure tracefs all kill
	assert_equal "$SEM" "$SYSTEM_WIDE"
	assert_killed_clean 3
}
