"""The Cost section of the full document (DETAILS.md): `make bench`'s figures (harness/run/bench)
across kernels.  `make bench` copies each kernel's OUTDIR/NAME/bench.tsv
and bench.meta into the results directory as bench/NAME.tsv and
bench/NAME.meta (NAME: host, or a kernel of ci/kernels measured in a
guest).  One row per figure (hit, attach, detach, burst; tracer, path,
kind), one column per kernel: each cell is a figure of that kernel's own
run, never a comparison with another run's.  Under TCG only the ratios
(hit, x syscall) mean anything: its columns say so."""

import os

from .errors import ReportError, read_optional, read_text
from .md import esc

COLUMNS = ("kernel", "figure", "tracer", "path", "kind", "value", "unit", "note")
FIGURES = ("hit", "attach", "detach", "burst")


def load(d):
    """[(name, meta dict, {row key: (value, unit, note)})] of D/bench/, in
    name order with host first; a file that cannot be read raises."""
    bdir = os.path.join(d, "bench")
    if not os.path.isdir(bdir):
        return []
    names = sorted(f[:-4] for f in os.listdir(bdir) if f.endswith(".tsv"))
    names.sort(key=lambda n: n != "host")
    out = []
    for n in names:
        path = os.path.join(bdir, n + ".tsv")
        lines = read_text(path).splitlines()
        if not lines or tuple(lines[0].split("\t")) != COLUMNS:
            raise ReportError(f"'{path}': not a bench.tsv (header is not {' '.join(COLUMNS)})")
        rows = {}
        for l in lines[1:]:
            f = l.split("\t")
            if len(f) != len(COLUMNS):
                raise ReportError(f"'{path}': a row of {len(f)} fields, expected {len(COLUMNS)}")
            rows[(f[1], f[2], f[3], f[4])] = (f[5], f[6], f[7])
        meta = {}
        for l in read_optional(os.path.join(bdir, n + ".meta"), "").splitlines():
            k, _, v = l.partition("=")
            meta[k] = v
        out.append((n, meta, rows))
    return out


def _cell(v):
    if not v:
        return ""
    value, unit, note = v
    if not value:
        return "not measured" if note.startswith("not measured") else esc(note[:40])
    return esc(value)


def _unit(keys, kernels):
    for _, _, rows in kernels:
        for k in keys:
            if k in rows and rows[k][1]:
                return rows[k][1]
    return ""


def section(results):
    """The lines of the Cost section, or [] when no bench has run."""
    try:
        kernels = load(results)
    except ReportError as e:
        return ["", "## Cost", "", f"The bench figures could not be read: {esc(e)}"]
    if not kernels:
        return []
    heads = []
    for n, meta, _ in kernels:
        accel = meta.get("accel", "")
        tcg = " (TCG: ratios only)" if accel.upper().startswith("TCG") else ""
        heads.append(f"{esc(n)} {esc(meta.get('kernel', ''))}{tcg}")
    out = ["", "## Cost", "",
           "`make bench` (harness/run/bench): a benchmark, not a test. hit: one probe hit as a "
           "multiple of one getppid() measured in the same run ((traced loop - untraced) / N "
           "/ (syscall loop / N)); attach, detach: per site at N sites as the tracer times "
           "them; burst: events per second of the largest burst delivered without a drop. "
           "Each column is one run on one kernel: "
           + "; ".join(f"{esc(n)} {esc(m.get('date', '?'))}" for n, m, _ in kernels) + ".", "",
           "| figure | tracer | path | kind | unit | " + " | ".join(heads) + " |",
           "|---|---|---|---|---|" + "---:|" * len(kernels)]
    keys = []
    for _, _, rows in kernels:
        keys += [k for k in rows if k not in keys]
    keys.sort(key=lambda k: FIGURES.index(k[0]) if k[0] in FIGURES else len(FIGURES))
    for k in keys:
        cells = [_cell(rows.get(k)) for _, _, rows in kernels]
        out.append(f"| {' | '.join(esc(x) for x in k)} | {esc(_unit([k], kernels))} | "
                   + " | ".join(cells) + " |")
    return out
