"""The static HTML report (`report html OUTDIR ...`, `make results`):
index.html with the verdict of this run, the kernels x findings and
kernels x capabilities grids, the Tracers table and the plots; a page per
kernel and per tracer beside it.  What it shows is htmlview.py's.

The only module that imports jinja2 (templates/) and matplotlib (the
plots, SVG): every other command works without them.  The pages work
from the file system: relative links only, everything they link to is
copied into OUTDIR (kernel logs, reproducers), no script, no network.
The same inputs give the same bytes, but for index.html's date line
(SOURCE_DATE_EPOCH fixes that one too): the plots' ids come from a fixed
salt and carry no date, the pages are written in the inputs' order.
"""

import os
import shutil
import time

import jinja2
import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402  (after the backend is chosen)

from .errors import ReportError  # noqa: E402

MARK = ".report-html"       # in OUTDIR: a directory this command may replace
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
SVG_RC = {"svg.hashsalt": "probecheck", "svg.fonttype": "none", "font.size": 9}
COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")


def cell_class(cell):
    """The CSS class of a test, finding or capability cell."""
    c = str(cell)
    for prefix, cls in (("FAIL", "fail"), ("kernel", "kernel"), ("reproduced", "repro"),
                        ("not reproduced", "pass"), ("not tested", "skip"), ("untested", "skip"),
                        ("skip", "skip"), ("pass", "pass"), ("yes", "pass"), ("no", "no"),
                        ("infra", "infra"), ("PASS", "pass"), ("INFRA", "infra")):
        if c.startswith(prefix):
            return cls
    return "none"


def _env():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters["cls"] = cell_class
    return env


def _date():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = time.gmtime(int(epoch)) if epoch and epoch.isdigit() else time.gmtime()
    return time.strftime("%Y-%m-%d %H:%M UTC", t)


def _save(fig, path):
    fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")


def _bars(path, title, xlabel, rows, series):
    """A horizontal grouped bar chart: ROWS (labels, top to bottom), one
    bar per (name, {row: value}) of SERIES in each row."""
    with matplotlib.rc_context(SVG_RC):
        fig = Figure(figsize=(8, 1.2 + 0.1 * len(rows) * max(2, len(series))))
        ax = fig.subplots()
        h = 0.8 / len(series)
        for i, (name, vals) in enumerate(series):
            ys = [r + i * h for r in range(len(rows)) if rows[r] in vals]
            ax.barh(ys, [vals[r] for r in rows if r in vals], height=h, label=name,
                    color=COLORS[i % len(COLORS)])
        ax.set_yticks([r + 0.4 - h / 2 for r in range(len(rows))], rows)
        ax.invert_yaxis()
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))     # beside: never over a bar
        _save(fig, path)


def plot_times(rep, path):
    """Test time per suite and kernel (bats' seconds per suite, first
    repeat), longest first; False when no kernel timed a suite."""
    series = []
    for kv in rep.kernels:
        vals = {s.name: float(s.seconds) for s in kv.suites if s.repeat == 1 and s.seconds is not None}
        if vals:
            series.append((f"{kv.label} ({kv.release})", vals))
    if not series:
        return False
    rows = sorted({r for _, v in series for r in v}, key=lambda r: (-max(v.get(r, 0) for _, v in series), r))
    _bars(path, "Test time per suite and kernel", "seconds (per suite, as run-suites timed it)", rows, series)
    return True


def plot_cost(rep, path):
    """Cost per hit per kernel (make bench: x a getppid()); False when no
    bench figure is a number."""
    series, rows = [], []
    for name, meta, figs in rep.bench:
        vals = {}
        for (fig, tracer, p, kind), (value, unit, _) in figs.items():
            try:
                v = float(value)
            except ValueError:
                continue
            if fig == "hit" and unit == "x syscall":
                label = f"{tracer} {p} {kind}"
                vals[label] = v
                rows += [label] if label not in rows else []
        if vals:
            tcg = " TCG" if meta.get("accel", "").upper().startswith("TCG") else ""
            series.append((f"{name} {meta.get('kernel', '')}{tcg}".strip(), vals))
    if not series:
        return False
    _bars(path, "Cost per hit (make bench)", "x one getppid() in the same run", rows, series)
    return True


def _copy_evidence(rep, out):
    """The kernel logs and the reproducers the pages link to."""
    for kv in rep.kernels:
        if kv.log_file:
            shutil.copyfile(kv.log_file, os.path.join(out, f"log-{kv.slug}.txt"))
    for tv in rep.tracers:
        for f in tv.failures:
            if not f["repro"]:
                continue
            dest = os.path.join(out, f["repro_rel"])
            os.makedirs(dest, exist_ok=True)
            for name in f["repro_files"]:
                shutil.copyfile(os.path.join(f["repro"], name), os.path.join(dest, name))


def _render(env, out, name, template, **ctx):
    text = env.get_template(template).render(**ctx)
    with open(os.path.join(out, name), "w", encoding="utf-8") as fh:
        fh.write(text)


def _replace(tmp, out):
    """OUTDIR becomes TMP; an OUTDIR of something else is left alone."""
    if os.path.lexists(out):
        if not os.path.isdir(out) or (os.listdir(out) and not os.path.exists(os.path.join(out, MARK))):
            shutil.rmtree(tmp)
            raise ReportError(f"'{out}': exists and was not written by report html (no {MARK}): not replaced")
        shutil.rmtree(out)
    os.rename(tmp, out)


def write(out, rep):
    """Write the report of REP (htmlview.Report) into directory OUT."""
    tmp = os.path.normpath(out) + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with open(os.path.join(tmp, MARK), "w") as fh:
        fh.write("written by harness/report/report html; replaced whole by the next one\n")
    plots = [p for p, f in (("time.svg", plot_times), ("cost.svg", plot_cost)) if f(rep, os.path.join(tmp, p))]
    _copy_evidence(rep, tmp)
    env = _env()
    _render(env, tmp, "index.html", "index.html", rep=rep, plots=plots, date=_date())
    for kv in rep.kernels:
        _render(env, tmp, f"kernel-{kv.slug}.html", "kernel.html", rep=rep, kv=kv)
    for tv in rep.tracers:
        _render(env, tmp, f"tracer-{tv.slug}.html", "tracer.html", rep=rep, tv=tv)
    _replace(tmp, out)
    return 1 + len(rep.kernels) + len(rep.tracers)
