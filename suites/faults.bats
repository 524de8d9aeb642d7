#!/usr/bin/env bats
# faults.bats — the tracer dies, or is told to stop, at every stage of its
# life, and so does its target; afterwards (after `probecheck cleanup`, for
# what can outlive a tracer: the named entries of the tracefs attach mode)
# every invariant holds: no uprobe of ours, no BPF object of ours, the
# surviving target's probe sites hold their file's bytes (no int3) and its
# semaphores read 0, no stash record.  Both attach modes: perf (fd-based
# uprobes, which the kernel removes when the fd closes) and tracefs (named
# uprobe_events entries, which only we remove: by detaching, or by cleanup
# from the stash record of a dead tracer).
#
# The target is fx_many, whose sites the tracer attaches in order
# (path, provider, name, pc); the tests take fxm:n0..n4 (no semaphore),
# then fxm:s0..s4 (one semaphore each): NSITES = 10.  Ten is enough for a
# fault to land with sites on both sides of it, and each perf site costs
# ~0.1 s at detach (an RCU wait per close), which 27 tests pay.
#
# Landing "during attach" and "during detach" without sleeps: the tracer
# runs under strace with a SIGSTOP injected on a chosen system call, so it
# freezes at an exact point (the call completes, the tracer stops before
# acting on its result); the test checks that the freeze is where it
# thinks (perf fds open, int3s in the target, entries in tracefs), then
# delivers the fault and lets it go on.
#   attach, after site K:       the Kth perf_event_open (one per site)
#   detach, links (both modes): ATTACH_IOCTLS ioctls per site on its perf
#                               fd at attach (PERF_EVENT_IOC_ENABLE; before
#                               it ..._SET_BPF where the kernel has no BPF
#                               link for perf events, 5.15, which came with
#                               bpf_cookie) and one at detach (..._DISABLE,
#                               in reverse order), so the
#                               (NSITES * ATTACH_IOCTLS + K)th ioctl on a
#                               perf fd (strace -P 'anon_inode:[perf_event]')
#                               is the Kth detach
#   detach, tracefs entries:    the (NSITES + K)th write to uprobe_events
#                               (one "p:" per entry, then one "-:" each)
# SIGINT and SIGTERM are blocked in the tracer (it reads them from a
# signalfd in its event loop), so one that arrives during attach takes
# effect after the attach completes, and one during detach after the detach
# completes: the tracer then dies of it.  SIGKILL is immediate.
#
# Sites, semaphores and addresses come from readelf and /proc/PID/maps via
# pc_inv_sites (harness/lib/invariants.bash), never from the tracer under test.
# A soak with random fault points is harness/run/soak (`make soak`); a sample of
# it runs here, with the checker's own tests.  The faults at chosen points
# are faultsattach.bats and faultsdetach.bats (three suites, so that they
# run side by side: 30 tests of 5-9 s each, most of it waiting); their
# machinery is helpers/faults.bash.
# bats file_tags=faults

load helpers/common
load helpers/faults

# ---------------------------------------------------------------------------
# Random fault points: a sample of harness/run/soak, 3 per mode (1.6 s each
# here; 10 was 48 s of make check's 8 minutes, 5 25 s); `make soak` runs 200.

@test "faults.soak-sample: soak sample: 3 random faults per attach mode (perf, tracefs, multi), every invariant holds after cleanup" {
	requires cmd:strace "file:$PC_FIXTURES/fx_many"
	run -0 "$PROBECHECK_ROOT/harness/run/soak" -n 3
	assert_line --regexp '^soak: perf: 3 iterations, 0 leaks,'
	if pc_cap tracefs; then
		assert_line --regexp '^soak: tracefs: 3 iterations, 0 leaks,'
	fi
	if pc_cap uprobe_multi; then
		assert_line --regexp '^soak: multi: 3 iterations, 0 leaks,'
	fi
	# Leaks a SIGKILLed tracer could not have caused are the kernel's
	# (K3, reported deterministically by detachkill.bats): counted apart.
	grep -E '^soak: .*kernel K3' <<<"$output" | sed 's/^/# /' >&3 || true
}

# ---------------------------------------------------------------------------
# The checker itself: each new invariant broken on purpose in a nested run.

# nested NAME [VAR=VALUE...]: run the tests on stdin ("TEST name {") as
# their own bats file with the same helpers; TAP output in $output.
nested() {
	local f=$BATS_TEST_TMPDIR/$1.bats
	{
		echo "load '$PROBECHECK_ROOT/suites/helpers/common'"
		sed 's/^\([[:space:]]*\)TEST /\1@test /'
	} >"$f"
	env $(compgen -e | grep '^BATS_' | sed 's/^/-u /') "${@:2}" \
		PC_RUN_TAG="$PC_TAG/nested" BATS_TEST_TIMEOUT=60 bats --tap "$f" 2>&1
}

@test "faults.checker-sites: checker: an int3 or a raised semaphore left in a surviving fixture fails the test" {
	requires "file:$PC_FIXTURES/fx_many"
	run -1 nested sites <<-EOF
		start() {
			# Blocked on a fifo: it must not run into the int3.
			pc_spawn P "$PC_FIXTURES/fx_many" "ready:\$BATS_TEST_TMPDIR/r" "wait:\$(pc_fifo hold)"
			pc_wait_file "\$BATS_TEST_TMPDIR/r"
		}
		# poke PID VADDR HEX: write bytes at link-time VADDR of fx_many.
		poke() {
			printf "\$3" | dd of=/proc/\$1/mem bs=1 conv=notrunc status=none \
				seek=\$((\$(pc_runtime_addr "\$1" "$PC_FIXTURES/fx_many" "\$2")))
		}
		note() {
			pc_elf_notes "$PC_FIXTURES/fx_many" | awk -v p="\$1" '\$1 ":" \$2 == p { print \$3, \$5 }'
		}
		TEST "sites.untouched-fixture: untouched" { start; }
		TEST "sites.int3-left: int3" { start; read -r pc sema < <(note fxm:n7); poke "\$P" "\$pc" '\\xcc'; }
		TEST "sites.sema-raised: semaphore" { start; read -r pc sema < <(note fxm:s3); poke "\$P" "\$sema" '\\x01'; }
	EOF
	assert_line "ok 1 sites.untouched-fixture: untouched"
	assert_line "not ok 2 sites.int3-left: int3"
	assert_output --regexp "probe site fxm:n7 of '$PC_FIXTURES/fx_many' in pid [0-9]+ at 0x[0-9a-f]+ holds 'cc [0-9a-f ]+', the file has '90 [0-9a-f ]+'"
	assert_line "not ok 3 sites.sema-raised: semaphore"
	assert_output --regexp "semaphore of fxm:s3 of '$PC_FIXTURES/fx_many' in pid [0-9]+ at 0x[0-9a-f]+ reads 1, the file has 0"
}

@test "faults.checker-stash: checker: a stash record left by a test fails it; one from before the test does not" {
	local stash=$BATS_TEST_TMPDIR/stash
	mkdir -m 0700 "$stash"
	printf 'probecheck-stash 1\ntracer 4000001 1\n' >"$stash/4000001-1"
	run -1 nested stashrec PROBECHECK_STASH="$stash" <<-EOF
		TEST "stashrec.leaves-nothing: leaves nothing" { :; }
		TEST "stashrec.leaves-record: leaves a record" {
			printf 'probecheck-stash 1\ntracer 4000002 1\n' >"$stash/4000002-1"
		}
	EOF
	assert_line "ok 1 stashrec.leaves-nothing: leaves nothing"
	assert_line "not ok 2 stashrec.leaves-record: leaves a record"
	assert_output --partial "stash record left: $stash/4000002-1 (tracer 4000002 dead)"
	refute_output --partial "stash record left: $stash/4000001-1"
	# The failing test's teardown ran `probecheck cleanup`: its record went.
	[[ ! -e $stash/4000002-1 ]] || fail "teardown did not clean up the record it reported"
}

@test "faults.syscall-countdown: every bpf(), mmap() and perf_event_open() of a session failing in turn, in each attach mode: an error with its reason or a working session, and nothing left after close" {
	requires root bpf uprobe_pmu
	# suites/unit/test_sysfailattach.c: the countdown, with its own
	# fixture (our copy) and readers; each failure is a TAP line.
	run -0 "$PROBECHECK_BUILD/unit/test_sysfailattach"
	refute_line --regexp '^not ok'
	assert_line --regexp '^ok [0-9]+ - \[perf\] each of [1-9][0-9]* bpf calls failing with EPERM/ENOMEM/E2BIG'
	assert_line --regexp '^ok [0-9]+ - \[perf\] each of [1-9][0-9]* mmap calls'
	assert_line --regexp '^ok [0-9]+ - \[perf\] each of 1 perf_event_open calls failing with EMFILE'
}
