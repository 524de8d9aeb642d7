"""make check's verdict and the block it ends with.

make check passes (exit 0) iff every unit binary passed, valgrind passed,
and every suite test is pass, skip or a listed kernel finding: no plain
failure, no test the plan promised and never reported, no runner failure
(timeout, bats error, leftovers).  The runners' own exit statuses are
facts too (--status NAME=N): a runner that exited non-zero fails the
check even when its files show nothing (it may have died before writing
them).  The block lists every reproduced finding (id, title, tests, first
evidence line) and the listed ones not reproduced or not tested, then the
failures, then the verdict.
"""

from . import findings as F
from .md import first_sentence, plural

RULE = "=" * 72


def decide(run, statuses):
    """The problems that fail make check, one line each (none: PASS)."""
    problems = run.problems()
    if not run.has_roster:
        problems.append("no suites.tsv: the suites did not run")
    problems += [f"{name} exited with status {st}" for name, st in statuses if st != 0]
    return problems


def block(run, issues, statuses, release, log_reports=None):
    """(lines, exit status) of the closing block.  LOG_REPORTS: how many
    reports the kernel log had while the suites ran (None: not scanned);
    shown, not judged (the tests judge behaviour)."""
    problems = decide(run, statuses)
    found = [F.finding(i, [(t.key, t.outcome) for t in run.tests()]) for i in issues]
    repro = [f for f in found if f.state == "reproduced"]
    out = [RULE, f"probecheck: kernel findings on {release} (ci/kernel-issues)"]
    if not repro:
        out.append("  none of the listed kernel problems reproduced")
    for f in repro:
        out.append(f"  KERNEL {f.issue.id} reproduced {f.detail}: {first_sentence(f.issue.title)}")
        for key, ev in f.tests:
            out.append(f"    {key}")
            if ev:
                out.append(f"      {ev[0]}" + (f"  (+{len(ev) - 1} more lines)" if len(ev) > 1 else ""))
    for state in ("not reproduced", "not tested"):
        fs = [f for f in found if f.state == state]
        if fs:
            out.append(f"  {state}: " + "; ".join(f"{f.issue.id} ({f.detail})" for f in fs))
    if log_reports:
        out.append(f"  kernel log: {plural(log_reports, 'report')} while the suites ran (build/results/DETAILS.md, Kernel log)")
    p, f, s, k = run.totals()
    out.append(f"probecheck: {p} passed, {f} failed, {s} skipped, {k} kernel")
    if problems:
        out.append(f"probecheck: make check FAILED: {plural(len(problems), 'problem')}:")
        out += [f"  {x}" for x in problems[:50]]
        if len(problems) > 50:
            out.append(f"  ... {len(problems) - 50} more (build/results/DETAILS.md, Failures)")
    elif k:
        out.append("probecheck: make check PASSED: every failure is a listed kernel finding (above)")
    else:
        out.append("probecheck: make check PASSED")
    out.append(RULE)
    return out, (1 if problems else 0)
