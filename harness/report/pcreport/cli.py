"""harness/report/report COMMAND ...: the subcommands.  Usage errors and inputs
that cannot be read exit 2 with "report: COMMAND: REASON"; verdicts exit
0 PASS, 1 FAIL, 3 INFRA."""

import argparse
import os
import sys

import importlib


class _Lazy:
    """A module imported at its first use: each command needs two or three
    of them, and importing all of them was 55 of a call's 90 ms (the suites
    start this ~200 times a make check)."""

    def __init__(self, name):
        self._name, self._mod = name, None

    def __getattr__(self, attr):
        if self._mod is None:
            self._mod = importlib.import_module("." + self._name, __package__)
        return getattr(self._mod, attr)


(check, I, K, kernlog, matrix, merge, overlay, results_md, rundir, runners, summary_md, tracers) = (
    _Lazy(n) for n in ("check", "issues", "kdir", "kernlog", "matrix", "merge", "overlay",
                       "results_md", "rundir", "runners", "summary_md", "tracers"))
from .errors import ReportError, read_optional, read_text
from .md import first_sentence

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def load_issues(args):
    return I.load(args.issues)


def cmd_classify(a):
    """Every test of a results directory (or a kernel's: results/ inside)
    with its outcome: SUITE<TAB>TEST<TAB>CELL<TAB>REASON<TAB>ID (ID empty
    for a test without one)."""
    iss = load_issues(a)
    if os.path.isdir(os.path.join(a.dir, "results")):
        k = K.load(a.dir, iss)
        runs = [r for n in sorted(k.runs) for r in k.runs[n]]
    else:
        runs = [rundir.load(a.dir, iss)]
    for r in runs:
        for t in r.tests():
            print(f"{t.suite}\t{t.name}\t{t.outcome.cell()}\t{t.outcome.reason}\t{t.id or ''}")
    return 0


def cmd_results(a):
    if not os.path.isdir(a.results):
        raise ReportError(f"'{a.results}': no such directory")
    if not a.wall.isdigit():
        raise ReportError(f"'{a.wall}': not a number of seconds")
    iss = load_issues(a)
    run = rundir.load(a.results, iss)
    mats = []
    for m in a.matrices:
        if os.path.isfile(os.path.join(m, "tracers.tsv")):
            mats.append((m, "tracers"))
            continue
        if not os.path.isfile(os.path.join(m, "kernels.tsv")):
            continue
        try:
            mats.append((m, matrix.load(m, iss)))
        except ReportError as e:
            print(f"report: results: matrix '{m}' left out: {e}", file=sys.stderr)
            mats.append((m, e))
    doc = results_md if a.full else summary_md
    print("\n".join(doc.write(a.results, run, int(a.wall), iss, mats, ROOT)))
    return 0


def cmd_html(a):
    """The HTML report into OUTDIR (pcreport/html.py), from the inputs of
    `report results`.  jinja2 and matplotlib are imported here only, so
    every other command works without them."""
    if not os.path.isdir(a.results):
        raise ReportError(f"'{a.results}': no such directory")
    if not a.wall.isdigit():
        raise ReportError(f"'{a.wall}': not a number of seconds")
    try:
        from . import html
    except ImportError as e:
        raise ReportError(f"needs jinja2 and matplotlib, and {sys.executable} cannot import "
                          f"{e.name}: on Debian 12, apt-get install python3-jinja2 python3-matplotlib "
                          f"and run it with /usr/bin/python3") from None
    from . import htmlview
    rep = htmlview.gather(a.results, int(a.wall), load_issues(a), a.dirs, ROOT, a.commit)
    n = html.write(a.out, rep)
    print(f"report html: {n} pages in {a.out} ({len(rep.kernels)} kernels, {len(rep.tracers)} tracers)")
    return 0


def cmd_matrix(a):
    if not os.path.isfile(os.path.join(a.matrix, "kernels.tsv")):
        raise ReportError(f"'{a.matrix}': no kernels.tsv (not a matrix directory)")
    iss = load_issues(a)
    cols = matrix.load(a.matrix, iss)
    if a.verdicts:
        for n, v, why in matrix.verdicts(cols):
            print(f"{n}\t{v}\t{why}")
        return 0
    print("\n".join(matrix.section(a.matrix, cols, ROOT, findings_table=True, issues=iss)))
    return 0


def cmd_kernels(a):
    """Write OUTDIR/kernels.tsv for NAMEs with their verdicts as judged
    now; exit 0 every kernel PASS, 1 some FAIL, 3 some INFRA, no FAIL."""
    for n in a.names:
        if not os.path.isdir(os.path.join(a.matrix, n)):
            raise ReportError(f"'{a.matrix}/{n}': no such kernel directory")
    iss = load_issues(a)
    matrix.write_kernels(a.matrix, a.names, {})
    cols = matrix.load(a.matrix, iss)
    return matrix.rewrite_kernels(a.matrix, cols)


def cmd_verdict(a):
    """Decide and write KDIR/verdict and verdict.why; print them."""
    if not os.path.isdir(a.kdir):
        raise ReportError(f"'{a.kdir}': no such directory")
    iss = load_issues(a)
    if a.guest:
        v, why = K.guest_verdict(a.kdir, iss, a.qemu_status, a.timeout)
    else:
        v, why = K.evaluate(K.load(a.kdir, iss), K.status_of(a.kdir))
    K.write(a.kdir, v, why)
    print(f"{v}\t{why}")
    return K.EXIT[v]


def cmd_failures(a):
    """Each FAIL kernel's failed tests, where and why, in a few lines."""
    iss = load_issues(a)
    for n in a.names:
        d = os.path.join(a.matrix, n)
        if not os.path.isdir(d):
            raise ReportError(f"'{d}': no such kernel directory")
        v, _ = K.verdict(d, iss)
        if v != K.FAIL:
            continue
        for line in K.digest(K.load(d, iss)):
            print(f"  [{n}] {line}")
    return 0


def cmd_overlay(a):
    iss = load_issues(a)
    v, why = overlay.overlay(a.kdir, a.rerun, a.suites, iss)
    print(f"report overlay: {os.path.basename(os.path.normpath(a.kdir))}: {v}: {why}")
    return K.EXIT[v]


def cmd_merge(a):
    n = merge.merge(a.out, a.parts, os.path.join(ROOT, "ci", "kernels"))
    print(f"report merge: {n} kernels from {len(a.parts)} parts into {a.out}")
    return 0


def cmd_tally(a):
    iss = load_issues(a)
    if a.suite:
        print("\n".join(runners.tally_suite(a.dir, a.suite, iss)))
        return 0
    line, st = runners.tally_total(a.dir, iss)
    print(line)
    return st


def cmd_unit(a):
    lines, st = runners.unit_report(a.dir, load_issues(a))
    print("\n".join(lines))
    return st


def cmd_outcome(a):
    print(runners.outcome(a.tap, a.harness))
    return 0


def cmd_check(a):
    statuses = []
    for s in a.status:
        name, _, v = s.partition("=")
        if not name or not v.lstrip("-").isdigit():
            raise ReportError(f"--status '{s}': expected NAME=N")
        statuses.append((name, int(v)))
    iss = load_issues(a)
    run = rundir.load(a.results, iss)
    log = results_md.kernel_log(a.results)
    lines, st = check.block(run, iss, statuses, results_md.kernel_release(a.results),
                            None if log is None else kernlog.count(log))
    print("\n".join(lines))
    return st


def cmd_tracers(a):
    """The Tracers section of a `make conformance` directory."""
    if not os.path.isfile(os.path.join(a.dir, "tracers.tsv")):
        raise ReportError(f"'{a.dir}': no tracers.tsv (not a conformance directory)")
    print("\n".join(tracers.section(a.dir, load_issues(a), a.rel)))
    return 0


def cmd_kernlog(a):
    text = sys.stdin.read() if a.log == "-" else read_text(a.log)
    if a.since is not None:
        mark = read_optional(a.since, "") or ""
        text = "\n".join(kernlog.since(mark.splitlines()[-1] if mark else "", text))
    out = kernlog.scan(text)
    if out:
        print("\n".join(out))
    return 0


def cmd_issues(a):
    for i in load_issues(a):
        print(f"{i.id}\t{' '.join(i.symptoms)}\t{' '.join(i.tests)}\t{first_sentence(i.title)}")
    return 0


def parser():
    p = argparse.ArgumentParser(prog="report", description=__doc__)
    p.add_argument("--issues", default=os.environ.get("PROBECHECK_KERNEL_ISSUES",
                                                      os.path.join(ROOT, "ci", "kernel-issues")),
                   help="the kernel problem list (default ci/kernel-issues; env PROBECHECK_KERNEL_ISSUES)")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True

    def add(name, fn, help):
        s = sub.add_parser(name, help=help, description=help)
        s.set_defaults(fn=fn)
        return s

    s = add("classify", cmd_classify, "every test's outcome in a results or kernel directory")
    s.add_argument("dir")
    s = add("results", cmd_results, "RESULTS.md on stdout (make check, make matrix): the one-page answer")
    s.add_argument("--full", action="store_true",
                   help="the full document instead (every section; make results writes it to build/report/DETAILS.md)")
    s.add_argument("results", metavar="RESULTS_DIR")
    s.add_argument("wall", metavar="WALL_SECONDS")
    s.add_argument("matrices", metavar="MATRIX_DIR", nargs="*")
    s = add("html", cmd_html, "the HTML report (index.html and a page per kernel and tracer) into OUTDIR")
    s.add_argument("--commit", default="", help="the checkout's commit: only matrices of it are shown (default: all)")
    s.add_argument("out", metavar="OUTDIR")
    s.add_argument("results", metavar="RESULTS_DIR")
    s.add_argument("wall", metavar="WALL_SECONDS")
    s.add_argument("dirs", metavar="MATRIX_DIR", nargs="*", help="matrix and conformance directories")
    s = add("matrix", cmd_matrix, "the Kernel matrix section of a matrix directory, or its verdicts")
    s.add_argument("--verdicts", action="store_true", help="NAME<TAB>VERDICT<TAB>WHY per kernel instead")
    s.add_argument("matrix", metavar="MATRIX_DIR")
    s = add("kernels", cmd_kernels, "write MATRIX_DIR/kernels.tsv for NAMEs, verdicts judged now")
    s.add_argument("matrix", metavar="MATRIX_DIR")
    s.add_argument("names", metavar="NAME", nargs="+")
    s = add("verdict", cmd_verdict, "decide and write a kernel directory's verdict")
    s.add_argument("--guest", action="store_true", help="a guest run that just ended (vm-run)")
    s.add_argument("--qemu-status", type=int, default=0)
    s.add_argument("--timeout", default="?")
    s.add_argument("kdir", metavar="KDIR")
    s = add("failures", cmd_failures, "each FAIL kernel's failed tests: where and why, a few lines each")
    s.add_argument("matrix", metavar="MATRIX_DIR")
    s.add_argument("names", metavar="NAME", nargs="+")
    s = add("overlay", cmd_overlay, "put a rerun of some suites over a kernel's results")
    s.add_argument("kdir", metavar="KDIR")
    s.add_argument("rerun", metavar="RERUN")
    s.add_argument("suites", metavar="SUITE", nargs="+")
    s = add("merge", cmd_merge, "one matrix directory from several parts")
    s.add_argument("out", metavar="OUTDIR")
    s.add_argument("parts", metavar="PART", nargs="+")
    s = add("tally", cmd_tally, "run-suites: a suite's counts (into suites.tsv) or the run's total")
    s.add_argument("dir", metavar="RESULTS_DIR")
    s.add_argument("suite", metavar="SUITE", nargs="?")
    s = add("unit", cmd_unit, "run-unit: one line per unit binary and the summary")
    s.add_argument("dir", metavar="RESULTS_DIR")
    s = add("outcome", cmd_outcome, "bisect-kernels: one suite's outcome (pass fail skip none missing)")
    s.add_argument("tap", metavar="TAP")
    s.add_argument("harness", metavar="HARNESS", nargs="?")
    s = add("check", cmd_check, "make check: the findings block and the exit status")
    s.add_argument("--status", action="append", default=[], metavar="NAME=N")
    s.add_argument("results", metavar="RESULTS_DIR")
    s = add("kernlog", cmd_kernlog, "what a kernel log complained about (LOG or - for stdin)")
    s.add_argument("--since", metavar="MARKFILE", help="only lines after the one in MARKFILE (dmesg)")
    s.add_argument("log", metavar="LOG")
    s = add("tracers", cmd_tracers, "the Tracers section of a conformance directory")
    s.add_argument("--rel", help="the directory's name as RESULTS.md shows it")
    s.add_argument("dir", metavar="CONFORMANCE_DIR")
    add("issues", cmd_issues, "the entries of the kernel problem list, one a line")
    return p


def main(argv):
    p = parser()
    a = p.parse_args(argv)            # usage errors: argparse exits 2
    try:
        return a.fn(a)
    except ReportError as e:
        print(f"report: {a.cmd}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 1
