#!/usr/bin/env bats
# pipeline.bats — the event pipeline around the argument values: drop
# accounting when the ring overflows, the pid filter, -p on a running
# process, the ways tracing ends (process exit, SIGINT, SIGTERM, -c
# command status), and the event header (ts, cpu).
#
# Synchronisation is by the fixture's ready:/wait: steps (a ready file, a
# fifo) and the tracer's --ready file; nothing sleeps to let time pass.
# bats file_tags=pipeline

load helpers/common

PC_REQUIRES=(root uprobe_pmu bpf btf)

# spawn_fx VAR ORACLE STEPS...: start the fixture in its own session; VAR
# gets its pid once its first step (ready:FILE) has run.
spawn_fx() {
	local -n _sf_pid=$1
	local oracle=$2 ready=$BATS_TEST_TMPDIR/fx-ready.$RANDOM bin
	shift 2
	bin=$(fx_first_bin) || return 1
	pc_spawn _sf_pid "$bin" --oracle "$oracle" "ready:$ready" "$@"
	pc_wait_file "$ready"
	[[ $(cat "$ready") == "$_sf_pid" ]] || fail "spawn_fx: ready file says $(cat "$ready"), spawned $_sf_pid"
}

# site_field PID PROBE FIELD: FIELD (addr, sema_addr) of PROBE's only site
# in PID, from `probecheck list --json -p`.  jq only sees strings here.
site_field() {
	local out
	out=$(pc list --json -p "$1" | jq -r --arg n "${2#*:}" --arg p "${2%%:*}" \
		"select(.provider == \$p and .name == \$n) | .$3") || { fail "list -p $1 failed"; return 1; }
	[[ $out =~ ^0x[0-9a-f]+$ ]] || { fail "no single $3 for $2 in pid $1: '$out'"; return 1; }
	echo "$out"
}

# oracle_events ORACLE: number of probe hits the fixture logged.
oracle_events() {
	grep -c '"probe":' "$1" || true
}

@test "pipeline.ring-drops: a full ring drops events, and delivered + dropped == hits == fired, delivered == lines printed" {
	local bin pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json
	local go done=$BATS_TEST_TMPDIR/fired n=300000 st
	bin=$(fx_first_bin)
	go=$(pc_fifo go)
	spawn_fx pid "$o" "wait:$go" "fire:fx:a1:$n" "ready:$done"
	pc_trace_bg "$t" --json -p "$pid" "usdt:$bin:fx:a1"
	# The consumer stops; the fixture fires more than the ring holds
	# (16 MiB of 136-byte records: about 123000).  A stopped tracer would
	# ignore teardown's SIGINT: it is continued before any failure.
	kill -STOP "$PC_TRACE_PID"
	st=0
	pc_fifo_write "$go" go && pc_wait_file "$done" 120 || st=$?
	kill -CONT "$PC_TRACE_PID"
	((st == 0)) || fail "the fixture did not fire $n times (see above)"
	pc_trace_wait
	((PC_TRACE_STATUS == 0)) || fail "tracer exit status $PC_TRACE_STATUS"
	[[ $(oracle_events "$o") == "$n" ]] || fail "the fixture fired $(oracle_events "$o"), expected $n"
	assert_summary "$n" "$t.err"
	((PC_DROPPED > 0)) || fail "nothing dropped: the ring never overflowed (delivered $PC_DELIVERED)"
	run -0 wc -l <"$t"
	assert_output "$PC_DELIVERED"
	# Nothing was consumed while the ring filled: what it kept are the
	# first events fired, each exact.
	head -n "$PC_DELIVERED" "$o" >"$o.head"
	assert_oracle "$o.head" "$t"
}

@test "pipeline.site-counts: -v prints each reached site's counts (seen, hits, delivered), each the oracle's number of that probe's hits" {
	pc_probecheck_only "its -v site counts"
	local fx o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json p n
	fx=$(fx_first_bin)
	pc trace -v --json -c "$fx --oracle $o fire:fx:a1:3 fire:fx:a3:2" \
		"usdt:$fx:fx:a1" "usdt:$fx:fx:a3" >"$t" 2>"$t.err" ||
		fail "trace exited $?: $(tail -n 3 "$t.err")"
	assert_oracle "$o" "$t"
	for p in fx:a1 fx:a3; do
		n=$(pc_count_events "$o" "$p")
		grep -Eq "^probecheck: debug: site [0-9]+ $p '[^']+' 0x[0-9a-f]+: seen=$n hits=$n delivered=$n\$" "$t.err" ||
			fail "no '$p' site line with seen=hits=delivered=$n: $(grep 'debug: site' "$t.err")"
	done
}

@test "pipeline.pid-filter: the pid filter: an untraced second instance gives no events and its semaphore stays 0" {
	local bin a b oa=$BATS_TEST_TMPDIR/a.json ob=$BATS_TEST_TMPDIR/b.json t=$BATS_TEST_TMPDIR/t.json
	local ga gb gb2 bdone=$BATS_TEST_TMPDIR/b-done sa sb
	bin=$(fx_first_bin)
	ga=$(pc_fifo ga)
	gb=$(pc_fifo gb)
	gb2=$(pc_fifo gb2)
	spawn_fx a "$oa" "wait:$ga" sema:fx:sem_a fire:fx:sem_a:4 fire:fx:a1:4
	spawn_fx b "$ob" "wait:$gb" sema:fx:sem_a fire:fx:sem_a:4 fire:fx:a1:4 "ready:$bdone" "wait:$gb2"
	sa=$(site_field "$a" fx:sem_a sema_addr)
	sb=$(site_field "$b" fx:sem_a sema_addr)
	pc_sema_watch "$a" "$sa" 0
	pc_sema_watch "$b" "$sb" 0
	pc_trace_bg "$t" --json -p "$a" "usdt:$bin:fx:sem_a" "usdt:$bin:fx:a1"
	run -0 pc_peek "$a" "$sa" 2
	assert_output 1
	run -0 pc_peek "$b" "$sb" 2
	assert_output 0
	# B runs its probes while A is traced.
	pc_fifo_write "$gb" go
	pc_wait_file "$bdone"
	run -0 pc_peek "$b" "$sb" 2
	assert_output 0
	pc_fifo_write "$ga" go
	pc_trace_wait
	((PC_TRACE_STATUS == 0)) || fail "tracer exit status $PC_TRACE_STATUS"
	# B saw its semaphore at 0 at each of its 5 checks (sema: and 4 fire:)
	# and fired the plain probe: its sites ran.
	run -0 grep -c "\"sema\":\"fx:sem_a\",\"pid\":$b,.*\"value\":0}" "$ob"
	assert_output 5
	[[ $(grep -c '"probe":"fx:a1"' "$ob") == 4 ]] || fail "B did not fire fx:a1 4 times: $(cat "$ob")"
	# A saw 1 each time, and the trace is exactly A's events.
	run -0 grep -c "\"sema\":\"fx:sem_a\",\"pid\":$a,.*\"value\":1}" "$oa"
	assert_output 5
	assert_oracle "$oa" "$t"
	assert_summary 8 "$t.err"
	run -1 grep -q "\"pid\":$b," "$t"
	pc_fifo_write "$gb2" go
}

# fixture_exits_0 PID: wait for a spawned fixture; fail unless it exits 0.
# Not under `run`: in its subshell, bash's wait for a child of the test
# shell that is still running returns at once (status -1), a race.
fixture_exits_0() {
	local st=0
	wait "$1" || st=$?
	((st == 0)) || fail "fixture $1 exited with status $st, expected 0"
}

@test "pipeline.pid-running: -p on a process started before the tracer: traces it and ends when it exits" {
	local bin pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json go early=$BATS_TEST_TMPDIR/early
	bin=$(fx_first_bin)
	go=$(pc_fifo go)
	spawn_fx pid "$o" fire:fx:a1:2 "ready:$early" "wait:$go" fire:fx:a1:5 fire:fx:a2:3
	pc_wait_file "$early"
	pc_bytes_watch "$pid" "$(site_field "$pid" fx:a1 addr)"
	pc_trace_bg "$t" --json -p "$pid" "usdt:$bin:fx:a1" "usdt:$bin:fx:a2"
	pc_fifo_write "$go" go
	pc_trace_wait
	((PC_TRACE_STATUS == 0)) || fail "tracer did not end by itself with status 0: $PC_TRACE_STATUS"
	fixture_exits_0 "$pid"
	# The 2 hits before the tracer started are in the oracle only.
	sed 1,2d "$o" >"$o.after"
	assert_oracle "$o.after" "$t"
	assert_summary 8 "$t.err"
	pc_check_clean
}

# ends_cleanly_on SIG: the tracer, stopped by SIG while the traced process
# lives on, exits 0 with its summary, leaves nothing attached, and the
# process fires on unharmed.
ends_cleanly_on() {
	local sig=$1 bin pid o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json go go2 fired=$BATS_TEST_TMPDIR/fired
	bin=$(fx_first_bin)
	go=$(pc_fifo go)
	go2=$(pc_fifo go2)
	spawn_fx pid "$o" "wait:$go" fire:fx:a1:3 "ready:$fired" "wait:$go2" fire:fx:a1:2
	pc_bytes_watch "$pid" "$(site_field "$pid" fx:a1 addr)"
	pc_trace_bg "$t" --json -p "$pid" "usdt:$bin:fx:a1"
	pc_fifo_write "$go" go
	pc_wait_file "$fired"
	pc_trace_stop "$sig"
	((PC_TRACE_STATUS == 0)) || fail "tracer exit status $PC_TRACE_STATUS after SIG$sig"
	assert_summary 3 "$t.err"
	assert_oracle "$o" "$t"
	# The process is still there: no uprobe, BPF object or int3 left.
	pc_check_clean
	pc_fifo_write "$go2" go
	fixture_exits_0 "$pid"
	[[ $(oracle_events "$o") == 5 ]] || fail "the fixture fired $(oracle_events "$o") times, expected 5"
}

@test "pipeline.sigint-ends: SIGINT to the tracer ends tracing cleanly: exit 0, summary, nothing left attached" {
	ends_cleanly_on INT
}

@test "pipeline.sigterm-ends: SIGTERM to the tracer ends tracing cleanly: exit 0, summary, nothing left attached" {
	ends_cleanly_on TERM
}

@test "pipeline.cmd-status: -c with a command that exits non-zero or is killed: exit 1, events still delivered" {
	local bin o=$BATS_TEST_TMPDIR/o.json
	bin=$(fx_first_bin)
	run -1 --separate-stderr pc trace --json -c "$bin --oracle $o fire:fx:a1:2 exit:3" "usdt:$bin:fx:a1"
	assert_line --index 0 --partial '"probe":"fx:a1"'
	[[ ${#lines[@]} == 2 ]] || fail "expected 2 events: $output"
	[[ $stderr == *"exited with status 3"* ]] || fail "no message naming the status: $stderr"
	assert_summary 2
	printf '%s\n' "$output" >"$o.trace"
	assert_oracle "$o" "$o.trace"
	rm -f "$o"
	run -1 --separate-stderr pc trace --json -c "$bin --oracle $o fire:fx:a1:1 kill:9" "usdt:$bin:fx:a1"
	[[ $stderr == *"killed by signal 9"* ]] || fail "no message naming the signal: $stderr"
	assert_summary 1
	run -1 --separate-stderr pc trace --json -c "$BATS_TEST_TMPDIR/no-such-fixture" "usdt:$bin:fx:a1"
	[[ $stderr == *"exited with status 127"* ]] || fail "no message naming the status: $stderr"
	assert_summary 0
	# And the same command exiting 0 is exit 0.
	run -0 --separate-stderr pc trace --json -c "$bin --oracle $o.ok fire:fx:a1:1 exit:0" "usdt:$bin:fx:a1"
	assert_summary 1
}

@test "pipeline.ts-cpu: ts increases per thread, cpu is below the number of CPUs" {
	local bin o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json ncpu trace_st
	bin=$(fx_first_bin)
	ncpu=$(nproc --all)
	trace_st=0
	pc trace --json -c "$bin --oracle $o threads:4 [ barrier fire:fx:a1:100 ] fire:fx:a1:20" \
		"usdt:$bin:fx:a1" >"$t" 2>"$t.err" || trace_st=$?
	((trace_st == 0)) || fail "probecheck trace exited $trace_st"
	assert_oracle "$o" "$t"
	assert_summary 420 "$t.err"
	# ts compared as decimal strings (length, then digits): exact at any
	# magnitude, no floating point.
	run -0 awk -v ncpu="$ncpu" '
		function num(key,   s) {
			if (!match($0, "\"" key "\":[0-9]+")) { print "line " NR ": no " key; bad = 1; return "" }
			s = substr($0, RSTART, RLENGTH); sub(/^"[a-z]+":/, "", s); return s
		}
		function lt(a, b) { return length(a) < length(b) || (length(a) == length(b) && a < b) }
		{
			tid = num("tid"); ts = num("ts"); cpu = num("cpu")
			if (cpu != "" && cpu + 0 >= ncpu) { print "line " NR ": cpu " cpu " >= " ncpu; bad = 1 }
			if (ts == "" || ts == "0") { print "line " NR ": ts " ts; bad = 1 }
			if (tid in last && !lt(last[tid], ts)) {
				print "line " NR ": tid " tid " ts " ts " not after " last[tid]; bad = 1
			}
			last[tid] = ts; n[tid]++
		}
		END { for (t in n) k++; print k " threads"; exit bad }' "$t"
	assert_output "5 threads"
}

@test "pipeline.closed-fds: started with stdin and stderr closed, the tracer keeps fds 0 and 2 on /dev/null: nothing it opens takes their place; events exact" {
	local fx o t cmd
	fx=$(fx_bin gcc_O2_pie)
	o=$BATS_TEST_TMPDIR/o.json t=$BATS_TEST_TMPDIR/t.json cmd=$BATS_TEST_TMPDIR/cmd.sh
	# The -c command's parent is the tracer, attached by then (tracefs:
	# it opens a stash record too).
	printf '#!/bin/sh\nreadlink /proc/$PPID/fd/0 /proc/$PPID/fd/2 >%s\nexec %s --oracle %s fire:fx:a1:2\n' \
		"$BATS_TEST_TMPDIR/fds" "$fx" "$o" >"$cmd"
	chmod +x "$cmd"
	local -a PC_WRAP=(bash -c 'exec <&- 2>&-; exec "$@"' _)
	pc trace --attach=tracefs --json -c "$cmd" "usdt:$fx:fx:a1" >"$t" || fail "trace exited $?"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/fds" | xargs)" "/dev/null /dev/null"
	assert_oracle "$o" "$t"
}
