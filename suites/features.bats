#!/usr/bin/env bats
# features.bats — the tracer's kernel feature probes (`probecheck
# features`, which every run's capability file comes from) against what
# was measured on this kernel before (ci/kernel-caps).  `requires` turns a
# capability probed "no" into SKIPs, so a broken probe would otherwise
# pass every suite with fewer tests run.
#
# The capabilities are the rows of the tracer's feature registry
# (providers/features.h); a row travels from its table to `probecheck
# features`, the run's capability file (harness/lib/caps.bash) and
# RESULTS.md with nothing else to change, as the fake row shows.
#
# bats file_tags=features

load helpers/common
load helpers/results

PC_REQUIRES=(root)

# ci/kernel-caps' row for release $1; else, where the release differs
# from measured ones only in its last number (a local build id: the
# host's 6.18.44-fc-v669, -v782, -v657 are one kernel source built
# apart), their row if they all agree; else nothing.
caps_measured() {
	local rows base
	rows=$(awk -F'\t' -v k="$1" '!/^#/ && $1 == k { print $2 }' "$PROBECHECK_ROOT/ci/kernel-caps")
	if [[ -z $rows && $1 =~ [0-9]+$ ]]; then
		base=${1%"${BASH_REMATCH[0]}"}
		[[ -n $base && $base =~ [^0-9.]$ ]] || return 0
		rows=$(awk -F'\t' -v b="$base" '!/^#/ && index($1, b) == 1 &&
			substr($1, length(b) + 1) ~ /^[0-9]+$/ { print $2 }' \
			"$PROBECHECK_ROOT/ci/kernel-caps" | sort -u)
		[[ $(wc -l <<<"$rows") == 1 ]] || rows=
	fi
	echo "$rows"
}

@test "features.kernel-caps: the capabilities probed on this kernel are the ones measured on it before (ci/kernel-caps)" {
	local caps want c v got why feat bad=()
	unset PROBECHECK_SITE_ID	# what the kernel decides, not a forced choice
	caps=$(pc_caps_file)
	feat=$(pc features) || fail "probecheck features failed"
	want=$(caps_measured "$(uname -r)")
	[[ -n $want ]] || skip "kernel $(uname -r) not measured before: once its 'probecheck features' is checked, add to ci/kernel-caps: $(uname -r)	$(grep -E '^[a-z_0-9]+=[01]$' "$caps" | grep -v '^root=' | tr '\n' ' ')"
	for c in $want; do
		v=${c#*=} c=${c%%=*}
		got=$(sed -n "s/^$c=//p" "$caps")
		[[ -n $got ]] || got=$(sed -n "s/^$c=//p" <<<"$feat")
		[[ $got == "$v" ]] && continue
		why=$(sed -n "s/^${c}_why=//p" "$caps")
		bad+=("$c: probed ${got:-(missing)}, measured $v${why:+ ($why)}")
	done
	((${#bad[@]} == 0)) || fail "$(printf '%s\n' "${bad[@]}")"
}

# What a kernel without a feature answers, emulated: pc-deny refuses the
# system call the feature needs (seccomp), so the tracer's probe and its
# fallback meet the refusal as they would on an older kernel, here.
deny() {
	PC_WRAP=("$PC_TOOLS/pc-deny" "$@" --)
}

@test "features.no-bpf-links: no BPF links (BPF_LINK_CREATE refused, as before 5.7): features says no uprobe_multi with the kernel's reason, auto traces through perf by place, exact" {
	requires bpf uprobe_pmu
	local -a PC_WRAP
	local fx o t
	deny bpf:LINK_CREATE
	run -0 pc features
	assert_line uprobe_multi=0
	assert_line uprobe_multi_pid=0
	assert_line --regexp '^uprobe_multi_why=BPF_LINK_CREATE with BPF_TRACE_UPROBE_MULTI: Invalid argument'
	assert_line attach_auto=perf
	assert_line attach_auto_all=perf
	# A cookie needs a perf link (libbpf: "user context value is not
	# supported"): without links, sites go by place, as before 5.15.
	export PROBECHECK_SITE_ID=place
	fx=$(fx_bin gcc_O2_pie)
	o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	pc trace -v --json -c "$fx --oracle $o fire:fx:a1:2 fire:fx:a3:2" "usdt:$fx:fx:a1" "usdt:$fx:fx:a3" \
		>"$t" 2>"$t.err" || fail "trace exited $?: $(tail -n 3 "$t.err")"
	grep -q 'attach: auto: perf' "$t.err" || fail "auto did not say it chose perf: $(grep 'auto' "$t.err")"
	assert_oracle "$o" "$t"
	# --attach=multi is refused before anything loads, with the probe's
	# reason (on 5.10 its programs once reached the verifier, which
	# refused bpf_get_attach_cookie with a 30-line log and no reason).
	run -1 --separate-stderr pc trace --attach=multi -c "$fx fire:fx:a1:1" "usdt:$fx:fx:a1"
	assert_output ''
	[[ $stderr == "probecheck: attach: --attach=multi does not work here: BPF_LINK_CREATE with BPF_TRACE_UPROBE_MULTI: "* ]] ||
		fail "not refused with the reason: $stderr"
	(($(wc -l <<<"$stderr") == 1)) || fail "more than the reason: $stderr"
}

@test "features.no-bpf-cookie: no bpf_cookie (BPF_PROG_LOAD refused, as a kprobe program calling bpf_get_attach_cookie is before 5.15): features says no and goes by place" {
	requires bpf
	local -a PC_WRAP
	deny bpf:PROG_LOAD
	run -0 pc features
	assert_line bpf_cookie=0
	assert_line --regexp '^bpf_cookie_why=bpf_get_attach_cookie not allowed in kprobe programs'
	assert_line sites_by_place=1
	assert_line uprobe_multi=0
	assert_line attach_auto=perf
}

@test "features.perf-open-refused: perf_event_open refused (a locked-down kernel): the PMU is still found, a trace fails naming the site and the refusal (exit 1), nothing left" {
	requires bpf
	local -a PC_WRAP
	local fx
	deny -e EACCES perf_event_open
	run -0 pc features
	assert_line uprobe_pmu=1
	fx=$(fx_bin gcc_O2_pie)
	run -1 --separate-stderr pc trace --attach=perf -c "$fx fire:fx:a1:1" "usdt:$fx:fx:a1"
	assert_output ''
	[[ $stderr =~ "uprobe: '$fx' offset 0x"[0-9a-f]+" (fx:a1): Permission denied" ]] ||
		fail "site or reason not named: $stderr"
}

@test "features.no-bpf: the bpf syscall refused (BPF_MAP_CREATE: EPERM, as without CAP_BPF): features says bpf=0 with the reason, a trace fails saying the program cannot load (exit 1), nothing left" {
	requires bpf
	local -a PC_WRAP
	local fx
	deny -e EPERM bpf:MAP_CREATE
	run -0 pc features
	assert_line bpf=0
	assert_line 'bpf_why=bpf syscall refused (BPF_MAP_CREATE of an array map: Operation not permitted; CONFIG_BPF_SYSCALL, root or CAP_BPF)'
	fx=$(fx_bin gcc_O2_pie)
	run -1 --separate-stderr pc trace -c "$fx fire:fx:a1:1" "usdt:$fx:fx:a1"
	assert_output ''
	[[ $stderr == *"probecheck: bpf: cannot load the BPF program: Operation not permitted"* ]] ||
		fail "the refusal not said: $stderr"
}

@test "features.counters-unreadable: the kernel refusing map lookups (BPF_MAP_LOOKUP_ELEM: EPERM): events still printed, the summary says its counts are unknown with the reason and exits 1, never zeros that read as nothing dropped" {
	requires bpf
	local -a PC_WRAP
	local fx
	deny -e EPERM bpf:MAP_LOOKUP_ELEM
	fx=$(fx_bin gcc_O2_pie)
	for n in 2 0; do
		run -1 --separate-stderr pc trace -c "$fx fire:fx:a1:$n" "usdt:$fx:fx:a1"
		# The tracer's text lines, not the fixture's own JSON ones.
		(($(grep -cE '^[0-9]+ [0-9]+ [0-9]+ [0-9]+ fx:a1 ' <<<"$output") == n)) ||
			fail "$n fires: not $n events: $output"
		assert_equal "$(grep -c 'counts are unknown' <<<"$stderr")" 1
		[[ $stderr == *"session: pc_counters cannot be read: Operation not permitted; the counts are unknown"* ]] ||
			fail "$n fires: the reason not given: $stderr"
		[[ $stderr == *"summary: delivered=$n dropped=unknown hits=unknown"* ]] ||
			fail "$n fires: the summary does not say its counts are unknown: $stderr"
	done
}

@test "features.no-uprobe-pmu: no uprobe PMU (sysfs hidden in a mount namespace, as before 4.17): features says so, --attach=perf fails with the same reason, naming the file, auto still traces exactly" {
	requires bpf cmd:unshare
	local fx o t
	fx=$(fx_bin gcc_O2_pie)
	o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	# A private mount namespace: the machine's sysfs is not touched.
	local -a PC_WRAP=(unshare -m sh -c 'mount -t tmpfs none /sys/bus/event_source/devices && exec "$@"' _)
	run -0 pc features
	assert_line uprobe_pmu=0
	assert_line --partial 'uprobe_pmu_why=no uprobe PMU (/sys/bus/event_source/devices/uprobe/type missing'
	run -1 --separate-stderr pc trace --attach=perf -c "$fx fire:fx:a1:1" "usdt:$fx:fx:a1"
	[[ $stderr == *"--attach=perf does not work here: no uprobe PMU (/sys/bus/event_source/devices/uprobe/type missing: CONFIG_UPROBE_EVENTS, Linux 4.17+)"* ]] ||
		fail "file or reason not named: $stderr"
	pc trace --json -c "$fx --oracle $o fire:fx:a1:2" "usdt:$fx:fx:a1" >"$t" 2>"$t.err" ||
		fail "trace exited $?: $(tail -n 3 "$t.err")"
	assert_oracle "$o" "$t"
	# -p: an object already mapped in the target had its sites installed
	# at attach; only objects it has not mapped are checked again, with a
	# uprobe of the tracer's own (install_check.c), which needs the PMU.
	local go=$BATS_TEST_TMPDIR/go ready=$BATS_TEST_TMPDIR/tready
	mkfifo "$go"
	pc_spawn P "$fx" --oracle "$o.p" "ready:$BATS_TEST_TMPDIR/fready" "wait:$go" fire:fx:a1:2
	pc_wait_file "$BATS_TEST_TMPDIR/fready"
	{ pc_wait_file "$ready" && echo go >"$go"; } &
	local writer=$!
	pc trace --json --ready "$ready" -p "$P" "usdt:$fx:fx:a1" >"$t.p" 2>"$t.p.err" ||
		fail "trace -p exited $?: $(tail -n 3 "$t.p.err")"
	wait "$writer"
	assert_oracle "$o.p" "$t.p"
}

# The capability keys the suites name: every word of a `requires` line
# or a PC_REQUIRES list that is not cmd:, file: or tracer:, and every
# pc_cap argument (comments aside).
required_keys() {
	local f=$PROBECHECK_ROOT/suites
	{
		grep -rhoE '^[[:space:]]*requires( +[^;|&#}]+)' "$f" --include='*.bats' --include='*.bash' |
			sed -E 's/^[[:space:]]*requires//'
		grep -rhoE 'PC_REQUIRES=\([^)]*\)' "$f" --include='*.bats' | sed -E 's/PC_REQUIRES=\(|\)//g'
		grep -rhE '^[^#]*pc_cap [a-z]' "$f" --include='*.bats' --include='*.bash' |
			grep -oE 'pc_cap [a-z_0-9]+' | sed 's/pc_cap //'
	} | tr ' \t' '\n\n' | grep -E '^[a-z][a-z0-9_]*$' | sort -u
}

@test "features.no-kernel-btf: no kernel BTF (/sys/kernel/btf hidden in a mount namespace, as a kernel without CONFIG_DEBUG_INFO_BTF): btf, bpf_find_vma and bpf_preempt_disable say so with the reason, the preempt guard is off" {
	requires btf cmd:unshare
	local -a PC_WRAP=(unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && exec "$@"' _)
	run -0 pc features
	assert_line btf=0
	assert_line 'btf_why=no kernel BTF (/sys/kernel/btf/vmlinux missing)'
	# libbpf also looks for vmlinux files (/boot, /lib/modules): none
	# on Debian, so nothing to look the helpers up in.
	assert_line bpf_find_vma=0
	assert_line 'bpf_find_vma_why=no kernel BTF to look it up in (libbpf: no vmlinux BTF found)'
	assert_line bpf_preempt_disable=0
	assert_line 'bpf_preempt_disable_why=no kernel BTF to look it up in (libbpf: no vmlinux BTF found)'
	assert_line preempt_guard=0
}

@test "features.tracefs-debugfs: tracefs only under debugfs (/sys/kernel/tracing hidden in a mount namespace, as on kernels that mount it only there): tracefs=1; hidden in both places: tracefs=0 with the reason, and --attach=tracefs refused with it" {
	requires tracefs cmd:unshare cmd:mountpoint
	local -a PC_WRAP=(unshare -m sh -c 'mount -t tmpfs none /sys/kernel/tracing &&
		{ mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; } &&
		mount -t tracefs none /sys/kernel/debug/tracing && exec "$@"' _)
	run -0 pc features
	assert_line tracefs=1
	PC_WRAP=(unshare -m sh -c 'mount -t tmpfs none /sys/kernel/tracing && exec "$@"' _)
	run -0 pc features
	assert_line tracefs=0
	assert_line --regexp '^tracefs_why=/sys/kernel/tracing/uprobe_events: .* \(tracefs not mounted, or no CONFIG_UPROBE_EVENTS\)$'
	# --attach=tracefs asked for there: refused at the start with that
	# reason, before any program is loaded; the command never runs.
	run -1 --separate-stderr pc trace --attach=tracefs -c "touch $BATS_TEST_TMPDIR/ran" \
		"usdt:$PC_FIXTURES/fx_gcc_O2_pie:fx:a0"
	[[ $stderr =~ attach:\ --attach=tracefs\ does\ not\ work\ here:\ /sys/kernel/tracing/uprobe_events:\ .*\(tracefs\ not\ mounted ]] ||
		fail "not refused with the row's reason: $stderr"
	[[ ! -e $BATS_TEST_TMPDIR/ran ]] || fail "the command ran"
}

@test "features.requires-rows: every capability a suite requires is a row of 'probecheck features' (one key per capability)" {
	local k keys missing=()
	run -0 pc features
	keys=$(required_keys)
	[[ $keys == *ref_ctr_offset* && $keys == *uprobe_pmu* ]] || fail "keys not found in the suites: $keys"
	for k in $keys; do
		grep -qE "^$k=[01]$" <<<"$output" || missing+=("$k")
	done
	((${#missing[@]} == 0)) || fail "required, but not a row of 'probecheck features': ${missing[*]}"
}

@test "features.fake-row-taken: PROBECHECK_FEATURE_FAKE naming a real row (the first, one in the middle, the last) is refused with the reason, and no fake row appears" {
	local keys k n
	# The table's rows: every KEY=0|1 line before the decisions.
	keys=$(pc features | sed -n '/^sites_by_place=/q; s/^\([a-z0-9_]*\)=[01]$/\1/p') || true
	n=$(wc -w <<<"$keys")
	((n > 2)) || { fail "probecheck features printed $n rows"; return 1; }
	keys=$(awk -v n="$n" 'NR == 1 || NR == int(n / 2) || NR == n' <<<"$keys")
	for k in $keys; do
		PROBECHECK_FEATURE_FAKE=$k run -0 --separate-stderr pc features
		[[ $stderr == *"PROBECHECK_FEATURE_FAKE='$k': a row of the table already; no fake row"* ]] ||
			fail "$k: not refused as a row of the table: $stderr"
		(($(grep -c "^$k=" <<<"$output") == 1)) || fail "$k: not exactly one row: $output"
	done
}

@test "features.fake-key-form: PROBECHECK_FEATURE_FAKE must be a key, [a-z][a-z0-9_]* not ending in _why: each bad form refused with the reason and no row; the edge forms that are keys get their row, its reason whole up to 255 characters" {
	local k
	# '`' and '{' sit just outside a-z; "why" is shorter than "_why",
	# "x_why" ends in it.
	for k in Upper 1abc _x a-b '`x' '{x' x_why x.y; do
		PROBECHECK_FEATURE_FAKE=$k run -0 --separate-stderr pc features
		[[ $stderr == *"PROBECHECK_FEATURE_FAKE='$k': not a key ([a-z][a-z0-9_]*, not ending in _why); no fake row"* ]] ||
			fail "'$k': not refused as a key: $stderr"
		! grep -qxF -e "$k=0" -e "$k=1" <<<"$output" || fail "'$k': a row anyway: $output"
	done
	for k in a z9_ why x_whyx awhy; do
		PROBECHECK_FEATURE_FAKE=$k run -0 --separate-stderr pc features
		[[ -z $stderr || $stderr != *PROBECHECK_FEATURE_FAKE* ]] || fail "'$k' refused: $stderr"
		assert_line "$k=0"
	done
	# A key of any length is one; the row's reason names it and is kept
	# whole up to the registry's 399 characters: 44 + 354 + ')' fit.
	k=k$(printf 'x%.0s' {1..353})
	PROBECHECK_FEATURE_FAKE=$k run -0 pc features
	assert_line "${k}_why=fake row for tests (PROBECHECK_FEATURE_FAKE=$k)"
	PROBECHECK_FEATURE_FAKE=${k}y run -0 pc features
	assert_line "${k}y_why=fake row for tests (PROBECHECK_FEATURE_FAKE=${k}y"
}

@test "features.fake-row: a row added to the registry (PROBECHECK_FEATURE_FAKE) reaches 'probecheck features' and the capability file with its reason, and RESULTS.md's capabilities (line and grid)" {
	requires cmd:python3
	local d=$BATS_TEST_TMPDIR/r why='fake row for tests (PROBECHECK_FEATURE_FAKE=pc_fake_row)'
	export PROBECHECK_FEATURE_FAKE=pc_fake_row
	run -0 pc features
	assert_line pc_fake_row=0
	assert_line "pc_fake_row_why=$why"
	# the capability file, written as run-suites writes it
	mkdir -p "$d/run"
	pc_caps_probe "$d/run/caps" || fail "pc_caps_probe failed"
	grep -qx 'pc_fake_row=0' "$d/run/caps" || fail "not in the capability file: $(cat "$d/run/caps")"
	grep -qxF "pc_fake_row_why=$why" "$d/run/caps" || fail "no reason in the capability file: $(cat "$d/run/caps")"
	# RESULTS.md of a results directory whose run/caps holds it
	unset PROBECHECK_FEATURE_FAKE
	echo "$(uname -r)" >"$d/run/kernel"
	: >"$d/run/kernel-findings.txt"
	hsuite "$d" s <<<$'1..1\nok 1 fine'
	run -0 report results --full "$d" 10
	assert_line --regexp '^- Capabilities: (.*, )?pc_fake_row no(, |$)'
	assert_line --regexp '^- Capabilities: (.*, )?ref_ctr_offset (yes|no)(, |$)'
	# and RESULTS.md's capability grid
	run -0 report results "$d" 10
	assert_line '| pc_fake_row | no |'
}

# The x86 probes run uprobes on probecheck's own file, found through
# /proc/self/exe and /proc/self/maps: the longest path a file can have
# (4095 bytes) must give the same answers as the build directory's.
@test "features.long-exe-path: probecheck run from a path of 4095 bytes answers every row as from its build directory, with the same reasons" {
	local d=$BATS_TEST_TMPDIR/l exe want got n
	want=$(pc features)
	# Directories of 200 characters, then a file name that ends the
	# path at 4095.
	while ((${#d} + 201 < 4095 - 20)); do
		d=$d/$(printf 'd%.0s' {1..200})
	done
	mkdir -p "$d"
	n=$((4095 - ${#d} - 1))
	exe=$d/$(printf 'p%.0s' $(seq "$n"))
	((${#exe} == 4095)) || fail "the path is ${#exe} bytes"
	cp "$PC_BIN" "$exe"
	run -0 "$exe" features
	[[ $output == "$want" ]] || fail "answers differ from the build's: $(diff <(echo "$want") <(echo "$output"))"
}
