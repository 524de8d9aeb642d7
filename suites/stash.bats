#!/usr/bin/env bats
# stash.bats — the on-disk record of what tracers leave behind, and
# `probecheck cleanup` (providers/stash.c, harness/cli/cmd_cleanup.c).
#
# A tracer in the tracefs mode records each uprobe_events entry before it
# creates it, in a root-only directory ($PROBECHECK_STASH, default
# /run/probecheck), one file per tracer named PID-START.  `probecheck
# cleanup` undoes the records of dead tracers (dead: no process PID with
# that start time, or a zombie) and nothing else: not a live tracer's
# entries, not entries no record lists (another group, or our own naming
# without a record), not records that do not fit the scheme, and nothing at
# all behind a stash directory that is a symlink, not 0700 or not ours.
#
# Records and entries are mostly made by hand here, so each case is exact
# and independent of the tracer; tracefs.bats covers the records the
# tracer writes itself.  Every test uses a stash of its own, and removes
# what it made by hand at teardown (pc_on_teardown).
# bats file_tags=stash

load helpers/common

PC_REQUIRES=(root tracefs)

FX_VARIANT=${PC_STASH_VARIANT:-fx_gcc_O2_pie}
UE=$PC_TRACEFS/uprobe_events

use_fixture() {
	FX=$PC_FIXTURES/$FX_VARIANT
	requires "file:$FX"
	# Any instruction will do for an entry nobody enables: fx:a0's site.
	OFF=$(pc_elf_notes "$FX" | awk '$2 == "a0" { print $3; exit }')
	[[ -n $OFF ]] || fail "no fx:a0 note in '$FX'"
}

# own_stash [DIR]: this test's stash, created 0700 (DIR default "stash").
own_stash() {
	export PROBECHECK_STASH=$BATS_TEST_TMPDIR/${1:-stash}
	mkdir -p -m 0700 "$PROBECHECK_STASH"
	pc_on_teardown rm -rf "$PROBECHECK_STASH"
}

# ev KIND: an event name of the scheme for FX at OFF: KIND_DEV_INO_OFF.
ev() {
	printf '%s_%x_%x_%x\n' "$1" "$(stat -Lc %d "$FX")" "$(stat -Lc %i "$FX")" "$OFF"
}

# mk_entry GROUP/EVENT: create a uprobe_events entry by hand (at FX:OFF),
# removed again at teardown.
mk_entry() {
	echo "p:$1 $FX:$OFF" >>"$UE" || { fail "mk_entry: cannot create '$1'"; return 1; }
	pc_on_teardown rm_entry "$1"
	pc_log "made entry $1"
}

# rm_entry GROUP/EVENT: remove an entry if it is there (disabled first).
rm_entry() {
	[[ -e $PC_TRACEFS/events/$1/enable ]] || return 0
	echo 0 >"$PC_TRACEFS/events/$1/enable"
	echo "-:$1" >>"$UE"
}

# has_entry GROUP/EVENT: the entry exists.
has_entry() {
	pc_inv_uprobe_all | grep "^[pr]:$1 " >/dev/null
}

# mk_record NAME LINE...: a record file NAME in the stash with these lines.
mk_record() {
	local f=$PROBECHECK_STASH/$1
	shift
	printf '%s\n' "$@" >"$f"
	chmod 600 "$f"
	pc_log "made record $f: $*"
}

# dead_pid: a pid no process has (the last ones below pid_max, checked).
dead_pid() {
	local p max
	max=$(</proc/sys/kernel/pid_max)
	for ((p = max - 1; p > max - 100; p--)); do
		[[ -e /proc/$p ]] || { echo "$p"; return 0; }
	done
	fail "dead_pid: no free pid near pid_max $max"
}

@test "stash.live-left-alone: cleanup leaves a live tracer's entries and record alone, as does every probecheck start; they go when it exits" {
	requires bpf
	use_fixture
	own_stash
	local go rec g e
	go=$(pc_fifo go)
	pc_trace_bg "$BATS_TEST_TMPDIR/t.json" --attach=tracefs -c "$FX wait:$go fire:fx:a0:1" "usdt:$FX:fx:a0"
	g=probecheck_${PC_TRACE_PID}_$(start_of "$PC_TRACE_PID")
	rec=$PROBECHECK_STASH/$PC_TRACE_PID-$(start_of "$PC_TRACE_PID")
	e=$(pc_inv_uprobe_all | grep "^p:$g/")
	[[ -n $e && -s $rec ]] || fail "no entry or no record: '$e'"
	cp "$rec" "$BATS_TEST_TMPDIR/rec.before"
	run -0 pc cleanup
	assert_output "cleanup: 0 records removed (0 tracefs entries), 1 live tracer left alone, 0 refused, 0 failed"
	run -0 --separate-stderr pc list "$FX"
	assert_equal "$stderr" ""
	assert_equal "$(pc_inv_uprobe_all | grep "^p:$g/")" "$e"
	cmp "$rec" "$BATS_TEST_TMPDIR/rec.before"
	pc_fifo_write "$go" go
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	run -1 grep "^p:$g/" <(pc_inv_uprobe_all)
	[[ ! -e $rec ]] || fail "record left: $(cat "$rec")"
}

@test "stash.dead-removed: cleanup removes a dead tracer's entries but leaves foreign ones: another group, and one of our naming that no record lists" {
	use_fixture
	own_stash
	local dp dg fg og
	dp=$(dead_pid)
	dg=probecheck_${dp}_4242 fg=fgn_stash_$$ og=probecheck_${dp}_4243
	mk_entry "$dg/$(ev p)"
	mk_entry "$dg/$(ev r)"
	mk_entry "$fg/$(ev p)"
	mk_entry "$og/$(ev p)"
	mk_record "$dp-4242" "probecheck-stash 1" "tracer $dp 4242" "tracefs $dg/$(ev p)" "tracefs $dg/$(ev r)"
	run -0 --separate-stderr pc cleanup
	assert_line "removed tracefs $dg/$(ev p)"
	assert_line "removed tracefs $dg/$(ev r)"
	assert_line "removed record $PROBECHECK_STASH/$dp-4242 (tracer $dp started at 4242 is gone)"
	assert_line "cleanup: 1 record removed (2 tracefs entries), 0 live tracers left alone, 0 refused, 0 failed"
	run -1 has_entry "$dg/$(ev p)"
	run -1 has_entry "$dg/$(ev r)"
	has_entry "$fg/$(ev p)" || fail "the foreign entry $fg/$(ev p) was removed"
	has_entry "$og/$(ev p)" || fail "the unrecorded entry $og/$(ev p) was removed"
	run -0 ls -A "$PROBECHECK_STASH"
	assert_output ""
}

@test "stash.pid-reuse: pid reuse: a record whose pid is alive with another start time is dead and cleaned up; with the same start time it is left alone" {
	use_fixture
	own_stash
	local p s g1 g2
	pc_spawn p "$FX" "ready:$BATS_TEST_TMPDIR/r" "wait:$(pc_fifo hold)"
	pc_wait_file "$BATS_TEST_TMPDIR/r"
	s=$(start_of "$p")
	g1=probecheck_${p}_$((s + 1)) g2=probecheck_${p}_$s
	mk_entry "$g1/$(ev p)"
	mk_entry "$g2/$(ev p)"
	mk_record "$p-$((s + 1))" "probecheck-stash 1" "tracer $p $((s + 1))" "tracefs $g1/$(ev p)"
	mk_record "$p-$s" "probecheck-stash 1" "tracer $p $s" "tracefs $g2/$(ev p)"
	run -0 pc cleanup
	assert_line "removed tracefs $g1/$(ev p)"
	assert_line "cleanup: 1 record removed (1 tracefs entry), 1 live tracer left alone, 0 refused, 0 failed"
	run -1 has_entry "$g1/$(ev p)"
	has_entry "$g2/$(ev p)" || fail "the live process's entry $g2/$(ev p) was removed"
	run -0 ls -A "$PROBECHECK_STASH"
	assert_output "$p-$s"
	rm -f "$PROBECHECK_STASH/$p-$s"
}

@test "stash.bad-directory: a stash directory that is a symlink, not 0700, not ours or not a directory is refused: cleanup exits 1 naming it, a tracefs trace exits 1 creating nothing, what is behind it is untouched" {
	requires bpf
	use_fixture
	local real=$BATS_TEST_TMPDIR/real dp g o=$BATS_TEST_TMPDIR/o.json
	mkdir -m 0700 "$real"
	dp=$(dead_pid) g=probecheck_${dp}_7
	mk_entry "$g/$(ev p)"
	printf '%s\n' "probecheck-stash 1" "tracer $dp 7" "tracefs $g/$(ev p)" >"$real/$dp-7"
	pc_on_teardown rm -rf "$real"

	export PROBECHECK_STASH=$BATS_TEST_TMPDIR/link
	ln -s "$real" "$PROBECHECK_STASH"
	run -1 --separate-stderr pc cleanup
	assert_equal "${stderr%%$'\n'*}" "probecheck: stash: '$PROBECHECK_STASH': is a symbolic link: refusing it"
	has_entry "$g/$(ev p)" || fail "an entry named behind the symlink was removed"
	[[ -e $real/$dp-7 ]] || fail "the record behind the symlink was removed"
	run -1 --separate-stderr pc trace --attach=tracefs -c "$FX --oracle $o fire:fx:a0:1" "usdt:$FX:fx:a0"
	[[ $stderr == *"is a symbolic link: refusing it"* ]] || fail "stderr: $stderr"
	[[ ! -e $o ]] || fail "the command ran"
	run -0 --separate-stderr pc list "$FX"
	[[ $stderr == *"needs a look"* ]] || fail "no hint at start: $stderr"
	[[ $(readlink "$PROBECHECK_STASH") == "$real" ]] || fail "the symlink was changed"
	rm "$PROBECHECK_STASH"

	mkdir -m 0755 "$PROBECHECK_STASH"
	run -1 --separate-stderr pc cleanup
	assert_equal "${stderr%%$'\n'*}" "probecheck: stash: '$PROBECHECK_STASH': mode 0755, expected 0700: refusing it"
	run -1 --separate-stderr pc trace --attach=tracefs -c "$FX --oracle $o fire:fx:a0:1" "usdt:$FX:fx:a0"
	[[ $stderr == *"mode 0755, expected 0700"* ]] || fail "stderr: $stderr"
	chmod 0700 "$PROBECHECK_STASH"
	chown 65534 "$PROBECHECK_STASH"
	run -1 --separate-stderr pc cleanup
	assert_equal "${stderr%%$'\n'*}" "probecheck: stash: '$PROBECHECK_STASH': owned by uid 65534, not by us (uid 0): refusing it"
	rmdir "$PROBECHECK_STASH"
	: >"$PROBECHECK_STASH"
	run -1 --separate-stderr pc cleanup
	assert_equal "${stderr%%$'\n'*}" "probecheck: stash: '$PROBECHECK_STASH': is not a directory: refusing it"
	rm "$PROBECHECK_STASH"
	run -1 grep '^[pr]:probecheck' <(pc_inv_uprobe_all | grep -v "^p:$g/" | pc_inv_uprobe_scope)
	has_entry "$g/$(ev p)"
}

@test "stash.bad-records: records that do not fit the scheme are refused and left alone with the entries they name: '..', another tracer's group, a foreign group, bad names, versions, kinds" {
	use_fixture
	own_stash
	local dp p2 g v bad=() f
	dp=$(dead_pid) g=probecheck_${dp}_5
	p2=$((dp - 1))
	v=$(ev p)
	mk_entry "probecheck_1_1/$v"
	mk_entry "fgn_stash_$$/$v"
	mk_entry "$g/$v"
	# One file per way of being wrong; all with a dead tracer's name.
	mk_record "$dp-1" "probecheck-stash 1" "tracer $dp 1" "tracefs ../../../../tmp/x"
	mk_record "$dp-2" "probecheck-stash 1" "tracer $dp 2" "tracefs probecheck_1_1/$v"
	mk_record "$dp-3" "probecheck-stash 1" "tracer $dp 3" "tracefs fgn_stash_$$/$v"
	mk_record "$dp-4" "probecheck-stash 2" "tracer $dp 4" "tracefs probecheck_${dp}_4/$v"
	mk_record "$dp-5" "probecheck-stash 1" "tracer $p2 5" "tracefs $g/$v"
	mk_record "$dp-6" "probecheck-stash 1" "tracer $dp 6" "tracefs probecheck_${dp}_6/${v^^}"
	mk_record "$dp-7" "probecheck-stash 1" "tracer $dp 7" "tracefs probecheck_${dp}_7/p_0${v#p_}"
	mk_record "$dp-8" "probecheck-stash 1" "tracer $dp 8" "poke 0x1234 90"
	mk_record "$dp-9" "probecheck-stash 1" "tracer $dp 9" "tracefs probecheck_${dp}_9/$v/../x"
	mk_record "$dp-10" "probecheck-stash 1"
	mk_record "junk" "probecheck-stash 1" "tracer $dp 11"
	mk_record "0$dp-12" "probecheck-stash 1" "tracer $dp 12"
	mk_record "+$dp-16" "probecheck-stash 1" "tracer $dp 16"
	mk_record "$dp-17 " "probecheck-stash 1" "tracer $dp 17"
	ln -s "/etc/passwd" "$PROBECHECK_STASH/$dp-13"
	mkfifo "$PROBECHECK_STASH/$dp-14"
	# And one good record of a dead tracer: it is still processed.
	mk_entry "probecheck_${dp}_15/$v"
	mk_record "$dp-15" "probecheck-stash 1" "tracer $dp 15" "tracefs probecheck_${dp}_15/$v"
	ls -A "$PROBECHECK_STASH" | sort >"$BATS_TEST_TMPDIR/before"
	run -1 --separate-stderr pc cleanup
	for f in 1 2 3 4 5 6 7 8 9 10 13 14; do
		[[ $stderr == *"'$PROBECHECK_STASH/$dp-$f': "*"record refused, left alone"* ]] || bad+=("$dp-$f not refused")
	done
	for f in junk "0$dp-12" "+$dp-16" "$dp-17 "; do
		[[ $stderr == *"'$PROBECHECK_STASH/$f': not a record name: left alone"* ]] || bad+=("$f not refused")
	done
	((${#bad[@]} == 0)) || fail "$(printf '%s\n' "${bad[@]}" "stderr: $stderr")"
	assert_line "removed tracefs probecheck_${dp}_15/$v"
	assert_line "cleanup: 1 record removed (1 tracefs entry), 0 live tracers left alone, 16 refused, 0 failed"
	assert_equal "$(ls -A "$PROBECHECK_STASH" | sort)" "$(grep -vx "$dp-15" "$BATS_TEST_TMPDIR/before")"
	for f in "probecheck_1_1/$v" "fgn_stash_$$/$v" "$g/$v"; do
		has_entry "$f" || fail "entry $f named by a refused record was removed"
	done
	[[ $(</etc/passwd) == *root* ]]
	# Every start says so in one line, nothing more.
	run -0 --separate-stderr pc list "$FX"
	assert_equal "$stderr" "probecheck: cleanup: the stash '$PROBECHECK_STASH' needs a look (Invalid argument): run 'probecheck cleanup'"
}

@test "stash.entry-gone-busy: an entry already gone is fine; one that cannot be removed (enabled in tracefs: EBUSY) keeps the record, exit 1, and the next cleanup finishes" {
	use_fixture
	own_stash
	local dp g
	dp=$(dead_pid) g=probecheck_${dp}_21
	mk_entry "$g/$(ev p)"
	echo 1 >"$PC_TRACEFS/events/$g/$(ev p)/enable"
	mk_record "$dp-21" "probecheck-stash 1" "tracer $dp 21" "tracefs $g/$(ev p)" "tracefs $g/$(ev r)"
	run -1 --separate-stderr pc cleanup
	assert_line "tracefs $g/$(ev r) was gone already"
	assert_line "cleanup: 0 records removed (0 tracefs entries), 0 live tracers left alone, 0 refused, 1 failed"
	[[ $stderr == *"cannot remove tracefs $g/$(ev p): Device or resource busy: record kept"* ]] || fail "stderr: $stderr"
	[[ -e $PROBECHECK_STASH/$dp-21 ]] || fail "record removed although an entry is left"
	has_entry "$g/$(ev p)"
	echo 0 >"$PC_TRACEFS/events/$g/$(ev p)/enable"
	run -0 pc cleanup
	assert_line "removed tracefs $g/$(ev p)"
	assert_line "removed record $PROBECHECK_STASH/$dp-21 (tracer $dp started at 21 is gone)"
	run -1 has_entry "$g/$(ev p)"
	run -0 ls -A "$PROBECHECK_STASH"
	assert_output ""
}

@test "stash.unfinished-record: an unfinished record (.PID-START.tmp) of a dead tracer is removed, a live tracer's is not" {
	use_fixture
	own_stash
	local dp me
	dp=$(dead_pid) me=$BASHPID
	mk_record ".$dp-31.tmp" "probecheck-stash 1" "tracer $dp 31"
	mk_record ".$me-$(start_of "$me").tmp" "probecheck-stash 1"
	run -0 pc cleanup
	assert_line "removed unfinished record $PROBECHECK_STASH/.$dp-31.tmp"
	run -0 ls -A "$PROBECHECK_STASH"
	assert_output ".$me-$(start_of "$me").tmp"
	rm -f "$PROBECHECK_STASH/.$me-$(start_of "$me").tmp"
}

@test "stash.cleanup-usage: cleanup: usage errors exit 2; no stash directory is nothing to do (exit 0, nothing created); the directory is made 0700 under any umask" {
	requires bpf
	use_fixture
	run -2 --separate-stderr pc cleanup extra
	assert_equal "${stderr%%$'\n'*}" "probecheck: cleanup: unexpected argument 'extra'"
	run -2 --separate-stderr pc cleanup --bogus
	assert_equal "${stderr%%$'\n'*}" "probecheck: cleanup: unknown option '--bogus'"
	run -0 pc cleanup -h
	assert_line --partial "probecheck cleanup"
	export PROBECHECK_STASH=$BATS_TEST_TMPDIR/none
	run -0 pc cleanup
	assert_output "cleanup: 0 records removed (0 tracefs entries), 0 live tracers left alone, 0 refused, 0 failed"
	[[ ! -e $PROBECHECK_STASH ]] || fail "cleanup created '$PROBECHECK_STASH'"
	# Made on first use by a tracefs tracer, 0700 whatever the umask.
	local o=$BATS_TEST_TMPDIR/o.json
	run -0 --separate-stderr bash -c 'umask 0277; "$@"' _ "$PC_BIN" trace --attach=tracefs --json \
		-c "$FX --oracle $o fire:fx:a0:2" "usdt:$FX:fx:a0"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/t.json"
	assert_oracle "$o" "$BATS_TEST_TMPDIR/t.json"
	assert_equal "$(stat -c '%a %u' "$PROBECHECK_STASH")" "700 0"
	run -0 ls -A "$PROBECHECK_STASH"
	assert_output ""
	rm -rf "$PROBECHECK_STASH"
}
