#!/usr/bin/env bats
# matrix.bats — the tools that turn per-kernel results into verdicts and
# RESULTS.md (harness/write-matrix, harness/merge-matrix), on synthetic
# matrix directories: a cell or verdict they get wrong would misreport
# every kernel, so each rule is checked against a failure it must show.
#
# bats file_tags=harness

load helpers/common

# kern M NAME VERDICT: kernel NAME (row, caps, empty kernel log) in matrix M.
kern() {
	mkdir -p "$1/$2/results/r1"
	[[ -f $1/kernels.tsv ]] ||
		printf 'name\tspec\tverdict\twhy\tboot_s\twall_s\trelease\n' >"$1/kernels.tsv"
	printf '%s\tspec-%s\t%s\twhy-%s\t4\t100\trel-%s\n' "$2" "$2" "$3" "$2" "$2" >>"$1/kernels.tsv"
	printf 'uprobe_pmu=1\ntracefs=1\nuprobe_multi=0\nuprobe_multi_why=not here\n' >"$1/$2/caps"
	: >"$1/$2/kernel-findings.txt"
	echo 1 >"$1/wall_s"
	echo abc1234 >"$1/commit"
}

# suite M NAME SUITE FAILS: SUITE's TAP (stdin) on kernel NAME, and its
# suites.tsv row with FAILS counted failures, as harness/run-suites writes.
suite() {
	local d=$1/$2/results/r1/$3
	mkdir -p "$d"
	cat >"$d/$3.tap"
	: >"$d/$3.harness"
	printf 'suite\tpass\tfail\tskip\tseconds\tbats_status\n%s\t0\t%s\t0\t1\t%s\n' \
		"$3" "$4" "$(($4 > 0))" >"$d/suites.tsv"
}

# unit M NAME BIN STATUS: a unit binary's TAP (stdin) and exit status.
unit() {
	cat >"$1/$2/results/unit-$3.tap"
	echo "$4" >"$1/$2/results/unit-$3.status"
}

write_matrix() { "$PROBECHECK_ROOT/harness/write-matrix" "$@"; }
merge_matrix() { "$PROBECHECK_ROOT/harness/merge-matrix" "$@"; }

# section TEXT HEADING: the lines of TEXT under "### HEADING" up to the next.
section() {
	awk -v h="### $2" '$0 == h { on = 1; next } /^### / { on = 0 } on' <<<"$1"
}

# three kernels: a passes everything, b fails t1 and never ran t3, c's
# guest crashed (INFRA) after reporting t1.
three() {
	local m=$1
	kern "$m" a PASS
	kern "$m" b FAIL
	kern "$m" c INFRA
	suite "$m" a s 0 <<-'EOF'
		1..3
		ok 1 t1
		ok 2 t2 # skip needs x
		ok 3 t3
	EOF
	suite "$m" b s 1 <<-'EOF'
		1..2
		not ok 1 t1
		ok 2 t2 # skip needs x
	EOF
	suite "$m" c s 0 <<-'EOF'
		1..3
		ok 1 t1
	EOF
	printf 'ok 1 a\n1..1\n' | unit "$m" a test_x 0
	printf 'ok 1 a\n1..1\n' | unit "$m" b test_x 0
}

@test "write-matrix: pass, FAIL, skip, infra and not-run cells; the differing test comes first" {
	m=$BATS_TEST_TMPDIR/m
	three "$m"
	PROBECHECK_XFAIL=/dev/null run -0 write_matrix "$m"
	every=$(section "$output" "Every test")
	grep -qxF '| s | t1 | pass | FAIL | infra |' <<<"$every" || fail "t1 row wrong: $every"
	grep -qxF '| s | t2 | skip | skip | - |' <<<"$every" || fail "t2 row wrong: $every"
	grep -qxF '| s | t3 | pass | - | - |' <<<"$every" || fail "t3 row wrong: $every"
	grep -qxF '| unit | test_x | pass | pass | - |' <<<"$every" || fail "unit row wrong: $every"
	differs=$(section "$output" "Tests whose outcome differs between kernels")
	grep -qF '| s | t1 |' <<<"$differs" || fail "t1 not called out: $differs"
	! grep -qE '\| s \| t[23] \|' <<<"$differs" || fail "t2/t3 do not differ: $differs"
	assert_line --partial '| b | `rel-b` | FAIL: why-b |'
	assert_line --partial '| c | `rel-c` | INFRA: why-c |'
	assert_line '| uprobe_multi | no (not here) | no (not here) | no (not here) |'
}

@test "write-matrix: a unit binary with a short plan or no plan is FAIL" {
	m=$BATS_TEST_TMPDIR/m
	kern "$m" a FAIL
	printf '1..3\nok 1 x\nok 2 y\n' | unit "$m" a test_short 0
	printf 'ok 1 x\n' | unit "$m" a test_noplan 0
	PROBECHECK_XFAIL=/dev/null run -0 write_matrix "$m"
	assert_line '| unit | test_short | FAIL |'
	assert_line '| unit | test_noplan | FAIL |'
}

@test "write-matrix: an expected failure is xfail and its kernel passes; an expected one that passes is XPASS" {
	m=$BATS_TEST_TMPDIR/m
	three "$m"
	printf '# comment\na\t^s: t1$\twhy a\nb\t^s: t1$\twhy b\n' >"$BATS_TEST_TMPDIR/xfail"
	export PROBECHECK_XFAIL=$BATS_TEST_TMPDIR/xfail
	run -0 write_matrix "$m"
	assert_line '| s | t1 | XPASS | xfail | infra |'
	run -0 write_matrix --verdicts "$m"
	assert_line "$(printf 'a\tPASS\twhy-a')"
	assert_line "$(printf 'b\tPASS\tevery failure expected (1 xfail, ci/xfail)')"
	assert_line "$(printf 'c\tINFRA\twhy-c')"
}

@test "write-matrix: ci/xfail never hides a failure it does not name" {
	printf 'b\t^s: t1$\twhy\n' >"$BATS_TEST_TMPDIR/xfail"
	export PROBECHECK_XFAIL=$BATS_TEST_TMPDIR/xfail
	fail_line=$(printf 'b\tFAIL\twhy-b')
	# another test failed too
	m=$BATS_TEST_TMPDIR/m1
	three "$m"
	suite "$m" b u 1 <<<$'1..1\nnot ok 1 other'
	run -0 write_matrix --verdicts "$m"
	assert_line "$fail_line"
	# the runner counted a failure with no TAP line (a test the crash never ran)
	m=$BATS_TEST_TMPDIR/m2
	three "$m"
	cp "$m/b/results/r1/s/s.tap" "$BATS_TEST_TMPDIR/s.tap"
	suite "$m" b s 2 <"$BATS_TEST_TMPDIR/s.tap"
	grep -q '^not ok 1 t1$' "$m/b/results/r1/s/s.tap"
	run -0 write_matrix --verdicts "$m"
	assert_line "$fail_line"
	# a harness-level failure (timeout, leftovers)
	m=$BATS_TEST_TMPDIR/m3
	three "$m"
	printf 'fail\tafter the suite: leftover uprobe\n' >"$m/b/results/r1/s/s.harness"
	run -0 write_matrix --verdicts "$m"
	assert_line "$fail_line"
	# a unit binary that exited non-zero after a clean TAP
	m=$BATS_TEST_TMPDIR/m4
	three "$m"
	printf 'ok 1 a\n1..1\n' | unit "$m" b test_x 1
	run -0 write_matrix --verdicts "$m"
	assert_line "$fail_line"
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

@test "merge-matrix: per-kernel parts merge into the matrix they came from, in ci/kernels order" {
	m=$BATS_TEST_TMPDIR/m
	kern "$m" host PASS
	kern "$m" debian-6.1-cloud FAIL
	kern "$m" mine PASS
	suite "$m" host s 0 <<<$'1..1\nok 1 t1'
	suite "$m" debian-6.1-cloud s 1 <<<$'1..1\nnot ok 1 t1'
	suite "$m" mine s 0 <<<$'1..1\nok 1 t1'
	split "$m" "$BATS_TEST_TMPDIR/p"
	cd "$BATS_TEST_TMPDIR"
	run -0 merge_matrix out p/mine p/debian-6.1-cloud p/host
	assert_output "merge-matrix: 3 kernels from 3 parts into out"
	diff "$m/kernels.tsv" out/kernels.tsv || fail "kernels.tsv differs (order or rows)"
	assert_equal "$(cat out/commit) $(cat out/suites) $(cat out/wall_s)" "abc1234 all 160"
	PROBECHECK_XFAIL=/dev/null run -0 write_matrix "$m"
	want=$(grep -v '^Generated by\|^- Matrix wall' <<<"$output")
	PROBECHECK_XFAIL=/dev/null run -0 write_matrix out
	assert_equal "$(grep -v '^Generated by\|^- Matrix wall' <<<"$output")" "$want"
}

@test "merge-matrix: parts from two commits say both" {
	m=$BATS_TEST_TMPDIR/m
	kern "$m" a PASS
	kern "$m" b PASS
	split "$m" "$BATS_TEST_TMPDIR/p"
	echo def5678 >"$BATS_TEST_TMPDIR/p/b/commit"
	run -0 merge_matrix "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR"/p/{a,b}
	assert_equal "$(cat "$BATS_TEST_TMPDIR/out/commit")" "abc1234; def5678"
}

@test "merge-matrix: a kernel in two parts, or a part that is no matrix: exit 1 naming it, OUTDIR untouched" {
	m=$BATS_TEST_TMPDIR/m
	kern "$m" a PASS
	kern "$m" b PASS
	split "$m" "$BATS_TEST_TMPDIR/p"
	cd "$BATS_TEST_TMPDIR"
	mkdir out && echo keep >out/kernels.tsv
	run -1 merge_matrix out p/a p/b p/a
	assert_output "merge-matrix: kernel 'a' is in both 'p/a' and 'p/a'"
	run -1 merge_matrix out p/a nothere
	assert_output "merge-matrix: 'nothere': not a matrix directory (no kernels.tsv)"
	rm -r p/b/b
	run -1 merge_matrix out p/a p/b
	assert_output "merge-matrix: 'p/b': kernel 'b' is listed but has no directory"
	assert_equal "$(ls -A out) $(cat out/kernels.tsv)" "kernels.tsv keep"
	run -2 merge_matrix out
	assert_output --partial "usage: merge-matrix OUTDIR PART..."
}

# kdir DIR VERDICT: a kernel's results directory with that verdict, 100 s.
kdir() {
	mkdir -p "$1/results/r1"
	echo "$2" >"$1/verdict"
	echo "why-$2" >"$1/verdict.why"
	echo 100 >"$1/wall_s"
	echo "finding-$(basename "$1")" >"$1/kernel-findings.txt"
}
overlay() { "$PROBECHECK_ROOT/harness/overlay-results" "$@"; }

@test "overlay-results: a guest's rerun suite replaces only that suite; the verdict comes from all results" {
	k=$BATS_TEST_TMPDIR/k r=$BATS_TEST_TMPDIR/r
	kdir "$k" FAIL
	suite "$BATS_TEST_TMPDIR" k s 1 <<<$'1..1\nnot ok 1 t1'
	suite "$BATS_TEST_TMPDIR" k u 0 <<<$'1..1\nok 1 t2'
	printf 'ok 1 a\n1..1\n' >"$k/results/unit-test_x.tap"
	echo 0 >"$k/results/unit-test_x.status"
	kdir "$r" PASS
	suite "$BATS_TEST_TMPDIR" r s 0 <<<$'1..1\nok 1 t1'
	run -0 overlay "$k" "$r" s
	assert_output "overlay-results: k: PASS: every test passed (s rerun)"
	assert_equal "$(cat "$k/results/r1/s/s.tap")" $'1..1\nok 1 t1'
	assert_equal "$(cat "$k/results/r1/u/u.tap")" $'1..1\nok 1 t2'
	assert_equal "$(cat "$k/wall_s") $(cat "$k/reruns/1/suites")" "200 s"
	assert_equal "$(cat "$k/kernel-findings.txt")" $'finding-k\nfinding-r'
	# a second rerun that fails u: FAIL naming u, kept in reruns/2
	kdir "$r" FAIL
	suite "$BATS_TEST_TMPDIR" r u 1 <<<$'1..1\nnot ok 1 t2'
	run -1 overlay "$k" "$r" u
	assert_output "overlay-results: k: FAIL: u: 0 passed, 1 failed, 0 skipped"
	[[ -f $k/reruns/2/verdict ]]
	# the unit binaries count too
	kdir "$r" PASS
	suite "$BATS_TEST_TMPDIR" r u 0 <<<$'1..1\nok 1 t2'
	echo 1 >"$k/results/unit-test_x.status"
	run -1 overlay "$k" "$r" u
	assert_output "overlay-results: k: FAIL: 1 unit binaries failed"
}

@test "overlay-results: on the host's layout the suite's files and its suites.tsv row are replaced" {
	k=$BATS_TEST_TMPDIR/k r=$BATS_TEST_TMPDIR/r
	kdir "$k" FAIL
	kdir "$r" PASS
	mkdir -p "$k/results/r1/all" "$r/results/r1/all"
	printf 'suite\tpass\tfail\tskip\tseconds\tbats_status\ns\t0\t1\t0\t1\t1\nu\t1\t0\t0\t1\t0\n' >"$k/results/r1/all/suites.tsv"
	printf '1..1\nnot ok 1 t1\n' >"$k/results/r1/all/s.tap"
	printf '1..1\nok 1 t2\n' >"$k/results/r1/all/u.tap"
	printf 'suite\tpass\tfail\tskip\tseconds\tbats_status\ns\t1\t0\t0\t2\t0\n' >"$r/results/r1/all/suites.tsv"
	printf '1..1\nok 1 t1\n' >"$r/results/r1/all/s.tap"
	run -0 overlay "$k" "$r" s
	assert_output "overlay-results: k: PASS: every test passed (s rerun)"
	assert_equal "$(cut -f1-3 "$k/results/r1/all/suites.tsv")" $'suite\tpass\tfail\ns\t1\t0\nu\t1\t0'
	assert_equal "$(cat "$k/results/r1/all/s.tap")" $'1..1\nok 1 t1'
}

@test "overlay-results: an INFRA rerun replaces nothing and makes the kernel INFRA until a rerun completes" {
	k=$BATS_TEST_TMPDIR/k r=$BATS_TEST_TMPDIR/r
	kdir "$k" PASS
	suite "$BATS_TEST_TMPDIR" k s 0 <<<$'1..1\nok 1 old'
	kdir "$r" INFRA
	run -3 overlay "$k" "$r" s
	assert_output "overlay-results: k: INFRA: rerun of s: why-INFRA"
	assert_equal "$(cat "$k/results/r1/s/s.tap")" $'1..1\nok 1 old'
	kdir "$r" PASS
	suite "$BATS_TEST_TMPDIR" r s 0 <<<$'1..1\nok 1 new'
	run -0 overlay "$k" "$r" s
	assert_equal "$(cat "$k/results/r1/s/s.tap")" $'1..1\nok 1 new'
	# a whole run that was INFRA is not completed by a rerun
	k2=$BATS_TEST_TMPDIR/k2
	kdir "$k2" INFRA
	run -3 overlay "$k2" "$r" s
	assert_output --partial "INFRA: why-INFRA (a rerun of s does not complete it)"
	# a suite the rerun has no results for
	run -3 overlay "$k" "$r" nosuch
	assert_output "overlay-results: k: INFRA: rerun of nosuch: no results for suite 'nosuch'"
	run -2 overlay "$k" "$BATS_TEST_TMPDIR/none" s
	assert_output "overlay-results: '$BATS_TEST_TMPDIR/none': no verdict (not a kernel's results)"
	run -2 overlay "$k"
}
