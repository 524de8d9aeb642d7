#!/usr/bin/env bats
# attach.bats — attaching is all-or-nothing.  When the kernel refuses one
# site part way through an attach, every site attached before it is undone:
# no uprobe left (site bytes back to the file's, semaphores back to 0 in the
# still-running process), no BPF object, no tracer left holding perf fds,
# and an error that names the site and the reason.
#
# The refusal is the kernel's own: fx_attachfail has two notes (fxatt:b_dup1,
# fxatt:b_dup2) on the SAME nop with DIFFERENT semaphores, and two uprobes at
# one (inode, offset) with different ref_ctr_offset fail with EINVAL.  Sites
# attach in (path, provider, name, pc) order, so fxatt:a_good and
# fxatt:b_dup1 are attached when fxatt:b_dup2 fails; fxatt:z_after is never
# reached.
#
# So that the suite cannot pass on an attach that never did anything, two
# tests stop the tracer under strace at a chosen perf_event_open (a SIGSTOP
# injected on that call is delivered when it returns, before the tracer
# acts on its result) and look at the fixture from outside while the tracer
# is frozen there: semaphores set and breakpoints (0xcc) in place.
#
# Addresses come from readelf and /proc/PID/maps (pc_elf_notes,
# pc_runtime_addr), never from the tracer under test.
#
# Every trace here passes --attach=perf: the strace stops count
# perf_event_open calls and the messages are the per-site ones.  The same
# promise in every attach mode: suites/attachpaths.bats.
# bats file_tags=attach

load helpers/common

PC_REQUIRES=(root uprobe_pmu ref_ctr_offset bpf)

# fxa: FXA (the executable, provider fxatt) and FXALIB (the library,
# provider fxattlib), or SKIP with what is missing.
fxa() {
	FXA=$PC_FIXTURES/fx_attachfail
	FXALIB=$PC_FIXTURES/libfx_attachfail.so
	requires "file:$FXA" "file:$FXALIB"
	declare -gA SITE=() SEMA=() FSITE=() FFILE=()
}

# fxa_addrs PID FILE PROV: for each note of PROV in FILE, add SITE[p] and
# SEMA[p] (runtime addresses in PID), FSITE[p] (link-time address of the
# site) and FFILE[p] (FILE), p = PROV:NAME, from readelf.
fxa_addrs() {
	local pid=$1 file=$2 pv=$3 prov name loc base sema args n=0
	while read -r prov name loc base sema args; do
		[[ $prov == "$pv" ]] || continue
		n=$((n + 1))
		FSITE[$pv:$name]=$loc
		FFILE[$pv:$name]=$file
		SITE[$pv:$name]=$(pc_runtime_addr "$pid" "$file" "$loc")
		SEMA[$pv:$name]=$(pc_runtime_addr "$pid" "$file" "$sema")
	done < <(pc_elf_notes "$file")
	[[ $n == 4 ]] || fail "'$file': expected 4 $pv notes, readelf found $n"
	[[ ${SITE[$pv:b_dup1]} == "${SITE[$pv:b_dup2]}" ]] ||
		fail "'$file': $pv:b_dup1 and b_dup2 should share a site: ${SITE[$pv:b_dup1]} ${SITE[$pv:b_dup2]}"
	[[ ${SEMA[$pv:b_dup1]} != "${SEMA[$pv:b_dup2]}" ]] ||
		fail "'$file': $pv:b_dup1 and b_dup2 should have different semaphores"
}

# file_bytes FILE VADDR N: the N bytes at link-time VADDR in FILE, as
# pc-peek --bytes prints them ("90 c3 .."): the original instructions.
file_bytes() {
	local off= kind foff vaddr _pa fsz _rest
	while read -r kind foff vaddr _pa fsz _rest; do
		[[ $kind == LOAD ]] || continue
		if (($2 >= vaddr && $2 < vaddr + fsz)); then
			off=$(($2 - vaddr + foff))
			break
		fi
	done < <(readelf -lW "$1")
	[[ -n $off ]] || fail "file_bytes: $2 is in no PT_LOAD of '$1'"
	od -An -tx1 -v -j "$off" -N "$3" "$1" | xargs
}

# watch_all PID: semaphores must be 0, site bytes what they are now (the
# file's), at teardown while PID lives.  Call before any attach.
watch_all() {
	local p
	for p in "${!SITE[@]}"; do
		pc_sema_watch "$1" "${SEMA[$p]}" 0
		pc_bytes_watch "$1" "${SITE[$p]}" 5
	done
}

# assert_untouched PID [GLOB]: now, every semaphore (of probes matching
# GLOB) reads 0 and every site holds the bytes of the file.
assert_untouched() {
	local p got want
	for p in "${!SITE[@]}"; do
		[[ $p == ${2:-*} ]] || continue
		got=$(pc_peek "$1" "${SEMA[$p]}" 2)
		[[ $got == 0 ]] || fail "semaphore of $p in pid $1 is $got, expected 0"
		got=$(pc_peek_bytes "$1" "${SITE[$p]}" 5)
		want=$(file_bytes "${FFILE[$p]}" "${FSITE[$p]}" 5)
		[[ $got == "$want" ]] || fail "site of $p in pid $1 holds '$got', the file has '$want'"
	done
}

# traced_stopped N FXPID PROBE...: `probecheck trace -p FXPID PROBE...`
# under strace, frozen by a SIGSTOP injected on its Nth perf_event_open:
# the call completes, the tracer stops before acting on its result.
# Returns once it is stopped; sets ST_PID (strace, a spawned session),
# ST_TRACEE (probecheck), ST_LOG (strace's log), ST_ERRF (tracer's stderr).
traced_stopped() {
	local n=$1 pid=$2 i
	shift 2
	ST_LOG=$BATS_TEST_TMPDIR/strace.$n.log
	ST_ERRF=$BATS_TEST_TMPDIR/strace.$n.err
	# The tracer's stderr (strace passes it through) to a file of ours.
	pc_spawn ST_PID bash -c 'exec 2>"$1"; shift; exec "$@"' _ "$ST_ERRF" \
		strace "${PC_STRACE_ENV[@]}" -o "$ST_LOG" -e trace=perf_event_open \
		-e inject=perf_event_open:signal=SIGSTOP:when="$n" \
		"$PC_BIN" trace --attach=perf -p "$pid" "$@"
	for ((i = 0; i < PC_TIMEOUT * 100; i++)); do
		grep -q -- '--- stopped by SIGSTOP ---' "$ST_LOG" 2>/dev/null && break
		pc_inv_alive "$ST_PID" || break
		pc_nap 0.01	# polling strace's log for the stop, bounded
	done
	_pc_log_file "strace" "$ST_LOG"
	grep -q -- '--- stopped by SIGSTOP ---' "$ST_LOG" ||
		fail "tracer under strace did not stop at perf_event_open #$n: $(cat "$ST_ERRF")"
	ST_TRACEE=$(cat "/proc/$ST_PID/task/$ST_PID/children")
	[[ $ST_TRACEE =~ ^[0-9]+\ ?$ ]] || fail "cannot find strace's tracee: '$ST_TRACEE'"
	ST_TRACEE=${ST_TRACEE% }
}

# traced_resume: let the frozen tracer go on; ST_STATUS its exit status,
# ST_ERR its stderr.  A tracer that goes on tracing instead of failing
# gets SIGINT after PC_TIMEOUT: a failure, not a hang.
traced_resume() {
	local i
	kill -CONT "$ST_TRACEE"
	for ((i = 0; i < PC_TIMEOUT * 100; i++)); do
		pc_inv_alive "$ST_PID" || break
		pc_nap 0.01	# no event to wait on for strace's child, bounded
	done
	if pc_inv_alive "$ST_PID"; then
		pc_log "tracer $ST_TRACEE still running after ${PC_TIMEOUT}s: SIGINT"
		kill -INT "$ST_TRACEE"
	fi
	ST_STATUS=0
	wait "$ST_PID" || ST_STATUS=$?
	ST_ERR=$(cat "$ST_ERRF")
	pc_log "tracer under strace: exit status $ST_STATUS"
	_pc_log_file "strace" "$ST_LOG"
	_pc_log_file "tracer stderr" "$ST_ERRF"
}

@test "attach.refused-partway: a site the kernel refuses part way: exit 1 naming site and reason; earlier sites undone in the live process" {
	fxa
	local R1=$BATS_TEST_TMPDIR/r1 R2=$BATS_TEST_TMPDIR/r2 F1 F2 pid oracle p
	F1=$(pc_fifo f1)
	F2=$(pc_fifo f2)
	oracle=$BATS_TEST_TMPDIR/oracle.json
	pc_spawn pid "$FXA" --oracle "$oracle" sema "ready:$R1" "wait:$F1" sema fire "ready:$R2" "wait:$F2"
	pc_wait_file "$R1"
	fxa_addrs "$pid" "$FXA" fxatt
	watch_all "$pid"

	run -1 --separate-stderr pc_bounded trace --attach=perf --json -p "$pid" "usdt:$FXA:fxatt:*"
	assert_output ""
	# The message names the object, the site's probe and the kernel's reason.
	[[ $stderr == *"'$FXA'"*"(fxatt:b_dup2)"*"invalid argument"* ]] ||
		fail "error does not name path, site and reason: $stderr"
	[[ $stderr != *"fxatt:z_after"* ]] || fail "attach went on past the failing site: $stderr"

	# Nothing of ours anywhere: uprobes, BPF objects, processes.
	pc_check_clean
	assert_untouched "$pid"
	# And the fixture's own view, after the failed attach: nothing enabled,
	# nothing fires.
	pc_fifo_write "$F1" go
	pc_wait_file "$R2"
	for p in a_good b_dup1 b_dup2 z_after; do
		assert_equal "$(sema_seen "$oracle" "fxatt:$p")" "0 0"
	done
	assert_equal "$(pc_count_events "$oracle")" 0
}

@test "attach.earlier-attached: the failed attach had really attached the earlier sites: semaphores 1 and int3 at the failure, all undone after" {
	requires cmd:strace
	fxa
	local R1=$BATS_TEST_TMPDIR/r1 R2=$BATS_TEST_TMPDIR/r2 F1 F2 pid oracle p
	F1=$(pc_fifo f1)
	F2=$(pc_fifo f2)
	oracle=$BATS_TEST_TMPDIR/oracle.json
	pc_spawn pid "$FXA" --oracle "$oracle" "ready:$R1" "wait:$F1" sema fire "ready:$R2" "wait:$F2"
	pc_wait_file "$R1"
	fxa_addrs "$pid" "$FXA" fxatt
	watch_all "$pid"

	# Freeze the tracer right after its third perf_event_open returned.
	traced_stopped 3 "$pid" "usdt:$FXA:fxatt:*"
	# That was b_dup2's, refused; a_good's and b_dup1's succeeded before it.
	run -0 grep -c '^perf_event_open(' "$ST_LOG"
	assert_output 3
	run -0 grep '^perf_event_open(' "$ST_LOG"
	assert_line --index 0 --regexp '\) = [0-9]+$'
	assert_line --index 1 --regexp '\) = [0-9]+$'
	assert_line --index 2 --regexp '\) = -1 EINVAL '
	# Frozen at the failure: the kernel has set the semaphores of the two
	# attached sites and put breakpoints at both sites.
	assert_equal "$(pc_peek "$pid" "${SEMA[fxatt:a_good]}" 2)" 1
	assert_equal "$(pc_peek "$pid" "${SEMA[fxatt:b_dup1]}" 2)" 1
	assert_equal "$(pc_peek "$pid" "${SEMA[fxatt:b_dup2]}" 2)" 0
	assert_equal "$(pc_peek "$pid" "${SEMA[fxatt:z_after]}" 2)" 0
	assert_equal "$(pc_peek_bytes "$pid" "${SITE[fxatt:a_good]}" 1)" cc
	assert_equal "$(pc_peek_bytes "$pid" "${SITE[fxatt:b_dup1]}" 1)" cc

	traced_resume
	assert_equal "$ST_STATUS" 1
	[[ $ST_ERR == *"(fxatt:b_dup2)"*"invalid argument"* ]] ||
		fail "error does not name the site and the reason: $ST_ERR"
	# No further attach after the failure.
	run -0 grep -c '^perf_event_open(' "$ST_LOG"
	assert_output 3
	pc_check_clean
	assert_untouched "$pid"
	pc_fifo_write "$F1" go
	pc_wait_file "$R2"
	for p in a_good b_dup1 b_dup2 z_after; do
		assert_equal "$(sema_seen "$oracle" "fxatt:$p")" 0
	done
	assert_equal "$(pc_count_events "$oracle")" 0
}

@test "attach.later-object: an object mapped later fails part way (--follow, '*'): only its sites are undone, the tracer goes on" {
	fxa
	local F1 F2 pid oracle err p
	F1=$(pc_fifo f1)
	F2=$(pc_fifo f2)
	oracle=$BATS_TEST_TMPDIR/oracle.json
	pc_spawn pid "$FXA" --oracle "$oracle" "ready:$BATS_TEST_TMPDIR/r0" \
		"wait:$F1" "dlopen:$FXALIB" lib:sema lib:fire fire "ready:$BATS_TEST_TMPDIR/r1" \
		"wait:$F2" lib:sema fire "ready:$BATS_TEST_TMPDIR/r2" "wait:$(pc_fifo hold)"
	pc_wait_file "$BATS_TEST_TMPDIR/r0"
	fxa_addrs "$pid" "$FXA" fxatt
	pc_sema_watch "$pid" "${SEMA[fxatt:z_after]}" 0
	# fxatt:z_after attaches at once; fxattlib:* only matches in the library
	# the fixture dlopens later, whose b_dup2 the kernel refuses.
	pc_trace_bg "$BATS_TEST_TMPDIR/trace.json" --attach=perf --json --follow -p "$pid" \
		"usdt:*:fxattlib:*" "usdt:*:fxatt:z_after"
	assert_equal "$(pc_peek "$pid" "${SEMA[fxatt:z_after]}" 2)" 1
	pc_fifo_write "$F1" go
	pc_wait_file "$BATS_TEST_TMPDIR/r1"
	fxa_addrs "$pid" "$FXALIB" fxattlib
	# The library's attach failed, and the tracer says where and why ...
	err=$(cat "$PC_TRACE_OUT.err")
	[[ $err == *"'$FXALIB'"*"(fxattlib:b_dup2)"*"invalid argument"* ]] ||
		fail "no error naming the library's site and the reason: $err"
	# ... undid the library's sites attached before the failure ...
	assert_untouched "$pid" "fxattlib:*"
	for p in a_good b_dup1 b_dup2 z_after; do
		pc_sema_watch "$pid" "${SEMA[fxattlib:$p]}" 0
		pc_bytes_watch "$pid" "${SITE[fxattlib:$p]}" 5
	done
	# ... and goes on tracing what it had attached before.
	pc_inv_alive "$PC_TRACE_PID" || fail "the tracer ended after the library's attach failed"
	assert_equal "$(pc_peek "$pid" "${SEMA[fxatt:z_after]}" 2)" 1
	pc_fifo_write "$F2" go
	pc_wait_file "$BATS_TEST_TMPDIR/r2"
	pc_trace_stop
	assert_equal "$PC_TRACE_STATUS" 0
	for p in a_good b_dup1 b_dup2 z_after; do
		assert_equal "$(sema_seen "$oracle" "fxattlib:$p")" "0 0"
	done
	assert_equal "$(pc_count_events "$oracle" "fxattlib:*")" 0
	assert_summary 2 "$PC_TRACE_OUT.err"
	assert_oracle "$oracle" "$PC_TRACE_OUT"
	assert_equal "$(pc_peek "$pid" "${SEMA[fxatt:z_after]}" 2)" 0
}

@test "attach.control-alone: control: each of the colliding probes attaches alone, sets its own semaphore and fires as the oracle says" {
	fxa
	local F pid oracle p i=0 R
	F=$(pc_fifo f)
	oracle=$BATS_TEST_TMPDIR/oracle.json
	pc_spawn pid "$FXA" --oracle "$oracle" "ready:$BATS_TEST_TMPDIR/r0" \
		"wait:$F" sema fire "ready:$BATS_TEST_TMPDIR/r1" \
		"wait:$F" sema fire "ready:$BATS_TEST_TMPDIR/r2" \
		"wait:$F" sema fire "ready:$BATS_TEST_TMPDIR/r3" "wait:$F"
	pc_wait_file "$BATS_TEST_TMPDIR/r0"
	fxa_addrs "$pid" "$FXA" fxatt
	watch_all "$pid"
	for p in a_good b_dup1 b_dup2; do
		pc_trace_bg "$BATS_TEST_TMPDIR/t.$p.json" --attach=perf --json -p "$pid" "usdt:$FXA:fxatt:$p"
		i=$((i + 1))
		pc_fifo_write "$F" go
		pc_wait_file "$BATS_TEST_TMPDIR/r$i"
		pc_trace_stop
		assert_equal "$PC_TRACE_STATUS" 0
		assert_summary 1 "$PC_TRACE_OUT.err"
		assert_oracle "$oracle" "$PC_TRACE_OUT" --only "fxatt:$p"
	done
	# Each semaphore was 1 exactly while its own probe was traced.
	assert_equal "$(sema_seen "$oracle" fxatt:a_good)" "1 0 0"
	assert_equal "$(sema_seen "$oracle" fxatt:b_dup1)" "0 1 0"
	assert_equal "$(sema_seen "$oracle" fxatt:b_dup2)" "0 0 1"
	assert_equal "$(sema_seen "$oracle" fxatt:z_after)" "0 0 0"
	assert_untouched "$pid"
}

@test "attach.target-exits: a traced pid that exits during attach: exit 1, 'exited during attach', nothing left" {
	requires cmd:strace
	fxa
	local pid
	pc_spawn pid "$FXA" "ready:$BATS_TEST_TMPDIR/r" "wait:$(pc_fifo f)"
	pc_wait_file "$BATS_TEST_TMPDIR/r"
	fxa_addrs "$pid" "$FXA" fxatt
	# Freeze the tracer after its first site (a_good) is attached ...
	traced_stopped 1 "$pid" "usdt:$FXA:fxatt:a_good" "usdt:$FXA:fxatt:z_after"
	assert_equal "$(pc_peek "$pid" "${SEMA[fxatt:a_good]}" 2)" 1
	# ... the process exits (and is reaped) before the second ...
	pc_kill "$pid" KILL
	assert_equal "$PC_KILL_STATUS" 137
	traced_resume
	# ... which the kernel refuses: the tracer says so and undoes the first.
	assert_equal "$ST_STATUS" 1
	[[ $ST_ERR == *"pid $pid exited during attach"* ]] ||
		fail "no clear error for the vanished pid: $ST_ERR"
	run -0 grep -c '^perf_event_open(' "$ST_LOG"
	assert_output 2
	pc_check_clean
}

@test "attach.cmd-never-runs: -c: when the attach fails the command never runs" {
	fxa
	local R=$BATS_TEST_TMPDIR/ran
	run -1 --separate-stderr pc trace --attach=perf -c "$FXA ready:$R" "usdt:$FXA:fxatt:*"
	[[ $stderr == *"(fxatt:b_dup2)"*"invalid argument"* ]] ||
		fail "error does not name the site and the reason: $stderr"
	[[ ! -e $R ]] || fail "the command ran although the attach failed"
	pc_check_clean
}

# The perf and tracefs modes hold a perf event per site: a system's soft
# descriptor limit (1024 by default) is raised to the hard one, and a
# hard limit too low is said for what it is.  60 sites of fx_bench_sites.
@test "attach.nofile-limit: perf: a soft descriptor limit below what the sites need is raised to the hard limit; a hard limit too low: exit 1 naming RLIMIT_NOFILE, nothing left" {
	pc_probecheck_only "its descriptor limit handling"
	local fx probe
	fx=$(private fx_bench_sites "$PC_FIXTURES/fx_bench_sites")
	probe="usdt:$fx:bm:s1[0-5][0-9]"
	run -0 --separate-stderr bash -c 'ulimit -Sn 40 && ulimit -Hn 200 && exec "$@"' - \
		"$PC_BIN" trace -v --attach=perf -c "$fx" "$probe"
	[[ $stderr == *"attach: 60 sites in"* ]] || fail "60 sites not attached: $stderr"
	run -1 --separate-stderr bash -c 'ulimit -n 40 && exec "$@"' - \
		"$PC_BIN" trace --attach=perf -c "$fx" "$probe"
	[[ $stderr == *"too many open files: this attach mode holds descriptors per site and RLIMIT_NOFILE is 40"*"--attach=multi"* ]] ||
		fail "the limit is not named: $stderr"
	pc_check_clean
}
