#!/usr/bin/env bats
# structure.bats — the shape the code must keep: no include cycle among
# the C modules, no layer (providers/, harness/cli/, harness/tools/)
# including a higher one's header, every attach mode one file ending in its
# ops table, harness/ in rooms that use only what they may and never source
# suites/ (harness/run/include-graph), TAP read and verdicts decided only
# by the reporting module (harness/report/pcreport), and the checkable rules
# of the README's checklists and documents: every suite in its ci/ lists,
# every attach mode in its table and tests, every kernel in the workflow and
# the docs, every tracer adapter in its lists, every link and cited test
# there (harness/run/checklists).  Each rule is also shown failing on a
# small synthetic tree or a copy of this one, so a checker that stopped
# checking would be seen.
#
# bats file_tags=harness

load helpers/common
PC_REQUIRES=(cmd:python3)

graph() { run "$PROBECHECK_ROOT/harness/run/include-graph" "$@"; }

# tree D FILE TEXT...: a synthetic checkout D with FILE (under D) holding
# the lines TEXT.
tree() {
	local d=$1 f=$2
	shift 2
	mkdir -p "$(dirname "$d/$f")"
	printf '%s\n' "$@" >"$d/$f"
}

@test "structure.graph-clean: include graph: this checkout has no cycle, nothing upward, and every attach mode ends in its table" {
	graph
	assert_success
	assert_output --regexp '^include-graph: [0-9]+ modules, [0-9]+ edges, no cycle'
}

@test "structure.graph-cycle: include graph: a cycle through three modules is found and printed as a path" {
	d=$BATS_TEST_TMPDIR/t
	tree "$d" providers/a.c '#include "b.h"'
	tree "$d" providers/b.h '#include "c.h"'
	tree "$d" providers/c.c '#include "a.h"'
	tree "$d" providers/a.h '/* a */'
	tree "$d" providers/d.c '#include "a.h"'
	graph "$d"
	assert_failure 1
	assert_output 'include-graph: cycle: a -> b -> c -> a'
}

@test "structure.graph-upward: include graph: providers/ including a harness/ header is 'upward'" {
	d=$BATS_TEST_TMPDIR/t
	tree "$d" providers/x.c '#include "cli.h"'
	tree "$d" harness/cli/cli.h '/* cli */'
	tree "$d" harness/main.c '#include "x.h"' '#include "cli.h"'
	graph "$d"
	assert_failure 1
	assert_output 'include-graph: upward: providers/x includes harness/cli/cli.h'
}

@test "structure.rooms-no-loose: rooms: harness/ holds rooms and its README, no loose file" {
	local f loose=()
	for f in "$PROBECHECK_ROOT"/harness/*; do
		[[ -d $f || ${f##*/} == README.md ]] || loose+=("${f##*/}")
	done
	((${#loose[@]} == 0)) || fail "loose files in harness/: ${loose[*]}"
	for f in "$PROBECHECK_ROOT"/harness/*/; do
		[[ -r $f/README.md ]] || fail "room ${f%/} has no README.md"
	done
}

@test "structure.rooms-uses: rooms: a room running a file of a room it may not use, a room not listed, and harness/ sourcing suites/ are named" {
	d=$BATS_TEST_TMPDIR/t
	tree "$d" harness/report/x '#!/bin/bash' '"$root/harness/run/run-suites" out'
	tree "$d" harness/run/y '#!/bin/bash' '. "$root/harness/lib/caps.bash"' '# harness/kernels/matrix is only mentioned'
	tree "$d" harness/lib/z.bash '. "$root/suites/helpers/common.bash"'
	tree "$d" harness/attic/old '#!/bin/bash'
	graph "$d"
	assert_failure 1
	assert_output - <<-'EOF'
	include-graph: room harness/attic is not in ROOM_USES (what may it use?)
	include-graph: room: harness/lib/z.bash sources a file under suites/
	include-graph: room: harness/report/x uses harness/run/ (report may use: no other room)
	EOF
}

@test "structure.graph-cli-tool: include graph: harness/cli including a test tool's header is 'upward'" {
	d=$BATS_TEST_TMPDIR/t
	tree "$d" harness/cli/main.c '#include "peek.h"'
	tree "$d" harness/tools/peek.h '/* a tool */'
	graph "$d"
	assert_failure 1
	assert_output 'include-graph: upward: harness/cli/main includes harness/tools/peek.h'
}

@test "structure.graph-ops-table: include graph: an attach mode whose file does not end in its ops table is named" {
	d=$BATS_TEST_TMPDIR/t
	tree "$d" providers/attach_ok.c 'const struct attach_ops attach_ok_ops = {' '	.ao_name = "ok",' '};'
	tree "$d" providers/attach_late.c 'const struct attach_ops attach_late_ops = {' '	.ao_name = "late",' '};' 'static int after(void) { return 0; }'
	graph "$d"
	assert_failure 1
	assert_output --partial "providers/attach_late.c does not end in its ops table"
	refute_output --partial "attach_ok.c"
}

# tap_greps FILE...: lines that grep, awk or sed a TAP result ("not ok",
# "^ok ") outside a comment.
tap_greps() {
	grep -HnE "^[^#]*(grep|awk|sed)[^#]*('\^?not ok|\"\^?not ok|\^ok )" "$@" 2>/dev/null
}

# A script that reads TAP or decides pass/fail itself would disagree with
# the report some day (it did: write-matrix's copy of the kernel-log
# patterns drifted).  Allowed: bisect-git shows an old commit's failing
# lines to a person (its verdict is the run's exit status), bisect-selftest
# writes TAP of its own.  Every file under harness/, at any depth (a glob
# of harness/* would hand grep the rooms, directories, and check nothing).
@test "structure.tap-only-report: reporting: no script outside harness/report/pcreport parses TAP" {
	cd "$PROBECHECK_ROOT"
	run -1 bash -c "$(declare -f tap_greps); tap_greps \$(find harness -type f ! -path 'harness/report/pcreport/*') ci/* .ci/* Makefile | grep -vE '^harness/kernels/(bisect-git|bisect-selftest):'"
	assert_output ''
}

@test "structure.tap-check-planted: reporting: the TAP check above finds a script that greps for 'not ok'" {
	d=$BATS_TEST_TMPDIR/t
	tree "$d" harness/verdict "#!/bin/bash" "grep -q '^not ok' \"\$1\" && echo FAIL" "# grep 'not ok' in a comment"
	run -0 tap_greps "$d"/harness/*
	assert_output "$d/harness/verdict:2:grep -q '^not ok' \"\$1\" && echo FAIL"
}

@test "structure.matrix-presets: matrix presets: -s core expands ci/matrix-core, every name a suite; a wrong name is exit 2 naming it" {
	# Up to the kernel selection (a name no kernel has): the suites are
	# checked before it.
	run -2 "$PROBECHECK_ROOT/harness/kernels/matrix" -s core -k no-such-kernel -o "$BATS_TEST_TMPDIR/m"
	assert_output --partial "kernel 'no-such-kernel'"
	# Not empty (which would mean every suite) and not the harness's own.
	run -0 bash -c "sed 's/#.*//' '$PROBECHECK_ROOT/ci/matrix-core' | xargs"
	assert_output --regexp '(^| )preempt( |$)'
	refute_output --regexp '(^| )(harness|report|matrix|structure)( |$)'
	run -2 "$PROBECHECK_ROOT/harness/kernels/matrix" -s arguments,no-such-suite -k no-such-kernel -o "$BATS_TEST_TMPDIR/m"
	assert_output --partial "suite 'no-such-suite': no suites/no-such-suite.bats"
}

# guard_spills OBJ: every guarded program (pc.bpf.c: GUARDED) whose stack
# is written before its first call (bpf_preempt_disable): a spill there
# is outside the guard, where a preempting hit could overwrite it (K5).
guard_spills() {
	llvm-objdump -d --no-show-raw-insn "$1" | awk '
		/^[0-9a-f]+ <[A-Za-z_0-9]+>:$/ {
			name = $2; gsub(/[<>:]/, "", name)
			watch = name ~ /^(pc_usdt|pc_usdt_multi|pc_place_list|pc_place_findvma)$/
			seen[name] = watch; next
		}
		watch && /call/ { watch = 0 }
		watch && /\*\([^)]*\)\(r10 [-+] *[0-9]+\) =/ { print name ": " $0; watch = 0 }
		END { for (n in seen) if (!seen[n] && n ~ /^(pc_usdt|pc_place_list)$/) print n ": not found" }'
}

@test "structure.bpf-stack-guard: BPF object: the guarded programs write nothing to their stack before bpf_preempt_disable" {
	requires cmd:llvm-objdump
	local obj=$PROBECHECK_BUILD/bpf/pc.bpf.o
	[[ -s $obj ]] || fail "no BPF object '$obj' (make first)"
	run -0 guard_spills "$obj"
	assert_output ''
	# The same check on a program that spills first (what pc.bpf.c's
	# inlined bodies compiled to): seen.
	cat >"$BATS_TEST_TMPDIR/s.bpf.c" <<-'C'
	struct pt_regs;
	extern int f(struct pt_regs *, int) __attribute__((section(".ksyms"), weak));
	__attribute__((section("uprobe"), used)) int pc_usdt(struct pt_regs *ctx)
	{
		volatile long x = (long)ctx;
		f(ctx, 1);
		return (int)x;
	}
	C
	clang -O2 -target bpf -c "$BATS_TEST_TMPDIR/s.bpf.c" -o "$BATS_TEST_TMPDIR/s.o" ||
		fail "cannot compile the planted program"
	run -0 guard_spills "$BATS_TEST_TMPDIR/s.o"
	assert_output --partial 'pc_usdt: '
}

@test "structure.conformance-suites: conformance: every suite of ci/conformance-suites exists; an unknown tracer or suite is exit 2 naming it and what there is" {
	local s
	for s in $(sed -e 's/#.*//' "$PROBECHECK_ROOT/ci/conformance-suites"); do
		[[ -f $PROBECHECK_ROOT/suites/$s.bats ]] || fail "ci/conformance-suites: no suites/$s.bats"
	done
	run -2 "$PROBECHECK_ROOT/harness/run/conformance" "$BATS_TEST_TMPDIR/c" probecheck nosuchtracer
	assert_output --partial "tracer 'nosuchtracer': no adapter harness/tracers/nosuchtracer (there are: "
	assert_output --partial "bpftrace"
	CONFORMANCE_SUITES="arguments nosuchsuite" run -2 "$PROBECHECK_ROOT/harness/run/conformance" "$BATS_TEST_TMPDIR/c" probecheck
	assert_output --partial "suite 'nosuchsuite': no suites/nosuchsuite.bats"
	run -2 "$PROBECHECK_ROOT/harness/run/conformance" "$BATS_TEST_TMPDIR/c"
	assert_output --partial "usage: conformance OUTDIR TRACER..."
	[[ ! -e $BATS_TEST_TMPDIR/c ]] || fail "a refused run created its output directory"
}

# ---------------------------------------------------------------------------
# the README's checklists (harness/run/checklists): each rule on this
# checkout, then shown failing on a copy of it with one kind of violation
# planted.

checklists() { run "$PROBECHECK_ROOT/harness/run/checklists" "$@"; }

# copy_tree D: this checkout's sources in D (no build output, no .git).
copy_tree() {
	local d=$1 f
	mkdir -p "$d"
	for f in "$PROBECHECK_ROOT"/* "$PROBECHECK_ROOT"/.ci; do
		[[ ${f##*/} == build* ]] || cp -a "$f" "$d/"
	done
}

@test "structure.checklists-clean: checklists: this checkout keeps every rule of the README's checklists" {
	checklists
	assert_success
	assert_output ''
}

@test "structure.checklists-suite: checklists: a new suite in no conformance list, tagged harness not first, and a suite listed twice are named" {
	d=$BATS_TEST_TMPDIR/t
	copy_tree "$d"
	printf '%s\n' '#!/usr/bin/env bats' '# bats file_tags=newtopic,harness' 'load helpers/common' >"$d/suites/newtopic.bats"
	sed -i '/file_tags=/d' "$d/suites/strings.bats"
	echo 'pipeline      # planted: also in ci/conformance-excluded' >>"$d/ci/conformance-suites"
	checklists "$d"
	assert_failure 1
	assert_output - <<-'EOF'
	checklists: suites/newtopic.bats: tag harness not first in 'newtopic,harness' (harness/kernels/matrix would run it as a kernel suite)
	checklists: suites/strings.bats: 0 '# bats file_tags=' lines, expected 1
	checklists: suites/newtopic.bats: in ci/conformance-suites and ci/conformance-excluded 0 times, expected once in one of them
	checklists: suites/pipeline.bats: in ci/conformance-suites and ci/conformance-excluded 2 times, expected once in one of them
	EOF
}

@test "structure.checklists-ci-lists: checklists: a ci/ list naming no suite, a stale ci/slow-tests row and a ci/kernel-issues entry finding no test are named" {
	d=$BATS_TEST_TMPDIR/t
	copy_tree "$d"
	echo 'gone          # planted' >>"$d/ci/matrix-core"
	printf 'providers/log.c\tbadinput nosuite\n' >>"$d/ci/mutate-suites"
	printf 'faults.no-such-test\tplanted\n' >>"$d/ci/slow-tests"
	printf '\nid: K99\nsymptom: planted\ntitle: planted\ntests: pipeline.no-such-test\n' >>"$d/ci/kernel-issues"
	checklists "$d"
	assert_failure 1
	assert_output - <<-'EOF'
	checklists: ci/matrix-core: 'gone': no suites/gone.bats
	checklists: ci/mutate-suites: 'nosuite': no suites/nosuite.bats
	checklists: ci/slow-tests: 'faults.no-such-test' names no test (no test ID matches it)
	checklists: ci/kernel-issues: K99: tests 'pipeline.no-such-test' names no test (no test ID matches it)
	EOF
}

@test "structure.mutate-paths: the mutation runner's scripts exist where it runs them, and the unit binaries it leaves to a suite are the Makefile's UNITS_WAIT, each run by a suite" {
	run -0 /usr/bin/python3 - "$PROBECHECK_ROOT" <<-'EOF'
	import os, sys
	root = sys.argv[1]
	sys.path[:0] = [os.path.join(root, "harness", "run", "pcmutate"), os.path.join(root, "harness", "report")]
	import mut_check
	class T: src = root
	c = mut_check.Checks(T, None, None)
	for p in [c.sweep] + [os.path.join(c.h, n) for n in ("run-unit", "run-suites", "run-valgrind")]:
	    print(("ok " if os.access(p, os.X_OK) else "missing ") + os.path.relpath(p, root))
	supp = mut_check.SAN_ENV(root)["LSAN_OPTIONS"].split("=", 1)[1]
	print(("ok " if os.path.isfile(supp) else "missing ") + os.path.relpath(supp, root))
	print("wait " + " ".join(sorted(mut_check.wait_units(root))))
	EOF
	refute_line --partial missing
	assert_line "ok harness/run/pcmutate/sweep"
	wait=$(make -s --no-print-directory -C "$PROBECHECK_ROOT" NO_INSTALL=1 \
		--eval='pc-print-wait: ; @echo $(notdir $(UNITS_WAIT))' pc-print-wait)
	[[ -n $wait ]] || fail "the Makefile's UNITS_WAIT is empty"
	assert_line "wait $wait"
	# Left out of every unit phase, each is run by a suite.
	for w in $wait; do
		grep -q "/unit/$w\"" "$PROBECHECK_ROOT"/suites/*.bats || fail "$w: in UNITS_WAIT, run by no suite"
	done
}

@test "structure.checklists-mutate: checklists: a providers/ file no line of ci/mutate-suites matches is named" {
	d=$BATS_TEST_TMPDIR/t
	copy_tree "$d"
	echo '/* planted */' >"$d/providers/ringbuf.c"
	sed -i 's|^providers/log.c\tbadinput$|providers/log.c\t|' "$d/ci/mutate-suites"
	checklists "$d"
	assert_failure 1
	assert_output - <<-'EOF'
	checklists: providers/log.c: its line in ci/mutate-suites names no check
	checklists: providers/ringbuf.c: no line of ci/mutate-suites matches it (its mutants would run the unit tests only)
	EOF
}

@test "structure.checklists-modes-table: checklists: an attach mode file not in attach_modes[], and an entry with no file, are named" {
	d=$BATS_TEST_TMPDIR/t
	copy_tree "$d"
	printf '%s\n' 'const struct attach_ops attach_uring_ops = {' '	.ao_name = "uring",' '};' >"$d/providers/attach_uring.c"
	printf 'providers/attach_uring.c\tattach\n' >>"$d/ci/mutate-suites"
	sed -i 's|^\t&attach_multi_ops,$|&\n\t\&attach_ghost_ops,|' "$d/providers/attach.c"
	checklists "$d"
	assert_failure 1
	assert_output - <<-'EOF'
	checklists: providers/attach_uring.c: attach_uring_ops is not in attach_modes[] (providers/attach.c)
	checklists: attach_modes[]: attach_ghost_ops has no providers/attach_ghost.c
	EOF
}

@test "structure.checklists-modes-tests: checklists: a mode in attach_modes[] that the tests do not know is named everywhere it is missing" {
	d=$BATS_TEST_TMPDIR/t
	copy_tree "$d"
	printf '%s\n' 'const struct attach_ops attach_uring_ops = {' '	.ao_name = "uring",' '};' >"$d/providers/attach_uring.c"
	printf 'providers/attach_uring.c\tattach\n' >>"$d/ci/mutate-suites"
	sed -i 's|^\t&attach_multi_ops,$|&\n\t\&attach_uring_ops,|' "$d/providers/attach.c"
	checklists "$d"
	assert_failure 1
	assert_line 'checklists: harness/lib/caps.bash: pc_mode_caps has no case for attach mode '\''uring'\'''
	assert_line 'checklists: harness/run/soak: default modes '\''perf,tracefs,multi'\'' lack '\''uring'\'''
	assert_line 'checklists: suites/attachpaths.bats: no test calls '\''check_semaphores uring'\'' (check_semaphores is called with multi, perf, tracefs)'
	assert_line 'checklists: suites/insn.bats: no test calls '\''case_a uring'\'' (case_a is called with multi, perf, tracefs)'
	# One test of a mode gone is seen too.
	d=$BATS_TEST_TMPDIR/u
	copy_tree "$d"
	sed -i '/{ check_follow tracefs; }$/d' "$d/suites/attachpaths.bats"
	checklists "$d"
	assert_failure 1
	assert_output "checklists: suites/attachpaths.bats: no test calls 'check_follow tracefs' (check_follow is called with multi, perf)"
}

@test "structure.actionlint-workflow: actionlint: the GitHub workflow passes; a job that needs no such job, an unknown key and a YAML syntax error in a copy fail it" {
	local lint=$PROBECHECK_ROOT/harness/run/actionlint y=$BATS_TEST_TMPDIR/m.yml
	requires cmd:node
	run -0 "$lint" "$PROBECHECK_ROOT/ci/github/matrix.yml"
	assert_output ''
	sed -e 's/needs: kernel$/needs: kernels/' -e 's/^    timeout-minutes:/    timeout-minute:/' \
		"$PROBECHECK_ROOT/ci/github/matrix.yml" >"$y"
	run -1 "$lint" "$y"
	assert_line --regexp "^$y:[0-9]+:[0-9]+: job \"table\" needs job \"kernels\" which does not exist .*\\[job-needs\\]$"
	assert_line --regexp "^$y:[0-9]+:[0-9]+: unexpected key \"timeout-minute\" for \"job\" section.*\\[syntax-check\\]$"
	printf 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo "a: b"\n' >"$y"
	run -1 "$lint" "$y"
	assert_output --partial "$y:0:0: actionlint could not check it"
}

@test "structure.checklists-kernels: checklists: a kernel missing from the workflow and the docs, and a CI kernel not in ci/kernels, are named" {
	d=$BATS_TEST_TMPDIR/t
	copy_tree "$d"
	echo 'debian-6.12-arm deb:linux-image-6.12.*+deb12-arm64' >>"$d/ci/kernels"
	sed -i 's/debian-5.10-cloud debian-sid-cloud"/debian-5.10-cloud debian-7.0-cloud"/' "$d/.ci/run"
	sed -i 's/, debian-sid-cloud\]/, debian-sid-cloud, debian-old]/' "$d/ci/github/matrix.yml"
	checklists "$d"
	assert_failure 1
	assert_output - <<-'EOF'
	checklists: ci/kernels: debian-6.12-arm has no job in ci/github/matrix.yml (matrix: kernel: [...])
	checklists: ci/github/matrix.yml: kernel 'debian-old' is not a name in ci/kernels
	checklists: docs/kernels.md: no row '| debian-6.12-arm |' in the kernels' table
	checklists: .ci/run: KERNELS names 'debian-7.0-cloud', not a name in ci/kernels
	EOF
}

# plant_test FILE NAME: a test named NAME at the end of FILE (written so
# that this file holds no test of that name for checklists to find).
plant_test() {
	printf '%s "%s" {\n\ttrue\n}\n' "@test" "$2" >>"$1"
}

@test "structure.checklists-ids: checklists: a test without an ID, a malformed, foreign or duplicated ID, and an ID that ci/kernel-issues, ci/slow-tests, ci/conformance-* or a document names but no test has are named" {
	d=$BATS_TEST_TMPDIR/t
	copy_tree "$d"
	plant_test "$d/suites/pipeline.bats" "no id here"
	plant_test "$d/suites/pipeline.bats" "pipeline.Bad_Id: malformed"
	plant_test "$d/suites/pipeline.bats" "follow.not-here: of another suite"
	plant_test "$d/suites/pipeline.bats" "pipeline.ring-drops: a second time"
	# A test generated for a nested run ("TEST name {") needs one too.
	printf '\t%s "generated without one" { true; }\n' TEST >>"$d/suites/harness.bats"
	# IDs that disappear: the lists and the documents still name them.
	sed -i 's/"preempt\.unguarded-threads: /"preempt.unguarded-runs: /' "$d/suites/preempt.bats"
	sed -i 's/"faults\.soak-sample: /"faults.soak-run: /' "$d/suites/faults.bats"
	sed -i 's/"follow\.orphan-kept: /"follow.orphan-joined: /' "$d/suites/follow.bats"
	echo '# planted: see arguments.no-such-test' >>"$d/ci/conformance-excluded"
	checklists "$d"
	assert_failure 1
	assert_line --regexp '^checklists: suites/pipeline\.bats:[0-9]+: test "no id here" has no ID \(a name starts "pipeline\.word-word: "\)$'
	assert_line --regexp "^checklists: suites/pipeline\\.bats:[0-9]+: ID 'pipeline\\.Bad_Id' is malformed "
	assert_line --regexp "^checklists: suites/pipeline\\.bats:[0-9]+: ID 'follow\\.not-here' is not of this suite \\(pipeline\\.word-word\\)$"
	assert_line --regexp "^checklists: suites/pipeline\\.bats:[0-9]+: ID 'pipeline\\.ring-drops' is given twice \\(also suites/pipeline\\.bats:[0-9]+\\)$"
	assert_line --regexp '^checklists: suites/harness\.bats:[0-9]+: test "generated without one" has no ID '
	assert_line "checklists: ci/kernel-issues: K5: tests 'preempt.unguarded-threads' names no test (no test ID matches it)"
	assert_line "checklists: ci/slow-tests: 'faults.soak-sample' names no test (no test ID matches it)"
	assert_line "checklists: ci/conformance-excluded: 'arguments.no-such-test' names no test (no test ID matches it)"
	assert_line "checklists: docs/testing.md: 'follow.orphan-kept' names no test (no test ID matches it)"
}

@test "structure.checklists-adapters: checklists: an adapter not executable, in no list and no doc, and claims out of step are named" {
	d=$BATS_TEST_TMPDIR/t
	copy_tree "$d"
	printf '#!/bin/sh\n' >"$d/harness/tracers/stap"
	chmod -x "$d/harness/tracers/stap"
	sed -i 's/^| `star` |/| `uprobe_multi` | planted |\n&/' "$d/harness/tracers/README.md"
	# (Its name spelled through %s: this file must not ask for it.)
	printf '%s "arguments.planted-claim: planted" {\n\trequires tracer:usdt tracer:%s\n}\n' @test usdtt >>"$d/suites/arguments.bats"
	checklists "$d"
	assert_failure 1
	assert_output - <<-'EOF'
	checklists: harness/tracers/stap: not executable (suites/tracers.bats would pass over it)
	checklists: Makefile: default TRACERS 'probecheck bpftrace bcc perf libbpf' lack adapter 'stap'
	checklists: docs/tracers.md: adapter 'stap' is not named (as `stap`)
	checklists: suites/tracers.bats: CLAIMS lack 'uprobe_multi' (harness/tracers/README.md claims it)
	checklists: suites/arguments.bats: requires tracer:usdtt, not a claim of harness/tracers/README.md
	EOF
}

@test "structure.checklists-docs: checklists: a link to no file, a link to no heading and a cited test that does not exist are named" {
	d=$BATS_TEST_TMPDIR/t
	copy_tree "$d"
	echo 'See [the old reference](docs/reference.md) and [modes](docs/attach-modes.md#the-mode).' >>"$d/README.md"
	echo 'Backed by *pipeline*: "no such test, planted".' >>"$d/docs/testing.md"
	# A link inside code is not a link.
	echo 'Write `[x](nowhere.md)` for a link.' >>"$d/docs/cli.md"
	checklists "$d"
	assert_failure 1
	assert_output - <<-'EOF'
	checklists: README.md: link 'docs/reference.md': no file docs/reference.md
	checklists: README.md: link 'docs/attach-modes.md#the-mode': no heading #the-mode in docs/attach-modes.md
	checklists: docs/testing.md: cites *pipeline*: "no such test, planted": no such test in suites/pipeline.bats
	EOF
}

# What probing the kernel or the machine looks like, as triples
# SIGNATURE (grep -E), FILES ALSO ALLOWED (a regex on the path; '' none),
# WHAT.  Each is a primitive a registry probe uses (providers/features*.c);
# the PMU's own file (uprobe_pmu.[ch]) reads its sysfs files as the
# mechanism, the only exception.  A signature that matched nothing on the
# tree before the registry would prove nothing: each matched one of the
# seven places that probed on their own (attach.c, attach_multi.c,
# attach_perf.c, attach_tracefs.c, uprobe_pmu.c, harness/cli's
# cmd_features.c and features_x86.c, harness/lib/caps.bash).
PROBE_SIGS=(
	'helper_loads\(|bpf_prog_load\(|bpf_map_create\(' ''
	'makes a BPF program or map outside the skeleton (a feature probe)'
	'btf__load_vmlinux_btf|/sys/kernel/btf/vmlinux' ''
	"reads the kernel's BTF"
	'BPF_FUNC_get_attach_cookie|BPF_FUNC_find_vma|"bpf_preempt_disable"' ''
	'looks for a BPF helper or kfunc'
	'uprobe_pmu_(type|bit)\(|devices/uprobe' '^providers/uprobe_pmu\.[ch]$'
	"reads the uprobe PMU's sysfs files"
	'W_OK|\[\[ -[rwx] [^]]*(uprobe_events|/sys/kernel/btf|devices/uprobe)|/proc/filesystems' ''
	'tests whether a kernel file is there or writable'
	'syscall\((335|336)|uprobes-trampoline' ''
	'tries the uprobe syscalls or their trampoline'
	'geteuid\(\) *== *0|!geteuid\(\)|\$\(id -u\)|\bEUID\b' ''
	'checks for root'
	'bpftool +[a-z]+ +show +>/dev/null' ''
	'runs bpftool for its exit status (a probe of the bpf syscall)'
)

# probe_sites ROOT: every line of ROOT's providers/, harness/cli/ and
# harness/lib/ that probes outside the registry, as "FILE:LINE: WHAT".
probe_sites() {
	local root=$1 i hit f
	for ((i = 0; i < ${#PROBE_SIGS[@]}; i += 3)); do
		while IFS= read -r hit; do
			[[ -n $hit ]] || continue
			f=${hit#"$root/"} f=${f%%:*}
			[[ $f == providers/features*.[ch] ]] && continue
			[[ -n ${PROBE_SIGS[i + 1]} && $f =~ ${PROBE_SIGS[i + 1]} ]] && continue
			printf '%s:%s: %s\n' "$f" "$(cut -d: -f2 <<<"${hit#"$root/"}")" "${PROBE_SIGS[i + 2]}"
		done < <(grep -rnE --include='*.c' --include='*.h' --include='*.bash' \
			"${PROBE_SIGS[i]}" "$root/providers" "$root/harness/cli" "$root/harness/lib" 2>/dev/null)
	done
}

@test "structure.registry-clean: feature registry: nothing in providers/, harness/cli/ or harness/lib/ probes the kernel outside providers/features*.c" {
	run -0 probe_sites "$PROBECHECK_ROOT"
	assert_output ''
}

@test "structure.registry-planted: feature registry: the check above names a probe planted outside the registry, not the registry's own or the PMU's mechanism" {
	d=$BATS_TEST_TMPDIR/t
	tree "$d" providers/features_bpf.c 'struct btf *b = btf__load_vmlinux_btf();'
	tree "$d" providers/uprobe_pmu.c 'int t = uprobe_pmu_type();'
	tree "$d" providers/attach_new.c '/* ok */' 'if (helper_loads(BPF_FUNC_find_vma))'
	tree "$d" harness/cli/cmd_x.c 'int t = uprobe_pmu_type();'
	tree "$d" harness/lib/caps.bash 'bpftool prog show >/dev/null 2>&1 && ok=1' '[[ $(id -u) == 0 ]]'
	run -0 probe_sites "$d"
	assert_output - <<-'OUT'
	providers/attach_new.c:2: makes a BPF program or map outside the skeleton (a feature probe)
	providers/attach_new.c:2: looks for a BPF helper or kfunc
	harness/cli/cmd_x.c:1: reads the uprobe PMU's sysfs files
	harness/lib/caps.bash:2: checks for root
	harness/lib/caps.bash:1: runs bpftool for its exit status (a probe of the bpf syscall)
	OUT
}

@test "structure.mutation-map: mutation map: every providers/ source file has a row in ci/mutate-suites (a new file would be mutated against the unit tests alone)" {
	local f glob ok missing=()
	cd "$PROBECHECK_ROOT"
	for f in providers/*.c providers/bpf/*.bpf.c; do
		ok=0
		while IFS=$'\t' read -r glob _; do
			[[ -z $glob || $glob == '#'* ]] && continue
			# shellcheck disable=SC2053  # the glob is a pattern
			[[ $f == $glob ]] && { ok=1; break; }
		done <ci/mutate-suites
		((ok)) || missing+=("$f")
	done
	((${#missing[@]} == 0)) || fail "no row in ci/mutate-suites: ${missing[*]}"
}

@test "structure.serial-reasons: serial suites: each suite tagged serial says why, in a '# serial:' comment above its tags" {
	local f bad=()
	for f in "$PROBECHECK_ROOT"/suites/*.bats; do
		grep -qE '^# bats file_tags=(.*,)?serial(,|$)' "$f" || continue
		grep -qE '^# serial: .{20,}' "$f" || bad+=("${f##*/}")
	done
	((${#bad[@]} == 0)) || fail "tagged serial without a '# serial: REASON' line: ${bad[*]}"
}

@test "structure.mutate-no-twins: mutation candidates: no two on one line are the same program (an OBO x < k+1 beside the ROR x <= k), and every ci/mutants-equivalent entry is a candidate" {
	cd "$PROBECHECK_ROOT"
	harness/run/mutate --list >"$BATS_TEST_TMPDIR/cands" || fail "mutate --list failed"
	python3 - "$BATS_TEST_TMPDIR/cands" ci/mutants-equivalent <<'PY' || fail "see above"
import re, sys
seen, ids, bad = {}, set(), 0
for l in open(sys.argv[1]):
    if '  =>  ' not in l or not re.match(r'^[0-9a-f]{8} ', l):
        continue
    cid, op, loc = l.split()[:3]
    ids.add(cid)
    after = re.sub(r'\s+', '', l.split('  =>  ', 1)[1])
    # integers: x<k+1 is x<=k, x>=k+1 is x>k (both written as constants)
    canon = re.sub(r'(<|>=)(\d+)(?=[^\d]|$)', lambda m: {'<': '<=', '>=': '>'}[m.group(1)] + str(int(m.group(2)) - 1), after)
    key = (loc.rsplit(':', 1)[0], canon)
    if key in seen:
        print(f"{cid} is the same program as {seen[key]}: {after}")
        bad = 1
    seen[key] = cid
for l in open(sys.argv[2]):
    if l.strip() and not l.startswith('#') and l.split('\t')[0] not in ids:
        print(f"ci/mutants-equivalent: {l.split(chr(9))[0]} is not a candidate any more")
        bad = 1
sys.exit(bad)
PY
}
