#!/usr/bin/env bats
# scenarios.bats — whole-program scenarios at scale, each judged exactly
# against the fixtures' own oracle logs: 8 threads x 1000 hits; 200
# instances of one binary under -a; 100 dlopen/dlclose cycles of a library
# while traced; an exec chain through five binaries, one of them static;
# 50 forked children at once, with and without --follow; two tracers on
# one process, one stopped half-way; a tracer attached to a process inside
# a probe-heavy loop.
#
# Sites are few on purpose: closing a uprobe costs the kernel ~0.1 s per
# site.  Modes that attach system-wide (-a, --follow) trace private copies
# of the fixtures, so nothing outside the test maps what they trace.
# bats file_tags=scenarios

load helpers/common

PC_REQUIRES=(root uprobe_pmu ref_ctr_offset bpf btf)

FXV=${PC_SCENARIO_VARIANT:-gcc_O2_pie}

# attach_opt MODE: OPT = the --attach option for perf | tracefs; SKIPs
# without what the mode needs (so not in a subshell).
attach_opt() {
	# shellcheck disable=SC2046  # a list of capabilities
	requires $(pc_mode_caps "$1")
	OPT=--attach=$1
}

# count_by FILE FIELD [PROBE]: "N VALUE" lines, the number of lines of
# FILE per value of FIELD (pid, tid), for PROBE's lines (default: all
# probe lines), sorted by value.
count_by() {
	pc_jsel -t probe ${3:+-w "probe=$3"} "$2" "$1" |
		sort -n | uniq -c | awk '{ print $1, $2 }'
}

# npids FILE: the number of distinct pids among the probe lines.
npids() {
	count_by "$1" pid | wc -l
}

# tally WORD...: "N WORD" per distinct word, e.g. "400 1".
tally() {
	printf '%s\n' "$@" | sort | uniq -c | awk '{ print $1, $2 }'
}

# release_all FIFO...: one line to each fifo, in one process, bounded.
release_all() {
	timeout "$PC_TIMEOUT" bash -c 'for f; do printf "go\n" >"$f"; done' _ "$@" ||
		{ fail "release_all: a fifo had no reader within ${PC_TIMEOUT}s"; return 1; }
}

# ---------------------------------------------------------------------------
# 8 threads x 1000 hits.

threads_8x1000() {
	local o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json fx
	attach_opt "$1"
	fx=$(fx_bin "$FXV")
	run -0 --separate-stderr pc trace --json "$OPT" \
		-c "$fx --oracle $o threads:8 [ barrier fire:fx:a3:1000 ]" "usdt:$fx:fx:a3"
	printf '%s\n' "$output" >"$t"
	assert_summary 8000
	if pc_tracer_claim accounting; then assert_equal "$PC_DROPPED" 0; fi
	assert_oracle "$o" "$t"
	# Per thread, both sides: 8 threads (not the main one), 1000 each.
	assert_equal "$(count_by "$t" tid | awk '{ print $1 }' | xargs)" \
		"1000 1000 1000 1000 1000 1000 1000 1000"
	assert_equal "$(count_by "$t" tid)" "$(count_by "$o" tid)"
}

@test "scenarios.perf-threads: perf: 8 threads x 1000 hits at once: exact per (pid, tid), 1000 for each thread, none dropped" {
	requires tracer:usdt tracer:usdt_args tracer:cmd
	threads_8x1000 perf
}

@test "scenarios.tracefs-threads: tracefs: 8 threads x 1000 hits at once: exact per (pid, tid), 1000 for each thread, none dropped" {
	pc_probecheck_only "attach mode tracefs"
	threads_8x1000 tracefs
}

# ---------------------------------------------------------------------------
# 100 instances system-wide.

@test "scenarios.all-instances: -a: 100 instances running before the attach and 100 started after: every instance's events exact, every semaphore 1" {
	requires tracer:semaphores tracer:all
	local fx o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json i pid
	local -a pids=() fifos=() later=()
	fx=$(private fx_inst)
	for ((i = 0; i < 100; i++)); do
		fifos+=("$(pc_fifo "go.$i")")
		pc_spawn pid "$fx" --oracle "$o" "ready:$BATS_TEST_TMPDIR/r.$i" \
			"wait:${fifos[i]}" sema:fx:sem_a fire:fx:sem_a:1 "fire:fx:a2:2:$i,-$((i + 1))"
		pids+=("$pid")
	done
	for ((i = 0; i < 100; i++)); do
		pc_wait_file "$BATS_TEST_TMPDIR/r.$i"
	done
	pc_trace_bg "$t" --json -a "usdt:$fx:fx:sem_a" "usdt:$fx:fx:a2"
	release_all "${fifos[@]}"
	for ((i = 100; i < 200; i++)); do
		"$fx" --oracle "$o" sema:fx:sem_a fire:fx:sem_a:1 "fire:fx:a2:2:$i,-$((i + 1))" 3>&- &
		later+=("$!")
	done
	for pid in "${pids[@]}" "${later[@]}"; do
		assert_exit "$pid" 0
	done
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	assert_summary 600 "$t.err"
	assert_oracle "$o" "$t"
	assert_equal "$(npids "$t")" 200
	# Each instance: 1 sem_a and 2 a2 events.
	assert_equal "$(count_by "$t" pid | awk '{ print $1 }' | sort -u | xargs)" 3
	# Counted once per mm: every instance read 1, before and at its fire.
	assert_equal "$(tally $(pc_sema_norm "$(sema_seen "$o" fx:sem_a)"))" "400 $(pc_sema_norm 1)"
}

# ---------------------------------------------------------------------------
# dlopen/dlclose cycles.

# dlopen_cycles ORACLE LIB OTHER: the steps of 100 cycles.  Each cycle
# loads LIB, checks and fires its probes, unloads it, loads OTHER (which
# takes LIB's old place), loads LIB again (now elsewhere), checks and
# fires again, and unloads both: 200 loads of LIB at two alternating
# bases.
dlopen_cycles() {
	echo "loop:100 [ dlopen:$1 libsema:fxlib:sem libfire:fxlib:sem:1 libfire:fxlib:l0:1 dlclose:$1" \
		"dlopen:$2 dlopen:$1 libsema:fxlib:sem libfire:fxlib:sem:1 libfire:fxlib:l0:1 dlclose:$1 dlclose:$2 ]"
}

# check_cycles ORACLE TRACE: 200 loads, each with its semaphore set and
# both probes traced, exactly; the library unmapped at the end.
check_cycles() {
	local o=$1 t=$2 lib=$3
	assert_oracle "$o" "$t"
	assert_equal "$(grep -c '"probe":"fxlib:sem"' "$t")" 200
	assert_equal "$(grep -c '"probe":"fxlib:l0"' "$t")" 200
	assert_equal "$(tally $(pc_sema_norm "$(sema_seen "$o" fxlib:sem)"))" "400 $(pc_sema_norm 1)"
	# The library really went and came back: two bases, 100 loads each.
	assert_equal "$(jq -r --arg l "$lib" 'select(.step == "dlopen" and .path == $l) | .base' "$o" |
		sort | uniq -c | awk '{ print $1 }' | xargs)" "100 100"
}

@test "scenarios.cmd-dlopen-cycles: -c, library named by PATH: 200 dlopens of it in 100 dlopen/dlclose cycles: its semaphore set at every load, every hit traced" {
	requires tracer:usdt_lib tracer:semaphores tracer:cmd
	local fx lib other o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	fx=$(fx_bin "$FXV")
	lib=$(fx_lib "$FXV")
	other=$(fx_lib clang_O0)
	run -0 --separate-stderr pc trace --json \
		-c "$fx --oracle $o $(dlopen_cycles "$lib" "$other")" \
		"usdt:$lib:fxlib:sem" "usdt:$lib:fxlib:l0"
	printf '%s\n' "$output" >"$t"
	assert_summary 400
	check_cycles "$o" "$t" "$lib"
}

@test "scenarios.star-dlopen-cycles: --follow, PATH '*': 200 dlopens in 100 dlopen/dlclose cycles: every load found at the barrier, semaphore set, every hit traced" {
	requires tracer:usdt_lib tracer:semaphores tracer:follow tracer:star tracer:cmd
	local fx lib other o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	fx=$(private fx_cycles)
	lib=$(private fx_lib.so "$(fx_lib "$FXV")")
	other=$(private fx_other.so "$(fx_lib clang_O0)")
	run -0 --separate-stderr pc trace --json --follow \
		-c "$fx --oracle $o $(dlopen_cycles "$lib" "$other")" \
		'usdt:*:fxlib:sem' 'usdt:*:fxlib:l0'
	printf '%s\n' "$output" >"$t"
	# Both libraries have the probes: OTHER is loaded but never fired.
	assert_summary 400
	check_cycles "$o" "$t" "$lib"
	[[ $stderr != *"barriers not taken"* ]] || fail "a barrier was lost: $stderr"
}

# ---------------------------------------------------------------------------
# exec chains.

# exec_chain A B C S D: steps that fire fx:a1 once in A, exec B, C, S, D
# (one fire each), then A again (fires twice); each image with its own
# value.  S is the static build: no dynamic linker runs in it, so only an
# exec-time barrier can find PATH '*' probes in it before it fires.
exec_chain() {
	echo "fire:fx:a1:1:101 exec:$2 [ fire:fx:a1:1:202 exec:$3 [ fire:fx:a1:1:303" \
		"exec:$4 [ fire:fx:a1:1:404 exec:$5 [ fire:fx:a1:1:505" \
		"exec:$1 [ fire:fx:a1:2:606 ] ] ] ] ]"
}

@test "scenarios.star-exec-chain: --follow, PATH '*': an exec chain through five binaries (one static) and back, 6 images: every image's events exact from its first instruction" {
	requires tracer:follow tracer:star tracer:cmd
	local a b c s d o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	a=$(private fx_a)
	b=$(private fx_b "$(fx_bin clang_O2_nopie)")
	c=$(private fx_c "$(fx_bin gcc_O0_pie)")
	s=$(private fx_s "$(fx_bin gcc_O2_static)")
	d=$(private fx_d "$(fx_bin clang_O3_pie)")
	run -0 --separate-stderr pc trace --json --follow \
		-c "$a --oracle $o $(exec_chain "$a" "$b" "$c" "$s" "$d")" 'usdt:*:fx:a1'
	printf '%s\n' "$output" >"$t"
	assert_oracle "$o" "$t"
	assert_summary 7
	assert_equal "$(steps_of "$o" exec path)" "$b $c $s $d $a"
	assert_equal "$(npids "$t")" 1
	[[ $stderr != *"barriers not taken"* ]] || fail "a barrier was lost: $stderr"
}

@test "scenarios.pid-exec-chain: -p with PATH '*', no --follow: the same exec chain, the process started before the tracer: each new image searched at its exec, events exact" {
	requires tracer:star tracer:pid
	local a b c s d pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json go
	a=$(fx_bin "$FXV")
	b=$(fx_bin clang_O2_nopie)
	c=$(fx_bin gcc_O0_pie)
	s=$(fx_bin gcc_O2_static)
	d=$(fx_bin clang_O3_pie)
	go=$(pc_fifo go)
	pc_spawn pid "$a" --oracle "$o" "ready:$BATS_TEST_TMPDIR/r" "wait:$go" \
		$(exec_chain "$a" "$b" "$c" "$s" "$d")
	pc_wait_file "$BATS_TEST_TMPDIR/r"
	pc_trace_bg "$t" --json -p "$pid" 'usdt:*:fx:a1'
	pc_fifo_write "$go" go
	assert_exit "$pid" 0
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	assert_oracle "$o" "$t"
	assert_summary 7 "$t.err"
	[[ $(<"$t.err") != *"barriers not taken"* ]] || fail "a barrier was lost: $(<"$t.err")"
}

@test "scenarios.cmd-exec-chain: -c without --follow, explicit PATHs: the same exec chain is traced in every image (exec keeps the pid and its perf events)" {
	requires tracer:usdt tracer:cmd
	local a b c s d o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	a=$(fx_bin "$FXV")
	b=$(fx_bin clang_O2_nopie)
	c=$(fx_bin gcc_O0_pie)
	s=$(fx_bin gcc_O2_static)
	d=$(fx_bin clang_O3_pie)
	run -0 --separate-stderr pc trace --json \
		-c "$a --oracle $o $(exec_chain "$a" "$b" "$c" "$s" "$d")" \
		"usdt:$a:fx:a1" "usdt:$b:fx:a1" "usdt:$c:fx:a1" "usdt:$s:fx:a1" "usdt:$d:fx:a1"
	printf '%s\n' "$output" >"$t"
	assert_oracle "$o" "$t"
	assert_summary 7
}

# ---------------------------------------------------------------------------
# 50 forked children at once.

# fork50 FX ORACLE: 50 threads fork at once; each child checks and fires
# the semaphore probe and fires fx:a1 twice with its own value.
fork50() {
	echo "$1 --oracle $2 threads:50 [ barrier fork [ sema:fx:sem_a fire:fx:sem_a:1" \
		"fire:fx:a1:2:7 ] ] fire:fx:a1:1:1"
}

@test "scenarios.follow-fork50: --follow: 50 children forked at once: every child's events exact, each under its own pid" {
	requires tracer:follow tracer:cmd
	local fx o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	fx=$(private fx_fork50)
	run -0 --separate-stderr pc trace --json --follow -c "$(fork50 "$fx" "$o")" \
		"usdt:$fx:fx:sem_a" "usdt:$fx:fx:a1"
	printf '%s\n' "$output" >"$t"
	assert_oracle "$o" "$t"
	assert_summary 151
	assert_equal "$(npids "$t")" 51
	assert_equal "$(steps_of "$o" reap exit | tr ' ' '\n' | sort -u | xargs)" 0
	assert_equal "$(tally $(pc_sema_norm "$(sema_seen "$o" fx:sem_a)"))" "100 $(pc_sema_norm 1)"
}

@test "scenarios.fork50-unfollowed: without --follow: 50 children forked at once run into the inherited breakpoints unharmed: none of their events, the parent's exact" {
	requires tracer:usdt tracer:cmd
	local fx pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	fx=$(fx_bin "$FXV")
	run -0 --separate-stderr pc trace --json -c "$(fork50 "$fx" "$o")" \
		"usdt:$fx:fx:sem_a" "usdt:$fx:fx:a1"
	printf '%s\n' "$output" >"$t"
	assert_summary 1
	pid=$(jq -r 'select(.step == "reap") | .pid' "$o" | sort -u)
	only_pids "$o" "$pid" >"$o.parent"
	assert_oracle "$o.parent" "$t"
	# Every child ran to the end and exited 0: 50 x 3 hits, untraced.
	assert_equal "$(steps_of "$o" reap exit | wc -w)" 50
	assert_equal "$(steps_of "$o" reap exit | tr ' ' '\n' | sort -u | xargs)" 0
	assert_equal "$(grep -c '"probe"' "$o")" 151
	# Each child inherited the raised counter (documented in semantics.bats).
	assert_equal "$(tally $(pc_sema_norm "$(sema_seen "$o" fx:sem_a)"))" "100 $(pc_sema_norm 1)"
}

# ---------------------------------------------------------------------------
# Two tracers on one process.

# two_tracers MODE_A MODE_B: A and B trace one process; phase 1 fires,
# A stops, phase 2 fires.  A has phase 1 exactly, B both phases.
two_tracers() {
	local fx pid o=$BATS_TEST_TMPDIR/o.json ta=$BATS_TEST_TMPDIR/a.json
	local tb=$BATS_TEST_TMPDIR/b.json d=$BATS_TEST_TMPDIR a b opt_a opt_b
	attach_opt "$1"
	opt_a=$OPT
	attach_opt "$2"
	opt_b=$OPT
	fx=$(fx_bin "$FXV")
	pc_fifo f1 >/dev/null
	pc_fifo f2 >/dev/null
	pc_fifo f3 >/dev/null
	pc_spawn pid "$fx" --oracle "$o" "ready:$d/r0" "wait:$d/f1" \
		fire:fx:a1:100 sema:fx:sem_a fire:fx:sem_a:2 note:phase2 \
		"ready:$d/r1" "wait:$d/f2" fire:fx:a1:100 sema:fx:sem_a fire:fx:sem_a:2 \
		"ready:$d/r2" "wait:$d/f3" sema:fx:sem_a
	pc_wait_file "$d/r0"
	pc_trace_bg "$ta" --json "$opt_a" -p "$pid" "usdt:$fx:fx:a1" "usdt:$fx:fx:sem_a"
	a=$PC_TRACE_PID
	pc_trace_bg "$tb" --json "$opt_b" -p "$pid" "usdt:$fx:fx:a1" "usdt:$fx:fx:sem_a"
	b=$PC_TRACE_PID
	pc_on_teardown kill_quietly "$a"
	pc_fifo_write "$d/f1" go
	pc_wait_file "$d/r1"
	# Stop A (pc_trace_stop works on PC_TRACE_PID/OUT).
	PC_TRACE_PID=$a PC_TRACE_OUT=$ta
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	PC_TRACE_PID=$b PC_TRACE_OUT=$tb
	pc_fifo_write "$d/f2" go
	pc_wait_file "$d/r2"
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	pc_fifo_write "$d/f3" go
	assert_exit "$pid" 0
	awk '/"note":"phase2"/ { exit } { print }' "$o" >"$o.phase1"
	assert_oracle "$o.phase1" "$ta"
	assert_summary 102 "$ta.err"
	assert_oracle "$o" "$tb"
	assert_summary 204 "$tb.err"
	# Per mm, not per tracer: 1 with both, 1 with B alone, 0 after.
	assert_sema "$(sema_seen "$o" fx:sem_a)" "1 1 1 1 1 1 0"
}

@test "scenarios.two-tracers-perf: perf + perf: two tracers on one process both get every event exactly; one stops, the other continues exact" {
	requires tracer:semaphores tracer:pid
	two_tracers perf perf
}

@test "scenarios.two-tracers-tracefs: perf + tracefs: two tracers of either attach mode on one process both exact; the tracefs one continues after the perf one stops" {
	pc_probecheck_only "attach mode tracefs"
	two_tracers perf tracefs
}

# ---------------------------------------------------------------------------
# Attaching to a process inside a probe-heavy loop.

# spin MODE: fx_spin fires fxs:hit (seq 0, 1, ...) in a loop that never
# blocks; the tracer attaches with -p mid-loop.  After its ready file we
# send SIGUSR1: the loop fires fxs:marker(M = the next seq), then 2000
# more hits, up to L = M + 1999, and exits.  The BPF program counts every
# hit it sees (hits = delivered + dropped), so it saw exactly the hits
# from S0 = L - (hits - 1) + 1 on (the marker is one of them).  Then:
#   - every reported event is the oracle's (pid, tid, args), none twice;
#   - nothing reported from before S0, and S0 >= 1000 (the tracer started
#     after the 1000th hit);
#   - every hit from the marker on is reported, and the marker;
#   - with no drops (the fixture paces itself so that there are none
#     normally): exactly every hit from S0 on, without a gap.
spin() {
	local fx pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	local r=$BATS_TEST_TMPDIR/spin.ready s m last s0 n
	attach_opt "$1"
	fx=$(fx_bin spin)
	pc_spawn pid "$fx" --oracle "$o" "$r" 1000 2000
	pc_wait_file "$r"
	pc_trace_bg "$t" --json "$OPT" -p "$pid" "usdt:$fx:fxs:hit" "usdt:$fx:fxs:marker"
	kill -USR1 "$pid"
	assert_exit "$pid" 0
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	n=$(grep -c '"probe"' "$t" || true)
	assert_summary "$(awk '/^probecheck: summary:/ { sub(/.*hits=/, ""); print }' "$t.err")" "$t.err"
	assert_equal "$PC_DELIVERED" "$n"
	m=$(jq -r 'select(.probe == "fxs:marker") | .args[0]' "$o")
	last=$(jq -r 'select(.probe == "fxs:hit") | .args[0]' "$o" | tail -1)
	s=$(jq -r 'select(.probe == "fxs:hit") | .args[0]' "$t" | sort -n | head -1)
	s0=$((last - (PC_HITS - 1) + 1))
	pc_log "spin: BPF saw seq $s0.., first reported $s, marker $m, last $last, dropped $PC_DROPPED"
	[[ -n $m && -n $s ]] || { fail "spin: no marker fired ($m) or no hit reported ($s)"; return 1; }
	((last == m + 1999)) || { fail "spin: last hit $last, expected $((m + 1999))"; return 1; }
	((s0 >= 1000)) || { fail "spin: the tracer counted hits from seq $s0, before it started"; return 1; }
	((s >= s0)) || { fail "spin: seq $s reported, before the first hit counted ($s0)"; return 1; }
	# The reported events, each once, as the oracle has them.
	jq -r 'select(.probe == "fxs:hit") | .args[0]' "$t" >"$t.seqs"
	awk 'NR == FNR { want[$1] = 1; next }
		/"probe":"fxs:marker"/ { print; next }
		/"probe":"fxs:hit"/ && match($0, /"args":\[[0-9]+\]/) {
			if (substr($0, RSTART + 8, RLENGTH - 9) in want) print
		}' "$t.seqs" "$o" >"$o.reported"
	assert_oracle "$o.reported" "$t"
	# Everything from the marker on: 2000 distinct seqs >= M, all <= L.
	assert_equal "$(grep -c '"probe":"fxs:marker"' "$t")" 1
	assert_equal "$(awk -v m="$m" '$1 >= m' "$t.seqs" | wc -l)" 2000
	if ((PC_DROPPED == 0)); then
		jq -c --argjson s "$s0" 'select(.probe == "fxs:marker" or (.probe == "fxs:hit" and .args[0] >= $s))' "$o" >"$o.suffix"
		assert_oracle "$o.suffix" "$t"
	fi
}

@test "scenarios.perf-mid-loop: perf -p attached mid-loop: every event the oracle's, none from before the attach, all from the marker on; without drops every hit from one on" {
	requires tracer:pid tracer:accounting
	spin perf
}

@test "scenarios.tracefs-mid-loop: tracefs -p attached mid-loop: every event the oracle's, none from before the attach, all from the marker on; without drops every hit from one on" {
	pc_probecheck_only "attach mode tracefs"
	spin tracefs
}
