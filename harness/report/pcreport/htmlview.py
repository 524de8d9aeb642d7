"""What the HTML report shows (html.py renders it), gathered from the
same inputs as `report results`: the host's results directory, the
matrix directories and a conformance directory.  Standard library only,
like the rest of the module; jinja2 and matplotlib stay in html.py.

Only the matrices of the current commit are shown (a matrix directory's
`commit` file, as harness/kernels/matrix wrote it, against --commit):
older ones are listed by their commit, as issue 27 asks of RESULTS.md.

Every kernel (the host's run and each kernel of a shown matrix) is a
KernelView with a page of its own, kernel-SLUG.html; every tracer of the
conformance directory a TracerView, tracer-SLUG.html.  A test's anchor on
its page (TestView.anchor) is where a grid cell's evidence is: its TAP
lines, as bats printed them.
"""

import os
import re
from dataclasses import dataclass, field

from . import cost, findings as F, kdir as K, kernlog, matrix, rundir, tap, testid, tracers
from .errors import ReportError, read_optional, read_text

DIRTY = "-dirty"


@dataclass
class TestView:
    suite: str
    name: str
    cell: str              # pass, FAIL, skip, kernel: K1 (Outcome.cell)
    kind: str              # pass, fail, skip, kernel
    reason: str
    anchor: str            # its id on the kernel's page
    lines: list            # its TAP lines


@dataclass
class SuiteView:
    name: str
    repeat: int
    counts: tuple          # pass, fail, skip, kernel (SuiteResult.counts)
    seconds: object
    tests: list            # TestView
    problems: list         # runner failures, missing results: one line each


@dataclass
class FindingView:
    issue: object
    state: str             # reproduced, not reproduced, not tested, infra
    detail: str
    tests: list            # (TestView or None, evidence lines)


@dataclass
class KernelView:
    slug: str
    name: str              # "this run", or the kernel's name in its matrix
    group: str             # its matrix directory's name when several are shown
    release: str
    verdict: str
    why: str
    source: str            # the directory it was read from, as shown
    facts: list            # (what, value) lines of its page's header
    caps: dict             # matrix.caps_of: {key: [value, why]}
    log: object            # kernel log findings (lines), None: not scanned
    log_file: object       # that file, to copy beside the pages
    suites: list = field(default_factory=list)
    units: list = field(default_factory=list)
    findings: list = field(default_factory=list)

    @property
    def infra(self):
        return self.verdict == K.INFRA

    @property
    def label(self):
        return f"{self.name} ({self.group})" if self.group else self.name

    def totals(self):
        tot = [0, 0, 0, 0]
        for s in self.suites:
            for i, c in enumerate(s.counts):
                tot[i] += c
        return tuple(tot)

    def failures(self):
        return [t for s in self.suites for t in s.tests if t.kind == "fail"]

    def log_reports(self):
        return None if self.log is None else kernlog.count(self.log)


@dataclass
class TracerView:
    slug: str
    name: str
    version: str
    status: str
    seconds: str
    claims: dict            # claim -> (yes, why)
    tests: list             # (suite, TestView) in the table's order
    failures: list          # dict(test, first, repro, repro_files)
    tally: dict


@dataclass
class Report:
    commit: str
    wall: int
    results: str            # as shown
    host: object            # KernelView of this run
    kernels: list           # host first, then every shown matrix's
    issues: list
    cap_keys: list
    tracers: list
    conformance: list       # the conformance directories, as shown
    older: list             # (matrix dir, its commit): not shown
    unreadable: list        # (dir, why)
    bench: list             # cost.load: [(name, meta, rows)]
    bench_error: str = ""


def shown(path, root):
    """PATH relative to the checkout when it is inside it, else as given."""
    rel = os.path.relpath(os.path.abspath(path), root)
    return path if rel.startswith("..") else rel


def slugify(text, taken):
    s = re.sub(r"[^A-Za-z0-9._-]", "_", text) or "_"
    base, n = s, 2
    while s in taken:
        s, n = f"{base}-{n}", n + 1
    taken.add(s)
    return s


def commit_of(m):
    """A matrix directory's commit: the first word of its commit file (a
    rerun appends "; NAMES rerun at ...")."""
    text = (read_optional(os.path.join(m, "commit"), "") or "").split(";")[0].split()
    return text[0] if text else "unknown"


def same_commit(a, b):
    return a.removesuffix(DIRTY) == b.removesuffix(DIRTY)


def _tap_lines(d, suite, n):
    """The TAP lines of each of SUITE's N results in D (empty lists when
    the file does not line up with what rundir read)."""
    path = os.path.join(d, suite + ".tap")
    if not os.path.exists(path):
        return [[] for _ in range(n)]
    b = tap.blocks(read_text(path))
    return b if len(b) == n else [[] for _ in range(n)]


def suite_views(run, repeat):
    out = []
    for s in run.suites:
        lines = _tap_lines(run.dir, s.name, len(s.tests))
        tests = []
        for t, ls in zip(s.tests, lines):
            m = tap.RESULT_RE.match(ls[0]) if ls else None
            num = m.group(2) if m else str(len(tests) + 1)
            tests.append(TestView(s.name, t.name, t.outcome.cell(), t.outcome.kind, t.outcome.reason,
                                  f"r{repeat}-{s.name}-{num}", ls))
        probs = [f"{s.missing} planned test(s) never reported (crash or kill)"] if s.missing else []
        out.append(SuiteView(s.name, repeat, s.counts(), s.seconds, tests, probs + s.harness))
    return out


def finding_views(kv, issues, pairs):
    """What the kernel's tests say about each listed problem.  PAIRS:
    (key, Outcome) of every test of the kernel."""
    by_key = {}
    for s in kv.suites:
        for t in s.tests:
            by_key.setdefault(testid.key(t.suite, t.name), t)
    out = []
    for i in issues:
        if kv.infra:
            out.append(FindingView(i, "infra", "the kernel's run did not complete", []))
            continue
        f = F.finding(i, pairs)
        if f.state == "reproduced":
            tests = [(by_key.get(k), ev) for k, ev in f.tests]
        else:
            tests = [(t, []) for k, t in by_key.items() if i.selects(k)]
        out.append(FindingView(i, f.state, f.detail, tests))
    return out


def host_view(results, run, issues, root, taken):
    release = read_optional(os.path.join(results, "run", "kernel")) or "unknown"
    k = K.Kernel(results, runs={1: [run]}, units=run.units)
    verdict, why = K.evaluate(k)
    if verdict == K.PASS and run.sweep:
        verdict, why = K.FAIL, f"left after the parallel suites: {run.sweep[0]}"
    if not run.has_roster:
        verdict, why = K.FAIL, "no suites.tsv: the suites did not run"
    logf = os.path.join(results, "run", "kernel-findings.txt")
    log = read_optional(logf)
    kv = KernelView(slugify("this-run", taken), "this run", "", release, verdict, why,
                    shown(results, root), [("results", shown(results, root))],
                    matrix.caps_of(os.path.join(results, "run")),
                    None if log is None else log.splitlines(), logf if log is not None else None,
                    suite_views(run, 1), run.units)
    kv.findings = finding_views(kv, issues, [(t.key, t.outcome) for t in run.tests()])
    return kv


def column_view(m, c, group, issues, root, taken):
    logf = os.path.join(c.dir, "kernel-findings.txt")
    log = read_optional(logf)
    accel = (read_optional(os.path.join(c.dir, "accel"), "") or "").split(" ")[0]
    facts = [("matrix", f"{shown(m, root)} (commit {commit_of(m)})"), ("spec", c.row["spec"] or "-"),
             ("boot", f"{c.row['boot_s'] or '-'} s" + (f" ({accel})" if accel else "")),
             ("wall", f"{c.row['wall_s'] or '-'} s")]
    kv = KernelView(slugify(f"{group}-{c.name}" if group else c.name, taken), c.name, group,
                    c.row["release"] or "-", c.verdict, c.why,
                    shown(c.dir, root), facts, matrix.caps_of(c.dir),
                    None if log is None else log.splitlines(), logf if log is not None else None)
    for n in sorted(c.kernel.runs):
        for r in c.kernel.runs[n]:
            kv.suites += suite_views(r, n)
    kv.units = c.kernel.units
    kv.findings = finding_views(kv, issues, c.kernel.tests())
    return kv


def tracer_views(d, issues, root, taken):
    rows = tracers.load_tracers(d)
    suites = tracers.suites_of(d, rows)
    out = []
    for row in rows:
        n = row["name"]
        cells = tracers.tracer_cells(d, n, suites, issues)
        slug = slugify(n, taken)
        blocks = {s: _blocks_by_num(os.path.join(d, n, s + ".tap")) for s in suites}
        tests, fails = [], []
        for (s, _), (c, o, num, diag, tn) in cells.items():
            tv = TestView(s, tn, c, o.kind, o.reason, f"{s}-{num}", blocks[s].get(num, []))
            tests.append((s, tv))
            if c == "FAIL":
                fails.append(_failure(d, n, slug, s, num, diag, tv))
        out.append(TracerView(slug, n, row["version"], row["status"], row["secs"],
                              tracers.claims(d, n), tests, fails, _tally([tv.cell for _, tv in tests])))
    return out


def _blocks_by_num(path):
    if not os.path.exists(path):
        return {}
    return {int(tap.RESULT_RE.match(b[0]).group(2)): b for b in tap.blocks(read_text(path))}


def _failure(d, tracer, slug, suite, num, diag, tv):
    rd = os.path.join(d, tracer, "repro", f"{suite}-{num}")
    first = (read_optional(os.path.join(rd, "first-difference.txt")) or "").strip() or tracers.first_diag(diag)
    files = sorted(f for f in os.listdir(rd) if os.path.isfile(os.path.join(rd, f))) if os.path.isdir(rd) else []
    return {"test": tv, "first": first, "repro": rd if os.path.isdir(rd) else None,
            "repro_rel": f"repro/{slug}/{suite}-{num}", "repro_files": files}


TALLY = (("pass", lambda c: c == "pass"), ("FAIL", lambda c: c == "FAIL"),
         ("skip (claims)", lambda c: c.startswith("skip (")), ("untested", lambda c: c.startswith("untested")),
         ("skip (other)", lambda c: c == "skip"), ("n/a", lambda c: c == "n/a"),
         ("kernel", lambda c: c.startswith("kernel")))


def _tally(cells):
    """The Tracers table's counts (as tracers.section counts them)."""
    return {name: sum(1 for c in cells if f(c)) for name, f in TALLY}


def cap_keys(kernels):
    keys = []
    for kv in kernels:
        keys += [k for k, (v, _) in kv.caps.items() if v in ("0", "1") and k not in keys]
    return keys


def _matrix_views(mats, commit, issues, root, taken, rep):
    """Add the kernels of MATS of COMMIT to REP; name the others as older
    or unreadable.  Several matrices may run one kernel: its name then
    goes with its matrix directory's."""
    now = []
    for m in mats:
        mc = commit_of(m)
        if commit and not same_commit(mc, commit):
            rep.older.append((shown(m, root), mc))
            continue
        try:
            now.append((m, matrix.load(m, issues)))
        except ReportError as e:
            rep.unreadable.append((shown(m, root), str(e)))
    for m, cols in now:
        group = os.path.basename(os.path.normpath(m)) if len(now) > 1 else ""
        for c in cols:
            rep.kernels.append(column_view(m, c, group, issues, root, taken))


def gather(results, wall, issues, dirs, root, commit=""):
    """The Report of RESULTS (make check's results directory) and DIRS
    (matrix and conformance directories, as `report results` takes
    them).  COMMIT: the checkout's (empty: every matrix is shown)."""
    taken, tracer_slugs = set(), set()
    run = rundir.load(results, issues)
    host = host_view(results, run, issues, root, taken)
    rep = Report(commit or "unknown", wall, shown(results, root), host, [host], issues, [], [], [], [], [], [])
    mats = [m for m in dirs if os.path.isfile(os.path.join(m, "kernels.tsv"))]
    _matrix_views(mats, commit, issues, root, taken, rep)
    for d in dirs:
        if not os.path.isfile(os.path.join(d, "tracers.tsv")):
            continue
        try:
            rep.tracers += tracer_views(d, issues, root, tracer_slugs)
            rep.conformance.append(shown(d, root))
        except ReportError as e:
            rep.unreadable.append((shown(d, root), str(e)))
    rep.cap_keys = cap_keys(rep.kernels)
    try:
        rep.bench = cost.load(results)
    except ReportError as e:
        rep.bench_error = str(e)
    return rep
