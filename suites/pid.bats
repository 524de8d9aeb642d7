#!/usr/bin/env bats
# pid.bats — the pid provider: pid:PATH:FUNCTION:entry|return|0xOFFSET.
# Function probes from the symbol tables: entry arguments by the SysV
# x86-64 convention (registers, then the stack above the return address),
# return value from %rax, offsets inside a function, aliases, globs,
# libraries, threads, and the same function traced with its own USDT
# probe.  Values are unsigned 64-bit.
#
# The fixture (fixtures/fx_pidfn.c, 4 variants: O0/O2 x pie/nopie) logs,
# per call, the entry line with every argument and the return line, as
# the tracer prints them; assert_oracle compares exactly.  Every attached
# site costs ~0.1 s to detach: the tests keep to a handful of sites.
# bats file_tags=pid

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)

PF_VARIANTS=(O0_nopie O0_pie O2_nopie O2_pie)

# pfbin VARIANT: the fixture executable of VARIANT (O2_pie, ...).
pfbin() {
	local f=$PC_FIXTURES/fx_pidfn_$1
	[[ -x $f ]] || { fail "no fixture '$f' (make fixtures)"; return 1; }
	echo "$f"
}

# pflib VARIANT: its library.
pflib() {
	local f=$PC_FIXTURES/libpidfn_${1%_*}.so
	[[ -e $f ]] || { fail "no fixture '$f' (make fixtures)"; return 1; }
	echo "$f"
}

# pid_trace_fails OUT STATUS MESSAGE ARGS...: trace exits STATUS, stderr
# holds MESSAGE (fixed string), nothing ran (no oracle file $OUT.o).
pid_trace_fails() {
	local out=$1 want=$2 msg=$3 st=0
	shift 3
	pc trace --json "$@" >"$out" 2>"$out.err" || st=$?
	((st == want)) || { fail "exit status $st, expected $want: $(cat "$out.err")"; return 1; }
	grep -qF -- "$msg" "$out.err" || { fail "no '$msg' in stderr: $(cat "$out.err")"; return 1; }
	[[ ! -s $out ]] || { fail "printed events: $(cat "$out")"; return 1; }
	[[ ! -e $out.o ]] || { fail "the command ran"; return 1; }
}

# per_tid TRACE: one line per thread, "TID PROBE PROBE ...", the probes in
# the order the tracer printed them (a thread's events reach the ring in
# the order they happened).
per_tid() {
	jq -r '"\(.tid) \(.probe)"' "$1" |
		awk '{ s[$1] = s[$1] " " $2 } END { for (t in s) print t s[t] }' | sort -n
}

# insn2 BIN FUNCTION: offset (0x..) of FUNCTION's second instruction, by
# objdump — an instruction boundary the tracer does not compute itself.
insn2() {
	local a
	a=($(objdump -d --no-show-raw-insn "$1" --disassemble="$2" |
		awk -F: '/^ +[0-9a-f]+:/ { print $1 }' | head -n 2))
	((${#a[@]} == 2)) || { fail "insn2: no two instructions in $2 of $1"; return 1; }
	printf '0x%x\n' $((0x${a[1]// /} - 0x${a[0]// /}))
}

# u64_above_2p63 DECIMAL: the unsigned 64-bit value is >= 2^63 (a negative
# int64), compared as text.
u64_above_2p63() {
	((${#1} == 20)) || { ((${#1} == 19)) && [[ $1 > 9223372036854775807 ]]; }
}

# symsize BIN FUNCTION: st_size of FUNCTION (0x..), by readelf.
symsize() {
	readelf -sW "$1" | awk -v f="$2" '$8 == f && $4 == "FUNC" { printf "0x%x\n", $3; exit }'
}

@test "pid.entry-return: pid entry: 8 arguments (6 registers, 2 stack slots) and the return value, exact in O0/O2 x pie/nopie" {
	requires tracer:func_entry tracer:func_return tracer:cmd
	requires bpf_cookie    # return probes: none by place (before 5.15)
	local v bin o t
	for v in "${PF_VARIANTS[@]}"; do
		bin=$(pfbin "$v")
		o=$BATS_TEST_TMPDIR/$v.o t=$BATS_TEST_TMPDIR/$v.json
		trace_json "$t" --args 8 -c "$bin --oracle $o add8:3" \
			"pid:$bin:pf_add8:entry" "pid:$bin:pf_add8:return"
		assert_oracle "$o" "$t"
		assert_summary 6 "$t.err"
	done
	# The stack arguments of call 0: 0x7000000000000007 and -8.
	run -0 grep -cF '"probe":"pf_add8:entry"' "$t"
	assert_output 3
	grep -qF '"args":[1,18446744073709551614,9223372036854775807,4,0,18446744073709551610,8070450532247928839,18446744073709551608]}' "$t"
}

@test "pid.entry-args10: pid entry --args 10: arguments 6-9 from 8..32(%rsp); a negative return prints as unsigned 64-bit" {
	requires tracer:func_entry tracer:func_return tracer:cmd
	requires bpf_cookie    # return probes: none by place (before 5.15)
	local v bin o t r
	for v in O0_nopie O2_pie; do
		bin=$(pfbin "$v")
		o=$BATS_TEST_TMPDIR/$v.o t=$BATS_TEST_TMPDIR/$v.json
		trace_json "$t" --args 10 -c "$bin --oracle $o mix10:4" \
			"pid:$bin:pf_mix10:entry" "pid:$bin:pf_mix10:return"
		assert_oracle "$o" "$t"
		assert_summary 8 "$t.err"
		# Every return value of pf_mix10 is negative: printed as
		# 2^64 - |v|, at least 2^63 (as text: jq would round it).
		run -0 grep -o '"probe":"pf_mix10:return".*"args":\[[0-9]*\]' "$t"
		[[ ${#lines[@]} == 4 ]] || fail "expected 4 return events: $output"
		for r in "${lines[@]}"; do
			r=${r##*[}
			u64_above_2p63 "${r%]}" || fail "pf_mix10 returned ${r%]}: not a negative int64 as uint64"
		done
	done
}

@test "pid.return-unsigned: pid return: -1 prints as 18446744073709551615 (the raw %rax, unsigned)" {
	requires tracer:func_return tracer:cmd
	requires bpf_cookie    # return probes: none by place (before 5.15)
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(pfbin O2_nopie)
	trace_json "$t" --args 1 -c "$bin --oracle $o neg:3" \
		"pid:$bin:pf_neg:entry" "pid:$bin:pf_neg:return"
	assert_oracle "$o" "$t"
	assert_summary 6 "$t.err"
	# Not through jq: it prints big integers through a double.
	run -0 grep -o '"probe":"pf_neg:return".*"args":\[[0-9]*\]' "$t"
	assert_line --index 0 --partial '"args":[18446744073709551615]'
	assert_line --index 1 --partial '"args":[18446744073709550615]'
	assert_line --index 2 --partial '"args":[18446744073709549615]'
}

@test "pid.args-option: --args: default 6 prints the first six of eight; 0 prints none; 13, -1 and x exit 2" {
	pc_probecheck_only "its --args checks"
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json bad
	bin=$(pfbin O2_pie)
	trace_json "$t" -c "$bin --oracle $o add8:2" "pid:$bin:pf_add8:entry"
	assert_summary 2 "$t.err"
	# The oracle's entry lines cut to six arguments are the trace (cut as
	# text: jq would round the 64-bit values).
	grep -F '"probe":"pf_add8:entry"' "$o" |
		sed -E 's/("args":\[([^],]*,){5}[^],]*)[^]]*\]/\1]/' >"$o.6"
	assert_oracle "$o.6" "$t"
	run -0 jq '.args | length' "$t"
	assert_output $'6\n6'
	trace_json "$t" --args 0 -c "$bin add8:2" "pid:$bin:pf_add8:entry"
	run -0 grep -c '"probe":"pf_add8:entry".*"args":\[\]}$' "$t"
	assert_output 2
	for bad in 13 -1 x ''; do
		pid_trace_fails "$t" 2 "--args '$bad'" --args "$bad" \
			-c "$bin --oracle $t.o add8:1" "pid:$bin:pf_add8:entry"
	done
}

@test "pid.shared-lib: pid: a function in a shared library, by its path (-c) and by PATH '*' (-p), site bytes restored" {
	requires tracer:func_entry tracer:func_return tracer:cmd tracer:pid tracer:star
	requires bpf_cookie    # return probes: none by place (before 5.15)
	local bin lib o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	local ready=$BATS_TEST_TMPDIR/ready fifo pid addr
	bin=$(pfbin O2_pie)
	lib=$(pflib O2_pie)
	trace_json "$t" --args 2 -c "$bin --oracle $o lib:3" \
		"pid:$lib:pfl_mul:entry" "pid:$lib:pfl_mul:return"
	assert_oracle "$o" "$t"
	assert_summary 6 "$t.err"
	# A running process: '*' finds the library among everything it maps.
	fifo=$(pc_fifo go)
	pc_spawn pid "$bin" --oracle "$o.p" "ready:$ready" "wait:$fifo" lib:4
	pc_wait_file "$ready"
	addr=$(pc_runtime_addr "$pid" "$lib" "0x$(nm "$lib" | awk '$3 == "pfl_mul" { print $1 }')")
	pc_bytes_watch "$pid" "$addr"
	pc_trace_bg "$t.p" --json --args 2 -p "$pid" "pid:*:pfl_mul:entry" "pid:*:pfl_mul:return"
	# The breakpoint is in: the first byte is int3 while attached.
	run -0 pc_peek_bytes "$pid" "$addr" 1
	assert_output cc
	pc_fifo_write "$fifo" go
	pc_trace_wait
	((PC_TRACE_STATUS == 0)) || fail "tracer exit status $PC_TRACE_STATUS"
	assert_oracle "$o.p" "$t.p"
	assert_summary 8 "$t.p.err"
}

@test "pid.star-offset-refused: pid, PATH '*' (-p): the first object refusing an offset ends the resolution: exit 2, one message naming object, function and size, nothing attached" {
	pc_probecheck_only "its messages for a refused offset"
	local bin fifo pid ready=$BATS_TEST_TMPDIR/ready
	bin=$(pfbin O2_pie)
	fifo=$(pc_fifo go)
	pc_spawn pid "$bin" --oracle "$BATS_TEST_TMPDIR/o.json" "ready:$ready" "wait:$fifo"
	pc_wait_file "$ready"
	# Every object it maps (the program, libc, ld.so) has functions
	# shorter than 0x40 bytes.
	run -2 --separate-stderr pc trace -p "$pid" 'pid:*:*:0x40'
	assert_output ''
	[[ $(grep -c "offset beyond the function's" <<<"$stderr") == 1 ]] ||
		fail "expected one refusal, the first: $stderr"
	[[ $stderr =~ "pid: '"[^\']+"': "[A-Za-z_0-9.]+"+0x40: offset beyond the function's 0x"[0-9a-f]+" bytes" ]] ||
		fail "object, function or size not named: $stderr"
	pc_fifo_write "$fifo" go
}

@test "pid.alias-sites: pid aliases: a glob over three names at one address is one site (alphabetically first name); two named aliases are two sites" {
	pc_probecheck_only "its naming of aliases"
	requires bpf_cookie    # return probes: none by place (before 5.15)
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(pfbin O2_pie)
	# pf_alias_x < pf_alias_y < pf_aliased: '_' sorts before 'e'.
	trace_json "$t" --args 2 -c "$bin --oracle $o alias:3:pf_alias_x" \
		"pid:$bin:pf_alias*:entry" "pid:$bin:pf_alias*:return"
	assert_oracle "$o" "$t"
	assert_summary 6 "$t.err"
	# The same glob twice: the identical sites are attached once.
	trace_json "$t" --args 2 -c "$bin --oracle $o.2 alias:2:pf_alias_x" \
		"pid:$bin:pf_alias*:entry" "pid:$bin:pf_alias*:entry" "pid:$bin:pf_alias_?:entry"
	assert_oracle "$o.2" "$t" --only '*:entry'
	assert_summary 2 "$t.err"
	# Two names given: each is its own probe, each call fires both.
	trace_json "$t" --args 2 -c "$bin --oracle $o.3 alias:2:pf_aliased,pf_alias_y" \
		"pid:$bin:pf_aliased:entry" "pid:$bin:pf_alias_y:entry"
	assert_oracle "$o.3" "$t" --only '*:entry'
	assert_summary 4 "$t.err"
}

@test "pid.glob-three: pid glob: pf_g_* matches exactly three functions; a function matched twice is attached once" {
	requires tracer:func_entry tracer:cmd
	requires bpf_cookie    # return probes: none by place (before 5.15)
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(pfbin O0_pie)
	trace_json "$t" --args 2 -c "$bin --oracle $o glob:2 add8:1 neg:1" \
		"pid:$bin:pf_g_*:entry" "pid:$bin:pf_g_*:return"
	assert_oracle "$o" "$t" --only 'pf_g_*'
	assert_summary 12 "$t.err"
	run -0 jq -r '.probe' "$t"
	refute_output --partial pf_add8
	trace_json "$t" --args 2 -c "$bin --oracle $o.2 glob:2" \
		"pid:$bin:pf_g_one:entry" "pid:$bin:pf_g_[ot]*:entry"
	assert_oracle "$o.2" "$t" --only 'pf_g_*:entry'
	assert_summary 6 "$t.err"
}

@test "pid.offset-fires: pid offset: FUNCTION:0xOFF at the second instruction fires once per call with no arguments; 0x0 fires with entry" {
	requires tracer:func_offset tracer:func_entry tracer:cmd
	requires bpf_cookie    # FUNC:0x0 and FUNC:entry: two sites at one place
	local v bin off o t
	for v in O0_nopie O2_pie; do
		bin=$(pfbin "$v")
		off=$(insn2 "$bin" pf_add8)
		o=$BATS_TEST_TMPDIR/$v.o t=$BATS_TEST_TMPDIR/$v.json
		trace_json "$t" --args 8 -c "$bin --oracle $o add8:3" \
			"pid:$bin:pf_add8:$off" "pid:$bin:pf_add8:0x0" "pid:$bin:pf_add8:entry"
		assert_summary 9 "$t.err"
		# The oracle's entry lines, renamed and without arguments.
		jq -c --arg p "pf_add8:$off" 'select(.probe == "pf_add8:entry") | .probe = $p | .args = []' \
			"$o" >"$o.off"
		jq -c 'select(.probe == "pf_add8:entry") | .probe = "pf_add8:0x0" | .args = []' \
			"$o" >>"$o.off"
		grep -F '"probe":"pf_add8:entry"' "$o" >>"$o.off"
		assert_oracle "$o.off" "$t"
		# Per call: entry and 0x0 (one address, either order), then OFF.
		run -0 jq -r '.probe' "$t"
		assert_line --index 2 "pf_add8:$off"
		assert_line --index 5 "pf_add8:$off"
		assert_line --index 8 "pf_add8:$off"
	done
}

@test "pid.offset-beyond: pid offset beyond the function (= its st_size) exits 2 naming function, offset and size; a bad offset exits 2" {
	pc_probecheck_only "its command-line errors"
	local bin t=$BATS_TEST_TMPDIR/t.json size bad
	bin=$(pfbin O2_pie)
	size=$(symsize "$bin" pf_add8)
	[[ -n $size ]] || fail "no size for pf_add8"
	pid_trace_fails "$t" 2 "pid: '$bin': pf_add8+$size: offset beyond the function's $size bytes" \
		-c "$bin --oracle $t.o add8:1" "pid:$bin:pf_add8:$size"
	pid_trace_fails "$t" 2 "offset beyond the function's" \
		-c "$bin --oracle $t.o add8:1" "pid:$bin:pf_g_*:0xfffff"
	for bad in 0x 0x-4 0xg 12 ENTRY '*' 0x11111111111111111; do
		pid_trace_fails "$t" 2 "'$bad' is not entry, return or 0xOFFSET" \
			-c "$bin --oracle $t.o add8:1" "pid:$bin:pf_add8:$bad"
	done
}

@test "pid.bad-requests: pid: unknown function, PATH '*' without -p, a missing file: exit 2" {
	pc_probecheck_only "its command-line errors"
	local bin t=$BATS_TEST_TMPDIR/t.json
	bin=$(pfbin O2_pie)
	pid_trace_fails "$t" 2 "no probe matches" -c "$bin --oracle $t.o add8:1" "pid:$bin:pf_nosuch:entry"
	pid_trace_fails "$t" 2 "no probe matches" -c "$bin --oracle $t.o add8:1" \
		"pid:$bin:pf_add8:entry" "pid:$bin:pf_nosuch*:return"
	pid_trace_fails "$t" 2 "PATH '*' needs -p PID" -c "$bin --oracle $t.o add8:1" "pid:*:pf_add8:entry"
	pid_trace_fails "$t" 2 "$BATS_TEST_TMPDIR/nosuch" -c "$bin --oracle $t.o add8:1" \
		"pid:$BATS_TEST_TMPDIR/nosuch:main:entry"
}

@test "pid.with-usdt: pid entry and return with the function's own USDT probe: per call exactly entry, usdt, return" {
	requires tracer:func_entry tracer:func_return tracer:usdt tracer:cmd
	requires bpf_cookie    # return probes: none by place (before 5.15)
	local v bin o t want i
	for v in O0_pie O2_nopie; do
		bin=$(pfbin "$v")
		o=$BATS_TEST_TMPDIR/$v.o t=$BATS_TEST_TMPDIR/$v.json
		trace_json "$t" --args 1 -c "$bin --oracle $o usdt:5" \
			"pid:$bin:pf_usdt:entry" "usdt:$bin:pidfx:mid" "pid:$bin:pf_usdt:return"
		assert_oracle "$o" "$t"
		assert_summary 15 "$t.err"
		want=$(jq -r '.tid' "$o" | head -n 1)
		for i in 1 2 3 4 5; do
			want+=" pf_usdt:entry pidfx:mid pf_usdt:return"
		done
		run -0 per_tid "$t"
		assert_output "$want"
	done
}

@test "pid.eight-threads: pid entry and return on a function called from 8 threads: exact events per thread" {
	requires tracer:func_entry tracer:func_return tracer:cmd
	requires bpf_cookie    # return probes: none by place (before 5.15)
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(pfbin O2_pie)
	# Thread k calls pf_thr 25 + k times: 228 calls.
	trace_json "$t" --args 2 -c "$bin --oracle $o threads:8:25" \
		"pid:$bin:pf_thr:entry" "pid:$bin:pf_thr:return"
	assert_oracle "$o" "$t"
	assert_summary 456 "$t.err"
	run -0 jq -r '.tid' "$t"
	[[ $(sort -u <<<"$output" | wc -l) == 8 ]] || fail "events from $(sort -u <<<"$output" | wc -l) threads, expected 8"
	# Per thread the events alternate entry, return.
	run -0 per_tid "$t"
	refute_output --regexp 'entry pf_thr:entry|return pf_thr:return'
}
