#!/usr/bin/env bats
# parallel.bats — suites side by side (harness/run/run-suites with
# PROBECHECK_JOBS > 1): what one suite leaves fails that suite's test and
# no other, and what no suite can be blamed for fails the run.  Synthetic
# suites, run by a nested run-suites; they wait for each other through
# files, so they really run at once.
# serial: it runs suites side by side itself and then judges the whole
# machine, as the run's sweep does: other suites beside it would be in it.
# bats file_tags=harness,serial

load helpers/common
PC_REQUIRES=(root tracefs bpf cmd:bpftool)

# syn NAME LINE...: a synthetic suite NAME.bats in $S with the helpers.
syn() {
	local f=$S/$1.bats
	shift
	{
		echo "load '$PROBECHECK_ROOT/suites/helpers/common'"
		printf '%s\n' "$@"
	} >"$f"
}

# prep: where the synthetic suites and their barrier files go.
prep() {
	S=$BATS_TEST_TMPDIR/syn SYNC=$BATS_TEST_TMPDIR/sync
	mkdir -p "$S" "$SYNC"
	export SYNC
}

@test "parallel.suite-leftovers: parallel suites: an extra uprobe on a suite's own fixture, and a tracer it leaves holding BPF objects, fail that suite's test and not the suite beside them" {
	prep
	# (printf: a line starting with @test here would be this file's test)
	syn plant '@test "plant.uprobe-planted: plants a uprobe on its own fixture" {' \
		'	echo "p:pc_plant/ev $PC_FIXTURES/fx_gcc_O2_pie:0x1000" >>"$PC_TRACEFS/uprobe_events"' \
		'	touch "$SYNC/plant" && pc_wait_file "$SYNC/beside"' \
		'}'
	syn hold '@test "hold.tracer-left: leaves a tracer holding its BPF objects" {' \
		'	"$PC_BIN" trace --ready "$BATS_TEST_TMPDIR/r" -a "usdt:$PC_FIXTURES/fx_gcc_O2_pie:fx:a0" >/dev/null 2>&1 3>&- &' \
		'	pc_wait_file "$BATS_TEST_TMPDIR/r"' \
		'	touch "$SYNC/hold" && pc_wait_file "$SYNC/beside"' \
		'}'
	syn beside '@test "beside.ends-clean: ends while the others hold what they leave" {' \
		'	pc_wait_file "$SYNC/plant" && pc_wait_file "$SYNC/hold"' \
		'	touch "$SYNC/beside"' \
		'}'
	PROBECHECK_JOBS=3 run -1 env -u PROBECHECK_BATS_FILTER "$PROBECHECK_ROOT/harness/run/run-suites" "$BATS_TEST_TMPDIR/r" \
		"$S/plant.bats" "$S/hold.bats" "$S/beside.bats"
	assert_line --regexp "^not ok 1 plant\\.uprobe-planted: plants a uprobe on its own fixture( #|$)"
	assert_output --regexp "uprobe of ours left in uprobe_events: p:pc_plant/ev [^ ]*/plant/fixtures/fx_gcc_O2_pie:0x"
	assert_line --regexp "^not ok 1 hold\\.tracer-left: leaves a tracer holding its BPF objects( #|$)"
	assert_output --regexp "stray process: pid [0-9]+ comm probecheck"
	assert_line --regexp "^ok 1 beside\\.ends-clean: ends while the others hold what they leave( #|$)"
	refute_output --partial "left after the parallel suites"
	[[ ! -e $BATS_TEST_TMPDIR/r/run/sweep ]] || fail "the sweep blamed the run: $(cat "$BATS_TEST_TMPDIR/r/run/sweep")"
	run -0 cat "$PC_TRACEFS/uprobe_events"
	refute_output --partial pc_plant
}

@test "parallel.orphan-map: parallel suites: a BPF map nobody holds fails no suite's test but the run, naming the suites that ran together" {
	prep
	mkdir "$BATS_TEST_TMPDIR/bpffs"
	mount -t bpf bpf "$BATS_TEST_TMPDIR/bpffs"
	pc_on_teardown umount "$BATS_TEST_TMPDIR/bpffs"
	pc_on_teardown rm -f "$BATS_TEST_TMPDIR/bpffs/pc_orphan"
	export BPFFS=$BATS_TEST_TMPDIR/bpffs
	syn pin '@test "pin.map-pinned: pins a map and goes" {' \
		'	bpftool map create "$BPFFS/pc_orphan" type array key 4 value 4 entries 1 name pc_orphan' \
		'}'
	syn clean '@test "clean.leaves-nothing: leaves nothing" {' \
		'	true' \
		'}'
	PC_GRACE=1 PROBECHECK_JOBS=2 run -1 env -u PROBECHECK_BATS_FILTER "$PROBECHECK_ROOT/harness/run/run-suites" "$BATS_TEST_TMPDIR/r" \
		"$S/pin.bats" "$S/clean.bats"
	assert_line --regexp "^ok 1 pin\\.map-pinned: pins a map and goes( #|$)"
	assert_line --regexp "^ok 1 clean\\.leaves-nothing: leaves nothing( #|$)"
	assert_line --partial "left after the parallel suites, owner unknown"
	run -0 cat "$BATS_TEST_TMPDIR/r/run/sweep"
	assert_line --regexp '^suites run together: .*pin\.bats .*clean\.bats|^suites run together: .*clean\.bats .*pin\.bats'
	assert_output --regexp "leftover BPF object: map [0-9]+ pc_orphan"
	run -1 "$PROBECHECK_ROOT/harness/report/report" tally "$BATS_TEST_TMPDIR/r"
	assert_line --partial "left after the parallel suites, owner unknown"
}
