# results.bash — synthetic results for the tests of the reporting module
# (suites/matrix.bats, suites/report.bats; suites/features.bats for a
# capability's way into RESULTS.md): host results, matrix and kernel
# directories, TAP as bats prints it, a kernel-issues list of their own.
#
# Loaded after helpers/common.  Every builder writes what the real runner
# writes (harness/run/run-suites, run-unit, vm-run, matrix), no more.

report() { "$PROBECHECK_ROOT/harness/report/report" "$@"; }

# hsuite D SUITE [STATUS]: SUITE's TAP (stdin) in a host results directory
# D (make check's layout), with its suites.tsv row.
hsuite() {
	local st
	mkdir -p "$1"
	[[ -f $1/suites.tsv ]] || printf 'suite\tpass\tfail\tskip\tseconds\tbats_status\tkernel\n' >"$1/suites.tsv"
	cat >"$1/$2.tap"
	: >"$1/$2.harness"
	st=${3:-$(grep -q '^not ok' "$1/$2.tap" && echo 1 || echo 0)}
	printf '%s\t-\t-\t-\t2\t%s\t-\n' "$2" "$st" >>"$1/suites.tsv"
}

# The tests judge against their own list (set by results_setup), so a
# change of ci/kernel-issues cannot change what they expect.  It names
# tests by ID (docs/testing.md): the synthetic tests that must match an
# entry have one ("s.red-zone: red zone"), the others need none.
results_issues() {
	cat >"$BATS_TEST_TMPDIR/kernel-issues" <<-'EOF'
		# a comment
		id: K1
		symptom: redzone-call
		title: the red zone is overwritten: after the first hit
		tests: s.* integrity.*
		affected: 6.18 .. 7.2
		fixed: 7.3

		id: K2
		symptom: fork-trampoline
		title: a forked child dies
		  at its first hit
		tests: s.fork-*

		id: K3
		symptom: detach-kill-leak
		title: SIGKILL mid-detach leaks the uprobe
		tests: detachkill.*
	EOF
	export PROBECHECK_KERNEL_ISSUES=$BATS_TEST_TMPDIR/kernel-issues
}

# kern M NAME VERDICT: kernel NAME (row, caps, empty kernel log) in matrix M.
kern() {
	mkdir -p "$1/$2/results/r1"
	[[ -f $1/kernels.tsv ]] ||
		printf 'name\tspec\tverdict\twhy\tboot_s\twall_s\trelease\n' >"$1/kernels.tsv"
	printf '%s\tspec-%s\t%s\twhy-%s\t4\t100\trel-%s\n' "$2" "$2" "$3" "$2" "$2" >>"$1/kernels.tsv"
	printf 'uprobe_pmu=1\ntracefs=1\nuprobe_multi=0\nuprobe_multi_why=not here\nprobe_nop10=1\n' >"$1/$2/caps"
	echo "$3" >"$1/$2/verdict"
	echo "why-$2" >"$1/$2/verdict.why"
	echo "spec-$2" >"$1/$2/spec"
	: >"$1/$2/kernel-findings.txt"
	echo 1 >"$1/wall_s"
	echo abc1234 >"$1/commit"
}

# suite M NAME SUITE [STATUS]: SUITE's TAP (stdin) on kernel NAME, in the
# guest layout (results/r1/SUITE/), with the suites.tsv row run-suites
# writes in a guest (no counts) and bats' exit status (default: 1 if the
# TAP has a "not ok", else 0).
suite() {
	local d=$1/$2/results/r1/$3 st
	mkdir -p "$d"
	cat >"$d/$3.tap"
	: >"$d/$3.harness"
	st=${4:-$(grep -q '^not ok' "$d/$3.tap" && echo 1 || echo 0)}
	printf 'suite\tpass\tfail\tskip\tseconds\tbats_status\tkernel\n%s\t-\t-\t-\t1\t%s\t-\n' \
		"$3" "$st" >"$d/suites.tsv"
}

# unit M NAME BIN STATUS: a unit binary's TAP (stdin) and exit status.
unit() {
	cat >"$1/$2/results/unit-$3.tap"
	echo "$4" >"$1/$2/results/unit-$3.status"
}

# sym N NAME SLUG [FUNC]: a "not ok" block as bats prints a test that
# failed in pc_kernel_symptom SLUG (FUNC: the innermost frame of its stack
# trace; "-" for the test body itself).  The symptom line comes twice, as
# from the failure and from the test's log.
sym() {
	local fn=${4:-pc_kernel_symptom}
	printf 'not ok %s %s # in 12 ms\n' "$1" "$2"
	if [[ $fn == - ]]; then
		printf '# (in test file suites/s.bats, line 9)\n'
		printf "#   \`false' failed\n"
	else
		printf "# (from function \`%s' in file suites/helpers/common.bash, line 444,\n" "$fn"
		printf '#  in test file suites/s.bats, line 9)\n'
		printf "#   \`%s %s \"...\"' failed\n" "$fn" "$3"
	fi
	printf '# kernel-symptom: %s: evidence of %s\n' "$3" "$2"
	printf '# # ---- probecheck log of this test ----\n'
	printf '# test: %s (PC_TAG=x/1)\n' "$2"
	printf '# kernel-symptom: %s: evidence of %s\n' "$3" "$2"
}

# section TEXT HEADING: the lines of TEXT under "### HEADING" (or "## ")
# up to the next heading of that level or above.
section() {
	awk -v h="$2" '
		$0 == "### " h || $0 == "## " h { on = 1; lvl = index($0, " "); next }
		on && /^#+ / && index($0, " ") <= lvl { on = 0 }
		on' <<<"$1"
}
