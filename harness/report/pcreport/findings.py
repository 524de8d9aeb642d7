"""What one test's result means, and what a run says about each listed
kernel problem.

A failed test is the finding "kernel: ID" iff
  (a) its diagnostics have "kernel-symptom: SLUG: EVIDENCE" lines
      (pc_kernel_symptom in suites/helpers/common.bash prints them),
  (b) bats' stack trace says it failed in pc_kernel_symptom itself: the
      innermost frame is `pc_kernel_symptom' (the test's own checks all
      passed before it; a symptom line printed earlier by a test that then
      failed elsewhere proves nothing),
  (c) the teardown did not report "cleanup invariants violated" (a
      leftover is the tracer's failure whatever the kernel did), and
  (d) every slug seen is listed by an entry of ci/kernel-issues whose
      tests name the test's ID (testid.py; a test without an ID matches
      no entry).
Anything else stays a plain failure, with the reason when a symptom was
seen.  A timed-out test is a failure whatever it printed.
"""

import re
from dataclasses import dataclass, field

SYMPTOM_RE = re.compile(r"^kernel-symptom: ([a-z0-9][a-z0-9-]*): (.*)$")
# bats' stack trace, innermost frame first:
#   (from function `pc_kernel_symptom' in file ..., line 444,
#    from function `helper' in file ..., line 4,
#    in test file suites/x.bats, line 10)
FRAME_RE = re.compile(r"^\s*\(?\s*(?:from function `([^']*)'|in test file )")
CLEANUP_MARK = "cleanup invariants violated"


@dataclass
class Outcome:
    """kind: pass, fail, skip or kernel.  ids: the findings (kernel).
    reason: why it failed or skipped.  evidence: "SLUG: EVIDENCE" lines."""
    kind: str
    ids: tuple = ()
    reason: str = ""
    evidence: list = field(default_factory=list)

    def cell(self):
        """The matrix cell: pass, FAIL, skip, kernel: K1, K3."""
        if self.kind == "kernel":
            return "kernel: " + ", ".join(self.ids)
        return {"fail": "FAIL"}.get(self.kind, self.kind)


def symptoms(diag):
    """(slug, evidence) pairs in the order printed, each once: the lines
    appear twice, from the failure and from the test's log."""
    seen, out = set(), []
    for line in diag:
        m = SYMPTOM_RE.match(line)
        if m and line not in seen:
            seen.add(line)
            out.append((m.group(1), m.group(2)))
    return out


def innermost_function(diag):
    """The function bats says the test failed in (None: the test body)."""
    for line in diag:
        m = FRAME_RE.match(line)
        if m:
            return m.group(1)
    return None


def classify(result, test_key, issues):
    """The Outcome of one TapResult, TEST_KEY its key (testid.key())."""
    if result.status == "pass":
        return Outcome("pass")
    if result.status == "skip":
        return Outcome("skip", reason=result.reason)
    seen = symptoms(result.diag)
    evidence = [f"{s}: {e}" for s, e in seen]
    if result.reason:                       # timeout
        return Outcome("fail", reason=result.reason, evidence=evidence)
    if not seen:
        return Outcome("fail")
    slugs = list(dict.fromkeys(s for s, _ in seen))
    first = slugs[0]
    if innermost_function(result.diag) != "pc_kernel_symptom":
        return Outcome("fail", reason=f"kernel symptom '{first}' printed, but the test failed elsewhere",
                       evidence=evidence)
    if any(CLEANUP_MARK in line for line in result.diag):
        return Outcome("fail", reason=f"symptom '{first}' plus leftovers (cleanup invariants violated)",
                       evidence=evidence)
    ids = []
    for slug in slugs:
        if not any(slug in i.symptoms for i in issues):
            return Outcome("fail", reason=f"unlisted kernel symptom '{slug}'", evidence=evidence)
        match = [i.id for i in issues if i.covers(slug, test_key)]
        if not match:
            return Outcome("fail", reason=f"symptom '{slug}' not listed for this test", evidence=evidence)
        ids += [i for i in match if i not in ids]
    order = [i.id for i in issues]
    return Outcome("kernel", ids=tuple(sorted(ids, key=order.index)), evidence=evidence)


@dataclass
class Finding:
    """What one run says about one entry of ci/kernel-issues.
    state: reproduced, not reproduced, not tested.  detail: one line."""
    issue: object
    state: str
    detail: str
    tests: list = field(default_factory=list)      # (key, evidence lines)


def finding(issue, tests):
    """The Finding of ISSUE over TESTS, a list of (key, Outcome) of one
    run (every suite that ran).  Tests its "tests" do not select do not
    count, except ones that reproduced it (they cannot: classify() only
    names an entry whose "tests" matched)."""
    repro = [(k, [e for e in o.evidence if e.split(":", 1)[0] in issue.symptoms])
             for k, o in tests if o.kind == "kernel" and issue.id in o.ids]
    if repro:
        n = len(repro)
        return Finding(issue, "reproduced", f"by {n} test{'s' * (n != 1)}", repro)
    mine = [(k, o) for k, o in tests if issue.selects(k)]
    passed = sum(o.kind == "pass" for _, o in mine)
    failed = sum(o.kind == "fail" for _, o in mine)
    # A test that reproduced other findings reached its verdict (a test
    # reports every symptom it saw in one pc_kernel_symptom call) without
    # this issue's symptom: it did not reproduce this one.
    others = [o for _, o in mine if o.kind == "kernel"]
    if others and not passed and not failed:
        ids = sorted({i for o in others for i in o.ids}, key=lambda i: (len(i), i))
        n = len(others)
        return Finding(issue, "not reproduced",
                       f"its {n} test{'s' * (n != 1)} reproduced only {', '.join(ids)}")
    failed += len(others)
    skips = list(dict.fromkeys(o.reason for _, o in mine if o.kind == "skip"))
    if passed:
        d = f"{passed} test{'s' * (passed != 1)} passed"
        if failed:
            d += f", {failed} failed otherwise"
        return Finding(issue, "not reproduced", d)
    if failed:
        return Finding(issue, "not tested", f"its {failed} test{'s' * (failed != 1)} failed otherwise")
    if skips:
        return Finding(issue, "not tested", "skipped: " + "; ".join(skips[:3]) + (" ..." if len(skips) > 3 else ""))
    return Finding(issue, "not tested", "none of its tests ran")
