#!/usr/bin/env bats
# matrix.bats — the reporting module's kernel matrix (harness/report/report
# matrix, kernels, merge, overlay), on synthetic matrix directories: a cell
# or verdict it gets wrong would misreport every kernel, so each rule is
# checked against a failure it must show.  Kernel findings as such (what
# makes a failed test "kernel: ID") are report.bats'.
#
# The module needs python3, which guests do not have: there their results
# are judged on the host, and this suite skips.
#
# bats file_tags=harness

load helpers/common
load helpers/results
PC_REQUIRES=(cmd:python3)

# three kernels: a passes everything, b fails t1 and never ran t3, c's
# guest crashed (INFRA) after reporting t1.
three() {
	local m=$1
	kern "$m" a PASS
	kern "$m" b FAIL
	kern "$m" c INFRA
	suite "$m" a s <<-'EOF'
		1..3
		ok 1 s.t1-case: t1
		ok 2 s.t2-case: t2 # skip needs x
		ok 3 s.t3-case: t3
	EOF
	suite "$m" b s <<-'EOF'
		1..2
		not ok 1 s.t1-case: t1
		ok 2 s.t2-case: t2 # skip needs x
	EOF
	suite "$m" c s <<-'EOF'
		1..3
		ok 1 s.t1-case: t1
	EOF
	printf 'ok 1 a\n1..1\n' | unit "$m" a test_x 0
	printf 'ok 1 a\n1..1\n' | unit "$m" b test_x 0
}

@test "matrix.cells-order: matrix: pass, FAIL, skip, infra and not-run cells; the differing test comes first" {
	results_issues
	m=$BATS_TEST_TMPDIR/m
	three "$m"
	run -0 report matrix "$m"
	every=$(section "$output" "Every test")
	grep -qxF '| s | s.t1-case: t1 | pass | FAIL | infra |' <<<"$every" || fail "t1 row wrong: $every"
	grep -qxF '| s | s.t2-case: t2 | skip | skip | - |' <<<"$every" || fail "t2 row wrong: $every"
	grep -qxF '| s | s.t3-case: t3 | pass | - | - |' <<<"$every" || fail "t3 row wrong: $every"
	grep -qxF '| unit | test_x | pass | pass | - |' <<<"$every" || fail "unit row wrong: $every"
	differs=$(section "$output" "Tests whose outcome differs between kernels")
	grep -qF '| s | s.t1-case: t1 |' <<<"$differs" || fail "t1 not called out: $differs"
	! grep -qE '\| s \| s\.t[23]-case: t[23] \|' <<<"$differs" || fail "t2/t3 do not differ: $differs"
	assert_line --partial '| a | `rel-a` | PASS | perf tracefs  |'
	assert_line --partial '| b | `rel-b` | FAIL: s: 0 passed, 1 failed, 1 skipped, 0 kernel (s.t1-case) |'
	assert_line --partial '| c | `rel-c` | INFRA: why-c |'
	assert_line '| uprobe_multi | no (not here) | no (not here) | no (not here) |'
	# a key with a digit is a capability too
	assert_line '| probe_nop10 | yes | yes | yes |'
}

@test "matrix.unit-binary: matrix: a unit binary with a short plan, no plan or a non-zero exit is FAIL, and fails its kernel" {
	results_issues
	m=$BATS_TEST_TMPDIR/m
	kern "$m" a PASS
	printf '1..3\nok 1 x\nok 2 y\n' | unit "$m" a test_short 0
	printf 'ok 1 x\n' | unit "$m" a test_noplan 0
	printf 'ok 1 x\n1..1\n' | unit "$m" a test_exit 1
	printf 'ok 1 x\n1..1\n' | unit "$m" a test_good 0
	run -0 report matrix "$m"
	assert_line '| unit | test_short | FAIL |'
	assert_line '| unit | test_noplan | FAIL |'
	assert_line '| unit | test_exit | FAIL |'
	assert_line '| unit | test_good | pass |'
	run -0 report matrix --verdicts "$m"
	assert_output "$(printf 'a\tFAIL\t3 unit binaries failed')"
}

@test "matrix.kernel-finding-cell: matrix: a listed kernel finding is a 'kernel: ID' cell and its kernel passes; its verdict says which" {
	results_issues
	m=$BATS_TEST_TMPDIR/m
	three "$m"
	suite "$m" b s < <(printf '1..2\n'; sym 1 "s.t1-case: t1" redzone-call; printf 'ok 2 s.t2-case: t2 # skip needs x\n')
	run -0 report matrix "$m"
	assert_line '| s | s.t1-case: t1 | pass | kernel: K1 | infra |'
	assert_line --partial '| b | `rel-b` | PASS (kernel: K1: 1 test) |'
	run -0 report matrix --verdicts "$m"
	assert_line "$(printf 'a\tPASS\tevery test passed')"
	assert_line "$(printf 'b\tPASS\tevery failure a listed kernel finding (K1: 1 test)')"
	assert_line "$(printf 'c\tINFRA\twhy-c')"
	# the matrix alone (the GitHub table job) shows the findings per kernel
	run -0 report matrix "$m"
	findings=$(section "$output" "Kernel findings per kernel")
	grep -qF '| K1 | the red zone is overwritten | not reproduced (2 tests passed) | **reproduced** (by 1 test) | infra |' <<<"$findings" ||
		fail "K1 row wrong: $findings"
}

@test "matrix.finding-no-hide: matrix: a kernel finding never hides a failure it does not explain" {
	results_issues
	fail_b() { assert_line --regexp "^b	FAIL	"; }
	finding() { suite "$1" b s < <(printf '1..2\n'; sym 1 "s.t1-case: t1" redzone-call; printf 'ok 2 s.t2-case: t2 # skip needs x\n'); }
	# another test failed too
	m=$BATS_TEST_TMPDIR/m1
	three "$m"
	finding "$m"
	suite "$m" b u <<<$'1..1\nnot ok 1 other'
	run -0 report matrix --verdicts "$m"
	fail_b
	assert_line --partial "u: 0 passed, 1 failed, 0 skipped, 0 kernel"
	# the plan promised a test the crash never ran
	m=$BATS_TEST_TMPDIR/m2
	three "$m"
	suite "$m" b s < <(printf '1..3\n'; sym 1 "s.t1-case: t1" redzone-call; printf 'ok 2 s.t2-case: t2 # skip needs x\n')
	run -0 report matrix --verdicts "$m"
	fail_b
	assert_line --partial "s: 0 passed, 1 failed, 1 skipped, 1 kernel"
	# a runner's own failure (timeout, leftovers)
	m=$BATS_TEST_TMPDIR/m3
	three "$m"
	finding "$m"
	printf 'fail\tafter the suite: leftover uprobe\n' >"$m/b/results/r1/s/s.harness"
	run -0 report matrix --verdicts "$m"
	fail_b
	# a unit binary that exited non-zero after a clean TAP
	m=$BATS_TEST_TMPDIR/m4
	three "$m"
	finding "$m"
	printf 'ok 1 a\n1..1\n' | unit "$m" b test_x 1
	run -0 report matrix --verdicts "$m"
	fail_b
	# bats exited non-zero, yet no test failed (a bats error)
	m=$BATS_TEST_TMPDIR/m5
	three "$m"
	finding "$m"
	suite "$m" b u 1 <<<$'1..1\nok 1 fine'
	run -0 report matrix --verdicts "$m"
	fail_b
	assert_line --partial "u: 1 passed, 1 failed, 0 skipped, 0 kernel"
	# a suite the guest started but left no suites.tsv of
	m=$BATS_TEST_TMPDIR/m6
	three "$m"
	finding "$m"
	mkdir -p "$m/b/results/r1/lost"
	echo 'run-suites: cannot probe' >"$m/b/results/r1/lost/run.txt"
	run -0 report matrix --verdicts "$m"
	fail_b
	assert_line --partial "1 suites left no results"
	# INFRA stays INFRA whatever its partial results say
	m=$BATS_TEST_TMPDIR/m7
	three "$m"
	suite "$m" c s <<<$'1..1\nok 1 s.t1-case: t1'
	run -0 report matrix --verdicts "$m"
	assert_line "$(printf 'c\tINFRA\twhy-c')"
}

@test "matrix.kernels-tsv: kernels: kernels.tsv written from the kernel directories, verdicts judged now; exit 0/1/3 by them" {
	results_issues
	m=$BATS_TEST_TMPDIR/m
	three "$m"
	echo 7.5 >"$m/a/boot_s"
	echo 1234 >"$m/a/wall_s"
	echo 6.1.0-56 >"$m/a/kernel"
	run -1 report kernels "$m" a b c
	assert_equal "$(sed -n 2p "$m/kernels.tsv")" "$(printf 'a\tspec-a\tPASS\tevery test passed\t7.5\t1234\t6.1.0-56')"
	assert_equal "$(cut -f1,3 "$m/kernels.tsv" | tail -n 2)" "$(printf 'b\tFAIL\nc\tINFRA')"
	suite "$m" b s < <(printf '1..2\n'; sym 1 "s.t1-case: t1" redzone-call; printf 'ok 2 s.t2-case: t2 # skip needs x\n')
	run -3 report kernels "$m" a b c
	assert_equal "$(cut -f1,3 "$m/kernels.tsv" | tail -n 2)" "$(printf 'b\tPASS\nc\tINFRA')"
	run -0 report kernels "$m" a b
	run -2 report kernels "$m" a nosuch
	assert_output "report: kernels: '$m/nosuch': no such kernel directory"
}

@test "matrix.kernel-log: matrix: the kernel log column counts every pattern, 'hard LOCKUP' and 'verifier bug' too" {
	results_issues
	m=$BATS_TEST_TMPDIR/m
	kern "$m" a PASS
	kern "$m" b PASS
	kern "$m" c PASS
	printf '[    1.0] watchdog: Watchdog detected hard LOCKUP on cpu 0\n' >"$BATS_TEST_TMPDIR/console"
	report kernlog "$BATS_TEST_TMPDIR/console" >"$m/a/kernel-findings.txt"
	printf 'verifier bug: insn 3\n' >"$m/b/kernel-findings.txt"
	run -0 report matrix "$m"
	assert_line --regexp '^\| a \|.* \| 1 finding\(s\), see a/kernel-findings.txt \|$'
	assert_line --regexp '^\| b \|.* \| 1 finding\(s\), see b/kernel-findings.txt \|$'
	assert_line --regexp '^\| c \|.* \| clean \|$'
}

# split M PARTS: one matrix directory per kernel of M under PARTS/NAME.
split() {
	local n
	for n in $(awk -F'\t' 'NR > 1 { print $1 }' "$1/kernels.tsv"); do
		mkdir -p "$2/$n"
		cp -a "$1/$n" "$2/$n/"
		awk -F'\t' -v n="$n" 'NR == 1 || $1 == n' "$1/kernels.tsv" >"$2/$n/kernels.tsv"
		cp "$1/commit" "$2/$n/"
		echo all >"$2/$n/suites"
		echo "${#n}0" >"$2/$n/wall_s"
	done
}

@test "matrix.merge-parts: merge: per-kernel parts merge into the matrix they came from, in ci/kernels order" {
	results_issues
	m=$BATS_TEST_TMPDIR/m
	kern "$m" host PASS
	kern "$m" debian-6.1-cloud FAIL
	kern "$m" mine PASS
	suite "$m" host s <<<$'1..1\nok 1 s.t1-case: t1'
	suite "$m" debian-6.1-cloud s <<<$'1..1\nnot ok 1 s.t1-case: t1'
	suite "$m" mine s <<<$'1..1\nok 1 s.t1-case: t1'
	split "$m" "$BATS_TEST_TMPDIR/p"
	cd "$BATS_TEST_TMPDIR"
	run -0 report merge out p/mine p/debian-6.1-cloud p/host
	assert_output "report merge: 3 kernels from 3 parts into out"
	diff "$m/kernels.tsv" out/kernels.tsv || fail "kernels.tsv differs (order or rows)"
	assert_equal "$(cat out/commit) $(cat out/suites) $(cat out/wall_s)" "abc1234 all 160"
	run -0 report matrix "$m"
	want=$(grep -v '^Generated by\|^- Matrix wall' <<<"$output")
	run -0 report matrix out
	assert_equal "$(grep -v '^Generated by\|^- Matrix wall' <<<"$output")" "$want"
}

@test "matrix.merge-two-commits: merge: parts from two commits say both" {
	results_issues
	m=$BATS_TEST_TMPDIR/m
	kern "$m" a PASS
	kern "$m" b PASS
	split "$m" "$BATS_TEST_TMPDIR/p"
	echo def5678 >"$BATS_TEST_TMPDIR/p/b/commit"
	run -0 report merge "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR"/p/{a,b}
	assert_equal "$(cat "$BATS_TEST_TMPDIR/out/commit")" "abc1234; def5678"
}

@test "matrix.merge-errors: merge: a kernel in two parts, or a part that is no matrix: exit 2 naming it, OUTDIR untouched" {
	results_issues
	m=$BATS_TEST_TMPDIR/m
	kern "$m" a PASS
	kern "$m" b PASS
	split "$m" "$BATS_TEST_TMPDIR/p"
	cd "$BATS_TEST_TMPDIR"
	mkdir out && echo keep >out/kernels.tsv
	run -2 report merge out p/a p/b p/a
	assert_output "report: merge: kernel 'a' is in both 'p/a' and 'p/a'"
	run -2 report merge out p/a nothere
	assert_output "report: merge: 'nothere': not a matrix directory (no kernels.tsv)"
	rm -r p/b/b
	run -2 report merge out p/a p/b
	assert_output "report: merge: 'p/b': kernel 'b' is listed but has no directory"
	assert_equal "$(ls -A out) $(cat out/kernels.tsv)" "kernels.tsv keep"
	run -2 report merge out
	assert_output --partial "usage: report merge [-h] OUTDIR PART"
}

# kdir DIR VERDICT: a kernel's results directory with that verdict, 100 s.
kdir() {
	mkdir -p "$1/results/r1"
	echo "$2" >"$1/verdict"
	echo "why-$2" >"$1/verdict.why"
	echo 100 >"$1/wall_s"
	echo "finding-$(basename "$1")" >"$1/kernel-findings.txt"
}

@test "matrix.overlay-guest: overlay: a guest's rerun suite replaces only that suite; the verdict comes from all results" {
	results_issues
	k=$BATS_TEST_TMPDIR/k r=$BATS_TEST_TMPDIR/r
	kdir "$k" FAIL
	suite "$BATS_TEST_TMPDIR" k s <<<$'1..1\nnot ok 1 s.t1-case: t1'
	suite "$BATS_TEST_TMPDIR" k u <<<$'1..1\nok 1 t2'
	printf 'ok 1 a\n1..1\n' >"$k/results/unit-test_x.tap"
	echo 0 >"$k/results/unit-test_x.status"
	kdir "$r" PASS
	suite "$BATS_TEST_TMPDIR" r s <<<$'1..1\nok 1 s.t1-case: t1'
	run -0 report overlay "$k" "$r" s
	assert_output "report overlay: k: PASS: every test passed (s rerun)"
	assert_equal "$(cat "$k/results/r1/s/s.tap")" $'1..1\nok 1 s.t1-case: t1'
	assert_equal "$(cat "$k/results/r1/u/u.tap")" $'1..1\nok 1 t2'
	assert_equal "$(cat "$k/wall_s") $(cat "$k/reruns/1/suites")" "200 s"
	assert_equal "$(cat "$k/kernel-findings.txt")" $'finding-k\nfinding-r'
	assert_equal "$(cat "$k/verdict") $(cat "$k/verdict.base")" "PASS FAIL"
	# a second rerun that fails u: FAIL naming u, kept in reruns/2
	kdir "$r" FAIL
	suite "$BATS_TEST_TMPDIR" r u <<<$'1..1\nnot ok 1 t2'
	run -1 report overlay "$k" "$r" u
	assert_output "report overlay: k: FAIL: u: 0 passed, 1 failed, 0 skipped, 0 kernel (t2)"
	[[ -f $k/reruns/2/verdict ]]
	# a rerun that reproduces a listed kernel problem: PASS, saying so
	kdir "$r" PASS
	suite "$BATS_TEST_TMPDIR" r u < <(printf '1..1\n'; sym 1 t2 redzone-call)
	run -1 report overlay "$k" "$r" u
	assert_output --partial "FAIL: u: 0 passed, 1 failed"   # u is not a K1 suite
	suite "$BATS_TEST_TMPDIR" r s < <(printf '1..1\n'; sym 1 "s.t1-case: t1" redzone-call)
	suite "$BATS_TEST_TMPDIR" r u <<<$'1..1\nok 1 t2'
	run -0 report overlay "$k" "$r" s u
	assert_output "report overlay: k: PASS: every failure a listed kernel finding (K1: 1 test) (s u rerun)"
	# the unit binaries count too
	echo 1 >"$k/results/unit-test_x.status"
	run -1 report overlay "$k" "$r" u
	assert_output "report overlay: k: FAIL: 1 unit binaries failed"
}

@test "matrix.overlay-host: overlay: on the host's layout the suite's files and its suites.tsv row are replaced" {
	results_issues
	k=$BATS_TEST_TMPDIR/k r=$BATS_TEST_TMPDIR/r
	kdir "$k" FAIL
	kdir "$r" PASS
	mkdir -p "$k/results/r1/all" "$r/results/r1/all"
	printf 'suite\tpass\tfail\tskip\tseconds\tbats_status\ns\t0\t1\t0\t1\t1\nu\t1\t0\t0\t1\t0\n' >"$k/results/r1/all/suites.tsv"
	printf '1..1\nnot ok 1 s.t1-case: t1\n' >"$k/results/r1/all/s.tap"
	printf '1..1\nok 1 t2\n' >"$k/results/r1/all/u.tap"
	printf 'suite\tpass\tfail\tskip\tseconds\tbats_status\ns\t1\t0\t0\t2\t0\n' >"$r/results/r1/all/suites.tsv"
	printf '1..1\nok 1 s.t1-case: t1\n' >"$r/results/r1/all/s.tap"
	run -0 report overlay "$k" "$r" s
	assert_output "report overlay: k: PASS: every test passed (s rerun)"
	assert_equal "$(cut -f1-3 "$k/results/r1/all/suites.tsv")" $'suite\tpass\tfail\ns\t1\t0\nu\t1\t0'
	assert_equal "$(cat "$k/results/r1/all/s.tap")" $'1..1\nok 1 s.t1-case: t1'
}

@test "matrix.overlay-infra: overlay: an INFRA rerun replaces nothing and makes the kernel INFRA until a rerun completes" {
	results_issues
	k=$BATS_TEST_TMPDIR/k r=$BATS_TEST_TMPDIR/r
	kdir "$k" PASS
	suite "$BATS_TEST_TMPDIR" k s <<<$'1..1\nok 1 old'
	kdir "$r" INFRA
	run -3 report overlay "$k" "$r" s
	assert_output "report overlay: k: INFRA: rerun of s: why-INFRA"
	assert_equal "$(cat "$k/results/r1/s/s.tap")" $'1..1\nok 1 old'
	kdir "$r" PASS
	suite "$BATS_TEST_TMPDIR" r s <<<$'1..1\nok 1 new'
	run -0 report overlay "$k" "$r" s
	assert_equal "$(cat "$k/results/r1/s/s.tap")" $'1..1\nok 1 new'
	# a whole run that was INFRA is not completed by a rerun
	k2=$BATS_TEST_TMPDIR/k2
	kdir "$k2" INFRA
	run -3 report overlay "$k2" "$r" s
	assert_output --partial "INFRA: why-INFRA (a rerun of s does not complete it)"
	# a suite the rerun has no results for: nothing replaced
	suite "$BATS_TEST_TMPDIR" r t <<<$'1..1\nok 1 other'
	run -3 report overlay "$k" "$r" t nosuch
	assert_output "report overlay: k: INFRA: rerun of t nosuch: no results for suite 'nosuch'"
	[[ ! -e $k/results/r1/t ]] || fail "suite t was put in place though the overlay failed"
	run -2 report overlay "$k" "$BATS_TEST_TMPDIR/none" s
	assert_output "report: overlay: '$BATS_TEST_TMPDIR/none': no verdict (not a kernel's results)"
	run -2 report overlay "$k"
}

@test "matrix.overlay-copy-fails: overlay: a copy that fails leaves the kernel's results as they were and names the file" {
	results_issues
	k=$BATS_TEST_TMPDIR/k r=$BATS_TEST_TMPDIR/r
	kdir "$k" FAIL
	suite "$BATS_TEST_TMPDIR" k s <<<$'1..1\nnot ok 1 old'
	kdir "$r" PASS
	suite "$BATS_TEST_TMPDIR" r s <<<$'1..1\nok 1 new'
	mkfifo "$r/results/r1/s/a-fifo"      # shutil refuses to copy a named pipe
	run -2 report overlay "$k" "$r" s
	assert_output --regexp "^report: overlay: cannot copy '$r/results/r1/s' to .*a-fifo"
	assert_equal "$(cat "$k/results/r1/s/s.tap")" $'1..1\nnot ok 1 old'
	assert_equal "$(ls -A "$k/results/r1")" "s"
	assert_equal "$(cat "$k/wall_s") $(cat "$k/verdict")" "100 FAIL"
	[[ ! -e $k/reruns ]] || fail "the failed overlay kept a rerun record"
}

@test "matrix.failures-digest: failures: each FAIL kernel's failed tests with the file, line and first lines of why; bats' call chain and the test's log left out" {
	results_issues
	local m=$BATS_TEST_TMPDIR/m
	kdir "$m/bad" FAIL
	suite "$m" bad s <<'TAP'
1..3
ok 1 s.a-ok: fine
not ok 2 s.b-case: b # in 12 ms
# (from function `assert_equal' in file suites/helpers/x.bash, line 5,
#  in test file suites/s.bats, line 251)
#   `assert_equal "$x" 1' failed
#
# -- values do not equal --
# expected : 1
# actual   : 0
# --
# # ---- probecheck log of this test ----
# pc[1]: something long and irrelevant
not ok 3 s.c-case: c
# (in test file suites/s.bats, line 9)
#   `false' failed
# # ---- probecheck log of this test ----
# pc[1]: irrelevant
TAP
	kdir "$m/good" PASS
	suite "$m" good s <<<$'1..1\nok 1 s.a-ok: fine'
	run -0 report failures "$m" good bad
	assert_output "  [bad] s.b-case (suites/s.bats:251):
  [bad]   \`assert_equal \"\$x\" 1' failed
  [bad]   -- values do not equal --
  [bad]   expected : 1
  [bad]   actual   : 0
  [bad] s.c-case (suites/s.bats:9):
  [bad]   \`false' failed"
	run -2 report failures "$m" none
	assert_output "report: failures: '$m/none': no such kernel directory"
}
