#!/usr/bin/env bats
# integrity.bats — tracing must leave the traced program unharmed.
#
# The fxint probes (fixtures/fx_integ.c) are leaf functions in assembly
# that load every general register, the flags (with DF), %xmm0..15, all
# 128 bytes below %rsp and a stack frame with known values, run a probe
# site, and log a corruption record for every difference afterwards;
# fxint:result is a compiled leaf function whose red-zone locals live
# across a nop5 probe, checked against the untraced computation.  The
# comparison (oraclecmp) fails on any corruption record, so every suite
# that compares an oracle judges integrity too; here the sites are the
# forms a kernel may treat differently:
#   nop1     sys/sdt.h's nop: int3, emulated
#   nop5     optimized since 6.18 into a CALL into [uprobes-trampoline]
#   combo    nop; nop5 with the note at the nop (libbpf usdt.h, 2026)
#   xpage    a nop5 across a page boundary: never optimized
#   entry5   a function that begins with a nop5 (pid provider entry)
# The known kernel problem (ci/kernel-issues K1: the CALL overwrites
# -8..-32(%rsp)) is recognised by its exact signature and reported as
# that finding; any other corruption, and any wrong event, is a failure.
# bats file_tags=integrity

load helpers/common
load helpers/integrity

PC_REQUIRES=(root uprobe_pmu bpf btf)

FXV=${PC_INTEGRITY_VARIANT:-gcc_O2_pie}

# run_fx MODE ORACLE TRACE 'STEPS' SPEC...: trace the fixture's STEPS with
# -c in MODE; the tracer must exit 0 and account for every oracle event.
run_fx() {
	local mode=$1 o=$2 t=$3 steps=$4 fx n
	shift 4
	fx=$(fx_bin "$FXV")
	run -0 --separate-stderr pc trace --attach="$mode" --json \
		-c "$fx --oracle $o $steps" "$@"
	printf '%s\n' "$output" >"$t"
	n=$(grep -c '"probe":' "$o" || true)
	assert_summary "$n"
}

@test "integrity.oracle-planted: the integrity oracle reports a planted corruption of each kind: %rbx, %xmm7, flags, red zone, frame, result" {
	pc_probecheck_only "a self-check of the fixture's corruption oracle"
	local fx o t k out
	fx=$(fx_bin "$FXV")
	t=$BATS_TEST_TMPDIR/empty.json
	: >"$t"
	o=$BATS_TEST_TMPDIR/clean.json
	"$fx" --oracle "$o" fire:fxint:nop1:2 fire:fxint:nop5:2 fire:fxint:result:2
	[[ -z $(integ_records "$o") ]] || fail "untraced fixture logged corruption: $(integ_records "$o")"
	for k in rbx:%rbx xmm7:%xmm7 flags:rflags rz-8:redzone frame8:stack result:result; do
		o=$BATS_TEST_TMPDIR/plant.${k%%:*}.json
		FX_PLANT=${k%%:*} "$fx" --oracle "$o" fire:fxint:nop1:2 fire:fxint:result:1
		run -1 "$PC_TOOLS/oraclecmp" "$o" "$t"
		assert_output --partial "traced program corrupted: {\"corrupt\":"
		assert_output --partial "\"what\":\"${k#*:}\""
	done
	# The same through a traced run and the helper every suite uses.
	o=$BATS_TEST_TMPDIR/traced.json
	t=$BATS_TEST_TMPDIR/traced.trace
	run -0 --separate-stderr pc trace --json -c "env FX_PLANT=rbx $fx --oracle $o fire:fxint:nop1:3" \
		"usdt:$fx:fxint:nop1"
	printf '%s\n' "$output" >"$t"
	run ! assert_oracle "$o" "$t"
	assert_output --partial 'traced program corrupted'
	# A planted red-zone write at -8 alone is not the kernel's signature.
	run -1 integ_redzone_call "$BATS_TEST_TMPDIR/plant.rz-8.json"
	assert_output --partial 'not the optimized-CALL signature'
}

# never_optimized MODE: nop1, xpage and combo (at the note) in the
# executable and in a library named by path before it is loaded.
never_optimized() {
	pc_use_mode "$1"
	local fx lib o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json p steps='' specs=()
	fx=$(fx_bin "$FXV") lib=$(fx_lib "$FXV")
	for p in nop1 xpage combo; do
		steps+=" fire:fxint:$p:20"
		specs+=("usdt:$fx:fxint:$p")
	done
	steps+=" dlopen:$lib"
	for p in nop1 xpage combo; do
		steps+=" libfire:fxlibint:$p:20"
		specs+=("usdt:$lib:fxlibint:$p")
	done
	run_fx "$MODE" "$o" "$t" "$steps" "${specs[@]}"
	assert_oracle "$o" "$t"
}

@test "integrity.perf-nop-forms: perf: nop1, page-crossing nop5 and nop;nop5 sites leave the program unharmed, events exact (executable and library)" {
	requires tracer:usdt tracer:usdt_lib tracer:cmd
	never_optimized perf
}

@test "integrity.tracefs-nop-forms: tracefs: nop1, page-crossing nop5 and nop;nop5 sites leave the program unharmed, events exact (executable and library)" {
	requires tracer:usdt tracer:usdt_lib tracer:cmd
	never_optimized tracefs
}

@test "integrity.multi-nop-forms: multi: nop1, page-crossing nop5 and nop;nop5 sites leave the program unharmed, events exact (executable and library)" {
	requires tracer:usdt tracer:usdt_lib tracer:cmd
	never_optimized multi
}

# form_sites FORM: the FORM site (nop5, nop10) of the executable and the
# library, 20 hits each, in the mode pc_use_mode chose.
form_sites() {
	local f=$1 fx lib o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	fx=$(fx_bin "$FXV") lib=$(fx_lib "$FXV")
	run_fx "$MODE" "$o" "$t" "fire:fxint:$f:20 dlopen:$lib libfire:fxlibint:$f:20" \
		"usdt:$fx:fxint:$f" "usdt:$lib:fxlibint:$f"
	integ_judge "$o" "$t"
	integ_verdict "$o" 0 "$MODE: $f sites of the executable and of a library, 20 hits each"
}

# nop5_sites MODE: the nop5 site of the executable and the library.
nop5_sites() {
	pc_use_mode "$1"
	form_sites nop5
}

@test "integrity.perf-nop5: perf: nop5 sites leave the program unharmed, events exact (executable and library)" {
	requires tracer:usdt tracer:usdt_lib tracer:cmd
	nop5_sites perf
}

@test "integrity.tracefs-nop5: tracefs: nop5 sites leave the program unharmed, events exact (executable and library)" {
	requires tracer:usdt tracer:usdt_lib tracer:cmd
	nop5_sites tracefs
}

@test "integrity.multi-nop5: multi: nop5 sites leave the program unharmed, events exact (executable and library)" {
	requires tracer:usdt tracer:usdt_lib tracer:cmd
	nop5_sites multi
}

# rz_operands MODE: a nop5 probe whose operands are -8, -16, -40, -128
# and 8(%rsp).  The first hit of a fresh process is an int3 on every
# kernel: it must be exact.  Later hits: exact, or (K1) every argument but
# the two the CALL overwrote exact and the corruption its signature.
rz_operands() {
	pc_use_mode "$1"
	local fx o=$BATS_TEST_TMPDIR/o1.json t=$BATS_TEST_TMPDIR/t1.json
	fx=$(fx_bin "$FXV")
	run_fx "$MODE" "$o" "$t" "fire:fxint:rzarg:1" "usdt:$fx:fxint:rzarg"
	assert_oracle "$o" "$t"
	o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	run_fx "$MODE" "$o" "$t" "fire:fxint:rzarg:20" "usdt:$fx:fxint:rzarg"
	if "$PC_TOOLS/oraclecmp" "$o" "$t" >/dev/null 2>&1; then
		return 0
	fi
	integ_judge "$o" "$t" --mask fxint:rzarg:1 --mask fxint:rzarg:2
	[[ -n $INTEG_CORRUPT ]] || fail "the events differ in -8(%rsp) or -16(%rsp), but the program was not corrupted: the tracer misread them"
	integ_verdict "$o" 0 "$MODE: arguments 8@-8(%rsp) and 8@-16(%rsp) read the CALL's return address and the pushed %rcx after the first hit; 8@-40(%rsp), 8@-128(%rsp), 8@8(%rsp) exact at every hit; the first hit of a fresh process exact"
}

@test "integrity.perf-redzone-operands: perf: red-zone operands at a nop5 site are read exactly" {
	requires tracer:usdt tracer:usdt_args tracer:cmd
	rz_operands perf
}

@test "integrity.tracefs-redzone-operands: tracefs: red-zone operands at a nop5 site are read exactly" {
	requires tracer:usdt tracer:usdt_args tracer:cmd
	rz_operands tracefs
}

@test "integrity.multi-redzone-operands: multi: red-zone operands at a nop5 site are read exactly" {
	requires tracer:usdt tracer:usdt_args tracer:cmd
	rz_operands multi
}

# entry5 MODE: pid entry and return probes on a function that begins with
# a nop5: the six argument registers at entry, %rax at return, and every
# register, flag and SSE register unchanged across the call.
entry5() {
	requires bpf_cookie    # return probes: none by place (before 5.15)
	pc_use_mode "$1"
	local fx o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	fx=$(fx_bin "$FXV")
	run_fx "$MODE" "$o" "$t" "fire:fxint:entry5:20" \
		"pid:$fx:fxint_entry5_fn:entry" "pid:$fx:fxint_entry5_fn:return"
	assert_oracle "$o" "$t"
}

@test "integrity.perf-pid-nop5-entry: perf: pid entry and return probes on a function that begins with a nop5 leave the program unharmed" {
	requires tracer:func_entry tracer:func_return tracer:cmd
	entry5 perf
}

@test "integrity.tracefs-pid-nop5-entry: tracefs: pid entry and return probes on a function that begins with a nop5 leave the program unharmed" {
	requires tracer:func_entry tracer:func_return tracer:cmd
	entry5 tracefs
}

@test "integrity.multi-pid-nop5-entry: multi: pid entry and return probes on a function that begins with a nop5 leave the program unharmed" {
	requires tracer:func_entry tracer:func_return tracer:cmd
	entry5 multi
}

@test "integrity.libbpf-nop-nop5: a tracer attaching at the nop5 of nop;nop5, as libbpf 1.7 does, leaves the program unharmed" {
	requires tracer:func_offset tracer:cmd
	local fx off
	local o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json x=$BATS_TEST_TMPDIR/x.json
	fx=$(fx_bin "$FXV")
	off=$(pc_sym_off "$fx" fxint_combo_nop5 fxint_combo)
	run_fx auto "$o" "$t" "fire:fxint:combo:20" "pid:$fx:fxint_combo:$off"
	# The pid provider names the site FUNCTION:0xOFF and reads no
	# arguments: the expected events are the oracle's hits renamed.
	# sed, not jq: jq would round 64-bit values.
	sed -E "s/^\{\"probe\":\"fxint:combo\",(\"pid\":[0-9]+,\"tid\":[0-9]+),\"args\":\[[^]]*\]\}\$/{\"probe\":\"fxint_combo:$off\",\1,\"args\":[]}/" \
		"$o" >"$x"
	integ_judge "$x" "$t"
	INTEG_RET=site+6 integ_verdict "$x" 0 "uprobe at the nop5 (+1) of nop;nop5, 20 hits"
}

# result_variant V: fxint:result in variant V: exact events, and where
# its result differed, the site's state (read while the process waits).
# Prints "V: ok", "V: corrupted at SITESTATE: ..." or "V: FAILED ...".
result_variant() {
	local v=$1 fx o t r f pid addr file state out
	fx=$(fx_bin "$v") || { echo "$v: FAILED no fixture"; return 0; }
	o=$BATS_TEST_TMPDIR/$v.o.json t=$BATS_TEST_TMPDIR/$v.t.json
	r=$BATS_TEST_TMPDIR/$v.ready f=$(pc_fifo "$v.go")
	"$PC_BIN" trace --json --ready "$BATS_TEST_TMPDIR/$v.tr" \
		-c "$fx --oracle $o fire:fxint:result:4 ready:$r wait:$f" "usdt:$fx:fxint:result" \
		>"$t" 2>"$t.err" &
	local tr=$!
	if ! pc_wait_file "$r" >/dev/null 2>&1; then
		kill -KILL "$tr" 2>/dev/null; wait "$tr" 2>/dev/null
		echo "$v: FAILED the fixture never got ready: $(cat "$t.err")"; return 0
	fi
	pid=$(cat "$r")
	addr=$(pc_note_addr "$pid" "$fx" fxint:result)
	state=$(pc_site_state "$pid" "$addr" "0f 1f 44 00 00")
	echo go >"$f"
	wait "$tr" || { echo "$v: FAILED tracer exit $?: $(cat "$t.err")"; return 0; }
	out=$("$PC_TOOLS/oraclecmp" "$o" "$t" 2>&1) && { echo "$v: ok (site $state)"; return 0; }
	if [[ $(tail -n 1 <<<"$out") != "oraclecmp: CORRUPTED: "* ]]; then
		echo "$v: FAILED $(tail -n 1 <<<"$out")"; return 0
	fi
	if [[ -n $(integ_records "$o" | awk '$4 != "result"') ]]; then
		echo "$v: FAILED corruption other than the result: $(integ_records "$o" | head -n 1)"; return 0
	fi
	echo "$v: corrupted at a $state site: $(integ_records "$o" | wc -l) result records in 4 calls, e.g. $(integ_records "$o" | head -n 1)"
}

@test "integrity.leaf-result: a compiled leaf function's own result across a nop5 probe is unharmed, in every variant" {
	pc_probecheck_only "runs the tracer binary itself with --ready"
	local v line failed='' notcall=''
	local -a corrupt=()
	while read -r v; do
		line=$(result_variant "$v")
		echo "# $line" >&3
		pc_log "$line"
		case $line in
		*": FAILED"*) failed+=$'\n'"$line" ;;
		*": corrupted at a call-trampoline site"*) corrupt+=("$line") ;;
		*": corrupted"*) notcall+=$'\n'"$line" ;;
		esac
	done < <(fx_variants)
	[[ -z $failed ]] || fail "variants failed:$failed"
	[[ -z $notcall ]] || fail "traced program corrupted at a site that is not an optimized CALL:$notcall"
	((${#corrupt[@]} == 0)) || pc_kernel_symptom redzone-call "${corrupt[@]}"
}

@test "integrity.fentry-nop5: pid entry and return probes on compiler-made nop5 entries (gcc -pg -mfentry -mnop-mcount): exact, the entry's state recorded" {
	requires tracer:func_entry tracer:func_return tracer:cmd
	requires bpf_cookie    # return probes: none by place (before 5.15)
	local o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json d=$BATS_TEST_TMPDIR fx f pid addr file
	fx=$PC_FIXTURES/fx_pidfn_O2_nopie_nop5
	requires "file:$fx"
	f=$(pc_fifo go)
	pc_trace_bg "$t" --json --args 8 -c "$fx --oracle $o add8:50 ready:$d/r wait:$f add8:50" \
		"pid:$fx:pf_add8:entry" "pid:$fx:pf_add8:return"
	pc_wait_file "$d/r"
	pid=$(cat "$d/r")
	addr=$(pc_sym_addr "$pid" "$fx" pf_add8)
	file=$(pc_file_bytes "$fx" pf_add8 5)
	[[ $file == "0f 1f 44 00 "* ]] || fail "pf_add8 does not begin with a nop5 in '$fx': $file"
	echo "# pf_add8 entry after 50 calls: $(pc_site_state "$pid" "$addr" "$file")" >&3
	pc_fifo_write "$f" go
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	assert_oracle "$o" "$t"
}

@test "integrity.clobber-caught: a tracer that changes the program's state at the site (a BPF program writing %rbx or -48(%rsp)) is caught, and is not the kernel's signature" {
	pc_probecheck_only "a self-check with a planted clobbering tracer"
	local d=$BATS_TEST_TMPDIR fx pid f off cp st=0 what
	local o=$BATS_TEST_TMPDIR/o.json e=$BATS_TEST_TMPDIR/empty.json
	fx=$(fx_bin "$FXV")
	f=$(pc_fifo go)
	: >"$e"
	pc_spawn pid "$fx" --oracle "$o" ready:"$d/r" wait:"$f" fire:fxint:nop1:5
	pc_wait_file "$d/r"
	off=$(pc_sym_fileoff "$fx" fxint_nop1_site)
	"$PC_TOOLS/pc-clobber" --ready "$d/cr" "$pid" "$fx" "$off" 2>"$d/cr.err" 3>&- &
	cp=$!
	pc_on_teardown kill -KILL "$cp"
	while [[ ! -e $d/cr ]] && kill -0 "$cp" 2>/dev/null; do
		pc_nap 0.01	# polling its ready file while it lives
	done
	if [[ ! -e $d/cr ]]; then
		wait "$cp" || st=$?
		((st == 3)) && skip "$(cat "$d/cr.err")"
		fail "pc-clobber exited $st: $(cat "$d/cr.err")"
	fi
	what=$(cat "$d/cr")
	echo "# pc-clobber writes $what" >&3
	pc_fifo_write "$f" go
	wait "$pid"
	kill -INT "$cp"
	wait "$cp" || fail "pc-clobber exited $?: $(cat "$d/cr.err")"
	run -1 "$PC_TOOLS/oraclecmp" "$o" "$e"
	assert_output --partial 'traced program corrupted'
	if [[ $what == %rbx ]]; then
		assert_output --partial '"what":"%rbx"'
	else
		assert_output --partial '"what":"redzone","where":"-48(%rsp)"'
	fi
	run -1 integ_redzone_call "$o"
	assert_output --partial 'not the optimized-CALL signature'
}

# nop10_sites MODE: the 10-byte cs nopw site of the executable and the
# library.  Kernels whose decoder refuses it SKIP (probe_nop10); where it
# is probed (7.3 optimizes it into lea -0x80(%rsp),%rsp; call, stepping
# over the red zone) every register, flag and the red zone must survive.
nop10_sites() {
	pc_use_mode "$1"
	requires probe_nop10
	form_sites nop10
}

@test "integrity.perf-nop10: perf: nop10 (cs nopw) sites leave the program unharmed, events exact (executable and library)" {
	requires tracer:usdt tracer:usdt_lib tracer:cmd
	nop10_sites perf
}

@test "integrity.tracefs-nop10: tracefs: nop10 (cs nopw) sites leave the program unharmed, events exact (executable and library)" {
	requires tracer:usdt tracer:usdt_lib tracer:cmd
	nop10_sites tracefs
}

@test "integrity.multi-nop10: multi: nop10 (cs nopw) sites leave the program unharmed, events exact (executable and library)" {
	requires tracer:usdt tracer:usdt_lib tracer:cmd
	nop10_sites multi
}
