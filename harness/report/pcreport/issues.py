"""ci/kernel-issues: the known kernel problems, each listed once.

Stanzas separated by blank lines, "key: value" lines, a value continued on
lines that start with whitespace, "#" comments (see the file's header).
Every entry needs id, symptom, title and tests; a malformed file is an
error naming the file and line, never a silently shorter list: a missing
entry would turn its findings into plain failures, a wrong one could hide
a real failure.
"""

import re
from dataclasses import dataclass

from . import testid
from .errors import ReportError, read_text

KEYS = ("id", "symptom", "title", "tests", "affected", "fixed", "evidence")
REQUIRED = ("id", "symptom", "title", "tests")
# K<N>: a kernel problem (some kernels have it, or a fix is known or
# possible); L<N>: a limitation of the mechanism itself, on every kernel
# (what a user of it must avoid).  Both are reported the same way.
ID_RE = re.compile(r"^[KL][0-9]+$")
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass
class Issue:
    """One entry.  tests: the IDs (or ID globs) of the tests that detect
    it (testid.py); a test is named by its key (rundir.TestResult.key)."""
    id: str
    symptoms: tuple
    title: str
    tests: object
    affected: str = ""
    fixed: str = ""
    evidence: str = ""

    def covers(self, slug, test_key):
        """This entry explains SLUG seen by the test TEST_KEY."""
        return slug in self.symptoms and self.selects(test_key)

    def selects(self, test_key):
        """The test TEST_KEY is one of the tests that detect this: its ID
        is one of "tests" (a test without an ID is none of them)."""
        return testid.matches(self.tests, test_key)


def _stanzas(text, path):
    """(first line number, {key: value}) per stanza."""
    stanza, start, key = {}, 0, None
    for n, raw in enumerate(text.splitlines() + [""], 1):
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if stanza:
                yield start, stanza
            stanza, key = {}, None
            continue
        if raw[0].isspace():
            if key is None:
                raise ReportError(f"'{path}', line {n}: a continuation line with no key before it")
            stanza[key] += " " + raw.strip()
            continue
        k, sep, v = raw.partition(":")
        if not sep or k not in KEYS:
            raise ReportError(f"'{path}', line {n}: expected one of {', '.join(KEYS)} then ':', got '{raw}'")
        if k in stanza:
            raise ReportError(f"'{path}', line {n}: '{k}' given twice in one entry")
        if not stanza:
            start = n
        key = k
        stanza[k] = v.strip()


def _issue(start, st, path):
    where = f"'{path}', entry at line {start}"
    for k in REQUIRED:
        if not st.get(k, "").strip():
            raise ReportError(f"{where}: no '{k}'")
    if not ID_RE.match(st["id"]):
        raise ReportError(f"{where}: id '{st['id']}' is not K<N> or L<N>")
    slugs = tuple(st["symptom"].split())
    for s in slugs:
        if not SLUG_RE.match(s):
            raise ReportError(f"{where}: symptom '{s}' is not a slug ([a-z0-9-])")
    try:
        tests = testid.patterns(st["tests"])
    except ValueError as e:
        raise ReportError(f"{where}: tests: {e}") from None
    return Issue(st["id"], slugs, st["title"], tests, st.get("affected", ""),
                 st.get("fixed", ""), st.get("evidence", ""))


def parse(text, path):
    """The entries of a kernel-issues text, in file order."""
    issues, seen = [], set()
    for start, st in _stanzas(text, path):
        i = _issue(start, st, path)
        if i.id in seen:
            raise ReportError(f"'{path}', entry at line {start}: id {i.id} listed twice")
        seen.add(i.id)
        issues.append(i)
    return issues


def load(path):
    return parse(read_text(path), path)
