#!/usr/bin/env bats
# nop5.bats — probe sites on 5-byte nops through a process's life.
#
# Since 6.18 an x86 kernel rewrites a uprobe on a 5-byte nop into a CALL
# into a [uprobes-trampoline] page after the site's first hit (before 6.18,
# and for a nop5 across a page boundary, the site stays an int3).  The
# rewrite is undone at detach, but the trampoline page stays, and fork,
# exec and a second tracer meet a site in that state.  Each test here
# records the kernel's choice (the site's bytes, read from outside with
# pc-peek) and checks, whatever it is:
#   - events exact against the fixture's oracle, before and after the
#     first hit, in the parent and in children;
#   - the integrity oracle across every hit (fixtures/fx_integ.c);
#   - the file's bytes at the site after detach;
#   - the process alive where it should be.
# Known kernel problems are reported by their exact symptom
# (ci/kernel-issues): K1 the CALL overwrites the red zone, K2 a child
# forked after optimization dies at its first hit, K4 a seccomp filter
# refusing the trampolines' syscalls kills the program.
# bats file_tags=integrity,nop5

load helpers/common
load helpers/integrity

PC_REQUIRES=(root uprobe_pmu bpf btf)

FXV=${PC_NOP5_VARIANT:-gcc_O2_pie}

# site_info PID SYMBOL: ADDR and FILEB (the file's 5 bytes) of a site.
site_info() {
	FX=$(fx_bin "$FXV")
	ADDR=$(pc_sym_addr "$1" "$FX" "$2")
	FILEB=$(pc_file_bytes "$FX" "$2" 5)
}

# state PID LABEL: STATE = the site's state now (pc_site_state), also
# appended to STATES with the bytes and logged.  Not in a subshell.
state() {
	local out=$BATS_TEST_TMPDIR/state.out
	pc_site_state "$1" "$ADDR" "$FILEB" >"$out" || return 1
	STATE=$(cat "$out")
	STATES+="$2: $STATE ($PC_SITE_BYTES); "
	pc_log "site $ADDR in pid $1, $2: $STATE ($PC_SITE_BYTES)"
}

# split_oracle ORACLE NOTE PRE POST: the lines before and after the note
# line NOTE.
split_oracle() {
	local n
	n=$(grep -n "\"note\":\"$2\"" "$1" | head -n 1 | cut -d: -f1)
	[[ -n $n ]] || { fail "split_oracle: no note '$2' in '$1'"; return 1; }
	head -n $((n - 1)) "$1" >"$3"
	tail -n +$((n + 1)) "$1" >"$4"
}

# optimize_detach MODE SIG SITE PROBE: a live process (-p) hits SITE once,
# then 20 times, then the tracer is stopped with SIG, then 5 more hits.
# Before attach: the file's bytes; attached, before a hit: int3; after
# hits: int3 or a CALL into [uprobes-trampoline]; after SIG: the file's
# bytes.  Events of the traced part exact; no corruption after detach.
optimize_detach() {
	pc_use_mode "$1"
	local sig=$2 sym=$3 probe=$4 d=$BATS_TEST_TMPDIR fx pid s1 s2 s3 f1 f2 f3
	local o=$d/o.json t=$d/t.json
	f1=$(pc_fifo f1) f2=$(pc_fifo f2) f3=$(pc_fifo f3)
	fx=$(fx_bin "$FXV")
	pc_spawn pid "$fx" --oracle "$o" ready:"$d/r1" wait:"$f1" fire:"$probe":1 \
		ready:"$d/r2" wait:"$f2" fire:"$probe":20 ready:"$d/r3" wait:"$f3" \
		note:detached fire:"$probe":5
	pc_wait_file "$d/r1"
	site_info "$pid" "$sym"
	STATES=
	state "$pid" "before attach"; [[ $STATE == file ]] || fail "site before attach: $STATES"
	pc_trace_bg "$t" --attach="$MODE" --json -p "$pid" "usdt:$fx:$probe"
	state "$pid" "attached, no hit yet"; [[ $STATE == int3 ]] || fail "attached site is not an int3: $STATES"
	pc_fifo_write "$f1" go
	pc_wait_file "$d/r2"
	state "$pid" "after hit 1"; s1=$STATE
	pc_fifo_write "$f2" go
	pc_wait_file "$d/r3"
	state "$pid" "after hit 21"; s2=$STATE
	[[ $s1 == int3 || $s1 == call-trampoline ]] || fail "site after its first hit is neither int3 nor a CALL into [uprobes-trampoline]: $STATES"
	[[ $s2 == int3 || $s2 == call-trampoline ]] || fail "site after 21 hits is neither int3 nor a CALL into [uprobes-trampoline]: $STATES"
	# The kernel's choice must be the one `probecheck features` probed
	# (its own nop5 in a child): two readings of one kernel property.
	if pc_cap uprobe_optimize; then
		[[ $s2 == call-trampoline ]] || fail "features says uprobe_optimize=1, yet the site is no CALL after 21 hits: $STATES"
	else
		[[ $s2 == int3 ]] || fail "features says uprobe_optimize=0, yet the site is no int3 after 21 hits: $STATES"
	fi
	pc_trace_stop "$sig"
	[[ $sig == KILL ]] || assert_equal "$PC_TRACE_STATUS" 0
	[[ $sig == KILL && $MODE == tracefs ]] && "$PC_BIN" cleanup >>"$PC_LOG" 2>&1
	state "$pid" "after SIG$sig of the tracer"; s3=$STATE
	pc_trampoline_mapped "$pid" && STATES+="trampoline mapping kept after detach" ||
		STATES+="no trampoline mapping after detach"
	echo "# $MODE $probe: $STATES" >&3
	[[ $s3 == file ]] || fail "site after SIG$sig of the tracer does not hold the file's bytes: $STATES"
	pc_fifo_write "$f3" go
	wait "$pid" || fail "the fixture exited $? (oracle $o)"
	split_oracle "$o" detached "$d/pre.json" "$d/post.json"
	[[ -z $(integ_records "$d/post.json") ]] ||
		fail "traced program corrupted after detach (the site holds the file's bytes): $(integ_records "$d/post.json" | head -n 3)"
	# Events up to a SIGKILL are not all printed: only the integrity.
	[[ $sig == KILL ]] || integ_judge "$d/pre.json" "$t"
	integ_verdict "$d/pre.json" 0 "$MODE -p, SIG$sig: $STATES"
}

@test "nop5.perf-site-lifecycle: perf: a nop5 site is int3 until its first hit, then the kernel's choice, and the file's bytes after SIGINT of the tracer" {
	optimize_detach perf INT fxint_nop5_site fxint:nop5
}

@test "nop5.tracefs-site-lifecycle: tracefs: a nop5 site is int3 until its first hit, then the kernel's choice, and the file's bytes after SIGINT of the tracer" {
	optimize_detach tracefs INT fxint_nop5_site fxint:nop5
}

@test "nop5.multi-site-lifecycle: multi: a nop5 site is int3 until its first hit, then the kernel's choice, and the file's bytes after SIGINT of the tracer" {
	optimize_detach multi INT fxint_nop5_site fxint:nop5
}

@test "nop5.perf-sigkill-restores: perf: SIGKILL of the tracer after the nop5 site was hit restores the file's bytes, and the program runs on unharmed" {
	optimize_detach perf KILL fxint_nop5_site fxint:nop5
}

@test "nop5.tracefs-sigkill-restores: tracefs: SIGKILL of the tracer after the nop5 site was hit restores the file's bytes, and the program runs on unharmed" {
	optimize_detach tracefs KILL fxint_nop5_site fxint:nop5
}

@test "nop5.multi-sigkill-restores: multi: SIGKILL of the tracer after the nop5 site was hit restores the file's bytes, and the program runs on unharmed" {
	optimize_detach multi KILL fxint_nop5_site fxint:nop5
}

@test "nop5.page-cross: a nop5 across a page boundary stays an int3 while traced (the kernel cannot rewrite it atomically)" {
	pc_use_mode auto
	local d=$BATS_TEST_TMPDIR fx pid f
	local o=$d/o.json t=$d/t.json
	fx=$(fx_bin "$FXV")
	f=$(pc_fifo go)
	pc_spawn pid "$fx" --oracle "$o" ready:"$d/r1" wait:"$f" fire:fxint:xpage:20 ready:"$d/r2" wait:"$f"
	pc_wait_file "$d/r1"
	site_info "$pid" fxint_xpage_site
	(( (ADDR & 4095) == 4094 )) || fail "fxint_xpage_site at $ADDR does not cross a page"
	pc_trace_bg "$t" --json -p "$pid" "usdt:$fx:fxint:xpage"
	STATES=
	pc_fifo_write "$f" go
	pc_wait_file "$d/r2"
	state "$pid" "after 20 hits"; [[ $STATE == int3 ]] || fail "page-crossing nop5: $STATES"
	pc_trace_stop INT
	state "$pid" "after detach"; [[ $STATE == file ]] || fail "page-crossing nop5: $STATES"
	pc_fifo_write "$f" go
	wait "$pid"
	assert_oracle "$o" "$t"
}

# fork_after MODE FOLLOW: the parent hits the nop5 site 5 times (the site
# is optimized where the kernel does that), forks a child that hits it
# 1000 times, then hits it 5 more times.  Without --follow only the
# parent's events are expected; with it, the child's too.
fork_after() {
	pc_use_mode "$1"
	local follow=$2 d=$BATS_TEST_TMPDIR fx f pid st child sig ev
	local o=$d/o.json t=$d/t.json x=$d/x.json
	fx=$(fx_bin "$FXV")
	f=$(pc_fifo go)
	pc_trace_bg "$t" --attach="$MODE" --json ${follow:+--follow} \
		-c "$fx --oracle $o fire:fxint:nop5:5 ready:$d/r wait:$f fork [ fire:fxint:nop5:1000 ] fire:fxint:nop5:5" \
		"usdt:$fx:fxint:nop5"
	pc_wait_file "$d/r"
	pid=$(cat "$d/r")
	site_info "$pid" fxint_nop5_site
	STATES=
	state "$pid" "parent, before the fork"; st=$STATE
	pc_fifo_write "$f" go
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	child=$(jq -r 'select(.step == "reap") | .child' "$o")
	sig=$(jq -r 'select(.step == "reap") | .signal // empty' "$o")
	ev=$(jq -r --argjson c "${child:-0}" 'select(.probe and .pid == $c) | .pid' "$o" | wc -l)
	echo "# $MODE ${follow:+--follow }fork: $STATES child $([[ -n $sig ]] && echo "killed by signal $sig" || echo "exited 0"), $ev of 1000 hits" >&3
	if [[ -n $follow ]]; then
		cp "$o" "$x"
	else
		# Not jq: it would round 64-bit arguments.  The child's
		# corruption records stay: it hits the site untraced.
		grep -v "^{\"probe\":\"[^\"]*\",\"pid\":$child," "$o" >"$x" || true
	fi
	integ_judge "$x" "$t"
	INTEG_MORE=()
	if [[ -n $sig ]]; then
		[[ $sig == 11 && $ev == 0 && $st == call-trampoline ]] ||
			fail "the child $child was killed by signal $sig after $ev of 1000 hits (parent's site: $STATES)"
		INTEG_MORE=(-- fork-trampoline "$MODE ${follow:+--follow }-c: the child $child forked after the site became a CALL into [uprobes-trampoline] ($PC_SITE_BYTES) died of SIGSEGV at its first hit (0 of 1000 hits logged)")
	else
		((ev == 1000)) || fail "the child logged $ev of 1000 hits"
	fi
	integ_verdict "$o" 0 "$MODE ${follow:+--follow} fork after optimization: $STATES"
}

@test "nop5.perf-fork-cmd: perf: a child forked after the nop5 site was hit hits it 1000 times unharmed (-c, not followed)" {
	fork_after perf ''
}

@test "nop5.perf-fork-follow: perf: a child forked after the nop5 site was hit hits it 1000 times unharmed (--follow)" {
	fork_after perf 1
}

@test "nop5.tracefs-fork-cmd: tracefs: a child forked after the nop5 site was hit hits it 1000 times unharmed (-c, not followed)" {
	fork_after tracefs ''
}

@test "nop5.tracefs-fork-follow: tracefs: a child forked after the nop5 site was hit hits it 1000 times unharmed (--follow)" {
	fork_after tracefs 1
}

@test "nop5.multi-fork-cmd: multi: a child forked after the nop5 site was hit hits it 1000 times unharmed (-c, not followed)" {
	fork_after multi ''
}

@test "nop5.multi-fork-follow: multi: a child forked after the nop5 site was hit hits it 1000 times unharmed (--follow)" {
	fork_after multi 1
}

# exec_after MODE: 20 hits, exec of the same fixture, 20 hits in the new
# image: all 40 events, each image unharmed.
exec_after() {
	pc_use_mode "$1"
	local fx o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	fx=$(fx_bin "$FXV")
	run -0 --separate-stderr pc trace --attach="$MODE" --json \
		-c "$fx --oracle $o fire:fxint:nop5:20 exec [ fire:fxint:nop5:20 ]" "usdt:$fx:fxint:nop5"
	printf '%s\n' "$output" >"$t"
	assert_summary 40
	integ_judge "$o" "$t"
	integ_verdict "$o" 0 "$MODE: exec after 20 hits, 20 hits in the new image"
}

@test "nop5.perf-exec: perf: exec after the nop5 site was hit: the new image's hits are exact and unharmed" {
	exec_after perf
}

@test "nop5.tracefs-exec: tracefs: exec after the nop5 site was hit: the new image's hits are exact and unharmed" {
	exec_after tracefs
}

@test "nop5.multi-exec: multi: exec after the nop5 site was hit: the new image's hits are exact and unharmed" {
	exec_after multi
}

@test "nop5.two-tracers: two tracers on one nop5 site: each sees every hit while attached; the file's bytes after both detach" {
	requires uprobe_multi
	local d=$BATS_TEST_TMPDIR fx pid f1 f2 f3 p1 p2
	local o=$d/o.json t1=$d/t1.json t2=$d/t2.json
	fx=$(fx_bin "$FXV")
	f1=$(pc_fifo f1) f2=$(pc_fifo f2) f3=$(pc_fifo f3)
	pc_spawn pid "$fx" --oracle "$o" ready:"$d/r1" wait:"$f1" fire:fxint:nop5:20 \
		ready:"$d/r2" wait:"$f2" note:one fire:fxint:nop5:20 ready:"$d/r3" wait:"$f3" \
		note:none fire:fxint:nop5:5
	pc_wait_file "$d/r1"
	site_info "$pid" fxint_nop5_site
	STATES=
	pc_trace_bg "$t1" --attach=perf --json -p "$pid" "usdt:$fx:fxint:nop5"
	p1=$PC_TRACE_PID
	# The second tracer, by hand: pc_trace_bg keeps one tracer.
	"$PC_BIN" trace --attach=multi --json --ready "$d/ready2" -p "$pid" "usdt:$fx:fxint:nop5" \
		>"$t2" 2>"$t2.err" 3>&- &
	p2=$!
	pc_on_teardown kill -KILL "$p2"
	pc_wait_file "$d/ready2"
	pc_fifo_write "$f1" go
	pc_wait_file "$d/r2"
	state "$pid" "two tracers, 20 hits"
	pc_trace_stop INT
	assert_equal "$PC_TRACE_STATUS" 0
	state "$pid" "one tracer left"; [[ $STATE != file ]] || fail "the second tracer's site was removed with the first: $STATES"
	pc_fifo_write "$f2" go
	pc_wait_file "$d/r3"
	state "$pid" "one tracer, 40 hits"
	kill -INT "$p2"
	wait "$p2" || fail "the second tracer exited $?: $(cat "$t2.err")"
	state "$pid" "both detached"; [[ $STATE == file ]] || fail "after both tracers: $STATES"
	echo "# two tracers: $STATES" >&3
	pc_fifo_write "$f3" go
	wait "$pid"
	split_oracle "$o" one "$d/a.json" "$d/rest.json"
	split_oracle "$o" none "$d/ab.json" "$d/post.json"
	[[ -z $(integ_records "$d/post.json") ]] || fail "corrupted after both tracers detached: $(integ_records "$d/post.json" | head -n 2)"
	integ_judge "$d/a.json" "$t1"
	integ_judge "$d/ab.json" "$t2"
	integ_verdict "$d/ab.json" 0 "two tracers (perf, multi) -p on one nop5 site: $STATES"
}

# seccomp_case ACTION: a process whose seccomp filter refuses syscalls 335
# (uretprobe) and 336 (uprobe) is traced with entry and return probes on
# a nop5-entry function and a nop5 USDT site: it must live, and the
# events be exact.  Kernels that let the trampolines' syscalls through
# seccomp (6.14+, 6.12.14+, and 336 since it exists) pass; others kill
# it (K4).
seccomp_case() {
	local a=$1 fx o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json st=0 n stderr
	requires bpf_cookie    # return probes: none by place (before 5.15)
	fx=$(fx_bin "$FXV")
	# Any exit status: a kernel that kills the program makes the tracer
	# exit 1, judged below.
	pc trace --json -c "$fx --oracle $o seccomp:$a fire:fxint:entry5:20 fire:fxint:nop5:20" \
		"pid:$fx:fxint_entry5_fn:entry" "pid:$fx:fxint_entry5_fn:return" "usdt:$fx:fxint:nop5" \
		>"$t" 2>"$t.err" || st=$?
	stderr=$(cat "$t.err")
	if ((st != 0)); then
		n=$(grep -c '"probe":' "$o" || true)
		if grep -qE 'command (was )?killed by signal (SIGSYS|SIGSEGV|31|11)|signal (31|11)' <<<"$stderr"; then
			pc_kernel_symptom seccomp-trampoline "seccomp:$a refusing 335 and 336: the traced program died ($(grep -m1 -E 'signal' <<<"$stderr")) after $n logged hits"
		fi
		fail "probecheck trace exited $st: $stderr"
	fi
	assert_summary 60 "$t.err"
	integ_judge "$o" "$t"
	integ_verdict "$o" 0 "seccomp:$a (refusing syscalls 335 and 336): the program lived through 20 entry/return and 20 nop5 hits"
}

@test "nop5.seccomp-kill: a process whose seccomp filter kills on the uprobe and uretprobe syscalls survives entry, return and nop5 probes" {
	seccomp_case kill
}

@test "nop5.seccomp-errno: a process whose seccomp filter returns EPERM for the uprobe and uretprobe syscalls survives entry, return and nop5 probes" {
	seccomp_case errno
}

# ---------------------------------------------------------------------------
# Natural sys/sdt.h probes whose notes name a nop5 (or nop; nop5): the
# compiler picks the operands, and clang keeps many of them below %rsp
# (the red zone) — exactly where an optimized site's CALL writes.

# nat_specs BIN LIB: SPECS and STEPS1/STEPS3 (fire once / three times) for
# the natural probes without semaphores or strings, executable and library.
nat_specs() {
	local bin=$1 lib=$2 p
	SPECS=() STEPS1="" STEPS3=""
	for p in $("$bin" --list | pc_jsel -w semaphore=false -W probe=fx:str probe -); do
		[[ $p == fx:* ]] || continue
		SPECS+=("usdt:$bin:$p")
		STEPS1+=" fire:$p:1" STEPS3+=" fire:$p:3"
	done
	STEPS1+=" dlopen:$lib" STEPS3+=" dlopen:$lib"
	for p in $("$bin" --list-lib "$lib" | pc_jsel -w semaphore=false -W probe=fxlib:str probe -); do
		[[ $p == fx:* || $p == fxlib:* ]] || continue
		SPECS+=("usdt:$lib:$p")
		STEPS1+=" libfire:$p:1" STEPS3+=" libfire:$p:3"
	done
}

# rz_masks BIN LIB: "--mask PROV:NAME:I" for every operand read below %rsp
# (a negative displacement from %rsp, with or without an index).
rz_masks() {
	local f prov name loc base sema args i op
	for f in "$@"; do
		while read -r prov name loc base sema args; do
			i=0
			for op in $args; do
				i=$((i + 1))
				[[ $op =~ @-[0-9]+\(%rsp[,\)] ]] && printf -- '--mask %s:%s:%d\n' "$prov" "$name" "$i"
			done
		done < <(pc_elf_notes "$f")
	done | sort -u
}

# nat_trace V N OUT: trace every natural probe of variant V fired N times
# (fresh process); OUT.o oracle, OUT.t trace, OUT.err; TST exit status.
nat_trace() {
	local bin lib
	bin=$(fx_bin "$1") && lib=$(fx_lib "$1") || return 1
	nat_specs "$bin" "$lib"
	local -n steps=STEPS$2
	TST=0
	"$PC_BIN" trace --json -c "$bin --oracle $3.o $steps" "${SPECS[@]}" >"$3.t" 2>"$3.err" || TST=$?
}

# nat_variant V: prints one line: "V: exact ...", "V: red-zone ...",
# "V: after-first-hit ..." (differs, or crashes, only after the first
# hits, beyond the operands below %rsp) or "V: FAILED ...".
nat_variant() {
	local v=$1 bin lib d=$BATS_TEST_TMPDIR/$1 out n
	local -a masks
	bin=$(fx_bin "$v") && lib=$(fx_lib "$v") || { echo "$v: FAILED no fixture"; return 0; }
	mkdir -p "$d"
	nat_specs "$bin" "$lib"
	((${#SPECS[@]} > 20)) || { echo "$v: FAILED only ${#SPECS[@]} probes listed"; return 0; }
	# Every site's first hit in a fresh process is an int3 on every kernel.
	nat_trace "$v" 1 "$d/1"
	((TST == 0)) || { echo "$v: FAILED at the first hits: trace exited $TST: $(tail -n 1 "$d/1.err")"; return 0; }
	out=$("$PC_TOOLS/oraclecmp" "$d/1.o" "$d/1.t" 2>&1) ||
		{ echo "$v: FAILED at the first hits: $(tail -n 1 <<<"$out")"; return 0; }
	nat_trace "$v" 3 "$d/3"
	if ((TST == 0)) && out=$("$PC_TOOLS/oraclecmp" "$d/3.o" "$d/3.t" 2>&1); then
		echo "$v: exact ($(tail -n 1 <<<"$out"))"
		return 0
	fi
	[[ $v == *_combo ]] && { echo "$v: FAILED (the note names the nop: never optimized) $(tail -n 1 "$d/3.err") $(tail -n 1 <<<"$out")"; return 0; }
	if ((TST != 0)); then
		echo "$v: after-first-hit: the traced program died ($(grep -m1 'command' "$d/3.err")) after $(grep -c '"probe":' "$d/3.o") of its hits"
		return 0
	fi
	mapfile -t masks < <(rz_masks "$bin" "$lib")
	n=$(grep -c '^missing' <<<"$out" || true)
	# shellcheck disable=SC2068
	if out=$("$PC_TOOLS/oraclecmp" ${masks[@]} "$d/3.o" "$d/3.t" 2>&1); then
		echo "$v: red-zone: $n distinct events differ after the first hits, all exact with the ${#masks[@]} operands below %rsp masked ($(printf '%s ' "${masks[@]}" | sed 's/--mask //g' | cut -c1-120)...)"
	else
		echo "$v: after-first-hit: $n distinct events differ after the first hits, also beyond the operands below %rsp (e.g. -N(%rbp) slots of a frameless leaf): $(tail -n 1 <<<"$out")"
	fi
}

# The same probes built with sys/sdt.h's own nop must be exact, three hits
# each: then what differs in a nop5 build differs because of the site.
twin_exact() {
	local v=${1%_nop5} d=$BATS_TEST_TMPDIR/twin.$1 out
	mkdir -p "$d"
	nat_trace "$v" 3 "$d/3" || { echo "no twin $v"; return 1; }
	((TST == 0)) || { echo "$v (sys/sdt.h's nop): trace exited $TST: $(tail -n 1 "$d/3.err")"; return 1; }
	out=$("$PC_TOOLS/oraclecmp" "$d/3.o" "$d/3.t" 2>&1) || { echo "$v (sys/sdt.h's nop): $(tail -n 1 <<<"$out")"; return 1; }
}

@test "nop5.natural-probes: natural probes whose notes name a nop5 or nop; nop5: arguments exact in every variant, executable and library" {
	local v line failed='' why
	local -a found=()
	while read -r v; do
		line=$(nat_variant "$v")
		echo "# $line" >&3
		pc_log "$line"
		case $line in
		*": FAILED"*) failed+=$'\n'"$line" ;;
		*": red-zone"* | *": after-first-hit"*)
			if why=$(twin_exact "$v"); then
				found+=("$line; the same probes with sys/sdt.h's nop: exact")
			else
				failed+=$'\n'"$line; and the twin: $why"
			fi ;;
		esac
	done < <(cat "$PC_FIXTURES/variants-nop.txt")
	[[ -z $failed ]] || fail "variants failed:$failed"
	((${#found[@]} == 0)) && return 0
	pc_cap uprobe_optimize ||
		fail "nop5 builds differ after the first hits on a kernel that does not optimize nop5 sites:$(printf '\n%s' "${found[@]}")"
	pc_kernel_symptom redzone-call "nop5 builds of the natural probes: the first hit of every site exact, the same probes with sys/sdt.h's nop exact; after the kernel rewrote the sites into CALLs:" "${found[@]}"
}
