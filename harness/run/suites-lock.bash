# harness/run/suites-lock.bash — one run at a time of what attaches uprobes
# on this machine: run-suites, run-unit (test_session, test_place and
# test_follow attach and load BPF), run-valgrind.  Their invariants are
# machine-wide, so a second run would see the first one's uprobes as
# leftovers, and its teardown could remove them.  A later run waits.
# flock -o: the lock is held by flock alone, never by a process the tests
# start (a stray one would otherwise hold it forever).  A nested run
# (report.bats runs run-suites; harness/run/mutate holds the lock itself) is
# inside its caller's lock: PROBECHECK_SUITES_LOCKED says so.

# suites_lock WHO COMMAND...: exec COMMAND (the caller: "$0" "$@") under
# the lock, unless it is held by our caller or this machine has no
# /run/lock or flock (a guest, where nothing else runs).
suites_lock() {
	local who=$1 lock=${PROBECHECK_SUITES_LOCK:-/run/lock/probecheck-suites}
	shift
	[[ -z ${PROBECHECK_SUITES_LOCKED:-} && -d ${lock%/*} ]] || return 0
	command -v flock >/dev/null || return 0
	export PROBECHECK_SUITES_LOCKED=$lock
	flock -n "$lock" true ||
		echo "$who: another run of the suites holds $lock: waiting for it to end" >&2
	exec flock -o "$lock" "$@"
}
