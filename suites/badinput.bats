#!/usr/bin/env bats
# badinput.bats — every kind of bad input is refused with exit status 2 and
# a message on stderr that names the thing and the reason; nothing is left
# attached (the invariant check in teardown), the -c command never runs,
# and a live process given with -p is left exactly as it was: semaphores at
# 0, probe-site bytes untouched (watched, checked in teardown).
#
# The damaged ELF files are made at test time from a real fixture: cut at
# several sizes, or with a note header overwritten at the offset readelf
# reports for .note.stapsdt — nothing hard-coded about the layout.
#
# bats file_tags=badinput

load helpers/common

FX=$PC_FIXTURES/fx_gcc_O2_pie
PC_REQUIRES=("file:$PC_BIN" "file:$FX")

# bad ARGS...: probecheck ARGS must exit 2; $stderr holds its message.
bad() {
	run -2 --separate-stderr pc "$@"
	assert_output ""
}

# bad_trace PROBE...: `trace -c CMD PROBE...` must exit 2 without ever
# running CMD.
bad_trace() {
	local ran=$BATS_TEST_TMPDIR/ran
	bad trace -c "touch '$ran'" "$@"
	[[ ! -e $ran ]] || { fail "the -c command ran although the input was bad"; return 1; }
}

# assert_err REGEX: stderr matches REGEX (extended), shown if not.
assert_err() {
	[[ $stderr =~ $1 ]] || fail "stderr does not match /$1/: $stderr"
}

# note_off FILE: file offset of the .note.stapsdt section, from readelf.
note_off() {
	local off
	off=$(readelf -SW "$1" | awk '
		{ sub(/^ *\[ *[0-9]+\] */, "") }
		$1 == ".note.stapsdt" { print $4; exit }')
	[[ -n $off ]] || fail "note_off: no .note.stapsdt in '$1'"
	echo $((16#$off))
}

# poke FILE OFFSET HEX: overwrite bytes at OFFSET with HEX ("ffffffff").
poke() {
	local esc
	esc=$(sed 's/../\\x&/g' <<<"$3")
	printf "$esc" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

@test "badinput.missing-file: a missing file is refused, naming the path" {
	bad list "$BATS_TEST_TMPDIR/no/such/file"
	assert_err "'$BATS_TEST_TMPDIR/no/such/file': No such file or directory"
	bad_trace "usdt:$BATS_TEST_TMPDIR/nope:fx:a0"
	assert_err "'$BATS_TEST_TMPDIR/nope': No such file or directory"
}

@test "badinput.directory-refused: a directory is refused" {
	bad list "$BATS_TEST_TMPDIR"
	assert_err "'$BATS_TEST_TMPDIR'"
}

@test "badinput.not-elf: a file that is not ELF is refused, empty or text" {
	printf 'hello\n' >"$BATS_TEST_TMPDIR/text"
	bad list "$BATS_TEST_TMPDIR/text"
	assert_err "'$BATS_TEST_TMPDIR/text': not an ELF file"
	: >"$BATS_TEST_TMPDIR/empty"
	bad list "$BATS_TEST_TMPDIR/empty"
	assert_err "'$BATS_TEST_TMPDIR/empty': "
	bad_trace "usdt:$BATS_TEST_TMPDIR/text:fx:a0"
	assert_err "'$BATS_TEST_TMPDIR/text': not an ELF file"
}

@test "badinput.truncated-elf: a truncated ELF file is refused at every cut" {
	local size cut f=$BATS_TEST_TMPDIR/cut
	size=$(stat -c %s "$FX")
	# Inside the ident, the header, the program headers, the middle, the
	# section header table at the end.
	for cut in 4 16 63 64 100 1000 $((size / 2)) $((size - 64)) $((size - 1)); do
		head -c "$cut" "$FX" >"$f"
		[[ $(stat -c %s "$f") == "$cut" ]]
		bad list "$f"
		assert_err "'$f': (truncated|not an ELF|corrupt)"
		bad_trace "usdt:$f:fx:a0"
		assert_err "'$f': (truncated|not an ELF|corrupt)"
	done
}

@test "badinput.no-notes: an ELF file without USDT notes is refused: no .note.stapsdt" {
	local elf=/bin/true
	# Check, not assume: it must be ELF and carry no stapsdt note.
	run -0 readelf -h "$elf"
	run -0 readelf -nW "$elf"
	refute_output --partial stapsdt
	bad list "$elf"
	assert_err "'$elf': no \\.note\\.stapsdt section"
	bad_trace "usdt:$elf:fx:a0"
	assert_err "'$elf': no \\.note\\.stapsdt section"
}

@test "badinput.malformed-note: a malformed note is refused, naming file, note and reason" {
	local off f=$BATS_TEST_TMPDIR/fx_badnote
	off=$(note_off "$FX")
	# The section starts with the first note: namesz, descsz, type, "stapsdt".
	run -0 od -An -tx1 -w20 -j "$off" -N 20 "$FX"
	assert_output --regexp '^ 08 00 00 00 .. .. 00 00 03 00 00 00 73 74 61 70 73 64 74 00'
	local -A cases=(
		[0:ffffffff]="note 0: malformed stapsdt note: .*run past the section"
		[0:00000000]="note [0-9]+: malformed stapsdt note: .*run past the section"
		[4:ffffff7f]="note 0: malformed stapsdt note: .*run past the section"
		[4:04000000]="note 0: malformed stapsdt note: descriptor shorter than 24 bytes"
		[4:19000000]="note 0: malformed stapsdt note: provider string runs past the descriptor"
		[4:1b000000]="note 0: malformed stapsdt note: name string runs past the descriptor"
	)
	for c in "${!cases[@]}"; do
		cp "$FX" "$f"
		poke "$f" $((off + ${c%%:*})) "${c#*:}"
		cmp -s "$FX" "$f" && fail "poke at ${c%%:*} changed nothing"
		bad list "$f"
		assert_err "'$f': ${cases[$c]}"
		bad_trace "usdt:$f:fx:*"
		assert_err "'$f': ${cases[$c]}"
	done
}

@test "badinput.unmatched-probe: a probe that matches nothing is refused, naming the probe" {
	bad_trace "usdt:$FX:fx:no_such_probe"
	assert_err "probe 'usdt:$FX:fx:no_such_probe': no probe matches"
	bad_trace "usdt:$FX:nosuchprov*:*"
	assert_err "probe 'usdt:$FX:nosuchprov\\*:\\*': no probe matches"
}

@test "badinput.one-unmatched: one unmatched probe among good ones refuses them all: nothing attached" {
	bad_trace "usdt:$FX:fx:a0" "usdt:$FX:fx:sem_a" "usdt:$FX:fx:no_such_probe"
	assert_err "probe 'usdt:$FX:fx:no_such_probe': no probe matches"
}

@test "badinput.bad-probe-live: a bad probe for a live process leaves it untouched" {
	requires root
	local ready=$BATS_TEST_TMPDIR/fx.ready go prov name pc base sema args
	go=$(pc_fifo go)
	pc_spawn P "$FX" ready:"$ready" wait:"$go"
	pc_wait_file "$ready"
	read -r prov name pc base sema args < <(pc_elf_notes "$FX" | awk '$2 == "sem_a"')
	[[ $sema != 0x0000000000000000 ]] || fail "fx:sem_a has no semaphore"
	pc_sema_watch "$P" "$(pc_runtime_addr "$P" "$FX" "$sema")" 0
	pc_bytes_watch "$P" "$(pc_runtime_addr "$P" "$FX" "$pc")" 5
	bad trace -p "$P" "usdt:*:fx:sem_a" "usdt:*:fx:no_such_probe"
	assert_err "no probe matches"
	bad trace -p "$P" "usdt:$BATS_TEST_TMPDIR/nope:fx:sem_a"
	# Seen through the process's root: '/proc/PID/root/PATH' is fine too.
	assert_err "'(/proc/$P/root)?$BATS_TEST_TMPDIR/nope': No such file or directory"
	pc_check_clean
	pc_inv_alive "$P"
}

@test "badinput.bad-pid: a bad pid is refused: nonexistent, zero, negative, not a number, too big" {
	local max
	max=$(cat /proc/sys/kernel/pid_max)
	# pid_max itself is never a pid: pids are below it.
	bad list -p "$max"
	assert_err "pid $max: no such process"
	bad trace -p "$max" "usdt:*:fx:a0"
	assert_err "pid $max: no such process"
	for p in 0 -5 abc 12x '' 99999999999999999999; do
		bad list -p "$p"
		assert_err "pid '$p': not a process id"
		bad trace -p "$p" "usdt:*:fx:a0"
		assert_err "pid '$p': not a process id"
	done
}

@test "badinput.malformed-spec: a malformed probe spec is refused, naming the spec and what is wrong" {
	local -A cases=(
		["usdt:$FX:fx"]="expected KIND:PATH:PROVIDER:NAME"
		["usdt:$FX"]="expected KIND:PATH:PROVIDER:NAME"
		["usdt"]="expected KIND:PATH:PROVIDER:NAME"
		["usdt:$FX:fx:a0:extra"]="expected KIND:PATH:PROVIDER:NAME"
		["kprobe:$FX:fx:a0"]="unknown probe kind 'kprobe'"
		["USDT:$FX:fx:a0"]="unknown probe kind 'USDT'"
		["usdt:$FX:fx:"]="field 4 is empty"
		["usdt:$FX::a0"]="field 3 is empty"
		["usdt::fx:a0"]="field 2 is empty"
		[":$FX:fx:a0"]="(field 1 is empty|unknown probe kind '')"
		["usdt:*:fx:a0"]="PATH '\\*' needs -p PID"
	)
	for spec in "${!cases[@]}"; do
		bad_trace "$spec"
		assert_err "probe '${spec//\*/\\*}': ${cases[$spec]}"
	done
	# An empty spec (not a valid array key above).
	bad_trace ""
	assert_err "probe '': expected KIND:PATH:PROVIDER:NAME"
}

@test "badinput.unknown-options: unknown options and commands are refused, naming them" {
	bad trace --bogus -c true "usdt:$FX:fx:a0"
	assert_err "^probecheck: trace: unknown option '--bogus'"
	bad list --bogus "$FX"
	assert_err "^probecheck: list: unknown option '--bogus'"
	bad trace -c true -p
	assert_err "^probecheck: trace: option '-p' needs an argument"
	# In a cluster the option is named, not its element nor the one before.
	bad trace --json -Zp1 "usdt:$FX:fx:a0"
	assert_err "^probecheck: trace: unknown option '-Z'"
	bad trace -jZ -c true "usdt:$FX:fx:a0"
	assert_err "^probecheck: trace: unknown option '-Z'"
	bad frobnicate
	assert_err "unknown command 'frobnicate'"
	bad --bogus
	assert_err "unknown command '--bogus'"
	bad
	assert_err "usage:"
	bad trace --str x -c true "usdt:$FX:fx:a0"
	assert_err "--str 'x'"
	bad trace --str 99 -c true "usdt:$FX:fx:a0"
	assert_err "--str '99'"
}

@test "badinput.trace-modes: trace takes at most one of -c, -p and -a, and needs a probe" {
	bad trace -c true -p 1 "usdt:$FX:fx:a0"
	assert_err "give at most one of -c CMD, -p PID or -a"
	bad trace -a -p 1 "usdt:$FX:fx:a0"
	assert_err "give at most one of -c CMD, -p PID or -a"
	bad trace "usdt:*:fx:a0"
	assert_err "PATH '\\*' needs -p PID"
	bad trace -c "touch '$BATS_TEST_TMPDIR/ran'"
	assert_err "no PROBE given"
	[[ ! -e $BATS_TEST_TMPDIR/ran ]]
	bad list
	assert_err "give exactly one FILE or -p PID"
	bad list "$FX" "$FX"
	assert_err "give exactly one FILE or -p PID"
}
