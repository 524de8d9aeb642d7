"""Mutant ids and the sample a run takes.

An id must survive unrelated edits, so it is not made from a line number:
it hashes the file, the enclosing function, the operator, the line's text
before and after (stripped) and the occurrence of that same change within
the function (a line that appears twice in one function).  Editing a
function's other lines, or another function, leaves it unchanged.

Selection: each candidate's rank is a hash of (seed, id), so a run is
reproducible and adding a candidate elsewhere barely disturbs the sample.
In rank order the sample takes first the best candidate of every file
(files in the order of those candidates' ranks),
then up to N / (2 x operators) of every operator (half the sample spread
evenly, so rare operators such as SIGN get their share), then the best
of the rest: each file's share of that rest follows its candidate count.
"""

import hashlib
from collections import defaultdict


def assign_ids(cands):
    seen = defaultdict(int)
    for c in cands:
        key = (c.file, c.func, c.op, c.before, c.after)
        occ = seen[key]
        seen[key] += 1
        h = hashlib.sha1("\0".join(map(str, key + (occ,))).encode()).hexdigest()
        c.id = h[:8]
    return cands


def _rank(seed, c):
    return hashlib.sha1(f"{seed}:{c.id}".encode()).hexdigest()


def select(cands, n, seed, operators):
    if n >= len(cands):
        return list(cands)
    ranked = sorted(cands, key=lambda c: _rank(seed, c))
    chosen, ids = [], set()

    def take(c):
        if c.id not in ids and len(chosen) < n:
            ids.add(c.id)
            chosen.append(c)

    # Files in the order of their best candidate's rank: a sample smaller
    # than the number of files (CI's held-out one) is not the first files
    # of the alphabet; a larger one takes every file's best either way.
    files = set()
    for c in ranked:
        if c.file not in files:
            files.add(c.file)
            take(c)
    floor = max(1, n // (2 * len(operators)))
    for op in operators:
        have = sum(c.op == op for c in chosen)
        for c in [c for c in ranked if c.op == op and c.id not in ids][:max(0, floor - have)]:
            take(c)
    for c in ranked:
        take(c)
    return sorted(chosen, key=lambda c: (c.file, c.off, c.op, c.after))
