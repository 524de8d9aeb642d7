"""One results directory, as harness/run/run-suites and harness/run/run-unit leave
it, read once and classified.

  suites.tsv        suite, pass, fail, skip, seconds, bats_status[, kernel]:
                    the roster.  Only suite, seconds and bats_status are
                    read: the counts are derived here from the TAP (a guest
                    cannot count: it has no Python, and writes "-")
  SUITE.tap         bats' TAP
  SUITE.harness     the runner's own failures, "fail<TAB>WHY" lines
                    (suite timeout, leftovers after the suite)
  unit-BIN.tap      a unit binary's TAP, unit-BIN.status its exit status

A suite's problems: its plain failures, the results its plan promised and
never gave (a crash), its .harness lines, no TAP at all, and bats exiting
non-zero with no failed test.  A unit binary fails when it exited non-zero,
printed "not ok", printed no plan or fewer checks than planned.
"""

import glob
import os
from dataclasses import dataclass, field

from . import findings, tap, testid
from .errors import ReportError, read_optional, read_text

SUITES_TSV = "suites.tsv"


@dataclass
class TestResult:
    suite: str
    name: str
    outcome: object
    ms: object = None      # bats' time for it, None when not printed
    diag: list = field(default_factory=list)   # its "#" lines (tap.TapResult)

    @property
    def key(self):
        """Its name in reports, which starts with its ID (testid.key)."""
        return testid.key(self.suite, self.name)

    @property
    def id(self):
        """Its test ID, or None (testid.of)."""
        return testid.of(self.name)


@dataclass
class SuiteResult:
    name: str
    seconds: object = None
    bats_status: object = None
    tests: list = field(default_factory=list)
    missing: int = 0                               # planned, never reported
    harness: list = field(default_factory=list)    # runner-level failures

    def count(self, kind):
        return sum(t.outcome.kind == kind for t in self.tests)

    def counts(self):
        """(pass, fail, skip, kernel); fail includes what never ran and the
        runner's failures, as run-suites always counted them."""
        return (self.count("pass"), self.count("fail") + self.missing + len(self.harness),
                self.count("skip"), self.count("kernel"))

    def problems(self):
        """Every reason this suite fails its run, one line each."""
        out = [f"{self.name}: {t.name}" + (f" ({t.outcome.reason})" if t.outcome.reason else "")
               for t in self.tests if t.outcome.kind == "fail"]
        if self.missing:
            out.append(f"{self.name}: {self.missing} planned test(s) never reported (crash or kill)")
        out += [f"{self.name}: (harness) {h}" for h in self.harness]
        return out


@dataclass
class UnitResult:
    name: str
    checks: int
    failed: int
    plan: object
    status: str
    why: str = ""           # empty: the binary passed
    failures: list = field(default_factory=list)   # its "not ok" lines

    @property
    def ok(self):
        return not self.why


def _int(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return None


def read_roster(path):
    """[(suite, seconds, bats_status)] from a suites.tsv, by its header."""
    lines = read_text(path).splitlines()
    if not lines:
        return []
    head = lines[0].split("\t")
    if head[:1] != ["suite"]:
        raise ReportError(f"'{path}': no 'suite' header (not written by harness/run/run-suites?)")
    col = {h: i for i, h in enumerate(head)}
    rows = []
    for n, line in enumerate(lines[1:], 2):
        f = line.split("\t")
        if not f[0]:
            continue
        get = (lambda k: f[col[k]] if k in col and col[k] < len(f) else None)
        rows.append((f[0], _int(get("seconds")), _int(get("bats_status"))))
    return rows


def harness_lines(path):
    """The "fail<TAB>WHY" lines of a .harness file, as WHY."""
    text = read_optional(path, "")
    return [l.partition("\t")[2] or l for l in text.splitlines() if l.startswith("fail")]


def load_suite(d, name, seconds, status, issues, listed=True):
    s = SuiteResult(name, seconds, status)
    tpath = os.path.join(d, name + ".tap")
    plan = None
    if not os.path.exists(tpath):
        s.harness.append(f"no TAP output ({name}.tap missing)")
    else:
        t = tap.load(tpath)
        for r in t.results:
            key = testid.key(name, r.name)
            s.tests.append(TestResult(name, r.name, findings.classify(r, key, issues), r.ms, r.diag))
        s.missing = t.missing()
        plan = t.plan
    s.harness += harness_lines(os.path.join(d, name + ".harness"))
    failed = any(t.outcome.kind in ("fail", "kernel") for t in s.tests)
    # A timeout is already in .harness; any other non-zero exit with no
    # failed test is bats itself failing (a syntax error, a bad load).
    if status not in (None, 0, 124, 137) and not failed:
        s.harness.append(f"bats exited with status {status} and no failed test "
                         f"({len(s.tests)} of {'?' if plan is None else plan} results)")
    if not listed:
        s.harness.append(f"no {SUITES_TSV} row: run-suites did not finish this suite")
    return s


def load_unit(tpath, status_path):
    name = os.path.basename(tpath)[len("unit-"):-len(".tap")]
    t = tap.load(tpath)
    st = read_optional(status_path, "?")
    n = len(t.results)
    nok = [r for r in t.results if r.status == "fail"]
    why = ""
    code = _int(st)
    if code in (124, 137):
        why = "timed out"
    elif code is not None and code > 128:
        why = f"killed by signal {code - 128}"
    elif t.plan is None:
        why = f"no TAP plan (exit status {st})"
    elif t.plan != n:
        why = f"plan says {t.plan} checks, {n} ran"
    elif nok:
        why = f"{len(nok)} of {n} checks failed"
    elif code != 0:
        why = f"exit status {st}"
    return UnitResult(name, n, len(nok), t.plan, st, why,
                      [f"not ok {r.num} {r.name}" for r in nok])


@dataclass
class Run:
    """One results directory: its suites and unit binaries, classified."""
    dir: str
    suites: list = field(default_factory=list)
    units: list = field(default_factory=list)
    has_roster: bool = False
    # What run-suites found left after its parallel suites and could not
    # blame on one of them (run/sweep): a failure of the run.
    sweep: list = field(default_factory=list)

    def tests(self):
        return [t for s in self.suites for t in s.tests]

    def problems(self):
        out = [p for s in self.suites for p in s.problems()]
        out += [f"unit {u.name}: {u.why}" for u in self.units if not u.ok]
        out += [f"run: {l}" for l in self.sweep]
        return out

    def totals(self):
        """(pass, fail, skip, kernel) over every suite."""
        tot = [0, 0, 0, 0]
        for s in self.suites:
            for i, c in enumerate(s.counts()):
                tot[i] += c
        return tuple(tot)


def load(d, issues, units=True):
    """The Run of directory D.  Suites: the suites.tsv roster, in its order,
    then any other SUITE.tap (a suite whose row never got written)."""
    run = Run(d)
    roster_path = os.path.join(d, SUITES_TSV)
    rows = []
    if os.path.exists(roster_path):
        run.has_roster = True
        rows = read_roster(roster_path)
    listed = {r[0] for r in rows}
    for name, secs, st in rows:
        run.suites.append(load_suite(d, name, secs, st, issues))
    for p in sorted(glob.glob(os.path.join(d, "*.tap"))):
        name = os.path.basename(p)[:-len(".tap")]
        if name.startswith("unit-") or name in listed:
            continue
        run.suites.append(load_suite(d, name, None, None, issues, listed=False))
    run.sweep = (read_optional(os.path.join(d, "run", "sweep"), "") or "").splitlines()
    if units:
        for p in sorted(glob.glob(os.path.join(d, "unit-*.tap"))):
            run.units.append(load_unit(p, p[:-len(".tap")] + ".status"))
    return run
