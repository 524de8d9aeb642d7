#!/usr/bin/env bats
# containers.bats — tracing from the host into containers: a fixture in
# its own pid and mount namespaces (and user namespace) on an overlayfs
# root, entered by pivot_root (fixtures/fx_ctr.c), traced from outside by
# the path the container sees (-p with the host pid), through
# /proc/PID/root, by the host's path of the layer file, and with --follow
# from the process that starts the containers.
#
# Uprobes belong to inodes, and overlayfs maps the real file of a layer:
# every name of one file must attach it once (bpftrace#5102: six probes
# through /proc/*/root for one), and a file copied up to the upper layer
# is another file (bcc#2715).  The oracle is the fixture's log, ids as the
# container sees them: the trace's nspid/nstid are compared with it
# (oraclecmp --ns), and its pid with the host pid fx_ctr reported.
# bats file_tags=containers

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)

CTR=$PC_FIXTURES/fx_ctr
# A static image: the container's root holds nothing but it.
CTR_FX=$PC_FIXTURES/fx_gcc_O2_static

# ctr_dir: the test's directory for images and containers, made on first
# use.  Not under BATS_TEST_TMPDIR (0700): a user namespace's root (uid
# 100000 here) must reach the layers and the ready files.
ctr_dir() {
	pc_shared_dir CTR_DIR ctr 0755
}

# ctr_lower VAR [--userns]: a container image: VAR gets its directory,
# holding /fx.  A rootless container's files belong to its mapped root.
ctr_lower() {
	local -n _ctr_lower=$1
	ctr_dir || return 1
	_ctr_lower=$CTR_DIR/img${2:-}
	mkdir -p -m 0755 "$_ctr_lower"
	cp "$CTR_FX" "$_ctr_lower/fx"
	[[ ${2:-} != --userns ]] || chown -R 100000:100000 "$_ctr_lower"
}

# ctr_start VAR NAME LOWER [fx_ctr OPTION...] -- STEP...: the fixture
# (/fx STEP...) in a container named NAME on image LOWER; returns once it
# is ready (its ready step, before STEPs: start them with
# `pc_fifo_write "$CTR_DIR/NAME/pc/go" go` where STEP has wait:/pc/go).
# VAR gets the host pid; the oracle is $CTR_DIR/NAME/pc/o.  A kernel that
# refuses a namespace or overlayfs there is a skip with its errno (fx_ctr
# exit 3 names the step).
ctr_start() {
	local -n _ctr_var=$1
	local name=$2 lower=$3 d pid err
	local -a opts=()
	shift 3
	ctr_dir || return 1
	d=$CTR_DIR/$name
	while [[ $1 != -- ]]; do opts+=("$1"); shift; done
	shift
	mkdir -p "$d/state" "$d/pc"
	# The container's root may be another uid (--userns): every
	# directory on the way searchable, whatever the umask.
	chmod 0755 "$d" "$d/state"
	chmod 0777 "$d/pc"
	mkfifo -m 0666 "$d/pc/go"
	pc_spawn pid "$CTR" --lower "$lower" --state "$d/state" --info "$d/info" \
		--bind "$d/pc:pc" "${opts[@]}" -- /fx --oracle /pc/o ready:/pc/r "$@"
	echo "$pid" >"$d/launcher"
	pc_wait_until "$PC_TIMEOUT" ctr_up "$d" "$pid"
	if [[ ! -s $d/pc/r ]]; then
		err=$(cat "$BATS_TEST_TMPDIR/spawn.$PC_NSPAWN.err")
		if [[ $err =~ \"ctr_error\":\"(unshare-[a-z]+|mount-overlay|mount-proc)\",\"errno\":\"(EPERM|EINVAL|ENODEV)\" ]]; then
			skip "this kernel refuses the container: ${BASH_REMATCH[1]} failed with ${BASH_REMATCH[2]} (${opts[*]:-no user namespace})"
		fi
		fail "ctr_start: $name did not get ready: $err"; return 1
	fi
	_ctr_var=$(jq -r .host_pid "$d/info")
	[[ $_ctr_var =~ ^[0-9]+$ ]] || { fail "ctr_start: no host pid in $d/info"; return 1; }
	pc_log "container $name: host pid $_ctr_var, in the container $(cat "$d/pc/r")"
}

# ctr_up DIR LAUNCHER: the fixture said ready, or the launcher is gone.
ctr_up() {
	[[ -s $1/pc/r ]] || ! pc_inv_alive "$2"
}

# ctr_wait NAME: the container's launcher ends with status 0.
ctr_wait() {
	local pid
	pid=$(cat "$CTR_DIR/$1/launcher")
	pc_wait_until "$PC_TIMEOUT" ctr_gone "$pid" || { fail "ctr_wait: container $1 still running"; return 1; }
}

ctr_gone() {
	! pc_inv_alive "$1"
}

# assert_ctr_trace TRACE NAME...: TRACE holds exactly the events of the
# fixtures of containers NAME..., with each one's host pid (fx_ctr's
# report: the fixture is pid 1 of its namespace, one thread), and, from
# probecheck, with the ids each container saw as nspid and nstid.
assert_ctr_trace() {
	local t=$1 n hp host=$BATS_TEST_TMPDIR/o.host.json ns=$BATS_TEST_TMPDIR/o.ns.json
	shift
	: >"$host"
	: >"$ns"
	for n in "$@"; do
		hp=$(jq -r .host_pid "$CTR_DIR/$n/info")
		grep -q '"pid":1,"tid":1,' "$CTR_DIR/$n/pc/o" || { fail "container $n: the fixture did not log pid 1"; return 1; }
		sed "s/\"pid\":1,\"tid\":1,/\"pid\":$hp,\"tid\":$hp,/" "$CTR_DIR/$n/pc/o" >>"$host"
		cat "$CTR_DIR/$n/pc/o" >>"$ns"
	done
	assert_oracle "$host" "$t"
	pc_tracer_other || assert_oracle "$ns" "$t" --ns
}

# ctr_variant NAME: fx_ctr's options for an image variant:
#   lower   the binary in the lower layer (the host's file, same inode)
#   copyup  copied up to the upper layer before it runs: a new inode
#   userns  copied up, in a user namespace (uids 0.. -> 100000..)
ctr_variant() {
	case $1 in
	lower) ;;
	copyup) echo --copyup fx ;;
	userns) echo --copyup fx --userns ;;
	esac
}

# ctr_by_pid VARIANT: -p HOSTPID usdt:/fx:...: the path as the container
# sees it, resolved through /proc/PID/root.
# TRACE-OPTION...: more options of the tracer.
ctr_by_pid() {
	local lower hp v=$1
	shift
	ctr_lower lower $([[ $v == userns ]] && echo --userns)
	# shellcheck disable=SC2046  # the variant's options, maybe none
	ctr_start hp c "$lower" $(ctr_variant "$v") -- wait:/pc/go fire:fx:a1:5 fire:fx:a3:3
	ctr_trace_pid "$hp" 8 "$@" usdt:/fx:fx:a1 usdt:/fx:fx:a3
}

# ctr_trace_pid HOSTPID N ARG...: container c's fixture (waiting on
# /pc/go) traced by `-p HOSTPID ARG...` into $BATS_TEST_TMPDIR/t.json:
# the tracer ends with it, N events, exact.
ctr_trace_pid() {
	local t=$BATS_TEST_TMPDIR/t.json hp=$1 n=$2
	shift 2
	pc_trace_bg "$t" --json -p "$hp" "$@"
	pc_fifo_write "$CTR_DIR/c/pc/go" go
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	ctr_wait c
	assert_ctr_trace "$t" c
	assert_summary "$n" "$t.err"
}

@test "containers.by-place: sites told apart by place (kernels before 5.15; forced here with PROBECHECK_SITE_ID=place, perf mode): a hit's place is its mapping's real file, and so is the site's: exact (with the overlay's own identity every event was dropped)" {
	pc_probecheck_only "PROBECHECK_SITE_ID, probecheck's own switch"
	requires uprobe_pmu
	local t=$BATS_TEST_TMPDIR/t.json
	PROBECHECK_SITE_ID=place ctr_by_pid copyup -v --attach=perf
	grep -q "sites told apart by place" "$t.err" || fail "not by place: $(head -n 5 "$t.err")"
}

@test "containers.pid-lower: -p HOSTPID with the path as the container sees it, the binary in the image's lower layer: exact events, ids as the container sees them and as the host does" {
	ctr_by_pid lower
}

@test "containers.pid-copyup: -p HOSTPID, the binary copied up to the upper layer before it ran (a new inode): exact" {
	ctr_by_pid copyup
}

@test "containers.pid-userns: -p HOSTPID into a rootless container (user namespace, uids mapped to 100000..), the binary copied up: exact" {
	ctr_by_pid userns
}

# ctr_system_wide VARIANT PATH-KIND: no -p: the site named by PATH-KIND,
#   root   /proc/HOSTPID/root/fx, the container's file from the host
#   host   the layer file on the host: the image's for lower, the upper
#          layer's once copied up
#   both   both names of the one file: attached once
# Exact events; the tracer stopped after the container has exited.
ctr_system_wide() {
	local t=$BATS_TEST_TMPDIR/t.json lower hp host p
	local -a probes=()
	ctr_lower lower
	# shellcheck disable=SC2046  # the variant's options, maybe none
	ctr_start hp c "$lower" $(ctr_variant "$1") -- wait:/pc/go fire:fx:a1:5
	host=$lower/fx
	[[ $1 == lower ]] || host=$(jq -r .upper "$CTR_DIR/c/info")/fx
	case $2 in
	root) probes=("usdt:/proc/$hp/root/fx:fx:a1") ;;
	host) probes=("usdt:$host:fx:a1") ;;
	both) probes=("usdt:/proc/$hp/root/fx:fx:a1" "usdt:$host:fx:a1") ;;
	esac
	pc_trace_bg "$t" --json -v "${probes[@]}"
	pc_fifo_write "$CTR_DIR/c/pc/go" go
	ctr_wait c
	pc_trace_stop
	assert_equal "$PC_TRACE_STATUS" 0
	assert_ctr_trace "$t" c
	assert_summary 5 "$t.err"
	if [[ $2 == both ]]; then
		p=$(grep -c "the same file as .*: attached once" "$t.err") || true
		assert_equal "$p" 1
	fi
}

@test "containers.root-path-lower: the container's file through /proc/HOSTPID/root, system-wide: exact" {
	ctr_system_wide lower root
}

@test "containers.root-path-copyup: /proc/HOSTPID/root of a binary copied up to the upper layer: exact" {
	ctr_system_wide copyup root
}

@test "containers.host-path-lower: the image's file by its host path: the container's process is traced, exact" {
	ctr_system_wide lower host
}

@test "containers.host-path-copyup: the upper layer's file by its host path, once copied up: exact" {
	ctr_system_wide copyup host
}

@test "containers.two-names-lower: the container's path and the host's name one file: attached once, each hit one event" {
	ctr_system_wide lower both
}

@test "containers.two-names-copyup: the same, the binary copied up: the upper layer's host path and the container's name one file" {
	ctr_system_wide copyup both
}

@test "containers.copied-up-is-another-file: after a copy-up the image's lower file is not the one that runs: attached by its host path, it sees nothing" {
	local t=$BATS_TEST_TMPDIR/t.json lower hp
	ctr_lower lower
	ctr_start hp c "$lower" --copyup fx -- wait:/pc/go fire:fx:a1:5
	pc_trace_bg "$t" --json "usdt:$lower/fx:fx:a1"
	pc_fifo_write "$CTR_DIR/c/pc/go" go
	ctr_wait c
	pc_trace_stop
	assert_equal "$PC_TRACE_STATUS" 0
	assert_equal "$(pc_count_events "$CTR_DIR/c/pc/o")" 5
	assert_equal "$(grep -c . "$t")" 0
	assert_summary 0 "$t.err"
}

@test "containers.follow-two-of-one-image: --follow from the process that starts two containers of one image: one attachment, each container's events exact, with its host pid" {
	local t=$BATS_TEST_TMPDIR/t.json lower c d
	local -a cmd=()
	ctr_lower lower
	ctr_dir
	for c in c1 c2; do
		d=$CTR_DIR/$c
		mkdir -p "$d/state" "$d/pc"
		cmd+=("$CTR --lower $lower --state $d/state --info $d/info --bind $d/pc:pc -- /fx --oracle /pc/o fire:fx:a1:5 fire:fx:a3:2 &")
	done
	pc_trace_bg "$t" --json -v --follow -c "${cmd[*]} wait" 'usdt:*:fx:a*'
	pc_trace_wait
	assert_equal "$PC_TRACE_STATUS" 0
	assert_ctr_trace "$t" c1 c2
	assert_summary 14 "$t.err"
}

# ctr_lower_dynamic VAR: an image with a dynamic fixture, the libraries
# it needs at their paths (the host's, copied: other inodes) and its
# probe library as /libfx.so.
ctr_lower_dynamic() {
	local -n _ctr_dyn=$1
	local lib ld
	ctr_dir || return 1
	_ctr_dyn=$CTR_DIR/imgdyn
	mkdir -p "$_ctr_dyn"
	cp "$(fx_bin gcc_O2_pie)" "$_ctr_dyn/fx"
	cp "$(fx_lib gcc_O2_pie)" "$_ctr_dyn/libfx.so"
	# The dynamic linker lists what it loads (ldd is a script around it,
	# and a guest has no ldd).
	ld=$(readelf -lW "$_ctr_dyn/fx" | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
	[[ -x $ld ]] || { fail "ctr_lower_dynamic: no dynamic linker in '$_ctr_dyn/fx' ($ld)"; return 1; }
	for lib in $( { "$ld" --list "$_ctr_dyn/fx"; "$ld" --list "$_ctr_dyn/libfx.so"; } |
		     awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && NF == 2 { print $1 }' | sort -u); do
		mkdir -p "$_ctr_dyn${lib%/*}"
		cp -L "$lib" "$_ctr_dyn$lib"
	done
}

@test "containers.dynamic-dlopen: -p HOSTPID in a container whose image has its own libraries: the executable's probes (PATH '*') and a library's by the container's path, dlopened there after attach: exact" {
	local lower hp
	ctr_lower_dynamic lower
	ctr_start hp c "$lower" -- wait:/pc/go fire:fx:a1:3 dlopen:/libfx.so libfire:fxlib:l4:3 fire:fx:a3:2
	ctr_trace_pid "$hp" 8 'usdt:*:fx:a*' usdt:/libfx.so:fxlib:l4
}
