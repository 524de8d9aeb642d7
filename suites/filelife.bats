#!/usr/bin/env bats
# filelife.bats — the traced file's life: replaced by rename, unlinked
# while it runs, a program run from a memfd, and the file's bytes.
#
# A uprobe belongs to an inode (libbpf#528, bcc#2640): a path names the
# file it named at attach.  A process running a file since replaced or
# deleted maps an inode no path names ("F (deleted)" in its maps), as does
# one run from a memfd; probecheck opens those through
# /proc/PID/map_files/START-END (PATH '*' with -p), or the user names
# /proc/PID/exe.  The int3 a uprobe writes goes into the traced process's
# own copy of the page: never into the page cache, so the file on disk and
# every other mapping of it keep the original bytes, also after the tracer
# is SIGKILLed (fixtures/fx_filelife.c maps the file as a reader and as a
# second program would, and dumps what it sees).
# bats file_tags=filelife

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)

FL=$PC_FIXTURES/fx_filelife

# fl_copy VAR [VARIANT]: a copy of a fixture executable in the test's
# directory (VAR gets its path) and a pristine copy beside it (VAR.orig).
fl_copy() {
	local -n _fl_copy=$1
	_fl_copy=$BATS_TEST_TMPDIR/fx
	cp "$(fx_bin "${2:-gcc_O2_pie}")" "$_fl_copy"
	cp "$_fl_copy" "$_fl_copy.orig"
}

# fl_start VAR NAME EXE STEP...: EXE --oracle NAME.o ready:NAME.r STEP...,
# spawned; returns once it is ready.  VAR gets its pid.
fl_start() {
	local -n _fl_start=$1
	local n=$BATS_TEST_TMPDIR/$2
	shift 2
	pc_spawn _fl_start "$1" --oracle "$n.o" ready:"$n.r" "${@:2}"
	pc_wait_file "$n.r"
}

# assert_same_bytes FILE PRISTINE WHAT: FILE holds PRISTINE's bytes; the
# first difference is named (offset, and the bytes: an int3 is 314 octal).
assert_same_bytes() {
	local d
	d=$(cmp -l "$2" "$1" 2>&1 | head -n 3) || true
	[[ -z $d ]] || { fail "$3: '$1' differs from the original at (offset, original, now in octal): $d"; return 1; }
}

# fl_view VAR NAME FILE [--exec]: a view of FILE (fx_filelife view) kept
# mapped; dump it with fl_dump NAME.
fl_view() {
	local -n _fl_view=$1
	local n=$BATS_TEST_TMPDIR/$2 fd
	mkfifo "$n.f"
	pc_spawn _fl_view "$FL" view ${4:-} "$3" "$n.r" "$n.f" "$n"
	pc_wait_file "$n.r"
	# Held open: the view dumps a line at a time and ends at EOF.
	exec {fd}>"$n.f"
	eval "FL_VIEW_FD_$2=$fd"
	FL_VIEW_N[$2]=0
}

declare -A FL_VIEW_N

# fl_dump NAME: the view's bytes now, in a new file: FL_DUMP (not printed:
# the count must outlive the call).
fl_dump() {
	local fdv=FL_VIEW_FD_$1 n
	n=$((FL_VIEW_N[$1] + 1))
	FL_VIEW_N[$1]=$n
	FL_DUMP=$BATS_TEST_TMPDIR/$1.$n
	[[ ! -e $FL_DUMP ]] || { fail "fl_dump: '$FL_DUMP' exists before it was asked for"; return 1; }
	echo >&"${!fdv}"
	pc_wait_file "$FL_DUMP"
}

# fl_check_bytes F WHEN: the file on disk, its shared read-only view and
# its second program's executable view hold the original bytes.
fl_check_bytes() {
	assert_same_bytes "$1" "$1.orig" "the file on disk, $2"
	fl_dump vs
	assert_same_bytes "$FL_DUMP" "$1.orig" "a reader's shared mapping, $2"
	fl_dump vx
	assert_same_bytes "$FL_DUMP" "$1.orig" "another process's executable mapping, $2"
}

# fl_bytes_intact MODE VARIANT: traced in MODE, a program fires every
# fx:a* site; while attached and after the tracer's SIGKILL (and the
# cleanup tracefs needs then) the bytes are the original's everywhere but
# in the traced process.
fl_bytes_intact() {
	local f t=$BATS_TEST_TMPDIR/t.json tp vs vx go go2
	pc_use_mode "$1"
	fl_copy f "$2"
	go=$(pc_fifo go)
	go2=$(pc_fifo go2)
	fl_start tp p "$f" wait:"$go" fire:fx:a1:5 fire:fx:a3:2 wait:"$go2"
	fl_view vs vs "$f"
	fl_view vx vx "$f" --exec
	fl_check_bytes "$f" "before attach"
	pc_trace_bg "$t" --json --attach="$1" -p "$tp" "usdt:$f:fx:a*"
	pc_fifo_write "$go" go
	# Every hit delivered: the sites were in place while the views read.
	pc_wait_until "$PC_TIMEOUT" pc_lines_at_least "$t" 7
	fl_check_bytes "$f" "while attached (mode $1)"
	pc_trace_stop KILL
	[[ $1 != tracefs ]] || run -0 pc cleanup
	fl_check_bytes "$f" "after the tracer's SIGKILL (mode $1)"
	pc_fifo_write "$go2" go
	pc_wait_until "$PC_TIMEOUT" fl_gone "$tp"
}

fl_gone() {
	! pc_inv_alive "$1"
}

@test "filelife.bytes-intact-perf: perf mode: the file on disk, a reader's mapping and another program's executable mapping keep the original bytes while attached and after SIGKILL" {
	fl_bytes_intact perf gcc_O2_pie
}

@test "filelife.bytes-intact-tracefs: the same in tracefs mode (SIGKILL leaves its entries: cleanup)" {
	fl_bytes_intact tracefs gcc_O2_pie
}

@test "filelife.bytes-intact-multi: the same in uprobe_multi mode" {
	fl_bytes_intact multi gcc_O2_pie
}

@test "filelife.bytes-intact-nop5: the same on 5-byte nop sites (6.18+ kernels rewrite them into a CALL)" {
	fl_bytes_intact auto gcc_O2_pie_nop5
}

@test "filelife.checker-catches-int3: an int3 written into the file is found by the byte check, at its offset" {
	local f
	fl_copy f
	printf '\xcc' | dd of="$f" bs=1 seek=4096 conv=notrunc status=none
	run -1 assert_same_bytes "$f" "$f.orig" "planted"
	assert_output --partial "4097 "
	assert_output --partial " 314"
}

@test "filelife.replaced-by-rename: a path names the file it named at attach: after the file is replaced by rename, the running process still fires into the trace, exactly; a process started from the new file runs another inode and is not traced" {
	local f t=$BATS_TEST_TMPDIR/t.json p1 p2 go
	fl_copy f
	go=$(pc_fifo go)
	fl_start p1 p1 "$f" wait:"$go" fire:fx:a1:3 fire:fx:a3:2
	pc_trace_bg "$t" --json "usdt:$f:fx:a*"
	cp "$f.orig" "$f.new"
	mv "$f.new" "$f"
	fl_start p2 p2 "$f" fire:fx:a1:4
	pc_wait_until "$PC_TIMEOUT" fl_gone "$p2"
	pc_fifo_write "$go" go
	pc_wait_until "$PC_TIMEOUT" fl_gone "$p1"
	pc_wait_until "$PC_TIMEOUT" pc_lines_at_least "$t" 5
	pc_trace_stop
	assert_equal "$PC_TRACE_STATUS" 0
	assert_equal "$(pc_count_events "$BATS_TEST_TMPDIR/p2.o")" 4
	assert_oracle "$BATS_TEST_TMPDIR/p1.o" "$t"
	assert_summary 5 "$t.err"
}

# fl_gone_attach PROBE-KIND: a process whose file is gone from disk
# (deleted, or replaced by rename), traced by -p with PROBE-KIND
#   star  PATH '*': the object opened through /proc/PID/map_files
#   exe   /proc/PID/exe
# exact.  $1 how the file went: rm or mv.
fl_gone_attach() {
	local f p go
	fl_copy f
	go=$(pc_fifo go)
	fl_start p p "$f" wait:"$go" fire:fx:a1:3 fire:fx:a3:2
	case $1 in
	rm) rm "$f" ;;
	mv) cp "$f.orig" "$f.new" && mv "$f.new" "$f" ;;
	esac
	grep -q " (deleted)$" "/proc/$p/maps" || { fail "the process does not map a deleted file"; return 1; }
	fl_trace_gone "$p" "$2" "$go" "$BATS_TEST_TMPDIR/p.o"
}

# fl_trace_gone PID PROBE-KIND GO ORACLE: PID (waiting on the fifo GO to
# fire fx:a1 3 times and fx:a3 twice) traced by -p with PROBE-KIND, star
# or exe (fl_gone_attach): exact.
fl_trace_gone() {
	local t=$BATS_TEST_TMPDIR/t.json probe
	case $2 in
	star) probe='usdt:*:fx:a*' ;;
	exe) probe="usdt:/proc/$1/exe:fx:a*" ;;
	esac
	pc_trace_bg "$t" --json -p "$1" "$probe"
	pc_fifo_write "$3" go
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	assert_oracle "$4" "$t"
	assert_summary 5 "$t.err"
}

@test "filelife.unlinked-star: a process whose executable was deleted, then traced by -p with PATH '*': exact (through /proc/PID/map_files)" {
	fl_gone_attach rm star
}

@test "filelife.unlinked-exe: the same by /proc/PID/exe: exact" {
	fl_gone_attach rm exe
}

@test "filelife.replaced-star: a process whose executable was replaced by rename, then traced by -p with PATH '*': its own (old) file, exact" {
	fl_gone_attach mv star
}

@test "filelife.unlinked-while-traced: the executable deleted while traced: the probes still fire, exact, and the tracer ends cleanly" {
	local f t=$BATS_TEST_TMPDIR/t.json p go
	fl_copy f
	go=$(pc_fifo go)
	fl_start p p "$f" wait:"$go" fire:fx:a1:3
	pc_trace_bg "$t" --json -p "$p" "usdt:$f:fx:a1"
	rm "$f"
	pc_fifo_write "$go" go
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	assert_oracle "$BATS_TEST_TMPDIR/p.o" "$t"
	assert_summary 3 "$t.err"
}

@test "filelife.unlinked-by-path: a deleted file named by its old path is refused, exit 2, naming the path and the reason, nothing attached" {
	local f p go
	fl_copy f
	go=$(pc_fifo go)
	fl_start p p "$f" wait:"$go"
	rm "$f"
	run -2 --separate-stderr pc trace --json -p "$p" "usdt:$f:fx:a1"
	assert_output ''
	[[ $stderr == *"$f"*"No such file or directory"* ]] || fail "stderr names neither the path nor the reason: $stderr"
	pc_fifo_write "$go" go
	pc_wait_until "$PC_TIMEOUT" fl_gone "$p"
}

# fl_memfd PROBE-KIND: a program run from a memfd (no path names it),
# traced by -p as fl_gone_attach does.
fl_memfd() {
	local p go n=$BATS_TEST_TMPDIR/p
	go=$(pc_fifo go)
	pc_spawn p "$FL" memexec "$(fx_bin gcc_O2_pie)" --oracle "$n.o" ready:"$n.r" wait:"$go" fire:fx:a1:3 fire:fx:a3:2
	pc_wait_file "$n.r"
	grep -q "/memfd:fx (deleted)$" "/proc/$p/maps" || { fail "the process does not run from a memfd"; return 1; }
	fl_trace_gone "$p" "$1" "$go" "$n.o"
}

@test "filelife.memfd-star: a program run from a memfd, traced by -p with PATH '*': exact" {
	fl_memfd star
}

@test "filelife.memfd-exe: the same by /proc/PID/exe: exact" {
	fl_memfd exe
}
