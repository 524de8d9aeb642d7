# repro.bash — a reproducer for every failure of another tracer.
#
# Under `make conformance` (PC_TRACER set, PC_REPRO_DIR set by
# harness/run/conformance) a failing test leaves PC_REPRO_DIR/SUITE-N/, a
# directory a tracer's maintainer can attach to a bug report as it is:
#   README.txt        the test, tracer and version, kernel, first difference
#   commands.txt      every call of the test: the adapter's command line and
#                     the tracer's own command lines (the adapter logs them
#                     to PC_TRACER_CMDLOG)
#   expected.K.json   the fixture's oracle of the K-th comparison that failed
#   got.K.json        the tracer's events, as the adapter printed them
#   diff.K.txt        oraclecmp's verdict: missing and unexpected events
#   stderr.K.txt      the tracer's stderr of that call, when there is one
#   stderr.failed-call.txt  the stderr of the first call that exited non-zero
#   test.log          the test's whole log (every call, status, outputs)
#   fixture/          the fixture sources, and bin/ with every fixture file
#                     the commands name (paths in commands.txt are the
#                     build's: $PROBECHECK_BUILD/fixtures/...)
# Sourced by common.bash; bash only.

# pc_oraclecmp [OPTS] ORACLE TRACE: oraclecmp, and a failing comparison is
# remembered for the reproducer (from subshells too: it goes to a file).
pc_oraclecmp() {
	local st=0 out
	out=$("$PC_TOOLS/oraclecmp" "$@" 2>&1) || st=$?
	if ((st == 1)) && [[ -n ${PC_T:-} ]]; then
		local n=$(($# - 1))
		printf '%s\t%s\t%s\n' "${!n}" "${!#}" "$(printf '%s\n' "$out" | base64 -w0)" >>"$PC_T/mismatch"
	fi
	printf '%s\n' "$out"
	return $st
}

# pc_note_failed_call STATUS ERRFILE: a call of the tracer that failed
# (pc, pc_trace_bg), for the reproducer's first difference.
pc_note_failed_call() {
	[[ -n ${PC_TRACER:-} && -n ${PC_T:-} && $1 != 0 ]] || return 0
	printf '%s\t%s\n' "$1" "$2" >>"$PC_T/failedcalls"
}

# _pc_tracer_error STATUS ERRFILE: "the tracer exited N: LINE", LINE the
# error its stderr names: the first "ERROR" line (bpftrace's and bcc's
# style; bpftrace's RLIMIT_MEMLOCK warning, printed on every run, aside),
# else the last line that reads like an error (the adapter's bare "exited
# with status N" aside).
_pc_tracer_error() {
	local errs line
	errs=$(grep -iE 'error|fail|cannot|can.t|refus|not (found|supported|claimed)|unknown|invalid|unrecognized' \
		"$2" 2>/dev/null | grep -v 'RLIMIT_MEMLOCK' | grep -vE "exited with status [0-9]+( before attaching)?$")
	line=$(grep -m1 'ERROR' <<<"$errs")
	[[ -n $line ]] || line=$(tail -n 1 <<<"$errs")
	[[ -n $line ]] || line=$(grep -v '^probecheck: summary' "$2" 2>/dev/null | tail -n 1)
	printf '%s exited %s: %s\n' "$PC_TRACER" "$1" "${line:-(nothing on stderr)}"
}

# _pc_first_difference DIFF: "expected X; got Y" from oraclecmp's output.
_pc_first_difference() {
	local miss unexp
	miss=$(grep -m1 '^missing' <<<"$1" | sed 's/^missing (x[0-9]*): //')
	unexp=$(grep -m1 '^unexpected' <<<"$1" | sed 's/^unexpected (x[0-9]*): //')
	[[ -n $miss || -n $unexp ]] || { tail -n 1 <<<"$1"; return 0; }
	printf 'expected %s; got %s\n' "${miss:-(nothing more)}" "${unexp:-(nothing)}"
}

# _pc_repro_write: write this failed test's reproducer (teardown).
_pc_repro_write() {
	[[ -n ${PC_REPRO_DIR:-} && -n ${PC_TRACER:-} ]] || return 0
	local suite d k=0 o t b64 diff first='' f
	suite=$(basename "${BATS_TEST_FILENAME:-x}" .bats)
	d=$PC_REPRO_DIR/$suite-${BATS_SUITE_TEST_NUMBER:-$BATS_TEST_NUMBER}
	rm -rf "$d" && mkdir -p "$d/fixture/bin" || return 0
	if [[ -s $PC_T/mismatch ]]; then
		while IFS=$'\t' read -r o t b64; do
			k=$((k + 1))
			diff=$(base64 -d <<<"$b64")
			printf '%s\n' "$diff" >"$d/diff.$k.txt"
			cp "$o" "$d/expected.$k.json" 2>/dev/null
			cp "$t" "$d/got.$k.json" 2>/dev/null
			[[ -e $t.err ]] && cp "$t.err" "$d/stderr.$k.txt"
			[[ -n $first ]] || first=$(_pc_first_difference "$diff")
		done <"$PC_T/mismatch"
	fi
	if [[ -s $PC_T/failedcalls ]]; then
		IFS=$'\t' read -r o t <"$PC_T/failedcalls"
		[[ -n $first ]] || first=$(_pc_tracer_error "$o" "$t")
		cp "$t" "$d/stderr.failed-call.txt" 2>/dev/null
	fi
	grep -E '^pc\[[0-9]+\]: ' "$PC_LOG" | grep -v 'exit status\|: ready' >"$d/commands.txt"
	if [[ -s ${PC_TRACER_CMDLOG:-} ]]; then
		{ echo; echo "# the tracer's own commands, as the adapter ran them:"; cat "$PC_TRACER_CMDLOG"; } >>"$d/commands.txt"
	fi
	cp "$PC_LOG" "$d/test.log"
	cp "$PROBECHECK_ROOT"/fixtures/*.[ch] "$PROBECHECK_ROOT"/fixtures/*.mk "$PROBECHECK_ROOT"/fixtures/README.md \
		"$d/fixture/" 2>/dev/null
	for f in $(grep -oE "$PC_FIXTURES/[A-Za-z0-9_.-]+" "$d/commands.txt" | sort -u); do
		[[ -f $f ]] && cp "$f" "$d/fixture/bin/"
	done
	{
		echo "test:     $suite: $BATS_TEST_DESCRIPTION"
		echo "tracer:   $PC_TRACER ($("$PC_TRACERS_DIR/$PC_TRACER" version 2>/dev/null | head -n 1))"
		echo "kernel:   $(uname -r)"
		echo "date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "first difference: ${first:-(no event comparison failed: see test.log)}"
		echo
		echo "commands.txt has the commands; expected.K.json is what the fixture itself logged"
		echo "(one JSON line per probe hit), got.K.json what the tracer printed."
	} >"$d/README.txt"
	[[ -n $first ]] && printf '%s\n' "$first" >"$d/first-difference.txt"
	return 0
}
