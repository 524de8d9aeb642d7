#!/usr/bin/env bats
# faultsdetach.bats — faults that land while the tracer traces or
# detaches (SIGINT, SIGTERM and SIGKILL while tracing; SIGKILL, a second
# SIGINT and SIGTERM while the links go, and in tracefs mode while the
# entries go) in both attach modes; afterwards every invariant holds.
# How a fault lands where it should, and what "nothing left" means, is
# the header of faults.bats; the machinery is helpers/faults.bash.
# bats file_tags=faults

load helpers/common
load helpers/faults

@test "faultsdetach.perf-int-tracing: perf: SIGINT while tracing: exit 0, nothing left" {
	tracing_signal perf INT
}

@test "faultsdetach.perf-term-tracing: perf: SIGTERM while tracing: exit 0, nothing left" {
	tracing_signal perf TERM
}

@test "faultsdetach.perf-kill-tracing: perf: SIGKILL while tracing: the kernel undoes it all, target restored" {
	tracing_signal perf KILL
}

@test "faultsdetach.perf-kill-during-detach: perf: SIGKILL during detach (5 of 10 links gone): nothing left" {
	detach_signal perf KILL
}

@test "faultsdetach.perf-second-int-detach: perf: a second SIGINT during detach: the detach completes, nothing left" {
	detach_signal perf INT
}

@test "faultsdetach.perf-term-during-detach: perf: SIGTERM during detach: the detach completes, nothing left" {
	detach_signal perf TERM
}

@test "faultsdetach.tracefs-int-tracing: tracefs: SIGINT while tracing: exit 0, no entry, no record" {
	tracing_signal tracefs INT
}

@test "faultsdetach.tracefs-term-tracing: tracefs: SIGTERM while tracing: exit 0, no entry, no record" {
	tracing_signal tracefs TERM
}

@test "faultsdetach.tracefs-kill-tracing: tracefs: SIGKILL while tracing: target restored at once, entries until cleanup" {
	tracing_signal tracefs KILL
}

@test "faultsdetach.tracefs-kill-during-detach: tracefs: SIGKILL during detach of the links: all entries recorded, cleanup removes them" {
	detach_signal tracefs KILL
}

@test "faultsdetach.tracefs-second-int-detach: tracefs: a second SIGINT during detach of the links: the detach completes, nothing left" {
	detach_signal tracefs INT
}

@test "faultsdetach.tracefs-term-during-detach: tracefs: SIGTERM during detach of the links: the detach completes, nothing left" {
	detach_signal tracefs TERM
}

@test "faultsdetach.tracefs-kill-during-removal: tracefs: SIGKILL during removal of the entries (3 of 10 gone): cleanup removes the other 7" {
	entries_signal tracefs KILL
}

@test "faultsdetach.tracefs-term-during-removal: tracefs: SIGTERM during removal of the entries: the removal completes, no record" {
	entries_signal tracefs TERM
}
