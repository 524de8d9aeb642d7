"""Mutation testing (harness/run/mutate): what a mutant's test results say,
the figures of a run and their two presentations, the summary harness/run/mutate
prints and writes (OUT/summary.txt) and the RESULTS.md section.

Files: OUT/mutants.tsv, one row per selected mutant (COLUMNS), and
OUT/summary.txt, whose first lines are "key: value" (seed, mutants,
budget, command, wall, date).  `make mutate` copies them into the results
directory as mutate.tsv and mutate.txt when a make check ran.

Verdicts: killed (a unit binary or a suite failed: `by` names the first
failure), timeout (the per-mutant budget ran out; detected, counted
apart), survived, stillborn (does not compile, or only with a type
warning on the mutated line), same-code (the object is the original's:
equivalent by construction), equivalent (listed in ci/mutants-equivalent,
not run).  Score = (killed + timeout) / (selected - stillborn - same-code -
equivalent).
"""

import os

from . import rundir
from .errors import ReportError, read_optional
from .md import esc, secs

COLUMNS = ("id", "file", "line", "col", "function", "operator", "original", "replacement",
           "verdict", "by", "seconds", "before", "after")
VERDICTS = ("killed", "timeout", "survived", "stillborn", "same-code", "equivalent")


def clean(s):
    """A TSV cell: no tab, no newline."""
    return " ".join(str(s).replace("\t", " ").split("\n")).strip()


def judge(d, issues, units):
    """(verdict, by) from results directory D as harness/run/run-unit (UNITS)
    or harness/run/run-suites left it: (None, "") when nothing failed."""
    run = rundir.load(d, issues, units=units)
    if units:
        for u in run.units:
            if not u.ok:
                return ("timeout" if u.why == "timed out" else "killed",
                        f"unit {u.name}: " + (u.failures[0] if u.failures else u.why))
        return None, ""
    for s in run.suites:
        if any("timed out" in h for h in s.harness):
            return "timeout", f"suite {s.name}: timed out (the mutant's budget)"
        probs = s.problems()
        if probs:
            return "killed", "suite " + probs[0]
    return None, ""


def failed_units(d, issues):
    """Names of the unit binaries that failed (not timed out) in D."""
    return [u.name for u in rundir.load(d, issues, units=True).units
            if not u.ok and u.why != "timed out"]


def read(path):
    """The rows of a mutants.tsv, as dicts."""
    text = read_optional(path)
    if text is None:
        raise ReportError(f"'{path}': cannot read")
    lines = text.splitlines()
    if not lines or lines[0].split("\t")[:1] != ["id"]:
        raise ReportError(f"'{path}': no 'id' header (not written by harness/run/mutate?)")
    head = lines[0].split("\t")
    rows = []
    for l in lines[1:]:
        f = l.split("\t")
        rows.append(dict(zip(head, f + [""] * (len(head) - len(f)))))
    return rows


def write_row(f, row):
    f.write("\t".join(clean(row.get(c, "")) for c in COLUMNS) + "\n")


def figures(rows):
    n = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    n["selected"] = len(rows)
    n["by_unit"] = sum(r["verdict"] == "killed" and r["by"].startswith("unit ") for r in rows)
    n["by_suite"] = n["killed"] - n["by_unit"]
    n["scored"] = n["selected"] - n["stillborn"] - n["same-code"] - n["equivalent"]
    det = n["killed"] + n["timeout"]
    n["score"] = 100.0 * det / n["scored"] if n["scored"] else None
    return n


def score_text(n):
    if n["score"] is None:
        return "no mutant to score"
    return (f"{n['score']:.1f}% ({n['killed'] + n['timeout']} of {n['scored']} "
            f"killed or timed out)")


def read_meta(path):
    """The "key: value" lines at the top of a summary.txt."""
    meta = {}
    for l in (read_optional(path, "") or "").splitlines():
        k, sep, v = l.partition(": ")
        if not sep or " " in k:
            break
        meta[k] = v
    return meta


def summary(rows, meta):
    """summary.txt: META, the figures, then every survivor."""
    n = figures(rows)
    out = [f"{k}: {v}" for k, v in meta.items()] + [
        "",
        f"mutation score: {score_text(n)}",
        f"  selected {n['selected']}, stillborn {n['stillborn']}, same code {n['same-code']}, "
        f"equivalent (listed) {n['equivalent']}",
        f"  killed {n['killed']} (by a unit test {n['by_unit']}, by a suite {n['by_suite']}), "
        f"timeout {n['timeout']}, survived {n['survived']}",
    ]
    surv = [r for r in rows if r["verdict"] == "survived"]
    if surv:
        out += ["", f"survivors ({len(surv)}):"]
        for r in surv:
            out += [f"  {r['id']} {r['file']}:{r['line']} {r['function']} {r['operator']} "
                    f"({r['by']})",
                    f"    - {r['before']}", f"    + {r['after']}",
                    f"    reproduce: harness/run/mutate --only {r['id']}"]
    return out


# The two samples: the seeded one (`make mutate`, its survivors killed by
# tests written for them) and CI's held-out one (`make mutate-heldout`: a
# seed from the commit, a draw no test was written against).
SAMPLES = {
    "mutate": ("Mutation score (`make mutate`)", "Mutation testing"),
    "mutate-heldout": ("Held-out mutation score (`make mutate-heldout`, CI)",
                       "Mutation testing, held-out sample"),
}


def header_line(results, base="mutate"):
    """The RESULTS.md header bullet."""
    label, title = SAMPLES[base]
    path = os.path.join(results, base + ".tsv")
    if not os.path.exists(path):
        return f"- {label}: not run since this check"
    try:
        n = figures(read(path))
    except ReportError as e:
        return f"- {label}: could not be read: {esc(e)}"
    return f"- {label}: {score_text(n)}; see \"{title}\""


def section(results, base="mutate"):
    """The Mutation testing section of RESULTS.md ([] when not run); a
    file it cannot read is named, the rest of RESULTS.md still written."""
    title = SAMPLES[base][1]
    path = os.path.join(results, base + ".tsv")
    if not os.path.exists(path):
        return []
    try:
        rows = read(path)
    except ReportError as e:
        return ["", f"## {title}", "", f"`{path}` could not be read: {esc(e)}"]
    meta = read_meta(os.path.join(results, base + ".txt"))
    n = figures(rows)
    heldout = (["A seed derived from the commit, drawn after the tests were written: "
                "what the oracle catches in mutants nobody has seen (the seeded score above "
                "counts tests written against its own survivors).", ""]
               if base == "mutate-heldout" else [])
    out = ["", f"## {title}", ""] + heldout + [
           f"`{esc(meta.get('command', 'make mutate'))}` (harness/run/mutate; seed {esc(meta.get('seed', '?'))}, "
           f"{esc(meta.get('budget', '?'))} s per mutant, wall time {secs(meta.get('wall'))}): "
           "mutants of providers/ and the BPF program, each built and run against the unit tests and the "
           "suites `ci/mutate-suites` maps its file to." +
           (f" Run at commit `{esc(meta['commit'])}`, {esc(meta.get('date', '?'))}." if meta.get("commit") else "") +
           (f" Then {esc(meta['rerun'])}." if meta.get("rerun") else ""), "",
           f"**Score: {score_text(n)}.**", "",
           "| selected | stillborn | same code | equivalent (listed) | killed by a unit test | "
           "killed by a suite | timeout | survived |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|",
           f"| {n['selected']} | {n['stillborn']} | {n['same-code']} | {n['equivalent']} | {n['by_unit']} | "
           f"{n['by_suite']} | {n['timeout']} | {n['survived']} |", ""]
    by_op = {}
    for r in rows:
        by_op.setdefault(r["operator"], []).append(r)
    out += ["| operator | selected | killed | timeout | survived | not scored |", "|---|---:|---:|---:|---:|---:|"]
    for op, rs in sorted(by_op.items()):
        f = figures(rs)
        out.append(f"| {op} | {f['selected']} | {f['killed']} | {f['timeout']} | {f['survived']} | "
                   f"{f['selected'] - f['scored']} |")
    out.append("")
    surv = [r for r in rows if r["verdict"] == "survived"]
    out += ["Survivors (each to be killed by a sharper test or listed in `ci/mutants-equivalent`):", ""]
    out += [f"- `{r['id']}` {esc(r['file'])}:{r['line']} `{esc(r['function'])}` {r['operator']}: "
            f"`{esc(r['before'])}` → `{esc(r['after'])}`" for r in surv] or ["None."]
    eq = [r for r in rows if r["verdict"] == "equivalent"]
    if eq:
        out += ["", "Equivalent (listed in `ci/mutants-equivalent`, not run):", ""]
        out += [f"- `{r['id']}` {esc(r['file'])}:{r['line']} `{esc(r['function'])}` {r['operator']}: "
                f"`{esc(r['before'])}` → `{esc(r['after'])}` — {esc(r['by'])}" for r in eq]
    return out
