#!/usr/bin/env bats
# faultsattach.bats — faults that land while the tracer attaches (after
# the first site, six of ten, the last one before ready; SIGINT and SIGTERM, which wait for the
# attach to complete; the target or the -c command killed or exiting) in
# both attach modes, perf and tracefs; afterwards every invariant holds.
# How a fault lands where it should, and what "nothing left" means, is
# the header of faults.bats; the machinery is helpers/faults.bash.
# bats file_tags=faults

load helpers/common
load helpers/faults

@test "faultsattach.perf-kill-first-site: perf: tracer SIGKILLed after the first site is attached: nothing left, target restored" {
	attach_kill perf 1
}

@test "faultsattach.perf-kill-six-sites: perf: tracer SIGKILLed with 6 of 10 sites attached: nothing left, target restored" {
	attach_kill perf 6
}

@test "faultsattach.perf-kill-before-ready: perf: tracer SIGKILLed after the last site is attached, before ready: nothing left" {
	attach_kill perf 10
}

@test "faultsattach.perf-int-during-attach: perf: SIGINT during attach: the attach completes, then a clean detach, exit 0" {
	attach_stop perf INT
}

@test "faultsattach.perf-term-during-attach: perf: SIGTERM during attach: the attach completes, then a clean detach, exit 0" {
	attach_stop perf TERM
}

@test "faultsattach.perf-target-killed-attach: perf: target SIGKILLed during attach: exit 1 'exited during attach', nothing left" {
	target_gone_during_attach perf kill
}

@test "faultsattach.perf-target-exits-attach: perf: target exiting during attach: exit 1 'exited during attach', nothing left" {
	target_gone_during_attach perf exit
}

@test "faultsattach.perf-cmd-killed-attach: perf: -c command SIGKILLed during attach: exit 1, both reported, nothing left" {
	command_killed_during_attach perf
}

@test "faultsattach.tracefs-kill-first-site: tracefs: tracer SIGKILLed after the first site: its entry and record stay until cleanup, then nothing" {
	attach_kill tracefs 1
}

@test "faultsattach.tracefs-kill-six-sites: tracefs: tracer SIGKILLed with 6 of 10 sites attached: 6 entries recorded, cleanup removes them" {
	attach_kill tracefs 6
}

@test "faultsattach.tracefs-kill-before-ready: tracefs: tracer SIGKILLed after the last site, before ready: cleanup removes all 10" {
	attach_kill tracefs 10
}

@test "faultsattach.tracefs-int-during-attach: tracefs: SIGINT during attach: the attach completes, then a clean detach, no record" {
	attach_stop tracefs INT
}

@test "faultsattach.tracefs-term-during-attach: tracefs: SIGTERM during attach: the attach completes, then a clean detach, no record" {
	attach_stop tracefs TERM
}

@test "faultsattach.tracefs-target-killed-attach: tracefs: target SIGKILLed during attach: exit 1 'exited during attach', nothing left" {
	target_gone_during_attach tracefs kill
}

@test "faultsattach.tracefs-target-exits-attach: tracefs: target exiting during attach: exit 1 'exited during attach', nothing left" {
	target_gone_during_attach tracefs exit
}

@test "faultsattach.tracefs-cmd-killed-attach: tracefs: -c command SIGKILLed during attach: exit 1, both reported, nothing left" {
	command_killed_during_attach tracefs
}
