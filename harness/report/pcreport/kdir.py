"""One kernel's directory, as harness/kernels/vm-run (a guest) or harness/kernels/matrix's
host run leaves it, and its verdict.

  results/unit-BIN.{tap,status}      guest: the unit binaries
  results/rK/SUITE/                  guest: one run-suites per suite, repeat K
  results/r1/all/                    host: run-unit and run-suites together
  results/guest.status               guest: "done STATUS" (harness/kernels/vm/unpack)
  results/host.status                host: "done STATUS" (harness/kernels/matrix)
  verdict, verdict.why               the verdict written when the run ended
  verdict.base                       overlays: the verdict of the whole run
  reruns/N/                          overlays: what each rerun left
  kernel-findings.txt                what the kernel log complained about

Verdicts: INFRA when the run did not complete (decided at the end of a
guest's run: no DONE, a timeout, a panic, results cut short; it is kept,
whatever partial results say); otherwise FAIL when any problem is found in
the results (rundir: plain failures, tests never run, runner failures,
failed unit binaries) and PASS when none is: every failure, if any, is a
listed kernel finding.  The results are read again every time a verdict is
needed, so a matrix judged after ci/kernel-issues changed says what the
list says now.
"""

import glob
import os
import re
from collections import Counter
from dataclasses import dataclass, field

from . import kernlog, rundir, testid
from .errors import read_optional

INFRA, PASS, FAIL = "INFRA", "PASS", "FAIL"


@dataclass
class Kernel:
    dir: str
    runs: dict = field(default_factory=dict)     # repeat -> [Run]
    units: list = field(default_factory=list)    # UnitResult
    lost: list = field(default_factory=list)     # result dirs with no roster

    def tests(self, repeat=None):
        """(key, Outcome) of every test, of one repeat or of all."""
        ks = [repeat] if repeat is not None else sorted(self.runs)
        return [(t.key, t.outcome) for k in ks for r in self.runs.get(k, []) for t in r.tests()]

    def problems(self):
        out = [f"{os.path.relpath(d, self.dir)}: run-suites left no suites.tsv (see run.txt)" for d in self.lost]
        for k in sorted(self.runs):
            for r in self.runs[k]:
                out += [p for s in r.suites for p in s.problems()]
        out += [f"unit {u.name}: {u.why}" for u in self.units if not u.ok]
        return out


def _repeat(d):
    m = re.match(r"^r([0-9]+)$", os.path.basename(d))
    return int(m.group(1)) if m else None


def load(kdir, issues):
    """Every result under KDIR/results, classified."""
    k = Kernel(kdir)
    res = os.path.join(kdir, "results")
    k.units += rundir.load(res, issues).units
    for rdir in sorted(glob.glob(os.path.join(res, "r*"))):
        n = _repeat(rdir)
        if n is None or not os.path.isdir(rdir):
            continue
        for d in sorted(glob.glob(os.path.join(rdir, "*"))):
            if not os.path.isdir(d):
                continue
            run = rundir.load(d, issues)
            k.units += run.units
            if not run.has_roster and not run.suites:
                k.lost.append(d)
                continue
            k.runs.setdefault(n, []).append(run)
    return k


def status_of(kdir):
    """The exit status the run's own runners reported (None: unknown)."""
    for f in ("guest.status", "host.status"):
        s = read_optional(os.path.join(kdir, "results", f))
        if s and s.startswith("done "):
            try:
                return int(s.split()[1])
            except (IndexError, ValueError):
                return None
    return None


def failed_names(suite, most=3):
    """" (a, b, c +2)": which tests failed, by ID, so that a log that keeps
    only the verdict line (CI's) still says where to look."""
    names = [testid.of(t.name) or t.name for t in suite.tests if t.outcome.kind == "fail"]
    if not names:
        return ""
    more = f" +{len(names) - most}" if len(names) > most else ""
    return f" ({', '.join(names[:most])}{more})"


# bats' "(in test file F, line N)": where the failed command is.
_AT_RE = re.compile(r"in test file (\S+), line ([0-9]+)\)$")
_LOG_MARK = "# ---- probecheck log"


def _why_lines(diag, most):
    """The failed command and what it printed, from a failed test's
    diagnostics: bats' call chain and the test's own log left out."""
    out, at = [], ""
    for line in diag:
        if line.startswith(_LOG_MARK):
            break
        m = _AT_RE.search(line)
        if m:
            at = f"{m.group(1)}:{m.group(2)}"
            continue
        if line.lstrip().startswith("(from function") or line.lstrip().startswith("from function"):
            continue
        if line.strip():
            out.append(line.strip())
    return at, out[:most]


def digest(kernel, tests=3, lines=4, width=160):
    """A failed kernel in a few lines: each failed test (at most TESTS) with
    where it failed and the first LINES lines of why, each cut at WIDTH.
    For a log that keeps only its tail (CI's): the verdict names the tests,
    this says what went wrong in them."""
    failed = [t for k in sorted(kernel.runs) for r in kernel.runs[k] for s in r.suites
              for t in s.tests if t.outcome.kind == "fail"]
    out = []
    for t in failed[:tests]:
        at, why = _why_lines(t.diag, lines)
        out.append(f"{t.id or t.name}" + (f" ({at})" if at else "") + ":")
        out += [f"  {w[:width]}" for w in why]
    if len(failed) > tests:
        out.append(f"+{len(failed) - tests} more failed tests")
    return out


def summarize(kernel, problems):
    """The why of a FAIL: the suites with problems, counted, and the rest."""
    parts = []
    for k in sorted(kernel.runs):
        for r in kernel.runs[k]:
            for s in r.suites:
                if s.problems():
                    p, f, sk, kn = s.counts()
                    parts.append(f"{s.name}: {p} passed, {f} failed, {sk} skipped, {kn} kernel"
                                 + failed_names(s))
    bad = sum(not u.ok for u in kernel.units)
    if bad:
        parts.append(f"{bad} unit binaries failed")
    if kernel.lost:
        parts.append(f"{len(kernel.lost)} suites left no results")
    return "; ".join(parts) or problems[0]


def findings_summary(kernel):
    """"K1: 2 tests, K3: 1 test" over every test of the kernel, or ""."""
    c = Counter(i for _, o in kernel.tests() if o.kind == "kernel" for i in o.ids)
    return ", ".join(f"{i}: {n} test{'s' * (n != 1)}" for i, n in sorted(c.items(), key=lambda x: int(x[0][1:])))


def evaluate(kernel, status=None):
    """(verdict, why) from the results alone.  STATUS: the exit status the
    runners reported, when it belongs to these very results (not after an
    overlay): non-zero with nothing failed in the results is a failure we
    cannot see, never a PASS."""
    problems = kernel.problems()
    if problems:
        return FAIL, summarize(kernel, problems)
    found = findings_summary(kernel)
    if status not in (None, 0) and not found:
        return FAIL, f"the tests exited with status {status}, but their results show no failed test"
    if found:
        return PASS, f"every failure a listed kernel finding ({found})"
    return PASS, "every test passed"


def stored(kdir, fallback=None):
    """(verdict, why) as written when the run ended (else FALLBACK, what
    kernels.tsv says); INFRA when there is none."""
    v = read_optional(os.path.join(kdir, "verdict"))
    why = read_optional(os.path.join(kdir, "verdict.why"), "")
    if not v:
        return fallback if fallback and fallback[0] else (INFRA, "no verdict")
    return v, why


def verdict(kdir, issues, fallback=None):
    """The kernel's verdict now: INFRA as stored, else from its results."""
    v, why = stored(kdir, fallback)
    base = read_optional(os.path.join(kdir, "verdict.base"))
    if v == INFRA or base == INFRA:
        return INFRA, why
    overlaid = os.path.isdir(os.path.join(kdir, "reruns"))
    return evaluate(load(kdir, issues), None if overlaid else status_of(kdir))


def guest_verdict(kdir, issues, qemu_status, timeout):
    """The verdict of a guest run that just ended (harness/kernels/vm-run)."""
    res = os.path.join(kdir, "results")
    said = (read_optional(os.path.join(res, "guest.status"), "none") or "none").split()
    if said[:1] != ["done"]:
        if qemu_status in (124, 137):
            return INFRA, f"timed out after {timeout} s"
        panic = kernlog.panic_line(read_optional(os.path.join(kdir, "console.log"), ""))
        if panic:
            return INFRA, f"kernel panic: {panic}"
        if not read_optional(os.path.join(res, "guest.hello")):
            return INFRA, f"the guest's init never spoke (qemu status {qemu_status}; see console.log)"
        return INFRA, "the guest never finished"
    unpack = read_optional(os.path.join(kdir, "unpack.log"), "")
    if unpack:
        return INFRA, f"results port: {unpack.splitlines()[0]}"
    return evaluate(load(kdir, issues), status_of(kdir))


def write(kdir, v, why):
    for name, text in (("verdict", v), ("verdict.why", why)):
        tmp = os.path.join(kdir, f".{name}.tmp")
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, os.path.join(kdir, name))


EXIT = {PASS: 0, FAIL: 1, INFRA: 3}
