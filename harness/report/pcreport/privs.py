"""The capability table (issue 26): which attach mode works for which
caller, per kernel, from suites/privileges.bats' "# privs:" lines

    # privs: root:bpf,perfmon paranoid=2 perf refused CAP_SYS_ADMIN
    # privs: user:bpf,perfmon paranoid=3 auto ok multi

(caller, kernel.perf_event_paranoid, mode, ok with the mode auto chose,
or refused with what the caller lacks).  A row per run, kernel and
caller, a column per mode: the outcome at the first paranoid value the
run found, and at another value where it differed.  A caller whose test
failed is **FAIL** throughout.
"""

import re

from . import tap, testid
from .errors import read_optional

CALLERS = [
    ("root:bpf,perfmon", "privileges.root-bpf-perfmon", "root, BPF+PERFMON"),
    ("root:bpf,perfmon,sys_admin", "privileges.root-bpf-perfmon-sysadmin", "root, BPF+PERFMON+SYS_ADMIN"),
    ("user:bpf,perfmon", "privileges.user-bpf-perfmon", "uid 65534, BPF+PERFMON"),
    ("user:bpf,perfmon,sys_admin", "privileges.user-bpf-perfmon-sysadmin", "uid 65534, BPF+PERFMON+SYS_ADMIN"),
    ("user:bpf", "privileges.user-bpf", "uid 65534, BPF"),
    ("user:", "privileges.user-none", "uid 65534, none"),
]
MODES = ["perf", "tracefs", "multi", "auto"]
LINE_RE = re.compile(r"^# privs: (\S+) paranoid=(-?\d+) (\S+) (ok|refused) ?(\S*)$")


def outcome(kind, what):
    """A cell's word for one mode."""
    if kind == "ok":
        return "ok"
    if what == "kernel":
        return "no (kernel)"
    return "needs " + (what.replace("CAP_", "").replace("_or_", " or ").replace("_and_", " and ")
                       if what else "?")


def row(path):
    """[(caller label, {column: cell})] of one run's privileges TAP, a row
    per caller; None without one."""
    text = read_optional(path) if path else None
    if not text:
        return None
    seen = {}      # caller -> {paranoid: {mode: (kind, what)}}, in order found
    for line in text.splitlines():
        m = LINE_RE.match(line)
        if m:
            who, par, mode, kind, what = m.groups()
            seen.setdefault(who, {}).setdefault(par, {})[mode] = (kind, what)
    status = {testid.of(r.name): r.status for r in tap.parse(text, path).results}
    rows = []
    for who, tid, label in CALLERS:
        st = status.get(tid)
        if st is None:
            continue
        if st != "pass" or who not in seen:
            word = {"fail": "**FAIL**", "skip": "skip"}.get(st, "?")
            rows.append((label, dict({m: word for m in MODES}, paranoid="-")))
        else:
            rows.append((label, cells(seen[who])))
    return rows


def word(mode, kind, what):
    """One mode's cell."""
    if kind == "ok":
        return f"→ {what}" if mode == "auto" else "ok"
    return outcome(kind, what)


def cells(by_par):
    """{mode: cell, "paranoid": cell}: the outcomes at the first paranoid
    value found, and at the others where they differ."""
    pars = list(by_par)
    first = by_par[pars[0]]
    out = {m: word(m, *first[m]) if m in first else "-" for m in MODES}
    same = []
    for p in pars[1:]:
        for m in MODES:
            if m in by_par[p] and by_par[p][m] != first.get(m):
                out[m] += f" (at {p}: {word(m, *by_par[p][m])})"
        same.append(p)
    out["paranoid"] = pars[0] + "".join(f", {p}" for p in same)
    return out


def lines(runs):
    """RUNS: [(run label, row or None)]; the section's lines (none when no
    run has the suite)."""
    runs = [(label, r) for label, r in runs if r]
    if not runs:
        return []
    out = ["## Capabilities by attach mode", "",
           "`suites/privileges.bats`: probecheck run by each caller (setpriv: root with a reduced "
           "bounding set, or uid 65534 with ambient capabilities) through each attach mode, at each "
           "`kernel.perf_event_paranoid` value listed (as found, then 2). `ok`: events exactly the "
           "fixture's, as `probecheck features` predicted; `needs X`: refused before attaching, the error "
           "naming X, which the caller lacks; `no (kernel)`: root cannot either; `→ M`: the mode auto chose. **`FAIL`** · `skip`.",
           "", "| run | caller | paranoid | " + " | ".join(MODES) + " |", "|---|---|---|" + "---|" * len(MODES)]
    for label, r in runs:
        for caller, c in r:
            out.append(f"| {label} | {caller} | {c['paranoid']} | " + " | ".join(c[m] for m in MODES) + " |")
    return out + [""]
