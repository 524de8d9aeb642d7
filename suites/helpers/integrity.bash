# integrity.bash — probe sites as the kernel leaves them, and the
# integrity oracle's corruption records (fixtures/fx_integ.c), for the
# suites that trace nop5 sites.  Loaded after helpers/common.
#
# A uprobe on a 5-byte nop (0f 1f 44 00 00) is an int3 until its first hit;
# since 6.18 the x86 kernel then rewrites it into a CALL (e8 rel32) into a
# [uprobes-trampoline] page of the process.  The CALL pushes its return
# address at -8(%rsp) and the trampoline pushes %rcx, %r11 and %rax below
# it: the 32 bytes under %rsp, the red zone's top, are overwritten at every
# hit after the first (ci/kernel-issues K1).  The functions here tell that
# exact signature apart from any other corruption, so that only it becomes
# a kernel finding and everything else stays a failure.

# pc_sym_addr PID FILE SYMBOL: runtime address of SYMBOL (.symtab) of FILE
# in PID.
pc_sym_addr() {
	local v
	v=$(nm -- "$2" 2>/dev/null | awk -v s="$3" '$3 == s { print $1; exit }')
	[[ -n $v ]] || { fail "pc_sym_addr: no symbol '$3' in '$2'"; return 1; }
	pc_runtime_addr "$1" "$2" "0x$v"
}

# pc_sym_off FILE SYMBOL BASE: offset of SYMBOL from symbol BASE (hex).
pc_sym_off() {
	local a b
	a=$(nm -- "$1" | awk -v s="$2" '$3 == s { print $1; exit }')
	b=$(nm -- "$1" | awk -v s="$3" '$3 == s { print $1; exit }')
	[[ -n $a && -n $b ]] || { fail "pc_sym_off: '$2' or '$3' not in '$1'"; return 1; }
	printf '0x%x\n' $((0x$a - 0x$b))
}

# pc_file_bytes FILE SYMBOL N: the N bytes of FILE at SYMBOL, from the file.
pc_file_bytes() {
	local va off
	va=$(nm -- "$1" | awk -v s="$2" '$3 == s { print $1; exit }')
	[[ -n $va ]] || { fail "pc_file_bytes: no symbol '$2' in '$1'"; return 1; }
	local -a w
	off=
	while read -r -a w; do
		# LOAD offset vaddr paddr filesz ...
		[[ ${w[0]:-} == LOAD ]] || continue
		if ((0x$va >= w[2] && 0x$va < w[2] + w[4])); then
			off=$((0x$va - w[2] + w[1]))
			break
		fi
	done < <(LC_ALL=C readelf -lW -- "$1")
	[[ -n $off ]] || { fail "pc_file_bytes: '$2' is in no PT_LOAD of '$1'"; return 1; }
	od -An -tx1 -v -j "$off" -N "$3" -- "$1" | xargs
}

# pc_site_state PID ADDR FILEBYTES: what the kernel made of the 5 bytes
# at ADDR: "file" (FILEBYTES), "int3" (cc + the rest of the file's bytes),
# "call-trampoline" (e8 rel32 into a [uprobes-trampoline] mapping of PID),
# or "other"; PC_SITE_BYTES gets the bytes.
pc_site_state() {
	local pid=$1 addr=$2 file=$3 b rel tgt lo hi line
	local -a x
	b=$(pc_peek_bytes "$pid" "$addr" 5) || { fail "pc_site_state: cannot read pid $pid at $addr"; return 1; }
	PC_SITE_BYTES=$b
	read -r -a x <<<"$b"
	if [[ $b == "$file" ]]; then
		echo file
	elif [[ ${x[0]} == cc && ${x[*]:1} == "$(cut -d' ' -f2- <<<"$file")" ]]; then
		echo int3
	elif [[ ${x[0]} == e8 ]]; then
		rel=$((0x${x[4]}${x[3]}${x[2]}${x[1]}))
		((rel >= 0x80000000)) && rel=$((rel - 0x100000000))
		tgt=$((addr + 5 + rel))
		while IFS= read -r line; do
			[[ $line == *'[uprobes-trampoline]'* ]] || continue
			lo=$((0x${line%%-*})) hi=${line#*-}
			hi=$((0x${hi%% *}))
			((tgt >= lo && tgt < hi)) && { echo call-trampoline; return 0; }
		done <"/proc/$pid/maps"
		echo other
	else
		echo other
	fi
}

# pc_trampoline_mapped PID: PID has a [uprobes-trampoline] mapping.
pc_trampoline_mapped() {
	grep -q '\[uprobes-trampoline\]' "/proc/$1/maps" 2>/dev/null
}

# integ_records ORACLE: the corruption records, one per line:
# PROBE PID HIT WHAT WHERE SAME_AS EXPECTED FOUND (WHERE and SAME_AS "-"
# when empty).
integ_records() {
	pc_jsel -t corrupt corrupt pid hit what where same_as expected found "$1" |
		awk -F'\t' -v OFS=' ' '{ if ($5 == "") $5 = "-"; if ($6 == "") $6 = "-"; $1 = $1; print }'
}

# integ_redzone_call ORACLE [ALLOW_RESULT]: every corruption record of
# ORACLE is the optimized-CALL signature (K1): at each corrupted hit
# exactly four red-zone qwords differ, -8(%rsp) holding site+5 (the CALL's
# return address), -16 %rcx, -24 %r11, -32 %rax (the trampoline's
# pushes).  With ALLOW_RESULT=1 "result" records (fxint:result's own
# computation) also count, for tests that saw the site optimized.  Prints
# the first hit that does not fit (returns 1) or a one-line summary
# (returns 0); no record at all: nothing, returns 2.  INTEG_RET: what the
# return address is relative to the site the fixture knows (default
# site+5; site+6 for a uprobe on the nop5 of nop; nop5).
integ_redzone_call() {
	local o=$1 allow=${2:-0} p pid hit what where same e f n=0 key
	local -A want=([-8(%rsp)]=${INTEG_RET:-site+5} [-16(%rsp)]=%rcx [-24(%rsp)]=%r11 [-32(%rsp)]=%rax)
	local -A got=()
	while read -r p pid hit what where same e f; do
		n=$((n + 1))
		[[ $what == result && $allow == 1 ]] && continue
		key="$p pid $pid hit $hit"
		if [[ $what != redzone || ${want[$where]:-x} != "$same" ]]; then
			echo "not the optimized-CALL signature: $key: $what $where expected $e found $f (= ${same/-/nothing known})"
			return 1
		fi
		got[$key]+="$where "
	done < <(integ_records "$o")
	((n)) || return 2
	# Hit numbers restart at every fire step: a key may cover several
	# hits, each with the same four qwords.
	for key in "${!got[@]}"; do
		if [[ $(tr ' ' '\n' <<<"${got[$key]}" | sed '/^$/d' | sort | uniq -c | awk '{ print $1 }' | sort -u | wc -l) != 1 ||
		      $(tr ' ' '\n' <<<"${got[$key]}" | sed '/^$/d' | sort -u | xargs) != "-16(%rsp) -24(%rsp) -32(%rsp) -8(%rsp)" ]]; then
			echo "not the optimized-CALL signature: $key: only ${got[$key]}differ"
			return 1
		fi
	done
	echo "$n corruption records at ${#got[@]} hits, each exactly -8(%rsp) = ${INTEG_RET:-site+5} (a CALL's return address) and -16/-24/-32(%rsp) = %rcx/%r11/%rax at the site; e.g. $(integ_records "$o" | head -n 1)"
}

# integ_judge ORACLE TRACE [ORACLECMP-OPTION]...: the trace equals the
# oracle (with the options, e.g. --only/--mask) apart from corruption
# records.  Fails on any event difference.  Sets INTEG_CORRUPT to the
# oraclecmp output when the only difference is corruption records, empty
# otherwise.
integ_judge() {
	local o=$1 t=$2 out st=0
	shift 2
	INTEG_CORRUPT=
	out=$(pc_oraclecmp "$@" "$o" "$t" 2>&1) || st=$?
	pc_log "oraclecmp $* $o $t: status $st"
	if ((st == 0)); then
		[[ $out != "oraclecmp: 0 events match" ]] ||
			{ fail "integ_judge: no events on either side ($o, $t)"; return 1; }
		pc_log "$out"
		return 0
	fi
	if [[ $(tail -n 1 <<<"$out") == "oraclecmp: CORRUPTED: "* ]]; then
		INTEG_CORRUPT=$out
		pc_log "$(tail -n 1 <<<"$out")"
		return 0
	fi
	printf 'oracle: %s\ntrace:  %s\n%s\n' "$o" "$t" "$out" |
		batslib_decorate "oracle and trace differ" | fail
}

# integ_verdict ORACLE [ALLOW_RESULT] [EVIDENCE...]: after every other
# check passed: nothing to say if the program was unharmed; the K1
# finding if every corruption record is its signature; a failure naming
# the corruption otherwise.  INTEG_MORE: further symptoms, as arguments
# of pc_kernel_symptom ("-- SLUG EVIDENCE..."), reported with K1 or alone.
integ_verdict() {
	local o=$1 allow=${2:-0} why st=0
	shift 2 2>/dev/null || shift $#
	why=$(integ_redzone_call "$o" "$allow") || st=$?
	case $st in
	2) ((${#INTEG_MORE[@]} == 0)) || pc_kernel_symptom "${INTEG_MORE[@]:1}" ;;
	0) pc_kernel_symptom redzone-call "$why" "$@" ${INTEG_MORE[@]+"${INTEG_MORE[@]}"} ;;
	*) printf 'traced program corrupted: %s\n%s\n' "$why" "$(integ_records "$o" | head -n 20)" |
		batslib_decorate "traced program corrupted" | fail ;;
	esac
}

# pc_sym_fileoff FILE SYMBOL: the file offset of SYMBOL (hex), as a uprobe
# takes it.
pc_sym_fileoff() {
	local va off=''
	local -a w
	va=$(nm -- "$1" | awk -v s="$2" '$3 == s { print $1; exit }')
	[[ -n $va ]] || { fail "pc_sym_fileoff: no symbol '$2' in '$1'"; return 1; }
	while read -r -a w; do
		[[ ${w[0]:-} == LOAD ]] || continue
		if ((0x$va >= w[2] && 0x$va < w[2] + w[4])); then
			off=$((0x$va - w[2] + w[1]))
			break
		fi
	done < <(LC_ALL=C readelf -lW -- "$1")
	[[ -n $off ]] || { fail "pc_sym_fileoff: '$2' is in no PT_LOAD of '$1'"; return 1; }
	printf '0x%x\n' "$off"
}
