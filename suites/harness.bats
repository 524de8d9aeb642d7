#!/usr/bin/env bats
# harness.bats — the harness judges the tracer, so it is tested first:
# the oracle comparator, pc-peek, and the helpers every suite relies on
# (requires, pc, barriers, the cleanup invariants).
#
# bats file_tags=harness

load helpers/common

# ---------------------------------------------------------------------------
# oraclecmp

# oc NAME: path of a crafted JSON-lines file in the test's tmpdir, its
# content read from stdin.
oc() {
	cat >"$BATS_TEST_TMPDIR/$1"
	echo "$BATS_TEST_TMPDIR/$1"
}

oraclecmp() {
	"$PC_TOOLS/oraclecmp" "$@"
}

@test "harness.oraclecmp-identical: oraclecmp: identical logs match, informational oracle lines ignored" {
	o=$(oc o.json <<-'EOF'
		{"step":"start","pid":7}
		{"probe":"fx:p_int","pid":7,"tid":8,"args":[1,-2,3]}
		{"sema":"fx:p_sema","pid":7,"tid":7,"value":1}
		{"probe":"fx:p_none","pid":7,"tid":7,"args":[]}
		{"note":"done"}
	EOF
	)
	t=$(oc t.json <<-'EOF'
		{"probe":"fx:p_int","pid":7,"tid":8,"cpu":1,"ts":100,"args":[1,-2,3]}
		{"probe":"fx:p_none","pid":7,"tid":7,"cpu":0,"ts":101,"args":[]}
	EOF
	)
	run -0 oraclecmp "$o" "$t"
	assert_output "oraclecmp: 2 events match"
}

@test "harness.oraclecmp-order: oraclecmp: order does not matter, whitespace does not matter" {
	o=$(oc o.json <<-'EOF'
		{"probe":"fx:a","pid":1,"tid":1,"args":[1]}
		{"probe":"fx:b","pid":1,"tid":2,"args":[2]}
		{"probe":"fx:c","pid":2,"tid":2,"args":[3]}
	EOF
	)
	t=$(oc t.json <<-'EOF'
		{ "probe" : "fx:c", "pid" : 2, "tid" : 2, "args" : [ 3 ] }
		{"probe":"fx:a","pid":1,"tid":1,"args":[1]}

		{"probe":"fx:b","pid":1,"tid":2,"args":[2]}
	EOF
	)
	run -0 oraclecmp "$o" "$t"
	assert_output "oraclecmp: 3 events match"
}

@test "harness.oraclecmp-counts: oraclecmp: duplicate counts are compared, both ways" {
	o=$(oc o.json <<-'EOF'
		{"probe":"fx:a","pid":1,"tid":1,"args":[1]}
		{"probe":"fx:a","pid":1,"tid":1,"args":[1]}
		{"probe":"fx:a","pid":1,"tid":1,"args":[1]}
		{"probe":"fx:b","pid":1,"tid":1,"args":[]}
	EOF
	)
	t=$(oc t.json <<-'EOF'
		{"probe":"fx:a","pid":1,"tid":1,"args":[1]}
		{"probe":"fx:b","pid":1,"tid":1,"args":[]}
		{"probe":"fx:b","pid":1,"tid":1,"args":[]}
	EOF
	)
	run -1 oraclecmp "$o" "$t"
	assert_line 'missing (x2): {"probe":"fx:a","pid":1,"tid":1,"args":[1]}'
	assert_line 'unexpected (x1): {"probe":"fx:b","pid":1,"tid":1,"args":[]}'
	assert_line "oraclecmp: MISMATCH: 2 events match, 2 missing, 1 unexpected (oracle 4, trace 3)"
}

@test "harness.oraclecmp-off-by-one: oraclecmp: one argument off by one is a mismatch" {
	o=$(oc o.json <<<'{"probe":"fx:p","pid":5,"tid":5,"args":[10,20,30]}')
	t=$(oc t.json <<<'{"probe":"fx:p","pid":5,"tid":5,"args":[10,21,30]}')
	run -1 oraclecmp "$o" "$t"
	assert_line 'missing (x1): {"probe":"fx:p","pid":5,"tid":5,"args":[10,20,30]}'
	assert_line 'unexpected (x1): {"probe":"fx:p","pid":5,"tid":5,"args":[10,21,30]}'
}

@test "harness.oraclecmp-fields: oraclecmp: pid, tid and probe name all take part" {
	o=$(oc o.json <<<'{"probe":"fx:p","pid":5,"tid":6,"args":[1]}')
	for t in '{"probe":"fx:p","pid":5,"tid":5,"args":[1]}' \
		 '{"probe":"fx:p","pid":6,"tid":6,"args":[1]}' \
		 '{"probe":"fx:q","pid":5,"tid":6,"args":[1]}' \
		 '{"probe":"fx:p","pid":5,"tid":6,"args":[1,1]}'; do
		run -1 oraclecmp "$o" "$(oc t.json <<<"$t")"
		assert_output --partial "1 missing, 1 unexpected"
	done
}

@test "harness.oraclecmp-64bit: oraclecmp: 64-bit values are exact: u64 max is not -1, 2^63 is not 2^63-1" {
	o=$(oc o.json <<-'EOF'
		{"probe":"fx:u","pid":1,"tid":1,"args":[18446744073709551615]}
		{"probe":"fx:s","pid":1,"tid":1,"args":[-9223372036854775808]}
		{"probe":"fx:b","pid":1,"tid":1,"args":[9223372036854775808]}
	EOF
	)
	t=$(oc t.json <<-'EOF'
		{"probe":"fx:u","pid":1,"tid":1,"args":[18446744073709551615]}
		{"probe":"fx:s","pid":1,"tid":1,"args":[-9223372036854775808]}
		{"probe":"fx:b","pid":1,"tid":1,"args":[9223372036854775808]}
	EOF
	)
	run -0 oraclecmp "$o" "$t"
	assert_output "oraclecmp: 3 events match"

	t=$(oc t2.json <<-'EOF'
		{"probe":"fx:u","pid":1,"tid":1,"args":[-1]}
		{"probe":"fx:s","pid":1,"tid":1,"args":[9223372036854775808]}
		{"probe":"fx:b","pid":1,"tid":1,"args":[9223372036854775807]}
	EOF
	)
	run -1 oraclecmp "$o" "$t"
	assert_output --partial "0 events match, 3 missing, 3 unexpected"
	# Values a double cannot tell apart.
	o=$(oc o3.json <<<'{"probe":"fx:u","pid":1,"tid":1,"args":[18446744073709551614]}')
	t=$(oc t3.json <<<'{"probe":"fx:u","pid":1,"tid":1,"args":[18446744073709551615]}')
	run -1 oraclecmp "$o" "$t"
}

@test "harness.oraclecmp-zero-null: oraclecmp: -0 equals 0; null equals only null" {
	o=$(oc o.json <<<'{"probe":"fx:z","pid":1,"tid":1,"args":[0,null]}')
	run -0 oraclecmp "$o" "$(oc t.json <<<'{"probe":"fx:z","pid":1,"tid":1,"args":[-0,null]}')"
	run -1 oraclecmp "$o" "$(oc t.json <<<'{"probe":"fx:z","pid":1,"tid":1,"args":[0,0]}')"
	run -1 oraclecmp "$o" "$(oc t.json <<<'{"probe":"fx:z","pid":1,"tid":1,"args":[0,"null"]}')"
}

@test "harness.oraclecmp-strings: oraclecmp: strings compare by content, whatever the escape spelling" {
	o=$(oc o.json <<-'EOF'
		{"probe":"fx:s","pid":1,"tid":1,"args":["A/\"\\\n\t\u0001é😀"]}
	EOF
	)
	t=$(oc t.json <<-'EOF'
		{"probe":"fx:s","pid":1,"tid":1,"args":["\u0041\/\u0022\u005c\u000a\u0009\u0001\u00e9\ud83d\ude00"]}
	EOF
	)
	run -0 oraclecmp "$o" "$t"
	assert_output "oraclecmp: 1 events match"
	# One character different, and a string is never a number.
	run -1 oraclecmp "$o" "$(oc t2.json <<<'{"probe":"fx:s","pid":1,"tid":1,"args":["A/\"\\\n\t\u0002é😀"]}')"
	run -1 oraclecmp "$(oc o3.json <<<'{"probe":"fx:s","pid":1,"tid":1,"args":["5"]}')" \
		"$(oc t3.json <<<'{"probe":"fx:s","pid":1,"tid":1,"args":[5]}')"
	assert_output --partial 'unexpected (x1): {"probe":"fx:s","pid":1,"tid":1,"args":[5]}'
	assert_output --partial 'missing (x1): {"probe":"fx:s","pid":1,"tid":1,"args":["5"]}'
}

@test "harness.oraclecmp-only: oraclecmp: --only restricts both sides to matching probes" {
	o=$(oc o.json <<-'EOF'
		{"probe":"fx:keep_a","pid":1,"tid":1,"args":[1]}
		{"probe":"fx:drop","pid":1,"tid":1,"args":[1]}
		{"probe":"lib:keep_b","pid":1,"tid":1,"args":[2]}
	EOF
	)
	t=$(oc t.json <<-'EOF'
		{"probe":"fx:keep_a","pid":1,"tid":1,"args":[1]}
		{"probe":"lib:keep_b","pid":1,"tid":1,"args":[2]}
		{"probe":"other:x","pid":1,"tid":1,"args":[]}
	EOF
	)
	run -1 oraclecmp "$o" "$t"
	run -0 oraclecmp --only '*:keep_*' "$o" "$t"
	assert_output "oraclecmp: 2 events match"
	run -0 oraclecmp --only 'fx:keep_a' --only 'lib:*' "$o" "$t"
	assert_output "oraclecmp: 2 events match"
	run -0 oraclecmp --only 'nothing:*' "$o" "$t"
	assert_output "oraclecmp: 0 events match"
}

@test "harness.oraclecmp-malformed: oraclecmp: malformed input names the file and line, exit 2" {
	# Syntax errors in jansson's words (harness/tools/jsonl.c), the rest
	# in oraclecmp's.
	good='{"probe":"fx:p","pid":1,"tid":1,"args":[1]}'
	o=$(oc o.json <<<"$good")
	local -A bad=(
		['{"probe":"fx:p","pid":1,"tid":1,"args":[1,]}']="unexpected token near ']'"
		['{"probe":"fx:p","pid":1,"tid":1,"args":[1]'$'\n']="'}' expected near end of file"
		['{"probe" "fx:p","pid":1,"tid":1,"args":[1]}']="':' expected near '\"fx:p\"'"
		['{"probe":"fx:p,"pid":1,"tid":1,"args":[1]}']="'}' expected near 'pid'"
		['{"probe":"fx:p","pid":01,"tid":1,"args":[1]}']="leading zero"
		['{"probe":"fx:p","pid":1,"tid":1,"args":[18446744073709551616]}']="above the unsigned 64-bit range"
		['{"probe":"fx:p","pid":1,"tid":1,"args":[-9223372036854775809]}']="below the signed 64-bit range"
		['{"probe":"fx:p","pid":1,"tid":1,"args":["\x"]}']="invalid escape"
		['{"probe":"fx:p","pid":1,"tid":1,"args":["\ud800"]}']="invalid Unicode '\\uD800'"
		['{"probe":"fx:p","pid":1,"tid":1,"args":[[1]]}']="nested array"
		['{"probe":"fx:p","pid":1,"tid":1,"args":[1],"x":{"a":1}}']="nested object"
		['{"probe":"fx:p","pid":1,"pid":1,"tid":1,"args":[1]}']='duplicate key "pid"'
		['{"probe":"fx:p","pid":1,"tid":1,"args":[1]} x']="trailing characters"
		['{"probe":"fx:p","pid":"1","tid":1,"args":[1]}']='"pid" is not an integer'
		['{"probe":"fx:p","pid":1,"args":[1]}']='no "tid"'
		['{"probe":"fx:p","pid":1,"tid":1}']='no "args"'
		['{"pid":1,"tid":1,"args":[1]}']='no "probe"'
		['{"probe":"fx:p","pid":1,"tid":1,"args":1}']='"args" is not an array'
		['[1,2]']="expected '{'"
		['{"probe":"fx:p","pid":1,"tid":1,"args":[tru]}']="invalid token near 'tru'"
	)
	for line in "${!bad[@]}"; do
		t=$(printf '%s\n%s\n' "$good" "$line" | oc t.json)
		run -2 oraclecmp "$o" "$t"
		assert_output --partial "oraclecmp: '$t' line 2"
		assert_output --partial "${bad[$line]}"
	done
}

@test "harness.oraclecmp-malformed-oracle: oraclecmp: a malformed oracle is reported too; oracle lines need no probe" {
	o=$(oc o.json <<<'{"probe":"fx:p","pid":1,"tid":1,"args":[1}')
	t=$(oc t.json <<<'{"probe":"fx:p","pid":1,"tid":1,"args":[1]}')
	run -2 oraclecmp "$o" "$t"
	assert_output --partial "oraclecmp: '$o' line 1"
	# An oracle "probe" line must be complete.
	o=$(oc o2.json <<<'{"probe":"fx:p","pid":1,"args":[1]}')
	run -2 oraclecmp "$o" "$t"
	assert_output --partial 'no "tid"'
}

@test "harness.oraclecmp-usage: oraclecmp: bad usage and missing files exit 2" {
	o=$(oc o.json <<<'{"probe":"fx:p","pid":1,"tid":1,"args":[1]}')
	run -2 oraclecmp "$o"
	assert_output --partial "usage:"
	run -2 oraclecmp --bogus "$o" "$o"
	assert_output --partial "unknown option '--bogus'"
	run -2 oraclecmp --only
	run -2 oraclecmp "$o" "$BATS_TEST_TMPDIR/nope.json"
	assert_output --partial "nope.json': No such file or directory"
}

@test "harness.oraclecmp-large: oraclecmp: a large multiset, shuffled, still matches; one drop is found" {
	o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	for ((i = 0; i < 3000; i++)); do
		printf '{"probe":"fx:p%d","pid":%d,"tid":%d,"args":[%d,-%d,"s%d"]}\n' \
			$((i % 7)) $((i % 3)) $((i % 5)) $((i % 11)) $((i % 13)) $((i % 2))
	done >"$o"
	shuf "$o" >"$t"
	run -0 oraclecmp "$o" "$t"
	assert_output "oraclecmp: 3000 events match"
	sed -i 1d "$t"
	run -1 oraclecmp "$o" "$t"
	assert_output --partial "2999 events match, 1 missing, 0 unexpected"
}

@test "harness.assert-oracle: assert_oracle: passes on a match, fails on a mismatch and on nothing" {
	o=$(oc o.json <<<'{"probe":"fx:p","pid":1,"tid":1,"args":[1]}')
	t=$(oc t.json <<<'{"probe":"fx:p","pid":1,"tid":1,"args":[1]}')
	assert_oracle "$o" "$t"
	t2=$(oc t2.json <<<'{"probe":"fx:p","pid":1,"tid":1,"args":[2]}')
	run ! assert_oracle "$o" "$t2"
	assert_output --partial "oracle and trace differ"
	assert_output --partial 'unexpected (x1)'
	run ! assert_oracle "$o" "$t" --only 'none:*'
	assert_output --partial "no events on either side"
	assert_oracle "$o" "$t" --only 'none:*' --allow-empty
	[[ $(pc_count_events "$o") == 1 ]]
	[[ $(pc_count_events "$o" 'none:*') == 0 ]]
}

# ---------------------------------------------------------------------------
# pc-peek

# A process to read from: a copy of sleep named like a fixture.
start_sleeper() {
	cp /bin/sleep "$BATS_TEST_TMPDIR/fx_sleeper"
	pc_spawn SLEEPER "$BATS_TEST_TMPDIR/fx_sleeper" 1000
	pc_wait_until 5 grep -q fx_sleeper "/proc/$SLEEPER/maps"
	SLEEPER_BASE=0x$(awk '/fx_sleeper$/ { split($1, r, "-"); print r[1]; exit }' "/proc/$SLEEPER/maps")
}

@test "harness.pc-peek-sizes: pc-peek: reads the ELF magic of a running process in every size" {
	start_sleeper
	run -0 pc_peek_bytes "$SLEEPER" "$SLEEPER_BASE" 4
	assert_output "7f 45 4c 46"
	run -0 pc_peek "$SLEEPER" "$SLEEPER_BASE" 1
	assert_output 127
	run -0 pc_peek "$SLEEPER" "$SLEEPER_BASE" 2
	assert_output 17791
	run -0 pc_peek "$SLEEPER" "${SLEEPER_BASE#0x}" 4
	assert_output 1179403647
	# e_ident[4..7]: ELFCLASS64, little endian, version 1, SysV ABI.
	run -0 pc_peek "$SLEEPER" "$(printf '0x%x' $((SLEEPER_BASE + 4)))" 4
	assert_output $((0x00010102))
	run -0 pc_peek "$SLEEPER" "$SLEEPER_BASE" 8
	assert_output $((0x00010102464c457f))
}

@test "harness.pc-peek-errors: pc-peek: bad input exits 2, a failed read exits 1" {
	start_sleeper
	run -2 pc_peek "$SLEEPER" "$SLEEPER_BASE" 3
	assert_output --partial "SIZE 3: must be 1, 2, 4 or 8"
	run -2 pc_peek x "$SLEEPER_BASE" 4
	assert_output --partial "'x': not a process id"
	run -2 pc_peek -1 "$SLEEPER_BASE" 4
	run -2 pc_peek "$SLEEPER" 0xzz 4
	assert_output --partial "'0xzz': not a hex address"
	run -2 pc_peek "$SLEEPER" "$SLEEPER_BASE"
	assert_output --partial "usage:"
	run -2 pc_peek_bytes "$SLEEPER" "$SLEEPER_BASE" 0
	run -2 pc_peek_bytes "$SLEEPER" "$SLEEPER_BASE" 4097
	run -1 pc_peek "$SLEEPER" 0 8
	assert_output --partial "cannot read 8 bytes at 0x0"
	run -1 pc_peek 999999999 "$SLEEPER_BASE" 8
	assert_output --partial "pid 999999999: no such process"
}

@test "harness.pc-jsel-select: pc-jsel: tests select lines, fields print as jq -r would, numbers exact" {
	local f=$BATS_TEST_TMPDIR/j.jsonl
	printf '%s\n' '{"sema":"fx:sem_a","pid":123,"value":1}' '{"sema":"fx:sem_a","pid":124,"value":0}' \
		'{"sema":"fx:sem_b","pid":123,"value":7}' '' \
		'{"probe":"fx:a1","tid":5,"args":[18446744073709551615,-1,"x\u0041"],"ok":true,"no":false,"n":null}' >"$f"
	run -0 pc_jsel -w sema=fx:sem_a value "$f"
	assert_output $'1\n0'
	run -0 pc_jsel -w sema=fx:sem_a -w pid=124 value "$f"
	assert_output 0
	run -0 pc_jsel -W sema=fx:sem_a -t sema pid value "$f"
	assert_output $'123\t7'
	# u64 max stays itself (jq 1.6 prints 18446744073709552000).
	run -0 pc_jsel -t probe -d ' ' tid args.0 args.1 args.2 args.3 ok no n missing "$f"
	assert_output '5 18446744073709551615 -1 xA null true false null null'
	run -0 pc_jsel -t no probe "$f"
	assert_output ''
	run -0 pc_jsel -t ok -w no=false -w n=null probe - <"$f"
	assert_output fx:a1
	run -0 pc_jsel -w sema=fx:sem_c value "$f"
	assert_output ''
}

@test "harness.pc-jsel-errors: pc-jsel: a malformed line, an array as a field, a missing file and bad usage exit 2, naming the reason" {
	local f=$BATS_TEST_TMPDIR/j.jsonl
	printf '%s\n' '{"a":1}' '{"a":2} x' >"$f"
	run -2 pc_jsel a "$f"
	assert_line 1
	assert_output --partial "$f:2:8: trailing characters after the object"
	printf '%s\n' '{"a":[1]}' >"$f"
	run -2 pc_jsel a "$f"
	assert_output --partial "$f:1: field 'a' is an array or an object"
	run -2 pc_jsel a "$BATS_TEST_TMPDIR/none"
	assert_output --partial "'$BATS_TEST_TMPDIR/none': No such file or directory"
	run -2 pc_jsel a
	assert_output --partial "a FIELD and a FILE are needed"
	run -2 pc_jsel -w a a "$f"
	assert_output --partial "-w and -W take KEY=VALUE"
}

@test "harness.pc-peek-file: pc-peek --file: the bytes at each offset, one line each; a short read or a bad pair fails" {
	local f=$BATS_TEST_TMPDIR/bytes
	printf 'ABCDEFGH' >"$f"
	run -0 "$PC_TOOLS/pc-peek" --file "$f" 0 2 6 2 3 1
	assert_output $'41 42\n47 48\n44'
	run -1 "$PC_TOOLS/pc-peek" --file "$f" 0 1 7 2
	assert_output --partial "$f: short read at 0x7: 1 of 2 bytes"
	run -2 "$PC_TOOLS/pc-peek" --file "$f" 0 0
	assert_output --partial "'0': N must be 1..4096"
	run -2 "$PC_TOOLS/pc-peek" --file "$f" x 1
	assert_output --partial "'x': not a file offset"
	run -2 "$PC_TOOLS/pc-peek" --file "$f" 0
	assert_output --partial "usage:"
	run -1 "$PC_TOOLS/pc-peek" --file "$f.none" 0 1
	assert_output --partial "No such file or directory"
}

@test "harness.pc-procs: pc-procs: fixture processes with their tag, others by session, a zombie's tag unknown" {
	local sess=$BATS_TEST_TMPDIR/sessions other
	start_sleeper
	# Not a fixture's name: listed only through its session.
	cp /bin/sleep "$BATS_TEST_TMPDIR/other"
	pc_spawn other "$BATS_TEST_TMPDIR/other" 1000
	run -0 "$PC_TOOLS/pc-procs"
	assert_line "$SLEEPER fx_sleeper S $PC_TAG"
	refute_line --partial "$other "
	echo "$other" >"$sess"
	run -0 "$PC_TOOLS/pc-procs" "$sess"
	assert_line "$other other S $PC_TAG"
	PC_TAG= run -0 env -u PC_TAG "$PC_TOOLS/pc-procs"
	assert_line "$SLEEPER fx_sleeper S $PC_TAG"
	# A zombie has dropped its environment: no tag to read.
	pc_spawn Z bash -c "'$BATS_TEST_TMPDIR/fx_sleeper' 0 & exec sleep 1000"
	pc_wait_until 5 bash -c "'$PC_TOOLS/pc-procs' | grep -q ' fx_sleeper Z '"
	run -0 "$PC_TOOLS/pc-procs"
	assert_line --regexp '^[0-9]+ fx_sleeper Z \?$'
	run -2 "$PC_TOOLS/pc-procs" -x
	assert_output --partial "usage: pc-procs"
	run -2 "$PC_TOOLS/pc-procs" "$BATS_TEST_TMPDIR"
	assert_output --partial "pc-procs: '$BATS_TEST_TMPDIR': "
}

@test "harness.elf-notes-python: pc_elf_notes and pc_load_bias find python's semaphores at rest" {
	requires file:/usr/bin/python3.11
	run -0 pc_elf_notes /usr/bin/python3.11
	assert_line --regexp '^python function__entry 0x[0-9a-f]{16} 0x[0-9a-f]{16} 0x[0-9a-f]{16} 8@%rbp 8@%r12 -4@%eax$'
	[[ ${#lines[@]} -ge 8 ]]
	# A guest image holds python's file only (its notes), not its
	# libraries and stdlib: what follows needs it running.
	/usr/bin/python3.11 -c pass 2>/dev/null ||
		skip "python3.11 is here but does not run (a guest image holds the file only)"
	pc_spawn PY /usr/bin/python3.11 -c 'import time; time.sleep(1000)'
	# python's own libc, after the exec: the shell pc_spawn forks has a
	# libc of its own before it (seen once, under load: python not mapped).
	py_up() { [[ $(readlink "/proc/$PY/exe") == /usr/bin/python3.11 ]] && grep -q libc.so "/proc/$PY/maps"; }
	pc_wait_until 5 py_up
	read -r _ _ _ _ sema _ < <(pc_elf_notes /usr/bin/python3.11 | grep ' function__entry ')
	addr=$(pc_runtime_addr "$PY" /usr/bin/python3.11 "$sema")
	run -0 pc_peek "$PY" "$addr" 2
	assert_output 0
	pc_sema_watch "$PY" "$addr"
}

# ---------------------------------------------------------------------------
# requires, pc, the log

# nested NAME: run the bats file $BATS_TEST_TMPDIR/NAME.bats (the tests
# come from stdin, after the usual load) with the same helpers; the TAP
# output lands in $output.  Tests are written "TEST name {": bats would
# take an "@test" line in this file for one of its own, heredoc or not.
# Its tags extend ours, so what it leaks is its own teardown's business.
nested() {
	local f=$BATS_TEST_TMPDIR/$1.bats
	{
		echo "load '$PROBECHECK_ROOT/suites/helpers/common'"
		sed 's/^\([[:space:]]*\)TEST /\1@test /'
	} >"$f"
	# A clean bats: none of the outer run's BATS_* variables.
	env $(compgen -e | grep '^BATS_' | sed 's/^/-u /') \
		PC_RUN_TAG="$PC_TAG/nested" BATS_TEST_TIMEOUT=60 bats --tap "$f" 2>&1
}

# nested_run NAME [VAR=VALUE...]: nested, in a clean process with VARs set.
# Tests that plant a violation pass PC_GRACE=1: the violation is real, and
# the default 5 s in which teardown lets a SIGKILL or a BPF free settle
# would only cost time (15 s of make check).
nested_run() {
	env "${@:2}" bash -c "$(declare -f nested); BATS_TEST_TMPDIR='$BATS_TEST_TMPDIR' PC_TAG='$PC_TAG' nested $1"
}

@test "harness.requires-skips: requires: skips with the probed reason; unknown capability fails" {
	caps=$BATS_TEST_TMPDIR/caps
	printf 'root=1\nuprobe_pmu=0\nuprobe_pmu_why=no uprobe PMU (test)\n' >"$caps"
	run -1 nested_run req PROBECHECK_CAPS="$caps" <<-'EOF'
		TEST "req.root-present: t1" { requires root; }
		TEST "req.pmu-missing: t2" { requires root uprobe_pmu; false; }
		TEST "req.cmd-missing: t3" { requires cmd:no-such-command-here; false; }
		TEST "req.cap-unknown: t4" { requires bogus_cap; }
		TEST "req.file-missing: t5" { requires file:/no/such/file; false; }
	EOF
	assert_line "ok 1 req.root-present: t1"
	assert_line "ok 2 req.pmu-missing: t2 # skip requires uprobe_pmu: no uprobe PMU (test)"
	assert_line "ok 3 req.cmd-missing: t3 # skip requires cmd:no-such-command-here: 'no-such-command-here' not installed"
	assert_line "not ok 4 req.cap-unknown: t4"
	assert_output --partial "requires: unknown capability 'bogus_cap'"
	assert_line "ok 5 req.file-missing: t5 # skip requires file:/no/such/file: '/no/such/file' missing"
	# File-wide requirements, declared after the load.
	run -0 nested_run req2 PROBECHECK_CAPS="$caps" <<-'EOF'
		PC_REQUIRES=(root uprobe_pmu)
		TEST "req2.file-wide: t6" { false; }
	EOF
	assert_line "ok 1 req2.file-wide: t6 # skip requires uprobe_pmu: no uprobe PMU (test)"
}

@test "harness.caps-file: the capability file of this run has every row of 'probecheck features'" {
	local c rows
	caps=$(pc_caps_file)
	run -0 pc features
	rows=$(sed -n 's/^\([a-z][a-z0-9_]*\)=[01]$/\1/p' <<<"$output")
	for c in $rows root uprobe_pmu ref_ctr_offset btf tracefs bpf uprobe_multi; do
		grep -qE "^$c=[01]$" "$caps" || fail "no $c in $caps"
	done
	grep -q "^kernel=$(uname -r)$" "$caps"
}

# A stand-in for probecheck: prints to both streams, exits 3.
fake_build() {
	mkdir -p "$BATS_TEST_TMPDIR/build/tools"
	ln -sf "$PC_TOOLS"/* "$BATS_TEST_TMPDIR/build/tools/"
	cat >"$BATS_TEST_TMPDIR/build/probecheck" <<-'EOF'
		#!/bin/sh
		echo "out: $*"
		echo "err: $*" >&2
		exit 3
	EOF
	chmod +x "$BATS_TEST_TMPDIR/build/probecheck"
}

@test "harness.pc-passes-through: pc: passes stdout and stderr through apart, keeps the status" {
	fake_build
	PC_BIN=$BATS_TEST_TMPDIR/build/probecheck
	run -3 --separate-stderr pc list "a b"
	assert_output "out: list a b"
	[[ $stderr == "err: list a b" ]]
	grep -q "pc\[1\]: probecheck list a\\\\ b" "$PC_LOG"
	grep -q "pc\[1\]: exit status 3" "$PC_LOG"
}

@test "harness.failing-log: a failing test prints the probecheck log: command, status, stdout, stderr" {
	fake_build
	run -1 nested_run log PROBECHECK_BUILD="$BATS_TEST_TMPDIR/build" <<-'EOF'
		TEST "log.trace-fails: fails" { run -0 pc trace -c true 'usdt:x:y:z'; }
		TEST "log.list-passes: passes" { run -3 pc list x; }
	EOF
	assert_line "not ok 1 log.trace-fails: fails"
	assert_line --partial "# ---- probecheck log of this test ----"
	assert_line --partial "pc[1]: probecheck trace -c true usdt:x:y:z"
	assert_line --partial "pc[1]: exit status 3"
	assert_line --partial "| out: trace -c true usdt:x:y:z"
	assert_line --partial "| err: trace -c true usdt:x:y:z"
	assert_line "ok 2 log.list-passes: passes"
	refute_output --partial "pc[1]: probecheck list x"
}

# ---------------------------------------------------------------------------
# summary and barriers

@test "harness.assert-summary: assert_summary: delivered + dropped == hits == expected" {
	stderr=$'noise\nprobecheck: summary: delivered=5 dropped=1 hits=6'
	assert_summary 6
	[[ $PC_DELIVERED == 5 && $PC_DROPPED == 1 && $PC_HITS == 6 ]]
	run ! assert_summary 7
	assert_output --partial "hits 6, expected 7"
	stderr='probecheck: summary: delivered=5 dropped=0 hits=6'
	run ! assert_summary 6
	assert_output --partial "delivered 5 + dropped 0 != hits 6"
	stderr=$'probecheck: summary: delivered=1 dropped=0 hits=1\nprobecheck: summary: delivered=1 dropped=0 hits=1'
	run ! assert_summary 1
	assert_output --partial "more than one summary line"
	stderr='probecheck: done'
	run ! assert_summary 1
	assert_output --partial "no 'probecheck: summary:' line"
	printf 'probecheck: summary: delivered=2 dropped=0 hits=2\n' >"$BATS_TEST_TMPDIR/err"
	assert_summary 2 "$BATS_TEST_TMPDIR/err"
}

@test "harness.fifo-barrier: fifo barrier: a read waits for the writer; a timeout fails" {
	f=$(pc_fifo go)
	[[ -p $f ]]
	# Write only once the reader is blocked in its read (poll, as read -t
	# waits): the read has to wait for the writer.
	( pc_fifo_read "$f" >"$BATS_TEST_TMPDIR/got" 3>&- ) &
	r=$!
	# In poll, select, pselect6 or ppoll (x86-64 numbers 7, 23, 270, 271),
	# read from /proc/PID/syscall: wchan's symbol differs between kernels
	# (5.10 names neither poll_schedule_timeout nor do_select there).
	pc_wait_until 10 grep -qE '^(7|23|270|271) ' "/proc/$r/syscall"
	pc_fifo_write "$f" "hello there"
	wait "$r"
	[[ $(cat "$BATS_TEST_TMPDIR/got") == "hello there" ]]
	run ! pc_fifo_read "$f" 1
	assert_output --partial "nothing on '$f' within 1s"
	run ! pc_fifo_write "$f" x 1
	assert_output --partial "no reader on '$f' within 1s"
	run ! pc_wait_file "$BATS_TEST_TMPDIR/never" 1
	touch "$BATS_TEST_TMPDIR/ready"
	pc_wait_file "$BATS_TEST_TMPDIR/ready" 1
}

# ---------------------------------------------------------------------------
# the cleanup invariants, each broken on purpose in a nested run

@test "harness.invariants-spawned: invariants: a spawned fixture is stopped by teardown; the test passes" {
	cp /bin/sleep "$BATS_TEST_TMPDIR/fx_spawned"
	run -0 nested_run spawn <<-EOF
		TEST "spawn.fixture-spawned: spawns" {
			pc_spawn P "$BATS_TEST_TMPDIR/fx_spawned" 1000
			echo "\$P" >"$BATS_TEST_TMPDIR/pid"
			pc_check_clean
		}
	EOF
	assert_line "ok 1 spawn.fixture-spawned: spawns"
	! pc_inv_alive "$(cat "$BATS_TEST_TMPDIR/pid")"
}

@test "harness.invariants-left-running: invariants: a fixture left running fails the test and is killed" {
	cp /bin/sleep "$BATS_TEST_TMPDIR/fx_leaked"
	run -1 nested_run leak PC_GRACE=1 <<-EOF
		TEST "leak.fixture-left: leaks" {
			"$BATS_TEST_TMPDIR/fx_leaked" 1000 3>&- &
			echo "\$!" >"$BATS_TEST_TMPDIR/pid"
		}
	EOF
	assert_line "not ok 1 leak.fixture-left: leaks"
	assert_output --regexp "stray process: pid [0-9]+ comm fx_leaked"
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	pc_wait_until 5 eval "! pc_inv_alive $pid"
}

@test "harness.invariants-orphan: invariants: pc_check_clean spots an orphaned fixture mid-test" {
	cp /bin/sleep "$BATS_TEST_TMPDIR/fx_orphan"
	run -1 nested_run orphan PC_GRACE=1 <<-EOF
		TEST "orphan.child-orphaned: orphans" {
			pc_spawn P "$BATS_TEST_TMPDIR/fx_orphan" 1000
			pc_check_clean
			( "$BATS_TEST_TMPDIR/fx_orphan" 999 3>&- & echo "\$!" >"$BATS_TEST_TMPDIR/pid" )
			echo "clean so far"
			pc_check_clean
		}
	EOF
	assert_line "not ok 1 orphan.child-orphaned: orphans"
	assert_output --partial "clean so far"
	assert_output --regexp "stray process: pid [0-9]+ comm fx_orphan"
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	pc_wait_until 5 eval "! pc_inv_alive $pid"
}

@test "harness.invariants-watches: invariants: a semaphore or site bytes not back to their value fail the test" {
	cp /bin/sleep "$BATS_TEST_TMPDIR/fx_watched"
	run -1 nested_run watch <<-EOF
		start() {
			pc_spawn P "$BATS_TEST_TMPDIR/fx_watched" 1000
			pc_wait_until 5 grep -q fx_watched "/proc/\$P/maps"
			B=0x\$(awk '/fx_watched\$/ { split(\$1, r, "-"); print r[1]; exit }' "/proc/\$P/maps")
		}
		TEST "watch.sema-ok: sema ok" { start; pc_sema_watch "\$P" "\$B" 17791; pc_bytes_watch "\$P" "\$B" 4; }
		TEST "watch.sema-changed: sema changed" { start; pc_sema_watch "\$P" "\$B" 1; }
		TEST "watch.bytes-changed: bytes changed" { start; echo "\$P \$B 4 7f 45 4c 47" >>"\$PC_T/bytes"; }
	EOF
	assert_line "ok 1 watch.sema-ok: sema ok"
	assert_line "not ok 2 watch.sema-changed: sema changed"
	assert_output --regexp "semaphore pid [0-9]+ at 0x[0-9a-f]+ is 17791, expected 1"
	assert_line "not ok 3 watch.bytes-changed: bytes changed"
	assert_output --regexp "probe site pid [0-9]+ at 0x[0-9a-f]+ holds '7f 45 4c 46', expected '7f 45 4c 47'"
}

@test "harness.invariants-uprobe: invariants: a uprobe left in uprobe_events fails the test; ours is removed" {
	requires root tracefs
	cp /bin/sleep "$BATS_TEST_TMPDIR/fx_target"
	# Not ours, so teardown leaves it: this test removes it before its own check.
	pc_on_teardown pc_inv_remove_uprobe "p:pcselftest_other/ev"
	run -1 nested_run uprobe <<-EOF
		TEST "uprobe.ours-left: leaves a uprobe of ours" {
			echo "p:pc_selftest/pc_leak $BATS_TEST_TMPDIR/fx_target:0x1000" >>"$PC_TRACEFS/uprobe_events"
		}
		TEST "uprobe.someones-left: leaves someone's uprobe" {
			echo "p:pcselftest_other/ev $BATS_TEST_TMPDIR/fx_target:0x1000" >>"$PC_TRACEFS/uprobe_events"
		}
	EOF
	assert_line "not ok 1 uprobe.ours-left: leaves a uprobe of ours"
	assert_output --partial "uprobe of ours left in uprobe_events: p:pc_selftest/pc_leak"
	assert_line "not ok 2 uprobe.someones-left: leaves someone's uprobe"
	assert_output --partial "new uprobe in uprobe_events: p:pcselftest_other/ev"
	refute_output --partial "uprobe of ours left in uprobe_events: p:pcselftest_other/ev"
	run -0 cat "$PC_TRACEFS/uprobe_events"
	refute_output --partial pc_selftest
	assert_output --partial pcselftest_other
}

@test "harness.invariants-bpf-map: invariants: a BPF map of ours fails the test" {
	requires root bpf cmd:bpftool
	mkdir "$BATS_TEST_TMPDIR/bpffs"
	mount -t bpf bpf "$BATS_TEST_TMPDIR/bpffs"
	pc_on_teardown umount "$BATS_TEST_TMPDIR/bpffs"
	pc_on_teardown rm -f "$BATS_TEST_TMPDIR/bpffs/pc_selftest"
	# A map nobody holds is told only by the whole-machine check (with
	# other suites beside this one, the run's sweep sees it).
	run -1 nested_run bpf PC_GRACE=1 PROBECHECK_PARALLEL=0 <<-EOF
		TEST "bpf.map-left: leaves a map" {
			bpftool map create "$BATS_TEST_TMPDIR/bpffs/pc_selftest" type array key 4 value 4 entries 1 name pc_selftest
		}
	EOF
	assert_line "not ok 1 bpf.map-left: leaves a map"
	assert_output --regexp "BPF object of ours: map [0-9]+ pc_selftest"
}

@test "harness.invariants-sanitizer: invariants: under make sanitize, an ASan report file or a UBSan line on a command's stderr fails the test" {
	requires cmd:gcc
	local d=$BATS_TEST_TMPDIR/san
	mkdir -p "$d/reports"
	# Real sanitizer runtimes, as make sanitize links them.
	echo 'int main(int c, char **v) { char *p = __builtin_malloc(4); p[c + 3] = 1; __builtin_free(p); return 0; }' >"$d/heap.c"
	echo 'int main(int c, char **v) { int x = c + 2147483647; return x & 1; }' >"$d/ovf.c"
	gcc -g -fsanitize=address,undefined -fno-sanitize-recover=all "$d/heap.c" -o "$d/heap"
	gcc -g -fsanitize=address,undefined -fno-sanitize-recover=all "$d/ovf.c" -o "$d/ovf"
	run -1 nested_run san PC_GRACE=1 PROBECHECK_SANITIZER_DIR="$d/reports" \
		ASAN_OPTIONS="log_path=$d/reports/asan" UBSAN_OPTIONS=exitcode=86 <<-EOF
		TEST "san.heap-overflow: heap overflow" { "$d/heap" || true; }
		TEST "san.signed-overflow: signed overflow" { "$d/ovf" 2>"\$BATS_TEST_TMPDIR/err" || true; }
		TEST "san.clean-run: clean" { true; }
	EOF
	assert_line "not ok 1 san.heap-overflow: heap overflow"
	assert_output --regexp "sanitizer report $d/reports/asan\.[0-9]+: .*heap-buffer-overflow"
	assert_line "not ok 2 san.signed-overflow: signed overflow"
	assert_output --regexp "UBSan report in .*/err: .*signed integer overflow"
	assert_line "ok 3 san.clean-run: clean"
}

# ---------------------------------------------------------------------------
# the suites themselves

@test "harness.suites-use-helpers: every suite loads the helpers, keeps their setup and teardown, never uses a bare run" {
	local bad=()
	for f in "$PROBECHECK_ROOT"/suites/*.bats; do
		grep -q '^load helpers/common$' "$f" || bad+=("$f: does not 'load helpers/common'")
		if grep -qE '^(setup|teardown)\(\)' "$f"; then
			grep -qE '^\s*pc_setup\b' "$f" || bad+=("$f: defines setup() without pc_setup")
			grep -qE '^\s*pc_teardown\b' "$f" || bad+=("$f: defines teardown() without pc_teardown")
		fi
		while IFS= read -r l; do
			bad+=("$f: bare run: $l")
		done < <(grep -nE '^\s*run\s' "$f" |
			grep -vE '^[0-9]+:\s*run\s+(-[0-9]+|!)\s' |
			grep -vE '^[0-9]+:\s*run\s+--separate-stderr\s+(-[0-9]+|!)\s' || true)
	done
	if ((${#bad[@]})); then
		printf '%s\n' "${bad[@]}" | fail
	fi
}
