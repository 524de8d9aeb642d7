#!/usr/bin/env bats
# sharing.bats — consumers sharing one probe site.
#
# A uprobe site is one breakpoint in the process however many consumers
# hold it: tracers attaching and detaching in turn (dtrace-utils'
# tst.multitrace.sh), and a debugger's own breakpoint on the same
# instruction (rr-debugger/rr#2364, bpftrace#4021).  Each consumer must see
# exactly the hits of the time it was attached, the semaphore must count
# while any holds the site, and the instruction must be the file's again
# when all have gone.
#
# A debugger and a uprobe on one instruction do not share it (L4 in
# ci/kernel-issues): the kernel takes the trap for its uprobe and the
# debugger is never told, and whichever leaves first writes back the byte
# it saw when it came (the uprobe: the file's instruction, over the
# debugger's int3; the debugger: the uprobe's int3, which then kills the
# program).  The gdb tests say which of these a kernel does.
# bats file_tags=sharing

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)
declare -a SH_PID SH_TRACER

# seq_oracle ORACLE LO HI: the oracle's fx:sem_a hits whose first argument
# (the sequence number) is in LO..HI.
seq_oracle() {
	local o=$1 lo=$2 hi=$3
	awk -v lo="$lo" -v hi="$hi" 'match($0, /"probe":"fx:sem_a".*"args":\[-?[0-9]+/) {
		n = substr($0, RSTART, RLENGTH); sub(/.*\[/, "", n)
		if (n + 0 >= lo && n + 0 <= hi) print }' "$o"
}

# phase N: the fixture's steps of phase N: wait, the semaphore, two hits
# numbered 2N+1 and 2N+2, ready.
phase() {
	local n=$1
	echo "wait:$(pc_fifo "f$n")" sema:fx:sem_a \
		"fire:fx:sem_a:1:$((2 * n + 1)),7" "fire:fx:sem_a:1:$((2 * n + 2)),7" "ready:$(R "$n")"
}

# go N: release phase N and wait for its end.
go() {
	pc_fifo_write "$BATS_TEST_TMPDIR/f$1" go
	pc_wait_file "$(R "$1")"
}

# sh_attach I TRACER: tracer I (TRACER's adapter) attached to $PID.
sh_attach() {
	PC_TRACER=$2 pc_trace_bg "$BATS_TEST_TMPDIR/t$1.json" --json -p "$PID" "usdt:$FX:fx:sem_a"
	SH_PID[$1]=$PC_TRACE_PID SH_TRACER[$1]=$2
	pc_on_teardown kill_quietly "$PC_TRACE_PID"
}

# sh_detach I: tracer I stopped by SIGINT, exiting 0.
sh_detach() {
	PC_TRACE_PID=${SH_PID[$1]} PC_TRACE_OUT=$BATS_TEST_TMPDIR/t$1.json
	PC_TRACER=${SH_TRACER[$1]} pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
}

# sh_check I LO HI: tracer I saw exactly the hits numbered LO..HI.
sh_check() {
	seq_oracle "$ORACLE" "$2" "$3" >"$BATS_TEST_TMPDIR/o$1"
	PC_TRACER=${SH_TRACER[$1]} assert_oracle "$BATS_TEST_TMPDIR/o$1" "$BATS_TEST_TMPDIR/t$1.json"
}

@test "sharing.staggered-tracers: two probecheck tracers and libbpf's attach and detach in turn on one semaphore site: each sees exactly the hits of its own span, the semaphore counts while any holds it and is 0 after" {
	# libbpf's USDT attach reads each site's spec by bpf_cookie (5.15+).
	requires ref_ctr_offset bpf_cookie
	local -a T v
	local i a s
	FX=$(fx_bin gcc_O2_pie)
	# shellcheck disable=SC2046
	start_fixture "ready:$(R 0)" $(for i in 1 2 3 4 5 6 7; do phase "$i"; done) "wait:$(pc_fifo hold)"
	a=$(sema_addr "$PID" "$FX" fx:sem_a)
	pc_sema_watch "$PID" "$a" 0
	# Phases (hits 2N+1, 2N+2): 1 none; 2 T1; 3 T1 T2; 4 T1 T2 libbpf;
	# 5 T2 libbpf; 6 libbpf; 7 none.
	go 1
	sh_attach 1 ''
	go 2
	sh_attach 2 ''
	go 3
	sh_attach 3 libbpf
	go 4
	sh_detach 1
	go 5
	sh_detach 2
	go 6
	sh_detach 3
	go 7
	# Three readings a phase: its sema step and each hit's is-enabled.
	s=$(sema_seen "$ORACLE" fx:sem_a)
	read -r -a v <<<"$s"
	((${#v[@]} == 21)) || fail "21 semaphore readings wanted (3 a phase): $s"
	for i in "${!v[@]}"; do
		if ((i < 3 || i >= 18)); then
			((v[i] == 0)) || fail "the semaphore read ${v[i]} untraced (phase $((i / 3 + 1))): $s"
		else
			((v[i] >= 1)) || fail "the semaphore read 0 while a tracer held the site (phase $((i / 3 + 1))): $s"
		fi
	done
	sh_check 1 5 10
	sh_check 2 7 12
	sh_check 3 9 14
}

# gdb_script FILE READY: a gdb script: a breakpoint on fx:a1 printing
# "gdb-stop V" (V: the hit's argument) and going on, READY touched once it
# is set; the breakpoint is in the program's memory from the continue on
# (gdb writes it before it resumes the process).
gdb_script() {
	cat >"$1" <<-EOF
	set pagination off
	set confirm off
	break -probe-stap fx:a1
	commands
	silent
	printf "gdb-stop %d\n", \$_probe_arg0
	continue
	end
	shell touch $2
	EOF
}

# gdb_start: gdb attached to $PID with a breakpoint on fx:a1 (GDB_PID,
# output in $GDB_OUT); SIGINT makes it print "gdb-end" and detach.
gdb_start() {
	local s=$BATS_TEST_TMPDIR/share.gdb r=$BATS_TEST_TMPDIR/gdb.ready
	gdb_script "$s" "$r"
	pc_spawn GDB_PID gdb -q -batch -p "$PID" -x "$s" -ex continue \
		-ex 'printf "gdb-end\n"' -ex detach
	GDB_OUT=$BATS_TEST_TMPDIR/spawn.$PC_NSPAWN.out
	pc_wait_file "$r"
	pc_log "gdb attached to $PID (gdb pid $GDB_PID), its breakpoint: $(grep -m1 '^Breakpoint 1 at' "$GDB_OUT")"
}

# gdb_stop: SIGINT; gdb detaches and exits.
gdb_stop() {
	kill -INT "$GDB_PID"
	pc_wait_until "$PC_TIMEOUT" exited "$GDB_PID" || { fail "gdb did not exit after SIGINT"; return 1; }
	grep -q '^gdb-end' "$GDB_OUT" || { fail "gdb did not finish its script: $(tail -n 3 "$GDB_OUT")"; return 1; }
}

# gdb_stops V: how many times gdb stopped at a hit with argument V.
gdb_stops() {
	grep -cx "gdb-stop $1" "$GDB_OUT" || true
}

# site_file_offset ADDR: the offset in $FX of ADDR in $PID.
site_file_offset() {
	local range perm off dev ino path
	while read -r range perm off dev ino path; do
		[[ $path == "$FX" ]] || continue
		if (($1 >= 0x${range%-*} && $1 < 0x${range#*-})); then
			echo $(($1 - 0x${range%-*} + 0x$off))
			return 0
		fi
	done <"/proc/$PID/maps"
	return 1
}

# site_bytes_back: the site's instruction in $PID is the file's again.
site_bytes_back() {
	local addr mem file
	addr=$(sed -n 's/^Breakpoint 1 at \(0x[0-9a-f]*\).*/\1/p' "$GDB_OUT" | head -n 1)
	[[ -n $addr ]] || { fail "no breakpoint address in gdb's output"; return 1; }
	mem=$(pc_peek_bytes "$PID" "$addr" 1) || { fail "cannot read $PID at $addr"; return 1; }
	file=$(site_file_offset "$addr") || { fail "$addr is in no mapping of $FX"; return 1; }
	file=$(od -An -tx1 -j "$file" -N 1 "$FX" | tr -d ' ')
	[[ $mem == "$file" ]] || { SITE_LEFT="the site reads $mem, the file $file"; return 1; }
}

# gdb_share ORDER: gdb and probecheck on fx:a1, ORDER "gdb-first" or
# "tracer-first"; the tracer leaves first.  Phases: 1 both (hits of
# value 1), 2 gdb alone (2), 3 neither (3).
gdb_share() {
	local -a ev=()
	local t=$BATS_TEST_TMPDIR/t.json st=0
	FX=$(fx_bin gcc_O2_pie)
	start_fixture "ready:$(R 0)" "wait:$(pc_fifo f1)" fire:fx:a1:5:1 "ready:$(R 1)" \
		"wait:$(pc_fifo f2)" fire:fx:a1:5:2 "ready:$(R 2)" \
		"wait:$(pc_fifo f3)" fire:fx:a1:5:3 "ready:$(R 3)" "wait:$(pc_fifo hold)"
	[[ $1 == tracer-first ]] || gdb_start
	pc_trace_bg "$t" --json -p "$PID" "usdt:$FX:fx:a1"
	pc_on_teardown kill_quietly "$PC_TRACE_PID"
	[[ $1 != tracer-first ]] || gdb_start
	go 1
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	go 2
	gdb_stop || return 1
	pc_fifo_write "$BATS_TEST_TMPDIR/f3" go
	pc_wait_until "$PC_TIMEOUT" sh -c "[ -e '$(R 3)' ] || ! kill -0 $PID 2>/dev/null" ||
		fail "phase 3 neither ended nor killed the program"
	# The uprobe's events: exactly phase 1's, whatever gdb saw.
	grep '"args":\[1\]' "$ORACLE" >"$BATS_TEST_TMPDIR/o1"
	assert_oracle "$BATS_TEST_TMPDIR/o1" "$t"
	(($(gdb_stops 1) == 5)) || ev+=("gdb stopped $(gdb_stops 1) times at 5 hits while both held the site ($1)")
	(($(gdb_stops 2) == 5)) || ev+=("gdb stopped $(gdb_stops 2) times at 5 hits alone, after the tracer left ($1)")
	if [[ -e $(R 3) ]]; then
		site_bytes_back || ev+=("after both left: $SITE_LEFT ($1)")
		pc_fifo_write "$BATS_TEST_TMPDIR/hold" go
		assert_exit "$PID" 0
	else
		wait "$PID" || st=$?
		ev+=("the program died (status $st$( ((st > 128)) && echo ": signal $((st - 128))")) at its first hit after both left ($1)")
	fi
	((${#ev[@]} == 0)) || pc_kernel_symptom debugger-shared-site "${ev[@]}"
}

@test "sharing.gdb-first: gdb's breakpoint on a USDT site, then probecheck's uprobe: the tracer's events exact; gdb stops at every hit, with and after the tracer; the instruction the file's after both leave, the program alive (L4)" {
	requires cmd:gdb
	gdb_share gdb-first
}

@test "sharing.tracer-first: probecheck's uprobe on a USDT site, then gdb's breakpoint: the tracer's events exact; gdb stops at every hit, with and after the tracer; the instruction the file's after both leave, the program alive (L4)" {
	requires cmd:gdb
	gdb_share tracer-first
}
