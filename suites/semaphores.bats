#!/usr/bin/env bats
# semaphores.bats — USDT semaphores: 0 until a tracer attaches, non-zero
# while one is attached, 0 again however the tracer ends (SIGINT, SIGKILL),
# never touched for a probe nobody traces; in the executable and in a
# dlopen'ed library (also one mapped after the attach); in every build
# variant; with -p and with -c.
#
# Two views, neither of them the tracer's: the fixture's own (it logs the
# value it reads: {"sema":..,"value":V} oracle lines), and pc-peek from
# outside at the address readelf gives for the note's semaphore plus the
# load bias from /proc/PID/maps — for the moments the fixture cannot log
# (while the tracer is attached but the fixture is blocked, and after the
# test in teardown, through pc_sema_watch).
#
# The kernel counts the semaphore once per mm, not once per tracer (seed
# 003, "Uprobes/sdt: Fix multiple update of same reference counter"): two
# tracers on one process read 1, not 2.  The two-tracer test measures that
# and asserts what holds on every kernel with ref_ctr_offset: >= 1 while
# any tracer is attached, 0 when all are gone.  The count is per uprobe,
# i.e. per site: a semaphore shared by two traced sites reads 2.
# bats file_tags=semaphores

load helpers/common

PC_REQUIRES=(root uprobe_pmu ref_ctr_offset bpf)

# The variant the scenario tests use; the variants test runs them all.
FX_VARIANT=${PC_SEMA_VARIANT:-gcc_O2_pie}

# peek_sema PID ADDR: the 16-bit semaphore now.
peek_sema() {
	pc_peek "$1" "$2" 2
}

@test "semaphores.sigint-zero: semaphore: 0 before attach, 1 while traced, 0 after the tracer exits on SIGINT" {
	requires tracer:semaphores tracer:pid
	use_variant "$FX_VARIANT"
	fifos 2
	start_fixture sema:fx:sem_a "ready:$(R 0)" \
		"wait:$F1" sema:fx:sem_a fire:fx:sem_a:3 "ready:$(R 1)" \
		"wait:$F2" sema:fx:sem_a fire:fx:sem_a:2 "ready:$(R 2)"
	local a
	a=$(sema_addr "$PID" "$FX" fx:sem_a)
	assert_sema "$(peek_sema "$PID" "$a")" 0
	pc_sema_watch "$PID" "$a" 0

	pc_trace_bg "$BATS_TEST_TMPDIR/trace.json" --json -p "$PID" "usdt:$FX:fx:sem_a"
	# Blocked in wait:, the fixture cannot look: we do.
	assert_sema "$(peek_sema "$PID" "$a")" 1
	release 1
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	assert_summary 3 "$PC_TRACE_OUT.err"
	assert_oracle "$ORACLE" "$PC_TRACE_OUT" --only fx:sem_a
	assert_sema "$(peek_sema "$PID" "$a")" 0
	release 2
	# before; after attach; each of 3 fires; after detach; 2 fires, none fired
	assert_sema "$(sema_seen "$ORACLE" fx:sem_a)" "0 1 1 1 1 0 0 0"
	assert_equal "$(pc_count_events "$ORACLE" fx:sem_a)" 3
}

@test "semaphores.sigkill-zero: semaphore returns to 0 after SIGKILL of the tracer; the fixture lives on and sees 0" {
	requires tracer:semaphores tracer:pid
	use_variant "$FX_VARIANT"
	fifos 2
	start_fixture "ready:$(R 0)" \
		"wait:$F1" sema:fx:sem_a fire:fx:sem_a:2 "ready:$(R 1)" \
		"wait:$F2" sema:fx:sem_a fire:fx:sem_a:2 "ready:$(R 2)" "wait:$(pc_fifo hold)"
	local a
	a=$(sema_addr "$PID" "$FX" fx:sem_a)
	pc_sema_watch "$PID" "$a" 0

	pc_trace_bg "$BATS_TEST_TMPDIR/trace.json" --json -p "$PID" "usdt:$FX:fx:sem_a"
	release 1
	assert_sema "$(peek_sema "$PID" "$a")" 1
	# Killed while attached: no chance to detach; the kernel closes its fds.
	pc_trace_stop KILL
	assert_equal "$PC_TRACE_STATUS" 137
	assert_sema "$(peek_sema "$PID" "$a")" 0
	release 2
	assert_sema "$(sema_seen "$ORACLE" fx:sem_a)" "1 1 1 0 0 0"
	assert_equal "$(pc_count_events "$ORACLE" fx:sem_a)" 2
	# The fixture is still running: teardown reads the semaphore once more.
	pc_inv_alive "$PID"
	pc_check_clean
}

@test "semaphores.untraced-neighbour: an untraced semaphore probe stays 0 while its neighbour in the same binary is traced" {
	requires tracer:semaphores tracer:pid
	use_variant "$FX_VARIANT"
	fifos 1
	start_fixture "ready:$(R 0)" \
		"wait:$F1" sema:fx:sem_never sema:fx:sem_a fire:fx:sem_never:3 \
		fire:fx:sem_a:1 "ready:$(R 1)"
	local a n
	a=$(sema_addr "$PID" "$FX" fx:sem_a)
	n=$(sema_addr "$PID" "$FX" fx:sem_never)
	pc_sema_watch "$PID" "$a" 0
	pc_sema_watch "$PID" "$n" 0

	pc_trace_bg "$BATS_TEST_TMPDIR/trace.json" --json -p "$PID" "usdt:$FX:fx:sem_a"
	assert_sema "$(peek_sema "$PID" "$a")" 1
	assert_sema "$(peek_sema "$PID" "$n")" 0
	release 1
	pc_trace_stop
	assert_equal "$PC_TRACE_STATUS" 0
	assert_sema "$(sema_seen "$ORACLE" fx:sem_never)" "0 0 0 0"
	assert_sema "$(sema_seen "$ORACLE" fx:sem_a)" "1 1"
	assert_equal "$(pc_count_events "$ORACLE" fx:sem_never)" 0
	assert_summary 1 "$PC_TRACE_OUT.err"
	assert_oracle "$ORACLE" "$PC_TRACE_OUT"
}

@test "semaphores.two-tracers: two tracers at once: semaphore counts per process, not per tracer (1, not 2); 1 after one detaches, 0 after the other is SIGKILLed" {
	requires tracer:semaphores tracer:pid
	use_variant "$FX_VARIANT"
	fifos 3
	start_fixture "ready:$(R 0)" \
		"wait:$F1" sema:fx:sem_a fire:fx:sem_a:2 "ready:$(R 1)" \
		"wait:$F2" sema:fx:sem_a fire:fx:sem_a:1:-77,7 "ready:$(R 2)" \
		"wait:$F3" sema:fx:sem_a fire:fx:sem_a:1 "ready:$(R 3)" "wait:$(pc_fifo hold)"
	local a t1 t1out t2 t2out v1 v2
	a=$(sema_addr "$PID" "$FX" fx:sem_a)
	pc_sema_watch "$PID" "$a" 0

	pc_trace_bg "$BATS_TEST_TMPDIR/t1.json" --json -p "$PID" "usdt:$FX:fx:sem_a"
	t1=$PC_TRACE_PID t1out=$PC_TRACE_OUT
	pc_on_teardown kill_quietly "$t1"
	pc_trace_bg "$BATS_TEST_TMPDIR/t2.json" --json -p "$PID" "usdt:$FX:fx:sem_a"
	t2=$PC_TRACE_PID t2out=$PC_TRACE_OUT

	# Measured, not assumed: one count for the process (the kernel bumps
	# the counter when it installs the breakpoint in an mm, once).
	v1=$(peek_sema "$PID" "$a")
	pc_log "two tracers attached: semaphore reads $v1"
	((v1 >= 1)) || fail "semaphore $v1 with two tracers attached"
	if ((v1 == 1)); then
		pc_log "one count per mm (seed 003), not one per tracer"
	fi
	release 1
	cp "$ORACLE" "$BATS_TEST_TMPDIR/oracle.both"

	# The first detaches normally: the second still holds the semaphore.
	PC_TRACE_PID=$t1 PC_TRACE_OUT=$t1out
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	v2=$(peek_sema "$PID" "$a")
	pc_log "one of two tracers detached: semaphore reads $v2"
	((v2 >= 1)) || fail "semaphore dropped to $v2 while a tracer is still attached"
	release 2
	# The third hit in t2's output before the SIGKILL, which would lose
	# an event still in the ring (the oracle below wants all three).
	pc_wait_until "$PC_TIMEOUT" grep -qF '"args":[-77,7]' "$t2out" ||
		fail "tracer $t2 did not print the third hit"

	# The second is killed: no tracer left, the semaphore is 0.
	PC_TRACE_PID=$t2 PC_TRACE_OUT=$t2out
	pc_trace_stop KILL
	assert_equal "$PC_TRACE_STATUS" 137
	assert_sema "$(peek_sema "$PID" "$a")" 0
	release 3

	assert_sema "$(sema_seen "$ORACLE" fx:sem_a)" "$v1 $v1 $v1 $v2 $v2 0 0"
	# Both saw the first two hits; only the second saw the third.
	assert_summary 2 "$t1out.err"
	assert_oracle "$BATS_TEST_TMPDIR/oracle.both" "$t1out"
	assert_oracle "$ORACLE" "$t2out"
	assert_equal "$(pc_count_events "$t2out")" 3
}

@test "semaphores.lib-before-attach: library semaphore, library dlopen'ed before attach (-p, usdt:LIBPATH): 0, 1 while traced, 0 after" {
	requires tracer:semaphores tracer:usdt_lib tracer:pid
	use_variant "$FX_VARIANT"
	fifos 2
	start_fixture "dlopen:$FXLIB" libsema:fxlib:sem "ready:$(R 0)" \
		"wait:$F1" libsema:fxlib:sem libfire:fxlib:sem:3 "ready:$(R 1)" \
		"wait:$F2" libsema:fxlib:sem libfire:fxlib:sem:1 "ready:$(R 2)"
	local a
	a=$(sema_addr "$PID" "$FXLIB" fxlib:sem)
	assert_sema "$(peek_sema "$PID" "$a")" 0
	pc_sema_watch "$PID" "$a" 0

	pc_trace_bg "$BATS_TEST_TMPDIR/trace.json" --json -p "$PID" "usdt:$FXLIB:fxlib:sem"
	assert_sema "$(peek_sema "$PID" "$a")" 1
	release 1
	pc_trace_stop
	assert_equal "$PC_TRACE_STATUS" 0
	assert_sema "$(peek_sema "$PID" "$a")" 0
	release 2
	assert_sema "$(sema_seen "$ORACLE" fxlib:sem)" "0 1 1 1 1 0 0"
	assert_summary 3 "$PC_TRACE_OUT.err"
	assert_oracle "$ORACLE" "$PC_TRACE_OUT"
}

@test "semaphores.lib-by-path: library semaphore, attach by library path before the dlopen (-c): set when the library is mapped" {
	requires tracer:semaphores tracer:usdt_lib tracer:cmd
	use_variant "$FX_VARIANT"
	local oracle=$BATS_TEST_TMPDIR/oracle.json
	run -0 --separate-stderr pc trace --json -c \
		"$FX --oracle $oracle note:before-dlopen dlopen:$FXLIB libsema:fxlib:sem libfire:fxlib:sem:4 dlclose:$FXLIB" \
		"usdt:$FXLIB:fxlib:sem"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/trace.json"
	assert_sema "$(sema_seen "$oracle" fxlib:sem)" "1 1 1 1 1"
	assert_summary 4
	assert_oracle "$oracle" "$BATS_TEST_TMPDIR/trace.json"
}

@test "semaphores.every-variant: every build variant: fx:sem_a reads 0, then 1 while traced with events as the oracle, then 0" {
	requires tracer:semaphores tracer:pid
	local v a n=0 bad=()
	while IFS= read -r v; do
		n=$((n + 1))
		pc_log "---- variant $v"
		FX=$(fx_bin "$v")
		ORACLE=$BATS_TEST_TMPDIR/$v.oracle.json
		mkdir -p "$BATS_TEST_TMPDIR/$v"
		local R0=$BATS_TEST_TMPDIR/$v/r0 R1=$BATS_TEST_TMPDIR/$v/r1 R2=$BATS_TEST_TMPDIR/$v/r2
		local G1 G2
		G1=$(pc_fifo "$v.f1")
		G2=$(pc_fifo "$v.f2")
		pc_spawn PID "$FX" --oracle "$ORACLE" sema:fx:sem_a "ready:$R0" \
			"wait:$G1" sema:fx:sem_a fire:fx:sem_a:2 "ready:$R1" \
			"wait:$G2" sema:fx:sem_a fire:fx:sem_a:1 "ready:$R2"
		pc_wait_file "$R0"
		a=$(sema_addr "$PID" "$FX" fx:sem_a)
		pc_sema_watch "$PID" "$a" 0
		pc_trace_bg "$BATS_TEST_TMPDIR/$v.trace.json" --json -p "$PID" "usdt:$FX:fx:sem_a"
		[[ $(pc_sema_norm "$(peek_sema "$PID" "$a")") == "$(pc_sema_norm 1)" ]] ||
			bad+=("$v: semaphore $(peek_sema "$PID" "$a") while attached")
		pc_fifo_write "$G1" go
		pc_wait_file "$R1"
		pc_trace_stop
		((PC_TRACE_STATUS == 0)) || bad+=("$v: tracer exit status $PC_TRACE_STATUS")
		[[ $(peek_sema "$PID" "$a") == 0 ]] || bad+=("$v: semaphore $(peek_sema "$PID" "$a") after detach")
		pc_fifo_write "$G2" go
		pc_wait_file "$R2"
		[[ $(pc_sema_norm "$(sema_seen "$ORACLE" fx:sem_a)") == "$(pc_sema_norm "0 1 1 1 0 0")" ]] ||
			bad+=("$v: fixture saw '$(sema_seen "$ORACLE" fx:sem_a)', expected '0 1 1 1 0 0'")
		assert_summary 2 "$PC_TRACE_OUT.err"
		assert_oracle "$ORACLE" "$PC_TRACE_OUT"
		local st=0
		wait "$PID" || st=$?
		((st == 0)) || bad+=("$v: fixture exit status $st")
	done < <(fx_variants)
	((n >= $(fx_variants_want))) || bad+=("only $n variants, expected $(fx_variants_want)")
	if ((${#bad[@]})); then
		printf '%s\n' "${bad[@]}" | fail
	fi
	pc_log "$n variants checked"
}

@test "semaphores.cmd-before-start: -c: semaphores are set before the command's first instruction, only for the traced probes" {
	requires tracer:semaphores tracer:cmd
	use_variant "$FX_VARIANT"
	local oracle=$BATS_TEST_TMPDIR/oracle.json
	# fx:sem_2site: two sites share one semaphore.  The kernel counts once
	# per uprobe per mm, and each site is its own uprobe: it reads 2.
	run -0 --separate-stderr pc trace --json -c \
		"$FX --oracle $oracle sema:fx:sem_a sema:fx:sem_2site sema:fx:sem_never fire:fx:sem_a:2 fire:fx:sem_2site:2 fire:fx:sem_never:2" \
		"usdt:$FX:fx:sem_a" "usdt:$FX:fx:sem_2site"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/trace.json"
	assert_sema "$(sema_seen "$oracle" fx:sem_a)" "1 1 1"
	assert_sema "$(sema_seen "$oracle" fx:sem_2site)" "2 2 2"
	assert_sema "$(sema_seen "$oracle" fx:sem_never)" "0 0 0"
	assert_summary 4
	assert_oracle "$oracle" "$BATS_TEST_TMPDIR/trace.json"
}
