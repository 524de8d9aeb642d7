#!/usr/bin/env bats
# libraries.bats — probes in shared libraries loaded after the tracer
# attached: named by PATH (a uprobe is keyed by inode: events start when
# the library is dlopen'd, its semaphore is raised as it is mapped), or
# found by PATH '*' at the dynamic linker's barrier (_dl_debug_state,
# RT_CONSISTENT): attached before dlopen() returns, so the first hit right
# after dlopen is traced.  dlclose while attached, and re-dlopen at another
# base (dlopen:A dlclose:A dlopen:B dlopen:A, B taking A's old place):
# exact arguments again, semaphores set again, no stale events.  With -p,
# -a and --follow.
#
# -a and --follow attach system-wide: those tests use private copies of
# the library (another inode), so no other process is touched.
# bats file_tags=libraries

load helpers/common

PC_REQUIRES=(root uprobe_pmu ref_ctr_offset bpf btf)

FXV=${PC_LIB_VARIANT:-gcc_O2_pie}
FXV2=${PC_LIB_VARIANT2:-clang_O0_pie}

# probes_while ORACLE LIB: the probe lines logged while LIB was the last
# library dlopen'd (the one libfire fires).
probes_while() {
	awk -v lib="\"path\":\"$2\"" '
		/"step":"dlopen"/ { cur = index($0, lib) > 0 }
		/"probe":/ && cur' "$1"
}

# assert_moved ORACLE: the two dlopens of the library A (1st and 3rd
# dlopen line) got different bases: the re-dlopen really moved.
assert_moved() {
	local b
	read -r -a b <<<"$(steps_of "$1" dlopen base)"
	((${#b[@]} >= 3)) || { fail "expected 3 dlopen lines: ${b[*]}"; return 1; }
	[[ ${b[0]} != "${b[2]}" ]] || fail "A was loaded at ${b[0]} both times: nothing tests the move"
}

@test "libraries.pid-reload: -p: a library named by PATH before it is loaded: events from dlopen on, semaphore set then; dlclose, B at its place, A again elsewhere: exact, no stale events" {
	requires tracer:usdt_lib tracer:semaphores tracer:pid
	local fx a b pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	a=$(fx_lib "$FXV")
	b=$(fx_lib "$FXV2")
	fx=$(fx_bin "$FXV")
	start_fx pid "$fx" "$o" "dlopen:$a" libsema:fxlib:sem libfire:fxlib:sem:2 libfire:fxlib:l4:3 \
		"dlclose:$a" "dlopen:$b" libfire:fxlib:l4:2 libfire:fxlib:sem:1 \
		"dlopen:$a" libsema:fxlib:sem libfire:fxlib:l4:2 libfire:fxlib:sem:1
	# Not mapped yet: the uprobes are on the file.
	run -1 grep -qF "$a" "/proc/$pid/maps"
	pc_trace_bg "$t" --json -p "$pid" "usdt:$a:fxlib:l4" "usdt:$a:fxlib:sem"
	pc_fifo_write "$GO" go
	pc_trace_wait
	assert_exit "$pid" 0
	assert_equal "$PC_TRACE_STATUS" 0
	assert_moved "$o"
	# B's hits (its own inode, never traced) are in the oracle only; B's
	# semaphore stayed 0, so fxlib:sem did not fire there.
	probes_while "$o" "$b" >"$o.b"
	assert_equal "$(grep -c '"probe":"fxlib:l4"' "$o.b")" 2
	assert_equal "$(grep -c '"probe"' "$o.b")" 2
	probes_while "$o" "$a" >"$o.a"
	assert_oracle "$o.a" "$t"
	assert_summary 8 "$t.err"
	# A: 1 at dlopen, then at each check; B: 0; A again: 1.
	assert_sema "$(sema_seen "$o" fxlib:sem)" "1 1 1 0 1 1"
}

@test "libraries.all-later: -a: a library named by PATH, in a process started after the tracer, from its dlopen on" {
	requires tracer:usdt_lib tracer:semaphores tracer:all
	local a o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json fx
	fx=$(fx_bin "$FXV")
	a=$(private libfx_all.so "$(fx_lib "$FXV")")
	pc_trace_bg "$t" --json -a "usdt:$a:fxlib:l4" "usdt:$a:fxlib:sem"
	run -0 "$fx" --oracle "$o" "dlopen:$a" libsema:fxlib:sem libfire:fxlib:l4:2 libfire:fxlib:sem:1 \
		"dlclose:$a" "dlopen:$a" libfire:fxlib:l4:1
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	assert_oracle "$o" "$t"
	assert_summary 4 "$t.err"
	assert_sema "$(sema_seen "$o" fxlib:sem)" "1 1"
}

@test "libraries.follow-child: --follow: a library named by PATH, dlopen'd by the process and by its forked child" {
	requires tracer:usdt_lib tracer:semaphores tracer:follow tracer:cmd
	local a o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json fx
	fx=$(fx_bin "$FXV")
	a=$(private libfx_follow.so "$(fx_lib "$FXV")")
	run -0 --separate-stderr pc trace --json --follow -c "$fx --oracle $o fork [ dlopen:$a libsema:fxlib:sem libfire:fxlib:l4:2 libfire:fxlib:sem:1 ] dlopen:$a libfire:fxlib:l4:1" \
		"usdt:$a:fxlib:l4" "usdt:$a:fxlib:sem"
	printf '%s\n' "$output" >"$t"
	assert_oracle "$o" "$t"
	assert_summary 4
	assert_sema "$(sema_seen "$o" fxlib:sem)" "1 1"
}

@test "libraries.star-first-hit: -p with PATH '*': each library variant dlopen'd after attach is attached before dlopen returns: its first hit is traced" {
	pc_probecheck_only "its -v attach report"
	local fx pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json lib n=1
	local -a steps=()
	for lib in "$PC_FIXTURES"/libfx_*_O?.so; do
		steps+=("dlopen:$lib" libfire:fx:dup:1)
		n=$((n + 1))
	done
	((n == 7)) || fail "expected 6 fixture libraries, found $((n - 1))"
	fx=$(fx_bin "$FXV")
	start_fx pid "$fx" "$o" fire:fx:dup:1 "${steps[@]}"
	# fx:dup is in the executable (origin 1) and every library (origin 2).
	pc_trace_bg "$t" --json -v -p "$pid" 'usdt:*:fx:dup'
	pc_fifo_write "$GO" go
	pc_trace_wait
	assert_exit "$pid" 0
	assert_equal "$PC_TRACE_STATUS" 0
	assert_oracle "$o" "$t"
	assert_summary "$n" "$t.err"
	run -0 grep -c '"args":\[2,0\]' "$t"
	assert_output 6
	# One stop per dlopen: at RT_CONSISTENT only, not at RT_ADD too.
	run -0 grep -c 'stopped at _dl_debug_state' "$t.err"
	assert_output 6
}

@test "libraries.star-reload: --follow with PATH '*': dlopen:A dlclose:A dlopen:B dlopen:A: events resume with exact args at the new base, semaphores set again" {
	requires tracer:usdt_lib tracer:semaphores tracer:follow tracer:star tracer:pid
	local fx a b pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	a=$(private libfx_a.so "$(fx_lib "$FXV")")
	b=$(private libfx_b.so "$(fx_lib "$FXV2")")
	fx=$(fx_bin "$FXV")
	start_fx pid "$fx" "$o" "dlopen:$a" libsema:fxlib:sem libfire:fxlib:l4:2 libfire:fxlib:sem:1 \
		"dlclose:$a" "dlopen:$b" libfire:fxlib:l4:1 libsema:fxlib:sem \
		"dlopen:$a" libsema:fxlib:sem libfire:fxlib:l4:2 libfire:fxlib:sem:1
	pc_trace_bg "$t" --json --follow -p "$pid" 'usdt:*:fxlib:l4' 'usdt:*:fxlib:sem'
	pc_fifo_write "$GO" go
	pc_trace_wait
	assert_exit "$pid" 0
	assert_equal "$PC_TRACE_STATUS" 0
	assert_moved "$o"
	assert_oracle "$o" "$t"
	assert_summary 7 "$t.err"
	# A, A's check, B (found by '*' too), A again, its check.
	assert_sema "$(sema_seen "$o" fxlib:sem)" "1 1 1 1 1"
}

@test "libraries.star-fork-barrier: --follow with PATH '*': a forked child's dlopen stops it at the barrier like its parent's" {
	requires tracer:usdt_lib tracer:follow tracer:star tracer:cmd
	local a o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json fx
	fx=$(fx_bin "$FXV")
	a=$(private libfx_child.so "$(fx_lib "$FXV")")
	run -0 --separate-stderr pc trace --json --follow -c "$fx --oracle $o fork [ dlopen:$a libfire:fxlib:l4:1 ] dlopen:$a libfire:fxlib:l4:2" \
		'usdt:*:fxlib:l4'
	printf '%s\n' "$output" >"$t"
	assert_oracle "$o" "$t"
	assert_summary 3
}

@test "libraries.path-and-star: --follow: a library named both by PATH and by '*' gives each event once" {
	requires tracer:usdt_lib tracer:follow tracer:star tracer:cmd
	local a o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json fx
	fx=$(fx_bin "$FXV")
	a=$(private libfx_both.so "$(fx_lib "$FXV")")
	run -0 --separate-stderr pc trace --json --follow -c "$fx --oracle $o dlopen:$a libfire:fxlib:l4:2 libfire:fxlib:l0:1" \
		"usdt:$a:fxlib:l4" 'usdt:*:fxlib:l*'
	printf '%s\n' "$output" >"$t"
	assert_oracle "$o" "$t"
	assert_summary 3
}
