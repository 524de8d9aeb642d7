#!/usr/bin/env bats
# arguments.bats — argument values, event for event: every probe of the
# fixtures fires under `probecheck trace --json -c`, and the events must be
# exactly the fixture's oracle log (multiset of pid, tid, probe, args;
# compared by build/tools/oraclecmp, never through jq, which turns 64-bit
# integers into doubles).  Every build variant (compiler x -O level x PIE)
# writes its own operands for the same probes, so the natural probes run in
# all of them; the hand-written operand forms (provider fxform) are the
# same text in every variant but sit at different addresses.
#
# Every trace also has to account for every hit:
#   delivered + dropped == hits == number of oracle events.
#
# bats 1.8 gathers tests by reading this file, so one @test cannot become
# one test per variant at run time: the variant tests loop over
# build/fixtures/variants.txt, print one "# variant ...: ok/FAILED" line per
# variant and fail naming every variant that failed.
#
# Detaching costs ~0.1 s per probe site on some kernels (serialised RCU
# syncs): each trace names only the probes its test needs.
# bats file_tags=arguments

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)

# ---------------------------------------------------------------------------
# Fixtures: fx_variants, fx_bin, fx_lib (helpers/common.bash) name the
# build variants (gcc_O2_pie ...), their executables and libraries.

# ---------------------------------------------------------------------------
# Tracing and judging without stopping at the first failure, so the
# variant loop can report every variant.

# trace_fx OUT ARGS...: `probecheck trace --json ARGS`, stdout to OUT,
# stderr to OUT.err; TRACE_ST gets the exit status.  Never fails.
trace_fx() {
	local out=$1
	shift
	TRACE_ST=0
	pc trace --json "$@" >"$out" 2>"$out.err" || TRACE_ST=$?
	return 0
}

# judge ORACLE TRACE [WANT]: print what is wrong, nothing if all is right:
# the tracer exited 0, the trace equals the oracle, the summary says
# delivered + dropped == hits == oracle events (WANT: also == WANT), and
# delivered == the number of lines printed.
judge() {
	local oracle=$1 trace=$2 want=${3:-} out st=0 n sum lines
	# The last lines of stderr: another tracer's can be thousands.
	((TRACE_ST == 0)) || echo "$(pc_tracer) trace exited $TRACE_ST: $(grep -v '^probecheck: summary' "$trace.err" | tail -n 5)"
	out=$(pc_oraclecmp "$oracle" "$trace" 2>&1) || st=$?
	((st == 0)) || printf 'oracle and trace differ:\n%s\n' "$out"
	n=$(grep -c '"probe":' "$oracle" || true)
	[[ -z $want || $n == "$want" ]] || echo "the fixture fired $n events, expected $want"
	[[ $out != "oraclecmp: 0 events match" ]] || echo "no events on either side"
	# The tracer's own account of hits, when it keeps one.
	pc_tracer_claim accounting || return 0
	sum=$(grep '^probecheck: summary: ' "$trace.err" || true)
	if [[ ! $sum =~ ^probecheck:\ summary:\ delivered=([0-9]+)\ dropped=([0-9]+)\ hits=([0-9]+)(\ unreadable=[0-9]+\ truncated=[0-9]+)?$ ]]; then
		echo "no well-formed summary line on stderr: '$sum'"
		return 0
	fi
	local d=${BASH_REMATCH[1]} x=${BASH_REMATCH[2]} h=${BASH_REMATCH[3]}
	((d + x == h)) || echo "summary: delivered $d + dropped $x != hits $h"
	((h == n)) || echo "summary: hits $h != $n oracle events"
	lines=$(wc -l <"$trace")
	((d == lines)) || echo "summary: delivered $d but $lines lines printed"
	return 0
}

# assert_judged ORACLE TRACE [WANT]: judge, failing with what is wrong.
assert_judged() {
	local why
	why=$(judge "$@")
	[[ -z $why ]] || { printf '%s\n' "$why" | batslib_decorate "trace is wrong" | fail; return 1; }
	pc_log "judged: $("$PC_TOOLS/oraclecmp" "$1" "$2" 2>&1)"
}

# ---------------------------------------------------------------------------
# Every variant.

# trace_group V ID LABEL BIN SPECS STEPS: one trace of BIN running STEPS
# (one step a line) for SPECS (one probe a line), each probe fired 3
# times; prints what is wrong, naming the group by LABEL.  Its files are
# V.ID.oracle and V.ID.trace.
trace_group() {
	local v=$1 label=$3 bin=$4 o t why
	local -a specs steps
	mapfile -t specs <<<"$5"
	mapfile -t steps <<<"$6"
	o=$BATS_TEST_TMPDIR/$v.$2.oracle
	t=$BATS_TEST_TMPDIR/$v.$2.trace
	trace_fx "$t" -c "$bin --oracle $o ${steps[*]}" "${specs[@]}"
	why=$(judge "$o" "$t" $((3 * ${#specs[@]})))
	[[ -z $why ]] || printf '%s (%s probes):\n%s\n' "$label" "${#specs[@]}" "$why"
	return 0
}

# check_variant V: four traces fire every probe of the variant without a
# semaphore 3 times (the string probes apart: they need --str): the
# executable's natural probes (fx:*) of up to 6 arguments, those of 7 to
# 12, its hand-written operand forms (fxform:*), and the library's after
# a dlopen (attached by path before it is loaded); a fifth does the string
# probes with --str 0.  Apart, so that a tracer refusing one kind (more
# than 6 arguments, an operand form, a library not yet mapped) is still
# judged on the others' values.  Prints what is wrong.
check_variant() {
	local v=$1 bin lib why g p n
	local -A specs=() steps=()
	bin=$(fx_bin "$v") || return 0
	lib=$(fx_lib "$v") || return 0
	steps[lib]="dlopen:$lib"
	while read -r p n; do
		[[ $p == fx:* || $p == fxform:* ]] || continue
		g=form
		[[ $p == fx:* ]] && { g=exe6; ((n <= 6)) || g=exe12; }
		specs[$g]+="usdt:$bin:$p"$'\n' steps[$g]+="fire:$p:3"$'\n'
	done < <("$bin" --list | pc_jsel -w semaphore=false -W probe=fx:str -d ' ' probe nargs -)
	for p in $("$bin" --list-lib "$lib" | pc_jsel -w semaphore=false -W probe=fxlib:str probe -); do
		[[ $p == fx:* || $p == fxlib:* ]] || continue
		specs[lib]+="usdt:$lib:$p"$'\n' steps[lib]+=$'\n'"libfire:$p:3"
	done
	for g in exe6 exe12 form lib; do
		(($(grep -c . <<<"${specs[$g]:-}") > 2)) || { echo "group $g: only ${specs[$g]:-no} probes listed"; return 0; }
	done
	trace_group "$v" exe6 "fx:* probes of up to 6 arguments" "$bin" "${specs[exe6]%$'\n'}" "${steps[exe6]%$'\n'}"
	trace_group "$v" exe12 "fx:* probes of 7 to 12 arguments" "$bin" "${specs[exe12]%$'\n'}" "${steps[exe12]%$'\n'}"
	trace_group "$v" form "fxform:* operand forms" "$bin" "${specs[form]%$'\n'}" "${steps[form]%$'\n'}"
	trace_group "$v" lib "library $lib" "$bin" "${specs[lib]%$'\n'}" "${steps[lib]}"
	pc_tracer_claim strings || return 0	# its own test skips with the reason
	local o=$BATS_TEST_TMPDIR/$v.str.oracle t=$BATS_TEST_TMPDIR/$v.str.trace
	trace_fx "$t" --str 0 -c "$bin --oracle $o fire:fx:str:3 dlopen:$lib libfire:fxlib:str:3" \
		"usdt:$bin:fx:str" "usdt:$lib:fxlib:str"
	why=$(judge "$o" "$t" 6)
	[[ -z $why ]] || printf 'fx:str and fxlib:str with --str 0:\n%s\n' "$why"
	return 0
}

@test "arguments.every-variant: every variant: natural probes of the executable and its library, and operand-form probes, trace exactly the oracle's values" {
	requires tracer:usdt tracer:usdt_args tracer:usdt_lib tracer:cmd
	local v vs why report= nv=0 nbad=0
	vs=$(fx_variants)
	for v in $vs; do
		nv=$((nv + 1))
		why=$(check_variant "$v")
		if [[ -z $why ]]; then
			echo "# variant $v: ok" >&3
			pc_log "variant $v: ok"
			continue
		fi
		nbad=$((nbad + 1))
		echo "# variant $v: FAILED" >&3
		report+="variant $v: FAILED"$'\n'"$(sed 's/^/  /' <<<"$why")"$'\n'
	done
	((nv > 0)) || fail "no variants in $PC_FIXTURES/variants.txt"
	[[ -z $report ]] || fail "$nbad of $nv variants failed:"$'\n'"$report"
}

@test "arguments.twelfth-arg: every variant: the 12th argument of a 12-argument probe is exact" {
	requires tracer:usdt tracer:usdt_args tracer:cmd
	local v vs bin o t why report=
	local vals=-9000000000000000001,-2000000002,18000000000000000003,4000000004,-30004,60005,-106,207,-9000000000000000009,-2000000010,18000000000000000011,4294967295
	vs=$(fx_variants)
	[[ -n $vs ]] || fail "no variants in $PC_FIXTURES/variants.txt"
	for v in $vs; do
		bin=$(fx_bin "$v")
		o=$BATS_TEST_TMPDIR/$v.oracle
		t=$BATS_TEST_TMPDIR/$v.trace
		trace_fx "$t" -c "$bin --oracle $o fire:fx:a12:2:$vals fire:fx:a12:1" "usdt:$bin:fx:a12"
		why=$(judge "$o" "$t" 3)
		[[ -z $why ]] || why=$'\n'$why
		# Independently of the oracle: the values as written here (the
		# defaults cut to i8 and u8 are 17 and 240).
		[[ $(grep -c ',4294967295\]}$' "$t") == 2 ]] ||
			why+=$'\n'"12th argument 4294967295 not printed twice"
		[[ $(grep -c ',-2000000010,18000000000000000011,4294967295\]}$' "$t") == 2 ]] ||
			why+=$'\n'"arguments 10..12 not printed exactly"
		[[ $(grep -c '"args":\[-1001,-1002,1003,1004,-1005,1006,17,240,-1009,-1010,1011,1012\]' "$t") == 1 ]] ||
			why+=$'\n'"default values (arg 12 = 1012) not printed"
		[[ -z $why ]] || report+="variant $v:$why"$'\n'
	done
	[[ -z $report ]] || fail "$report"
}

# ---------------------------------------------------------------------------
# One variant is enough for what does not depend on code generation.

first_variant() {
	local vs
	vs=$(fx_variants)
	[[ -n $vs ]] || { fail "no variants in $PC_FIXTURES/variants.txt"; return 1; }
	head -n 1 <<<"$vs"
}

@test "arguments.no-args: a probe with no arguments traces with an empty argument list, once per hit" {
	requires tracer:usdt tracer:cmd
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(fx_bin "$(first_variant)")
	trace_fx "$t" -c "$bin --oracle $o fire:fx:a0:7" "usdt:$bin:fx:a0"
	assert_judged "$o" "$t" 7
	run -0 grep -c '"probe":"fx:a0",.*"args":\[\]}$' "$t"
	assert_output 7
}

@test "arguments.extreme-values: extreme values: INT64_MIN, UINT64_MAX and -1 in every width print exactly" {
	requires tracer:usdt tracer:usdt_args tracer:cmd
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json v vs
	vs=$(fx_variants)
	[[ $(wc -l <<<"$vs") -ge 2 ]] || fail "fewer than 2 variants: $vs"
	for v in $(sed -n '1p;$p' <<<"$vs"); do	# the first and the last built
		bin=$(fx_bin "$v")
		rm -f "$o"
		trace_fx "$t" -c "$bin --oracle $o \
			fire:fx:ints:1:-1,255,-1,65535,-1,4294967295,-1,18446744073709551615 \
			fire:fx:ints:1:-128,0,-32768,0,-2147483648,0,-9223372036854775808,0 \
			fire:fx:ints:1:127,128,32767,32768,2147483647,2147483648,9223372036854775807,9223372036854775808 \
			fire:fx:ctypes:3 fire:fx:consts:1 fire:fxform:const:1" \
			"usdt:$bin:fx:ints" "usdt:$bin:fx:ctypes" "usdt:$bin:fx:consts" \
			"usdt:$bin:fxform:const"
		assert_judged "$o" "$t" 8
		# Written out here, independently of the fixture's oracle.
		run -0 grep -c \
			-e '"args":\[-1,255,-1,65535,-1,4294967295,-1,18446744073709551615\]' \
			-e '"args":\[-128,0,-32768,0,-2147483648,0,-9223372036854775808,0\]' \
			-e '"args":\[127,128,32767,32768,2147483647,2147483648,9223372036854775807,9223372036854775808\]' \
			-e '"args":\[0,-128,255,-32768,65535,-2147483648,4294967295,-9223372036854775808,18446744073709551615,-1,0,9223372036854775807\]' \
			-e '"args":\[-9223372036854775808,18446744073709551615,18446744073709551615,255,-1,2147483647,4294967295,-32768,65535,0,9223372036854775807,-128\]' \
			"$t"
		assert_output 5
	done
}

@test "arguments.unreadable-operands: unreadable operands: null in their own slot, later arguments exact, a warning names each operand" {
	pc_probecheck_only "null for an operand it cannot read, and its warning text"
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(fx_bin "$(first_variant)")
	trace_fx "$t" -c "$bin --oracle $o fire:fxform:badf:2 fire:fxform:badxmm:2 fire:fxform:badreg:2 fire:fx:a2:1" \
		"usdt:$bin:fxform:bad*" "usdt:$bin:fx:a2"
	assert_judged "$o" "$t" 7
	# null is the second of 4, 4 and 3 arguments, the others are numbers.
	run -0 grep -cE '"probe":"fxform:bad(f|xmm)".*"args":\[-?[0-9]+,null,-?[0-9]+,-?[0-9]+\]}$' "$t"
	assert_output 4
	run -0 grep -cE '"probe":"fxform:badreg".*"args":\[[0-9]+,null,-?[0-9]+\]}$' "$t"
	assert_output 2
	# A readable probe in the same trace is not affected.
	run -0 grep -c '"probe":"fx:a2".*"args":\[-1001,-1002\]}$' "$t"
	assert_output 1
	# One warning per site (not per event), naming the probe, the
	# argument (0-based, as --str counts) and the operand text.
	run -0 cat "$t.err"
	assert_line --regexp "^probecheck: usdt: '$bin' fxform:badf at 0x[0-9a-f]+: arg 1 '8f@%xmm0': .+"
	assert_line --regexp "^probecheck: usdt: '$bin' fxform:badxmm at 0x[0-9a-f]+: arg 1 '%xmm1': .+"
	assert_line --regexp "^probecheck: usdt: '$bin' fxform:badreg at 0x[0-9a-f]+: arg 1 '-4@%foo': .+"
	[[ $(grep -c 'fxform:bad' "$t.err") == 3 ]] || fail "expected exactly 3 warnings: $(cat "$t.err")"
	refute_output --partial 'fx:a2'
}

@test "arguments.three-sites: a probe with three sites: every site fires, counts per site exact" {
	requires tracer:usdt tracer:usdt_args tracer:cmd
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json s
	bin=$(fx_bin "$(first_variant)")
	run -0 pc_elf_notes "$bin"
	[[ $(grep -c '^fx multi ' <<<"$output") == 3 ]] || fail "fx:multi should have 3 sites: $output"
	if ! pc_tracer_other; then	# probecheck's listing agrees
		run -0 pc list --json "$bin"
		[[ $(grep -c '"name":"multi"' <<<"$output") == 3 ]] || fail "list: fx:multi should have 3 sites: $output"
	fi
	# Defaults cycle sites 1,2,3: 4 + 4 + 4; then 5 more at site 2 only.
	trace_fx "$t" -c "$bin --oracle $o fire:fx:multi:12 fire:fx:multi:5:2,-77" "usdt:$bin:fx:multi"
	assert_judged "$o" "$t" 17
	for s in 1 3; do
		run -0 grep -cE "\"args\":\[$s,-?[0-9]+\]}$" "$t"
		assert_output 4
	done
	run -0 grep -cE '"args":\[2,-?[0-9]+\]}$' "$t"
	assert_output 9
	run -0 grep -c '"args":\[2,-77\]}$' "$t"
	assert_output 5
}

# dup_oracle ORACLE ORIGIN: the oracle's events minus fx:dup fired from the
# other object (argument 1 is the origin: 1 executable, 2 library).
dup_oracle() {
	grep -v "\"probe\":\"fx:dup\",.*\"args\":\[$((3 - $2))," "$1"
}

@test "arguments.same-name: the same probe name in the executable and the library: the path selects the object" {
	requires tracer:usdt tracer:usdt_lib tracer:cmd
	local v bin lib o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json w
	v=$(first_variant)
	bin=$(fx_bin "$v")
	lib=$(fx_lib "$v")
	# Both objects carry fx:dup.
	run -0 pc_elf_notes "$lib"
	assert_line --regexp '^fx dup '
	if ! pc_tracer_other; then	# probecheck's listing agrees
		run -0 pc list --json "$lib"
		assert_output --partial '"provider":"fx","name":"dup"'
	fi
	for w in exe lib; do
		rm -f "$o"
		if [[ $w == exe ]]; then
			trace_fx "$t" -c "$bin --oracle $o fire:fx:dup:2 dlopen:$lib libfire:fx:dup:3 fire:fx:dup:1" "usdt:$bin:fx:dup"
			dup_oracle "$o" 1 >"$o.want"
			run -0 grep -c '"args":\[1,' "$t"
			assert_output 3
		else
			trace_fx "$t" -c "$bin --oracle $o fire:fx:dup:2 dlopen:$lib libfire:fx:dup:3 fire:fx:dup:1" "usdt:$lib:fx:dup"
			dup_oracle "$o" 2 >"$o.want"
			run -0 grep -c '"args":\[2,' "$t"
			assert_output 3
		fi
		assert_judged "$o.want" "$t" 3
	done
}

@test "arguments.lib-before-dlopen: probes in a library attached by path before the program dlopens it fire when it calls in" {
	requires tracer:usdt_lib tracer:usdt_args tracer:cmd
	local v bin lib o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	v=$(first_variant)
	bin=$(fx_bin "$v")
	lib=$(fx_lib "$v")
	# Executable probes fire first, before the library is mapped; the
	# library's probes are on its path only.
	trace_fx "$t" -c "$bin --oracle $o fire:fx:a1:2 dlopen:$lib libfire:fxlib:l0:2 libfire:fxlib:l4:5 libfire:fx:dup:2" \
		"usdt:$lib:fxlib:l*" "usdt:$lib:fx:dup"
	grep -v '"probe":"fx:a1"' "$o" >"$o.want"
	assert_judged "$o.want" "$t" 9
	run -0 grep -c '"probe":"fxlib:l4"' "$t"
	assert_output 5
	# The library's static u64 argument, 0x8000000000000000 + iter.
	run -0 grep -c '"probe":"fxlib:l4".*,9223372036854775812,-124,4000012\]}$' "$t"
	assert_output 1
}

# The BPF side's own bounds on a register operand: spec.c writes offsets
# of named registers only, so the bounds are met only by a spec written
# into pc_specs from outside (bpftool, as root can), as a corrupted or
# foreign writer would.  A uprobe's pt_regs are the user registers at the
# top of the kernel stack: the last 8 bytes (ss) are a register, what is
# past them is not, nor what is below the struct.
@test "arguments.reg-offset-bound: register offsets written into the tracer's map (bpftool): the last of pt_regs reads the user's ss (0x2b), one past the struct and one below it read as null" {
	pc_probecheck_only "its pc_specs map and pt_regs bounds"
	requires cmd:bpftool cmd:jq
	local bin F pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json map k v
	local -a off=(0xa0 0x00 0xa8 0x00 0xf8 0xff) b
	bin=$(fx_bin "$(first_variant)")
	F=$(pc_fifo f)
	pc_spawn pid "$bin" --oracle "$o" "ready:$BATS_TEST_TMPDIR/r0" "wait:$F" \
		fire:fx:multi:3 "ready:$BATS_TEST_TMPDIR/r1" "wait:$(pc_fifo hold)"
	pc_wait_file "$BATS_TEST_TMPDIR/r0"
	pc_trace_bg "$t" --json -p "$pid" "usdt:$bin:fx:multi"
	# The tracer's maps by their descriptors (bpftool's pids need a
	# build it may not have), pc_specs by name.
	map=
	for k in $(sed -n 's/^map_id:[[:space:]]*//p' /proc/"$PC_TRACE_PID"/fdinfo/* 2>/dev/null); do
		[[ $(bpftool -j map show id "$k" | jq -r .name) == pc_specs ]] && map=$k
	done
	[[ $map =~ ^[0-9]+$ ]] || fail "no pc_specs map held by tracer $PC_TRACE_PID"
	# fx:multi's three sites, in order, are specs 0-2 (argument 0 says
	# which site: 1-3).  Argument 1 (bytes 48-71: a 24-byte header, then
	# 24-byte arguments) becomes an 8-byte register (kind 2), no index,
	# at offset 160, 168 = sizeof(struct pt_regs) on x86-64, and -8.
	for k in 0 1 2; do
		v=$(bpftool -j map lookup id "$map" key $k 0 0 0 | jq -r '.value | join(" ")')
		read -ra b <<<"$v"
		[[ ${#b[@]} -gt 71 ]] || fail "spec $k: ${#b[@]} bytes"
		b[48]=0x02 b[49]=0x08 b[50]=0x00 b[51]=0x00
		b[52]=${off[2 * k]} b[53]=${off[2 * k + 1]} b[54]=0xff b[55]=0xff
		bpftool map update id "$map" key $k 0 0 0 value "${b[@]}" ||
			fail "bpftool could not write spec $k"
	done
	pc_fifo_write "$F" go
	pc_wait_file "$BATS_TEST_TMPDIR/r1"
	pc_trace_stop
	assert_equal "$PC_TRACE_STATUS" 0
	run -0 jq -c '.args' "$PC_TRACE_OUT"
	assert_output $'[1,43]\n[2,null]\n[3,null]'
}
