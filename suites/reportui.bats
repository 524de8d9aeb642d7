#!/usr/bin/env bats
# reportui.bats — the static HTML report (harness/report/report html,
# pcreport/html.py) rendered from synthetic results and looked at in
# Debian's headless Chromium: every kernel and tracer of the inputs on
# the index, every link of every page a file of the report, nothing on
# the console, a screenshot kept.  The checker (helpers/reportui.bash,
# htmlcheck.py) is shown failing on a report broken on purpose, so this
# suite cannot pass by checking nothing.  Then what the cells lead to,
# the same bytes for the same inputs, and the other report commands
# working without jinja2 and matplotlib.
#
# The module needs python3, which guests do not have: this suite runs on
# the host only.  Without chromium its browser tests skip.
#
# bats file_tags=harness

load helpers/common
load helpers/results
load helpers/reportui
PC_REQUIRES=(cmd:python3)

setup() {
	pc_setup
}

# Chromium's crash handler runs in a session of its own, where the
# teardown's invariants do not look (they do look in Chromium's own
# session: ui_browser lists it).  ui_browser fails a test a browser
# process outlives; this only clears up after a test that stopped
# half-way, once the invariants have had their say.
teardown() {
	local st=0
	pc_teardown || st=$?
	ui_kill "$BATS_TEST_TMPDIR/ui-browser."
	return $st
}

# ui_host R: make check's results in R: K1 reproduced, K2's test passed,
# K3's skipped, a plain failure, a name to escape, the kernel log's one
# report, capabilities.
ui_host() {
	local r=$1
	hsuite "$r" s < <(printf '1..4\n'; sym 1 "s.red-zone: red zone" redzone-call
		printf 'ok 2 s.fork-ok: fork ok # in 5 ms\n'
		printf 'not ok 3 s.plain-fail: a <b>plain</b> & failure # in 7 ms\n'
		printf '# (in test file suites/s.bats, line 20)\n'
		printf "#   \`assert_equal 1 2' failed\n"
		printf 'ok 4 s.skipped-one: skipped # skip requires uprobe_multi: not here\n')
	hsuite "$r" detachkill <<<$'1..1\nok 1 detachkill.perf-round: perf # skip requires uprobe_pmu: no PMU'
	mkdir -p "$r/run"
	echo 6.18.44-test >"$r/run/kernel"
	printf 'kernel=6.18.44-test\nuprobe_pmu=1\ntracefs=1\nuprobe_multi=0\nuprobe_multi_why=not here\n' >"$r/run/caps"
	echo 'WARNING: CPU: 1 PID: 7 at kernel/events/uprobes.c:1 uprobe_x+0x1/0x2' >"$r/run/kernel-findings.txt"
}

# ui_inputs D: ui_host's results (D/results), with bench figures; a matrix
# of this commit (D/matrix: a passes, b fails) and one of an older commit
# (D/matrix-old); a conformance directory (D/conformance: bt fails a test
# and wrote its reproducer).
ui_inputs() {
	local d=$1 m=$1/matrix c=$1/conformance
	ui_host "$d/results"
	mkdir -p "$d/results/bench"
	printf 'kernel\tfigure\ttracer\tpath\tkind\tvalue\tunit\tnote\n6.18.44\thit\tprobecheck\tmulti\tusdt\t11.70\tx syscall\t\n' \
		>"$d/results/bench/host.tsv"
	printf 'kernel=6.18.44\ndate=2026-01-02 03:04 UTC\naccel=host\n' >"$d/results/bench/host.meta"
	kern "$m" a PASS
	kern "$m" b FAIL
	suite "$m" a s <<<$'1..2\nok 1 s.red-zone: red zone\nok 2 s.fork-ok: fork ok'
	suite "$m" b s < <(printf '1..2\nnot ok 1 s.red-zone: red zone\n# (in test file suites/s.bats, line 9)\n# b-only diagnostic\nok 2 s.fork-ok: fork ok\n')
	kern "$d/matrix-old" old1 PASS
	echo 0ld5678 >"$d/matrix-old/commit"
	mkdir -p "$c/claims" "$c/bt/repro/arguments-2"
	printf 'probecheck\t0\t10\tprobecheck abc\nbt\t1\t20\tbpftrace v0.17.0\n' >"$c/tracers.tsv"
	printf 'usdt yes\nfollow yes\n' >"$c/claims/probecheck"
	printf 'usdt yes\nfollow no no fork following (its docs)\n' >"$c/claims/bt"
	hsuite "$c/probecheck" arguments <<<$'1..2\nok 1 arguments.first-one: a\nok 2 arguments.second-one: b'
	hsuite "$c/bt" arguments < <(printf '1..2\nok 1 arguments.first-one: a\nnot ok 2 arguments.second-one: b\n# oracle and trace differ\n')
	echo 'expected {"args":[1]}; got {"args":[2]}' >"$c/bt/repro/arguments-2/first-difference.txt"
	echo 'bpftrace -e ...' >"$c/bt/repro/arguments-2/commands.txt"
}

# ui_names D: what the index must name, from the inputs themselves: the
# host's kernel, every kernel of a matrix of this commit, every tracer.
ui_names() {
	local m
	cat "$1/results/run/kernel"
	for m in "$1"/matrix*; do
		if [[ -f $m/commit && $(cat "$m/commit") == abc1234 ]]; then
			awk -F'\t' 'NR > 1 { print $1 }' "$m/kernels.tsv"
		fi
	done
	[[ ! -f $1/conformance/tracers.tsv ]] || cut -f1 "$1/conformance/tracers.tsv"
}

# ui_render D OUT: the report of ui_inputs D into OUT, as make results runs it.
ui_render() {
	local m
	local -a dirs=()
	for m in "$1"/matrix* "$1"/conformance; do
		if [[ -d $m ]]; then dirs+=("$m"); fi
	done
	report_html --commit abc1234 "$2" "$1/results" 42 "${dirs[@]}"
}

@test "reportui.browser-dom: in headless Chromium every kernel and tracer of the inputs is on the index, every link of every page resolves, the console says nothing; a screenshot is kept" {
	requires cmd:chromium
	results_issues
	local d=$BATS_TEST_TMPDIR/in out=$BATS_TEST_TMPDIR/report names keep
	ui_inputs "$d"
	run -0 ui_render "$d" "$out"
	assert_output "report html: 6 pages in $out (3 kernels, 2 tracers)"
	mapfile -t names < <(ui_names "$d")
	assert_equal "${names[*]}" "6.18.44-test a b probecheck bt"
	run -0 ui_check "$out" "${names[@]}"
	assert_output "reportui: 6 pages loaded"
	keep=${PROBECHECK_SUITE_DIR:-$PROBECHECK_BUILD/reportui}
	mkdir -p "$keep"
	rm -f "$keep/index.png"
	run -0 ui_browser "$BATS_TEST_TMPDIR/shot.err" --window-size=1280,2000 --screenshot="$keep/index.png" "file://$out/index.html"
	[[ $(head -c 8 "$keep/index.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
		fail "no PNG screenshot in $keep/index.png"
}

@test "reportui.checker-fails: the checker fails a broken link, a missing id, a link out of the report, a console error and a kernel of the inputs missing from the report" {
	requires cmd:chromium
	results_issues
	local d=$BATS_TEST_TMPDIR/in out=$BATS_TEST_TMPDIR/report names
	ui_host "$d/results"
	run -0 ui_render "$d" "$out"
	mapfile -t names < <(ui_names "$d")
	run -0 ui_check "$out" "${names[@]}"
	assert_output "reportui: 2 pages loaded"
	rm "$out/log-this-run.txt"
	sed -i -e 's|kernel-this-run.html#K1"|kernel-this-run.html#K9"|' \
		-e 's|</body>|<a href="/etc/passwd">abs</a><a href="../in/results/s.tap">up</a><script>undefinedFn();</script></body>|' \
		"$out/index.html"
	# A kernel the inputs have and the report does not: a matrix made
	# after it was written.
	kern "$d/matrix" a PASS
	mapfile -t names < <(ui_names "$d")
	run -1 ui_check "$out" "${names[@]}"
	assert_line "reportui: index.html: link 'log-this-run.txt': no file log-this-run.txt"
	assert_line "reportui: index.html: link 'kernel-this-run.html#K9': no id 'K9' in kernel-this-run.html"
	assert_line "reportui: index.html: link '/etc/passwd' is not a relative link into the report"
	assert_line "reportui: index.html: link '../in/results/s.tap' leaves the report directory"
	assert_line --regexp "^reportui: index.html: console: .*Uncaught ReferenceError: undefinedFn is not defined"
	assert_line "reportui: index.html: 1 <script> element(s): the report must need no JavaScript"
	assert_line "reportui: 'a' is not in the DOM (no element has it as its text)"
	refute_line --partial "'6.18.44-test' is not"
}

@test "reportui.browser-bounded: the browser helper fails, and kills, a browser that hangs or leaves a process behind" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH
	# As Chromium's crash handler does: a session of its own.
	printf '#!/bin/bash\nsetsid sleep 60 </dev/null >/dev/null 2>&1 &\n' >"$BATS_TEST_TMPDIR/bin/chromium"
	chmod +x "$BATS_TEST_TMPDIR/bin/chromium"
	PC_TIMEOUT=2 run -1 ui_browser "$BATS_TEST_TMPDIR/err" --dump-dom file:///dev/null
	assert_output --regexp '^reportui: chromium left processes behind 2s after it ended: [0-9]+ sleep $'
	assert_equal "$(ui_procs "$BATS_TEST_TMPDIR/ui-browser.")" ""
	printf '#!/bin/bash\nexec sleep 60\n' >"$BATS_TEST_TMPDIR/bin/chromium"
	PC_TIMEOUT=2 run -1 ui_browser "$BATS_TEST_TMPDIR/err" --dump-dom file:///dev/null
	assert_output --partial "exited with status 124"
	assert_equal "$(ui_procs "$BATS_TEST_TMPDIR/ui-browser.")" ""
}

@test "reportui.evidence-links: a grid cell leads to its evidence: a finding to its tests' TAP lines, a failure to its diagnostics, the kernel log, a tracer's first difference and reproducer; an older matrix is named by commit, not shown" {
	results_issues
	local d=$BATS_TEST_TMPDIR/in out=$BATS_TEST_TMPDIR/report
	ui_inputs "$d"
	run -0 ui_render "$d" "$out"
	run -0 cat "$out/index.html"
	assert_output --partial '<td class="repro"><a href="kernel-this-run.html#K1" title="by 1 test">reproduced</a></td>'
	assert_output --partial '<td class="skip"><a href="kernel-this-run.html#K3" title="skipped: requires uprobe_pmu: no PMU">not tested</a></td>'
	assert_output --partial '<td class="no"><a href="kernel-this-run.html#cap-uprobe_multi" title="not here">no</a></td>'
	assert_output --partial '<a href="log-this-run.txt">1 report</a>'
	assert_output --partial '<a href="tracer-bt.html#failures">1</a>'
	# named relative to the checkout when inside it (make check's tmp dirs)
	assert_output --partial '<li><code>'"${d#"$PROBECHECK_ROOT"/}"'/matrix-old</code>: a matrix of commit <code>0ld5678</code>, not this one</li>'
	refute_output --partial 'kernel-old1.html'
	run -0 cat "$out/kernel-this-run.html"
	assert_output --partial '<h3 id="K1">K1: <span class="repro">reproduced</span> (by 1 test)</h3>'
	assert_output --partial '<a href="#r1-s-1">s.red-zone: red zone</a>'
	assert_output --regexp '<tr id="r1-s-1">.*<pre>not ok 1 s.red-zone: red zone # in 12 ms'
	assert_output --partial '# kernel-symptom: redzone-call: evidence of s.red-zone: red zone'
	assert_output --partial 'a &lt;b&gt;plain&lt;/b&gt; &amp; failure'
	refute_output --partial '<b>plain</b>'
	cmp "$d/results/run/kernel-findings.txt" "$out/log-this-run.txt"
	run -0 cat "$out/kernel-b.html"
	assert_output --partial '# b-only diagnostic'
	run -0 cat "$out/tracer-bt.html"
	assert_output --partial '<p>First difference: <code>expected {&#34;args&#34;:[1]}; got {&#34;args&#34;:[2]}</code></p>'
	assert_output --partial '<a href="repro/bt/arguments-2/first-difference.txt">first-difference.txt</a>'
	cmp "$d/conformance/bt/repro/arguments-2/commands.txt" "$out/repro/bt/arguments-2/commands.txt"
}

@test "reportui.same-bytes: the same inputs give the same bytes but for index.html's date line, which SOURCE_DATE_EPOCH fixes too" {
	results_issues
	local d=$BATS_TEST_TMPDIR/in
	ui_inputs "$d"
	SOURCE_DATE_EPOCH=1000000000 ui_render "$d" "$BATS_TEST_TMPDIR/one" >/dev/null
	SOURCE_DATE_EPOCH=2000000000 ui_render "$d" "$BATS_TEST_TMPDIR/two" >/dev/null
	SOURCE_DATE_EPOCH=2000000000 ui_render "$d" "$BATS_TEST_TMPDIR/three" >/dev/null
	run -0 diff -r "$BATS_TEST_TMPDIR/two" "$BATS_TEST_TMPDIR/three"
	run -1 diff -r "$BATS_TEST_TMPDIR/one" "$BATS_TEST_TMPDIR/two"
	assert_equal "$(grep -c '^[<>]' <<<"$output")" 2
	assert_line '< <p class="date">Generated 2001-09-09 01:46 UTC by harness/report/report html.</p>'
	assert_line '> <p class="date">Generated 2033-05-18 03:33 UTC by harness/report/report html.</p>'
	[[ -s $BATS_TEST_TMPDIR/one/time.svg && -s $BATS_TEST_TMPDIR/one/cost.svg ]] || fail "a plot is missing"
	run -1 grep -l '<dc:date>' "$BATS_TEST_TMPDIR"/one/*.svg
}

@test "reportui.lazy-imports: every other report command works without jinja2 and matplotlib; report html then says what to install" {
	results_issues
	local d=$BATS_TEST_TMPDIR/in
	ui_host "$d/results"
	# An import of a module set to None in sys.modules fails.
	local py='import sys; sys.modules["jinja2"] = None; sys.modules["matplotlib"] = None
sys.path.insert(0, sys.argv[1]); from pcreport.cli import main; sys.exit(main(sys.argv[2:]))'
	run -0 "$UI_PYTHON3" -c "$py" "$PROBECHECK_ROOT/harness/report" results "$d/results" 42
	assert_line "# probecheck results"
	run -2 "$UI_PYTHON3" -c "$py" "$PROBECHECK_ROOT/harness/report" html "$BATS_TEST_TMPDIR/out" "$d/results" 42
	assert_output --partial "report: html: needs jinja2 and matplotlib, and $UI_PYTHON3 cannot import jinja2: on Debian 12, apt-get install python3-jinja2 python3-matplotlib"
	[[ ! -e $BATS_TEST_TMPDIR/out ]] || fail "report html wrote $BATS_TEST_TMPDIR/out without its packages"
}

@test "reportui.outdir-replaced: report html replaces a report it wrote, stale pages and all, and never a directory of something else" {
	results_issues
	local d=$BATS_TEST_TMPDIR/in out=$BATS_TEST_TMPDIR/report
	ui_host "$d/results"
	run -0 ui_render "$d" "$out"
	touch "$out/kernel-gone.html"
	run -0 ui_render "$d" "$out"
	[[ ! -e $out/kernel-gone.html && -f $out/index.html ]] || fail "the old report was not replaced whole"
	mkdir -p "$BATS_TEST_TMPDIR/mine"
	echo keep >"$BATS_TEST_TMPDIR/mine/notes"
	run -2 ui_render "$d" "$BATS_TEST_TMPDIR/mine"
	assert_output "report: html: '$BATS_TEST_TMPDIR/mine': exists and was not written by report html (no .report-html): not replaced"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/mine/notes")" keep
	[[ ! -e $BATS_TEST_TMPDIR/mine.tmp ]] || fail "report html left $BATS_TEST_TMPDIR/mine.tmp"
}
