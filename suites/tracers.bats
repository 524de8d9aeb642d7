#!/usr/bin/env bats
# tracers.bats — what every tracer under test owes the machine, and the
# adapter interface itself (harness/tracers/README.md).
#
# Run directly (make check) these judge probecheck; under `make
# conformance` the tracer of PC_TRACER.  Cleanup is checked as for every
# test (teardown: no uprobe, BPF object, int3, raised semaphore, process
# or stash record left), here also after SIGKILL of the tracer's whole
# process group, with the traced process alive to be inspected.  The last
# test plants bugs in an adapter and runs a real suite against it: the
# suites must catch a tracer that drops an event, shifts an argument or
# misreports a pid.
# bats file_tags=tracers

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf)

FXV=${PC_TRACERS_VARIANT:-gcc_O2_pie}
CLAIMS=(usdt usdt_args usdt_lib strings semaphores cmd pid follow all
	func_entry func_return func_offset list accounting star ustack live)

# start_waiting STEPS...: spawn the fixture with its oracle in $O, first
# writing ready file R0, then blocking on fifo $F (setup_file_fx made it)
# until released; PID.
start_waiting() {
	O=$BATS_TEST_TMPDIR/o.json
	pc_spawn PID "$FX" --oracle "$O" "ready:$BATS_TEST_TMPDIR/r0" "wait:$F" "$@"
	pc_wait_file "$BATS_TEST_TMPDIR/r0"
}

setup_file_fx() {
	FX=$(fx_bin "$FXV")
	F=$(pc_fifo go)
}

# installed ADAPTER: succeed if the tracer behind the adapter is here (a
# guest image has none of bpftrace, perf, python3).
installed() {
	case ${1##*/} in
	probecheck) [[ -x $PC_BIN ]] ;;
	libbpf) [[ -x $PC_TOOLS/pc-libbpf-usdt ]] ;;
	bcc) /usr/bin/python3 -c 'import bcc' 2>/dev/null ;;	# the adapter's python
	*) command -v "${1##*/}" >/dev/null ;;
	esac
}

# adapters VAR: VAR gets the adapters to ask, every executable of
# harness/tracers/ whose tracer is installed here; under make conformance
# the tracer under test only, and it must be installed.
adapters() {
	local -n _ad=$1
	local a
	_ad=()
	for a in "$PROBECHECK_ROOT"/harness/tracers/*; do
		[[ -f $a && -x $a ]] || continue
		[[ -z $PC_TRACER || ${a##*/} == "$PC_TRACER" ]] || continue
		if ! installed "$a"; then
			[[ -z $PC_TRACER ]] || { fail "${a##*/}: the tracer is not installed"; return 1; }
			pc_log "${a##*/}: not installed here, not asked"
			continue
		fi
		_ad+=("$a")
	done
}

@test "tracers.claims-version: every adapter lists every claim once, yes or no with a reason, and a version" {
	local a c n
	local -a as
	adapters as
	for a in "${as[@]}"; do
		run -0 "$a" claims
		for c in "${CLAIMS[@]}"; do
			n=$(grep -cE "^$c (yes|no .+)$" <<<"$output" || true)
			[[ $n == 1 ]] || fail "${a##*/}: claim '$c' listed $n times as 'yes' or 'no REASON': $output"
		done
		n=$(wc -l <<<"$output")
		[[ $n == "${#CLAIMS[@]}" ]] || fail "${a##*/}: $n claim lines, expected ${#CLAIMS[@]}: $output"
		run -0 "$a" version
		[[ -n $output ]] || fail "${a##*/}: no version"
	done
}

@test "tracers.simple-command: the -c rule: every adapter gives suites/data/simple-command.tsv's verdict on each of its commands" {
	local a line v c w rest cmd got n=0
	local -a as bad=()
	adapters as
	for a in "${as[@]}"; do
		while IFS= read -r line; do
			[[ -z $line || $line == \#* ]] && continue
			# VERDICT<TAB>CMD<TAB>WHY; CMD may be empty, CMD in printf %b.
			v=${line%%$'\t'*} rest=${line#*$'\t'}
			c=${rest%%$'\t'*} w=${rest#*$'\t'}
			cmd=$(printf '%b' "$c")
			got=$("$a" simple-command "$cmd" 2>&1) || got="exit $?: $got"
			n=$((n + 1))
			[[ $got == "$v" ]] || bad+=("${a##*/}: '$c': $got, expected $v ($w)")
		done <"$PROBECHECK_ROOT/suites/data/simple-command.tsv"
	done
	pc_log "$n verdicts asked"
	((n > 0)) || fail "no adapter asked, or no case in suites/data/simple-command.tsv"
	if ((${#bad[@]})); then
		printf '%s\n' "${bad[@]}" | batslib_decorate "verdicts that differ from suites/data/simple-command.tsv" | fail
	fi
}

@test "tracers.sigint-clean: SIGINT: the tracer (-p, a probe with a semaphore) prints every event and leaves nothing" {
	requires tracer:pid tracer:semaphores
	setup_file_fx
	start_waiting fire:fx:sem_a:3 fire:fx:a2:2 "ready:$BATS_TEST_TMPDIR/r1" "wait:$F" \
		sema:fx:sem_a fire:fx:sem_a:1 "ready:$BATS_TEST_TMPDIR/r2" "wait:$F"
	pc_trace_bg "$BATS_TEST_TMPDIR/t.json" --json -p "$PID" "usdt:$FX:fx:sem_a" "usdt:$FX:fx:a2"
	pc_fifo_write "$F" go
	pc_wait_file "$BATS_TEST_TMPDIR/r1"
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	assert_oracle "$O" "$BATS_TEST_TMPDIR/t.json"
	# Detached, the fixture fires again untraced with its semaphore 0;
	# teardown finds its sites as in the file while it waits.
	pc_fifo_write "$F" go
	pc_wait_file "$BATS_TEST_TMPDIR/r2"
	run -0 jq -rs '[.[] | select(.sema == "fx:sem_a")] | last | .value' "$O"
	assert_output 0
}

@test "tracers.sigkill-usdt: SIGKILL of the tracer's process group (-p, USDT with a semaphore): nothing left, the process runs on unharmed" {
	requires tracer:pid tracer:semaphores
	setup_file_fx
	start_waiting fire:fx:sem_a:2 "ready:$BATS_TEST_TMPDIR/r1" "wait:$F" \
		sema:fx:sem_a fire:fx:sem_a:2 fire:fx:a2:1 "ready:$BATS_TEST_TMPDIR/r2" "wait:$F"
	pc_trace_bg "$BATS_TEST_TMPDIR/t.json" --json -p "$PID" "usdt:$FX:fx:sem_a" "usdt:$FX:fx:a2"
	pc_fifo_write "$F" go
	pc_wait_file "$BATS_TEST_TMPDIR/r1"
	pc_trace_stop KILL
	# Nothing of the tracer may outlive it, while its process still runs.
	pc_wait_until 10 pc_check_clean_quiet	# the kernel frees BPF objects late
	pc_check_clean
	pc_fifo_write "$F" go
	pc_wait_file "$BATS_TEST_TMPDIR/r2"
	run -0 jq -rs '[.[] | select(.sema == "fx:sem_a")] | last | .value' "$O"
	assert_output 0
}

@test "tracers.sigkill-func: SIGKILL of the tracer's process group (-p, function entry and return): no int3 left, the process runs on unharmed" {
	requires tracer:pid tracer:func_entry tracer:func_return
	local fx=$PC_FIXTURES/fx_pidfn_O2_pie o=$BATS_TEST_TMPDIR/o.json f
	f=$(pc_fifo go)
	pc_spawn PID "$fx" --oracle "$o" "ready:$BATS_TEST_TMPDIR/r0" "wait:$f" neg:2 \
		"ready:$BATS_TEST_TMPDIR/r1" "wait:$f" neg:3 "ready:$BATS_TEST_TMPDIR/r2" "wait:$f"
	pc_wait_file "$BATS_TEST_TMPDIR/r0"
	pc_trace_bg "$BATS_TEST_TMPDIR/t.json" --json --args 1 -p "$PID" \
		"pid:$fx:pf_neg:entry" "pid:$fx:pf_neg:return"
	pc_fifo_write "$f" go
	pc_wait_file "$BATS_TEST_TMPDIR/r1"
	pc_trace_stop KILL
	pc_wait_until 10 pc_check_clean_quiet	# the kernel frees BPF objects late
	pc_check_clean
	pc_fifo_write "$f" go
	pc_wait_file "$BATS_TEST_TMPDIR/r2"
	# The 3 calls after the kill returned what they return untraced.
	run -0 grep -c '"probe":"pf_neg:return"' "$o"
	assert_output 5
}

@test "tracers.cmd-ends: -c: the tracer ends by itself when the command exits, with every event, and leaves nothing" {
	requires tracer:cmd tracer:usdt
	setup_file_fx
	local o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	run -0 --separate-stderr pc_bounded trace --json -c "$FX --oracle $o fire:fx:a1:4 fire:fx:a0:1" \
		"usdt:$FX:fx:a1" "usdt:$FX:fx:a0"
	printf '%s\n' "$output" >"$t"
	assert_oracle "$o" "$t"
	pc_check_clean
}

# planted NAME PLANT: an adapter NAME in $BATS_TEST_TMPDIR/tracers that is
# the probecheck adapter with one bug planted in what it prints.
planted() {
	local d=$BATS_TEST_TMPDIR/tracers
	mkdir -p "$d"
	cat >"$d/$1" <<-EOF
		#!/bin/bash
		real=$PROBECHECK_ROOT/harness/tracers/probecheck
		[[ \$1 == trace ]] || exec "\$real" "\$@"
		"\$real" "\$@" | $2
		exit \${PIPESTATUS[0]}
	EOF
	chmod +x "$d/$1"
}

# conform NAME FILTER: the real suite arguments.bats, tests matching
# FILTER (bats --filter, a regex over the name: here its ID), against
# adapter NAME; TAP in $output.
conform() {
	env $(compgen -e | grep -E '^(BATS_|PC_TRACER)' | sed 's/^/-u /') \
		PC_TRACER="$1" PC_TRACERS_DIR="$BATS_TEST_TMPDIR/tracers" PC_REPRO_DIR= \
		PC_RUN_TAG="$PC_TAG/nested" PC_GRACE=1 \
		bats --tap --filter "$2" "$PROBECHECK_ROOT/suites/arguments.bats" 2>&1
}

@test "tracers.planted-bugs: planted adapter bugs are caught by the suites: an event dropped, an argument shifted, a pid misreported" {
	pc_probecheck_only "a self-check of the harness with planted adapters"
	planted faithful cat
	planted drop "sed 1d"
	planted shift "sed -E 's/\"args\":\\[([^],]+),([^],]+)/\"args\":[\\2,\\1/'"
	planted pid "sed -E 's/\"pid\":([0-9]+)/\"pid\":\\11/'"
	run -0 conform faithful '^arguments\.extreme-values: '
	assert_line --regexp '^ok 1 arguments\.extreme-values: extreme values'
	run -1 conform drop '^arguments\.extreme-values: '
	assert_line --regexp '^not ok 1 arguments\.extreme-values: extreme values'
	assert_output --regexp 'missing \(x1\): \{"probe":"fx:ints"'
	run -1 conform shift '^arguments\.extreme-values: '
	assert_line --regexp '^not ok 1 arguments\.extreme-values: extreme values'
	assert_output --regexp 'unexpected \(x1\): \{"probe":"fx:ints".*"args":\[255,-1,'
	run -1 conform pid '^arguments\.no-args: '
	assert_line --regexp '^not ok 1 arguments\.no-args: a probe with no arguments'
	assert_output --partial 'unexpected (x7)'
}
