"""The kernel log patterns, in one place: what a guest's console or the
host's dmesg complained about during a run.

The kernel's own markers (lib/bug.c, kernel/panic.c, the watchdogs,
kernel/rcu, the sanitizers, kernel/bpf/verifier.c's "verifier bug"), each
printed with the lines after it (the call trace); and uprobe_unregister
giving up ("failed to unregister, leaking uprobe": 6.12+ when its task
is SIGKILLed mid-detach, ci/kernel-issues K3), one line each.

A finding in the kernel log does not change a verdict by itself: the
tests judge behaviour; the log is shown beside them (kernel-findings.txt,
the matrix's "kernel log" column, RESULTS.md).
"""

import re

# Lines that start a report.  "cut here" only opens one (a WARNING or BUG
# line follows it): it is shown, not counted.
OPENER = r"------------\[ cut here \]"
EVENTS = (
    r"WARNING: ", r"BUG: ", r"kernel BUG at", r"Oops: ", r"general protection fault",
    r"Kernel panic", r"soft lockup", r"hard LOCKUP", r"rcu: INFO: ",
    r"rcu_.* self-detected stall", r"UBSAN: ", r"KASAN: ", r"verifier bug",
    r"INFO: task .* blocked for more than",
)
LEAK = r"uprobe: .* leaking uprobe"
EVENT_RE = re.compile("|".join(EVENTS + (LEAK,)))
START_RE = re.compile("|".join((OPENER,) + EVENTS))
LEAK_RE = re.compile(LEAK)
PANIC_RE = re.compile(r"Kernel panic")
STAMP_RE = re.compile(r"^\[ *([0-9]+\.[0-9]+)\] ?")
CONTEXT = 12        # lines shown after a report's first line
LIMIT = 400         # lines kept in all


def _clean(text):
    return [l.rstrip("\r") for l in text.splitlines()]


def scan(text):
    """The findings of a kernel log TEXT as lines (timestamps removed):
    each report with CONTEXT lines after it, reports apart separated by
    "--"; then the leak lines not already shown.  Empty: the log is clean."""
    lines = _clean(text)
    keep = set()
    for i, l in enumerate(lines):
        if START_RE.search(l):
            keep.update(range(i, min(i + CONTEXT + 1, len(lines))))
    out, last = [], None
    for i in sorted(keep):
        if last is not None and i != last + 1:
            out.append("--")
        out.append(STAMP_RE.sub("", lines[i]))
        last = i
    out += [STAMP_RE.sub("", l) for i, l in enumerate(lines) if LEAK_RE.search(l) and i not in keep]
    return out[:LIMIT]


def count(finding_lines):
    """The number of reports in findings lines (what scan() wrote)."""
    return sum(bool(EVENT_RE.search(l)) for l in finding_lines)


def panic_line(text):
    """The kernel's panic message, without its timestamp, or None."""
    for l in _clean(text):
        if PANIC_RE.search(l):
            return STAMP_RE.sub("", l)
    return None


def stamp(line):
    m = STAMP_RE.match(line)
    return float(m.group(1)) if m else None


def since(mark, text):
    """The lines of a dmesg TEXT printed after the line MARK (the last line
    dmesg printed when the run started): those stamped later than MARK;
    unstamped lines go with the line before them.  The ring buffer may
    have dropped MARK since; the stamps still order the lines."""
    t0 = stamp(mark or "")
    out, on = [], t0 is None
    for l in _clean(text):
        t = stamp(l)
        if t is not None:
            on = t0 is None or t > t0
        if on:
            out.append(l)
    return out
