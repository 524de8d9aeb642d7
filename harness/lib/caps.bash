# caps.bash — what this kernel and machine can do, probed once per run.
#
# harness/run/run-suites calls pc_caps_probe once and exports PROBECHECK_CAPS
# (the file it wrote); `requires` in helpers/common.bash only reads it.  A
# suite run directly with bats probes once per bats run instead, into
# $BATS_RUN_TMPDIR.
#
# The file is key=value lines.  Every capability has KEY=1 or KEY=0, and
# KEY_why=... says what was missing when it is 0, so a SKIP can name it.
# The keys are the rows of `probecheck features`, one key per capability
# everywhere (`requires ref_ctr_offset`, RESULTS.md, ci/kernel-caps).
# Sourced by bash only; defines functions, runs nothing.

PC_TRACEFS=${PC_TRACEFS:-/sys/kernel/tracing}

# pc_tracefs_mount: tracefs at $PC_TRACEFS, mounting it if we may.
# Prints "mounted" if it did the mount.  Fails if tracefs is not there.
# An action, not a probe: whether tracefs works is the registry's row.
pc_tracefs_mount() {
	[[ -e $PC_TRACEFS/uprobe_events ]] && return 0
	mount -t tracefs nodev "$PC_TRACEFS" 2>/dev/null || return 1
	[[ -e $PC_TRACEFS/uprobe_events ]] || return 1
	echo mounted
}

# pc_caps_probe FILE: probe everything once, write FILE.
#
# Every capability is a row of the tracer's feature registry
# (providers/features.h): `probecheck features` prints KEY=0|1 and, after
# a 0, KEY_why=...; all of them are copied here as they are, so a row
# added there is a capability here with nothing to change.  Then what
# the harness adds: tracefs_mounted_by_harness=1 when it mounted tracefs,
# and the attach_auto lines.
pc_caps_probe() {
	local f=$1 m mount_ok=1 feat
	local pcbin=${PROBECHECK_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}/probecheck
	: >"$f" || return 1
	printf 'kernel=%s\n' "$(uname -r)" >>"$f"
	printf 'probed_at=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$f"

	# Mounted first, so that the tracer's tracefs row sees it.
	m=$(pc_tracefs_mount) || mount_ok=0
	# A features probe that cannot run is the tracer failing, not the
	# kernel lacking something: no capability file, so the run stops
	# (every test SKIPping "not reported" would hide it).
	if ! feat=$("$pcbin" features 2>&1); then
		printf 'caps: %s features failed: %s\n' "$pcbin" "$feat" >&2
		rm -f "$f"
		return 1
	fi
	if ((!mount_ok)); then
		# The suites read and write $PC_TRACEFS/uprobe_events
		# themselves: where it cannot be mounted, tracefs is absent
		# for them, whatever path the tracer found.
		feat=$(sed -E '/^tracefs(_why)?=/d' <<<"$feat")
		feat+=$'\n'"tracefs=0"$'\n'"tracefs_why=tracefs not mounted at $PC_TRACEFS and cannot be mounted"
	fi
	grep -E '^[a-z][a-z0-9_]*(=[01]|_why=.*)$' <<<"$feat" >>"$f" || true
	[[ $m == mounted ]] && printf 'tracefs_mounted_by_harness=1\n' >>"$f"
	grep '^attach_auto' <<<"$feat" >>"$f" || true
	return 0
}

# pc_caps_file: the caps file for this run, probing once if nobody did.
pc_caps_file() {
	local f
	if [[ -n ${PROBECHECK_CAPS:-} && -s $PROBECHECK_CAPS ]]; then
		echo "$PROBECHECK_CAPS"
		return 0
	fi
	f=${BATS_RUN_TMPDIR:?not under bats and PROBECHECK_CAPS unset}/pc-caps
	if [[ ! -s $f ]]; then
		# Written aside and renamed: a reader never sees half a file.
		pc_caps_probe "$f.$$" && mv -f "$f.$$" "$f" || return 1
	fi
	echo "$f"
}

# pc_mode_caps MODE: the capabilities (rows of `probecheck features`) the
# attach mode MODE needs, space-separated (none for auto, which picks
# what the kernel has); fails for a mode it does not know.  The one map
# from attach modes to capabilities: the suites' pc_use_mode
# (suites/helpers/fixtures.bash) and soak's mode_missing use it.
pc_mode_caps() {
	case $1 in
	perf) echo uprobe_pmu ;;
	tracefs) echo tracefs uprobe_pmu ;;
	multi) echo uprobe_multi ;;
	auto) echo ;;
	*) return 1 ;;
	esac
}
