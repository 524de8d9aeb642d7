#!/usr/bin/env bats
# untouched.bats — string and buffer arguments in memory the program has
# not touched: read exactly, or refused out loud.
#
# A uprobe's BPF program cannot take a page fault: bpf_probe_read_user*
# fails (EFAULT) on a page without a page-table entry even when its bytes
# are in the page cache (bpftrace#1503, #2523; bcc#3898).  The contract
# (docs/cli.md): an argument is its exact bytes, or {"unreadable":"EFAULT"}
# counted in the summary, or — a string over 255 bytes — {"truncated":..};
# never an empty or cut string that reads as data.  With --sleepable the
# site programs fault the pages in and every argument is its bytes.
#
# fixtures/fx_untouched.c passes each case as USDT fxut:str / fxut:buf and
# as the first argument of fxut_fire_str / fxut_fire_buf (pid probes), and
# logs what it passed after the hit, with, from /proc/self/pagemap,
# whether each page the argument reaches had a PTE at the hit; with
# --nofault it logs the marker where one did not.  The comparison is
# oraclecmp's, event for event.
# bats file_tags=untouched

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)

FXU=$PC_FIXTURES/fx_untouched
UT_STR_CASES="untouched dontneed pageout cross rodata limit past null"
UT_BUF_CASES="buf bufcross"
# Cases made to have no PTE at the hit: a fixture that failed to make
# them so would test nothing (pageout: where the kernel reclaims).
UT_ABSENT="untouched dontneed cross rodata bufcross"

# ut_run OUT FIXTURE-FLAG TRACE-ARGS...: the fixture under the tracer, every
# case, USDT and pid probes; OUT.o the oracle, OUT the trace.
ut_run() {
	local t=$1 flag=$2
	shift 2
	requires "file:$FXU" tracer:strings tracer:cmd
	# One fixture run for the strings, one for the buffers: an argument
	# is --str or --buf, not both.
	trace_json "$t.s" "$@" --str 0 --args 2 \
		-c "$FXU $t.o.s $BATS_TEST_TMPDIR $flag $UT_STR_CASES" \
		"usdt:$FXU:fxut:str" "pid:$FXU:fxut_fire_str:entry" || return 1
	assert_oracle "$t.o.s" "$t.s" --only 'fxut*str*' || return 1
	assert_summary "$(grep -c '"probe"' "$t.o.s")" "$t.s.err" || return 1
	trace_json "$t.b" "$@" --buf 0,64 --args 3 \
		-c "$FXU $t.o.b $BATS_TEST_TMPDIR $flag $UT_BUF_CASES" \
		"usdt:$FXU:fxut:buf" "pid:$FXU:fxut_fire_buf:entry" || return 1
	assert_oracle "$t.o.b" "$t.b" --only 'fxut*buf*' || return 1
	assert_summary "$(grep -c '"probe"' "$t.o.b")" "$t.b.err" || return 1
	cat "$t.o.s" "$t.o.b" >"$t.o"
}

# ut_present ORACLE CASE: the fixture's page-table reading at CASE's hit.
ut_present() {
	jq -r --arg c "$2" 'select(.step == "case" and .case == $c) | .present' "$1" | sort -u
}

# ut_absent_checked ORACLE: the cases meant to have no PTE that ran had
# none (else the run tested nothing); pageout is said, either way.
ut_absent_checked() {
	local c p
	for c in $UT_ABSENT; do
		p=$(ut_present "$1" "$c")
		[[ -n $p ]] || continue         # not run here
		[[ $p == 0 ]] || { fail "fixture: case $c had a PTE at the hit ($p): nothing tested"; return 1; }
	done
	p=$(ut_present "$1" pageout)
	pc_log "pageout: present=${p:-not run ($(jq -r 'select(.step == "skip") | .why' "$1"))}"
}

# ut_cases ORACLE TRACE: "CASE=OUTCOME ..." for every case the fixture ran,
# from its USDT event (the site and case number the fixture logged):
#   exact       the bytes the program passed
#   cut         a string over 255 bytes as {"truncated":<its first 255>}
#   EFAULT ...  the unreadable marker, with its errno
#   silent      "" where the program passed bytes (or NULL)
#   null        null where it passed bytes: not data, but no reason in
#               the event (pc-libbpf-usdt says why on stderr only)
#   silent-cut  a plain string shorter than what was passed, a prefix of it
#   wrong       anything else;  lost: no event
# The table's cells (RESULTS.md, "Untouched memory"); a tracer that gives
# neither the bytes nor a marker fails untouched.any-tracer.
ut_cases() {
	jq -rn --slurpfile o "$1" --slurpfile t "$2" '
	  [$o[] | select(.step == "case")] | map(. as $c |
	    ([$t[] | select(.probe == $c.site and .args[-1] == $c.no)] | first) as $e |
	    ($e.args[0]) as $a |
	    "\($c.case)=" + (
	      if $e == null then "lost"
	      elif ($a | type) == "object" and ($a | has("unreadable")) then $a.unreadable
	      elif $c.cut == 1 and $a == {"truncated": $c.bytes} then "cut"
	      elif $c.cut == 0 and $a == $c.bytes then "exact"
	      elif $a == null and $c.bytes != null then "null"
	      elif $a == "" and $a != $c.bytes then "silent"
	      elif ($a | type) == "string" and ($c.bytes | type) == "string" and
	           ($a | length) < ($c.bytes | length) + $c.cut and
	           ($c.bytes | startswith($a)) then "silent-cut"
	      else "wrong" end)) | join(" ")'
}

# ut_report ID PATH MODE ORACLE TRACE: the cases as a line on fd 3, the
# report's input: "# ID cases PATH MODE: CASE=OUTCOME ...".
ut_report() {
	local cases
	cases=$(ut_cases "$4" "$5") || { fail "ut_cases: cannot classify $5"; return 1; }
	echo "# $1 cases $2 $3: $cases" >&3
	pc_log "cases $2 $3: $cases"
	UT_CASES=$cases
}

# ut_markers TRACE: "unreadable=N truncated=M" as the trace's lines show
# them, to hold against the summary's counts.
ut_markers() {
	printf 'unreadable=%s truncated=%s' \
		"$(grep -o '{"unreadable":"[A-Z]*"}' "$1" | wc -l)" \
		"$(grep -o '{"truncated":' "$1" | wc -l)"
}

@test "untouched.nofault-marker: without --sleepable, every argument in a page without a PTE is {\"unreadable\":\"EFAULT\"}, every other one its exact bytes; the summary counts them (each attach mode)" {
	pc_probecheck_only "the unreadable marker (other tracers: untouched.other-tracer)"
	local t=$BATS_TEST_TMPDIR/t mode n=0 kind
	for mode in perf tracefs multi; do
		requires_quietly $(pc_mode_caps "$mode") || { pc_log "$mode: not on this kernel"; continue; }
		ut_run "$t.$mode" --nofault --attach="$mode"
		ut_absent_checked "$t.$mode.o"
		ut_report untouched.nofault-marker nofault "$mode" "$t.$mode.o" <(cat "$t.$mode.s" "$t.$mode.b")
		for kind in s b; do
			grep -q " $(ut_markers "$t.$mode.$kind")\$" "$t.$mode.$kind.err" ||
				fail "$mode: summary $(grep summary: "$t.$mode.$kind.err") is not $(ut_markers "$t.$mode.$kind")"
		done
		# Where the fixture said "no PTE", the marker, on both probes:
		# 5 absent string cases (pageout too where reclaimed) x 2.
		(($(grep -c '{"unreadable":"EFAULT"}' "$t.$mode.s") >= 8)) ||
			fail "$mode: fewer markers than absent cases: $(cat "$t.$mode.s")"
		n=$((n + 1))
	done
	((n > 0)) || skip "no attach mode of perf, tracefs, multi on this kernel"
}

@test "untouched.sleepable-exact: --sleepable: every argument is its exact bytes, in pages without a PTE too (each attach mode), nothing unreadable" {
	pc_probecheck_only "--sleepable"
	requires sleepable_uprobe
	local t=$BATS_TEST_TMPDIR/t mode n=0
	for mode in perf tracefs multi; do
		requires_quietly $(pc_mode_caps "$mode") || { pc_log "$mode: not on this kernel"; continue; }
		ut_run "$t.$mode" "" --sleepable --attach="$mode"
		ut_absent_checked "$t.$mode.o"
		ut_report untouched.sleepable-exact sleepable "$mode" "$t.$mode.o" <(cat "$t.$mode.s" "$t.$mode.b")
		grep -q ' unreadable=0 truncated=2$' "$t.$mode.s.err" ||
			fail "$mode: $(grep summary: "$t.$mode.s.err")"
		grep -q ' unreadable=0 truncated=0$' "$t.$mode.b.err" ||
			fail "$mode: $(grep summary: "$t.$mode.b.err")"
		n=$((n + 1))
	done
	((n > 0)) || skip "no attach mode of perf, tracefs, multi on this kernel"
}

@test "untouched.any-tracer: the tracer's default path (any tracer): each string in untouched memory is its bytes or an error said in the event, never an empty or cut string that reads as data" {
	requires "file:$FXU" tracer:strings tracer:cmd
	local t=$BATS_TEST_TMPDIR/t o=$BATS_TEST_TMPDIR/o c bad=()
	trace_json "$t" --str 0 -c "$FXU $o $BATS_TEST_TMPDIR $UT_STR_CASES" "usdt:$FXU:fxut:str"
	assert_summary "$(grep -c '"probe":"fxut:str"' "$o")" "$t.err"
	ut_absent_checked "$o"
	ut_report untouched.any-tracer default "$(pc_tracer)" "$o" "$t"
	for c in $UT_CASES; do
		[[ ${c#*=} =~ ^(exact|cut|E[A-Z0-9]+)$ ]] || bad+=("$c")
	done
	((${#bad[@]} == 0)) || fail "neither the bytes nor a marker: ${bad[*]} (reproducer: $FXU ORACLE DIR ${UT_STR_CASES}; the fixture's oracle: $(grep '"step":"case"' "$o" | head -n 3))"
}

@test "untouched.sleepable-refused: --sleepable where sleepable programs do not load: exit 1 (as --attach=MODE the kernel lacks), the reason named, nothing attached or run" {
	pc_probecheck_only "--sleepable"
	requires bpf
	local -a PC_WRAP
	local o=$BATS_TEST_TMPDIR/o.json
	# Every program load refused, as a kernel without sleepable uprobes
	# refuses this one (5.10: "Only fentry/fexit/fmod_ret and lsm
	# programs can be sleepable").
	PC_WRAP=("$PC_TOOLS/pc-deny" bpf:PROG_LOAD --)
	run -1 --separate-stderr pc trace --sleepable --str 0 -c "$FXU $o $BATS_TEST_TMPDIR limit" "usdt:$FXU:fxut:str"
	assert_output ''
	[[ $stderr == "probecheck: --sleepable: this kernel cannot run sleepable uprobe programs: a sleepable kprobe-type program calling bpf_copy_from_user did not load (Invalid argument; Linux 5.19+)" ]] ||
		fail "not refused with the reason, alone: $stderr"
	[[ ! -e $o ]] || fail "the command ran: $(cat "$o")"
}

@test "untouched.sleepable-absent: on a kernel without sleepable uprobes, --sleepable is refused with the kernel's reason (exit 1)" {
	pc_probecheck_only "--sleepable"
	requires bpf
	pc_cap sleepable_uprobe && skip "this kernel runs sleepable uprobes (untouched.sleepable-exact)"
	local o=$BATS_TEST_TMPDIR/o.json
	run -1 --separate-stderr pc trace --sleepable --str 0 -c "$FXU $o $BATS_TEST_TMPDIR limit" "usdt:$FXU:fxut:str"
	[[ $stderr == "probecheck: --sleepable: this kernel cannot run sleepable uprobe programs: a sleepable kprobe-type program calling bpf_copy_from_user did not load ("*"; Linux 5.19+)" ]] ||
		fail "not refused with the reason, alone: $stderr"
	[[ ! -e $o ]] || fail "the command ran: $(cat "$o")"
}

@test "untouched.buf-lengths: --buf with the shortest and the longest LEN (1 and 256) over bytes the program has touched: exactly those bytes" {
	pc_probecheck_only "--buf"
	requires "file:$FXU" tracer:cmd
	local t=$BATS_TEST_TMPDIR/t len k want got logged
	# fx_untouched's buf case: 32 bytes before a page end of a two-page
	# buffer whose byte i is i * 7 + 3 (fx_untouched.c case_buf).
	for len in 1 256; do
		want=''
		for ((k = 0; k < len; k++)); do
			want+=$(printf '%02x' $((((4096 - 32 + k) * 7 + 3) & 255)))
		done
		trace_json "$t.$len" --buf "0,$len" -c "$FXU $t.o.$len $BATS_TEST_TMPDIR buf" "usdt:$FXU:fxut:buf"
		assert_summary 1 "$t.$len.err"
		got=$(jq -r 'select(.probe == "fxut:buf") | .args[0]' "$t.$len")
		logged=$(jq -r 'select(.step == "case") | .bytes' "$t.o.$len")
		# The pattern is the fixture's: its own 64 logged bytes agree.
		[[ $logged == "${want:0:128}"* || $len == 1 ]] || fail "the pattern is not the fixture's: $logged"
		[[ $got == "$want" ]] || fail "--buf 0,$len: got $got, want $want"
	done
}

@test "untouched.bad-buf: --buf values that are not N,LEN (N 0..11, LEN 1..256), or an argument both --str and --buf: exit 2 naming the value, nothing run" {
	local o=$BATS_TEST_TMPDIR/o.json bad
	pc_probecheck_only "--buf's messages"
	for bad in "--buf 0" "--buf 0,0" "--buf 0,257" "--buf 12,4" "--buf -1,4" "--buf x,4" "--buf 0,4x" "--buf 0,"; do
		# shellcheck disable=SC2086  # option and value, split on purpose
		run -2 pc trace $bad -c "$FXU $o $BATS_TEST_TMPDIR buf" "usdt:$FXU:fxut:buf"
		assert_output --regexp "^probecheck: --buf '${bad#--buf }': (not N,LEN with N an argument index 0..11|LEN not a number of bytes 1..256)"
	done
	run -2 pc trace --str 1,0 --buf 0,4 -c "$FXU $o $BATS_TEST_TMPDIR buf" "usdt:$FXU:fxut:buf"
	assert_output --partial "probecheck: trace: an argument is either --str or --buf, not both (argument 0)"
	[[ ! -e $o ]] || fail "the command ran: $(cat "$o")"
}

@test "untouched.checker-catches-silent: the checks fail on a trace whose markers were turned into data (\"\" for unreadable, the bare 255 bytes for a cut string)" {
	pc_probecheck_only "a planted break of probecheck's own trace"
	local t=$BATS_TEST_TMPDIR/t
	ut_run "$t" --nofault
	# Planted: the marker dropped, the error turned into an empty string;
	# the cut string's mark dropped.
	sed -e 's/{"unreadable":"EFAULT"}/""/' -e 's/{"truncated":\("[a-z]*"\)}/\1/' "$t.s" >"$t.bad"
	run -1 "$PC_TOOLS/oraclecmp" --only 'fxut*str*' "$t.o.s" "$t.bad"
	assert_output --partial 'unexpected (x1): {"probe":"fxut:str"'
	ut_report untouched.checker-catches-silent planted planted "$t.o.s" "$t.bad" 3>/dev/null
	[[ " $UT_CASES " == *" untouched=silent "* && " $UT_CASES " == *" past=silent-cut "* ]] ||
		fail "the per-case table did not call them silent: $UT_CASES"
}
