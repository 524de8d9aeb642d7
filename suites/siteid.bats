#!/usr/bin/env bats
# siteid.bats — sites told apart by place, the tracer's way on kernels
# without bpf_cookie (before 5.15: Debian 11's 5.10).  The BPF program
# finds the mapping that holds a hit's address (bpf_find_vma on 5.17+,
# the mm->mmap list before 6.1) and looks (device, inode, offset) up in
# pc_places, instead of reading the attachment's cookie (providers/attach.h,
# pc.bpf.c's pc_place_*).  On a kernel with cookies PROBECHECK_SITE_ID=place
# forces this path, so that it is tested here too; on one without, it is
# the only path and every suite takes it.
#
# bats file_tags=attach

load helpers/common

PC_REQUIRES=(root bpf uprobe_pmu)

FXV=${PC_SITEID_VARIANT:-gcc_O2_pie}

# place: the tracer must tell sites apart by place.
# (multi always has cookies: the tests name perf or tracefs.)
place() { export PROBECHECK_SITE_ID=place; }

# assert_by_place FILE: the tracer's -v stderr says it went by place.
assert_by_place() {
	grep -q "probecheck: debug: attach: sites told apart by place" "$1" ||
		fail "the tracer did not go by place: $(grep 'sites told apart' "$1" || echo 'nothing said')"
}

@test "siteid.every-probe: by place: every fx:* probe exact, perf with gcc -O2 PIE, tracefs with clang -O3 non-PIE" {
	place
	local v fx o t steps mode
	# Each mode with one variant, PIE and not (each site costs ~0.1 s at
	# detach on these paths: make check's time, 2026-11-25).
	for mode in perf tracefs; do
		[[ $mode == tracefs ]] && ! pc_cap tracefs && continue
		v=gcc_O2_pie
		[[ $mode == tracefs ]] && v=clang_O3_nopie
		fx=$(fx_bin "$v")
		o=$BATS_TEST_TMPDIR/o.$mode.$v.json t=$BATS_TEST_TMPDIR/t.$mode.$v.json
		steps=$("$fx" --list | jq -r 'select(.object == "executable" and
			(.probe | startswith("fx:")) and ((.types | index("str")) | not))
			| "fire:\(.probe):2"' | xargs)
		pc trace -v --attach="$mode" --json -c "$fx --oracle $o $steps" \
			"usdt:$fx:fx:*" >"$t" 2>"$t.err" || fail "trace exited $? ($mode, $v): $(tail -n 3 "$t.err")"
		assert_by_place "$t.err"
		assert_oracle "$o" "$t"
	done
}

# traced_p T PRE... -- POST... -- PROBE...: fx_$FXV runs its PRE steps,
# waits while `probecheck trace --attach=perf -p` attaches PROBEs by place
# (trace in T, stderr in T.err), then runs its POST steps; the tracer must
# end with it, exit 0, say it went by place, and match the oracle (T.o).
traced_p() {
	local t=$1 go pre=() post=()
	shift
	while [[ $1 != -- ]]; do pre+=("$1"); shift; done
	shift
	while [[ $1 != -- ]]; do post+=("$1"); shift; done
	shift
	place
	go=$(pc_fifo go)
	pc_spawn P "$(fx_bin "$FXV")" --oracle "$t.o" "${pre[@]}" \
		"ready:$BATS_TEST_TMPDIR/r" "wait:$go" "${post[@]}"
	pc_wait_file "$BATS_TEST_TMPDIR/r"
	pc_trace_bg "$t" -v --attach=perf --json -p "$P" "$@"
	echo >"$go"
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	assert_by_place "$t.err"
	assert_oracle "$t.o" "$t"
}

@test "siteid.exe-and-lib: by place: the executable's and the library's probes of one process, -p, exact" {
	local lib t=$BATS_TEST_TMPDIR/t.json
	lib=$(fx_lib "$FXV")
	traced_p "$t" "dlopen:$lib" -- fire:fx:a3:3 libfire:fxlib:l4:2 fire:fx:a1:1 -- \
		"usdt:$(fx_bin "$FXV"):fx:*" "usdt:$lib:fxlib:*"
}

@test "siteid.star-relink: by place: -p with PATH '*' and a library dlopen'd after attach, closed and opened again: the linker hook goes by place too" {
	local lib t=$BATS_TEST_TMPDIR/t.json
	lib=$(fx_lib "$FXV")
	# A '*' probe must match at attach: fx:a4 in the executable does,
	# fxlib:l4 in the library once it is loaded.  Loaded again, the
	# library's sites are at the same places: their entries must have
	# gone with the dlclose.
	traced_p "$t" -- fire:fx:a4:1 "dlopen:$lib" libfire:fxlib:l4:2 "dlclose:$lib" \
		"dlopen:$lib" libfire:fxlib:l4:1 "dlclose:$lib" -- 'usdt:*:fx*:[al]4'
	grep -q "follow: hooked _dl_debug_state" "$t.err" || fail "no linker hook: $(cat "$t.err")"
	assert_equal "$(pc_count_events "$t.o")" 4
}

@test "siteid.return-refused: by place: a return probe is refused naming the reason (exit 1), nothing left" {
	place
	local fx
	fx=$(fx_bin "$FXV")
	run -1 --separate-stderr pc trace --attach=perf -c "$fx fire:fx:a1:1" "pid:$fx:main:return"
	assert_output ''
	grep -q "a return probe needs bpf_cookie (Linux 5.15+)" <<<"$stderr" ||
		fail "no reason given: $stderr"
}

@test "siteid.shared-place: by place: two sites at one place are refused (they would share an id), nothing left" {
	place
	local fx
	fx=$(fx_bin "$FXV")
	run -1 --separate-stderr pc trace --attach=perf -c "$fx fire:fx:a1:1" "pid:$fx:main:entry" "pid:$fx:main:0x0"
	grep -q "another site of this tracer is at this place: telling them apart needs bpf_cookie" <<<"$stderr" ||
		fail "no reason given: $stderr"
}

@test "siteid.vma-walk-limit: by place through the mm->mmap walk (kernels before 6.1 without bpf_find_vma): a site in the process's mapping number 4095, the last the walk reaches, exact; in number 4096 each hit counted as dropped, never delivered as another site's" {
	pc_probecheck_only "its BPF walk of mm->mmap (PC_MAX_VMAS)"
	place
	local fx o=$BATS_TEST_TMPDIR/o t=$BATS_TEST_TMPDIR/t
	fx=$PC_FIXTURES/fx_stack_O2_fp
	[[ -x $fx ]] || fail "no fixture '$fx' (make fixtures)"
	run -0 --separate-stderr pc trace --json -v -c "$fx --oracle $o.4095 vmas:4095 run:2" "usdt:$fx:fs:deep"
	[[ $stderr == *"mappings found with mm->mmap"* ]] ||
		skip "this kernel finds mappings with bpf_find_vma (5.17+): no walk, no limit"
	grep -q '"step":"vmas".*"index":4095' "$o.4095" || fail "the fixture did not put its code in mapping 4095: $(cat "$o.4095")"
	printf '%s\n' "$output" >"$t.4095"
	assert_oracle "$o.4095" "$t.4095" --only fs:deep
	assert_summary 2
	run -0 --separate-stderr pc trace --json -v -c "$fx --oracle $o.4096 vmas:4096 run:2" "usdt:$fx:fs:deep"
	grep -q '"step":"vmas".*"index":4096' "$o.4096" || fail "the fixture did not put its code in mapping 4096"
	assert_output ""
	assert_summary 2
	((PC_DROPPED == 2)) || fail "the 2 hits past the walk: $PC_DROPPED dropped"
}
