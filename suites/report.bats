#!/usr/bin/env bats
# report.bats — the reporting module (harness/report/report) on synthetic results:
# what makes a failed test the kernel finding "kernel: ID" and what keeps
# it a plain failure, what a run says about each listed problem, make
# check's exit status and closing block, RESULTS.md's findings section,
# the kernel log patterns, and the runners' and VM runner's use of it.
# Every rule is checked against a result it must get right both ways: a
# rule that stopped holding would misreport a kernel bug as a pass or a
# tracer bug as the kernel's.  The matrix is matrix.bats'.
#
# The module needs python3, which guests do not have: there their results
# are judged on the host, and this suite skips.
#
# bats file_tags=harness

load helpers/common
load helpers/results
PC_REQUIRES=(cmd:python3)

# cls D SUITE TEST: the outcome cell and reason report classify gives.
cls() {
	report classify "$1" | awk -F'\t' -v s="$2" -v t="$3" '$1 == s && $2 == t { print $3 "|" $4 }'
}

@test "report.classify-kernel: classify: a failure in pc_kernel_symptom with a listed slug, listed for the test, is 'kernel: ID'" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	hsuite "$d" s < <(printf '1..3\nok 1 fine # in 3 ms\n'; sym 2 "s.red-zone: red zone" redzone-call; sym 3 "s.fork-child: fork child" fork-trampoline)
	assert_equal "$(cls "$d" s "s.red-zone: red zone")" "kernel: K1|"
	assert_equal "$(cls "$d" s "s.fork-child: fork child")" "kernel: K2|"
	assert_equal "$(cls "$d" s fine)" "pass|"
	# ... called from a helper: the innermost frame is still pc_kernel_symptom
	hsuite "$d" integrity < <(printf '1..1\n'; sym 1 "integrity.nested-call: nested" redzone-call | sed '2a #  from function `helper'"'"' in file suites/integrity.bats, line 4,')
	assert_equal "$(cls "$d" integrity "integrity.nested-call: nested")" "kernel: K1|"
}

@test "report.classify-unlisted-test: classify: the same symptom from a test the entry does not list stays FAIL" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	hsuite "$d" other < <(printf '1..1\n'; sym 1 "other.red-zone: red zone" redzone-call)
	hsuite "$d" s < <(printf '1..1\n'; sym 1 "s.not-fork: not a fork test" fork-trampoline)
	assert_equal "$(cls "$d" other "other.red-zone: red zone")" "FAIL|symptom 'redzone-call' not listed for this test"
	assert_equal "$(cls "$d" s "s.not-fork: not a fork test")" "FAIL|symptom 'fork-trampoline' not listed for this test"
	# a test without an ID is named by no entry
	hsuite "$d/noid" s < <(printf '1..1\n'; sym 1 "red zone" redzone-call)
	assert_equal "$(cls "$d/noid" s "red zone")" "FAIL|symptom 'redzone-call' not listed for this test"
}

@test "report.classify-unlisted-slug: classify: a slug no entry lists stays FAIL" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	hsuite "$d" s < <(printf '1..1\n'; sym 1 mystery new-kernel-bug)
	assert_equal "$(cls "$d" s mystery)" "FAIL|unlisted kernel symptom 'new-kernel-bug'"
}

@test "report.classify-leftovers: classify: a symptom plus a cleanup violation stays FAIL" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	hsuite "$d" s < <(printf '1..1\n'; sym 1 leaky redzone-call
		printf '# -- cleanup invariants violated after the test --\n# uprobe of ours left: p:probecheck/x\n# --\n')
	assert_equal "$(cls "$d" s leaky)" "FAIL|symptom 'redzone-call' plus leftovers (cleanup invariants violated)"
}

@test "report.classify-elsewhere: classify: a test that failed elsewhere but printed a symptom line stays FAIL" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	hsuite "$d" s < <(printf '1..2\n'; sym 1 body redzone-call -; sym 2 helper redzone-call pc_check_clean)
	assert_equal "$(cls "$d" s body)" "FAIL|kernel symptom 'redzone-call' printed, but the test failed elsewhere"
	assert_equal "$(cls "$d" s helper)" "FAIL|kernel symptom 'redzone-call' printed, but the test failed elsewhere"
}

@test "report.classify-several-slugs: classify: several slugs name every id; one unlisted slug among them keeps it FAIL; a timeout is FAIL" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	hsuite "$d" s < <(printf '1..3\n'
		sym 1 "s.fork-both: fork both" fork-trampoline | sed '$a # kernel-symptom: redzone-call: also'
		sym 2 "s.fork-half: fork half" fork-trampoline | sed '$a # kernel-symptom: mystery: also'
		sym 3 "fork slow" fork-trampoline | sed '1s/ # in 12 ms$/ # timeout after 300s/')
	assert_equal "$(cls "$d" s "s.fork-both: fork both")" "kernel: K1, K2|"
	assert_equal "$(cls "$d" s "s.fork-half: fork half")" "FAIL|unlisted kernel symptom 'mystery'"
	assert_equal "$(cls "$d" s "fork slow")" "FAIL|timeout after 300s"
}

@test "report.classify-real-tap: classify: the TAP bats really prints for pc_kernel_symptom is recognised, a failure elsewhere is not" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	mkdir -p "$d/junit"
	# (Built with printf: bats would take an "@test" line in a heredoc here
	# for one of this file's tests.)
	{
		printf 'load "%s/suites/helpers/common"\n' "$PROBECHECK_ROOT"
		printf '%stest "integrity.planted-symptom: red zone" {\n' @
		printf '\tpc_kernel_symptom redzone-call "fxint pid 1 hit 2: red zone -8 differs" "second line"\n}\n'
		printf '%stest "integrity.planted-subshell: fails after a symptom in a subshell" {\n' @
		printf '\t( pc_kernel_symptom redzone-call "ev" ) || true\n\tfalse\n}\n'
	} >"$BATS_TEST_TMPDIR/integrity.bats"
	# A clean environment: bats' own variables, and its libexec first in
	# PATH, would steer the inner run; no fd 3 (the outer run's TAP stream).
	# Run-suites' scope is kept: beside other suites the inner tests judge
	# only this suite's objects (without it, another suite's uprobes made
	# the planted symptom "plus leftovers", 2026-11-27).
	local -a scope=()
	local v
	for v in PROBECHECK_PARALLEL PROBECHECK_SUITE_DIR PROBECHECK_FIXTURES PROBECHECK_STASH \
		PROBECHECK_RUN_DIR PROBECHECK_CAPS TMPDIR; do
		if [[ -n ${!v:-} ]]; then scope+=("$v=${!v}"); fi
	done
	st=0
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$HOME" PROBECHECK_ROOT="$PROBECHECK_ROOT" PROBECHECK_BUILD="$PROBECHECK_BUILD" \
		"${scope[@]}" PC_RUN_TAG="$PC_TAG/nested" \
		bats --tap --print-output-on-failure --report-formatter junit --output "$d/junit" \
		"$BATS_TEST_TMPDIR/integrity.bats" >"$BATS_TEST_TMPDIR/inner.tap" 2>&1 3>&- || st=$?
	assert_equal "$st" 1
	hsuite "$d" integrity 1 <"$BATS_TEST_TMPDIR/inner.tap"
	assert_equal "$(cls "$d" integrity "integrity.planted-symptom: red zone")" "kernel: K1|"
	assert_equal "$(cls "$d" integrity "integrity.planted-subshell: fails after a symptom in a subshell")" \
		"FAIL|kernel symptom 'redzone-call' printed, but the test failed elsewhere"
}

# findings_run D: a host results directory where K1 reproduces (s), K2's
# test passes (s.fork-ok), K3's tests all skip (detachkill).
findings_run() {
	hsuite "$1" s < <(printf '1..3\n'; sym 1 "s.red-zone: red zone" redzone-call; printf 'ok 2 s.fork-ok: fork ok\nok 3 fine\n')
	hsuite "$1" detachkill <<<$'1..2\nok 1 detachkill.perf-round: perf # skip requires uprobe_pmu: no PMU\nok 2 detachkill.tracefs-round: tracefs # skip requires tracefs: not mounted'
	mkdir -p "$1/run"
	echo 6.18.44-test >"$1/run/kernel"
	: >"$1/run/kernel-findings.txt"
}

@test "report.check-findings: check: every failure a listed finding: exit 0, the findings printed, reproduced, not reproduced, not tested" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	findings_run "$d"
	run -0 report check --status run-unit=0 --status run-suites=0 --status run-valgrind=0 "$d"
	assert_line "probecheck: kernel findings on 6.18.44-test (ci/kernel-issues)"
	assert_line "  KERNEL K1 reproduced by 1 test: the red zone is overwritten"
	assert_line "    s.red-zone: red zone"
	assert_line "      redzone-call: evidence of s.red-zone: red zone"
	assert_line "  not reproduced: K2 (1 test passed)"
	assert_line "  not tested: K3 (skipped: requires uprobe_pmu: no PMU; requires tracefs: not mounted)"
	assert_line "probecheck: 2 passed, 0 failed, 2 skipped, 1 kernel"
	assert_line "probecheck: make check PASSED: every failure is a listed kernel finding (above)"
	refute_line --partial "kernel log:"
	printf 'WARNING: CPU: 1 PID: 7 at kernel/events/uprobes.c:1\n' >"$d/run/kernel-findings.txt"
	run -0 report check "$d"
	assert_line "  kernel log: 1 report while the suites ran (build/results/DETAILS.md, Kernel log)"
	# not run at all: not tested either
	rm "$d/detachkill.tap"
	sed -i '/^detachkill/d' "$d/suites.tsv"
	run -0 report check "$d"
	assert_line "  not tested: K3 (none of its tests ran)"
}

@test "report.check-not-reproduced: check: an entry whose tests all reproduced other findings is 'not reproduced'; one plain failure among them makes it 'not tested'" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	# K2's only test (s: fork ...) ran to its verdict and saw the red zone
	# (K1), not the fork symptom: K2 did not reproduce.
	hsuite "$d" s < <(printf '1..1\n'; sym 1 "s.fork-child: fork child" redzone-call)
	mkdir -p "$d/run"; echo 6.18.44-test >"$d/run/kernel"; : >"$d/run/kernel-findings.txt"
	run -0 report check "$d"
	assert_line "  KERNEL K1 reproduced by 1 test: the red zone is overwritten"
	assert_line "  not reproduced: K2 (its 1 test reproduced only K1)"
	# the same with a plain failure of another K2 test: K2 is not tested
	printf 'not ok 2 s.fork-broken: fork broken\n' >>"$d/s.tap"
	sed -i 's/^1..1$/1..2/' "$d/s.tap"
	run -1 report check "$d"
	assert_line --partial "  not tested: K2 (its 2 tests failed otherwise)"
}

@test "report.check-failures: check: a plain failure, a test never reported, a runner failure, a bats error, a unit binary or valgrind: exit 1" {
	results_issues
	for what in plain missing harness bats unit valgrind nosuites runner; do
		d=$BATS_TEST_TMPDIR/$what
		findings_run "$d"
		st=()
		case $what in
		plain) hsuite "$d" u <<<$'1..1\nnot ok 1 broken' ;;
		missing) hsuite "$d" u <<<$'1..2\nok 1 first' ;;
		harness) printf 'fail\tsuite timed out after 1800s\n' >"$d/s.harness" ;;
		bats) hsuite "$d" u 1 <<<$'1..1\nok 1 fine' ;;
		unit) printf '1..2\nok 1 a\n' >"$d/unit-test_x.tap"; echo 0 >"$d/unit-test_x.status" ;;
		valgrind) st=(--status run-valgrind=1) ;;
		nosuites) rm "$d/suites.tsv" ;;
		runner) st=(--status run-suites=2) ;;
		esac
		run -1 report check "${st[@]}" "$d"
		assert_line --partial "probecheck: make check FAILED"
		assert_line "  KERNEL K1 reproduced by 1 test: the red zone is overwritten"
	done
	run -1 report check "$BATS_TEST_TMPDIR/plain"
	assert_line "  u: broken"
	run -1 report check "$BATS_TEST_TMPDIR/missing"
	assert_line "  u: 1 planned test(s) never reported (crash or kill)"
	run -1 report check "$BATS_TEST_TMPDIR/bats"
	assert_line "  u: (harness) bats exited with status 1 and no failed test (1 of 1 results)"
	run -1 report check "$BATS_TEST_TMPDIR/unit"
	assert_line "  unit test_x: plan says 2 checks, 1 ran"
	run -1 report check --status run-valgrind=1 "$BATS_TEST_TMPDIR/valgrind"
	assert_line "  run-valgrind exited with status 1"
}

@test "report.results-findings-first: results --full: the full document (DETAILS.md) opens with the kernel findings (id, title, outcome, tests, evidence), then the suites with a kernel column" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	findings_run "$d"
	hsuite "$d" u < <(printf '1..1\n'; sym 1 "tracer bug" mystery)
	printf 'valgrind: 6 of 6 runs clean\n' >"$d/valgrind.txt"
	run -0 report results --full "$d" 75
	# the first section after the header lines
	assert_equal "$(grep -m1 '^## ' <<<"$output")" "## Kernel findings"
	assert_line "- Wall time: 1m 15s"
	assert_line "- Valgrind: 6 of 6 runs clean"
	assert_line --partial "- Kernel log during the suites: clean (dmesg lines printed while the suites ran"
	f=$(section "$output" "Kernel findings")
	grep -qxF '**Reproduced on `6.18.44-test`: K1.**' <<<"$f" || fail "no reproduced line: $f"
	grep -qxF '| K1 | the red zone is overwritten | **reproduced** (by 1 test) |' <<<"$f" || fail "K1 row: $f"
	grep -qxF '| K2 | a forked child dies at its first hit | not reproduced (1 test passed) |' <<<"$f" || fail "K2 row: $f"
	grep -qF '| K3 | SIGKILL mid-detach leaks the uprobe | not tested (skipped: ' <<<"$f" || fail "K3 row: $f"
	grep -qxF '  - s.red-zone: red zone' <<<"$f" || fail "no test under K1: $f"
	grep -qxF '    - `redzone-call: evidence of s.red-zone: red zone`' <<<"$f" || fail "no evidence under K1: $f"
	grep -qxF -- '- Fixed: 7.3' <<<"$f" || fail "no fix under K1: $f"
	assert_line '| suite | passed | failed | skipped | kernel | time |'
	assert_line '| s | 2 | 0 | 0 | 1 | 2s |'
	assert_line '2 passed, 1 failed, 2 skipped, 1 kernel'
	assert_line "- u: tracer bug (unlisted kernel symptom 'mystery')"
	# with a matrix: a column per kernel
	m=$BATS_TEST_TMPDIR/m
	kern "$m" old PASS
	suite "$m" old s <<<$'1..1\nok 1 s.red-zone: red zone'
	run -0 report results --full "$d" 75 "$m"
	f=$(section "$output" "Kernel findings")
	grep -qxF '| K1 | the red zone is overwritten | **reproduced** (by 1 test) | not reproduced (1 test passed) |' <<<"$f" ||
		fail "K1 row with the matrix: $f"
	grep -qxF '| id | title | this run (`6.18.44-test`) | old |' <<<"$f" || fail "header with one matrix: $f"
	assert_line "## Kernel matrix"
	# two matrices running one kernel: each column names its directory
	kern "$BATS_TEST_TMPDIR/m2" old PASS
	suite "$BATS_TEST_TMPDIR/m2" old s <<<$'1..1\nok 1 s.red-zone: red zone'
	run -0 report results --full "$d" 75 "$m" "$BATS_TEST_TMPDIR/m2"
	f=$(section "$output" "Kernel findings")
	grep -qxF '| id | title | this run (`6.18.44-test`) | old (m) | old (m2) |' <<<"$f" ||
		fail "header with two matrices: $f"
	# a matrix that cannot be read is named with the reason; the rest is written
	mkdir -p "$BATS_TEST_TMPDIR/bad" && echo 'not a header' >"$BATS_TEST_TMPDIR/bad/kernels.tsv"
	run -0 --separate-stderr report results --full "$d" 75 "$BATS_TEST_TMPDIR/bad"
	assert_line "\`$BATS_TEST_TMPDIR/bad\` could not be read: '$BATS_TEST_TMPDIR/bad/kernels.tsv': unexpected header (not written by harness/kernels/matrix?)"
	assert_line '| s | 2 | 0 | 0 | 1 | 2s |'
	# no dmesg scan: it says so
	rm "$d/run/kernel-findings.txt"
	run -0 report results --full "$d" 75
	assert_line "- Kernel log during the suites: not scanned (no suite ran, or dmesg was not readable)"
}

# one_page_inputs D: a host run (K1 reproduced, one plain failure), a
# matrix of this commit (old: K1 not reproduced; bad: FAIL), one of another
# commit, a conformance run of this commit (bt fails two tests, one that
# probecheck passes), and the commit of each.
one_page_inputs() {
	local d=$1
	results_issues
	findings_run "$d/r"
	hsuite "$d/r" u < <(printf '1..1\n'; sym 1 "u.x: tracer bug" mystery)
	printf 'uprobe_pmu=1\ntracefs=1\nuprobe_multi=1\n' >"$d/r/run/caps"
	echo abc1234 >"$d/r/run/commit"
	printf 'valgrind: 6 of 6 runs clean\n' >"$d/r/valgrind.txt"
	kern "$d/m" old PASS
	suite "$d/m" old s <<<$'1..2\nok 1 s.red-zone: red zone\nok 2 s.fork-ok: fork ok'
	kern "$d/m" bad FAIL
	suite "$d/m" bad s <<<$'1..1\nnot ok 1 s.red-zone: red zone'
	kern "$d/m-old" ancient PASS
	echo 0ld0ld0 >"$d/m-old/commit"
	mkdir -p "$d/c/claims" "$d/c/bt/repro/arguments-2"
	echo abc1234 >"$d/c/commit"
	printf 'probecheck\t0\t10\tprobecheck abc\nbt\t1\t20\tbpftrace v0.17.0\n' >"$d/c/tracers.tsv"
	printf 'usdt yes\n' | tee "$d/c/claims/probecheck" >"$d/c/claims/bt"
	hsuite "$d/c/probecheck" arguments <<<$'1..3\nok 1 arguments.a-a: a\nnot ok 2 arguments.b-b: b\nok 3 arguments.c-c: c'
	hsuite "$d/c/bt" arguments <<<$'1..3\nnot ok 1 arguments.a-a: a\n# oracle and trace differ\nnot ok 2 arguments.b-b: b\nok 3 arguments.c-c: c'
	echo 'expected {"args":[1]}; got {"args":[2]}' >"$d/c/bt/repro/arguments-2/first-difference.txt"
}

@test "report.results-one-page: results: RESULTS.md answers on one page: verdict, kernels x findings, capabilities, tracers with their top failures and reproducers, failures, where the details are" {
	local d=$BATS_TEST_TMPDIR s
	one_page_inputs "$d"
	# a directory inside the checkout is named relative to it (make check's)
	s=${d#"$PROBECHECK_ROOT"/}
	run -0 report results "$d/r" 75 "$d/m" "$d/m-old" "$d/c"
	(( ${#lines[@]} <= 200 )) || fail "${#lines[@]} lines"
	# the answer in the first screen: the verdict and the findings grid
	head -n 40 <<<"$output" | grep -qxF '| `6.18.44-test` (this run) | **R** | no | - |' ||
		fail "no findings row in the first 40 lines: $(head -n 40 <<<"$output")"
	assert_equal "$(grep '^## ' <<<"$output" | xargs)" \
		"## Verdict ## Kernels × findings ## Kernels × capabilities ## Tracers ## Failures of this run ## Where the details are"
	assert_line --partial '**FAIL**: `make check` on `6.18.44-test`, commit `abc1234`, 1m 15s: 2 passed, 1 failed, 2 skipped, 1 reproduced a listed kernel finding (K1); 0 of 0 unit binaries passed; valgrind 6 of 6 runs clean; kernel log: clean.'
	assert_line "- Kernel matrix \`$s/m\` (commit \`abc1234\`): old PASS, bad FAIL"
	assert_line "- Tracers \`$s/c\` (commit \`abc1234\`): probecheck 2 pass, 1 FAIL; bt 1 pass, 2 FAIL"
	f=$(section "$output" "Kernels × findings")
	grep -qxF '| kernel | K1 | K2 | K3 |' <<<"$f" || fail "header: $f"
	grep -qxF '| old `rel-old` | no | no | - |' <<<"$f" || fail "old: $f"
	grep -qxF '| bad `rel-bad` | fail | - | - |' <<<"$f" || fail "bad: $f"
	grep -qxF -- '- **K1** the red zone is overwritten. Fixed: 7.3' <<<"$f" || fail "K1 line: $f"
	f=$(section "$output" "Kernels × capabilities")
	grep -qxF '| capability | this run | old | bad |' <<<"$f" || fail "caps header: $f"
	grep -qxF '| uprobe_multi | yes | no | no |' <<<"$f" || fail "caps row: $f"
	grep -qxF '| probe_nop10 | - | yes | yes |' <<<"$f" || fail "a cap the host did not probe: $f"
	f=$(section "$output" "Tracers")
	grep -qxF '| bt | bpftrace v0.17.0 | 1 | 2 | 0 | 0 | arguments.a-a, arguments.b-b |' <<<"$f" || fail "bt row: $f"
	# bt's own failure (probecheck passes it) ranks before the shared one
	assert_equal "$(grep '^- bt' <<<"$f")" "- bt · arguments.a-a: oracle and trace differ · no reproducer
- bt · arguments.b-b: expected {\"args\":[1]}; got {\"args\":[2]} · [reproducer]($s/c/bt/repro/arguments-2/)"
	f=$(section "$output" "Failures of this run")
	grep -qxF -- "- u: u.x: tracer bug (unlisted kernel symptom 'mystery')" <<<"$f" || fail "host failure: $f"
	grep -qxF -- "- bad ($s/m): FAIL: s: 0 passed, 1 failed, 0 skipped, 0 kernel (s.red-zone)" <<<"$f" || fail "kernel failure: $f"
	f=$(section "$output" "Where the details are")
	grep -qxF -- "- Not shown, run at another commit: \`$s/m-old\` (commit \`0ld0ld0\`)." <<<"$f" || fail "older matrix: $f"
	grep -qF 'ancient' <<<"$output" && fail "a matrix of another commit is shown"
	# deterministic: the same files, the same bytes but the date line
	local one=$output
	run -0 report results "$d/r" 75 "$d/m" "$d/m-old" "$d/c"
	assert_equal "$(grep -v '^Generated by' <<<"$output")" "$(grep -v '^Generated by' <<<"$one")"
	# still one page with every kernel of ci/kernels and many failures
	local k i
	for k in $(seq 12); do kern "$d/m" "k$k" PASS; done
	hsuite "$d/r" v < <(echo 1..40; for i in $(seq 40); do echo "not ok $i v.f-$i: f"; done)
	run -0 report results "$d/r" 75 "$d/m" "$d/m-old" "$d/c"
	(( ${#lines[@]} <= 200 )) || fail "${#lines[@]} lines with 14 kernels and 41 failures"
	assert_line '| k12 `rel-k12` | - | - | - |'
	assert_line '- ... 30 more: DETAILS.md, "Failures"'
}

# us_tap ID STATUS [DIAG...]: a ustack result line, DIAG its "#" lines.
us_tap() {
	local id=$1 st=$2
	shift 2
	printf '%s %s %s: x # in 5 ms\n' "$st" "$((++US_N))" "$id"
	(($#)) && printf '# %s\n' "$@"
	return 0
}

@test "report.results-stacks: results: the User stacks grid, a row per run, kernel and tracer: exact, short (counted from the tests' fd 3 lines), a listed finding, wrong, unresolved, failed, not run, each non-exact cell's first difference" {
	local d=$BATS_TEST_TMPDIR f
	one_page_inputs "$d"
	printf '\nid: K9\nsymptom: uretprobe-stack-trampoline\ntitle: the trampoline in stacks\ntests: ustack.pending-*\n' \
		>>"$BATS_TEST_TMPDIR/kernel-issues"
	US_N=0
	hsuite "$d/r" ustack < <(echo 1..3
		echo '# ustack.usdt-exact stacks: stackcmp: 3 events: 3 exact, 0 short, 0 wrong, 0 without an oracle stack; 0 frames not symbolized'
		us_tap ustack.usdt-exact ok
		echo '# ustack.no-frame-pointers stacks: stackcmp: 4 events: 1 exact, 3 short, 0 wrong, 0 without an oracle stack; 0 frames not symbolized'
		us_tap ustack.no-frame-pointers ok
		echo '# ustack.depth-limit stacks: stackcmp: 2 events: 0 exact, 2 short, 0 wrong, 0 without an oracle stack; 0 frames not symbolized'
		us_tap ustack.depth-limit ok)
	US_N=0
	suite "$d/m" old ustack < <(echo 1..2
		printf 'not ok 1 ustack.pending-returns: x # in 5 ms\n'
		printf "# (from function \`pc_kernel_symptom' in file suites/helpers/common.bash, line 444,\n#  in test file suites/ustack.bats, line 9)\n"
		printf "#   \`pc_kernel_symptom uretprobe-stack-trampoline \"...\"' failed\n# kernel-symptom: uretprobe-stack-trampoline: wrong frame 2 in [uprobes]\n"
		US_N=1
		us_tap ustack.thread-chain 'not ok' 'fs:deep (pid 1 tid 2, trace line 1): wrong frame 1: 0x10 (tracer: fs_a) is in fs_a, wanted fs_b')
	US_N=0
	hsuite "$d/c/bt" ustack < <(echo 1..3
		us_tap ustack.usdt-exact 'not ok' 'fs:deep (pid 1 tid 1, trace line 1): frame 0: 0x10 (in fs_c) not symbolized'
		us_tap ustack.library-chain 'not ok' 'oraclecmp: MISMATCH: 1 events match, 2 missing, 0 unexpected (oracle 3, trace 1)'
		# the next test's count line, printed before its result: among
		# this failure's lines, it says nothing of it
		echo '# ustack.thread-chain stacks: stackcmp: 6 events: 6 exact, 0 short, 0 wrong, 0 without an oracle stack; 24 frames not symbolized'
		printf 'ok 3 ustack.short-lived: x # skip tracer bt does not claim follow\n')
	run -0 report results "$d/r" 75 "$d/m" "$d/c"
	f=$(section "$output" "User stacks")
	grep -qxF '| `6.18.44-test` (this run) | exact | - | - | - | - | - | - | - | short | exact | - | - |' <<<"$f" || fail "this run: $f"
	grep -qxF '| old `rel-old` | - | - | - | **K9** | - | **wrong** | - | - | - | - | - | - |' <<<"$f" || fail "old: $f"
	grep -qxF '| tracer bt | **unres** | - | - | - | **fail** | - | - | - | - | - | - | - |' <<<"$f" || fail "bt: $f"
	grep -qF 'tracer probecheck' <<<"$f" && fail "a tracer with no ustack run has a row: $f"
	grep -qxF -- '- old `rel-old` · thread: fs:deep (pid 1 tid 2, trace line 1): wrong frame 1: 0x10 (tracer: fs\_a) is in fs\_a, wanted fs\_b' <<<"$f" ||
		grep -qxF -- '- old `rel-old` · thread: fs:deep (pid 1 tid 2, trace line 1): wrong frame 1: 0x10 (tracer: fs_a) is in fs_a, wanted fs_b' <<<"$f" || fail "evidence: $f"
	grep -qxF -- '- tracer bt · library: oraclecmp: MISMATCH: 1 events match, 2 missing, 0 unexpected (oracle 3, trace 1)' <<<"$f" || fail "bt evidence: $f"
	# no ustack run anywhere: no section (report.results-one-page)
}

@test "report.results-fuzz: results: make fuzz's table becomes the Fuzzing section (a row per target, the total); none without it; a foreign file is named, not fatal" {
	d=$BATS_TEST_TMPDIR/r
	hsuite "$d" s <<<$'1..1\nok 1 fine'
	run -0 report results --full "$d" 10
	refute_line "## Fuzzing"
	{
		printf '# make fuzz FUZZ_S=120\t2026-01-02 03:04 UTC\tDebian clang version 14.0.6\n'
		printf 'target\tseconds\texecs\texecs_per_s\tcov\tft\tcorpus\tcrashes\n'
		printf 'note\t120\t1800000\t15000\t342\t1439\t465\t0\n'
		printf 'spec\t120\t12000000\t100000\t242\t1144\t2289\t1\n'
	} >"$d/fuzz.tsv"
	run -0 report results --full "$d" 10
	f=$(section "$output" "Fuzzing")
	grep -qF '`make fuzz FUZZ_S=120` (Debian clang version 14.0.6, libFuzzer with ASan and UBSan, leaks detected), 2026-01-02 03:04 UTC: 2 targets, 13800000 execs, 1 crash.' <<<"$f" ||
		fail "caption: $f"
	grep -qxF '| note | 120 | 1800000 | 15000 | 342 | 0 |' <<<"$f" || fail "note row: $f"
	grep -qxF '| spec | 120 | 12000000 | 100000 | 242 | 1 |' <<<"$f" || fail "spec row: $f"
	grep -qxF '| **total** | **240** | **13800000** | 57500 | | **1** |' <<<"$f" || fail "total: $f"
	assert_line '| s | 1 | 0 | 0 | 0 | 2s |'
	printf 'not a header\n' >"$d/fuzz.tsv"
	run -0 report results --full "$d" 10
	assert_line "\`$d/fuzz.tsv\` could not be read: unexpected header (not written by harness/run/fuzz?)"
	assert_line '| s | 1 | 0 | 0 | 0 | 2s |'
}

@test "report.results-cost: results: make bench's figures become the Cost section (a row per figure, a column per kernel, TCG said); none without them; a foreign file is named, not fatal" {
	d=$BATS_TEST_TMPDIR/r
	hsuite "$d" s <<<$'1..1\nok 1 fine'
	run -0 report results --full "$d" 10
	refute_line "## Cost"
	mkdir -p "$d/bench"
	bench_row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@"; }
	{
		bench_row kernel figure tracer path kind value unit note
		bench_row 6.18.44 hit probecheck multi usdt_nop5 11.70 'x syscall' '2025 ns/hit'
		bench_row 6.18.44 detach probecheck perf '100 sites' 130.713 ms/site '13071 ms in all'
	} >"$d/bench/host.tsv"
	printf 'kernel=6.18.44\ndate=2026-01-02 03:04 UTC\naccel=host\n' >"$d/bench/host.meta"
	{
		bench_row kernel figure tracer path kind value unit note
		bench_row 5.10.0 hit probecheck multi usdt_nop5 '' '' 'not measured: no uprobe_multi'
		bench_row 5.10.0 hit probecheck perf usdt 30.5 'x syscall' ''
	} >"$d/bench/debian-5.10-cloud.tsv"
	printf 'kernel=5.10.0\ndate=2026-01-02 04:05 UTC\naccel=TCG: ratios only, ns mean nothing\n' >"$d/bench/debian-5.10-cloud.meta"
	run -0 report results --full "$d" 10
	f=$(section "$output" "Cost")
	grep -qF 'host 2026-01-02 03:04 UTC; debian-5.10-cloud 2026-01-02 04:05 UTC.' <<<"$f" || fail "caption: $f"
	grep -qxF '| figure | tracer | path | kind | unit | host 6.18.44 | debian-5.10-cloud 5.10.0 (TCG: ratios only) |' <<<"$f" ||
		fail "header: $f"
	grep -qxF '| hit | probecheck | multi | usdt_nop5 | x syscall | 11.70 | not measured |' <<<"$f" || fail "nop5 row: $f"
	grep -qxF '| hit | probecheck | perf | usdt | x syscall |  | 30.5 |' <<<"$f" || fail "a row only one kernel has: $f"
	grep -qxF '| detach | probecheck | perf | 100 sites | ms/site | 130.713 |  |' <<<"$f" || fail "detach row: $f"
	printf 'not a header\n' >"$d/bench/host.tsv"
	run -0 report results --full "$d" 10
	assert_line "The bench figures could not be read: '$d/bench/host.tsv': not a bench.tsv (header is not kernel figure tracer path kind value unit note)"
	assert_line '| s | 1 | 0 | 0 | 0 | 2s |'
}

@test "report.results-mutation: results: make mutate's rows become the Mutation testing section (score, counts, survivors, listed equivalents); without them the header says so; a foreign file is named, not fatal" {
	d=$BATS_TEST_TMPDIR/r
	hsuite "$d" s <<<$'1..1\nok 1 fine'
	run -0 report results --full "$d" 10
	assert_line '- Mutation score (`make mutate`): not run since this check'
	refute_line "## Mutation testing"
	{
		printf 'id\tfile\tline\tcol\tfunction\toperator\toriginal\treplacement\tverdict\tby\tseconds\tbefore\tafter\n'
		printf 'a1\tproviders/spec.c\t10\t5\tspec_num\tROR\t<\t<=\tkilled\tunit test_spec: not ok 3 x\t2\tif (a < b)\tif (a <= b)\n'
		printf 'a2\tproviders/elf.c\t20\t5\telf_x\tERR\t)\t, 0)\tkilled\tsuite badinput: a test\t30\tif (err)\tif (err, 0)\n'
		printf 'a3\tproviders/elf.c\t30\t5\telf_y\tOBO\t8\t9\tsurvived\tran: unit badinput\t40\tn < 8\tn < 9\n'
		printf 'a4\tproviders/note.c\t40\t5\tnote_z\tAOR\t+\t-\tstillborn\terror: x\t1\ta + b\ta - b\n'
		printf 'a5\tproviders/note.c\t50\t5\tnote_z\tSIGN\t(int)\t\tsame-code\tobject identical\t1\t(int)x\tx\n'
		printf 'a6\tproviders/note.c\t60\t5\tnote_w\tSIGN\t(__u32)\t\tequivalent\tthe field is __u32\t0\t(__u32)x\tx\n'
		printf 'a7\tproviders/bpf/pc.bpf.c\t70\t5\tfill\tROR\t<\t<=\ttimeout\tsuite arguments: timed out\t240\ti < n\ti <= n\n'
	} >"$d/mutate.tsv"
	printf 'seed: 3\nmutants: 7\nbudget: 240\ncommand: harness/run/mutate --mutants 7 --seed 3\nwall: 600\n' >"$d/mutate.txt"
	run -0 report results --full "$d" 10
	# 3 of 7 not scored (stillborn, same code, listed): 3 detected of 4
	assert_line '- Mutation score (`make mutate`): 75.0% (3 of 4 killed or timed out); see "Mutation testing"'
	m=$(section "$output" "Mutation testing")
	grep -qF '**Score: 75.0% (3 of 4 killed or timed out).**' <<<"$m" || fail "score: $m"
	grep -qxF '| 7 | 1 | 1 | 1 | 1 | 1 | 1 | 1 |' <<<"$m" || fail "counts: $m"
	grep -qxF -- '- `a3` providers/elf.c:30 `elf_y` OBO: `n < 8` → `n < 9`' <<<"$m" || fail "survivor: $m"
	grep -qxF -- '- `a6` providers/note.c:60 `note_w` SIGN: `(__u32)x` → `x` — the field is __u32' <<<"$m" || fail "equivalent: $m"
	grep -qF '`harness/run/mutate --mutants 7 --seed 3` (harness/run/mutate; seed 3, 240 s per mutant, wall time 10m 00s)' <<<"$m" ||
		fail "caption: $m"
	grep -qF 'Run at commit' <<<"$m" && fail "a commit no summary named: $m"
	# the commit the tree was copied at, and a rerun of survivors, are said
	printf 'seed: 3\ncommit: abc1234\ndate: 2026-11-26 05:58 UTC\nrerun: 1 survivors run again at def5678 on 2026-11-26 06:04 UTC\n' >"$d/mutate.txt"
	run -0 report results --full "$d" 10
	m=$(section "$output" "Mutation testing")
	grep -qF ' Run at commit `abc1234`, 2026-11-26 05:58 UTC. Then 1 survivors run again at def5678 on 2026-11-26 06:04 UTC.' <<<"$m" ||
		fail "commit and rerun: $m"
	assert_line '| s | 1 | 0 | 0 | 0 | 2s |'
	printf 'not a header\n' >"$d/mutate.tsv"
	run -0 report results --full "$d" 10
	assert_line "\`$d/mutate.tsv\` could not be read: '$d/mutate.tsv': no 'id' header (not written by harness/run/mutate?)"
	assert_line '| s | 1 | 0 | 0 | 0 | 2s |'
}

@test "report.results-mutation-heldout: results: CI's held-out sample (make mutate-heldout) gets its own header line and section beside the seeded one, with its survivors" {
	d=$BATS_TEST_TMPDIR/r
	hsuite "$d" s <<<$'1..1\nok 1 fine'
	run -0 report results --full "$d" 10
	assert_line '- Held-out mutation score (`make mutate-heldout`, CI): not run since this check'
	{
		printf 'id\tfile\tline\tcol\tfunction\toperator\toriginal\treplacement\tverdict\tby\tseconds\tbefore\tafter\n'
		printf 'b1\tproviders/spec.c\t10\t5\tspec_num\tROR\t<\t<=\tkilled\tunit test_spec: not ok 3 x\t2\tif (a < b)\tif (a <= b)\n'
		printf 'b2\tproviders/elf.c\t30\t5\telf_y\tOBO\t8\t9\tsurvived\tran: unit badinput\t40\tn < 8\tn < 9\n'
	} >"$d/mutate-heldout.tsv"
	printf 'seed: heldout-abc123\nbudget: 150\ncommand: harness/run/mutate --mutants 2 --seed heldout-abc123\nwall: 90\n' >"$d/mutate-heldout.txt"
	run -0 report results --full "$d" 10
	assert_line '- Held-out mutation score (`make mutate-heldout`, CI): 50.0% (1 of 2 killed or timed out); see "Mutation testing, held-out sample"'
	assert_line '- Mutation score (`make mutate`): not run since this check'
	m=$(section "$output" "Mutation testing, held-out sample")
	grep -qF 'seed heldout-abc123, 150 s per mutant' <<<"$m" || fail "caption: $m"
	grep -qF 'drawn after the tests were written' <<<"$m" || fail "what the sample is: $m"
	grep -qxF -- '- `b2` providers/elf.c:30 `elf_y` OBO: `n < 8` → `n < 9`' <<<"$m" || fail "survivor: $m"
	refute_line '## Mutation testing'
}

# Every report the kernel log patterns know, one per line (the headlines of
# lib/bug.c, panic, watchdogs, RCU, sanitizers, the verifier, uprobes).
KLOG_LINES=(
	"WARNING: CPU: 0 PID: 1 at kernel/events/uprobes.c:1 x"
	"BUG: unable to handle page fault for address: 0"
	"kernel BUG at mm/rmap.c:1!"
	"Oops: 0000 [#1] PREEMPT SMP"
	"general protection fault, probably for non-canonical address"
	"Kernel panic - not syncing: Fatal exception"
	"watchdog: BUG: soft lockup - CPU#0 stuck for 22s!"
	"watchdog: Watchdog detected hard LOCKUP on cpu 1"
	"rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:"
	"rcu_sched self-detected stall on CPU"
	"UBSAN: shift-out-of-bounds in kernel/x.c:1:2"
	"KASAN: use-after-free in uprobe_free"
	"verifier bug: insn 12: bad state"
	"INFO: task kworker:1 blocked for more than 120 seconds."
	"uprobe: probecheck:4242 failed to unregister, leaking uprobe"
)

@test "report.kernlog-patterns: kernlog: every pattern is found and counted once, with its trace; a clean log is clean" {
	results_issues
	m=$BATS_TEST_TMPDIR/m
	for i in "${!KLOG_LINES[@]}"; do
		printf '[   1.000000] booting\n[   2.500000] %s\n[   2.500001]  dump_stack+0x1/0x2\n' "${KLOG_LINES[i]}" >"$BATS_TEST_TMPDIR/console"
		kern "$m" "k$i" PASS
		report kernlog "$BATS_TEST_TMPDIR/console" >"$m/k$i/kernel-findings.txt"
		want=$(printf '%s\n dump_stack+0x1/0x2' "${KLOG_LINES[i]}")
		[[ ${KLOG_LINES[i]} != *"leaking uprobe" ]] || want=${KLOG_LINES[i]}   # one line each
		assert_equal "$(cat "$m/k$i/kernel-findings.txt")" "$want"
	done
	printf '[   1.000000] booting\n[   2.000000] probecheck: all well\n' >"$BATS_TEST_TMPDIR/console"
	run -0 report kernlog "$BATS_TEST_TMPDIR/console"
	assert_output ""
	run -0 report matrix "$m"
	for i in "${!KLOG_LINES[@]}"; do
		assert_line --regexp "^\| k$i \|.* \| 1 finding\(s\), see k$i/kernel-findings.txt \|\$"
	done
}

@test "report.kernlog-since: kernlog --since: only what dmesg printed after the mark (run-suites on the host)" {
	results_issues
	printf '[   10.000000] uprobe: probecheck:1 failed to unregister, leaking uprobe\n' >"$BATS_TEST_TMPDIR/mark"
	{
		printf '[    5.000000] WARNING: CPU: 0 PID: 1 at old\n'
		printf '[   10.000000] uprobe: probecheck:1 failed to unregister, leaking uprobe\n'
		printf '[   11.000000] ------------[ cut here ]------------\n'
		printf '[   11.000001] WARNING: CPU: 1 PID: 7 at new\n'
		printf 'continuation of the report\n'
		printf '[   12.000000] watchdog: Watchdog detected hard LOCKUP on cpu 1\n'
	} >"$BATS_TEST_TMPDIR/dmesg"
	run -0 report kernlog --since "$BATS_TEST_TMPDIR/mark" - <"$BATS_TEST_TMPDIR/dmesg"
	assert_output "$(printf '%s\n' '------------[ cut here ]------------' 'WARNING: CPU: 1 PID: 7 at new' \
		'continuation of the report' 'watchdog: Watchdog detected hard LOCKUP on cpu 1')"
}

@test "report.tally-counts: tally: run-suites' '-' counts filled in from the TAP; the last line and exit status count kernel apart" {
	results_issues
	d=$BATS_TEST_TMPDIR/r
	findings_run "$d"
	run -0 report tally "$d" s
	assert_line "   s: 2 passed, 0 failed, 0 skipped, 1 kernel (2s)"
	assert_line "     kernel: K1: s.red-zone: red zone"
	assert_equal "$(grep -P '^s\t' "$d/suites.tsv")" "$(printf 's\t2\t0\t0\t2\t1\t1')"
	run -0 report tally "$d"
	assert_output "2 passed, 0 failed, 2 skipped, 1 kernel"
	hsuite "$d" u <<<$'1..1\nnot ok 1 broken'
	run -1 report tally "$d"
	assert_output "2 passed, 1 failed, 2 skipped, 1 kernel"
}

@test "report.module-counts: run-suites and run-unit: the module counts on the host; PROBECHECK_NO_REPORT=1 (a guest) only records" {
	results_issues
	printf '@test "syn.passes-true: t" {\n\ttrue\n}\n@test "syn.fails-false: u" {\n\tfalse\n}\n' >"$BATS_TEST_TMPDIR/syn.bats"
	run -1 "$PROBECHECK_ROOT/harness/run/run-suites" "$BATS_TEST_TMPDIR/h" "$BATS_TEST_TMPDIR/syn.bats"
	assert_line --regexp '^   syn: 1 passed, 1 failed, 0 skipped, 0 kernel \([0-9]+s\)$'
	assert_equal "${lines[-1]}" "1 passed, 1 failed, 0 skipped, 0 kernel"
	assert_equal "$(cut -f1-4,6,7 "$BATS_TEST_TMPDIR/h/suites.tsv" | tail -n 1)" "$(printf 'syn\t1\t1\t0\t1\t0')"
	[[ -f $BATS_TEST_TMPDIR/h/run/kernel ]]
	PROBECHECK_NO_REPORT=1 run -1 "$PROBECHECK_ROOT/harness/run/run-suites" "$BATS_TEST_TMPDIR/g" "$BATS_TEST_TMPDIR/syn.bats"
	assert_line --regexp "^   syn: bats status 1, 0 runner failures \([0-9]+s\); classified on the host$"
	assert_equal "$(cut -f1-4,6,7 "$BATS_TEST_TMPDIR/g/suites.tsv" | tail -n 1)" "$(printf 'syn\t-\t-\t-\t1\t-')"
	[[ ! -e $BATS_TEST_TMPDIR/g/run/kernel-findings.txt ]]
	# the host classifies what the guest recorded
	assert_equal "$(cls "$BATS_TEST_TMPDIR/g" syn "syn.fails-false: u")" "FAIL|"
	printf '#!/bin/sh\necho "1..2"\necho "ok 1 - a"\necho "not ok 2 - b"\nexit 1\n' >"$BATS_TEST_TMPDIR/test_bad"
	chmod +x "$BATS_TEST_TMPDIR/test_bad"
	run -1 "$PROBECHECK_ROOT/harness/run/run-unit" "$BATS_TEST_TMPDIR/u" "$BATS_TEST_TMPDIR/test_bad"
	assert_line "  FAIL test_bad: 1 of 2 checks failed"
	assert_line "       not ok 2 - b"
	assert_line "unit: 1 binaries, 0 passed, 1 failed; 2 checks, 1 failed"
	PROBECHECK_NO_REPORT=1 run -1 "$PROBECHECK_ROOT/harness/run/run-unit" "$BATS_TEST_TMPDIR/u" "$BATS_TEST_TMPDIR/test_bad"
	assert_line "  test_bad: exit status 1 (classified on the host)"
}

# guest K: a guest's results as harness/kernels/vm-run leaves them after unpack.
guest() {
	mkdir -p "$1/results"
	echo "6.1.0-56 4.2" >"$1/results/guest.hello"
	echo "done 1" >"$1/results/guest.status"
	: >"$1/unpack.log"
	: >"$1/console.log"
	suite "$(dirname "$1")" "$(basename "$1")" s < <(printf '1..2\n'; sym 1 "s.red-zone: red zone" redzone-call; printf 'ok 2 t\n')
}

@test "report.orphaned-countdown: run-suites: a test whose BATS_TEST_TIMEOUT countdown is left orphaned (bats 1.8.2's race) does not hold bats up until it ends" {
	results_issues
	# The race, made certain: the test kills its countdown subshell, as a
	# test ending before the subshell has set its trap does; its sleep
	# lives on, holding bats' pipes.
	# (printf: a line starting with @test here would be this file's test)
	printf '%s\n' '@test "orphan.countdown-killed: orphan" {' \
		'	for c in $(pgrep -P $$); do' \
		'		pgrep -P "$c" -x -f "sleep $BATS_TEST_TIMEOUT" >/dev/null && kill -9 "$c"' \
		'	done' \
		'	pgrep -x -f "sleep $BATS_TEST_TIMEOUT" >/dev/null' \
		'}' >"$BATS_TEST_TMPDIR/orphan.bats"
	local t0=$SECONDS
	BATS_TEST_TIMEOUT=60 run -0 "$PROBECHECK_ROOT/harness/run/run-suites" "$BATS_TEST_TMPDIR/h" "$BATS_TEST_TMPDIR/orphan.bats"
	assert_line --regexp '^   orphan: 1 passed, 0 failed, 0 skipped, 0 kernel \([0-9]+s\)$'
	((SECONDS - t0 < 30)) || fail "run-suites took $((SECONDS - t0)) s: it waited for the orphaned countdown (60 s)"
}

@test "report.verdict-guest: verdict --guest: INFRA when the run did not complete; PASS with a finding; FAIL when the results show none of a failure" {
	results_issues
	k=$BATS_TEST_TMPDIR/k
	guest "$k"
	run -0 report verdict --guest --qemu-status 0 --timeout 7200 "$k"
	assert_output "$(printf 'PASS\tevery failure a listed kernel finding (K1: 1 test)')"
	assert_equal "$(cat "$k/verdict")" PASS
	# the guest said it failed, the results show no failure and no finding
	suite "$BATS_TEST_TMPDIR" k s <<<$'1..1\nok 1 t'
	run -1 report verdict --guest "$k"
	assert_output "$(printf 'FAIL\tthe tests exited with status 1, but their results show no failed test')"
	echo "done 0" >"$k/results/guest.status"
	run -0 report verdict --guest "$k"
	# results cut short on the port
	echo "unpack: r1/s/s.tap: cut short" >"$k/unpack.log"
	run -3 report verdict --guest "$k"
	assert_output "$(printf 'INFRA\tresults port: unpack: r1/s/s.tap: cut short')"
	: >"$k/unpack.log"
	# no DONE: timeout, panic, silent init, anything else
	echo none >"$k/results/guest.status"
	run -3 report verdict --guest --qemu-status 124 --timeout 7200 "$k"
	assert_output "$(printf 'INFRA\ttimed out after 7200 s')"
	printf '[   3.1] Kernel panic - not syncing: Attempted to kill init!\n' >"$k/console.log"
	run -3 report verdict --guest --qemu-status 0 "$k"
	assert_output "$(printf 'INFRA\tkernel panic: Kernel panic - not syncing: Attempted to kill init!')"
	: >"$k/console.log"
	run -3 report verdict --guest --qemu-status 0 "$k"
	assert_output "$(printf 'INFRA\tthe guest never finished')"
	rm "$k/results/guest.hello"
	run -3 report verdict --guest --qemu-status 1 "$k"
	assert_output "$(printf "INFRA\tthe guest's init never spoke (qemu status 1; see console.log)")"
}

# fake_qemu DIR: a qemu-system-x86_64 in DIR that plays a guest: the
# console gets a hard LOCKUP report, the results port the files of
# $FAKE_RESULTS/r1/* as harness/kernels/vm/init sends them, then DONE $FAKE_STATUS
# (none when FAKE_STATUS is "crash").
fake_qemu() {
	mkdir -p "$1"
	cat >"$1/qemu-system-x86_64" <<-'EOF'
		#!/bin/bash
		echo "$*" >>"${FAKE_ARGS:-/dev/null}"
		# The KVM probe boot of vm-run: FAKE_KVM=ok gets as far as the
		# root file system, anything else is qemu dying as nested KVM does.
		if [[ " $* " == *" -accel kvm "* && " $* " != *" -initrd "* ]]; then
			[[ ${FAKE_KVM:-} == ok ]] || { echo "qemu: kvm: failed to set MSR" >&2; exit 134; }
			for a in "$@"; do [[ $a == file:* ]] && printf 'VFS: Unable to mount root fs\n' >"${a#file:}"; done
			exit 0
		fi
		n=0
		while (($#)); do
			if [[ $1 == -serial ]]; then
				n=$((n + 1)); ((n == 1)) && con=${2#file:} || port=${2#file:}; shift 2; continue
			fi
			shift
		done
		printf '[    0.5] Linux version 6.1.0-fake\n[   30.0] watchdog: Watchdog detected hard LOCKUP on cpu 0\n' >"$con"
		send() {
			printf '@@PC FILE %s %s %s\n' "$2" "$(stat -c %s "$1")" "$(sha256sum <"$1" | cut -d' ' -f1)"
			base64 -w 76 "$1"
			printf '@@PC END %s\n' "$2"
		}
		{
			echo "@@PC HELLO 6.1.0-fake 2.5"
			for f in "$FAKE_RESULTS"/r1/*/*; do send "$f" "${f#"$FAKE_RESULTS"/}"; done
			[[ $FAKE_STATUS == crash ]] || echo "@@PC DONE $FAKE_STATUS"
		} >"$port"
	EOF
	chmod +x "$1/qemu-system-x86_64"
}

@test "report.vm-run-judges: vm-run: the guest records, the host judges: a listed finding is PASS, a plain failure FAIL, no DONE INFRA" {
	results_issues
	fake_qemu "$BATS_TEST_TMPDIR/bin"
	: >"$BATS_TEST_TMPDIR/bzImage"
	: >"$BATS_TEST_TMPDIR/image.cpio"
	export FAKE_RESULTS=$BATS_TEST_TMPDIR/g/results FAKE_STATUS=1
	suite "$BATS_TEST_TMPDIR" g integrity < <(printf '1..2\n'; sym 1 "integrity.red-zone: red zone" redzone-call; printf 'ok 2 t\n')
	vmrun() {
		PATH=$BATS_TEST_TMPDIR/bin:$PATH VM_ACCEL=tcg "$PROBECHECK_ROOT/harness/kernels/vm-run" -n fake -t 60 \
			-i "$BATS_TEST_TMPDIR/image.cpio" -o "$BATS_TEST_TMPDIR/out" "file:$BATS_TEST_TMPDIR/bzImage"
	}
	run -0 vmrun
	assert_output --regexp '^vm-run: fake: PASS: every failure a listed kernel finding \(K1: 1 test\) \(2\.5 s to init, [0-9]+ s in all, tcg \(VM_ACCEL=tcg\)\)$'
	assert_equal "$(cat "$BATS_TEST_TMPDIR/out/kernel-findings.txt")" "watchdog: Watchdog detected hard LOCKUP on cpu 0"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/out/kernel")" "6.1.0-fake"
	suite "$BATS_TEST_TMPDIR" g integrity <<<$'1..2\nnot ok 1 broken\nok 2 t'
	run -1 vmrun
	assert_output --partial "vm-run: fake: FAIL: integrity: 1 passed, 1 failed, 0 skipped, 0 kernel"
	FAKE_STATUS=crash run -3 vmrun
	assert_output --partial "vm-run: fake: INFRA: the guest never finished"
}

@test "report.vm-run-accel: vm-run VM_ACCEL: auto takes KVM only when a probe boot reaches the root file system; kvm insists; tcg skips the probe" {
	results_issues
	fake_qemu "$BATS_TEST_TMPDIR/bin"
	: >"$BATS_TEST_TMPDIR/bzImage"
	: >"$BATS_TEST_TMPDIR/image.cpio"
	export FAKE_RESULTS=$BATS_TEST_TMPDIR/g/results FAKE_STATUS=0 FAKE_ARGS=$BATS_TEST_TMPDIR/args
	suite "$BATS_TEST_TMPDIR" g pipeline <<<$'1..1\nok 1 t'
	vmrun() {
		PATH=$BATS_TEST_TMPDIR/bin:$PATH "$PROBECHECK_ROOT/harness/kernels/vm-run" -n fake -t 60 \
			-i "$BATS_TEST_TMPDIR/image.cpio" -o "$BATS_TEST_TMPDIR/out" "file:$BATS_TEST_TMPDIR/bzImage"
	}
	: >"$FAKE_ARGS"
	FAKE_KVM=ok run -0 vmrun
	assert_equal "$(cat "$BATS_TEST_TMPDIR/out/accel")" kvm
	assert_equal "$(grep -c -- '-initrd' "$FAKE_ARGS")" 1
	grep -- '-initrd' "$FAKE_ARGS" | grep -q -- '-accel kvm -cpu host' || fail "the guest did not run under KVM: $(cat "$FAKE_ARGS")"
	: >"$FAKE_ARGS"
	FAKE_KVM=broken run -0 vmrun
	assert_output --partial ", tcg (no KVM: the probe boot under -accel kvm did not reach the root file system (qemu status 134"
	grep -- '-initrd' "$FAKE_ARGS" | grep -q -- '-accel tcg,thread=multi -cpu max' || fail "no TCG fallback: $(cat "$FAKE_ARGS")"
	FAKE_KVM=broken VM_ACCEL=kvm run -2 vmrun
	assert_output --partial "vm-run: VM_ACCEL=kvm: the probe boot under -accel kvm did not reach the root file system"
	: >"$FAKE_ARGS"
	FAKE_KVM=ok VM_ACCEL=tcg run -0 vmrun
	refute_output --partial "-accel kvm"
	assert_equal "$(grep -c -- '-accel kvm' "$FAKE_ARGS")" 0
	VM_ACCEL=fast run -2 vmrun
	assert_output --partial "VM_ACCEL='fast': expected auto, kvm or tcg"
}

@test "report.bisect-outcome: outcome (bisect-kernels): a kernel finding is fail there; missing, none, skip, pass" {
	results_issues
	d=$BATS_TEST_TMPDIR
	{ printf '1..1\n'; sym 1 "s.red-zone: red zone" redzone-call; } >"$d/k.tap"
	printf '1..2\nok 1 a\nok 2 b # skip x\n' >"$d/p.tap"
	printf '1..1\nok 1 b # skip x\n' >"$d/s.tap"
	printf '1..0\n' >"$d/n.tap"
	printf 'ok 1 a\n' >"$d/m.tap"
	printf 'fail\tafter the suite: leftover\n' >"$d/p.harness"
	assert_equal "$(report outcome "$d/k.tap") $(report outcome "$d/p.tap") $(report outcome "$d/p.tap" "$d/p.harness")" "fail pass fail"
	assert_equal "$(report outcome "$d/s.tap") $(report outcome "$d/n.tap") $(report outcome "$d/m.tap") $(report outcome "$d/x.tap")" \
		"skip none missing missing"
}

@test "report.kernel-issues-slugs: ci/kernel-issues: it parses, and every slug a suite passes to pc_kernel_symptom is listed" {
	run -0 env -u PROBECHECK_KERNEL_ISSUES "$PROBECHECK_ROOT/harness/report/report" issues
	listed=$(cut -f2 <<<"$output" | tr ' ' '\n')
	# Calls and the "-- SLUG" of a further symptom (INTEG_MORE), not comments.
	used=$(grep -hE '^[[:space:]]*[^#[:space:]]' "$PROBECHECK_ROOT"/suites/*.bats "$PROBECHECK_ROOT"/suites/helpers/*.bash |
		grep -oE '(pc_kernel_symptom|\(--) [a-z0-9][a-z0-9-]* ["$]' | awk '{ print $2 }' | sort -u)
	[[ -n $used ]] || fail "no pc_kernel_symptom SLUG found in the suites"
	for s in $used; do
		grep -qx -- "$s" <<<"$listed" || fail "suites use symptom '$s', ci/kernel-issues does not list it"
	done
}

@test "report.kernel-issues-malformed: kernel-issues: a malformed list is an error naming the file and line, never a shorter list" {
	f=$BATS_TEST_TMPDIR/ki
	export PROBECHECK_KERNEL_ISSUES=$f
	printf 'id: K1\nsymptom: a\ntitle: t\ntests: s.*\n\nid: K1\nsymptom: b\ntitle: t\ntests: s.x-y\n' >"$f"
	run -2 report issues
	assert_output "report: issues: '$f', entry at line 6: id K1 listed twice"
	printf 'id: K1\nsymptom: a\ntitle: t\n' >"$f"
	run -2 report issues
	assert_output "report: issues: '$f', entry at line 1: no 'tests'"
	printf 'id: K1\nsymptom: a\ntitle: t\ntests: ^(s\n' >"$f"
	run -2 report issues
	assert_output --partial "report: issues: '$f', entry at line 1: tests: '^(s' is not a test ID or a glob over IDs"
	printf 'id: K1\nsymtpom: a\n' >"$f"
	run -2 report issues
	assert_output --partial "report: issues: '$f', line 2: expected one of id, symptom"
	run -2 report check "$BATS_TEST_TMPDIR"
	assert_output --partial "report: check: '$f', line 2"
}

@test "report.tracers-table: tracers: the table's cells (pass, FAIL, skip by claim, n/a, skip), counts, claims, and each failure's first difference and reproducer" {
	local d=$BATS_TEST_TMPDIR/conf
	mkdir -p "$d/claims" "$d/bt/repro/arguments-2" "$d/probecheck"
	printf 'probecheck\t0\t10\tprobecheck abc\nbt\t1\t20\tbpftrace v0.17.0\n' >"$d/tracers.tsv"
	printf 'usdt yes\nfollow yes\n' >"$d/claims/probecheck"
	printf 'usdt yes\nfollow no no fork following (its docs)\nall no not tested: no -a here\n' >"$d/claims/bt"
	hsuite "$d/probecheck" arguments <<-'EOF'
		1..5
		ok 1 a
		ok 2 b
		ok 3 c
		ok 4 d
		ok 5 e
	EOF
	hsuite "$d/bt" arguments <<-'EOF'
		1..5
		ok 1 a
		not ok 2 b
		# (in test file suites/arguments.bats, line 9)
		#   `assert_judged "$o" "$t" 3' failed
		# oracle and trace differ
		ok 3 c # skip tracer bt does not claim follow: no fork following (its docs)
		ok 4 d # skip probecheck only: its command-line errors
		ok 5 e # skip tracer bt does not claim all: not tested: no -a here
	EOF
	echo 'expected {"probe":"fx:a12","args":[1]}; got {"probe":"fx:a12","args":[2]}' \
		>"$d/bt/repro/arguments-2/first-difference.txt"
	run -0 report tracers --rel build/conformance "$d"
	assert_line '| probecheck | probecheck abc | 5 | 0 | 0 | 0 | 0 | 0 | 0 | 10s |'
	assert_line '| bt | bpftrace v0.17.0 | 1 | 1 | 1 | 1 | 0 | 1 | 0 | 20s |'
	assert_line '| follow | yes | no |'
	assert_line '- bt does not claim `follow`: no fork following (its docs)'
	assert_line '| arguments | b | pass | **FAIL** |'
	assert_line '| arguments | c | pass | skip (follow) |'
	assert_line '| arguments | d | pass | n/a |'
	assert_line '| arguments | e | pass | untested (all) |'
	assert_line '- **bt** · arguments: b  '
	assert_line '  first difference: expected {"probe":"fx:a12","args":[1]}; got {"probe":"fx:a12","args":[2]}  '
	assert_line '  reproducer: `build/conformance/bt/repro/arguments-2/`'
	# Without a reproducer's first difference: the failure's own message.
	rm -r "$d/bt/repro/arguments-2"
	run -0 report tracers --rel build/conformance "$d"
	assert_line '  first difference: oracle and trace differ  '
	assert_line '  reproducer: (no reproducer written)'
	# A test is one row across tracers by its ID, whatever sentence each
	# run gave it (named as the first tracer's run names it).
	local e=$BATS_TEST_TMPDIR/conf2
	mkdir -p "$e/claims"
	printf 'probecheck\t0\t10\tprobecheck abc\nbt\t1\t20\tbpftrace v0.17.0\n' >"$e/tracers.tsv"
	hsuite "$e/probecheck" arguments <<<$'1..1\nok 1 arguments.x-y: the old sentence'
	hsuite "$e/bt" arguments <<<$'1..1\nnot ok 1 arguments.x-y: the sentence reworded'
	run -0 report tracers "$e"
	assert_line '| arguments | arguments.x-y: the old sentence | pass | **FAIL** |'
	assert_line '- **bt** · arguments: arguments.x-y: the sentence reworded  '
	# Not a conformance directory: exit 2 naming it.
	run -2 report tracers "$BATS_TEST_TMPDIR"
	assert_output --partial "no tracers.tsv"
}

@test "report.results-cases: results: containers and filelife become a table each, a column per test and a row per run, kernel and tracer: ok, FAIL, skip, not run; no section without a run of the suite" {
	local d=$BATS_TEST_TMPDIR f
	one_page_inputs "$d"
	hsuite "$d/r" containers < <(printf '1..3\nok 1 containers.pid-lower: a # in 5 ms\nnot ok 2 containers.two-names-lower: b # in 5 ms\nok 3 containers.pid-userns: c # skip this kernel refuses the container\n')
	suite "$d/m" old containers < <(printf '1..1\nok 1 containers.pid-lower: a # in 5 ms\n')
	hsuite "$d/c/bt" containers < <(printf '1..1\nnot ok 1 containers.follow-two-of-one-image: x # in 5 ms\n')
	run -0 report results "$d/r" 75 "$d/m" "$d/c"
	f=$(section "$output" "Containers")
	grep -qxF '| `6.18.44-test` (this run) | ok | - | skip | - | - | - | - | **FAIL** | - | - | - | - | - |' <<<"$f" || fail "this run: $f"
	grep -qxF '| old `rel-old` | ok | - | - | - | - | - | - | - | - | - | - | - | - |' <<<"$f" || fail "old: $f"
	grep -qxF '| tracer bt | - | - | - | - | - | - | - | - | - | - | **FAIL** | - | - |' <<<"$f" || fail "bt: $f"
	grep -qF "The traced file's life" <<<"$output" && fail "a filelife section without a filelife run: $output"
	true
}

@test "report.results-privileges: results: the privileges suite's '# privs:' lines become a row per run, kernel and caller, a column per mode: ok, needs X, the mode auto chose; a differing paranoid value named; a failed caller FAIL" {
	local d=$BATS_TEST_TMPDIR f
	one_page_inputs "$d"
	hsuite "$d/r" privileges < <(printf '%s\n' '1..2' \
		'# privs: root:bpf,perfmon paranoid=3 perf refused CAP_SYS_ADMIN' \
		'# privs: root:bpf,perfmon paranoid=3 tracefs ok tracefs' \
		'# privs: root:bpf,perfmon paranoid=3 multi ok multi' \
		'# privs: root:bpf,perfmon paranoid=3 auto ok multi' \
		'# privs: root:bpf,perfmon paranoid=2 perf ok perf' \
		'# privs: root:bpf,perfmon paranoid=2 tracefs ok tracefs' \
		'# privs: root:bpf,perfmon paranoid=2 multi ok multi' \
		'# privs: root:bpf,perfmon paranoid=2 auto ok multi' \
		'ok 1 privileges.root-bpf-perfmon: a # in 5 ms' \
		'not ok 2 privileges.user-bpf: b # in 5 ms')
	suite "$d/m" old privileges < <(printf '%s\n' '1..1' \
		'# privs: user:bpf,perfmon paranoid=2 perf refused CAP_PERFMON_or_CAP_SYS_ADMIN' \
		'# privs: user:bpf,perfmon paranoid=2 auto ok tracefs' \
		'ok 1 privileges.user-bpf-perfmon: c # in 5 ms')
	run -0 report results "$d/r" 75 "$d/m"
	f=$(section "$output" "Capabilities by attach mode")
	grep -qxF '| `6.18.44-test` (this run) | root, BPF+PERFMON | 3, 2 | needs SYS_ADMIN (at 2: ok) | ok | ok | → multi |' <<<"$f" || fail "this run, root: $f"
	grep -qxF '| `6.18.44-test` (this run) | uid 65534, BPF | - | **FAIL** | **FAIL** | **FAIL** | **FAIL** |' <<<"$f" || fail "this run, failed: $f"
	grep -qxF '| old `rel-old` | uid 65534, BPF+PERFMON | 2 | needs PERFMON or SYS_ADMIN | - | - | → tracefs |' <<<"$f" || fail "old: $f"
	(($(grep -c '^| ' <<<"$f") == 4)) || fail "not a header and three rows: $f"
}
