"""User stacks at a glance (issue 24): for this run, each kernel of the
matrices shown and each tracer of `make conformance`, what each case of
suites/ustack.bats gave.  Cells:

  exact    every frame of every stack where the fixture says it must be
  short    stacks stopped early (no frame pointers: allowed), none wrong
  K9, K10  wrong frames, the symptom of a listed kernel finding
  wrong    a frame in the wrong function or object (the tracer's, or an
           unlisted kernel's)
  unres    frames the tracer left unresolved (null: said, not invented)
  fail     the test failed before or besides its stacks (events, attach)
  -        not run (skipped, or no ustack suite in that run)

Exact and short come from the line each stack comparison prints on fd 3
("# ID stacks: stackcmp: N events: E exact, S short, W wrong ..."), the
rest from the test's result and diagnostics.  Evidence: the first
difference of each cell neither exact nor short, a line each.
"""

import glob
import os
import re

from . import findings, tap, testid
from .errors import read_optional
from .md import esc

# (test ID, column): the stack cases, in the suite's order; the harness's
# own checks (bad-depth, planted-breaks) are not cases of a kernel.
CASES = [("ustack.usdt-exact", "usdt"), ("ustack.return-exact", "return"),
         ("ustack.entry-caller", "entry"), ("ustack.pending-returns", "pending"),
         ("ustack.library-chain", "library"), ("ustack.thread-chain", "thread"),
         ("ustack.every-mode", "modes"), ("ustack.every-target", "targets"),
         ("ustack.no-frame-pointers", "no-fp"), ("ustack.depth-limit", "depth"),
         ("ustack.attach-churn", "churn"), ("ustack.short-lived", "exited")]
STACKS_RE = re.compile(r"^# (ustack\.[a-z0-9-]+) stacks: stackcmp: \d+ events: "
                       r"(\d+) exact, (\d+) short, (\d+) wrong")
# The same line as a diagnostic: bats prints fd 3 before the test's own
# result, so the line of the next test lands among a failed one's lines.
COUNTS_DIAG_RE = re.compile(r"^ustack\.[a-z0-9-]+ stacks: stackcmp: ")
EVIDENCE_SHOWN = 10


def _counts(text):
    """{test ID: [exact, short, wrong]} summed over its comparisons."""
    out = {}
    for line in text.splitlines():
        m = STACKS_RE.match(line)
        if m:
            c = out.setdefault(m.group(1), [0, 0, 0])
            for k in range(3):
                c[k] += int(m.group(k + 2))
    return out


def _first(diag, *needles):
    """The first line with NEEDLES[0], else with NEEDLES[1], ..."""
    for n in needles:
        for line in diag:
            if n in line:
                return line.strip()
    return ""


def cell(r, counts, issues):
    """(cell, evidence line or '') of TapResult R of a ustack test."""
    if r.status == "skip":
        return "-", ""
    ex, short, wrong = counts.get(testid.of(r.name), [0, 0, 0])
    if r.status == "pass":
        # depth-limit's stacks are cut where it asked: exact at that depth.
        return ("short" if short and testid.of(r.name) != "ustack.depth-limit" else "exact"), ""
    r = tap.TapResult(r.num, r.name, r.status, r.reason,
                      [d for d in r.diag if not COUNTS_DIAG_RE.match(d)], r.ms)
    o = findings.classify(r, testid.key("ustack", r.name), issues)
    if o.kind == "kernel":
        return ", ".join(o.ids), o.evidence[0] if o.evidence else ""
    ev = _first(r.diag, "wrong frame", "the tracer says", "an empty stack")
    if wrong or ev:
        return "wrong", ev
    ev = _first(r.diag, "not symbolized")
    if ev:
        return "unres", ev
    return "fail", _tracer_error(r.diag) or _first(
        r.diag, "oraclecmp: MISMATCH", "invariants violated", "' failed") or r.name


def _tracer_error(diag):
    """The last error line of the tracer's stderr tail that pc_trace_bg
    printed when the tracer exited before it was ready, else ''."""
    for k, line in enumerate(diag):
        if "pc_trace_bg: tracer exited" in line:
            tail = [line]
            for nxt in diag[k + 1:]:
                if not nxt.strip() or nxt.startswith("#"):
                    break
                tail.append(nxt)
            errs = [t.strip() for t in tail if "ERROR" in t or "error" in t]
            return errs[-1] if errs else line.strip()
    return ""


def row(path, issues):
    """{column: (cell, evidence)} of one ustack TAP file, {} without one."""
    text = read_optional(path) if path else None
    if not text:
        return {}
    counts = _counts(text)
    by_id = {testid.of(r.name): r for r in tap.parse(text, path).results}
    return {col: cell(by_id[i], counts, issues) for i, col in CASES if i in by_id}


def kernel_tap(kdir, suite="ustack"):
    """The SUITE TAP of a kernel column's first repeat (guest or host)."""
    for p in (os.path.join(kdir, "results", "r1", suite, f"{suite}.tap"),
              os.path.join(kdir, "results", "r1", "all", f"{suite}.tap")):
        if os.path.exists(p):
            return p
    hits = sorted(glob.glob(os.path.join(kdir, "results", "r1", "*", f"{suite}.tap")))
    return hits[0] if hits else None


def lines(rows):
    """ROWS: [(label, {column: (cell, evidence)})]; the section's lines
    (none when no row ran the suite)."""
    rows = [(label, cells) for label, cells in rows if cells]
    if not rows:
        return []       # no run of the ustack suite: no section
    out = ["## User stacks", "",
           "Each case of `suites/ustack.bats`, stacks compared frame by frame with the fixture's own "
           "call chain (`harness/tools/stackcmp`): `exact` · `short` (stopped early without frame "
           "pointers: allowed) · `K9`/`K10` wrong frames of a listed kernel finding · `wrong` a frame "
           "in the wrong place · `unres` frames left unresolved · `fail` the test failed otherwise · "
           "`-` not run.", ""]
    out += ["| run | " + " | ".join(c for _, c in CASES) + " |", "|---|" + "---|" * len(CASES)]
    ev = []
    for label, cells in rows:
        shown = [cells.get(c, ("-",))[0] for _, c in CASES]
        out.append(f"| {label} | " + " | ".join(
            v if v in ("exact", "short", "-") else f"**{v}**" for v in shown) + " |")
        ev += [f"- {label} · {c}: {esc(cells[c][1][:150])}" for _, c in CASES
               if c in cells and cells[c][1]]
    out.append("")
    if len(ev) > EVIDENCE_SHOWN:
        ev = ev[:EVIDENCE_SHOWN] + [f"- ... {len(ev) - EVIDENCE_SHOWN} more: each run's `ustack.tap`"]
    return out + ev + ([""] if ev else [])
