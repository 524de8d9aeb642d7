"""pcreport — probecheck's reporting module: the one place that reads TAP,
decides what each test's result means and what a run's verdict is.

Inputs are the files the runners leave (harness/run/run-unit, run-suites,
vm-run, matrix): TAP per suite and per unit binary, suites.tsv, the
runners' own failures (SUITE.harness), unit exit statuses, kernel logs;
and ci/kernel-issues, the list of known kernel problems.  Outputs are
RESULTS.md, the kernel matrix, verdicts, merged and overlaid matrix
directories.  Bash stays for orchestration (running bats, booting qemu);
guests have no Python, so their results are classified here, on the host.

Vocabulary:
  outcome   what one test's result means: pass, fail, skip, or kernel
            (the test reproduced a listed kernel problem: "kernel: K1")
  finding   a listed kernel problem (an entry of ci/kernel-issues) and
            what a run says about it: reproduced, not reproduced, not tested
  problem   anything that makes a run FAIL: a plain test failure, a test
            the plan promised but never reported, a runner's own failure
            (timeout, bats error, leftovers), a failed unit binary
  verdict   PASS / FAIL / INFRA of one kernel's run
  test ID   the "SUITE.word-word" a test's name starts with (testid.py):
            what ci/kernel-issues, ci/slow-tests and the tables match on
"""
