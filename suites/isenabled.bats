#!/usr/bin/env bats
# isenabled.bats — is-enabled probes (`if (PROBE_ENABLED()) PROBE(...)`) fire
# exactly while they are traced: untraced, the fixture reads semaphore 0
# and fires nothing; traced, every check reads non-zero, every probe fires,
# and the tracer's events equal the fixture's oracle log exactly; detached,
# nothing fires again.  And the reason the idiom exists: the arguments'
# computation runs only when enabled (fx_isenabled logs each computation).
#
# Fixtures: the driver's is-enabled probes (fx:sem_a, fx:sem_b with a
# string, fx:sem_2site with two sites on one semaphore, fx:sem_never, and
# the library's fxlib:sem) and fx_isenabled (fxie:costly).
# bats file_tags=semaphores,isenabled

load helpers/common

PC_REQUIRES=(root uprobe_pmu ref_ctr_offset bpf)

FX_VARIANT=${PC_SEMA_VARIANT:-gcc_O2_pie}

# use_fixture VARIANT: FX, FXLIB (its library: use_variant) and FXIE
# (fx_isenabled).
use_fixture() {
	use_variant "$1"
	FXIE=$PC_FIXTURES/fx_isenabled
	requires "file:$FXIE"
}

# computed ORACLE: the iterations fx_isenabled computed arguments for.
computed() {
	steps_of "$1" compute iter
}

@test "isenabled.untraced-zero: untraced: every is-enabled probe reads 0 and fires nothing, nothing is computed" {
	pc_probecheck_only "checks the fixture alone: no tracer is involved"
	use_fixture "$FX_VARIANT"
	local o=$BATS_TEST_TMPDIR/oracle.json o2=$BATS_TEST_TMPDIR/oracle2.json
	run -0 "$FX" --oracle "$o" fire:fx:sem_a:3 fire:fx:sem_b:3 fire:fx:sem_2site:4 \
		fire:fx:sem_never:2 "dlopen:$FXLIB" libfire:fxlib:sem:3
	assert_sema "$(sema_seen "$o" fx:sem_a)" "0 0 0"
	assert_sema "$(sema_seen "$o" fx:sem_b)" "0 0 0"
	assert_sema "$(sema_seen "$o" fx:sem_2site)" "0 0 0 0"
	assert_sema "$(sema_seen "$o" fx:sem_never)" "0 0"
	assert_sema "$(sema_seen "$o" fxlib:sem)" "0 0 0"
	assert_equal "$(pc_count_events "$o")" 0
	run -0 "$FXIE" --oracle "$o2" fire:5
	assert_sema "$(sema_seen "$o2" fxie:costly)" "0 0 0 0 0"
	assert_equal "$(computed "$o2")" ""
	assert_equal "$(pc_count_events "$o2")" 0
}

@test "isenabled.traced-cmd: traced (-c): every check reads non-zero, every is-enabled probe fires, events equal the oracle" {
	requires tracer:semaphores tracer:cmd
	use_fixture "$FX_VARIANT"
	local o=$BATS_TEST_TMPDIR/oracle.json t=$BATS_TEST_TMPDIR/trace.json n
	run -0 --separate-stderr pc trace --json -c \
		"$FX --oracle $o fire:fx:sem_a:3 fire:fx:sem_2site:4 fire:fx:sem_never:2 dlopen:$FXLIB libfire:fxlib:sem:3" \
		"usdt:$FX:fx:sem_a" "usdt:$FX:fx:sem_2site" "usdt:$FXLIB:fxlib:sem"
	printf '%s\n' "$output" >"$t"
	assert_sema "$(sema_seen "$o" fx:sem_a)" "1 1 1"
	# Two sites, two uprobes, two counts in one semaphore.
	assert_sema "$(sema_seen "$o" fx:sem_2site)" "2 2 2 2"
	assert_sema "$(sema_seen "$o" fx:sem_never)" "0 0"
	assert_sema "$(sema_seen "$o" fxlib:sem)" "1 1 1"
	n=$(pc_count_events "$o")
	assert_equal "$n" 10
	assert_summary "$n"
	assert_oracle "$o" "$t"
}

@test "isenabled.traced-str: traced (-c, --str): an is-enabled probe with a string argument fires with its string" {
	requires tracer:semaphores tracer:strings tracer:cmd
	use_fixture "$FX_VARIANT"
	local o=$BATS_TEST_TMPDIR/oracle.json t=$BATS_TEST_TMPDIR/trace.json
	run -0 --separate-stderr pc trace --json --str 0 -c \
		"$FX --oracle $o fire:fx:sem_b:3 fire:fx:sem_b:1:is-enabled-string" "usdt:$FX:fx:sem_b"
	printf '%s\n' "$output" >"$t"
	assert_sema "$(sema_seen "$o" fx:sem_b)" "1 1 1 1"
	assert_summary 4
	assert_oracle "$o" "$t"
}

@test "isenabled.traced-pid: fires exactly while traced (-p): nothing before the attach, every check while attached, nothing after the detach" {
	requires tracer:semaphores tracer:pid
	use_fixture "$FX_VARIANT"
	local o=$BATS_TEST_TMPDIR/oracle.json F1 F2 pid
	F1=$(pc_fifo f1)
	F2=$(pc_fifo f2)
	pc_spawn pid "$FX" --oracle "$o" fire:fx:sem_a:2 fire:fx:sem_2site:2 "ready:$(R 0)" \
		"wait:$F1" fire:fx:sem_a:3 fire:fx:sem_2site:3 "ready:$(R 1)" \
		"wait:$F2" fire:fx:sem_a:2 fire:fx:sem_2site:2 "ready:$(R 2)"
	pc_wait_file "$(R 0)"
	pc_trace_bg "$BATS_TEST_TMPDIR/trace.json" --json -p "$pid" \
		"usdt:$FX:fx:sem_a" "usdt:$FX:fx:sem_2site"
	pc_fifo_write "$F1" go
	pc_wait_file "$(R 1)"
	pc_trace_stop
	assert_equal "$PC_TRACE_STATUS" 0
	pc_fifo_write "$F2" go
	pc_wait_file "$(R 2)"
	assert_sema "$(sema_seen "$o" fx:sem_a)" "0 0 1 1 1 0 0"
	assert_sema "$(sema_seen "$o" fx:sem_2site)" "0 0 2 2 2 0 0"
	assert_equal "$(pc_count_events "$o")" 6
	assert_summary 6 "$PC_TRACE_OUT.err"
	assert_oracle "$o" "$PC_TRACE_OUT"
}

@test "isenabled.lazy-args: the arguments of an is-enabled probe are computed only while it is enabled" {
	requires tracer:semaphores tracer:strings tracer:pid
	use_fixture "$FX_VARIANT"
	local o=$BATS_TEST_TMPDIR/oracle.json F1 F2 pid
	F1=$(pc_fifo f1)
	F2=$(pc_fifo f2)
	pc_spawn pid "$FXIE" --oracle "$o" fire:3 "ready:$(R 0)" \
		"wait:$F1" fire:4 "ready:$(R 1)" "wait:$F2" fire:2 "ready:$(R 2)"
	pc_wait_file "$(R 0)"
	pc_trace_bg "$BATS_TEST_TMPDIR/trace.json" --json --str 1 -p "$pid" "usdt:$FXIE:fxie:costly"
	pc_fifo_write "$F1" go
	pc_wait_file "$(R 1)"
	pc_trace_stop
	assert_equal "$PC_TRACE_STATUS" 0
	pc_fifo_write "$F2" go
	pc_wait_file "$(R 2)"
	assert_sema "$(sema_seen "$o" fxie:costly)" "0 0 0 1 1 1 1 0 0"
	# Iterations 3..6 ran while attached: those, and only those, computed.
	assert_equal "$(computed "$o")" "3 4 5 6"
	assert_summary 4 "$PC_TRACE_OUT.err"
	assert_oracle "$o" "$PC_TRACE_OUT"
}

@test "isenabled.every-variant: every build variant: is-enabled probes fire only when traced, as the oracle says" {
	requires tracer:semaphores tracer:cmd
	local v o t n=0 bad=()
	while IFS= read -r v; do
		n=$((n + 1))
		pc_log "---- variant $v"
		FX=$(fx_bin "$v")
		o=$BATS_TEST_TMPDIR/$v.untraced.json
		run -0 "$FX" --oracle "$o" fire:fx:sem_a:2 fire:fx:sem_2site:2
		[[ $(pc_count_events "$o") == 0 ]] || bad+=("$v: fired untraced")
		o=$BATS_TEST_TMPDIR/$v.oracle.json
		t=$BATS_TEST_TMPDIR/$v.trace.json
		run -0 --separate-stderr pc trace --json -c \
			"$FX --oracle $o fire:fx:sem_a:2 fire:fx:sem_2site:2 fire:fx:sem_never:1" \
			"usdt:$FX:fx:sem_a" "usdt:$FX:fx:sem_2site"
		printf '%s\n' "$output" >"$t"
		[[ $(sema_seen "$o" fx:sem_a) == "1 1" ]] || bad+=("$v: fx:sem_a read '$(sema_seen "$o" fx:sem_a)'")
		[[ $(sema_seen "$o" fx:sem_never) == 0 ]] || bad+=("$v: fx:sem_never read '$(sema_seen "$o" fx:sem_never)'")
		[[ $(pc_count_events "$o") == 4 ]] || bad+=("$v: $(pc_count_events "$o") hits in the oracle, expected 4")
		assert_summary 4
		assert_oracle "$o" "$t"
	done < <(fx_variants)
	((n >= $(fx_variants_want))) || bad+=("only $n variants, expected $(fx_variants_want)")
	if ((${#bad[@]})); then
		printf '%s\n' "${bad[@]}" | fail
	fi
}
