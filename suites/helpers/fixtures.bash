# fixtures.bash — what the suites do with fixtures and their processes,
# defined once: loaded by helpers/common (so every suite has it), after
# bats-assert and the capability helpers.
#
#   fx_first_bin, fx_first_lib  the first build variant's executable, library
#   use_variant VARIANT         FX and FXLIB, a build variant's executable, library
#   private NAME [FILE]         a copy of FILE for this test only
#   sema_seen ORACLE PROBE [PID]  the semaphore values a fixture logged
#   steps_of ORACLE STEP FIELD  FIELD of every STEP line of an oracle
#   only_pids ORACLE PID...     the oracle lines of these processes
#   R I, fifos N, release I,    the ready-file/fifo ladder of a fixture
#   start_fixture STEP...       started with ready:R0 first
#   start_fx VAR BIN ORACLE STEP...  a fixture blocked on a fifo GO
#   assert_exit PID CODE        a spawned process ends with CODE
#   exited PID                  a process is a zombie or gone
#   kill_quietly PID            SIGKILL and reap, for pc_on_teardown
#   start_of PID                a process's start time (/proc/PID/stat)
#   trace_json OUT ARGS...      `probecheck trace --json ARGS`, exit 0
#   pc_use_mode MODE            an attach mode, or SKIP with why not
#   pc_elf_note FILE PROV:NAME  a probe's note, from readelf
#   pc_note_addr, sema_addr     runtime addresses of its site, semaphore
#
# Addresses come from readelf (harness/lib/notes.bash) and
# /proc/PID/maps, never from the tracer under test.

# fx_first_bin, fx_first_lib: the executable and the library of the first
# build variant (fixtures/variants.txt), for what does not depend on code
# generation.
fx_first_bin() {
	local vs
	vs=$(fx_variants) && [[ -n $vs ]] || { fail "no fixture variants (make fixtures)"; return 1; }
	fx_bin "$(head -n 1 <<<"$vs")"
}

fx_first_lib() {
	local vs
	vs=$(fx_variants) && [[ -n $vs ]] || { fail "no fixture variants (make fixtures)"; return 1; }
	fx_lib "$(head -n 1 <<<"$vs")"
}

# use_variant VARIANT: FX and FXLIB, the executable and the library of a
# build variant (fx_bin, fx_lib).
use_variant() {
	FX=$(fx_bin "$1")
	FXLIB=$(fx_lib "$1")
}

# private NAME [FILE]: a copy of FILE (default: the suite's fixture
# variant, fx_bin "$FXV") for this test only, as $BATS_TEST_TMPDIR/NAME;
# print its path.  System-wide modes (-a, --follow) raise semaphores in
# every process mapping the object: a private copy (its own inode) keeps
# every other process out.  Name an executable fx_* so that a process
# left running it is still seen as a fixture (the invariants look for
# comm fx_*).
private() {
	local src=${2:-} dst=$BATS_TEST_TMPDIR/$1
	[[ -n $src ]] || src=$(fx_bin "$FXV") || return 1
	cp "$src" "$dst" || { fail "private: cannot copy '$src'"; return 1; }
	echo "$dst"
}

# sema_seen ORACLE PROBE [PID]: the semaphore values the fixture logged
# for PROBE ({"sema":PROBE,"pid":..,"value":V} lines), in order, on one
# line; with PID, only that process's.
sema_seen() {
	local v
	v=$(pc_jsel -w "sema=$2" ${3:+-w "pid=$3"} value "$1") || return
	echo ${v//$'\n'/ }
}

# steps_of ORACLE STEP FIELD: FIELD of every STEP line, in order.
steps_of() {
	local v
	v=$(pc_jsel -w "step=$2" "$3" "$1") || return
	echo ${v//$'\n'/ }
}

# only_pids ORACLE PID...: the oracle lines of these processes.
only_pids() {
	local o=$1 re
	shift
	re=$(IFS='|'; echo "$*")
	grep -E "\"pid\":($re)," "$o" || true
}

# R I: the fixture's I-th ready file.
R() {
	echo "$BATS_TEST_TMPDIR/r$1"
}

# fifos N: F1..FN, one fifo per release (a fifo reused for a second
# release could hand the fixture bytes left from the first).
fifos() {
	local i
	for ((i = 1; i <= $1; i++)); do
		printf -v "F$i" '%s' "$(pc_fifo "f$i")"
	done
}

# release I: let the fixture past wait:F$I and wait for its ready:R$I.
release() {
	local f=F$1
	pc_fifo_write "${!f}" go
	pc_wait_file "$(R "$1")"
}

# start_fixture STEP...: spawn $FX with the oracle in $ORACLE, wait for its
# first ready file R0; PID gets its pid.
start_fixture() {
	ORACLE=$BATS_TEST_TMPDIR/oracle.json
	pc_spawn PID "$FX" --oracle "$ORACLE" "$@"
	pc_wait_file "$(R 0)"
}

# start_fx VAR BIN ORACLE STEPS...: spawn BIN with ready:/wait: first; VAR
# gets its pid once it is ready; GO is the fifo that releases it.
start_fx() {
	local -n _sfx=$1
	local bin=$2 o=$3 ready=$BATS_TEST_TMPDIR/ready.$RANDOM
	shift 3
	GO=$(pc_fifo "go.$RANDOM")
	pc_spawn _sfx "$bin" --oracle "$o" "ready:$ready" "wait:$GO" "$@"
	pc_wait_file "$ready"
}

# assert_exit PID CODE: wait for a process this shell started (in this
# shell, not in `run`'s subshell, which cannot wait for it); its exit
# status is CODE.  Called once it is expected to end: the poll only bounds
# a process left stopped (or never released), on which `wait` would hang.
assert_exit() {
	local st=0
	pc_wait_until "$PC_TIMEOUT" exited "$1" ||
		{ fail "pid $1 still running after ${PC_TIMEOUT}s: $(head -c 200 "/proc/$1/stat")"; return 1; }
	wait "$1" || st=$?
	((st == $2)) || { fail "pid $1 exited with status $st, expected $2"; return 1; }
}

# exited PID: PID is a zombie or gone.
exited() {
	local stat
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
	stat=${stat##*) }
	[[ ${stat%% *} == Z ]]
}

# kill_quietly PID: SIGKILL and reap PID if it is still there; never
# fails.  For pc_on_teardown: a tracer the test may have stopped already.
kill_quietly() {
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# start_of PID: field 22 of /proc/PID/stat, the start time in clock ticks.
start_of() {
	local s
	s=$(<"/proc/$1/stat") || return 1
	s=${s##*) }
	# shellcheck disable=SC2086  # the fields, split
	set -- $s
	echo "${20}"
}

# trace_json OUT ARGS...: `probecheck trace --json ARGS` (the tracer under
# test), exit 0 required; stdout to OUT, stderr to OUT.err.
trace_json() {
	local out=$1 st=0
	shift
	pc trace --json "$@" >"$out" 2>"$out.err" || st=$?
	((st == 0)) || { fail "$(pc_tracer) trace exited $st: $(tail -n 5 "$out.err")"; return 1; }
}

# pc_use_mode MODE: attach path MODE for this test (perf, tracefs, multi,
# auto), or SKIP with why the kernel lacks it (the capabilities of
# pc_mode_caps, harness/lib/caps.bash).  Sets MODE.
pc_use_mode() {
	local caps
	MODE=$1
	# Other tracers have one attach path of their own: they run the
	# default mode's tests (helpers/tracer.bash drops --attach=perf|auto).
	if pc_tracer_other && [[ $1 != perf && $1 != auto ]]; then
		pc_probecheck_only "attach mode $1"
	fi
	caps=$(pc_mode_caps "$1") || { fail "pc_use_mode: unknown mode '$1'"; return 1; }
	# shellcheck disable=SC2086  # a list of capabilities, maybe none
	requires $caps
}

# requires_quietly CAP...: every capability there (pc_cap), no skip: for
# a test that runs what this kernel has of several modes and says the rest.
requires_quietly() {
	local c
	for c in "$@"; do
		pc_cap "$c" || return 1
	done
}

# pc_elf_note FILE PROV:NAME: "PC BASE SEMA ARGS" of the probe's first
# note in FILE (link-time, 0x... as readelf prints them; SEMA
# 0x0000000000000000 if none); fails naming it if FILE has no such note.
pc_elf_note() {
	local prov name rest
	while read -r prov name rest; do
		[[ $prov:$name == "$2" ]] || continue
		echo "$rest"
		return 0
	done < <(pc_elf_notes "$1")
	fail "pc_elf_note: no note for $2 in '$1'"
}

# pc_note_addr PID FILE PROV:NAME: runtime address of the probe's (first)
# site in PID, from readelf's note and /proc/PID/maps.
pc_note_addr() {
	local note loc
	note=$(pc_elf_note "$2" "$3") || return 1
	read -r loc _ <<<"$note"
	pc_runtime_addr "$1" "$2" "$loc"
}

# sema_addr PID FILE PROV:NAME: runtime address of the probe's semaphore
# in PID, from readelf's note and /proc/PID/maps; fails if it has none.
sema_addr() {
	local note sema
	note=$(pc_elf_note "$2" "$3") || return 1
	read -r _ _ sema _ <<<"$note"
	(($sema)) || { fail "sema_addr: $3 in '$2' has no semaphore"; return 1; }
	pc_runtime_addr "$1" "$2" "$sema"
}
