# invariants.bash — what must hold on the machine around every test.
#
# "Ours" is decided by name, the names the tracer promises to use:
#   uprobes in tracefs  group or event name starting "probecheck" or "pc_"
#   BPF programs, maps  name starting "pc_" (or "pc." for the libbpf
#                       internal maps of the "pc" object: pc.rodata, pc.bss)
#   processes           comm starting "fx_" (fixtures) or "probecheck"
#
# Other tracers (PC_TRACER, helpers/tracer.bash) promise no names: with
# PC_INV_ANY=1 every BPF object and every uprobe_events line counts as
# ours: callers diff against what was there before the test (or the run),
# report what is new and remove it.
#
# Processes are also told apart by the PC_TAG environment variable that
# every test exports (helpers/common.bash): it survives fork, exec and
# reparenting, so a fixture that outlives its tracer is still known to be
# this test's, and a concurrent run's processes are left alone.
#
# Pure bash with no bats dependency: harness/run/run-suites sources it too.
# Every function prints its findings and returns 0; callers diff.

PC_TRACEFS=${PC_TRACEFS:-/sys/kernel/tracing}
# pc_elf_notes: the probe sites and semaphores of an object (_pc_inv_obj).
. "${BASH_SOURCE[0]%/*}/notes.bash"

# Is a tracefs group or event name ours?
_pc_inv_ours_name() {
	[[ $1 == probecheck* || $1 == pc_* ]]
}

# pc_inv_uprobe_all: every line of uprobe_events (nothing if unreadable).
#
# uprobe_events is a seq_file: each read(2) starts again at an entry's
# index, so a file read in several calls misses an entry when one before
# it is removed between two calls (bash's read builtin makes one call a
# line; read -d '' one per 4 KiB), and other suites' tracers add and
# remove theirs all the time: a planted leftover went unseen once in a
# flake round (harness.invariants-uprobe), and faultsdetach counted 6
# entries of 7.  Read whole until two reads agree (5 at most), and give
# each line either of the last two saw.  No fork: this runs several
# times a test.
pc_inv_uprobe_all() {
	local f=$PC_TRACEFS/uprobe_events a b='' n line
	local -A seen=()
	[[ -r $f ]] || return 0
	IFS= read -r -d '' b <"$f" 2>/dev/null || :
	for ((n = 0; n < 5; n++)); do
		a=$b b=''
		IFS= read -r -d '' b <"$f" 2>/dev/null || :
		[[ $a == "$b" ]] && break
	done
	while IFS= read -r line; do
		[[ -n $line && -z ${seen["x$line"]:-} ]] || continue
		seen["x$line"]=1
		printf '%s\n' "$line"
	done <<<"$a"$'\n'"$b"
	return 0
}

# pc_inv_uprobe_is_ours LINE: is this uprobe_events line ours?
# A line reads "p:GROUP/EVENT /path:0xoff ..." (r: for uretprobes).
pc_inv_uprobe_is_ours() {
	local id group event
	[[ -n ${PC_INV_ANY:-} ]] && return 0
	id=${1%% *}
	id=${id#*:}
	group=${id%%/*}
	event=${id#*/}
	_pc_inv_ours_name "$group" || _pc_inv_ours_name "$event"
}

# pc_inv_uprobe_scope: the uprobe_events lines of stdin a check may judge:
# every one; beside other suites (PROBECHECK_PARALLEL=1, run-suites) only
# those on a file under the suite's own directory (PROBECHECK_SUITE_DIR,
# also when opened through /proc/PID/root): the others are theirs.
pc_inv_uprobe_scope() {
	local line own=${PROBECHECK_SUITE_DIR:-}
	if [[ ${PROBECHECK_PARALLEL:-0} != 1 ]]; then
		while IFS= read -r line; do printf '%s\n' "$line"; done
		return 0
	fi
	while IFS= read -r line; do
		[[ -n $own && $line == *"$own/"* ]] && printf '%s\n' "$line"
	done
	return 0
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
			[[ -n ${PC_INV_ANY:-} || $name == pc_* || $name == pc.* ]] || continue
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

# pc_inv_procs: "PID COMM STATE TAG" for every fixture or probecheck process,
# and every process in a session listed in PC_INV_SESSIONS (a file: the
# sessions another tracer's adapter was started in, whatever its
# processes are called).  TAG is the PC_TAG it carries, "-" if none, "?"
# if unreadable (harness/tools/pc-procs.c: a loop here over every
# process's files took 40-60 ms with the suites running side by side,
# three or four times a test).
pc_inv_procs() {
	"${PROBECHECK_BUILD:-${BASH_SOURCE[0]%/*}/../../build}/tools/pc-procs" \
		${PC_INV_SESSIONS:+"$PC_INV_SESSIONS"}
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

# ---------------------------------------------------------------------------
# The stash: what a tracer records on disk about what outlives it (tracefs
# entries), so that `probecheck cleanup` can undo it after the tracer died
# (providers/stash.c).  One file per tracer, "PID-START" (START = field 22
# of /proc/PID/stat), or ".PID-START.tmp" while it is being replaced, in
# $PROBECHECK_STASH or /run/probecheck.  A record exists exactly while its
# tracer has something that outlives it; after the tracer is gone (or after
# `probecheck cleanup`) there must be none.

# pc_inv_stash_dir: the stash directory, as stash_dir() computes it.
pc_inv_stash_dir() {
	printf '%s\n' "${PROBECHECK_STASH:-/run/probecheck}"
}

# pc_inv_stash_names: every entry of the stash directory, one per line.
pc_inv_stash_names() {
	local d f
	d=$(pc_inv_stash_dir)
	[[ -d $d ]] || return 0
	for f in "$d"/* "$d"/.*; do
		f=${f##*/}
		[[ $f == . || $f == .. || $f == '*' || $f == '.*' ]] && continue
		printf '%s\n' "$f"
	done
	return 0
}

# pc_inv_stash_owner NAME: "PID live" or "PID dead" for a record name
# ("? dead" if the name is not of the scheme).  Live: /proc/PID/stat shows
# the same start time and no zombie, as stash_tracer_alive() decides.
pc_inv_stash_owner() {
	local name=${1#.} stat pid start
	local -a f
	name=${name%.tmp}
	[[ $name =~ ^([0-9]+)-([0-9]+)$ ]] || { echo "? dead"; return 0; }
	pid=${BASH_REMATCH[1]} start=${BASH_REMATCH[2]}
	if { read -r stat <"/proc/$pid/stat"; } 2>/dev/null; then
		read -r -a f <<<"${stat##*) }"
		# f[0] is field 3 (state), f[19] field 22 (start time).
		if [[ ${f[19]:-} == "$start" && ${f[0]} != Z && ${f[0]} != X ]]; then
			echo "$pid live"
			return 0
		fi
	fi
	echo "$pid dead"
}

# ---------------------------------------------------------------------------
# Probe sites and semaphores of a living process, read from outside and
# compared with the ELF file: every USDT site of every object the process
# maps must hold the file's instruction bytes (an int3, 0xcc, left behind
# is a uprobe nobody removed), every semaphore the file's value (0: no
# tracer holds it).  Addresses come from readelf and /proc/PID/maps, never
# from the tracer under test; memory is read with pc-peek (/proc/PID/mem).

# pc-peek: $PC_INV_PEEK, else $PROBECHECK_BUILD/tools/pc-peek (read when
# used: common.bash sets PROBECHECK_BUILD after sourcing this file).
declare -gA _PC_INV_OBJ=()

# _pc_inv_peek: the pc-peek to use.
_pc_inv_peek() {
	"${PC_INV_PEEK:-$PROBECHECK_BUILD/tools/pc-peek}" "$@"
}

# _pc_inv_obj FILE: the USDT sites and semaphores of FILE, one line each,
#   "site VADDR FOFF LEN PROV:NAME BYTE..." / "sema ..." (decimal; BYTE:
#   the file's LEN bytes at FOFF in hex; FOFF -1: not in the file, zeros)
# sorted by VADDR, after a line "load VADDR" (the first PT_LOAD's).
# The site is the note's pc adjusted by .stapsdt.base (prelink); LEN is 5
# bytes (an int3 or a 5-byte call) cut at its segment's end.  Sets
# _pc_inv_key, and _PC_INV_OBJ[_pc_inv_key] to the lines.  Cached by
# (dev, inode, mtime, ctime, size): in _PC_INV_OBJ and, for the other
# tests of the suite and the subshells ($(...)) a variable dies with, in
# a file under BATS_RUN_TMPDIR: reading an object is 4 readelf and a
# pc-peek, a check with the cache none.  Fails if FILE cannot be read.
_pc_inv_obj() {
	local file=$1 line sbase='' prov name loc base sema load='' cache=''
	local -a segs=() w out=()
	_pc_inv_key=$(stat -Lc '%d:%i:%.9Y:%.9Z:%s' -- "$file" 2>/dev/null) || return 1
	[[ -n ${_PC_INV_OBJ[$_pc_inv_key]+x} ]] && return 0
	[[ -n ${BATS_RUN_TMPDIR:-} && -d $BATS_RUN_TMPDIR ]] &&
		cache=$BATS_RUN_TMPDIR/pc-inv-obj.${_pc_inv_key//[:.]/-}
	if [[ -n $cache && -s $cache ]]; then
		IFS= read -r -d '' _PC_INV_OBJ[$_pc_inv_key] <"$cache"
		return 0
	fi
	while IFS= read -r line; do
		if [[ $line =~ \.stapsdt\.base[[:space:]]+[A-Z_]+[[:space:]]+([0-9a-f]+) ]]; then
			sbase=$((0x${BASH_REMATCH[1]}))
		fi
	done < <(LC_ALL=C readelf -SW -- "$file" 2>/dev/null)
	while read -r -a w; do
		# LOAD offset vaddr paddr filesz memsz ...
		[[ ${w[0]:-} == LOAD ]] || continue
		segs+=("$((w[2])) $((w[1])) $((w[4]))")
		[[ -n $load ]] || load=$((w[2]))
	done < <(LC_ALL=C readelf -lW -- "$file" 2>/dev/null)
	# Not an ELF file (a locale archive): no sites, remembered as such.
	[[ -n $load ]] || segs=() load=0
	((${#segs[@]})) && while read -r prov name loc base sema _; do
		loc=$((loc)) base=$((base)) sema=$((sema))
		if [[ -n $sbase ]] && ((base)); then
			loc=$((loc + sbase - base))
		fi
		_pc_inv_place site "$loc" 5 "$prov:$name" "${segs[@]}" && out+=("$_pc_inv_line")
		((sema)) && _pc_inv_place sema "$sema" 2 "$prov:$name" "${segs[@]}" && out+=("$_pc_inv_line")
	done < <(pc_elf_notes "$file")
	_PC_INV_OBJ[$_pc_inv_key]="load $load"
	if ((${#out[@]})); then
		mapfile -t out < <(printf '%s\n' "${out[@]}" | sort -k2,2n -u)
		_pc_inv_file_bytes "$file" "${out[@]}" || return 1
	fi
	[[ -n $cache ]] && printf '%s' "${_PC_INV_OBJ[$_pc_inv_key]}" >"$cache.$BASHPID" &&
		mv -f "$cache.$BASHPID" "$cache"
	return 0
}

# _pc_inv_file_bytes FILE LINE...: append each line, with the file's bytes
# (one pc-peek for all), to _PC_INV_OBJ[_pc_inv_key].
_pc_inv_file_bytes() {
	local file=$1 l i k foff len
	local -a args=() got=()
	shift
	for l in "$@"; do
		read -r _ _ foff len _ <<<"$l"
		((foff >= 0)) && args+=("$foff" "$len")
	done
	if ((${#args[@]})); then
		mapfile -t got < <(_pc_inv_peek --file "$file" "${args[@]}")
		((${#got[@]} * 2 == ${#args[@]})) || return 1
	fi
	k=0
	for l in "$@"; do
		read -r _ _ foff len _ <<<"$l"
		if ((foff >= 0)); then
			l+=" ${got[k]}" k=$((k + 1))
		else
			for ((i = 0; i < len; i++)); do l+=" 00"; done
		fi
		_PC_INV_OBJ[$_pc_inv_key]+=$'\n'$l
	done
}

# _pc_inv_place KIND VADDR LEN NAME SEG...: _pc_inv_line = the object's
# line (without bytes); fails if VADDR is in no PT_LOAD ("VADDR FOFF
# FILESZ" each).  A variable, not output: no $(...) fork per site.
_pc_inv_place() {
	local kind=$1 va=$2 len=$3 name=$4 s sv so sf
	shift 4
	for s in "$@"; do
		read -r sv so sf <<<"$s"
		((va >= sv)) || continue
		if ((va + len <= sv + sf)); then
			_pc_inv_line="$kind $va $((va - sv + so)) $len $name"
			return 0
		fi
		if ((va < sv + sf)); then
			_pc_inv_line="$kind $va $((va - sv + so)) $((sv + sf - va)) $name"
			return 0
		fi
	done
	# Beyond the file's bytes (a .bss semaphore): zeros at load.
	[[ $kind == sema ]] || return 1
	_pc_inv_line="$kind $va -1 $len $name"
}

# pc_inv_sites PID: one line per probe site or semaphore of PID that
# differs from its file; nothing when all match or PID is gone (a process
# that exits while being read is not a violation).
pc_inv_sites() {
	local pid=$1 range perms off dev ino path start fpath load bias first
	local -A seen=()
	local -a objs=()
	{
		while read -r range perms off dev ino path; do
			[[ $off == 00000000 && $ino != 0 && $path == /* ]] || continue
			start=${range%-*}
			[[ -z ${seen[$start]:-} ]] || continue
			seen[$start]=1
			objs+=("$range" "$path")
		done <"/proc/$pid/maps"
	} 2>/dev/null || return 0
	for ((first = 0; first < ${#objs[@]}; first += 2)); do
		range=${objs[first]} path=${objs[first + 1]}
		# The mapped file itself, even if its path was replaced or deleted.
		fpath=/proc/$pid/map_files/$range
		_pc_inv_obj "$fpath" || continue
		[[ ${_PC_INV_OBJ[$_pc_inv_key]} == *$'\n'* ]] || continue
		load=${_PC_INV_OBJ[$_pc_inv_key]%%$'\n'*}
		load=${load#load }
		# Load bias: the offset-0 mapping is the page of the first PT_LOAD.
		bias=$((0x${range%-*} - (load & ~0xfff)))
		_pc_inv_check_obj "$pid" "$path" "$bias" site
		_pc_inv_check_obj "$pid" "$path" "$bias" sema
	done
	return 0
}

# _pc_inv_check_obj PID SHOWN BIAS KIND: compare KIND lines of the
# cached object, read in windows of up to 4096 bytes (one pc-peek each).
_pc_inv_check_obj() {
	local pid=$1 shown=$2 bias=$3 kind=$4 k a b c d e n i j wend got at
	local -a va=() ln=() nm=() fb=() mb sm sf
	while read -r k a b c d e; do
		[[ $k == "$kind" ]] || continue
		va+=("$a") ln+=("$c") nm+=("$d") fb+=("$e")
	done <<<"${_PC_INV_OBJ[$_pc_inv_key]}"
	n=${#va[@]}
	for ((i = 0; i < n; i = j + 1)); do
		j=$i
		wend=$((va[i] + ln[i]))
		while ((j + 1 < n && va[j + 1] + ln[j + 1] - va[i] <= 4096)); do
			j=$((j + 1))
			((va[j] + ln[j] > wend)) && wend=$((va[j] + ln[j]))
		done
		printf -v at '0x%x' $((va[i] + bias))
		if ! got=$(_pc_inv_peek --bytes "$pid" "$at" $((wend - va[i])) 2>&1); then
			pc_inv_alive "$pid" || return 0
			echo "pid $pid: cannot read '$shown' at $at: $got"
			continue
		fi
		read -r -a mb <<<"$got"
		for ((k = i; k <= j; k++)); do
			a=${mb[*]:va[k] - va[i]:ln[k]}
			b=${fb[k]}
			[[ $a == "$b" ]] && continue
			printf -v at '0x%x' $((va[k] + bias))
			if [[ $kind == site ]]; then
				echo "probe site ${nm[k]} of '$shown' in pid $pid at $at holds '$a', the file has '$b'"
			else
				# 16 bits, little-endian.
				read -r -a sm <<<"$a"
				read -r -a sf <<<"$b"
				echo "semaphore of ${nm[k]} of '$shown' in pid $pid at $at reads $((0x${sm[1]}${sm[0]})), the file has $((0x${sf[1]}${sf[0]}))"
			fi
		done
	done
}
