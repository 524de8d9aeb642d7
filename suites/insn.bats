#!/usr/bin/env bats
# insn.bats — probe sites on instructions a kernel may refuse to probe.
#
# A uprobe on an instruction the kernel's decoder refuses fails with
# ENOTSUPP (524) when the object is mapped at attach; attached before the
# object is mapped (-c, a library named by path before dlopen, --follow,
# -a) it is dropped at mmap time in silence and never fires.  The tracer
# must fail either way: exit 1, the site and the reason named in words,
# nothing left attached, the command never started (-c).  Which forms a
# kernel refuses is a kernel property: `probecheck features` decides it by
# registering a uprobe on each form (probe_nop10, probe_ds_prefix,
# probe_lock_prefix), and each case here expects that answer: an accepted
# form must trace exactly, a refused one must fail clearly.  Every case
# starts with the control, a plain nop, traced exactly.
#
# Fixture: fixtures/fx_insn.c (fx_insn, libfx_insn.so).
# bats file_tags=insn

load helpers/common
load helpers/integrity

PC_REQUIRES=(root uprobe_pmu bpf btf)

FORMS=(nop10 dsnop lock)

FXN=$PC_FIXTURES/fx_insn
FXNLIB=$PC_FIXTURES/libfx_insn.so

# accepted FORM: 0 if `probecheck features` says the kernel probes it.
accepted() {
	case $1 in
	nop1) return 0 ;;
	nop10) pc_cap probe_nop10 ;;
	dsnop) pc_cap probe_ds_prefix ;;
	lock) pc_cap probe_lock_prefix ;;
	esac
}

# prov WHERE: the provider of the executable's or the library's sites.
prov() { [[ $1 == lib ]] && echo fxinslib || echo fxins; }

# specs WHERE FORM...: the probe specs of FORMs in WHERE (exe | lib).
specs() {
	local w=$1 obj f
	shift
	[[ $w == lib ]] && obj=$FXNLIB || obj=$FXN
	for f; do echo "usdt:$obj:$(prov "$w"):$f"; done
}

# steps WHERE FORM...: fixture steps firing nop1 twice and FORM 3 times.
steps() {
	local w=$1 f s=
	shift
	[[ $w == lib ]] && s="dlopen " && w=libfire || w=fire
	s+="$w:nop1:2"
	for f; do s+=" $w:$f:3"; done
	echo "$s"
}

# refused_ok WHERE FORM STATUS STDERR: the tracer failed as it must.
refused_ok() {
	[[ $3 == 1 ]] || fail "$2 (refused by this kernel): tracer exited $3, expected 1: $4"
	grep -qF "($(prov "$1"):$2): " <<<"$4" ||
		fail "$2: the message does not name the site $(prov "$1"):$2: $4"
	grep -qF "the kernel cannot probe the instruction at this site" <<<"$4" ||
		fail "$2: the message does not say why in words: $4"
	! grep -q "summary:" <<<"$4" || fail "$2: a refused attach printed a summary: $4"
}

# case_c MODE WHERE [--follow]: -c, the sites attached before exec.
case_c() {
	local mode=$1 w=$2 follow=${3:-} f o st
	for f in nop1 "${FORMS[@]}"; do
		o=$BATS_TEST_TMPDIR/$f.o
		local -a fs=(nop1)
		[[ $f == nop1 ]] || fs+=("$f")
		st=0
		pc trace --attach="$mode" $follow --json -c "$FXN --oracle $o $(steps "$w" "${fs[@]:1}")" \
			$(specs "$w" "${fs[@]}") >"$o.t" 2>"$o.err" || st=$?
		if accepted "$f"; then
			((st == 0)) || fail "$f (accepted by this kernel): tracer exited $st: $(cat "$o.err")"
			assert_oracle "$o" "$o.t"
			assert_summary $((2 + 3 * (${#fs[@]} - 1))) "$o.err"
		else
			refused_ok "$w" "$f" "$st" "$(cat "$o.err")"
			[[ ! -s $o ]] || fail "$f: the command ran although the attach failed: $(cat "$o")"
		fi
		echo "# $mode -c $follow $w $f: $( ((st == 0)) && echo traced || echo refused, exit $st)" >&3
	done
}

# case_p MODE WHERE: -p on a running fixture; the library (lib) is loaded
# by the fixture after the attach.
case_p() {
	local mode=$1 w=$2 f o r fifo pid st
	for f in nop1 "${FORMS[@]}"; do
		o=$BATS_TEST_TMPDIR/$f.o r=$BATS_TEST_TMPDIR/$f.ready st=0
		fifo=$(pc_fifo "$f.go")
		local -a fs=(nop1)
		[[ $f == nop1 ]] || fs+=("$f")
		pc_spawn pid "$FXN" --oracle "$o" ready:"$r" wait:"$fifo" $(steps "$w" "${fs[@]:1}")
		pc_wait_file "$r"
		if accepted "$f"; then
			pc_trace_bg "$o.t" --attach="$mode" --json -p "$pid" $(specs "$w" "${fs[@]}")
			pc_fifo_write "$fifo" go
			wait "$pid" || fail "$f: the fixture exited $?"
			pc_trace_wait
			assert_equal "$PC_TRACE_STATUS" 0
			assert_oracle "$o" "$o.t" --only "$(prov "$w"):*"
			assert_summary $((2 + 3 * (${#fs[@]} - 1))) "$o.t.err"
		else
			# Bounded: a tracer that wrongly attached would trace -p
			# forever (the fixture waits for us to release it).
			pc_bounded trace --attach="$mode" --json -p "$pid" $(specs "$w" "${fs[@]}") >"$o.t" 2>"$o.err" || st=$?
			refused_ok "$w" "$f" "$st" "$(cat "$o.err")"
			pc_fifo_write "$fifo" go
			wait "$pid" || fail "$f: the fixture, untraced after the failed attach, exited $?"
		fi
		echo "# $mode -p $w $f: $( ((st == 0)) && echo traced || echo refused, exit $st)" >&3
	done
}

# case_a MODE WHERE: -a, system-wide, before the fixture runs.
case_a() {
	local mode=$1 w=$2 f o st
	for f in nop1 "${FORMS[@]}"; do
		o=$BATS_TEST_TMPDIR/$f.o st=0
		local -a fs=(nop1)
		[[ $f == nop1 ]] || fs+=("$f")
		if accepted "$f"; then
			pc_trace_bg "$o.t" --attach="$mode" --json -a $(specs "$w" "${fs[@]}")
			# shellcheck disable=SC2046
			"$FXN" --oracle "$o" $(steps "$w" "${fs[@]:1}") || fail "$f: the fixture exited $?"
			pc_trace_stop INT
			assert_equal "$PC_TRACE_STATUS" 0
			assert_oracle "$o" "$o.t"
		else
			pc_bounded trace --attach="$mode" --json -a $(specs "$w" "${fs[@]}") >"$o.t" 2>"$o.err" || st=$?
			refused_ok "$w" "$f" "$st" "$(cat "$o.err")"
		fi
		echo "# $mode -a $w $f: $( ((st == 0)) && echo traced || echo refused, exit $st)" >&3
	done
}

@test "insn.perf-cmd-exe: perf: -c: a site on a refused instruction fails the attach (exit 1, site and reason named), an accepted one traces exactly" {
	pc_use_mode perf; case_c perf exe
}
@test "insn.tracefs-cmd-exe: tracefs: -c: a site on a refused instruction fails the attach (exit 1, site and reason named), an accepted one traces exactly" {
	pc_use_mode tracefs; case_c tracefs exe
}
@test "insn.multi-cmd-exe: multi: -c: a site on a refused instruction fails the attach (exit 1, site and reason named), an accepted one traces exactly" {
	pc_use_mode multi; case_c multi exe
}
@test "insn.perf-cmd-lib: perf: -c: a refused site in a library named by path before dlopen fails the attach; an accepted one traces exactly" {
	pc_use_mode perf; case_c perf lib
}
@test "insn.tracefs-cmd-lib: tracefs: -c: a refused site in a library named by path before dlopen fails the attach; an accepted one traces exactly" {
	pc_use_mode tracefs; case_c tracefs lib
}
@test "insn.multi-cmd-lib: multi: -c: a refused site in a library named by path before dlopen fails the attach; an accepted one traces exactly" {
	pc_use_mode multi; case_c multi lib
}
@test "insn.perf-follow-cmd: perf: --follow -c: a refused site fails the attach; an accepted one traces exactly" {
	pc_use_mode perf; case_c perf exe --follow
}
@test "insn.tracefs-follow-cmd: tracefs: --follow -c: a refused site fails the attach; an accepted one traces exactly" {
	pc_use_mode tracefs; case_c tracefs exe --follow
}
@test "insn.multi-follow-cmd: multi: --follow -c: a refused site fails the attach; an accepted one traces exactly" {
	pc_use_mode multi; case_c multi exe --follow
}
@test "insn.perf-pid-exe: perf: -p: a refused site in the mapped executable fails at registration, named in words; the process runs on untraced" {
	pc_use_mode perf; case_p perf exe
}
@test "insn.tracefs-pid-exe: tracefs: -p: a refused site in the mapped executable fails at registration, named in words; the process runs on untraced" {
	pc_use_mode tracefs; case_p tracefs exe
}
@test "insn.multi-pid-exe: multi: -p: a refused site in the mapped executable fails at registration, each refused site named; the process runs on untraced" {
	pc_use_mode multi; case_p multi exe
}
@test "insn.perf-pid-lib: perf: -p: a refused site in a library the process loads later fails the attach; the process runs on untraced" {
	pc_use_mode perf; case_p perf lib
}
@test "insn.tracefs-pid-lib: tracefs: -p: a refused site in a library the process loads later fails the attach; the process runs on untraced" {
	pc_use_mode tracefs; case_p tracefs lib
}
@test "insn.multi-pid-lib: multi: -p: a refused site in a library the process loads later fails the attach; the process runs on untraced" {
	pc_use_mode multi; case_p multi lib
}
@test "insn.multi-pid-second-link: multi: -p: a refused site in the library's link, after the executable's accepted one: the link's error and the site named, nothing else; the process runs on untraced" {
	pc_use_mode multi
	local f o r fifo pid st n=0
	# Links go by object in site order (the executable sorts first), so
	# the refused group starts past the first site.
	for f in "${FORMS[@]}"; do
		accepted "$f" && continue
		n=$((n + 1)) st=0
		o=$BATS_TEST_TMPDIR/$f.o r=$BATS_TEST_TMPDIR/$f.ready
		fifo=$(pc_fifo "$f.go")
		pc_spawn pid "$FXN" --oracle "$o" dlopen ready:"$r" wait:"$fifo" fire:nop1:2 "libfire:$f:3"
		pc_wait_file "$r"
		pc_bounded trace --attach=multi --json -p "$pid" $(specs exe nop1) $(specs lib "$f") \
			>"$o.t" 2>"$o.err" || st=$?
		refused_ok lib "$f" "$st" "$(cat "$o.err")"
		[[ $(grep -c '^probecheck: ' "$o.err") == 2 ]] &&
			grep -q "^probecheck: uprobe_multi: '$FXNLIB': 1 uprobes, the first fxinslib:$f at " "$o.err" ||
			fail "$f: expected the library link's error and its site, nothing else: $(cat "$o.err")"
		pc_fifo_write "$fifo" go
		wait "$pid" || fail "$f: the fixture, untraced after the failed attach, exited $?"
	done
	((n)) || skip "this kernel refuses none of ${FORMS[*]}"
}

@test "insn.perf-all: perf: -a: a refused site fails the attach at once; an accepted one traces exactly" {
	pc_use_mode perf; case_a perf exe
}
@test "insn.tracefs-all: tracefs: -a: a refused site fails the attach at once; an accepted one traces exactly" {
	pc_use_mode tracefs; case_a tracefs exe
}
@test "insn.multi-all: multi: -a: a refused site in a library fails the attach at once; an accepted one traces exactly" {
	pc_use_mode multi; case_a multi lib
}
