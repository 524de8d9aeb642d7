"""Memory the program has not touched at a glance (issue 25): for this
run, each kernel of the matrices shown and each tracer of `make
conformance`, what each case of suites/untouched.bats gave, per path:

  nofault    probecheck without --sleepable (every attach mode the kernel has)
  sleepable  probecheck --sleepable
  default    the tracer's own default (untouched.any-tracer; for probecheck
             the same as nofault)

Cells, from the line each run of the cases prints on fd 3
("# untouched.ID cases PATH MODE: CASE=OUTCOME ..."; suites/untouched.bats
ut_cases says what each outcome means): exact · cut · EFAULT (the marker,
with its errno) · silent · null · silent-cut · wrong · lost.  Where attach modes
disagree, each mode's outcome.  `refused`: --sleepable refused on a kernel
without sleepable uprobes (untouched.sleepable-absent passed); `fail`: the
test failed before it could classify; `-`: not run.
"""

import re

from . import tap, testid
from .errors import read_optional

CASES = ["untouched", "dontneed", "pageout", "cross", "rodata", "limit", "past",
         "null", "buf", "bufcross"]
PATHS = [("untouched.nofault-marker", "nofault"), ("untouched.sleepable-exact", "sleepable"),
         ("untouched.any-tracer", "default")]
LINE_RE = re.compile(r"^#? ?(untouched\.[a-z0-9-]+) cases (\S+) (\S+): (.*)$")
GOOD = ("exact", "cut")


def _outcomes(text):
    """{(test ID, path): {mode: {case: outcome}}} from the fd 3 lines (as
    a passing test's comment or a failing one's diagnostic)."""
    out = {}
    for line in text.splitlines():
        m = LINE_RE.match(line.strip())
        if not m:
            continue
        cells = dict(kv.split("=", 1) for kv in m.group(4).split() if "=" in kv)
        out.setdefault((m.group(1), m.group(2)), {})[m.group(3)] = cells
    return out


def _merge(by_mode):
    """{case: cell}: one outcome where the modes agree, else each mode's."""
    cells = {}
    for c in CASES:
        vals = {mode: v[c] for mode, v in by_mode.items() if c in v}
        if not vals:
            continue
        uniq = set(vals.values())
        cells[c] = uniq.pop() if len(uniq) == 1 else " ".join(f"{m}:{v}" for m, v in vals.items())
    return cells


def rows(path, tracer=False):
    """[(path label, {case: cell})] of one untouched TAP file, [] without:
    probecheck's two paths, or (TRACER) the tracer's default one."""
    text = read_optional(path) if path else None
    if not text:
        return []
    outcomes = _outcomes(text)
    by_id = {testid.of(r.name): r for r in tap.parse(text, path).results}
    out = []
    for tid, label in PATHS:
        if (label == "default") != tracer:
            continue
        r = by_id.get(tid)
        if r is None:
            continue
        modes = {}
        for (i, _p), v in outcomes.items():
            if i == tid:
                modes.update(v)
        if modes:
            out.append((label, _merge(modes)))
        elif r.status == "skip":
            absent = by_id.get("untouched.sleepable-absent")
            if label == "sleepable" and absent is not None and absent.status == "pass":
                out.append((label, {c: "refused" for c in CASES}))
        elif r.status != "pass":
            out.append((label, {c: "fail" for c in CASES}))
    return out


def lines(runs):
    """RUNS: [(run label, rows)]; the section's lines (none when no run of
    the suite is there)."""
    runs = [(label, rs) for label, rs in runs if rs]
    if not runs:
        return []
    out = ["## Untouched memory", "",
           "Each case of `suites/untouched.bats`: a string or buffer argument in a page without a "
           "page-table entry (a uprobe program cannot fault it in) or at the 255-byte limit, compared "
           "with the bytes the fixture passed. `exact` · `cut` marked as cut · `EFAULT` the "
           "unreadable marker · **`silent`** empty where there were bytes · **`null`** null where there "
           "were bytes, no reason in the event · **`silent-cut`** cut without a mark · **`wrong`** · **`lost`** no event · `refused` `--sleepable` refused (no sleepable "
           "uprobes) · `-` not run. Paths: `nofault` probecheck's default, `sleepable` "
           "`--sleepable`, `default` each tracer's own.", ""]
    out += ["| run | path | " + " | ".join(CASES) + " |", "|---|---|" + "---|" * len(CASES)]
    for label, rs in runs:
        for path, cells in rs:
            shown = [cells.get(c, "-") for c in CASES]
            out.append(f"| {label} | {path} | " + " | ".join(
                v if v in GOOD or v in ("-", "refused") or re.fullmatch(r"E[A-Z0-9]+", v)
                else f"**{v}**" for v in shown) + " |")
    return out + [""]
