#!/usr/bin/env bats
# strings.bats — `trace --str N[,N..]`: argument N is a char * and is
# printed as the string it points to, as a JSON string: at most 255 bytes
# (PC_STR_LEN 256 with the NUL), escaped so that a JSON parser gives back
# the very bytes the program had; a longer one as {"truncated":"<255>"}.
# What is not a readable pointer (an integer) prints
# {"unreadable":"EFAULT"}, a NULL pointer null; bad --str values are
# refused with exit 2 before anything is attached or run.  Memory the
# program has not touched: untouched.bats.
#
# Expected strings are written out here and also compared with the
# fixture's oracle by oraclecmp, which decodes JSON strings to bytes.
# bats file_tags=strings

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)

# Strings are read the same way whatever the compiler did: the first
# build variant's executable and library (fx_first_bin, fx_first_lib) do
# (arguments.bats runs fx:str and fxlib:str in every variant).

# has_args TRACE N ARGS-JSON: exactly N events print exactly this args array.
has_args() {
	local n
	n=$(grep -cF "\"args\":$3}" "$1" || true)
	((n == $2)) || { fail "expected $2 events with \"args\":$3, got $n in: $(cat "$1")"; return 1; }
}

@test "strings.plain-string: --str: a plain string argument prints as the string the probe saw, in the executable and a library" {
	requires tracer:strings tracer:usdt_lib tracer:cmd
	local bin lib o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(fx_first_bin)
	lib=$(fx_first_lib)
	trace_json "$t" --str 0 -c "$bin --oracle $o fire:fx:str:3 'fire:fx:str:2:hello world,11' dlopen:$lib libfire:fxlib:str:2" \
		"usdt:$bin:fx:str" "usdt:$lib:fxlib:str"
	assert_oracle "$o" "$t"
	assert_summary 7 "$t.err"
	has_args "$t" 1 '["fx-str-0",8]'
	has_args "$t" 1 '["fx-str-2",8]'
	has_args "$t" 2 '["hello world",11]'
	has_args "$t" 1 '["fxlib-str-1",11]'
}

# With -c, '*' has no process to search before attach: every site is
# found later by follow.c, the executable's at the exec barrier and the
# library's at the dlopen barrier.  --str must reach those sites too.
@test "strings.star-follow: --str: '*' with -c --follow prints strings at sites found after attach (exec, dlopen)" {
	requires tracer:strings tracer:follow tracer:star tracer:cmd
	local bin lib o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(fx_first_bin)
	lib=$(fx_first_lib)
	trace_json "$t" --str 0 --follow -c "$bin --oracle $o fire:fx:str:1 dlopen:$lib libfire:fxlib:str:2" \
		"usdt:*:fx*:str"
	assert_oracle "$o" "$t"
	assert_summary 3 "$t.err"
	has_args "$t" 1 '["fx-str-0",8]'
	has_args "$t" 1 '["fxlib-str-0",11]'
	has_args "$t" 1 '["fxlib-str-1",11]'
}

@test "strings.empty-string: --str: the empty string prints as \"\"" {
	requires tracer:strings tracer:cmd
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(fx_first_bin)
	trace_json "$t" --str 0 -c "$bin --oracle $o fire:fx:str:2:,0" "usdt:$bin:fx:str"
	assert_oracle "$o" "$t"
	assert_summary 2 "$t.err"
	has_args "$t" 2 '["",0]'
}

# abc LEN: LEN bytes of abc..xyzabc.. (what fx_longstr fires).
abc() {
	local s=abcdefghijklmnopqrstuvwxyz
	while ((${#s} < $1)); do s+=$s; done
	printf '%s' "${s:0:$1}"
}

@test "strings.long-string: --str: a string longer than 255 bytes prints its first 255 bytes" {
	requires tracer:strings tracer:cmd
	local bin=$PC_FIXTURES/fx_longstr o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json n
	requires "file:$bin"
	trace_json "$t" --str 0 -c "$bin $o 1 254 255 256 257 300 4096" "usdt:$bin:fxstr:long"
	assert_oracle "$o" "$t"
	assert_summary 7 "$t.err"
	for n in 1 254 255; do
		has_args "$t" 1 "[\"$(abc "$n")\",$n]"
	done
	# Cut at 255 bytes and marked as cut, never bare bytes that read as
	# the whole string; the summary counts them.
	for n in 256 257 300 4096; do
		has_args "$t" 1 "[{\"truncated\":\"$(abc 255)\"},$n]"
	done
	grep -q ' unreadable=0 truncated=4$' "$t.err" || fail "summary: $(grep summary: "$t.err")"
	# Nothing longer than 255 bytes anywhere.
	run -1 grep -E '"[a-z]{256,}"' "$t"
}

@test "strings.json-escapes: --str: quotes, backslash and control characters are escaped in JSON" {
	requires tracer:strings tracer:cmd
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(fx_first_bin)
	# In the environment, not the command text: a newline would make the
	# -c command compound (run by a forking shell, see trace_run.c).
	export STR_ARG=$'q"b\\s\nn\tt\r\x01\x1f\x7f/e'
	trace_json "$t" --str 0 -c "$bin --oracle $o \"fire:fx:str:1:\$STR_ARG,16\"" "usdt:$bin:fx:str"
	assert_oracle "$o" "$t"
	assert_summary 1 "$t.err"
	has_args "$t" 1 '["q\"b\\s\nn\tt\r\u0001\u001f\u007f/e",16]'
	# One event, one line: the newline did not split it.
	run -0 wc -l <"$t"
	assert_output 1
}

@test "strings.utf8-string: --str: non-ASCII UTF-8 prints as the same characters (raw or \\u-escaped by code point)" {
	requires tracer:strings tracer:cmd
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(fx_first_bin)
	export STR_ARG=$'é€😀x'      # 2-, 3- and 4-byte UTF-8
	trace_json "$t" --str 0 -c "$bin --oracle $o \"fire:fx:str:1:\$STR_ARG,10\"" "usdt:$bin:fx:str"
	assert_summary 1 "$t.err"
	# The oracle has the raw bytes; oraclecmp decodes both sides to bytes,
	# so "\u00c3\u00a9" (each byte as a code point) does not equal "é".
	assert_oracle "$o" "$t"
	if ! grep -qF '"args":["é€😀x",10]' "$t" &&
	   ! grep -qiF '"args":["\u00e9\u20ac\ud83d\ude00x",10]' "$t"; then
		fail "neither raw UTF-8 nor \\u escapes by code point: $(cat "$t")"
	fi
}

@test "strings.not-pointer: --str on an argument that is not a pointer prints it as unreadable (EFAULT), a NULL pointer as null, nothing else changes" {
	pc_probecheck_only "the unreadable marker for a --str argument that is not a readable pointer"
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	bin=$(fx_first_bin)
	# fx:a2 (i64 -1001, i32 -1002): as addresses, kernel ones.
	# fx:a3 with 0: NULL pointers.  fx:str index 1: its length, 8.
	# Index 11: past the last argument of all three, ignored.
	trace_json "$t" --str 1,0,11 -c "$bin --oracle $o fire:fx:a2:1 fire:fx:a3:1:0,0,0 fire:fx:str:1" \
		"usdt:$bin:fx:a2" "usdt:$bin:fx:a3" "usdt:$bin:fx:str"
	assert_summary 3 "$t.err"
	local u='{"unreadable":"EFAULT"}'
	run -0 grep -cF "\"probe\":\"fx:a2\",\"pid\"" "$t"
	assert_output 1
	has_args "$t" 1 "[$u,$u]"
	has_args "$t" 1 '[null,null,0]'
	has_args "$t" 1 "[\"fx-str-0\",$u]"
	grep -q ' unreadable=3 truncated=0$' "$t.err" || fail "summary: $(grep summary: "$t.err")"
	# --str alone never changes the values of other arguments.
	trace_json "$t" --str 11 -c "$bin --oracle $o.2 fire:fx:a2:1" "usdt:$bin:fx:a2"
	assert_oracle "$o.2" "$t"
	assert_summary 1 "$t.err"
	has_args "$t" 1 '[-1001,-1002]'
}

@test "strings.bad-value: --str with a bad value exits 2 naming the option, before anything is attached or run" {
	pc_probecheck_only "its command-line errors"
	local bin o=$BATS_TEST_TMPDIR/o.json out=$BATS_TEST_TMPDIR/out bad st why=
	bin=$(fx_first_bin)
	# Every value is tried, so one failure does not hide the others.
	for bad in 12 x '' -1 1,,2 99999999999999999999; do
		st=0
		pc trace --json --str "$bad" -c "$bin --oracle $o fire:fx:a2:1" "usdt:$bin:fx:a2" \
			>"$out" 2>"$out.err" || st=$?
		((st == 2)) || why+="--str '$bad': exit status $st, expected 2"$'\n'
		grep -qF -- "--str '$bad'" "$out.err" ||
			why+="--str '$bad': no message naming the option and its value: $(cat "$out.err")"$'\n'
		[[ ! -s $out ]] || why+="--str '$bad': printed on stdout: $(cat "$out")"$'\n'
		[[ ! -e $o ]] || why+="--str '$bad': the command ran"$'\n'
		! grep -q 'summary:' "$out.err" || why+="--str '$bad': tracing started"$'\n'
		rm -f "$o"
	done
	[[ -z $why ]] || fail "$why"
}
