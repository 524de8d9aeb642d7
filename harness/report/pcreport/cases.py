"""Suites whose tests are the cases of one table (issue 26): for this run,
each kernel of the matrices shown and each tracer of `make conformance`,
each test's verdict, a column per test.

  containers  suites/containers.bats: a container traced from the host
  filelife    suites/filelife.bats: the traced file replaced, deleted, a
              memfd; its bytes in the page cache

Cells: `ok` passed · **`FAIL`** · `skip` (the reason is the run's TAP) ·
`-` not run (the suite was not in that run).
"""

from . import tap, testid
from .errors import read_optional

SUITES = {
    "containers": ("Containers", [
        ("containers.pid-lower", "-p lower"), ("containers.pid-copyup", "-p copy-up"),
        ("containers.pid-userns", "-p userns"), ("containers.root-path-lower", "/proc/PID/root"),
        ("containers.root-path-copyup", "/proc/PID/root copy-up"),
        ("containers.host-path-lower", "host path"), ("containers.host-path-copyup", "host path copy-up"),
        ("containers.two-names-lower", "two names, once"),
        ("containers.two-names-copyup", "two names copy-up"),
        ("containers.copied-up-is-another-file", "lower after copy-up"),
        ("containers.follow-two-of-one-image", "--follow two of one image"),
        ("containers.dynamic-dlopen", "own libraries, dlopen"),
        ("containers.by-place", "by place")],
        "Each test of `suites/containers.bats`: a fixture in its own pid and mount namespaces "
        "(`userns`: and a user namespace) on an overlayfs root, traced from the host; events "
        "compared exactly with the fixture's log, with the host's ids and, from probecheck, the "
        "container's (`nspid`, `nstid`). `copy-up`: the binary copied to the upper layer first "
        "(a new inode)."),
    "filelife": ("The traced file's life", [
        ("filelife.bytes-intact-perf", "bytes: perf"), ("filelife.bytes-intact-tracefs", "bytes: tracefs"),
        ("filelife.bytes-intact-multi", "bytes: multi"), ("filelife.bytes-intact-nop5", "bytes: nop5"),
        ("filelife.replaced-by-rename", "renamed over"), ("filelife.replaced-star", "renamed, then '*'"),
        ("filelife.unlinked-star", "deleted, then '*'"), ("filelife.unlinked-exe", "deleted, /proc/PID/exe"),
        ("filelife.unlinked-while-traced", "deleted while traced"),
        ("filelife.unlinked-by-path", "old path refused"),
        ("filelife.memfd-star", "memfd '*'"), ("filelife.memfd-exe", "memfd /proc/PID/exe")],
        "Each test of `suites/filelife.bats`: `bytes`: the file on disk, a reader's mapping and "
        "another program's executable mapping keep the original bytes while traced and after the "
        "tracer's SIGKILL (no int3 in the page cache); the rest: a file replaced by rename, deleted "
        "while it runs, or a program run from a memfd, traced exactly or refused with the reason."),
}

CELL = {"pass": "ok", "fail": "**FAIL**", "skip": "skip"}


def row(path, suite):
    """{column label: cell} of one run's SUITE TAP; None without one."""
    text = read_optional(path) if path else None
    if not text:
        return None
    by_id = {testid.of(r.name): r for r in tap.parse(text, path).results}
    return {label: CELL.get(by_id[tid].status, by_id[tid].status) if tid in by_id else "-"
            for tid, label in SUITES[suite][1]}


def lines(suite, runs):
    """RUNS: [(run label, row or None)]; the section's lines (none when no
    run has the suite)."""
    runs = [(label, r) for label, r in runs if r]
    if not runs:
        return []
    title, cols, about = SUITES[suite]
    out = [f"## {title}", "", about + " `ok` · **`FAIL`** · `skip` (reason: the run's TAP) · `-` not run.", ""]
    out += ["| run | " + " | ".join(label for _, label in cols) + " |", "|---|" + "---|" * len(cols)]
    for label, r in runs:
        out.append(f"| {label} | " + " | ".join(r[c] for _, c in cols) + " |")
    return out + [""]
