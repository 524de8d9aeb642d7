"""TAP as bats 1.8 (bats --tap --print-output-on-failure, with the junit
formatter on) and our C unit tests (suites/unit/unit.h) write it.

    1..5
    not ok 1 a symptom # in 42 ms
    # (from function `pc_kernel_symptom' in file suites/helpers/common.bash, line 444,
    #  in test file suites/integrity.bats, line 7)
    #   `pc_kernel_symptom redzone-call "..."' failed
    # kernel-symptom: redzone-call: fxint:nop5 pid 1 hit 2: red zone -8 ...
    ok 4 skipped # skip needs x
    not ok 5 slow # timeout after 300s
    ok 6 fast # in 37 ms

The junit formatter appends " # in N ms" to result lines; a skip carries
its reason after " # skip"; bats' per-test timeout marks the name with
" # timeout after Ns".  The "#" lines after a result are its diagnostics
(the stack trace, the test's output).  Lines that are neither (stderr that
run-suites merged into the stream) are ignored.
"""

import re
from dataclasses import dataclass, field

from .errors import read_text

PLAN_RE = re.compile(r"^1\.\.(\d+)")
RESULT_RE = re.compile(r"^(not )?ok (\d+)(?: (.*))?$")
MS_RE = re.compile(r" # in (\d+) ?ms$")
TIMEOUT_RE = re.compile(r" # (timeout after \d+s)$")
SKIP_RE = re.compile(r" # skip(?: (.*))?$")


@dataclass
class TapResult:
    """One result line and the diagnostics after it."""
    num: int
    name: str
    status: str            # "pass", "fail" or "skip", as TAP says
    reason: str = ""       # skip reason, or "timeout after Ns"
    diag: list = field(default_factory=list)   # "#" lines, "# " removed
    ms: object = None      # bats' "# in N ms", None when absent


@dataclass
class Tap:
    """One TAP stream: its plan (None: never printed) and results."""
    path: str
    plan: object = None
    results: list = field(default_factory=list)

    def missing(self):
        """Results the plan promised that never came (a crash, a kill)."""
        if self.plan is None:
            return 0
        return max(self.plan - len(self.results), 0)


def parse_result(line):
    """A TapResult from a result line, or None if LINE is not one."""
    m = RESULT_RE.match(line)
    if not m:
        return None
    failed, num, rest = m.group(1), int(m.group(2)), m.group(3) or ""
    ms = MS_RE.search(rest)
    ms = int(ms.group(1)) if ms else None
    rest = MS_RE.sub("", rest)
    if failed:
        t = TIMEOUT_RE.search(rest)
        if t:
            return TapResult(num, rest[:t.start()], "fail", t.group(1), ms=ms)
        return TapResult(num, rest, "fail", ms=ms)
    s = SKIP_RE.search(rest)
    if s:
        why = (s.group(1) or "").strip() or "(no reason given)"
        return TapResult(num, rest[:s.start()], "skip", why, ms=ms)
    return TapResult(num, rest, "pass", ms=ms)


def parse(text, path="-"):
    """A Tap from TEXT.  The first plan line counts (bats prints one)."""
    tap = Tap(path)
    current = None
    for line in text.splitlines():
        line = line.rstrip("\r")
        if tap.plan is None:
            p = PLAN_RE.match(line)
            if p:
                tap.plan = int(p.group(1))
                continue
        r = parse_result(line)
        if r is not None:
            tap.results.append(r)
            current = r
        elif line.startswith("#") and current is not None:
            current.diag.append(line[2:] if line.startswith("# ") else line[1:])
    return tap


def blocks(text):
    """Each result's lines as printed, in order: its result line and the
    "#" lines after it.  They line up with parse(TEXT).results (the same
    lines count as results), for a report that shows a test's own TAP."""
    out = []
    for line in text.splitlines():
        line = line.rstrip("\r")
        if RESULT_RE.match(line):
            out.append([line])
        elif line.startswith("#") and out:
            out[-1].append(line)
    return out


def load(path):
    """parse() of the file at PATH (ReportError if it cannot be read)."""
    return parse(read_text(path), path)
