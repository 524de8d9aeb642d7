# invariants.bash — what must hold on the machine around every test.
#
# "Ours" is decided by name, the names the tracer promises to use:
#   uprobes in tracefs  group or event name starting "probecheck" or "pc_"
#   BPF programs, maps  name starting "pc_" (or "pc." for the libbpf
#                       internal maps of the "pc" object: pc.rodata, pc.bss)
#   processes           comm starting "fx_" (fixtures) or "probecheck"
#
# Processes are also told apart by the PC_TAG environment variable that
# every test exports (helpers/common.bash): it survives fork, exec and
# reparenting, so a fixture that outlives its tracer is still known to be
# this test's, and a concurrent run's processes are left alone.
#
# Pure bash with no bats dependency: harness/run-suites sources it too.
# Every function prints its findings and returns 0; callers diff.

PC_TRACEFS=${PC_TRACEFS:-/sys/kernel/tracing}

# Is a tracefs group or event name ours?
_pc_inv_ours_name() {
	[[ $1 == probecheck* || $1 == pc_* ]]
}

# pc_inv_uprobe_all: every line of uprobe_events (nothing if unreadable).
pc_inv_uprobe_all() {
	local f=$PC_TRACEFS/uprobe_events line
	[[ -r $f ]] || return 0
	while IFS= read -r line; do
		[[ -n $line ]] && printf '%s\n' "$line"
	done <"$f"
	return 0
}

# pc_inv_uprobe_is_ours LINE: is this uprobe_events line ours?
# A line reads "p:GROUP/EVENT /path:0xoff ..." (r: for uretprobes).
pc_inv_uprobe_is_ours() {
	local id group event
	id=${1%% *}
	id=${id#*:}
	group=${id%%/*}
	event=${id#*/}
	_pc_inv_ours_name "$group" || _pc_inv_ours_name "$event"
}

# pc_inv_uprobe_ours: the lines of uprobe_events that are ours.
pc_inv_uprobe_ours() {
	local line
	while IFS= read -r line; do
		pc_inv_uprobe_is_ours "$line" && printf '%s\n' "$line"
	done < <(pc_inv_uprobe_all)
	return 0
}

# pc_inv_bpf_ours: "prog ID NAME" / "map ID NAME" for each BPF object of ours.
pc_inv_bpf_ours() {
	local kind line id name
	command -v bpftool >/dev/null 2>&1 || return 0
	for kind in prog map; do
		while IFS= read -r line; do
			[[ $line =~ ^([0-9]+):\ .*\ name\ ([^ ]+) ]] || continue
			id=${BASH_REMATCH[1]}
			name=${BASH_REMATCH[2]}
			[[ $name == pc_* || $name == pc.* ]] || continue
			printf '%s %s %s\n' "$kind" "$id" "$name"
		done < <(bpftool "$kind" show 2>/dev/null)
	done
	return 0
}

# pc_inv_bpf_holders: "KIND ID PID" for every BPF prog or map a process
# holds an fd of, and "map ID PID" for the maps of a prog it holds (a prog
# keeps its maps alive without any fd).  All processes: a leaked object may
# be held by anything (valgrind, a unit test, bpftrace).
pc_inv_bpf_holders() {
	local line id kind pid
	local -A prog_maps=()
	command -v bpftool >/dev/null 2>&1 || return 0
	while IFS= read -r line; do
		[[ $line =~ ^([0-9]+):\  ]] && id=${BASH_REMATCH[1]}
		[[ $line =~ map_ids\ ([0-9,]+) ]] && prog_maps[$id]=${BASH_REMATCH[1]}
	done < <(bpftool prog show 2>/dev/null)
	# Lines read "/proc/PID/fdinfo/FD:prog_id:<tab>ID".
	while IFS= read -r line; do
		pid=${line#/proc/}
		pid=${pid%%/*}
		kind=${line#*:}
		kind=${kind%%_id:*}
		id=${line##*[[:space:]]}
		echo "$kind $id $pid"
		if [[ $kind == prog && -n ${prog_maps[$id]:-} ]]; then
			printf "map %s $pid\n" ${prog_maps[$id]//,/ }
		fi
	done < <(grep -sHE '^(prog|map)_id:' /proc/[0-9]*/fdinfo/* 2>/dev/null)
	return 0
}

# pc_inv_tag PID: the PC_TAG PID carries, "-" if none, "?" if unreadable.
pc_inv_tag() {
	local e tag=-
	local -a env=()
	{ mapfile -d '' env <"/proc/$1/environ"; } 2>/dev/null || { echo '?'; return 0; }
	for e in "${env[@]}"; do
		[[ $e == PC_TAG=* ]] && tag=${e#PC_TAG=}
	done
	echo "$tag"
}

# pc_inv_procs: "PID COMM STATE TAG" for every fixture or probecheck process.
# TAG is the PC_TAG it carries, "-" if none, "?" if unreadable.
pc_inv_procs() {
	local d pid comm stat state tag e
	local -a env
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		{ read -r comm <"$d/comm"; } 2>/dev/null || continue
		[[ $comm == fx_* || $comm == probecheck* ]] || continue
		{ read -r stat <"$d/stat"; } 2>/dev/null || continue
		stat=${stat##*) }
		state=${stat%% *}
		tag=-
		env=()
		if { mapfile -d '' env <"$d/environ"; } 2>/dev/null; then
			for e in "${env[@]}"; do
				[[ $e == PC_TAG=* ]] && tag=${e#PC_TAG=}
			done
		else
			tag='?'
		fi
		# Zombies have dropped their environment: nothing to attribute.
		[[ $state == Z && ${#env[@]} == 0 ]] && tag='?'
		printf '%s %s %s %s\n' "$pid" "$comm" "$state" "$tag"
	done
	return 0
}

# pc_inv_new_lines BEFORE_FILE: lines of stdin not in BEFORE_FILE.
pc_inv_new_lines() {
	local line
	local -A seen=()
	if [[ -r $1 ]]; then
		while IFS= read -r line; do
			seen["x$line"]=1
		done <"$1"
	fi
	while IFS= read -r line; do
		[[ -n ${seen["x$line"]:-} ]] || printf '%s\n' "$line"
	done
	return 0
}

# pc_inv_stray_procs BEFORE_FILE TAG [STRICT]: fixture/probecheck
# processes that are not in BEFORE_FILE (a pc_inv_procs listing) and carry
# TAG; with STRICT=1 also those with no tag (a process that lost its
# environment is suspect, where nothing else runs).  Processes with another
# test's or run's tag belong to someone else.
pc_inv_stray_procs() {
	local before=$1 mytag=$2 strict=${3:-0} pid comm state tag
	local -A old=()
	if [[ -r $before ]]; then
		while read -r pid comm state tag; do
			old[$pid]=$comm
		done <"$before"
	fi
	while read -r pid comm state tag; do
		[[ ${old[$pid]:-} == "$comm" || $state == Z ]] && continue
		if [[ $tag != "$mytag" ]]; then
			[[ $strict == 1 && ($tag == - || $tag == '?') ]] || continue
		fi
		printf '%s %s %s %s\n' "$pid" "$comm" "$state" "$tag"
	done < <(pc_inv_procs)
	return 0
}

# pc_inv_remove_uprobe LINE: delete one tracefs uprobe (disabling it first).
pc_inv_remove_uprobe() {
	local id=${1%% *}
	id=${id#*:}
	if [[ -w $PC_TRACEFS/events/$id/enable ]]; then
		echo 0 >"$PC_TRACEFS/events/$id/enable" 2>/dev/null
	fi
	echo "-:$id" >>"$PC_TRACEFS/uprobe_events" 2>/dev/null
}

# pc_inv_alive PID: the process exists and is not a zombie.
pc_inv_alive() {
	local stat
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

# pc_inv_kill_procs: SIGKILL each "PID COMM ..." line of stdin whose comm
# is still the same (pid reuse), then wait up to 5 s for them to go.
pc_inv_kill_procs() {
	local pid comm rest now i alive
	local -a pids=()
	while read -r pid comm rest; do
		{ read -r now <"/proc/$pid/comm"; } 2>/dev/null || continue
		[[ $now == "$comm" ]] || continue
		kill -KILL "$pid" 2>/dev/null && pids+=("$pid")
	done
	for ((i = 0; i < 100; i++)); do
		alive=0
		for pid in "${pids[@]}"; do
			pc_inv_alive "$pid" && alive=1
		done
		((alive)) || return 0
		sleep 0.05	# SIGKILL delivery is asynchronous
	done
	return 0
}
