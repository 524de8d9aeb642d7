#!/usr/bin/env bats
# tracefs.bats — the tracefs attach mode (trace --attach=tracefs): named
# uprobe_events entries instead of fd-based uprobes.
#
# What is checked, from outside the tracer: the events are exactly the
# fixture's oracle (semaphore probes and, with the pid provider, return
# probes included); while tracing, uprobe_events holds one entry per site
# named probecheck_PID_START/[pr]_DEV_INO_OFF (PID and START of the tracer
# from /proc, DEV and INO from stat(1), OFF from readelf's PT_LOAD: the
# file offset, not the address) with the semaphore's file offset as
# "(0xREFCTR)"; the stash holds the tracer's record; after a normal exit
# both are gone.  Two tracers on one site each have their own entry, and
# stopping one leaves the other's entry and events alone.  A SIGKILLed
# tracer leaves its entries and its record behind — the reason the stash
# exists — and `probecheck cleanup`, or any probecheck start, removes them.
# A site the kernel refuses part way through an attach leaves nothing.
#
# Tests that kill a tracer use a stash of their own (PROBECHECK_STASH): a
# concurrent probecheck run elsewhere on the machine cleans the default
# stash at its start and would remove the entries this suite looks at.
# bats file_tags=tracefs

load helpers/common

PC_REQUIRES=(root tracefs bpf)

# The executable: nopie, so file offsets differ from addresses.
FX_VARIANT=${PC_TRACEFS_VARIANT:-fx_gcc_O2_nopie}

use_fixture() {
	FX=$PC_FIXTURES/$FX_VARIANT
	requires "file:$FX"
}

# own_stash: this test's stash directory (not yet created).
own_stash() {
	export PROBECHECK_STASH=$BATS_TEST_TMPDIR/stash
}

# group_of PID: the tracefs group of tracer PID, probecheck_PID_START.
group_of() {
	local st
	st=$(start_of "$1") || { fail "group_of: no process $1"; return 1; }
	echo "probecheck_$1_$st"
}

# entries GROUP: the uprobe_events lines of GROUP, sorted.
entries() {
	pc_inv_uprobe_all | awk -v g="$1" '{ split($1, a, "[:/]"); if (a[2] == g) print }' | sort
}

# all_ours: every uprobe_events line in a group starting "probecheck" (on
# this suite's files, when other suites run beside it).
all_ours() {
	pc_inv_uprobe_all | pc_inv_uprobe_scope | awk '{ split($1, a, "[:/]"); if (a[2] ~ /^probecheck/) print }' | sort
}

# file_off FILE VADDR: the file offset of link-time VADDR (readelf PT_LOAD).
file_off() {
	local kind foff vaddr _pa fsz _rest
	while read -r kind foff vaddr _pa fsz _rest; do
		[[ $kind == LOAD ]] || continue
		if (($2 >= vaddr && $2 < vaddr + fsz)); then
			printf '0x%x\n' $(($2 - vaddr + foff))
			return 0
		fi
	done < <(readelf -lW "$1")
	fail "file_off: $2 is in no PT_LOAD of '$1'"
}

# note_addrs FILE PROV:NAME: "PC SEMA", link-time, from readelf's note.
# The note's pc is relative to .stapsdt.base as linked: the sections
# were not moved, so it is the address.
note_addrs() {
	local loc sema note
	note=$(pc_elf_note "$1" "$2") || return 1
	read -r loc _ sema _ <<<"$note"
	echo "$loc $sema"
}

# want_entry KIND FILE OFF [REFCTR] [SEQ]: the "NAME OFFSET" an entry of
# the scheme has, NAME without the group: "p_fe00_1a2b_1139 0x1139(0x4010)".
want_entry() {
	local dev ino name
	dev=$(stat -Lc %d "$2") ino=$(stat -Lc %i "$2")
	printf -v name '%s_%x_%x_%x' "$1" "$dev" "$ino" "$3"
	[[ -n ${5:-} ]] && name+=_$5
	if [[ -n ${4:-} ]]; then
		printf '%s 0x%016x(0x%x)\n' "$name" "$3" "$4"
	else
		printf '%s 0x%016x\n' "$name" "$3"
	fi
}

# have_entries GROUP: "NAME OFFSET" of each entry of GROUP, as want_entry.
have_entries() {
	entries "$1" | awk '{ split($1, a, "/"); n = split($2, b, ":"); print a[2], b[n] }' | sort
}

# record_of PID: the stash record path of tracer PID.
record_of() {
	echo "${PROBECHECK_STASH:-/run/probecheck}/$1-$(start_of "$1")"
}

# printed N FILE: FILE has at least N lines (the tracer flushes each event).
printed() {
	[[ $(wc -l <"$2") -ge $1 ]]
}

# pid_provider BIN: SKIP unless this probecheck has the pid provider.
pid_provider() {
	local err=$BATS_TEST_TMPDIR/pidprobe.err
	requires "file:$1"
	if ! "$PC_BIN" trace -c true "pid:$1:nosuchfunction_x:entry" 2>"$err" >/dev/null &&
	   grep -q "unknown probe kind" "$err"; then
		skip "the pid provider has not landed (providers/prov_pid.c)"
	fi
}

@test "tracefs.entries-lifecycle: tracefs: exact events, semaphores set through (0xREFCTR), entries probecheck_PID_START/p_DEV_INO_OFF while tracing, gone with the record after a normal exit" {
	requires ref_ctr_offset
	use_fixture
	unset PROBECHECK_STASH      # the default stash, /run/probecheck
	fifos 1
	start_fixture sema:fx:sem_a "ready:$(R 0)" "wait:$F1" sema:fx:sem_a \
		fire:fx:sem_a:3 fire:fx:a3:2 sema:fx:sem_a "ready:$(R 1)" \
		"wait:$(pc_fifo hold)"
	local sem a3 semaddr g rec want
	read -r sem semaddr < <(note_addrs "$FX" fx:sem_a)
	read -r a3 _ < <(note_addrs "$FX" fx:a3)
	local sa
	sa=$(pc_runtime_addr "$PID" "$FX" "$semaddr")
	pc_sema_watch "$PID" "$sa" 0

	pc_trace_bg "$BATS_TEST_TMPDIR/trace.json" --attach=tracefs --json -p "$PID" \
		"usdt:$FX:fx:sem_a" "usdt:$FX:fx:a3"
	g=$(group_of "$PC_TRACE_PID")
	want=$( { want_entry p "$FX" "$(file_off "$FX" "$sem")" "$(file_off "$FX" "$semaddr")"
		  want_entry p "$FX" "$(file_off "$FX" "$a3")"; } | sort)
	run -0 have_entries "$g"
	assert_output "$want"
	# The offset is the file's, not the address (nopie: they differ).
	[[ $(file_off "$FX" "$sem") != "$sem" ]] || fail "fixture $FX_VARIANT: offset == address, the test proves nothing"
	assert_equal "$(pc_peek "$PID" "$sa" 2)" 1
	rec=$(record_of "$PC_TRACE_PID")
	run -0 cat "$rec"
	assert_line --index 0 "probecheck-stash 1"
	assert_line --index 1 "tracer $PC_TRACE_PID $(start_of "$PC_TRACE_PID")"
	assert_equal "$(sed -n '3,$p' "$rec" | sort)" "$(entries "$g" | awk '{ print "tracefs " substr($1, 3) }' | sort)"
	assert_equal "$(stat -c %a "$rec")" 600
	assert_equal "$(stat -c %a "$(dirname "$rec")")" 700

	release 1
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	assert_summary 5 "$PC_TRACE_OUT.err"
	assert_oracle "$ORACLE" "$PC_TRACE_OUT"
	assert_equal "$(jq -r 'select(.sema == "fx:sem_a") | .value' "$ORACLE" | xargs)" "0 1 1 1 1 1"
	run -0 entries "$g"
	assert_output ""
	[[ ! -e $rec ]] || fail "record '$rec' left after a normal exit: $(cat "$rec")"
	assert_equal "$(pc_peek "$PID" "$sa" 2)" 0
}

@test "tracefs.two-tracers: tracefs: two tracers on one process and site each have their own entry; stopping one leaves the other's entry and events; then nothing is left" {
	requires ref_ctr_offset
	use_fixture
	own_stash
	fifos 2
	start_fixture "ready:$(R 0)" \
		"wait:$F1" fire:fx:sem_a:2 "ready:$(R 1)" \
		"wait:$F2" fire:fx:sem_a:3 "ready:$(R 2)" "wait:$(pc_fifo hold)"
	local t1 t1out t2 t2out g1 g2 e1 e2
	pc_trace_bg "$BATS_TEST_TMPDIR/t1.json" --attach=tracefs --json -p "$PID" "usdt:$FX:fx:sem_a"
	t1=$PC_TRACE_PID t1out=$PC_TRACE_OUT
	pc_on_teardown kill_quietly "$t1"
	pc_trace_bg "$BATS_TEST_TMPDIR/t2.json" --attach=tracefs --json -p "$PID" "usdt:$FX:fx:sem_a"
	t2=$PC_TRACE_PID t2out=$PC_TRACE_OUT
	g1=$(group_of "$t1") g2=$(group_of "$t2")
	e1=$(have_entries "$g1") e2=$(have_entries "$g2")
	# Same site, same name under two groups: one entry each.
	[[ -n $e1 && $e1 == "$e2" && $(wc -l <<<"$e1") == 1 ]] || fail "entries: '$e1' / '$e2'"
	release 1
	cp "$ORACLE" "$BATS_TEST_TMPDIR/oracle.both"

	PC_TRACE_PID=$t1 PC_TRACE_OUT=$t1out
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	run -0 entries "$g1"
	assert_output ""
	assert_equal "$(have_entries "$g2")" "$e2"
	[[ -e $(record_of "$t2") ]] || fail "the second tracer's record is gone"
	release 2

	PC_TRACE_PID=$t2 PC_TRACE_OUT=$t2out
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	assert_summary 2 "$t1out.err"
	assert_oracle "$BATS_TEST_TMPDIR/oracle.both" "$t1out"
	assert_summary 5 "$t2out.err"
	assert_oracle "$ORACLE" "$t2out"
	run -0 all_ours
	assert_output ""
	run -0 find "$PROBECHECK_STASH" -type f
	assert_output ""
}

@test "tracefs.return-entries: tracefs: pid return probes are r_ entries; a site given twice (FUNC:entry, FUNC:0x0) gets a second entry _1; events exact" {
	requires bpf_cookie    # return probes: none by place (before 5.15)
	local B=$PC_FIXTURES/fx_pidfn_O2_nopie o=$BATS_TEST_TMPDIR/o.json g fn off want
	pid_provider "$B"
	fifos 1
	pc_spawn PID "$B" --oracle "$o" "ready:$(R 0)" "wait:$F1" neg:3 "ready:$(R 1)" "wait:$(pc_fifo hold)"
	pc_wait_file "$(R 0)"
	pc_trace_bg "$BATS_TEST_TMPDIR/t.json" --attach=tracefs --json --args 1 -p "$PID" \
		"pid:$B:pf_neg:entry" "pid:$B:pf_neg:return" "pid:$B:pf_neg:0x0"
	g=$(group_of "$PC_TRACE_PID")
	fn=$(readelf -sW "$B" | awk '$8 == "pf_neg" && $4 == "FUNC" { print "0x" $2; exit }')
	off=$(file_off "$B" "$fn")
	want=$( { want_entry p "$B" "$off"; want_entry p "$B" "$off" "" 1
		  want_entry r "$B" "$off"; } | sort)
	run -0 have_entries "$g"
	assert_output "$want"
	run -0 entries "$g"
	assert_line --partial "r:$g/"
	release 1
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	assert_summary 9 "$PC_TRACE_OUT.err"
	assert_oracle "$o" "$PC_TRACE_OUT" --only 'pf_neg:[er]*'
	assert_equal "$(pc_count_events "$PC_TRACE_OUT" 'pf_neg:0x0')" 3
	run -0 entries "$g"
	assert_output ""
}

@test "tracefs.sigkill-cleanup: tracefs: after SIGKILL of the tracer its entries and record remain; probecheck cleanup removes both and says so" {
	requires ref_ctr_offset
	use_fixture
	own_stash
	fifos 2
	start_fixture "ready:$(R 0)" "wait:$F1" fire:fx:sem_a:2 "ready:$(R 1)" \
		"wait:$F2" sema:fx:sem_a fire:fx:sem_a:1 "ready:$(R 2)" "wait:$(pc_fifo hold)"
	local g rec e n sa names tpid tstart
	sa=$(pc_runtime_addr "$PID" "$FX" "$(note_addrs "$FX" fx:sem_a | cut -d' ' -f2)")
	pc_sema_watch "$PID" "$sa" 0
	pc_trace_bg "$BATS_TEST_TMPDIR/t.json" --attach=tracefs --json -p "$PID" \
		"usdt:$FX:fx:sem_a" "usdt:$FX:fx:a1"
	g=$(group_of "$PC_TRACE_PID") rec=$(record_of "$PC_TRACE_PID")
	tpid=$PC_TRACE_PID tstart=$(start_of "$PC_TRACE_PID")
	e=$(entries "$g")
	[[ $(wc -l <<<"$e") == 2 ]] || fail "expected 2 entries in $g: '$e'"
	release 1
	# Fired is not yet printed: the two events must be out before the
	# kill (make mutate's baseline lost them once, under load).
	pc_wait_until "$PC_TIMEOUT" printed 2 "$PC_TRACE_OUT" ||
		fail "the tracer printed $(wc -l <"$PC_TRACE_OUT") of the 2 events in ${PC_TIMEOUT}s"
	pc_trace_stop KILL
	assert_equal "$PC_TRACE_STATUS" 137
	assert_oracle "$ORACLE" "$PC_TRACE_OUT"
	# The kernel dropped the perf events (and the semaphore) with the fds;
	# the named entries stay.
	assert_equal "$(entries "$g")" "$e"
	[[ -s $rec ]] || fail "no record '$rec' after SIGKILL"
	release 2
	# Set while traced (two fires), 0 after the kill (a sema line, a fire).
	assert_equal "$(jq -r 'select(.sema == "fx:sem_a") | .value' "$ORACLE" | xargs)" "1 1 0 0"

	names=$(awk '{ print substr($1, 3) }' <<<"$e")
	run -0 --separate-stderr pc cleanup
	for n in $names; do
		assert_line "removed tracefs $n"
	done
	assert_line "removed record $rec (tracer $tpid started at $tstart is gone)"
	assert_line "cleanup: 1 record removed (2 tracefs entries), 0 live tracers left alone, 0 refused, 0 failed"
	assert_equal "${#lines[@]}" 4
	run -0 entries "$g"
	assert_output ""
	[[ ! -e $rec ]] || fail "record '$rec' still there"
	pc_check_clean
	# Nothing left to do: a second run removes nothing.
	run -0 pc cleanup
	assert_output "cleanup: 0 records removed (0 tracefs entries), 0 live tracers left alone, 0 refused, 0 failed"
}

# An entry whose perf event another process holds is EBUSY to remove:
# the tracer retries for about 2 s (entry_remove), then says so and keeps
# the entry in its record for `probecheck cleanup`.  perf stat holds it:
# its workload starts only once perf has opened its events.
@test "tracefs.remove-busy: tracefs: an entry another process holds (perf stat on its event) is retried, then said as not removed (EBUSY) and kept in the record, no 'removed' said; released, probecheck cleanup removes it" {
	requires cmd:perf
	use_fixture
	own_stash
	fifos 1
	start_fixture "ready:$(R 0)" "wait:$F1" fire:fx:a1:1 "ready:$(R 1)" "wait:$(pc_fifo hold)"
	local g rec e name hold H
	pc_trace_bg "$BATS_TEST_TMPDIR/t.json" --attach=tracefs -v --json -p "$PID" "usdt:$FX:fx:a1"
	g=$(group_of "$PC_TRACE_PID") rec=$(record_of "$PC_TRACE_PID")
	e=$(entries "$g")
	[[ $(wc -l <<<"$e") == 1 ]] || fail "expected 1 entry in $g: '$e'"
	name=$(awk '{ split($1, a, "/"); print a[2] }' <<<"$e")
	H=$(pc_fifo h)
	pc_spawn hold perf stat -a -e "$g:$name" -- \
		bash -c 'touch "$1"; exec cat "$2" >/dev/null' _ "$BATS_TEST_TMPDIR/held" "$H"
	pc_wait_file "$BATS_TEST_TMPDIR/held"
	release 1
	pc_trace_stop
	run -0 cat "$PC_TRACE_OUT.err"
	assert_line "probecheck: tracefs: cannot remove '$g/$name': Device or resource busy"
	refute_line --partial "removed after"
	assert_oracle "$ORACLE" "$PC_TRACE_OUT"
	assert_equal "$(entries "$g")" "$e"
	grep -qF "$name" "$rec" || fail "the entry is not in the record '$rec': $(cat "$rec" 2>&1)"
	pc_fifo_write "$H" go
	_pc_wait_gone "$hold" || fail "perf stat did not end"
	run -0 --separate-stderr pc cleanup
	assert_line "removed tracefs $g/$name"
	run -0 entries "$g"
	assert_output ""
	[[ ! -e $rec ]] || fail "record '$rec' still there"
}

@test "tracefs.start-cleans: tracefs: every probecheck start cleans up: after a SIGKILLed tracer, 'probecheck list FILE' removes its entries and record, its output unchanged" {
	use_fixture
	own_stash
	local before g rec
	before=$(pc list "$FX")
	fifos 1
	start_fixture "ready:$(R 0)" "wait:$F1" "ready:$(R 1)"
	pc_trace_bg "$BATS_TEST_TMPDIR/t.json" --attach=tracefs -p "$PID" "usdt:$FX:fx:a2"
	g=$(group_of "$PC_TRACE_PID") rec=$(record_of "$PC_TRACE_PID")
	pc_trace_stop KILL
	[[ -n $(entries "$g") && -e $rec ]] || fail "nothing left behind by the SIGKILLed tracer, the test proves nothing"
	run -0 --separate-stderr pc list "$FX"
	assert_output "$before"
	[[ $stderr == *"probecheck: cleanup: removed tracefs $g/"* ]] || fail "stderr does not report the removal: $stderr"
	run -0 entries "$g"
	assert_output ""
	[[ ! -e $rec ]] || fail "record '$rec' still there"
	# Quiet when there is nothing to do.
	run -0 --separate-stderr pc list "$FX"
	assert_equal "$stderr" ""
	release 1
}

@test "tracefs.refused-partway: tracefs: a site the kernel refuses part way through (same address, other semaphore, held by another tracer) leaves nothing of that tracer; the first keeps working" {
	requires ref_ctr_offset "file:$PC_FIXTURES/fx_attachfail"
	own_stash
	local FXA=$PC_FIXTURES/fx_attachfail g1 e1 pid2
	fifos 1
	ORACLE=$BATS_TEST_TMPDIR/oracle.json
	pc_spawn PID "$FXA" --oracle "$ORACLE" "ready:$(R 0)" "wait:$F1" fire "ready:$(R 1)" "wait:$(pc_fifo hold)"
	pc_wait_file "$(R 0)"
	pc_trace_bg "$BATS_TEST_TMPDIR/t1.json" --attach=tracefs --json -p "$PID" "usdt:$FXA:fxatt:b_dup1"
	g1=$(group_of "$PC_TRACE_PID") e1=$(entries "$g1")
	# a_good attaches first, then b_dup2's uprobe is refused (EINVAL).
	run -1 --separate-stderr pc trace --attach=tracefs -p "$PID" "usdt:$FXA:fxatt:a_good" "usdt:$FXA:fxatt:b_dup2"
	[[ $stderr == *"fxatt:b_dup2"* ]] || fail "the error does not name the site: $stderr"
	assert_equal "$(all_ours)" "$e1"
	run -0 find "$PROBECHECK_STASH" -type f -name '[0-9]*'
	assert_output "$(record_of "$PC_TRACE_PID")"
	# Within one tracer the conflict is found before anything is created.
	run -1 --separate-stderr pc trace --attach=tracefs -p "$PID" "usdt:$FXA:fxatt:b_dup1" "usdt:$FXA:fxatt:b_dup2"
	[[ $stderr == *"another site at this address has semaphore offset"* ]] || fail "stderr: $stderr"
	assert_equal "$(all_ours)" "$e1"
	release 1
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	assert_oracle "$ORACLE" "$PC_TRACE_OUT"
	run -0 all_ours
	assert_output ""
}

@test "tracefs.attach-option: --attach: perf and the default (auto) make no tracefs entry; an unknown mode exits 2" {
	use_fixture
	local o=$BATS_TEST_TMPDIR/o.json
	run -2 --separate-stderr pc trace --attach=kprobe -c "$FX" "usdt:$FX:fx:a0"
	assert_equal "${stderr%%$'\n'*}" "probecheck: --attach 'kprobe': expected perf, tracefs, multi or auto"
	run -2 pc trace --attach -c "$FX" "usdt:$FX:fx:a0"
	run -0 --separate-stderr pc trace --json --attach=perf -c "$FX --oracle $o fire:fx:a1:2 sema:fx:sem_a" "usdt:$FX:fx:a1" "usdt:$FX:fx:sem_a"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/t.json"
	assert_oracle "$o" "$BATS_TEST_TMPDIR/t.json"
	# The default: the same, and the semaphore the fixture saw was set.
	rm -f "$o"
	pc_trace_bg "$BATS_TEST_TMPDIR/t2.json" --json -c "$FX --oracle $o wait:$(pc_fifo go) fire:fx:a1:2 sema:fx:sem_a" "usdt:$FX:fx:a1" "usdt:$FX:fx:sem_a"
	run -0 all_ours
	assert_output ""
	pc_fifo_write "$BATS_TEST_TMPDIR/go" go
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	assert_oracle "$o" "$PC_TRACE_OUT"
}

# frozen_tracer N LOG ARGS...: `probecheck trace ARGS` under strace, frozen
# by a SIGSTOP injected on its Nth open of uprobe_events (the open returns,
# the tracer stops before writing).  Sets FROZEN (the tracer's pid).
frozen_tracer() {
	local n=$1 log=$2 st i
	shift 2
	pc_spawn st strace "${PC_STRACE_ENV[@]}" -f -o "$log" -P "$UE" -e trace=openat \
		-e inject=openat:signal=SIGSTOP:when="$n" "$PC_BIN" trace "$@"
	for ((i = 0; i < PC_TIMEOUT * 100; i++)); do
		grep -q -- '--- stopped by SIGSTOP ---' "$log" 2>/dev/null && break
		pc_inv_alive "$st" || break
		pc_nap 0.01	# polling strace's log for the stop, bounded
	done
	_pc_log_file "strace" "$log"
	FROZEN=$(awk '/stopped by SIGSTOP/ { print $1; exit }' "$log")
	[[ -n $FROZEN ]] || { fail "the tracer did not stop at open #$n of $UE"; return 1; }
}

# kill_frozen: SIGKILL the frozen tracer and wait until it is dead (or a
# zombie: its files are closed by then), then run the cleanup.
kill_frozen() {
	kill -KILL "$FROZEN"
	pc_wait_until "$PC_TIMEOUT" not_alive "$FROZEN"
	run -0 pc cleanup
}

not_alive() {
	! pc_inv_alive "$1"
}

@test "tracefs.record-first: tracefs: the record is on disk before an entry exists and after it is removed: a tracer SIGKILLed at its first create or first remove is cleaned up" {
	requires cmd:strace
	use_fixture
	own_stash
	UE=$PC_TRACEFS/uprobe_events
	local g rec
	# Frozen at its first create: both entries recorded, none made yet.
	frozen_tracer 1 "$BATS_TEST_TMPDIR/s1.log" --attach=tracefs -c "$FX fire:fx:a0:1" \
		"usdt:$FX:fx:a0" "usdt:$FX:fx:a1"
	g=$(group_of "$FROZEN") rec=$(record_of "$FROZEN")
	run -0 sed -n '3,$p' "$rec"
	assert_equal "${#lines[@]}" 2
	assert_line --regexp "^tracefs $g/p_[0-9a-f]+_[0-9a-f]+_[0-9a-f]+$"
	run -0 entries "$g"
	assert_output ""
	kill_frozen
	assert_line "cleanup: 1 record removed (0 tracefs entries), 0 live tracers left alone, 0 refused, 0 failed"
	[[ ! -e $rec ]] || fail "record left: $rec"

	# Frozen at its first remove (open 3: two creates before it): both
	# entries exist and are still recorded.
	frozen_tracer 3 "$BATS_TEST_TMPDIR/s3.log" --attach=tracefs -c "$FX fire:fx:a0:1" \
		"usdt:$FX:fx:a0" "usdt:$FX:fx:a1"
	g=$(group_of "$FROZEN") rec=$(record_of "$FROZEN")
	assert_equal "$(entries "$g" | wc -l)" 2
	assert_equal "$(sed -n '3,$p' "$rec" | sort)" "$(entries "$g" | awk '{ print "tracefs " substr($1, 3) }' | sort)"
	kill_frozen
	assert_line "cleanup: 1 record removed (2 tracefs entries), 0 live tracers left alone, 0 refused, 0 failed"
	run -0 entries "$g"
	assert_output ""
}

@test "tracefs.blank-path: tracefs: a path with a blank or DEL cannot be written to uprobe_events: exit 1 naming it, nothing created; perf mode traces it; '!' (just above the blank) is no blank" {
	use_fixture
	own_stash
	local d o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	for d in "$BATS_TEST_TMPDIR/with space" "$BATS_TEST_TMPDIR/with"$'\x7f'"del"; do
		mkdir "$d"
		cp "$FX" "$d/fx_blank"
		run -1 --separate-stderr pc trace --attach=tracefs -c "true" "usdt:$d/fx_blank:fx:a0"
		[[ $stderr == *"tracefs: '$d/fx_blank': a path with blanks or control characters cannot be written to uprobe_events"* ]] ||
			fail "stderr: $stderr"
		run -0 all_ours
		assert_output ""
		run -0 find "$PROBECHECK_STASH" -type f
		assert_output ""
		rm -f "$o"
		run -0 --separate-stderr pc trace --json -c "'$d/fx_blank' --oracle $o fire:fx:a0:2" "usdt:$d/fx_blank:fx:a0"
		printf '%s\n' "$output" >"$t"
		assert_oracle "$o" "$t"
	done
	d=$BATS_TEST_TMPDIR/with!bang
	mkdir "$d"
	cp "$FX" "$d/fx_bang"
	rm -f "$o"
	run -0 --separate-stderr pc trace --attach=tracefs --json -c "'$d/fx_bang' --oracle $o fire:fx:a0:2" "usdt:$d/fx_bang:fx:a0"
	printf '%s\n' "$output" >"$t"
	assert_oracle "$o" "$t"
}

# follow.c's barrier on the dynamic linker (_dl_debug_state) is a site of
# the session like any other: under --attach tracefs it is a named entry,
# recorded in the stash, and gone with the record at the end.  (It used to
# be an fd-based uprobe made outside the session in every mode.)
@test "tracefs.linker-hook: tracefs: --follow with PATH '*': the dynamic linker's _dl_debug_state hook is a recorded entry of the tracer's group, removed at exit" {
	local ld g rec h name
	ld=$(readlink -f "$(awk '$NF ~ /ld-linux-x86-64/ { print $NF; exit }' /proc/self/maps)")
	[[ -n $ld ]] || skip "no ld-linux-x86-64 mapped by this shell"
	readelf -sW "$ld" | awk '$8 ~ /^_dl_debug_state(@|$)/ { f = 1 } END { exit !f }' ||
		skip "'$ld' has no _dl_debug_state symbol"
	own_stash
	h=$(pc_fifo hold)
	pc_trace_bg "$BATS_TEST_TMPDIR/trace.out" --attach=tracefs --follow \
		-c "cat $h" 'usdt:*:nope:nope'
	g=$(group_of "$PC_TRACE_PID")
	run -0 entries "$g"
	assert_output --regexp "^p:$g/p_[0-9a-f]+_[0-9a-f]+_[0-9a-f]+ /proc/[0-9]+/root$ld:0x[0-9a-f]+\$"
	name=$(entries "$g" | awk '{ print substr($1, 3) }')
	[[ -n $name ]] || fail "no entry of group $g"
	rec=$(record_of "$PC_TRACE_PID")
	run -0 cat "$rec"
	assert_line "tracefs $name"
	echo >"$h"
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	run -0 entries "$g"
	assert_output ""
	[[ ! -e $rec ]] || fail "record '$rec' left after a normal exit"
}
