#!/usr/bin/env bats
# attachpaths.bats — the core conformance checks in every attach path the
# kernel has.  `trace --attach=MODE`:
#   perf     one fd-based uprobe (perf_event_open, uprobe PMU) per site
#   tracefs  one named uprobe_events entry per site, opened as a tracepoint
#   multi    one uprobe_multi BPF link per object and direction (Linux 6.6)
# The default, auto, is multi where `probecheck features` finds a working
# uprobe_multi (for -p/-c also uprobe_multi_pid), else perf; every trace
# prints the path it used ("probecheck: attach: MODE"), asserted here.
#
# Each check runs once per path; a path the kernel lacks SKIPs with the
# reason `probecheck features` gave.  Test names start with the path.
#   arguments     every fx:* probe of two variants, exact against the oracle
#   semaphores    0 before, 1 while traced (-p), 0 after
#   all-or-nothing  fx_attachfail refuses part way (two notes on one nop
#                 with different semaphores): exit 1, every semaphore and
#                 site byte as in the file, in one object and across two
#   dlopen        a library named by PATH before it is loaded (-p)
#   --follow      a fork child's events under its own pid
#   -p            only that process: its threads all traced, another
#                 instance's semaphore stays 0 and it gives no events.
#                 With a pid, uprobe_multi before Linux 6.10 filters by
#                 thread (the pid's main thread), so hits of the process's
#                 other threads are lost: on such a kernel
#                 (uprobe_multi_pid=0) the multi check runs without
#                 threads, and auto picks perf for -p/-c.
# bats file_tags=attachpaths

load helpers/common

PC_REQUIRES=(root bpf ref_ctr_offset)

FXV=${PC_ATTACHPATHS_VARIANT:-gcc_O2_pie}

# assert_path [FILE]: the tracer said it used MODE (FILE, else $stderr).
assert_path() {
	local text
	text=$(if (($#)); then cat "$1"; else printf '%s\n' "$stderr"; fi)
	grep -qx "probecheck: attach: $MODE" <<<"$text" ||
		fail "expected 'probecheck: attach: $MODE' on the tracer's stderr: $text"
}

# ---------------------------------------------------------------------------

check_arguments() {
	pc_use_mode "$1"
	local v fx o t steps vs='gcc_O2_pie clang_O3_nopie'
	# Every variant is arguments.bats' (in the default mode); here the
	# perf and tracefs paths take one each, PIE and not, so that both
	# variants meet a per-site perf path (~0.1 s a site at detach):
	# make check's time (2026-11-25).
	case $MODE in
	perf) vs=clang_O3_nopie ;;
	tracefs) vs=gcc_O2_pie ;;
	esac
	for v in $vs; do
		fx=$(fx_bin "$v")
		o=$BATS_TEST_TMPDIR/o.$v.json t=$BATS_TEST_TMPDIR/t.$v.json
		# Every fx:* probe without string arguments, twice.
		steps=$("$fx" --list | jq -r 'select(.object == "executable" and
			(.probe | startswith("fx:")) and ((.types | index("str")) | not))
			| "fire:\(.probe):2"' | xargs)
		run -0 --separate-stderr pc trace --attach="$MODE" --json \
			-c "$fx --oracle $o $steps" "usdt:$fx:fx:*"
		printf '%s\n' "$output" >"$t"
		assert_oracle "$o" "$t"
		assert_summary "$(pc_count_events "$o")"
		assert_path
	done
}

check_semaphores() {
	pc_use_mode "$1"
	local fx a pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json R=$BATS_TEST_TMPDIR/r
	local f1 f2
	fx=$(fx_bin "$FXV")
	f1=$(pc_fifo f1)
	f2=$(pc_fifo f2)
	pc_spawn pid "$fx" --oracle "$o" sema:fx:sem_a "ready:${R}0" \
		"wait:$f1" sema:fx:sem_a fire:fx:sem_a:2 "ready:${R}1" \
		"wait:$f2" sema:fx:sem_a "ready:${R}2"
	pc_wait_file "${R}0"
	a=$(sema_addr "$pid" "$fx" fx:sem_a)
	pc_sema_watch "$pid" "$a" 0
	assert_equal "$(pc_peek "$pid" "$a" 2)" 0
	pc_trace_bg "$t" --attach="$MODE" --json -p "$pid" "usdt:$fx:fx:sem_a"
	assert_equal "$(pc_peek "$pid" "$a" 2)" 1
	pc_fifo_write "$f1" go
	pc_wait_file "${R}1"
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	assert_path "$t.err"
	assert_summary 2 "$t.err"
	assert_equal "$(pc_peek "$pid" "$a" 2)" 0
	pc_fifo_write "$f2" go
	pc_wait_file "${R}2"
	assert_oracle "$o" "$t"
	# before; after the attach; at each of 2 fires; after the detach.
	assert_equal "$(sema_seen "$o" fx:sem_a)" "0 1 1 1 0"
}

# fxa: FXA / FXALIB (fx_attachfail, provider fxatt / fxattlib).
fxa() {
	FXA=$PC_FIXTURES/fx_attachfail
	FXALIB=$PC_FIXTURES/libfx_attachfail.so
	requires "file:$FXA" "file:$FXALIB"
}

# fxa_watch PID: every fxatt semaphore must read 0 and every site hold
# its file bytes, now (assert_untouched) and at teardown.
fxa_watch() {
	local prov name loc base sema args
	FXA_SITES=()
	while read -r prov name loc base sema args; do
		[[ $prov == fxatt ]] || continue
		FXA_SITES+=("$name $(pc_runtime_addr "$1" "$FXA" "$sema") $(pc_runtime_addr "$1" "$FXA" "$loc")")
	done < <(pc_elf_notes "$FXA")
	((${#FXA_SITES[@]} == 4)) || fail "'$FXA': expected 4 fxatt notes: ${FXA_SITES[*]}"
	assert_untouched "$1"
	local s w
	for s in "${FXA_SITES[@]}"; do
		read -r name sema loc <<<"$s"
		pc_sema_watch "$1" "$sema" 0
		pc_bytes_watch "$1" "$loc" 5
	done
	FXA_BYTES=()
	for s in "${FXA_SITES[@]}"; do
		read -r name sema loc <<<"$s"
		w=$(pc_peek_bytes "$1" "$loc" 5)
		[[ $w != cc* ]] || fail "fxatt:$name holds a breakpoint before any attach"
		FXA_BYTES+=("$w")
	done
}

# assert_untouched PID: every fxatt semaphore 0, every site byte as before.
assert_untouched() {
	local i s name sema loc got
	for i in "${!FXA_SITES[@]}"; do
		read -r name sema loc <<<"${FXA_SITES[$i]}"
		got=$(pc_peek "$1" "$sema" 2)
		[[ $got == 0 ]] || fail "semaphore of fxatt:$name in pid $1 is $got, expected 0"
		[[ -z ${FXA_BYTES[$i]:-} ]] && continue
		got=$(pc_peek_bytes "$1" "$loc" 5)
		[[ $got == "${FXA_BYTES[$i]}" ]] ||
			fail "site of fxatt:$name in pid $1 holds '$got', before the attach '${FXA_BYTES[$i]}'"
	done
}

check_all_or_nothing() {
	pc_use_mode "$1"
	fxa
	local pid R=$BATS_TEST_TMPDIR/r
	pc_spawn pid "$FXA" "ready:$R" "wait:$(pc_fifo f)"
	pc_wait_file "$R"
	fxa_watch "$pid"
	# One object: a_good and b_dup1 attach (perf, tracefs) or are in the
	# same link (multi) when b_dup2 is refused.
	run -1 --separate-stderr pc trace --attach="$MODE" -p "$pid" "usdt:$FXA:fxatt:*"
	[[ $stderr == *fx_attachfail*semaphore* ]] ||
		fail "the error names neither the object nor the semaphore clash: $stderr"
	assert_untouched "$pid"
	# Two objects: the executable's a_good is attached (its own link in
	# multi) before the library's sites are refused.
	run -1 --separate-stderr pc trace --attach="$MODE" -p "$pid" \
		"usdt:$FXA:fxatt:a_good" "usdt:$FXALIB:fxattlib:*"
	[[ $stderr == *libfx_attachfail.so*semaphore* ]] ||
		fail "the error names neither the library nor the semaphore clash: $stderr"
	assert_untouched "$pid"
}

check_dlopen() {
	pc_use_mode "$1"
	local a pid go o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json R=$BATS_TEST_TMPDIR/r
	a=$(fx_lib "$FXV")
	go=$(pc_fifo go)
	pc_spawn pid "$(fx_bin "$FXV")" --oracle "$o" "ready:$R" "wait:$go" \
		"dlopen:$a" libsema:fxlib:sem libfire:fxlib:sem:2 libfire:fxlib:l4:3
	pc_wait_file "$R"
	run -1 grep -qF "$a" "/proc/$pid/maps"
	pc_trace_bg "$t" --attach="$MODE" --json -p "$pid" "usdt:$a:fxlib:l4" "usdt:$a:fxlib:sem"
	pc_fifo_write "$go" go
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	assert_path "$t.err"
	assert_oracle "$o" "$t"
	assert_summary 5 "$t.err"
	assert_equal "$(sema_seen "$o" fxlib:sem)" "1 1 1"
}

check_follow() {
	pc_use_mode "$1"
	local fx o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	fx=$(private fx_follow "$(fx_bin "$FXV")")
	run -0 --separate-stderr pc trace --attach="$MODE" --json --follow \
		-c "$fx --oracle $o fire:fx:a1:1 fork [ fire:fx:a1:2 fire:fx:sem_a:1 ] fire:fx:a2:1" \
		"usdt:$fx:fx:a1" "usdt:$fx:fx:a2" "usdt:$fx:fx:sem_a"
	printf '%s\n' "$output" >"$t"
	assert_oracle "$o" "$t"
	assert_summary 5
	assert_path
	# The child's events are its own: two pids in the trace.
	assert_equal "$(jq -r .pid "$t" | sort -u | wc -l)" 2
}

check_pid_only() {
	pc_use_mode "$1"
	local fx p q ap aq fp fq op=$BATS_TEST_TMPDIR/op.json oq=$BATS_TEST_TMPDIR/oq.json
	local t=$BATS_TEST_TMPDIR/t.json R=$BATS_TEST_TMPDIR/r
	local -a threads
	threads=(threads:3 '[' fire:fx:a1:1 ']')
	if [[ $MODE == multi ]] && ! pc_cap uprobe_multi_pid; then
		# Documented, not hidden: the kernel would lose these hits.
		pc_log "uprobe_multi_pid=0: a pid-filtered uprobe_multi link sees only the main thread; checked without threads"
		threads=()
	fi
	fx=$(private fx_p "$(fx_bin "$FXV")")
	fp=$(pc_fifo fp)
	fq=$(pc_fifo fq)
	pc_spawn p "$fx" --oracle "$op" "ready:${R}p" "wait:$fp" "${threads[@]}" \
		fire:fx:a1:1 fire:fx:sem_a:1
	pc_spawn q "$fx" --oracle "$oq" sema:fx:sem_a "ready:${R}q" "wait:$fq" \
		sema:fx:sem_a fire:fx:a1:1 fire:fx:sem_a:1 "ready:${R}q2"
	pc_wait_file "${R}p"
	pc_wait_file "${R}q"
	ap=$(sema_addr "$p" "$fx" fx:sem_a)
	aq=$(sema_addr "$q" "$fx" fx:sem_a)
	pc_sema_watch "$q" "$aq" 0
	pc_trace_bg "$t" --attach="$MODE" --json -p "$p" "usdt:$fx:fx:a1" "usdt:$fx:fx:sem_a"
	assert_equal "$(pc_peek "$p" "$ap" 2)" 1
	assert_equal "$(pc_peek "$q" "$aq" 2)" 0
	pc_fifo_write "$fq" go
	pc_wait_file "${R}q2"
	pc_fifo_write "$fp" go
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	assert_path "$t.err"
	# P exactly (its threads included); Q: never set, no events.
	assert_oracle "$op" "$t"
	assert_equal "$(sema_seen "$oq" fx:sem_a)" "0 0 0"
	run -1 grep -q "\"pid\":$q," "$t"
}

@test "attachpaths.perf-arguments: perf: arguments of every fx:* probe exact against the oracle, clang -O3 non-PIE" { check_arguments perf; }
@test "attachpaths.tracefs-arguments: tracefs: arguments of every fx:* probe exact against the oracle, gcc -O2 PIE" { check_arguments tracefs; }
@test "attachpaths.multi-arguments: multi: arguments of every fx:* probe exact against the oracle, two variants" { check_arguments multi; }

@test "attachpaths.perf-semaphores: perf: semaphore 0 before attach, 1 while traced, 0 after detach" { check_semaphores perf; }
@test "attachpaths.tracefs-semaphores: tracefs: semaphore 0 before attach, 1 while traced, 0 after detach" { check_semaphores tracefs; }
@test "attachpaths.multi-semaphores: multi: semaphore 0 before attach, 1 while traced, 0 after detach" { check_semaphores multi; }

@test "attachpaths.perf-all-or-nothing: perf: all-or-nothing on fx_attachfail, in one object and across two: semaphores and site bytes back" { check_all_or_nothing perf; }
@test "attachpaths.tracefs-all-or-nothing: tracefs: all-or-nothing on fx_attachfail, in one object and across two: semaphores and site bytes back" { check_all_or_nothing tracefs; }
@test "attachpaths.multi-all-or-nothing: multi: all-or-nothing on fx_attachfail, in one object and across two: semaphores and site bytes back" { check_all_or_nothing multi; }

@test "attachpaths.perf-dlopen: perf: a library named by PATH, dlopen'd after attach (-p): events and semaphore from the dlopen on" { check_dlopen perf; }
@test "attachpaths.tracefs-dlopen: tracefs: a library named by PATH, dlopen'd after attach (-p): events and semaphore from the dlopen on" { check_dlopen tracefs; }
@test "attachpaths.multi-dlopen: multi: a library named by PATH, dlopen'd after attach (-p): events and semaphore from the dlopen on" { check_dlopen multi; }

@test "attachpaths.perf-follow: perf: --follow -c: a fork child's events exact under its own pid" { check_follow perf; }
@test "attachpaths.tracefs-follow: tracefs: --follow -c: a fork child's events exact under its own pid" { check_follow tracefs; }
@test "attachpaths.multi-follow: multi: --follow -c: a fork child's events exact under its own pid" { check_follow multi; }

@test "attachpaths.perf-pid-only: perf: -p traces only that process, every thread; another instance's semaphore stays 0" { check_pid_only perf; }
@test "attachpaths.tracefs-pid-only: tracefs: -p traces only that process, every thread; another instance's semaphore stays 0" { check_pid_only tracefs; }
@test "attachpaths.multi-pid-only: multi: -p traces only that process, every thread; another instance's semaphore stays 0" { check_pid_only multi; }
