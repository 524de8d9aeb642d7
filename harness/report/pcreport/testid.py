"""Test IDs.  Every test's name starts with its ID, "SUITE.word-word: "
(SUITE its file's name without .bats; lowercase letters, digits and '-'
after the dot): `follow.orphan-kept: --follow: a child orphaned ...`.  The
ID stays when the sentence is reworded, so everything that names tests
names them by ID: ci/kernel-issues' "tests", ci/slow-tests, the Tracers
table's rows, harness/run/flake.  A list of IDs may hold globs (fnmatch:
`nop5.*`).  harness/run/checklists checks the IDs of the tree."""

import fnmatch
import re

ID = r"[a-z][a-z0-9]*\.[a-z0-9]+(?:-[a-z0-9]+)+"
ID_RE = re.compile(r"^%s$" % ID)
NAME_RE = re.compile(r"^(%s): " % ID)
# An entry of a list of IDs: an ID, or a glob over IDs.
PATTERN_RE = re.compile(r"^[a-z0-9*?\[\]][a-z0-9.*?\[\]-]*$")


def of(name):
    """The ID a test name starts with, or None."""
    m = NAME_RE.match(name)
    return m.group(1) if m else None


def key(suite, name):
    """How a test is named in reports: its name when it starts with its
    ID (which says the suite), else "SUITE: NAME"."""
    return name if of(name) else f"{suite}: {name}"


def patterns(text):
    """The IDs and ID globs of a whitespace-separated list, or ValueError
    naming the first that is neither."""
    out = text.split()
    for p in out:
        if not PATTERN_RE.match(p) or "." not in p and "*" not in p:
            raise ValueError(f"'{p}' is not a test ID or a glob over IDs")
    return tuple(out)


def matches(pats, name_or_key):
    """The test (a name or a key: see key()) has an ID that one of PATS
    matches.  A test without an ID matches nothing."""
    tid = of(name_or_key)
    return tid is not None and any(fnmatch.fnmatchcase(tid, p) for p in pats)
