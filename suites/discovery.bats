#!/usr/bin/env bats
# discovery.bats — probe discovery: what `probecheck list` finds must be what
# binutils' readelf finds, field by field (provider, name, location, base,
# semaphore, argument string) and site for site, in our fixtures (every
# build variant) and in the real programs of Debian 12 that carry USDT notes.
# With -p, every object mapped in the process is listed with the pid and the
# runtime address of each site, checked against /proc/PID/maps.
#
# The comparison is build/tools/notecmp (harness/tools/notecmp.c): it runs
# readelf itself and parses addresses as 64-bit integers, not through jq.
# bats file_tags=discovery

load helpers/common
bats_require_minimum_version 1.5.0

# Real programs named so that a missing one is a visible SKIP.
PYTHON=/usr/bin/python3.11
LIBSTDCXX=/usr/lib/x86_64-linux-gnu/libstdc++.so.6
POSTGRES=/usr/lib/postgresql/15/bin/postgres
LIBJVM=/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so

# notes_agree FILE: `probecheck list --json FILE` and `readelf -n FILE`
# agree; fails with every difference.  Sets NOTES_JSON (the list output)
# and NOTES_SITES (how many sites readelf shows).
notes_agree() {
	local f=$1 json out st=0
	json=$BATS_TEST_TMPDIR/list.$((++_nl)).json
	# Explicit returns: callers use `notes_agree F || ...`, where set -e
	# does not stop at a failing command.
	pc list --json "$f" >"$json" 2>"$json.err" || {
		fail "probecheck list --json '$f' failed (status $?): see the log below"
		return 1
	}
	if pc_tracer_other; then
		probes_agree "$f" "$json"
		return
	fi
	# A listing that succeeds says nothing (a probe without arguments
	# once drew "cannot parse arguments ''": 6b6939b3).
	if [[ -s $json.err ]]; then
		fail "probecheck list --json '$f' succeeded but wrote to stderr: $(head -c 600 "$json.err")"
		return 1
	fi
	out=$("$PC_TOOLS/notecmp" "$f" "$json" 2>&1) || st=$?
	pc_log "notecmp '$f': status $st"
	pc_log "$out"
	if ((st != 0)); then
		printf '%s\n' "$out" | batslib_decorate "list --json and readelf -n differ: $f" | fail
		return 1
	fi
	NOTES_JSON=$json
	[[ $out =~ ([0-9]+)\ sites\ from\ readelf ]] || fail "notecmp said: $out"
	NOTES_SITES=${BASH_REMATCH[1]}
}

# probes_agree FILE JSON: another tracer's listing names every probe
# (provider, name) readelf finds in FILE, and nothing else.  Tracers list
# probes, not sites: the site fields (pc, base, semaphore, operands) are
# compared for probecheck only (notecmp).  Sets NOTES_JSON, NOTES_SITES.
probes_agree() {
	local want got d
	want=$(pc_elf_notes "$1" | awk '{ print $1 ":" $2 }' | sort -u)
	got=$(jq -r '.provider + ":" + .name' "$2" | sort -u) ||
		{ fail "$(pc_tracer) list '$1': not JSON lines: $(head -c 300 "$2")"; return 1; }
	d=$(diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | grep '^[<>]' |
		sed 's/^</missing:   /; s/^>/unexpected:/')
	pc_log "probes of '$1': $(grep -c . <<<"$want") from readelf"
	if [[ -n $d ]]; then
		printf '%s\n' "$d" | head -n 20 | batslib_decorate "$(pc_tracer) list and readelf -n differ: $1" | fail
		return 1
	fi
	NOTES_JSON=$2
	NOTES_SITES=$(pc_elf_notes "$1" | wc -l)
}

# site_level: succeed when the listing has sites (probecheck's does).
site_level() {
	! pc_tracer_other
}

# sites_in JSON [JQ-FILTER]: number of sites (matching the filter).  jq is
# safe here: it counts, and never sees an address as a number.
sites_in() {
	jq -s "map(select(${2:-true})) | length" "$1"
}

# fixture_objects: every fixture executable of build/fixtures/variants.txt
# (a listed variant that is missing is an error), every libfx_*.so, and any
# other fx_* executable there.
fixture_objects() {
	local list=$PC_FIXTURES/variants.txt v
	[[ -s $list ]] || { echo "no '$list' (make fixtures)" >&2; return 1; }
	while IFS= read -r v; do
		[[ -n $v ]] || continue
		[[ -f $PC_FIXTURES/$v ]] || { echo "variant '$v' of '$list' not built" >&2; return 1; }
	done <"$list"
	find "$PC_FIXTURES" -maxdepth 1 -type f \( -name 'fx_*' -o -name 'libfx_*.so' \) |
		sort | while IFS= read -r v; do
		readelf -h "$v" >/dev/null 2>&1 && echo "$v"
	done
	return 0
}

@test "discovery.notecmp-selfcheck: notecmp reports each field that differs and fails (self-check of the comparator)" {
	pc_probecheck_only "a self-check of the comparator"
	requires "file:$PYTHON"
	local json=$BATS_TEST_TMPDIR/py.json bad=$BATS_TEST_TMPDIR/bad.json
	pc list --json "$PYTHON" >"$json"
	run -0 "$PC_TOOLS/notecmp" "$PYTHON" "$json"
	assert_output --partial ", 0 differences"
	# One wrong field per kind, each must be named.
	sed -e '1s/"pc":"0x/"pc":"0x1/' -e '2s/"base":"0x/"base":"0x1/' \
	    -e '3s/"semaphore":"0x/"semaphore":"0x1/' -e '4s/"args":"8/"args":"4/' \
	    "$json" >"$bad"
	run -1 "$PC_TOOLS/notecmp" "$PYTHON" "$bad"
	assert_output --partial ": pc: readelf 0x"
	assert_output --partial ": base: readelf 0x"
	assert_output --partial ": semaphore: readelf 0x"
	assert_output --partial ": args: readelf '8"
	assert_output --partial ", 4 differences"
	# A missing site is a count difference.
	sed 1d "$json" >"$bad"
	run -1 "$PC_TOOLS/notecmp" "$PYTHON" "$bad"
	assert_output --partial "readelf has 8 sites, probecheck 7"
	# A semaphore reported where the note has none.
	requires "file:$LIBSTDCXX"
	pc list --json "$LIBSTDCXX" | sed '1s/"semaphore":null/"semaphore":"0x0"/' >"$bad"
	run -1 "$PC_TOOLS/notecmp" "$LIBSTDCXX" "$bad"
	assert_output --partial 'instead of null'
}

@test "discovery.fixtures-agree: list --json agrees with readelf -n on every fixture executable and library of every variant" {
	requires tracer:list
	local objs f n=0 nlib=0 sites=0 failed=()
	objs=$(fixture_objects 2>"$BATS_TEST_TMPDIR/fx.err") || fail "fixtures: $(cat "$BATS_TEST_TMPDIR/fx.err")"
	while IFS= read -r f; do
		notes_agree "$f" || { failed+=("$f"); continue; }
		n=$((n + 1))
		[[ $f == */libfx_*.so ]] && nlib=$((nlib + 1))
		sites=$((sites + NOTES_SITES))
	done <<<"$objs"
	pc_log "fixtures: $n objects agree ($nlib libraries), $sites sites"
	((${#failed[@]} == 0)) || fail "list --json and readelf -n differ on: ${failed[*]} (log below)"
	(($(grep -c . "$PC_FIXTURES/variants.txt") + 1 <= n && nlib >= 1)) ||
		fail "compared $n objects ($nlib libraries): fewer than the variants plus a library"
}

@test "discovery.python-agrees: list --json agrees with readelf -n on /usr/bin/python3.11: 8 probes, all with semaphores" {
	requires tracer:list
	requires "file:$PYTHON"
	notes_agree "$PYTHON"
	site_level || return 0	# other tracers: probes compared above, no sites
	[[ $(sites_in "$NOTES_JSON") == 8 ]] || fail "expected 8 sites, got $(sites_in "$NOTES_JSON")"
	[[ $(sites_in "$NOTES_JSON" '.semaphore != null') == 8 ]] ||
		fail "expected a semaphore on every site: $(cat "$NOTES_JSON")"
}

@test "discovery.libstdcxx-agrees: list --json agrees with readelf -n on libstdc++.so.6: 3 probes without semaphores" {
	requires tracer:list
	requires "file:$LIBSTDCXX"
	notes_agree "$LIBSTDCXX"
	site_level || return 0	# other tracers: probes compared above, no sites
	[[ $(sites_in "$NOTES_JSON") == 3 ]] || fail "expected 3 sites, got $(sites_in "$NOTES_JSON")"
	[[ $(sites_in "$NOTES_JSON" '.semaphore == null') == 3 ]] ||
		fail "expected no semaphores: $(cat "$NOTES_JSON")"
}

@test "discovery.postgres-agrees: list --json agrees with readelf -n on PostgreSQL 15's postgres (semaphores, constant operands)" {
	requires tracer:list
	requires "file:$POSTGRES"
	notes_agree "$POSTGRES"
	site_level || return 0	# other tracers: probes compared above, no sites
	# 71 sites in 15.x (Debian 12); a lower bound keeps a minor update green.
	(($(sites_in "$NOTES_JSON") >= 60)) || fail "only $(sites_in "$NOTES_JSON") sites"
	(($(sites_in "$NOTES_JSON" '.semaphore != null') > 0)) || fail "no semaphores"
	# Constant operands such as "-4@$0" are passed on verbatim.
	(($(sites_in "$NOTES_JSON" '.args | test("@\\$-?[0-9]")') > 0)) ||
		fail "no constant operand among the sites"
}

@test "discovery.libjvm-agrees: list --json agrees with readelf -n on all sites of OpenJDK 17's libjvm.so" {
	requires tracer:list
	requires "file:$LIBJVM"
	notes_agree "$LIBJVM"
	site_level || return 0	# other tracers: probes compared above, no sites
	# 531 sites in 17.0.15; many probes have several sites.
	(($(sites_in "$NOTES_JSON") >= 500)) || fail "only $(sites_in "$NOTES_JSON") sites"
	(($(jq -r '.provider + ":" + .name' "$NOTES_JSON" | sort -u | wc -l) < $(sites_in "$NOTES_JSON"))) ||
		fail "expected probes with more than one site"
	# Probes without arguments have an empty operand string, not a missing one.
	(($(sites_in "$NOTES_JSON" '.args == ""') > 0)) || fail "no site with empty args"
}

@test "discovery.system-elf: list --json agrees with readelf -n on every ELF file with .note.stapsdt under /usr/bin and /usr/lib" {
	requires tracer:list
	local objs f n=0 sites=0 failed=()
	# /usr/lib/jvm is under /usr/lib.  Headers only: seconds, not minutes.
	objs=$("$PC_TOOLS/notecmp" --scan /usr/bin /usr/lib)
	pc_log "objects with .note.stapsdt: $(wc -l <<<"$objs")"
	[[ -n $objs ]] || fail "notecmp --scan found no ELF file with .note.stapsdt"
	while IFS= read -r f; do
		notes_agree "$f" || { failed+=("$f"); continue; }
		n=$((n + 1))
		sites=$((sites + NOTES_SITES))
	done <<<"$objs"
	pc_log "system: $n objects agree, $sites sites"
	((${#failed[@]} == 0)) || fail "list --json and readelf -n differ on: ${failed[*]} (log below)"
	# The scan itself must see what we know is there.
	if [[ -e $PYTHON ]]; then
		grep -qx "$PYTHON" <<<"$objs" || fail "scan missed $PYTHON"
	fi
	grep -q 'libstdc++\.so\.6' <<<"$objs" || fail "scan missed libstdc++.so.6"
}

@test "discovery.list-no-notes: list of an ELF file without USDT notes exits 2 naming the file and the missing section" {
	pc_probecheck_only "its command-line errors"
	run -2 --separate-stderr pc list --json /bin/true
	assert_output ''
	[[ $stderr == *"'/bin/true'"*"no .note.stapsdt section"* ]] || fail "stderr: $stderr"
}

@test "discovery.list-not-elf: list of a file that is not ELF, or is truncated, exits 2 naming the file and the reason" {
	pc_probecheck_only "its command-line errors"
	requires "file:$PYTHON"
	local trunc=$BATS_TEST_TMPDIR/python-truncated
	run -2 --separate-stderr pc list /etc/passwd
	[[ $stderr == *"'/etc/passwd'"*"not an ELF file"* ]] || fail "stderr: $stderr"
	head -c 4096 "$PYTHON" >"$trunc"
	run -2 --separate-stderr pc list "$trunc"
	assert_output ''
	[[ $stderr == *"'$trunc'"*"truncated"* ]] || fail "stderr: $stderr"
	run -2 --separate-stderr pc list "$BATS_TEST_TMPDIR/absent"
	[[ $stderr == *"'$BATS_TEST_TMPDIR/absent'"*"No such file"* ]] || fail "stderr: $stderr"
}

# start_parked EXE LIB: run EXE with LIB dlopen()ed, parked on a fifo;
# sets FX_PID once it is ready.  Teardown kills it.
start_parked() {
	local ready=$BATS_TEST_TMPDIR/ready.$((++_nfx)) fifo pid
	fifo=$(pc_fifo "park.$_nfx")
	pc_spawn pid "$1" --oracle "$BATS_TEST_TMPDIR/oracle.$_nfx" \
		dlopen:"$2" ready:"$ready" wait:"$fifo"
	pc_wait_file "$ready"
	FX_PID=$(cat "$ready")
	[[ $FX_PID == "$pid" ]] || fail "fixture wrote pid '$FX_PID', spawned $pid"
	FX_FIFO=$fifo
}

# bias_from_maps PID PATH: PATH's load bias in PID, from /proc/PID/maps and
# the program headers: a mapping of file offset O at address A holds the
# PT_LOAD with p_offset in that page, so bias = A - O - (p_vaddr - p_offset).
bias_from_maps() {
	local start off vaddr poff
	read -r start off < <(awk -v f="$2" '$6 == f && $3 == "00000000" {
		split($1, r, "-"); print r[1], $3; exit }' "/proc/$1/maps")
	[[ -n $start ]] || fail "'$2' has no offset-0 mapping in pid $1"
	read -r poff vaddr < <(readelf -lW "$2" | awk '$1 == "LOAD" { print $2, $3; exit }')
	printf '%d\n' $((0x$start - 0x$off - (vaddr - poff)))
}

# list_pid_agrees EXE LIB: list -p on the running fixture (1) agrees with
# notecmp -p (readelf per object + /proc/PID/maps per site) and (2) every
# site's addr is pc + the bias computed here from /proc/PID/maps.
list_pid_agrees() {
	local exe=$1 lib=$2 json=$BATS_TEST_TMPDIR/listp.$((++_nlp)).json out st=0
	local path pc addr bias n=0
	local -A biases=()
	# Our own build products: missing is a failure, not a skip.
	[[ -x $exe && -f $lib ]] || fail "fixture '$exe' or '$lib' not built (make fixtures)"
	start_parked "$exe" "$lib"
	pc list --json -p "$FX_PID" >"$json"
	out=$("$PC_TOOLS/notecmp" -p "$FX_PID" "$json" 2>&1) || st=$?
	pc_log "$out"
	((st == 0)) || { printf '%s\n' "$out" | batslib_decorate "list -p $FX_PID disagrees ($exe)" | fail; }
	# Both objects are there with all their sites (notecmp checked that
	# the sites of each listed object are exactly readelf's).
	for path in "$exe" "$lib"; do
		jq -se --arg p "$path" 'any(.[]; .path == $p)' "$json" >/dev/null ||
			fail "list -p $FX_PID has no site of '$path'"
	done
	while IFS=$'\t' read -r path pc addr; do
		[[ -n ${biases[$path]:-} ]] || biases[$path]=$(bias_from_maps "$FX_PID" "$path")
		bias=${biases[$path]}
		(($addr == $pc + bias)) || fail "$path: site pc $pc at $addr, expected pc + bias $(printf '%#x' "$bias")"
		n=$((n + 1))
	done < <(jq -r '[.path, .pc, .addr] | @tsv' "$json")
	pc_log "checked $n sites; biases: $(for p in "${!biases[@]}"; do printf '%s=%#x ' "$p" "${biases[$p]}"; done)"
	[[ $exe == *_nopie ]] && ((biases[$exe] != 0)) && fail "non-PIE '$exe' has bias ${biases[$exe]}"
	[[ $exe == *_pie ]] && ((biases[$exe] == 0)) && fail "PIE '$exe' loaded at bias 0"
	((biases[$lib] != 0)) || fail "library '$lib' loaded at bias 0"
	pc_fifo_write "$FX_FIFO" go
	return 0
}

@test "discovery.list-pid-pie: list -p on a running PIE fixture lists every object's sites with pid and addr = pc + load bias" {
	pc_probecheck_only "list -p (runtime addresses)"
	list_pid_agrees "$PC_FIXTURES/fx_gcc_O2_pie" "$PC_FIXTURES/libfx_gcc_O2.so"
}

@test "discovery.list-pid-nopie: list -p on a running non-PIE fixture gives the executable's sites at their link-time addresses" {
	pc_probecheck_only "list -p (runtime addresses)"
	list_pid_agrees "$PC_FIXTURES/fx_clang_O0_nopie" "$PC_FIXTURES/libfx_clang_O0.so"
}
