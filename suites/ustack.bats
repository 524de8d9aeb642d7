#!/usr/bin/env bats
# ustack.bats — user stacks (--ustack), judged frame by frame by the
# program they were taken in.  The fixture (fixtures/fx_stack.c) runs a
# fixed chain main -> fs_a -> fs_b -> fs_c (USDT fs:deep) -> fs_leaf, the
# same in a thread (from fs_thr) and in a library dlopened later
# (fsl_run -> fsl_a .. fsl_leaf, fsl:deep), each function in its own
# section, so it logs the exact address range of every function and, at
# every probe point, the chain a stack taken there must begin with.
# harness/tools/stackcmp compares: frame i in chain[i]'s range and named
# chain[i] by the tracer's symbolizer.  A stack may stop early where the
# kernel cannot unwind (no frame pointers); a frame in the wrong place
# never passes.  The events themselves are compared with the oracle too.
#
# The kernel walks user stacks by frame pointer (perf_callchain_user, for
# bpf_get_stack): what it gets wrong at a function's entry and under
# pending return probes are findings by their exact symptom
# (ci/kernel-issues), on the kernels that show them.
# bats file_tags=ustack

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)

# us_requires [func]: the tracer's --ustack, and with "func" its entry and
# return probes (probecheck's need bpf_cookie: before 5.15 they SKIP).
us_requires() {
	requires tracer:ustack tracer:pid
	[[ ${1:-} != func ]] || requires tracer:func_entry tracer:func_return bpf_cookie
}

# us_funcs PROBES: PROBES (",a,b" to append) when the tracer's function
# probes can run here (on 5.10, without bpf_cookie, they cannot): the
# USDT part of a test then still runs.
us_funcs() {
	local c
	for c in func_entry func_return; do pc_tracer_claim "$c" || return 0; done
	pc_cap bpf_cookie || { pc_log "function probes left out: no bpf_cookie"; return 0; }
	echo "$1"
}

# us_builds fp|nofp: the fx_stack builds a test loops over: O0 and O2;
# in the core matrix's guests (PC_VARIANTS set, harness/kernels/matrix)
# O2 only: the compiler is not what differs between kernels.
us_builds() {
	if [[ -n ${PC_VARIANTS:-} ]]; then echo "O2_$1"; else echo "O0_$1 O2_$1"; fi
}

# us_host_only: skip in the matrix's guests a check of the harness or of
# probecheck's option parsing, the same on every kernel (make check runs it).
us_host_only() {
	[[ -z ${PC_VARIANTS:-} ]] || skip "the same on every kernel: make check runs it on the host"
}

# us_file NAME: a stack fixture file of the build, or fail naming it.
us_file() {
	local f=$PC_FIXTURES/$1
	[[ -e $f ]] || { fail "no fixture '$f' (make fixtures)"; return 1; }
	echo "$f"
}

# us_probe BIN LIB NAME: the PROBE argument for the probe point NAME as
# the oracle names it (fs:deep, fs_leaf:entry, fsl_b:return ...): fsl*
# are the library's, the others the executable's.
us_probe() {
	local obj=$1 name=$3
	[[ $name == fsl* ]] && obj=$2
	case $name in
	*:entry | *:return) echo "pid:$obj:$name" ;;
	*) echo "usdt:$obj:$name" ;;
	esac
}

# us_run OUT VARIANT PROBES STEPS...: fx_stack_VARIANT (O0_fp, O2_fp,
# O0_nofp, O2_nofp) runs STEPS ("lib" in a step is its library; "mid":
# held there until the tracer printed every event so far, us_settle) traced
# with --json --args 2 --ustack${US_DEPTH:+=US_DEPTH} at PROBES (comma
# list of oracle names).  US_TARGET: p (default: -p, the fixture held at
# a fifo until attached), follow (-p --follow), c (-c), a (-a, stopped by
# SIGINT once the fixture is gone); US_ATTACH: --attach=US_ATTACH.
# The fixture is held at its end until the tracer has printed an event
# for each of the oracle's at PROBES, so the symbolizer reads a live
# process.  Oracle OUT.o, trace OUT, stderr OUT.err; the fixture must
# exit 0 and the tracer end 0.
us_run() {
	local out=$1 variant=$2 names=$3 bin lib pid st=0 t=${US_TARGET:-p}
	local go done=$1.done fin ready=$1.ready name mid='' gomid
	local -a probes=() steps=() only=() opts=()
	shift 3
	bin=$(us_file "fx_stack_$variant") && lib=$(us_file "libfxstack_$variant.so") || return 1
	for name in ${names//,/ }; do
		probes+=("$(us_probe "$bin" "$lib" "$name")")
		only+=(--only "$name")
	done
	for name in "$@"; do
		if [[ $name == mid ]]; then
			mid=$out.mid gomid=$(pc_fifo "mid.${out##*/}")
			steps+=("ready:$mid" "wait:$gomid")
			continue
		fi
		steps+=("${name//lib:/lib:$lib:}")
	done
	fin=$(pc_fifo "fin.${out##*/}")
	steps+=(maps:now "ready:$done" "wait:$fin")
	opts=(--json --args 2 "--ustack${US_DEPTH:+=$US_DEPTH}" ${US_ATTACH:+--attach="$US_ATTACH"})
	US_ONLY=("${only[@]}")
	if [[ $t == c ]]; then
		pc_trace_bg "$out" "${opts[@]}" -c "$(printf '%q ' "$bin" --oracle "$out.o" "${steps[@]}")" "${probes[@]}"
	else
		go=$(pc_fifo "go.${out##*/}")
		pc_spawn pid "$bin" --oracle "$out.o" "ready:$ready" "wait:$go" "${steps[@]}"
		pc_wait_file "$ready"
		case $t in
		p) pc_trace_bg "$out" "${opts[@]}" -p "$pid" "${probes[@]}" ;;
		follow) pc_trace_bg "$out" "${opts[@]}" --follow -p "$pid" "${probes[@]}" ;;
		a) pc_trace_bg "$out" "${opts[@]}" -a "${probes[@]}" ;;
		*) fail "us_run: US_TARGET '$t'"; return 1 ;;
		esac
		pc_fifo_write "$go" go
	fi
	[[ -z $mid ]] || us_settle "$out" "$names" "$mid" "$gomid"
	pc_wait_file "$done"
	us_printed "$out" "$names" || return 1
	pc_fifo_write "$fin" go
	if [[ $t == c ]]; then
		pc_trace_wait
	else
		wait "$pid" || st=$?
		((st == 0)) || { fail "fixture exit status $st: $(cat "$BATS_TEST_TMPDIR/spawn.$PC_NSPAWN.err")"; return 1; }
		if [[ $t == a ]]; then pc_trace_stop INT; else pc_trace_wait; fi
	fi
	((PC_TRACE_STATUS == 0)) || { fail "tracer exit status $PC_TRACE_STATUS: $(tail -n 3 "$out.err")"; return 1; }
}

# us_printed OUT NAMES: wait until the tracer has printed as many events
# at NAMES as the fixture has logged so far (OUT.o).  The ring's events
# reach its stdout asynchronously; a wait that ends leaves the comparison
# to name what is missing.  A tracer that prints only at its end (not
# live) is not waited for.
us_printed() {
	local n
	n=$(pc_count_events "$1.o" ${2//,/ }) || return 1
	pc_tracer_claim live || return 0
	pc_wait_until "$PC_TIMEOUT" pc_lines_at_least "$1" "$n" ||
		pc_log "us_printed: $(wc -l <"$1") of $n events before the wait ended"
}

# us_settle OUT NAMES MID GO: the fixture at its "mid" step (MID written)
# goes on (GO) once the tracer has printed every event logged so far:
# what it does next (a dlopen) then comes after the tracer has read, and
# symbolized, the events before it, in every run.
us_settle() {
	pc_wait_file "$3"
	us_printed "$1" "$2" || return 1
	pc_fifo_write "$4" go
}

# us_stacks_only ORACLE TRACE [--short-ok]: stackcmp's verdict alone (a
# trace that began or ended mid-run); sets US_CMP.
us_stacks_only() {
	local st=0
	US_CMP=$("$PC_TOOLS/stackcmp" ${3:-} "$1" "$2" 2>&1) || st=$?
	pc_log "stackcmp ${3:-} $1 $2: status $st"$'\n'"$US_CMP"
	# Its counts, for RESULTS.md's stack grid (harness/report/pcreport/stacks.py).
	echo "# ${BATS_TEST_DESCRIPTION%%:*} stacks: $(grep '^stackcmp: [0-9]* events' <<<"$US_CMP" | tail -n 1)" >&3
	((st == 0)) || { printf '%s\n' "$US_CMP" | batslib_decorate "stacks differ from the fixture's ($2)" | fail; return 1; }
}

# us_stacks OUT [--short-ok]: stackcmp's verdict on OUT's stacks; the
# events exact too.  Sets US_CMP (stackcmp's output).
us_stacks() {
	assert_oracle "$1.o" "$1" "${US_ONLY[@]}"
	us_stacks_only "$1.o" "$1" "${2:-}"
}

@test "ustack.usdt-exact: a USDT probe 4 frames deep (O0 and O2, frame pointers kept; O2 alone in the core matrix): every frame in the right function's code, symbolized with it" {
	us_requires
	local v
	for v in $(us_builds fp); do
		us_run "$BATS_TEST_TMPDIR/$v" "$v" fs:deep run:3
		us_stacks "$BATS_TEST_TMPDIR/$v"
	done
}

@test "ustack.return-exact: a return probe, 4 and 2 frames deep (O0 and O2; O2 alone in the core matrix), none other pending: frame 0 is the return address, in the caller, then the caller's callers" {
	us_requires func
	local v f
	# One return probe a run: a second, further up, would be pending
	# (ustack.pending-returns).
	for v in $(us_builds fp); do
		for f in fs_leaf fs_b; do
			us_run "$BATS_TEST_TMPDIR/$v.$f" "$v" "$f:return" run:3
			us_stacks "$BATS_TEST_TMPDIR/$v.$f"
		done
	done
}

@test "ustack.entry-caller: a function-entry probe (O0 and O2; O2 alone in the core matrix), before the function has pushed its frame: frame 0 the function, frame 1 its caller, then theirs" {
	us_requires func
	local v t=$BATS_TEST_TMPDIR/t
	for v in $(us_builds fp); do
		us_run "$t.$v" "$v" fs_leaf:entry,fs_a:entry run:3
		assert_oracle "$t.$v.o" "$t.$v" "${US_ONLY[@]}"
		# The frame-pointer walk starts at %rbp, which at the entry
		# still holds the caller's frame: the caller's own return
		# address (at %rsp) is skipped unless the kernel adds it
		# (cfa7f3d2c526, 6.12).  That is the symptom only if the
		# stacks are exact once each entry's chain lacks its caller.
		if ! us_stacks "$t.$v" 2>/dev/null; then
			jq -c 'if .step == "stack" and (.at | endswith(":entry")) then .chain |= .[0:1] + .[2:] else . end' \
				"$t.$v.o" >"$t.$v.nocaller"
			if "$PC_TOOLS/stackcmp" "$t.$v.nocaller" "$t.$v" >/dev/null; then
				pc_kernel_symptom uprobe-entry-caller-missing \
					"$v: at function-entry probes frame 1 is the caller's caller, every other frame exact: $(grep -m1 'wrong frame 1' <<<"$US_CMP")" \
					"the same chain at a USDT probe and at return probes: ustack.usdt-exact, ustack.return-exact"
			fi
		fi
		us_stacks "$t.$v"
	done
}

@test "ustack.pending-returns: a USDT probe, an entry probe and a return probe below frames with return probes pending (fs_a, fs_b): their return addresses, never the kernel's trampoline" {
	us_requires func
	local t=$BATS_TEST_TMPDIR/t tramp
	us_run "$t" O2_fp fs:deep,fs_leaf:entry,fs_leaf:return,fs_a:return,fs_b:return run:3
	assert_oracle "$t.o" "$t" "${US_ONLY[@]}"
	if ! us_stacks "$t" 2>/dev/null; then
		# The kernel's return trampoline ([uprobes], which the
		# fixture's maps:now step logs) in place of a pending frame's
		# return address (4a365eb8a6d9, 6.11): the symptom only if
		# every wrong frame is that, where fs_a's or main's return
		# address belongs.
		tramp=$(grep 'wrong frame' <<<"$US_CMP") || true
		if [[ -n $tramp ]] && ! grep -v -q 'is in \[uprobes\], wanted \(fs_a\|main\)$' <<<"$tramp"; then
			pc_kernel_symptom uretprobe-stack-trampoline \
				"with return probes pending on fs_a and fs_b: $(head -n 1 <<<"$tramp")" \
				"without them: ustack.usdt-exact, ustack.entry-caller"
		fi
	fi
	us_stacks "$t"
}

@test "ustack.library-chain: the chain in a library dlopened after the tracer attached, under the executable's main: each frame in its own object, with that object's build ID" {
	us_requires func
	requires tracer:usdt_lib
	local t=$BATS_TEST_TMPDIR/t lib id
	us_run "$t" O2_fp fsl:deep,fsl_leaf:entry,fsl_leaf:return lib:2
	us_stacks "$t"
	lib=$(us_file libfxstack_O2_fp.so)
	id=$(readelf -n "$lib" | awk '/Build ID:/ { print $3 }')
	[[ -n $id ]] || { fail "readelf shows no build ID in $lib"; return 1; }
	# Build IDs are probecheck's; another tracer that gives none has its
	# frames judged without them (never a wrong one: stackcmp's objects).
	if pc_tracer_other && ! jq -e 'select(.ustack) | .ustack[] | select(.build_id)' "$t" >/dev/null; then
		id=null
	fi
	# Frame 0 of fsl:deep is fsl_c's, in the library; the last known
	# frame (main) is the executable's.
	run -0 jq -r 'select(.probe == "fsl:deep") | [.ustack[0].obj, (.ustack[0].build_id // "null"), .ustack[4].obj] | @tsv' "$t"
	local exe
	exe=$(us_file fx_stack_O2_fp)
	assert_output "$(printf '%s\t%s\t%s\n%s\t%s\t%s' "$lib" "$id" "$exe" "$lib" "$id" "$exe")"
}

@test "ustack.thread-chain: the chain in a second thread, from its start function: exact" {
	us_requires
	local t=$BATS_TEST_TMPDIR/t
	us_run "$t" O2_fp "fs:deep$(us_funcs ,fs_leaf:return)" thread:3
	us_stacks "$t"
	run -0 jq -r '.tid' "$t"
	[[ $(sort -u <<<"$output" | wc -l) == 1 && $(head -n 1 <<<"$output") != "$(jq -r '.pid' "$t" | head -n 1)" ]] ||
		fail "the events are not all of one thread other than the main one: $output"
}

@test "ustack.every-mode: each attach mode the kernel has (perf, tracefs, multi): USDT, entry and return stacks exact" {
	us_requires
	pc_probecheck_only "--attach=MODE"
	local t=$BATS_TEST_TMPDIR/t mode n=0
	for mode in perf tracefs multi; do
		requires_quietly $(pc_mode_caps "$mode") || { pc_log "$mode: not on this kernel"; continue; }
		US_ATTACH=$mode us_run "$t.$mode" O2_fp "fs:deep$(us_funcs ,fs_leaf:return,fs_c:entry)" run:2
		us_stacks "$t.$mode"
		n=$((n + 1))
	done
	((n > 0)) || skip "no attach mode of perf, tracefs, multi on this kernel"
}

@test "ustack.every-target: the same stacks under -c, -p, -p --follow and -a (each the tracer claims): exact" {
	us_requires
	local t=$BATS_TEST_TMPDIR/t target claim n=0
	for target in c:cmd p:pid follow:follow a:all; do
		claim=${target#*:} target=${target%:*}
		pc_tracer_claim "$claim" || { pc_log "$target: the tracer does not claim $claim"; continue; }
		US_TARGET=$target us_run "$t.$target" O2_fp "fs:deep$(us_funcs ,fs_leaf:return)" run:2 thread:1
		us_stacks "$t.$target"
		n=$((n + 1))
	done
	((n > 0)) || skip "the tracer claims none of cmd, pid, follow, all"
}

@test "ustack.no-frame-pointers: without frame pointers (O0 and O2, executable and library; O2 alone in the core matrix): a stack may stop early, but no frame is ever wrong; frame 0 always right" {
	us_requires
	local v t=$BATS_TEST_TMPDIR/t
	for v in $(us_builds nofp); do
		# The library loaded once the executable's events are printed:
		# a symbolizer must then see a mapping it did not know.
		us_run "$t.$v" "$v" "fs:deep,fsl:deep$(us_funcs ,fs_leaf:entry,fs_leaf:return)" run:3 thread:1 mid lib:1
		us_stacks "$t.$v" --short-ok
		pc_log "$v: $(tail -n 1 <<<"$US_CMP")"
	done
}

@test "ustack.depth-limit: --ustack=2 keeps the 2 innermost frames, exact; --ustack alone keeps the whole chain" {
	# The depth is the size of the tracer's buffer for bpf_get_stack,
	# which every kernel since 4.18 fills the same way.
	us_host_only
	us_requires
	local t=$BATS_TEST_TMPDIR/t
	US_DEPTH=2 us_run "$t.2" O2_fp fs:deep run:2
	us_stacks "$t.2" --short-ok
	run -0 jq -r '.ustack | length' "$t.2"
	assert_output "$(printf '2\n2')"
	us_run "$t.all" O2_fp fs:deep run:2
	us_stacks "$t.all"
}

@test "ustack.bad-depth: --ustack=0, =128, =x and = are usage errors (exit 2) naming the value; nothing attached, the command never runs" {
	pc_probecheck_only "probecheck's --ustack"
	us_host_only
	local fx ran=$BATS_TEST_TMPDIR/ran d
	fx=$(us_file fx_stack_O2_fp)
	for d in 0 128 x ''; do
		run -2 --separate-stderr pc trace --ustack="$d" -c "touch '$ran'" "usdt:$fx:fs:deep"
		[[ $stderr == *"--ustack '$d': not a number of frames 1..127"* ]] || fail "--ustack=$d: $stderr"
	done
	[[ ! -e $ran ]] || fail "the -c command ran"
}

# us_planted T NAME JQ WANT: T's trace through jq JQ (on the slurped
# events: .[] for each) must fail stackcmp with a line matching WANT
# (extended regex).
us_planted() {
	local st=0 out
	jq -c -s "$3" "$1" >"$1.$2"
	out=$("$PC_TOOLS/stackcmp" "$1.o" "$1.$2" 2>&1) || st=$?
	pc_log "planted $2: stackcmp status $st"$'\n'"$out"
	((st == 1)) && grep -Eq "$4" <<<"$out" ||
		{ fail "planted $2: stackcmp status $st, no line matching /$4/: $out"; return 1; }
}

@test "ustack.planted-breaks: a real trace with frame 0 dropped (off by one), the caller dropped, a frame moved to another object, a frame misnamed or emptied: stackcmp fails on each, naming it; the trace untouched passes" {
	us_requires func
	pc_probecheck_only "planted stack bugs on probecheck's trace"
	us_host_only
	local t=$BATS_TEST_TMPDIR/t
	us_run "$t" O2_fp fs:deep,fs_leaf:entry,fsl:deep run:2 lib:1
	us_stacks "$t"
	us_planted "$t" shift '.[] | .ustack |= .[1:]' 'wrong frame 0: .* is in fs_b, wanted fs_c'
	us_planted "$t" nocaller '.[] | .ustack |= .[0:1] + .[2:]' 'wrong frame 1: .* is in fs_[ab], wanted fs_[bc]'
	# fsl:deep's frame 1 (fsl_b's return address) given the executable's
	# fs_b one: a frame from the wrong object.
	us_planted "$t" object '(map(select(.probe == "fs:deep"))[0].ustack[1].addr) as $exe |
		.[] | if .probe == "fsl:deep" then .ustack[1].addr = $exe else . end' \
		'fsl:deep .*wrong frame 1: .* is in fs_b, wanted fsl_b'
	us_planted "$t" misnamed '.[] | .ustack[2].sym = "fs_c"' 'frame 2: 0x[0-9a-f]+ is in fs_[ab], the tracer says fs_c'
	us_planted "$t" otherobj '.[] | .ustack[0].obj = "/usr/lib/x86_64-linux-gnu/libc.so.6"' 'the tracer says object /usr/lib/x86_64-linux-gnu/libc.so.6'
	us_planted "$t" empty '.[] | .ustack = []' 'an empty stack'
}

@test "ustack.attach-churn: stacks at a USDT probe while a second tracer, taking stacks at entry and return probes, attaches and detaches 10 times over 50 calls each (3 times in the core matrix): every event and stack of both exact, the program unharmed" {
	us_requires func
	# The second tracer is stopped once it has printed events.
	requires tracer:live
	local bin t=$BATS_TEST_TMPDIR/t go fin rounds pid i st=0 n=10
	local a_pid a_out
	# In a TCG guest a round is ~15 s: 3 still attach and detach under
	# a steady tracer's stacks, which is what a kernel may get wrong.
	[[ -z ${PC_VARIANTS:-} ]] || n=3
	bin=$(us_file fx_stack_O2_fp)
	go=$(pc_fifo go) fin=$(pc_fifo fin) rounds=$(pc_fifo rounds)
	pc_spawn pid "$bin" --oracle "$t.o" "ready:$t.ready" "wait:$go" "rounds:$rounds:50" maps:now "ready:$t.done" "wait:$fin"
	pc_wait_file "$t.ready"
	pc_trace_bg "$t" --json --args 2 --ustack -p "$pid" "usdt:$bin:fs:deep"
	a_pid=$PC_TRACE_PID a_out=$PC_TRACE_OUT
	pc_fifo_write "$go" go
	for ((i = 0; i < n; i++)); do
		pc_trace_bg "$t.b$i" --json --args 2 --ustack -p "$pid" "pid:$bin:fs_leaf:entry" "pid:$bin:fs_leaf:return"
		pc_fifo_write "$rounds" go
		# Detached after its first events, while the round's calls
		# go on.
		pc_wait_until "$PC_TIMEOUT" pc_lines_at_least "$t.b$i" 2 || fail "second tracer $i: no events"
		pc_trace_stop INT
		((PC_TRACE_STATUS == 0)) || fail "second tracer $i: exit status $PC_TRACE_STATUS"
		# Its events began mid-run: stacks only (the chain is the
		# same at every hit of a probe).
		us_stacks_only "$t.o" "$t.b$i"
	done
	pc_fifo_write "$rounds" end
	pc_wait_file "$t.done"
	PC_TRACE_PID=$a_pid PC_TRACE_OUT=$a_out PC_TRACE_ERR=$a_out.err
	pc_wait_until "$PC_TIMEOUT" pc_lines_at_least "$t" $((n * 50)) || pc_log "$(wc -l <"$t") of $((n * 50)) events before the wait ended"
	pc_fifo_write "$fin" go
	wait "$pid" || st=$?
	((st == 0)) || fail "fixture exit status $st"
	pc_trace_wait
	((PC_TRACE_STATUS == 0)) || fail "steady tracer exit status $PC_TRACE_STATUS"
	US_ONLY=(--only fs:deep)
	us_stacks "$t"
}

@test "ustack.short-lived: -c --follow with PATH '*': a program that has exited before the tracer reads its events: every frame still symbolized (its objects read while it was stopped at its barriers)" {
	us_requires
	requires tracer:follow tracer:star tracer:cmd
	pc_probecheck_only "its symbolizer's reading at barriers"
	local bin t=$BATS_TEST_TMPDIR/t go pid
	bin=$(us_file fx_stack_O2_fp)
	go=$(pc_fifo go)
	pc_trace_bg "$t" --json --args 2 --ustack --follow -c "$bin --oracle $t.o ready:$t.ready wait:$go run:3 thread:1" 'usdt:*:fs:deep'
	pc_wait_file "$t.ready"
	pid=$(cat "$t.ready")
	# The tracer stopped: the program runs, hits and exits unread.
	kill -STOP "$PC_TRACE_PID"
	pc_on_teardown kill -CONT "$PC_TRACE_PID"
	pc_fifo_write "$go" go
	pc_wait_until "$PC_TIMEOUT" us_zombie "$pid" || fail "the program did not exit"
	kill -CONT "$PC_TRACE_PID"
	pc_trace_wait
	((PC_TRACE_STATUS == 0)) || fail "tracer exit status $PC_TRACE_STATUS"
	US_ONLY=(--only fs:deep)
	us_stacks "$t"
}

# us_zombie PID: PID has exited (a zombie: its parent, the stopped tracer,
# has not reaped it).
us_zombie() {
	[[ $(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) == Z ]]
}
