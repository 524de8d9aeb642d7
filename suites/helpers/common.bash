# common.bash — loaded first by every suite:  load helpers/common
#
# It gives each test:
#   - bats-support and bats-assert (assert_success, assert_output, ...);
#   - `requires CAP...`: SKIP with the reason when the kernel or machine
#     lacks something (capabilities are probed once per run, see caps.bash);
#   - `pc ARGS...`: the probecheck binary, every call logged with its
#     arguments, status, stdout and stderr; the log is printed when the test
#     fails, so a failing test explains itself;
#   - background tracing with a ready-file barrier, fixture spawning,
#     fifo barriers, the oracle comparison and the summary check;
#   - the cleanup invariants, checked after EVERY test (teardown): no
#     uprobe, BPF object or process of ours left over, watched semaphores and
#     probe-site bytes back to their values, every USDT site and semaphore
#     of the test's surviving fixtures as in their ELF files, no stash
#     record (/run/probecheck) left.  A violation fails the test.
#
# This file defines setup() and teardown().  A suite must not redefine
# them: register cleanup with pc_on_teardown, declare file-wide needs with
# PC_REQUIRES=(root bpf ...) after the load.  (If a suite really must
# define its own, it calls pc_setup first and pc_teardown last;
# suites/harness.bats checks that every suite does.)
#
# Tests run under `set -e`; teardown does not (bats calls it in a || list),
# so everything on the teardown path checks its own status.

# bats sources this file again for every test, under its DEBUG trap (see
# _pc_untrapped below): without the trap while we load.
_pc_load_trap=$(trap -p DEBUG)
trap - DEBUG
# Paths without forks: this runs once per test (each $(...) is a fork of
# a large shell).
_pc_helpers=${BASH_SOURCE[0]%/*}
[[ $_pc_helpers == /* ]] || _pc_helpers=$PWD/$_pc_helpers
# Shared with the harness's runners (harness/lib/README.md).
_pc_hlib=$_pc_helpers/../../harness/lib
. "$_pc_hlib/caps.bash"
. "$_pc_hlib/invariants.bash"

_pc_lib=${PC_BATS_LIB:-/usr/lib/bats}
if [[ ! -r $_pc_lib/bats-support/load.bash || ! -r $_pc_lib/bats-assert/load.bash ]]; then
	echo "common.bash: bats-support/bats-assert not found under $_pc_lib" \
		"(apt-get install bats-support bats-assert)" >&2
	return 1
fi
# run -N / run ! / --separate-stderr: bats 1.5 (Debian 12 has 1.8.2).
bats_require_minimum_version 1.5.0
# Their load.bash files source each src/ file through $(dirname ...):
# 30 forks a test.  They are definitions only, in any order.
for _pc_f in "$_pc_lib"/bats-support/src/*.bash "$_pc_lib"/bats-assert/src/*.bash; do
	. "$_pc_f"
done
unset _pc_f

: "${PROBECHECK_ROOT:=$(cd "$_pc_helpers/../.." && pwd)}"
: "${PROBECHECK_BUILD:=$PROBECHECK_ROOT/build}"
export PROBECHECK_ROOT PROBECHECK_BUILD
PC_BIN=$PROBECHECK_BUILD/probecheck
PC_TOOLS=$PROBECHECK_BUILD/tools
# pc_jsel ARGS...: fields of JSON lines (harness/tools/pc-jsel.c): not jq,
# whose start costs ~40 ms of CPU and which takes numbers through a double.
pc_jsel() {
	"$PC_TOOLS/pc-jsel" "$@"
}
# The suite's own copy under run-suites (its own inodes: harness/run/run-suites).
PC_FIXTURES=${PROBECHECK_FIXTURES:-$PROBECHECK_BUILD/fixtures}
. "$_pc_helpers/tracer.bash"
. "$_pc_helpers/fixtures.bash"
. "$_pc_hlib/repro.bash"
# How long a barrier or a kernel-side effect may take before we call it a
# hang.  Generous: TCG guests are slow.
PC_TIMEOUT=${PC_TIMEOUT:-30}
# Untagged new fixture/probecheck processes count as ours only in CI, and
# not while other suites run beside this one (they cannot be told apart).
PC_STRICT_PROCS=${PC_STRICT_PROCS:-${CI:+1}}
[[ ${PROBECHECK_PARALLEL:-0} == 1 ]] && PC_STRICT_PROCS=0
PC_REQUIRES=()
# What pc runs its command under (pc_bounded: a watchdog).
PC_WRAP=()

# _pc_deadline VAR SECONDS: VAR = a deadline in microseconds (no $(...):
# a fork); _pc_before D: not yet.  Loops count time, not iterations: a
# busy machine must not stretch them.
_pc_deadline() {
	printf -v "$1" '%d' $(( ${EPOCHREALTIME/./} + $2 * 1000000 ))
}

_pc_before() {
	(( ${EPOCHREALTIME/./} < $1 ))
}

# pc_nap SECONDS: a poll's pause without a fork: `read -t` on a fifo
# opened read-write (no open blocks) that nobody writes.  The sleep
# processes of the polling loops were a tenth of a suite's forks.
pc_nap() {
	local f=${BATS_RUN_TMPDIR:-${TMPDIR:-/tmp}}/pc-nap.fifo
	[[ -p $f ]] || mkfifo "$f" 2>/dev/null || [[ -p $f ]] || { sleep "$1"; return 0; }
	read -rt "$1" <>"$f" || :
}

# ---------------------------------------------------------------------------
# Logging: one log per test, printed by teardown when the test failed.

# pc_log MSG...: append a line to this test's log.
pc_log() {
	printf '%s\n' "$*" >>"${PC_LOG:-/dev/stderr}"
}

# pc_log_file TITLE FILE: append FILE to the log, long files abridged.
pc_log_file() {
	_pc_log_file "$@"
}

_pc_log_file() {
	local n h=80 t=20
	[[ -s $2 ]] || { pc_log "  --- $1: (empty)"; return 0; }
	n=$(wc -l <"$2")
	pc_log "  --- $1 ($n lines, $2):"
	# Other tracers' stderr can be thousands of lines a call (bcc's
	# operand parser complains of every probe in the file): bats prints
	# a failed test's log line by line, minutes for megabytes.
	pc_tracer_other && h=15 t=10
	if ((n > h + t + 20)); then
		head -n "$h" "$2" | sed 's/^/  | /' >>"$PC_LOG"
		pc_log "  | ... $((n - h - t)) lines not shown ..."
		tail -n "$t" "$2" | sed 's/^/  | /' >>"$PC_LOG"
	else
		sed 's/^/  | /' "$2" >>"$PC_LOG"
	fi
	return 0
}

# ---------------------------------------------------------------------------
# Capabilities.

# requires CAP...: SKIP this test unless every capability is there.
#   KEY                 a row of `probecheck features` (providers/features.h:
#                       root uprobe_pmu ref_ctr_offset btf tracefs bpf
#                       uprobe_multi ...), probed once per run (caps.bash)
#   cmd:NAME                                  NAME is on PATH
#   file:PATH                                 PATH exists (e.g. a fixture)
#   tracer:CLAIM                              the tracer under test claims it
#                                             (helpers/tracer.bash)
requires() {
	local cap caps v why line
	caps=$(pc_caps_file) || { fail "requires: cannot read the capability file"; return 1; }
	for cap in "$@"; do
		case $cap in
		cmd:*)
			command -v "${cap#cmd:}" >/dev/null 2>&1 ||
				skip "requires $cap: '${cap#cmd:}' not installed"
			continue ;;
		file:*)
			[[ -e ${cap#file:} ]] || skip "requires $cap: '${cap#file:}' missing"
			continue ;;
		tracer:*)
			_pc_requires_tracer "${cap#tracer:}" || return 1
			continue ;;
		esac
		v='' why=''
		while IFS= read -r line; do
			[[ $line == "$cap="* ]] && v=${line#*=}
			[[ $line == "${cap}_why="* ]] && why=${line#*=}
		done <"$caps"
		[[ -n $v ]] || { fail "requires: unknown capability '$cap' (not a row of 'probecheck features': providers/features.h)"; return 1; }
		[[ $v == 1 ]] || skip "requires $cap: ${why:-not available}"
	done
}

# pc_cap CAP: succeed if the capability is there (no skip), for branching.
pc_cap() {
	local caps
	caps=$(pc_caps_file) || return 1
	grep -qx "$1=1" "$caps"
}

# ---------------------------------------------------------------------------
# The binary under test.

# pc ARGS...: run probecheck ARGS.  Stdout and stderr pass through
# unchanged (so `run -2 --separate-stderr pc ...` sees exactly what
# probecheck printed) and both go to the log with the status.
pc() {
	local out err st n
	# Counted in a file: `run` calls us in a subshell.
	echo >>"$PC_T/calls"
	n=$(wc -l <"$PC_T/calls")
	out=$BATS_TEST_TMPDIR/pc.$n.out
	err=$BATS_TEST_TMPDIR/pc.$n.err
	st=0
	: >"$out"
	_pc_tracer_argv "$@" >"$err" 2>&1 || st=$?
	pc_log "pc[$n]: $(_pc_argv_text)"
	((st != 0)) || "${PC_WRAP[@]}" "${PC_ARGV[@]}" >"$out" 2>"$err" 3>&- || st=$?
	pc_note_failed_call "$st" "$err"
	pc_log "pc[$n]: exit status $st"
	_pc_log_file "pc[$n] stdout" "$out"
	_pc_log_file "pc[$n] stderr" "$err"
	cat "$out"
	cat "$err" >&2
	return $st
}

# pc_bounded ARGS...: `pc ARGS` under a watchdog.  A tracer that attached
# although it should not have would trace -p forever: after PC_TIMEOUT it
# gets SIGINT and the test fails on status 124 instead of hanging.
pc_bounded() {
	local -a PC_WRAP=(timeout -s INT -k 5 "$PC_TIMEOUT")
	pc "$@"
}

# pc_trace_bg OUT ARGS...: start `probecheck trace --ready R ARGS` in the
# background with stdout to OUT and stderr to OUT.err, and return once
# every probe is attached (the ready file exists).  Fails, with the
# tracer's stderr, if it exits first or does not get ready in PC_TIMEOUT.
# Sets PC_TRACE_PID and PC_TRACE_OUT.  Stop it with pc_trace_stop or wait
# for it with pc_trace_wait; teardown stops one still running.
pc_trace_bg() {
	local out=$1 ready dl
	shift
	[[ ! -c $out ]] || { fail "pc_trace_bg: OUT '$out' must be a file: stderr goes to OUT.err"; return 1; }
	echo >>"$PC_T/calls"
	PC_NCALL=$(wc -l <"$PC_T/calls")
	ready=$BATS_TEST_TMPDIR/ready.$PC_NCALL
	PC_TRACE_OUT=$out
	PC_TRACE_ERR=$out.err
	_pc_tracer_argv trace --ready "$ready" "$@" || { fail "pc_trace_bg: the tracer cannot take this call"; return 1; }
	pc_log "pc[$PC_NCALL]: $(_pc_argv_text) (background)"
	if pc_tracer_other; then
		# Its own process group, so that a SIGKILL reaches everything
		# the adapter started (the tracer, helpers) at once.  SIGINT
		# and SIGQUIT at their defaults: bash ignores them in its
		# background jobs, and a shell adapter could not trap them.
		setsid env --default-signal=INT,QUIT "${PC_ARGV[@]}" >"$out" 2>"$out.err" 3>&- &
		# Whatever runs in its session is the tracer's (invariants).
		echo "$!" >>"$PC_INV_SESSIONS"
	else
		"${PC_ARGV[@]}" >"$out" 2>"$out.err" 3>&- &
	fi
	PC_TRACE_PID=$!
	echo "$PC_TRACE_PID" >>"$PC_T/tracers"
	_pc_deadline dl "$PC_TIMEOUT"
	while _pc_before "$dl"; do
		[[ -e $ready ]] && { pc_log "pc[$PC_NCALL]: ready (pid $PC_TRACE_PID)"; return 0; }
		if ! pc_inv_alive "$PC_TRACE_PID"; then
			_pc_trace_reap
			fail "pc_trace_bg: tracer exited with status $PC_TRACE_STATUS before it was ready: $(tail -n 5 "$out.err")"; return 1
		fi
		pc_nap 0.01	# polling the ready file, bounded by PC_TIMEOUT
	done
	pc_trace_stop KILL
	fail "pc_trace_bg: tracer not ready after ${PC_TIMEOUT}s: $(tail -n 5 "$out.err")"; return 1
}

# pc_trace_stop [SIGNAL]: signal the background tracer (default INT), wait
# for it, set PC_TRACE_STATUS and log its stderr.  Never fails by itself:
# assert on PC_TRACE_STATUS.
pc_trace_stop() {
	local sig=${1:-INT}
	[[ -n ${PC_TRACE_PID:-} ]] || { fail "pc_trace_stop: no tracer running"; return 1; }
	if [[ $sig == KILL ]]; then
		_pc_kill_tracer
	else
		kill -"$sig" "$PC_TRACE_PID" 2>/dev/null || true
		# Another tracer that ignores the signal must not hang the
		# test (probecheck's own detach may take long in a TCG guest:
		# waited for).
		if pc_tracer_other && ! _pc_wait_gone "$PC_TRACE_PID"; then
			pc_log "pc_trace_stop: tracer $PC_TRACE_PID still running ${PC_TIMEOUT}s after SIG$sig, killing it"
			_pc_kill_tracer
		fi
	fi
	_pc_trace_reap
}

# _pc_wait_gone PID: wait at most PC_TIMEOUT for PID to end (`wait` has no
# timeout); fail if it has not.
_pc_wait_gone() {
	local dl
	_pc_deadline dl "$PC_TIMEOUT"
	while pc_inv_alive "$1" && _pc_before "$dl"; do
		pc_nap 0.01
	done
	! pc_inv_alive "$1"
}

# _pc_kill_tracer: SIGKILL the background tracer.  Another tracer's whole
# session, and until nothing of it is left: the adapter's children (the
# tracer) die on their own time, holding uprobes and semaphores until then.
_pc_kill_tracer() {
	if pc_tracer_other; then
		kill -KILL -- -"$PC_TRACE_PID" 2>/dev/null || true
		pc_wait_until "$PC_TIMEOUT" _pc_session_gone "$PC_TRACE_PID" ||
			pc_log "processes of the tracer's session $PC_TRACE_PID still there ${PC_TIMEOUT}s after SIGKILL"
	fi
	kill -KILL "$PC_TRACE_PID" 2>/dev/null || true
}

# _pc_session_gone SID: no process but zombies left in session SID (a
# zombie has closed its files: its uprobes and semaphores are released).
_pc_session_gone() {
	local st
	local -a f
	for st in /proc/[0-9]*/stat; do
		{ read -r st <"$st"; } 2>/dev/null || continue
		st=${st##*) }
		read -ra f <<<"$st"
		[[ ${f[3]} == "$1" && ${f[0]} != Z ]] && return 1
	done
	return 0
}

# pc_trace_wait: wait for the background tracer to end by itself (its -c
# command or -p process exited), at most PC_TIMEOUT; then as pc_trace_stop.
pc_trace_wait() {
	[[ -n ${PC_TRACE_PID:-} ]] || { fail "pc_trace_wait: no tracer running"; return 1; }
	if ! _pc_wait_gone "$PC_TRACE_PID"; then
		pc_log "pc_trace_wait: tracer $PC_TRACE_PID still running after ${PC_TIMEOUT}s, killing it"
		_pc_kill_tracer
	fi
	_pc_trace_reap
}

_pc_trace_reap() {
	PC_TRACE_STATUS=0
	wait "$PC_TRACE_PID" 2>/dev/null || PC_TRACE_STATUS=$?
	# Death by the signal a test sent is not the tracer's failure.
	[[ $PC_TRACE_STATUS == 13[07] || $PC_TRACE_STATUS == 143 ]] ||
		pc_note_failed_call "$PC_TRACE_STATUS" "$PC_TRACE_ERR"
	pc_log "tracer $PC_TRACE_PID: exit status $PC_TRACE_STATUS"
	_pc_log_file "tracer stdout" "$PC_TRACE_OUT"
	_pc_log_file "tracer stderr" "$PC_TRACE_OUT.err"
	PC_TRACE_PID=
	return 0
}

# ---------------------------------------------------------------------------
# Fixtures and other processes.

# fx_bin VARIANT: path of the fixture executable of VARIANT, which is
#   CC_OPT_PIE as in fixtures/fixtures.mk, with or without "fx_":
#   fx_bin gcc_O2_pie -> $PROBECHECK_BUILD/fixtures/fx_gcc_O2_pie
# fx_lib VARIANT: its shared library (CC_OPT, a PIE suffix is ignored; a
# probe-site form suffix, _nop5 or _combo, is kept):
#   fx_lib gcc_O2_pie -> $PROBECHECK_BUILD/fixtures/libfx_gcc_O2.so
#   fx_lib gcc_O2_pie_nop5 -> $PROBECHECK_BUILD/fixtures/libfx_gcc_O2_nop5.so
# Both fail, naming the variants there are, if the file is missing.
fx_bin() {
	local v=${1#fx_}
	_pc_fx_path "$PC_FIXTURES/fx_$v"
}

fx_lib() {
	local v=${1#fx_} nop=''
	[[ $v =~ _(nop5|combo)$ ]] && nop=_${BASH_REMATCH[1]} v=${v%"$nop"}
	v=${v%_pie}
	v=${v%_nopie}
	_pc_fx_path "$PC_FIXTURES/libfx_$v$nop.so"
}

# fx_variants: every executable variant built (fixtures/variants.txt).
# fx_variants_want: how many variants fx_variants must give: every build
# (12), or as many as PC_VARIANTS names.
fx_variants_want() {
	if [[ -n ${PC_VARIANTS:-} ]]; then
		wc -w <<<"$PC_VARIANTS"
	else
		echo 12
	fi
}

fx_variants() {
	local v all=()
	if [[ ! -r $PC_FIXTURES/variants.txt ]]; then
		fail "fx_variants: no '$PC_FIXTURES/variants.txt' (run make)"; return 1
	fi
	while read -r v; do
		[[ -n $v ]] && all+=("${v#fx_}")
	done <"$PC_FIXTURES/variants.txt"
	# PC_VARIANTS: a subset (the core matrix's guests: harness/kernels/matrix).
	[[ -n ${PC_VARIANTS:-} ]] || { printf '%s\n' "${all[@]}"; return 0; }
	for v in $PC_VARIANTS; do
		[[ " ${all[*]} " == *" $v "* ]] ||
			{ fail "PC_VARIANTS: '$v' is not a build variant (${all[*]})"; return 1; }
		echo "$v"
	done
}

_pc_fx_path() {
	if [[ ! -e $1 ]]; then
		echo "no fixture '$1'; there are:" \
			"$(cd "$PC_FIXTURES" 2>/dev/null && ls -- fx_* libfx_* 2>/dev/null | tr '\n' ' ')" >&2
		return 1
	fi
	echo "$1"
}

# pc_spawn VAR CMD...: start CMD in the background in its own session, so
# teardown can kill it and everything it forked; VAR gets its pid.  Its
# stdout/stderr go to $BATS_TEST_TMPDIR/spawn.N.{out,err} (N counts the
# test's spawns, the log says which).  Not inside `run`.
pc_spawn() {
	local -n _pc_spawn_var=$1
	local log
	shift
	PC_NSPAWN=$((${PC_NSPAWN:-0} + 1))
	log=$BATS_TEST_TMPDIR/spawn.$PC_NSPAWN
	# fd 3 is bats' own output: a background holder would hang bats.
	setsid "$@" >"$log.out" 2>"$log.err" 3>&- </dev/null &
	_pc_spawn_var=$!
	echo "$!" >>"$PC_T/spawned"
	pc_log "spawned pid $! (own session, output in $log.{out,err}): $(printf '%q ' "$@")"
}

# pc_kill PID [SIGNAL]: signal one process (default KILL) and, if it is
# our child, reap it; sets PC_KILL_STATUS.  For tests that kill on purpose.
pc_kill() {
	local pid=$1 sig=${2:-KILL}
	kill -"$sig" "$pid" || { fail "pc_kill: cannot send SIG$sig to $pid"; return 1; }
	PC_KILL_STATUS=0
	wait "$pid" 2>/dev/null || PC_KILL_STATUS=$?
	pc_log "killed $pid with SIG$sig: status $PC_KILL_STATUS"
}

# pc_shared_dir VAR NAME MODE: VAR gets a directory /tmp/pc-NAME.XXXXXX
# with MODE, removed at teardown; made once a test (VAR already set: kept).
# /tmp, not the test's own directory: every directory above that one is
# root's, 0700, and a container's root or an unprivileged caller must
# reach this one.
pc_shared_dir() {
	local -n _pc_shared_dir=$1
	[[ -z ${_pc_shared_dir:-} ]] || return 0
	_pc_shared_dir=$(mktemp -d "/tmp/pc-$2.XXXXXX") || { fail "pc_shared_dir: mktemp failed"; return 1; }
	chmod "$3" "$_pc_shared_dir"
	pc_on_teardown rm -rf "$_pc_shared_dir"
}

# pc_on_teardown CMD...: run CMD at teardown, before the invariant check
# (last registered runs first).  For stopping what the test started.
pc_on_teardown() {
	PC_CLEANUPS+=("$(printf '%q ' "$@")")
}

# ---------------------------------------------------------------------------
# Barriers.  No sleeps as synchronisation: fifos and ready files.

# pc_fifo NAME: make a fifo in the test's tmpdir, print its path.
pc_fifo() {
	local p=$BATS_TEST_TMPDIR/$1
	mkfifo "$p" || { fail "pc_fifo: cannot make '$p'"; return 1; }
	echo "$p"
}

# pc_fifo_read FIFO [TIMEOUT]: read one line (printed), fail on timeout or
# EOF.  Opened read-write so the open never blocks; the read has the limit.
pc_fifo_read() {
	local fd line
	exec {fd}<>"$1" || { fail "pc_fifo_read: cannot open '$1'"; return 1; }
	if ! IFS= read -r -t "${2:-$PC_TIMEOUT}" -u "$fd" line; then
		exec {fd}<&-
		fail "pc_fifo_read: nothing on '$1' within ${2:-$PC_TIMEOUT}s"; return 1
	fi
	exec {fd}<&-
	printf '%s\n' "$line"
}

# pc_fifo_write FIFO MSG [TIMEOUT]: write one line, waiting at most
# TIMEOUT for a reader to open the other end.
pc_fifo_write() {
	timeout "${3:-$PC_TIMEOUT}" bash -c 'printf "%s\n" "$2" >"$1"' _ "$1" "$2" ||
		{ fail "pc_fifo_write: no reader on '$1' within ${3:-$PC_TIMEOUT}s"; return 1; }
}

# pc_wait_file PATH [TIMEOUT]: wait until PATH exists (a ready file).
pc_wait_file() {
	local t=${2:-$PC_TIMEOUT} dl
	_pc_deadline dl "$t"
	while _pc_before "$dl"; do
		[[ -e $1 ]] && return 0
		pc_nap 0.01	# polling a ready file, bounded
	done
	[[ -e $1 ]] && return 0
	fail "pc_wait_file: '$1' did not appear within ${t}s"; return 1
}

# pc_wait_until TIMEOUT CMD...: poll CMD until it succeeds.  Only for
# effects the kernel completes asynchronously (BPF object freeing, a
# reparented zombie being reaped), never to wait for a test's own process.
pc_wait_until() {
	local dl
	_pc_deadline dl "$1"
	shift
	while _pc_before "$dl"; do
		"$@" && return 0
		pc_nap 0.02
	done
	"$@"
}

# pc_lines_at_least FILE N: FILE has N lines or more (with pc_wait_until:
# a tracer has printed N events; its ring is read asynchronously).
pc_lines_at_least() {
	(($(wc -l <"$1") >= $2))
}

# ---------------------------------------------------------------------------
# Judging the tracer.

# assert_oracle ORACLE TRACE [--only GLOB]... [--allow-empty] [--ns]: the
# trace holds exactly the oracle's events (multiset of pid, tid, probe,
# args; with --ns the trace's nspid and nstid are its pid and tid: a
# fixture in a container logs the ids it sees).
# Zero events on both sides fails unless --allow-empty: a comparison of
# nothing with nothing proves nothing.
assert_oracle() {
	local oracle=$1 trace=$2 allow_empty=0 out st
	local -a opts=()
	shift 2 || { fail "assert_oracle: usage: assert_oracle ORACLE TRACE [--only GLOB] [--allow-empty] [--ns]"; return 1; }
	while (($#)); do
		case $1 in
		--only) opts+=(--only "$2"); shift 2 ;;
		--allow-empty) allow_empty=1; shift ;;
		--ns) opts+=(--ns); shift ;;
		*) fail "assert_oracle: unknown option '$1'"; return 1 ;;
		esac
	done
	st=0
	out=$(pc_oraclecmp "${opts[@]}" "$oracle" "$trace" 2>&1) || st=$?
	pc_log "oraclecmp $(printf '%q ' "${opts[@]}" "$oracle" "$trace"): status $st"
	if ((st != 0)); then
		printf 'oracle: %s\ntrace:  %s\n%s\n' "$oracle" "$trace" "$out" |
			batslib_decorate "oracle and trace differ" | fail; return 1
	fi
	if ((!allow_empty)) && [[ $out == "oraclecmp: 0 events match" ]]; then
		fail "assert_oracle: no events on either side ($oracle, $trace)"; return 1
	fi
	pc_log "$out"
}

# assert_summary EXPECTED [FILE]: the tracer's one summary line
#   probecheck: summary: delivered=D dropped=X hits=H[ unreadable=U truncated=T]
# has D + X == H and H == EXPECTED.  Reads FILE, else $stderr (run
# --separate-stderr), else $output.  Sets PC_DELIVERED, PC_DROPPED, PC_HITS,
# and PC_UNREADABLE, PC_TRUNCATED ('' where the line has none: an adapter's).
assert_summary() {
	local want=$1 text lines
	if ! pc_tracer_claim accounting; then
		pc_log "assert_summary: not checked: tracer $PC_TRACER does not claim accounting"
		PC_DELIVERED='' PC_DROPPED='' PC_HITS=''
		return 0
	fi
	if (($# > 1)); then
		text=$(cat "$2") || { fail "assert_summary: cannot read '$2'"; return 1; }
	elif [[ -n ${stderr+x} ]]; then
		text=$stderr
	else
		text=${output:-}
	fi
	lines=$(grep -E '^probecheck: summary: ' <<<"$text" || true)
	[[ -n $lines ]] || { fail "assert_summary: no 'probecheck: summary:' line in: $text"; return 1; }
	[[ $(wc -l <<<"$lines") == 1 ]] || { fail "assert_summary: more than one summary line: $lines"; return 1; }
	[[ $lines =~ ^probecheck:\ summary:\ delivered=([0-9]+)\ dropped=([0-9]+)\ hits=([0-9]+)(\ unreadable=([0-9]+)\ truncated=([0-9]+))?$ ]] ||
		{ fail "assert_summary: malformed summary line: '$lines'"; return 1; }
	PC_DELIVERED=${BASH_REMATCH[1]} PC_DROPPED=${BASH_REMATCH[2]} PC_HITS=${BASH_REMATCH[3]}
	PC_UNREADABLE=${BASH_REMATCH[5]} PC_TRUNCATED=${BASH_REMATCH[6]}
	if ((PC_DELIVERED + PC_DROPPED != PC_HITS)); then
		fail "assert_summary: delivered $PC_DELIVERED + dropped $PC_DROPPED != hits $PC_HITS"; return 1
	fi
	if ((PC_HITS != want)); then
		fail "assert_summary: hits $PC_HITS, expected $want ($lines)"; return 1
	fi
}

# pc_kernel_symptom SLUG EVIDENCE... [-- SLUG EVIDENCE...]...: the test
# saw the symptom(s) of known kernel problems (ci/kernel-issues lists them
# by SLUG).  Prints one "kernel-symptom: SLUG: EVIDENCE" line per evidence
# argument and fails the test.  The reporting module reports the test as
# those findings only if the list names every SLUG for this test and
# nothing else failed; otherwise it stays a plain failure.  Call it once,
# last, after every check of the tracer itself has passed, and only with
# evidence that is specific to the kernel problem.
pc_kernel_symptom() {
	local slug='' e n=0 lines=''
	while (($#)); do
		if [[ -z $slug || $1 == -- ]]; then
			[[ $1 == -- ]] && shift
			slug=${1:-}
			[[ $slug =~ ^[a-z0-9][a-z0-9-]*$ ]] || { fail "pc_kernel_symptom: bad slug '$slug'"; return 1; }
			shift
			n=0
			[[ ${1:-} != -- && $# -gt 0 ]] || { fail "pc_kernel_symptom: $slug: no evidence given"; return 1; }
			continue
		fi
		lines+="kernel-symptom: $slug: $1"$'\n'
		n=$((n + 1))
		shift
	done
	[[ -n $lines ]] || { fail "pc_kernel_symptom: no symptom given"; return 1; }
	pc_log "$lines"
	printf '%s' "$lines" | fail
}

# pc_count_events FILE [GLOB...]: number of oracle/trace lines for probes
# matching any GLOB (default all), by oraclecmp against an empty file.
pc_count_events() {
	local empty=$BATS_TEST_TMPDIR/empty.json out g
	local -a only=()
	for g in "${@:2}"; do only+=(--only "$g"); done
	: >"$empty"
	out=$("$PC_TOOLS/oraclecmp" "${only[@]}" "$1" "$empty" 2>&1) || true
	[[ $out =~ ([0-9]+)\ missing ]] && { echo "${BASH_REMATCH[1]}"; return 0; }
	[[ $out == "oraclecmp: 0 events match" ]] && { echo 0; return 0; }
	fail "pc_count_events: $out"; return 1
}

# ---------------------------------------------------------------------------
# Reading processes and ELF files independently of the tracer.

# pc_peek PID ADDR SIZE: print the unsigned value (SIZE 1/2/4/8 bytes).
pc_peek() {
	"$PC_TOOLS/pc-peek" "$@"
}

# pc_peek_bytes PID ADDR N: print N bytes as "cc 0f 1f ..".
pc_peek_bytes() {
	"$PC_TOOLS/pc-peek" --bytes "$@"
}

# pc_elf_notes FILE: one line per USDT note, from readelf: in
# harness/lib/notes.bash (invariants.bash sources it).

# pc_load_bias PID FILE: FILE's load bias in PID (0x...): runtime address
# minus link-time address, from /proc/PID/maps and the first PT_LOAD.
pc_load_bias() {
	local pid=$1 file start vaddr ino
	file=$(readlink -f "$2")
	ino=$(stat -Lc %i "$file") || { fail "pc_load_bias: cannot stat '$2'"; return 1; }
	start=$(awk -v f="$file" -v ino="$ino" '
		$5 == ino && $6 == f && $3 == "00000000" { split($1, r, "-"); print r[1]; exit }
	' "/proc/$pid/maps")
	[[ -n $start ]] || { fail "pc_load_bias: '$file' not mapped in pid $pid"; return 1; }
	vaddr=$(readelf -lW "$file" | awk '$1 == "LOAD" { print $3; exit }')
	[[ -n $vaddr ]] || { fail "pc_load_bias: no PT_LOAD in '$file'"; return 1; }
	# The offset-0 mapping starts at the page of the first PT_LOAD.
	printf '0x%x\n' $((0x$start - (vaddr & ~0xfff)))
}

# pc_runtime_addr PID FILE VADDR: where link-time VADDR of FILE is in PID.
pc_runtime_addr() {
	local bias
	bias=$(pc_load_bias "$1" "$2") || return 1
	printf '0x%x\n' $((bias + $3))
}

# pc_sema_norm VALUES: semaphore values as the tracer under test promises
# them.  probecheck's are exact: the kernel's reference counter, one per
# traced site in each process.  Other tracers promise the USDT contract
# only (non-zero while traced, zero when not): one that writes the
# semaphore itself counts per tracer or per probe.  So for them every
# non-zero value reads "on".
pc_sema_norm() {
	if pc_tracer_other; then
		sed -E 's/(^| )[1-9][0-9]*/\1on/g' <<<"$1"
	else
		printf '%s\n' "$1"
	fi
}

# assert_sema GOT WANT: semaphore values equal, as pc_sema_norm reads them.
assert_sema() {
	assert_equal "$(pc_sema_norm "$1")" "$(pc_sema_norm "$2")"
}

# ---------------------------------------------------------------------------
# Watches: values that must be back after the test (checked in teardown).

# pc_sema_watch PID ADDR [EXPECTED]: the 16-bit semaphore at ADDR in PID
# must read EXPECTED (default: what it reads now) after the test, if PID
# is still alive.
pc_sema_watch() {
	local v=${3:-}
	if [[ -z $v ]]; then
		v=$(pc_peek "$1" "$2" 2) || { fail "pc_sema_watch: cannot read pid $1 at $2"; return 1; }
	fi
	echo "$1 $2 $v" >>"$PC_T/sema"
	pc_log "watching semaphore pid $1 at $2: expect $v"
}

# pc_bytes_watch PID ADDR [N]: the N (default 5) bytes at ADDR in PID must
# be what they are now after the test: the original instructions of a probe
# site, with no int3 left behind.  Call before attaching.
pc_bytes_watch() {
	local n=${3:-5} b
	b=$(pc_peek_bytes "$1" "$2" "$n") || { fail "pc_bytes_watch: cannot read pid $1 at $2"; return 1; }
	echo "$1 $2 $n $b" >>"$PC_T/bytes"
	pc_log "watching bytes pid $1 at $2: expect $b"
}

# ---------------------------------------------------------------------------
# The invariants.

# _pc_check_watches: semaphores and site bytes of still-living processes.
_pc_check_watches() {
	local pid addr want n got bad=0
	if [[ -s $PC_T/sema ]]; then
		while read -r pid addr want; do
			pc_inv_alive "$pid" || continue
			# One that exits while being read (teardown's cleanups
			# let fixtures go) is not a violation.
			if ! got=$(pc_peek "$pid" "$addr" 2 2>&1); then
				pc_inv_alive "$pid" || continue
				echo "semaphore pid $pid at $addr: $got"
				bad=1
				continue
			fi
			[[ $got == "$want" ]] && continue
			echo "semaphore pid $pid at $addr is $got, expected $want"
			bad=1
		done <"$PC_T/sema"
	fi
	if [[ -s $PC_T/bytes ]]; then
		while read -r pid addr n want; do
			pc_inv_alive "$pid" || continue
			if ! got=$(pc_peek_bytes "$pid" "$addr" "$n" 2>&1); then
				pc_inv_alive "$pid" || continue
				echo "bytes pid $pid at $addr: $got"
				bad=1
				continue
			fi
			[[ $got == "$want" ]] && continue
			echo "probe site pid $pid at $addr holds '$got', expected '$want'"
			bad=1
		done <"$PC_T/bytes"
	fi
	return $bad
}

# _pc_descends PID ANCESTOR...: PID is (a descendant of) one of them.
_pc_descends() {
	local pid=$1 stat a i
	shift
	for ((i = 0; i < 64 && pid > 1; i++)); do
		for a in "$@"; do
			[[ $pid == "$a" ]] && return 0
		done
		{ read -r stat <"/proc/$pid/stat"; } 2>/dev/null || return 1
		stat=${stat##*) }
		read -r _ pid _ <<<"$stat"
	done
	return 1
}

# _pc_violations MODE: print every violation of the machine-wide
# invariants now.  MODE "mid": processes still under the test (children of
# its shell, of the background tracer, or in a spawned session) are fine;
# "end": nothing of ours may be left.  Ours: tagged with this test's PC_TAG
# and, with PC_STRICT_PROCS=1 (the default under CI=true), also untagged
# processes newer than the test; a developer's machine runs other tracers.
# BPF objects held by a process that is fine or not ours are spared.
# Beside other suites (PROBECHECK_PARALLEL=1) only what is this suite's
# counts: a new uprobe on a file of its own directory, and BPF objects a
# process of this test holds; one held by nobody is the run's sweep's.
#
# Through files, not pipes: each pipe and $(...) is a fork of the test's
# large shell, and this runs at every teardown (a fifth of the forks of a
# simple test).
_pc_violations() {
	local mode=$1 line pid comm state tag sid kind id name f=$PC_T/inv.$BASHPID
	local par=${PROBECHECK_PARALLEL:-0}
	local -A spawned=() old=() spare=() fine=() tagof=() held=()
	local -a keep=()
	pc_inv_uprobe_all >"$f.all"
	pc_inv_uprobe_scope <"$f.all" >"$f.scope"
	pc_inv_new_lines "$PC_T/uprobes.before" <"$f.scope" >"$f.new"
	while IFS= read -r line; do
		if pc_inv_uprobe_is_ours "$line"; then
			echo "uprobe of ours left in uprobe_events: $line"
		else
			echo "new uprobe in uprobe_events: $line"
		fi
	done <"$f.new"
	if [[ $mode == mid && -s $PC_T/spawned ]]; then
		while read -r pid; do spawned[$pid]=1; done <"$PC_T/spawned"
	fi
	while read -r pid comm state tag; do old[$pid]=$comm; done <"$PC_T/procs.before"
	pc_inv_bpf_ours >"$f.all"
	pc_inv_new_lines "$PC_T/bpf.before" <"$f.all" >"$f.bpf"
	pc_inv_procs >"$f.procs"
	while read -r pid comm state tag; do
		# A zombie holds nothing; its parent reaps it when it will.
		[[ $state == Z ]] && continue
		if [[ $tag != "$PC_TAG" && $tag != - && $tag != '?' ]] ||
		   [[ ${old[$pid]:-} == "$comm" ]] ||
		   [[ $tag != "$PC_TAG" && $PC_STRICT_PROCS != 1 ]]; then
			keep+=("$pid")	# not ours
			continue
		fi
		if [[ $mode == mid ]]; then
			sid=$(awk '{ sub(/.*\) /, ""); print $4 }' "/proc/$pid/stat" 2>/dev/null)
			if _pc_descends "$pid" "$BASHPID" "$$" ${PC_TRACE_PID:-} ||
			   [[ -n ${spawned[${sid:-x}]:-} ]]; then
				keep+=("$pid")
				continue
			fi
		fi
		echo "stray process: pid $pid comm $comm state $state tag $tag"
	done <"$f.procs"
	# A BPF object is spared if a holder is fine (mid-test) or not ours.
	for pid in "${keep[@]}"; do fine[$pid]=1; done
	# Stash records (tracefs entries a tracer would leave if it died): none
	# new, but those of a tracer that is still fine.
	local sname spid sstate
	pc_inv_stash_names >"$f.all"
	pc_inv_new_lines "$PC_T/stash.before" <"$f.all" >"$f.new"
	while read -r sname; do
		[[ -n $sname ]] || continue
		read -r spid sstate <<<"$(pc_inv_stash_owner "$sname")"
		[[ $sstate == live && -n ${fine[$spid]:-} ]] && continue
		echo "stash record left: $(pc_inv_stash_dir)/$sname (tracer $spid $sstate)"
	done <"$f.new"
	: >"$f.holders"
	[[ -s $f.bpf ]] && pc_inv_bpf_holders >"$f.holders"
	while read -r kind id pid; do
		held["$kind $id"]=1
		[[ -n ${spare["$kind $id"]:-} ]] && continue
		if [[ -z ${tagof[$pid]:-} ]]; then
			tagof[$pid]=$(pc_inv_tag "$pid")
		fi
		if [[ -n ${fine[$pid]:-} || ${tagof[$pid]} != "$PC_TAG" ]]; then
			spare["$kind $id"]=1
		fi
	done <"$f.holders"
	while read -r kind id name; do
		[[ -z $kind || -n ${spare["$kind $id"]:-} ]] && continue
		[[ $par == 1 && -z ${held["$kind $id"]:-} ]] && continue
		echo "BPF object of ours: $kind $id $name"
	done <"$f.bpf"
	return 0
}

# pc_check_clean: the invariant check, now, mid-test: watched semaphores
# and site bytes, uprobes, BPF objects, and processes — those the test is
# still running (its children, the background tracer and its children,
# spawned sessions) are allowed; orphans are not.
pc_check_clean() {
	local v
	v=$(_pc_check_watches; _pc_settled_violations mid)
	[[ -z $v ]] && return 0
	printf '%s\n' "$v" | batslib_decorate "cleanup invariants violated" | fail; return 1
}

# pc_check_clean_quiet: succeed if pc_check_clean would, failing nothing:
# to wait (pc_wait_until) for what the kernel frees after a SIGKILL.
pc_check_clean_quiet() {
	[[ -z $(_pc_check_watches; _pc_violations mid) ]]
}

# _pc_stop_all: what teardown stops before checking: the tracer, the
# registered cleanups (last first), then the spawned sessions.
_pc_stop_all() {
	local i
	if [[ -n ${PC_TRACE_PID:-} ]]; then
		pc_log "teardown: tracer $PC_TRACE_PID still running, sending SIGINT"
		kill -INT "$PC_TRACE_PID" 2>/dev/null
		_pc_wait_gone "$PC_TRACE_PID" || _pc_kill_tracer
		_pc_trace_reap
	fi
	for ((i = ${#PC_CLEANUPS[@]} - 1; i >= 0; i--)); do
		pc_log "teardown: ${PC_CLEANUPS[i]}"
		eval "${PC_CLEANUPS[i]}" >>"$PC_LOG" 2>&1 || pc_log "teardown: cleanup failed: ${PC_CLEANUPS[i]}"
	done
}

_pc_kill_spawned() {
	local pid
	[[ -s $PC_T/spawned ]] || return 0
	while read -r pid; do
		# The whole session: fixtures that forked go too.
		kill -KILL -- -"$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done <"$PC_T/spawned"
	return 0
}

# _pc_kill_spawned_tracers: SIGKILL the probecheck processes still running
# in spawned sessions (a tracer under strace, say) and wait, at most
# PC_TIMEOUT (each site takes ~0.1 s to close), until they are gone: until
# then a fixture's sites hold their int3s and semaphores their counts.
_pc_kill_spawned_tracers() {
	local pid comm state tag sid dl
	local -A spawned=()
	local -a pids=()
	[[ -s $PC_T/spawned ]] || return 0
	while read -r pid; do spawned[$pid]=1; done <"$PC_T/spawned"
	while read -r pid comm state tag; do
		[[ $comm == probecheck* && $state != Z ]] || continue
		sid=$(awk '{ sub(/.*\) /, ""); print $4 }' "/proc/$pid/stat" 2>/dev/null)
		[[ -n ${spawned[${sid:-x}]:-} ]] || continue
		kill -KILL "$pid" 2>/dev/null && pids+=("$pid")
	done < <(pc_inv_procs)
	((${#pids[@]})) || return 0
	pc_log "teardown: tracers still running in spawned sessions, SIGKILL: ${pids[*]}"
	_pc_deadline dl "$PC_TIMEOUT"
	for pid in "${pids[@]}"; do
		while pc_inv_alive "$pid" && _pc_before "$dl"; do
			pc_nap 0.02	# exit closes one perf fd per site
		done
	done
	return 0
}

# _pc_check_sites: every probe site and semaphore of every fixture process
# of this test still alive holds what its file holds (pc_inv_sites): no
# int3 left, no semaphore raised.
_pc_check_sites() {
	local pid comm state tag
	while read -r pid comm state tag; do
		[[ $comm == fx_* && $tag == "$PC_TAG" && $state != Z ]] || continue
		pc_inv_sites "$pid"
	done < <(pc_inv_procs)
	return 0
}

# _pc_settled_violations MODE: no report of a process or BPF object while
# the kernel still finishes a SIGKILL or frees the object: those two kinds
# are retried for up to PC_GRACE seconds.
_pc_settled_violations() {
	local line other f=$PC_T/settled.$BASHPID
	local dl=$((${EPOCHREALTIME/./} + ${PC_GRACE:-5} * 1000000))
	local -a v
	while :; do
		_pc_violations "$1" >"$f"
		mapfile -t v <"$f"
		((${#v[@]})) || break
		other=0
		for line in "${v[@]}"; do
			[[ $line == 'stray process'* || $line == 'BPF object of ours'* ]] || other=1
		done
		((other)) && break
		_pc_before "$dl" || break
		pc_nap 0.05
	done
	((${#v[@]} == 0)) || printf '%s\n' "${v[@]}"
}

# A sanitizer build (make sanitize) writes each report of ASan and LSan to
# a file of its own in PROBECHECK_SANITIZER_DIR, not to stderr (suites
# compare probecheck's stderr): a new file fails the test that made it,
# with the report's first error line.  UBSan linked with ASan ignores
# log_path and writes to stderr (gcc 12): its "runtime error:" lines are
# looked for in every file the test kept (the captured stderr of every
# command), and its exit status (86, UBSAN_OPTIONS) fails the command.
# LeakSanitizer cannot check a process that is being ptraced (it ptraces
# its own threads at exit) and fails it instead: a sanitizer build's
# tracer run under strace goes without the leak check (strace -E).
PC_STRACE_ENV=(-E "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")

# A UBSan report line, "FILE:LINE:COL: runtime error: ...": not the words
# alone, which a test's copy of this tree holds (structure.bats' checklists).
_PC_UBSAN='[^ :]+:[0-9]+:[0-9]+: runtime error: '

_pc_sanitizer_reports() {
	[[ -n ${PROBECHECK_SANITIZER_DIR:-} && -d $PROBECHECK_SANITIZER_DIR ]] || return 0
	ls -1 "$PROBECHECK_SANITIZER_DIR"
}

_pc_new_sanitizer_reports() {
	local f
	[[ -n ${PROBECHECK_SANITIZER_DIR:-} ]] || return 0
	while IFS= read -r f; do
		[[ -n $f ]] || continue
		echo "sanitizer report $PROBECHECK_SANITIZER_DIR/$f:" \
			"$(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$PROBECHECK_SANITIZER_DIR/$f")"
	done < <(_pc_sanitizer_reports | pc_inv_new_lines "$PC_T/sanitizer.before")
	while IFS= read -r f; do
		echo "UBSan report in $f: $(grep -m1 -aE "$_PC_UBSAN" "$f")"
	done < <(grep -rlsaE -- "$_PC_UBSAN" "$BATS_TEST_TMPDIR")
}

_pc_setup_body() {
	PC_T=$BATS_TEST_TMPDIR/pc-state
	mkdir -p "$PC_T"
	PC_LOG=$BATS_TEST_TMPDIR/pc.log
	: >"$PC_LOG"
	PC_CLEANUPS=()
	PC_TRACE_PID=
	export PC_TAG="${PC_RUN_TAG:-bats-${BATS_RUN_TMPDIR##*/}}/${BATS_SUITE_TEST_NUMBER:-$BATS_TEST_NUMBER}"
	pc_log "test: $BATS_TEST_DESCRIPTION (PC_TAG=$PC_TAG${PC_TRACER:+, tracer $PC_TRACER})"
	# Adapters log the tracer's own command lines here (reproducers).
	export PC_TRACER_CMDLOG=$PC_T/native.log
	PC_INV_SESSIONS=$PC_T/tracer-sessions
	if ((${#PC_REQUIRES[@]})); then
		requires "${PC_REQUIRES[@]}"
	fi
	pc_inv_uprobe_all >"$PC_T/uprobes.before"
	pc_inv_bpf_ours >"$PC_T/bpf.before"
	pc_inv_procs >"$PC_T/procs.before"
	pc_inv_stash_names >"$PC_T/stash.before"
	_pc_sanitizer_reports >"$PC_T/sanitizer.before"
	# Each test starts from a clean slate or says why it cannot.
	pc_inv_uprobe_ours >"$PC_T/ours.before"
	if [[ -s $PC_T/bpf.before || -s $PC_T/ours.before ]]; then
		pc_log "setup: objects of ours already present before this test:"
		cat "$PC_T/ours.before" "$PC_T/bpf.before" >>"$PC_LOG"
	fi
	PC_SETUP_DONE=1
}

_pc_teardown_body() {
	local f=$PC_T/teardown line st=0
	local -a v=()
	[[ -n ${PC_SETUP_DONE:-} ]] || return 0
	# Watches first, while the fixtures are still alive.  Into a file, not
	# through $(...): forks of a large shell, at every test.
	_pc_stop_all
	_pc_check_watches >"$f"
	_pc_kill_spawned_tracers
	_pc_check_sites >>"$f"
	_pc_kill_spawned
	_pc_settled_violations end >>"$f"
	_pc_new_sanitizer_reports >>"$f"
	while IFS= read -r line; do
		[[ -n $line ]] && v+=("$line")
	done <"$f"
	if ((${#v[@]})); then
		st=1
		printf '%s\n' "${v[@]}" | batslib_decorate "cleanup invariants violated after the test"
		# Remove what we can, so the next test starts clean.
		[[ -x $PC_BIN ]] && "$PC_BIN" cleanup >>"$PC_LOG" 2>&1
		while IFS= read -r line; do
			pc_inv_remove_uprobe "$line"
		done < <(pc_inv_uprobe_ours | pc_inv_uprobe_scope | pc_inv_new_lines "$PC_T/uprobes.before")
		pc_inv_stray_procs "$PC_T/procs.before" "$PC_TAG" "$PC_STRICT_PROCS" |
			pc_inv_kill_procs
	fi
	if [[ -z ${BATS_TEST_COMPLETED:-} || $st != 0 ]]; then
		_pc_repro_write
		echo "# ---- probecheck log of this test ----"
		cat "$PC_LOG"
	fi
	return $st
}

# bats runs a DEBUG trap (its stack-trace bookkeeping) before every
# command of a test, also inside functions: about ten commands per command
# of ours.  Setup and teardown are hundreds of builtin commands each (the
# /proc walks), which made them 6 of the 12 s a simple test takes in a TCG
# guest.  They run without the trap; a failure in them is reported by
# their own messages, not by a bats stack trace.
_pc_untrapped() {
	local t st=0
	t=$(trap -p DEBUG)
	trap - DEBUG
	"$@" || st=$?
	[[ -n $t ]] && eval "$t"
	return $st
}

pc_setup() {
	_pc_untrapped _pc_setup_body || return
	_pc_error_traced
}

# _pc_error_traced: the test body without bats's DEBUG trap, its stack
# taken at the failure instead.  The trap copies the whole call stack
# before every command, also in each $(...) (set -T): it was a third of
# a suite's CPU (semantics: 36 s of CPU, 23 s without it, 2026-11-27).
# An ERR trap sees the failing command's own stack, which is the trace
# bats prints (bats_capture_stack_trace, from the frame above ours).
# Under bats --trace (BATS_TRACE_LEVEL) the DEBUG trap stays: it is the
# trace.
_pc_error_traced() {
	((${BATS_TRACE_LEVEL:-0} == 0)) || return 0
	declare -F bats_capture_stack_trace >/dev/null || return 0
	trap - DEBUG
	trap _pc_err_trap ERR
}

# As bats_error_trap, with the stack of the failure itself.
_pc_err_trap() {
	local st=$?
	if [[ -n ${BATS_TEST_COMPLETED:-} ]]; then
		return 0
	fi
	bats_capture_stack_trace
	BATS_DEBUG_LAST_STACK_TRACE_IS_VALID=1
	BATS_ERROR_STATUS=${BATS_ERROR_STATUS:-$st}
	if [[ $BATS_ERROR_STATUS == 0 ]]; then
		BATS_ERROR_STATUS=1
	fi
	return 0
}

pc_teardown() {
	local st=0
	_pc_untrapped _pc_teardown_body || st=$?
	# bats prints the last stack it took for a failed teardown: take ours,
	# or it names the place in setup where the DEBUG trap was removed.
	if ((st)) && declare -F bats_capture_stack_trace >/dev/null; then
		bats_capture_stack_trace
	fi
	return $st
}

setup() {
	pc_setup
}

teardown() {
	pc_teardown
}

[[ -n $_pc_load_trap ]] && eval "$_pc_load_trap"
unset _pc_load_trap
