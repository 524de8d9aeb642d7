"""The Tracers section: the conformance suites' tests x tracers, from a
`make conformance` directory (harness/run/conformance):

  tracers.tsv        tracer, run-suites status, seconds, version
  claims/TRACER      the adapter's claims ("CLAIM yes" / "CLAIM no WHY")
  TRACER/            run-suites results (SUITE.tap ...)
  TRACER/repro/SUITE-N/   the reproducer of failed test N of SUITE

A cell is pass, FAIL, kernel (a listed kernel problem), skip (CLAIM) when
the tracer does not claim what the test needs, n/a when the test is about
probecheck's own CLI, or skip (REASON) for the kernel or machine.  Every
FAIL cell is listed below the table with its first difference and its
reproducer."""

import os
import re

from . import findings, tap, testid
from .errors import ReportError, read_optional, read_text
from .md import esc, secs

CLAIM_SKIP_RE = re.compile(r"^tracer \S+ does not claim (\S+): ")
NOISE_RE = re.compile(r"^\s*(\(?from function|\(in test file|in test file|$|--$)"
                      r"|.*: line [0-9]+: +[0-9]+ (Killed|Terminated|Done)")
FAILED_RE = re.compile(r"^\s*`.*' failed")
LOG_RE = re.compile(r"^# ---- probecheck log")
BOX_RE = re.compile(r"^-- (.*) --$")


def load_tracers(d):
    rows = []
    for line in read_text(os.path.join(d, "tracers.tsv")).splitlines():
        f = line.split("\t")
        if len(f) >= 4 and f[0]:
            rows.append({"name": f[0], "status": f[1], "secs": f[2], "version": f[3]})
    if not rows:
        raise ReportError(f"'{d}/tracers.tsv': no tracer ran")
    return rows


def claims(d, name):
    out = {}
    for line in (read_optional(os.path.join(d, "claims", name)) or "").splitlines():
        c, _, rest = line.partition(" ")
        yes = rest.strip() == "yes"
        out[c] = (yes, "" if yes else rest[3:].strip() if rest.startswith("no ") else rest)
    return out


def first_diag(diag):
    """The failure's own message: the first diag line that is not bats'
    stack trace or the test's log; a bats-assert box ("-- title --", its
    lines, "--") becomes one line."""
    failed = None
    for i, line in enumerate(diag):
        if LOG_RE.match(line):
            break               # the test's log: not the failure's message
        if NOISE_RE.match(line):
            continue
        if FAILED_RE.match(line):
            failed = failed or line.strip()     # the failed command: if nothing better
            continue
        m = BOX_RE.match(line.strip())
        if not m:
            return line.strip()
        body = []
        for b in diag[i + 1:]:
            if b.strip() == "--":
                break
            if b.strip():
                body.append(" ".join(b.split()))
        return f"{m.group(1)}: " + "; ".join(body[:6])
    return failed or "(no message)"


def cell_of(r, key, issues, cl=None):
    """The cell; a claim the adapter left untested ("no not tested: ...")
    is "untested (CLAIM)", apart from what the tracer does not claim."""
    o = findings.classify(r, key, issues)
    if o.kind == "skip":
        m = CLAIM_SKIP_RE.match(o.reason)
        if m:
            why = (cl or {}).get(m.group(1), (False, ""))[1]
            if why.startswith("not tested"):
                return f"untested ({m.group(1)})", o
            return f"skip ({m.group(1)})", o
        if o.reason.startswith("probecheck only"):
            return "n/a", o
        return "skip", o
    return o.cell(), o


def tracer_cells(d, name, suites, issues):
    """{(suite, row): (cell, outcome, num, diag, test name)} for one
    tracer.  The row is the test's ID (testid.py), so that one test lines
    up across tracers whatever its sentence said in each run; the name
    for a test without an ID."""
    cells = {}
    cl = claims(d, name)
    for s in suites:
        p = os.path.join(d, name, s + ".tap")
        if not os.path.exists(p):
            continue
        for r in tap.load(p).results:
            c, o = cell_of(r, testid.key(s, r.name), issues, cl)
            cells[(s, testid.of(r.name) or r.name)] = (c, o, r.num, r.diag, r.name)
    return cells


def suites_of(d, tracers):
    seen = []
    for t in tracers:
        roster = read_optional(os.path.join(d, t["name"], "suites.tsv")) or ""
        for line in roster.splitlines()[1:]:
            s = line.split("\t")[0]
            if s and s not in seen:
                seen.append(s)
    return seen


def section(d, issues, rel=None):
    rel = rel or d
    tracers = load_tracers(d)
    suites = suites_of(d, tracers)
    per = {t["name"]: tracer_cells(d, t["name"], suites, issues) for t in tracers}
    names = [t["name"] for t in tracers]
    rows = []
    shown = {}                  # a row's test name: its first tracer's
    for s in suites:
        tests = []
        for n in names:
            for (ss, tn), v in per[n].items():
                if ss == s and tn not in tests:
                    tests.append(tn)
                    shown[(s, tn)] = v[4]
        rows += [(s, tn) for tn in tests]
    out = ["## Tracers", "",
           f"`make conformance` (harness/run/conformance) ran the tracing-behaviour suites of "
           f"`ci/conformance-suites` against each tracer's adapter (`harness/tracers/`); results in `{rel}/`.",
           "A tracer is judged exactly as probecheck is: the fixture's oracle event for event, and the "
           "cleanup invariants after every test. `skip (CLAIM)`: the tracer does not claim what the test "
           "needs (reasons below); `untested (CLAIM)`: the adapter does not implement what the test needs, "
           "so it says nothing of the tracer; `n/a`: a test of probecheck's own CLI.", "",
           "| tracer | version | pass | FAIL | skip (claims) | untested | skip (other) | n/a | kernel | time |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t in tracers:
        cs = [v[0] for v in per[t["name"]].values()]
        cnt = lambda f: sum(1 for c in cs if f(c))
        out.append(f"| {t['name']} | {esc(t['version'])} | {cnt(lambda c: c == 'pass')} | "
                   f"{cnt(lambda c: c == 'FAIL')} | {cnt(lambda c: c.startswith('skip ('))} | "
                   f"{cnt(lambda c: c.startswith('untested'))} | "
                   f"{cnt(lambda c: c == 'skip')} | {cnt(lambda c: c == 'n/a')} | "
                   f"{cnt(lambda c: c.startswith('kernel'))} | {secs(t['secs'])} |")
    ovs = [(t["name"], (read_optional(os.path.join(d, t["name"], "OVERLAY.txt")) or "").strip())
           for t in tracers]
    ovs = [f"- {n}: rerun after the main run: {esc(ov)}" for n, ov in ovs if ov]
    out += [""] + ovs if ovs else []
    out += ["", "### Claims", "",
            "| claim | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    cl = {n: claims(d, n) for n in names}
    allc = []
    for n in names:
        allc += [c for c in cl[n] if c not in allc]
    for c in allc:
        out.append(f"| {c} | " + " | ".join("yes" if cl[n].get(c, (False,))[0] else "no" for n in names) + " |")
    out += [""]
    for n in names:
        for c in allc:
            yes, why = cl[n].get(c, (False, "not listed by the adapter"))
            if not yes:
                out.append(f"- {n} does not claim `{c}`: {esc(why)}")
    out += ["", "### Tests x tracers", "", "| suite | test | " + " | ".join(names) + " |",
            "|---|---|" + "---|" * len(names)]
    for s, tn in rows:
        cells = [per[n].get((s, tn), ("-",))[0] for n in names]
        cells = [f"**{c}**" if c == "FAIL" else c for c in cells]
        out.append(f"| {s} | {esc(shown[(s, tn)])} | " + " | ".join(cells) + " |")
    out += ["", "### Failures: first difference and reproducer", ""]
    nf = 0
    for n in names:
        for (s, _), (c, o, num, diag, tn) in per[n].items():
            if c != "FAIL":
                continue
            nf += 1
            rd = os.path.join(d, n, "repro", f"{s}-{num}")
            first = (read_optional(os.path.join(rd, "first-difference.txt")) or "").strip() or first_diag(diag)
            repro = f"`{rel}/{n}/repro/{s}-{num}/`" if os.path.isdir(rd) else "(no reproducer written)"
            out.append(f"- **{n}** · {s}: {esc(tn)}  ")
            out.append(f"  first difference: {esc(first)}  ")
            out.append(f"  reproducer: {repro}")
    if not nf:
        out.append("None.")
    return out + [""]
