"""What the runners print while they run: harness/run/run-suites' per-suite
and total lines (and the counts in its suites.tsv), harness/run/run-unit's
per-binary lines, harness/kernels/bisect-kernels' outcome of one suite.  The
runners themselves only run things and record what happened."""

import os

from . import rundir, tap
from .errors import ReportError, read_optional, read_text


def _fill_row(d, suite, counts):
    """SUITE's row of D/suites.tsv with its pass, fail, skip, kernel counts
    (run-suites wrote "-" there: it does not read TAP)."""
    path = os.path.join(d, rundir.SUITES_TSV)
    lines = read_text(path).splitlines()
    head = lines[0].split("\t") if lines else []
    if "suite" not in head:
        raise ReportError(f"'{path}': no header")
    col = {h: i for i, h in enumerate(head)}
    found = False
    for n, line in enumerate(lines[1:], 1):
        f = line.split("\t")
        if f[0] != suite:
            continue
        f += [""] * (len(head) - len(f))
        for k, v in zip(("pass", "fail", "skip", "kernel"), counts):
            if k in col:
                f[col[k]] = str(v)
        lines[n] = "\t".join(f)
        found = True
    if not found:
        raise ReportError(f"'{path}': no row for suite '{suite}'")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def tally_suite(d, suite, issues):
    """Lines for one suite that just ended; its counts go into suites.tsv."""
    run = rundir.load(d, issues, units=False)
    s = next((x for x in run.suites if x.name == suite), None)
    if s is None:
        raise ReportError(f"'{d}': no results of suite '{suite}'")
    counts = s.counts()
    _fill_row(d, suite, counts)
    p, f, sk, k = counts
    out = [f"   {suite}: {p} passed, {f} failed, {sk} skipped, {k} kernel ({s.seconds}s)"]
    for t in s.tests:
        if t.outcome.kind == "kernel":
            out.append(f"     kernel: {', '.join(t.outcome.ids)}: {t.name}")
        elif t.outcome.kind == "fail" and t.outcome.reason:
            out.append(f"     FAIL: {t.name} ({t.outcome.reason})")
    return out


def tally_total(d, issues):
    """(last line, exit status) of run-suites: 1 if any suite has a problem."""
    run = rundir.load(d, issues, units=False)
    p, f, s, k = run.totals()
    bad = any(x.problems() for x in run.suites) or run.sweep
    line = f"{p} passed, {f} failed, {s} skipped, {k} kernel"
    if run.sweep:
        line = f"left after the parallel suites, owner unknown (run/sweep)\n{line}"
    return line, (1 if bad else 0)


def unit_report(d, issues):
    """(lines, exit status) of run-unit over D's unit-*.tap files."""
    run = rundir.load(d, issues)
    out, bad = [], 0
    for u in run.units:
        if u.ok:
            out.append(f"  ok   {u.name}: {u.checks} checks passed")
            continue
        bad += 1
        out.append(f"  FAIL {u.name}: {u.why}")
        out += [f"       {l}" for l in u.failures[:10]]
        err = read_optional(os.path.join(d, f"unit-{u.name}.err"), "")
        if err:
            out.append("       stderr:")
            out += [f"       | {l}" for l in err.splitlines()[-20:]]
    n = len(run.units)
    out.append(f"unit: {n} binaries, {n - bad} passed, {bad} failed; "
               f"{sum(u.checks for u in run.units)} checks, {sum(u.failed for u in run.units)} failed")
    return out, (1 if bad else 0)


def outcome(tap_path, harness_path):
    """One suite's outcome for bisection: missing (no TAP or no plan),
    fail (a failure of any kind, a kernel finding included: bisecting is
    looking for where the behaviour changed; a test never reported; a
    runner failure), pass, skip (every test skipped), none (no test)."""
    if not os.path.isfile(tap_path):
        return "missing"
    t = tap.load(tap_path)
    if t.plan is None:
        return "missing"
    kinds = [r.status for r in t.results]
    harness = rundir.harness_lines(harness_path) if harness_path else []
    if "fail" in kinds or t.missing() or harness:
        return "fail"
    if "pass" in kinds:
        return "pass"
    return "skip" if "skip" in kinds else "none"
