"""RESULTS.md: the answer on one page (issue 27).  Does userspace tracing
work on this kernel, with this tracer?

In this order: the verdict of this run (kernel, commit, counts) with one
line per matrix and conformance run of the same commit; a grid kernels x
kernel findings; a grid capabilities x kernels (what a kernel lacks is
its limitation); the tracers, one row each with its three most important
failures; the failures of this run; where the details are.  Everything
else (evidence, every test, suites, units, fuzzing, mutation testing,
cost) is in the full document (results_md.py, `report results --full`),
which `make results` writes beside the results as DETAILS.md.

Matrices and conformance runs of another commit than this run's are
listed by commit, not shown: a grid mixing commits answers nothing.
Deterministic: the same files give the same bytes but for the date line.
"""

import os
import subprocess
import time
from collections import namedtuple

from . import check, findings as F, htmlview as V, kdir as K, kernlog, matrix, mutation, results_md
from . import cases as CS, privs as PV, stacks as S, tracers as T, untouched as U
from .errors import ReportError, read_optional
from .md import esc, first_sentence, secs

FAILURES_SHOWN = 12      # lines of "Failures of this run" before "... N more"
TRACER_FAILURES = 3      # failures shown per tracer
HTML = "build/report/index.html"

# One failed test of one tracer: PASSED_BY, how many other tracers pass
# it; ORDER, its suite's place in the run.
Failure = namedtuple("Failure", "tracer suite row first repro passed_by order")


def run_commit(results, root):
    """This run's commit: run/commit (run-suites writes it), else the
    checkout's."""
    c = V.commit_of(os.path.join(results, "run"))
    if c != "unknown":
        return c
    try:
        out = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _valgrind(results):
    text = read_optional(os.path.join(results, "valgrind.txt"))
    if text is None:
        return "valgrind not run", None
    last = [l[len("valgrind: "):] for l in text.splitlines() if l.startswith("valgrind: ")]
    line = last[-1] if last else "no summary line"
    m = line.split(" of ")
    clean = len(m) == 2 and m[1].split()[0] == m[0] and line.endswith("runs clean")
    return f"valgrind {line}", (None if clean else f"valgrind: {line}")


def problems_of(results, run):
    """What fails this run (check.decide's lines, then valgrind's), and the
    valgrind figure: (problems, "valgrind ...")."""
    vg, vg_problem = _valgrind(results)
    return check.decide(run, []) + ([vg_problem] if vg_problem else []), vg


def verdict_section(results, run, wall, issues, rel, commit, mats, confs, problems, vg):
    p, f, sk, k = run.totals()
    units_bad = [u for u in run.units if not u.ok]
    found = [F.finding(i, [(t.key, t.outcome) for t in run.tests()]) for i in issues]
    repro = [x.issue.id for x in found if x.state == "reproduced"]
    head = "**FAIL**" if problems else "**PASS**"
    out = ["## Verdict", "",
           f"{head}: `make check` on `{rel}`, commit `{commit}`, {secs(wall)}: "
           f"{p} passed, {f} failed, {sk} skipped, {k} reproduced a listed kernel finding"
           + (f" ({', '.join(repro)})" if repro else "") + "; "
           f"{len(run.units) - len(units_bad)} of {len(run.units)} unit binaries passed; {vg}; "
           f"kernel log: {_kernel_log(results)}.", ""]
    for m, cols, mc in mats:
        out.append(f"- Kernel matrix `{m}` (commit `{mc}`): " + ", ".join(
            f"{c.name} {c.verdict}" + (f" (kernel: {x})" if (x := _found(c)) else "") for c in cols))
    for d, ts, dc in confs:
        out.append(f"- Tracers `{d}` (commit `{dc}`): " + "; ".join(
            f"{t['name']} {n['pass']} pass, {n['FAIL']} FAIL" for t, n in ts))
    out.append("- Quality: " + "; ".join(_quality(results)))
    return out + [""]


def _kernel_log(results):
    lines = results_md.kernel_log(results)
    if lines is None:
        return "not scanned"
    n = kernlog.count(lines)
    return "clean" if n == 0 else f"{n} report{'s' * (n != 1)} (DETAILS.md, \"Kernel log\")"


def _found(c):
    return K.findings_summary(c.kernel) if c.kernel is not None and not c.infra else ""


def _quality(results):
    out = []
    cov = read_optional(os.path.join(results, "coverage.txt"))
    cl = [l[len("coverage: "):] for l in (cov or "").splitlines() if l.startswith("coverage: ")]
    out.append(f"coverage {cl[-1]}" if cl else "coverage not measured since this check")
    san = read_optional(os.path.join(results, "sanitize.txt"))
    sl = [l[len("sanitize: "):] for l in (san or "").splitlines() if l.startswith("sanitize: ")]
    out.append(f"sanitizers {sl[-1]}" if sl else "sanitizers not run since this check")
    for base in ("mutate", "mutate-heldout"):
        line = mutation.header_line(results, base)[2:]
        out.append(line.split("; see ")[0])
    fz = read_optional(os.path.join(results, "fuzz.tsv"))
    if fz:
        rows = [l.split("\t") for l in fz.splitlines() if l and not l.startswith(("#", "target"))]
        crashes = sum(int(r[-1]) for r in rows if r[-1].isdigit())
        out.append(f"fuzzing {len(rows)} targets, {crashes} crashes")
    else:
        out.append("fuzzing not run since this check")
    return out


def _cell(fnd):
    if fnd.state == "not tested" and fnd.detail.endswith("failed otherwise"):
        return "fail"
    return {"reproduced": "**R**", "not reproduced": "no"}.get(fnd.state, "-")


def findings_section(run, issues, rel, kernels):
    """KERNELS: [(label, Column)] of the matrices shown."""
    out = ["## Kernels × findings", "",
           "`R` reproduced · `no` its tests ran, not reproduced · `fail` its tests failed for another "
           "reason (see Failures) · `-` not tested (skipped, or none ran) · `infra` the kernel's run "
           "did not complete. Entries: `ci/kernel-issues`.", ""]
    if not issues:
        return out + ["No kernel problem is listed.", ""]
    out += ["| kernel | " + " | ".join(i.id for i in issues) + " |", "|---|" + "---|" * len(issues)]
    here = [(t.key, t.outcome) for t in run.tests()]
    out.append(f"| `{rel}` (this run) | " + " | ".join(_cell(F.finding(i, here)) for i in issues) + " |")
    for label, c in kernels:
        cells = ["infra"] * len(issues) if c.infra else [_cell(F.finding(i, c.kernel.tests())) for i in issues]
        out.append(f"| {label} `{c.row['release'] or '?'}` | " + " | ".join(cells) + " |")
    out.append("")
    for i in issues:
        fixed = f" Fixed: {esc(_one_line(i.fixed.split('  ')[0], 100))}" if i.fixed else ""
        out.append(f"- **{i.id}** {esc(first_sentence(i.title))}.{fixed}")
    return out + [""]


def caps_section(results, rel, kernels):
    cols = [("this run", matrix.caps_of(os.path.join(results, "run")))] + [
        (label, matrix.caps_of(c.dir)) for label, c in kernels]
    keys = list(dict.fromkeys(k for _, cp in cols for k in cp if cp[k][0] in ("0", "1")))
    out = ["## Kernels × capabilities", "",
           "What each kernel offers a tracer, probed on it (`probecheck features`); a `no` is a "
           "limitation of that kernel, and the tests needing it skip there. Reasons: DETAILS.md.", ""]
    if not keys:
        return out + ["No capability was probed.", ""]
    out += ["| capability | " + " | ".join(n for n, _ in cols) + " |", "|---|" + "---|" * len(cols)]
    for k in keys:
        out.append(f"| {k} | " + " | ".join({"1": "yes", "0": "no"}.get(cp.get(k, [""])[0], "-")
                                          for _, cp in cols) + " |")
    return out + [""]


def tracer_counts(d, issues):
    """[(tracer row, {pass, FAIL, skip, kernel}), ...] and every Failure
    (its reproducer directory None when none was written)."""
    ts = T.load_tracers(d)
    suites = T.suites_of(d, ts)
    per = {t["name"]: T.tracer_cells(d, t["name"], suites, issues) for t in ts}
    counts, fails = [], []
    for t in ts:
        cs = [v[0] for v in per[t["name"]].values()]
        counts.append((t, {"pass": cs.count("pass"), "FAIL": cs.count("FAIL"),
                           "skip": sum(c.startswith(("skip", "untested", "n/a")) for c in cs),
                           "kernel": sum(c.startswith("kernel") for c in cs)}))
        for (s, row), (c, _, num, diag, _) in per[t["name"]].items():
            if c != "FAIL":
                continue
            rd = os.path.join(d, t["name"], "repro", f"{s}-{num}")
            first = (read_optional(os.path.join(rd, "first-difference.txt")) or "").strip() or T.first_diag(diag)
            passed_by = sum(1 for o in per if o != t["name"] and per[o].get((s, row), ("",))[0] == "pass")
            fails.append(Failure(t["name"], s, row, first, rd if os.path.isdir(rd) else None,
                                 passed_by, suites.index(s)))
    return counts, fails


def _rel(d, root):
    """D as RESULTS.md names it: relative to the checkout when inside it."""
    r = os.path.relpath(os.path.abspath(d), root)
    return d if r.startswith("..") else r


def _one_line(s, n=110):
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n - 1] + "…"


def _ranked(fails, tracer):
    """TRACER's failures, most important first: those the most other
    tracers pass (its own bugs, not a fixture's or the kernel's), then in
    suite order."""
    return sorted((f for f in fails if f.tracer == tracer), key=lambda f: (-f.passed_by, f.order))


def tracers_section(confs, root):
    out = ["## Tracers", ""]
    if not confs:
        return out + ["No `make conformance` run of this commit.", ""]
    for d, counts, fails, _ in confs:
        out += [f"`make conformance` (`{d}`): each tracer judged as probecheck is, by the fixtures' "
                "oracle and the cleanup invariants. Failures ranked: first those every other tracer "
                "passes (this tracer's own), then by suite order; three each.", "",
                "| tracer | version | pass | FAIL | skip | kernel | most important failures |",
                "|---|---|---:|---:|---:|---:|---|"]
        for t, n in counts:
            mine = _ranked(fails, t["name"])
            shown = [esc(f.row) for f in mine[:TRACER_FAILURES]]
            more = f" (+{len(mine) - TRACER_FAILURES})" if len(mine) > TRACER_FAILURES else ""
            out.append(f"| {t['name']} | {esc(_one_line(t['version'], 30))} | {n['pass']} | {n['FAIL']} | "
                       f"{n['skip']} | {n['kernel']} | {', '.join(shown) or '-'}{more} |")
        out.append("")
        for t, _ in counts:
            mine = _ranked(fails, t["name"])
            for f in mine[:TRACER_FAILURES]:
                link = f"[reproducer]({_rel(f.repro, root)}/)" if f.repro else "no reproducer"
                out.append(f"- {f.tracer} · {esc(f.row)}: {esc(_one_line(f.first))} · {link}")
        out.append("")
    return out


def failures_section(problems, mats):
    lines = [f"- {esc(p)}" for p in problems]
    for m, cols, _ in mats:
        lines += [f"- {c.name} ({m}): {c.verdict}: {esc(_one_line(c.why))}" for c in cols
                  if c.verdict not in ("PASS",)]
    out = ["## Failures of this run", ""]
    if not lines:
        return out + ["None: every test passed, skipped with a reason, or reproduced a listed kernel finding.", ""]
    shown = lines[:FAILURES_SHOWN]
    if len(lines) > len(shown):
        shown.append(f"- ... {len(lines) - len(shown)} more: DETAILS.md, \"Failures\"")
    return out + shown + [""]


def details_section(results_rel, older, broken):
    out = ["## Where the details are", "",
           f"- `{results_rel}/DETAILS.md`: everything in full (`make results`; CI keeps it): each finding's evidence "
           "and tests, suites, slowest and skipped tests, unit tests, kernel log, fuzzing, mutation "
           "testing, cost, each matrix's every test, each tracer's claims and tests.",
           f"- `{HTML}`: the same as a report to browse, when written.",
           f"- `{results_rel}`: this run's TAP, JUnit and logs per suite (`SUITE.tap`, `run/`)."]
    for d, c in older:
        out.append(f"- Not shown, run at another commit: `{d}` (commit `{c}`).")
    for d, e in broken:
        out.append(f"- Not shown, could not be read: `{d}`: {esc(e)}")
    return out


def write(results, run, wall, issues, matrices, root):
    """RESULTS.md as a list of lines; MATRICES as results_md.write takes
    them ("tracers" for a conformance directory)."""
    rel = read_optional(os.path.join(results, "run", "kernel")) or "unknown"
    commit = run_commit(results, root)
    relp = lambda d: _rel(d, root)
    older, broken, mats, confs, tracer_stacks, tracer_ut = [], [], [], [], [], []
    tracer_cases = {}
    for m, cols in matrices:
        c = V.commit_of(m)
        if isinstance(cols, ReportError):
            broken.append((relp(m), cols))
        elif not V.same_commit(c, commit):
            older.append((relp(m), c))
        elif cols == "tracers":
            try:
                counts, fails = tracer_counts(m, issues)
                confs.append((relp(m), counts, fails, c))
                tracer_stacks += [(f"tracer {t['name']}", S.row(os.path.join(m, t["name"], "ustack.tap"), issues))
                                  for t, _ in counts]
                tracer_ut += [(f"tracer {t['name']}", U.rows(os.path.join(m, t["name"], "untouched.tap"), tracer=True))
                              for t, _ in counts]
                for su in CS.SUITES:
                    tracer_cases.setdefault(su, []).extend(
                        (f"tracer {t['name']}", CS.row(os.path.join(m, t["name"], f"{su}.tap"), su))
                        for t, _ in counts)
            except ReportError as e:
                broken.append((relp(m), e))
        else:
            mats.append((relp(m), cols, c))
    many = len(mats) > 1
    kernels = [((f"{c.name} ({os.path.basename(m)})" if many else c.name), c) for m, cols, _ in mats for c in cols]
    out = ["# probecheck results", "",
           f"Generated by `make results` (harness/report/report) from `{relp(results)}/`"
           + (" and the runs below" if mats or confs else "") + f"; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
           f"Do not edit by hand. The full document: `{relp(results)}/DETAILS.md`.", ""]
    problems, vg = problems_of(results, run)
    out += verdict_section(results, run, wall, issues, rel, commit, mats,
                           [(d, n, c) for d, n, _, c in confs], problems, vg)
    out += findings_section(run, issues, rel, kernels)
    out += S.lines([(f"`{rel}` (this run)", S.row(os.path.join(results, "ustack.tap"), issues))]
                   + [(f"{label} `{c.row['release'] or '?'}`", S.row(S.kernel_tap(c.dir), issues))
                      for label, c in kernels if not c.infra]
                   + tracer_stacks)
    out += U.lines([(f"`{rel}` (this run)", U.rows(os.path.join(results, "untouched.tap")))]
                   + [(f"{label} `{c.row['release'] or '?'}`", U.rows(S.kernel_tap(c.dir, "untouched")))
                      for label, c in kernels if not c.infra]
                   + tracer_ut)
    for su in CS.SUITES:
        out += CS.lines(su, [(f"`{rel}` (this run)", CS.row(os.path.join(results, f"{su}.tap"), su))]
                        + [(f"{label} `{c.row['release'] or '?'}`", CS.row(S.kernel_tap(c.dir, su), su))
                           for label, c in kernels if not c.infra]
                        + tracer_cases.get(su, []))
    out += PV.lines([(f"`{rel}` (this run)", PV.row(os.path.join(results, "privileges.tap")))]
                    + [(f"{label} `{c.row['release'] or '?'}`", PV.row(S.kernel_tap(c.dir, "privileges")))
                       for label, c in kernels if not c.infra])
    out += caps_section(results, rel, kernels)
    out += tracers_section(confs, root)
    out += failures_section(problems, mats)
    out += details_section(relp(results), older, broken)
    return out
