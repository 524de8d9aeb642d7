# tracer.bash — which tracer the suites judge (harness/tracers/README.md).
#
# Without PC_TRACER the suites run probecheck itself, as `make check`
# always has.  With PC_TRACER=NAME (`make conformance`), `pc trace --json`
# and `pc list --json` go to the adapter harness/tracers/NAME instead, and
# a test says what it needs of a tracer:
#   requires tracer:CLAIM...   SKIP unless the tracer claims it (the
#                              adapter's reason is the skip's reason)
#   pc_probecheck_only WHY     SKIP for other tracers: the test is about
#                              probecheck's own CLI, stash or attach modes
# A call the adapter cannot take (text output, `features`, an option the
# tracer does not claim) fails the test loudly: a test that forgot to say
# what it needs must not pass or skip silently.
#
# Sourced by common.bash; bash only.

PC_TRACER=${PC_TRACER:-}
PC_TRACERS_DIR=${PC_TRACERS_DIR:-$PROBECHECK_ROOT/harness/tracers}
# Other tracers name their BPF objects as they like: every new one counts.
if [[ -n $PC_TRACER && $PC_TRACER != probecheck ]]; then
	export PC_INV_ANY=1
fi

# pc_tracer: the name of the tracer under test.
pc_tracer() {
	echo "${PC_TRACER:-probecheck}"
}

# pc_tracer_other: succeed if the tracer under test is not probecheck.
pc_tracer_other() {
	[[ -n $PC_TRACER && $PC_TRACER != probecheck ]]
}

# pc_tracer_claims_file: the adapter's claims, asked once per bats run.
pc_tracer_claims_file() {
	local f=${PC_TRACER_CLAIMS:-${BATS_RUN_TMPDIR:-/tmp}/tracer-claims.$PC_TRACER}
	if [[ ! -s $f ]]; then
		"$PC_TRACERS_DIR/$PC_TRACER" claims >"$f.$$" 2>&1 && mv "$f.$$" "$f" ||
			{ echo "tracer $PC_TRACER: '$PC_TRACERS_DIR/$PC_TRACER claims' failed: $(cat "$f.$$")" >&2
			  rm -f "$f.$$"; return 1; }
	fi
	echo "$f"
}

# pc_tracer_claim CLAIM: succeed if the tracer claims CLAIM (probecheck,
# run directly, claims everything).  pc_tracer_why CLAIM: its reason not to.
pc_tracer_claim() {
	local f
	[[ -n $PC_TRACER ]] || return 0
	f=$(pc_tracer_claims_file) || return 1
	grep -qx "$1 yes" "$f"
}

pc_tracer_why() {
	local f line
	f=$(pc_tracer_claims_file) || return 1
	line=$(grep -m1 "^$1 " "$f") || { echo "the adapter lists no claim '$1'"; return 0; }
	line=${line#"$1 "}
	echo "${line#no }"
}

# _pc_requires_tracer CLAIM: SKIP this test unless claimed.
_pc_requires_tracer() {
	pc_tracer_claim "$1" && return 0
	[[ -s $(pc_tracer_claims_file) ]] || { fail "tracer $PC_TRACER: no claims"; return 1; }
	skip "tracer $PC_TRACER does not claim $1: $(pc_tracer_why "$1")"
}

# pc_probecheck_only WHY: SKIP unless the tracer under test is probecheck.
pc_probecheck_only() {
	pc_tracer_other || return 0
	skip "probecheck only: $*"
}

# _pc_tracer_argv ARGS...: set PC_ARGV to the command that runs
# `probecheck ARGS` for the tracer under test; fail (status 3) with the
# reason when that tracer cannot take the call.
_pc_tracer_argv() {
	local a json=0
	local -a rest=()
	PC_ARGV=("$PC_BIN" "$@")
	[[ -n $PC_TRACER ]] || return 0
	local drop=0
	for a in "${@:2}"; do
		if ((drop)); then
			drop=0
			[[ $a == perf || $a == auto ]] && continue
			rest+=(--attach)
		fi
		case $a in
		--json) json=1 ;;
		# The default attach path (perf_event_open uprobes) is what
		# every other tracer uses too; other modes are probecheck's.
		--attach=perf|--attach=auto) [[ $PC_TRACER == probecheck ]] && rest+=("$a") ;;
		--attach) if [[ $PC_TRACER == probecheck ]]; then rest+=("$a"); else drop=1; fi ;;
		*) rest+=("$a") ;;
		esac
	done
	if [[ ($1 == trace || $1 == list) && $json == 1 ]]; then
		PC_ARGV=("$PC_TRACERS_DIR/$PC_TRACER" "$1" "${rest[@]}")
		return 0
	fi
	[[ $PC_TRACER == probecheck ]] && return 0
	echo "pc: 'probecheck $*' is probecheck's own CLI, which tracer $PC_TRACER does not have" \
	     "(the test should say pc_probecheck_only)" >&2
	return 3
}

# _pc_argv_text: PC_ARGV for the log, "probecheck ARGS" for probecheck.
_pc_argv_text() {
	if [[ ${PC_ARGV[0]} == "$PC_BIN" ]]; then
		printf 'probecheck %s' "$(printf '%q ' "${PC_ARGV[@]:1}")"
	else
		printf '%q ' "${PC_ARGV[@]}"
	fi
}
