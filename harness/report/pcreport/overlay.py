"""overlay KDIR RERUN SUITE... — put a rerun of some suites on one kernel
over that kernel's matrix results (harness/kernels/matrix -U -s: a whole-suite
guest run takes an hour or more, a fixed suite need not rerun the others).

Each SUITE's results in KDIR are replaced by RERUN's (guest:
results/r1/SUITE/; host: results/r1/all/SUITE.* and its suites.tsv row);
unit results too when RERUN has them.  RERUN's console, kernel findings
and verdict are kept in KDIR/reruns/N/, its findings appended to KDIR's,
its wall time added.  The verdict is then decided again from all of
KDIR's results (kdir.evaluate).  A kernel whose whole run was INFRA stays
INFRA (rerun the whole kernel instead); a RERUN that is INFRA makes the
kernel INFRA and replaces nothing, until a rerun completes.

Every copy is checked: new files are copied beside the old ones first and
renamed over them only when all copies succeeded, so a failed copy leaves
KDIR's results as they were (and exits 2 naming the file).
"""

import glob
import os
import shutil

from . import kdir as K
from .errors import ReportError, read_optional, read_text


def _copy(src, dst):
    """Copy a file or tree SRC to DST (which must not exist), checked."""
    try:
        if os.path.isdir(src):
            shutil.copytree(src, dst, symlinks=True)
        else:
            shutil.copy2(src, dst)
    except OSError as e:
        raise ReportError(f"cannot copy '{src}' to '{dst}': {e.strerror or e}") from None


def _remove(path):
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)
    except OSError as e:
        raise ReportError(f"cannot remove '{path}': {e.strerror}") from None


class Swap:
    """Replacements staged beside their targets, then put in place."""

    def __init__(self):
        self.staged = []            # (staged path, final path)
        self.gone = []              # final paths to remove, not replaced

    def put(self, src, dst):
        tmp = os.path.join(os.path.dirname(dst), ".overlay-new." + os.path.basename(dst))
        _remove(tmp)
        self.staged.append((tmp, dst))      # abort() removes what came
        _copy(src, tmp)

    def text(self, text, dst):
        tmp = os.path.join(os.path.dirname(dst), ".overlay-new." + os.path.basename(dst))
        try:
            with open(tmp, "w") as f:
                f.write(text)
        except OSError as e:
            raise ReportError(f"cannot write '{tmp}': {e.strerror}") from None
        self.staged.append((tmp, dst))

    def drop(self, path):
        self.gone.append(path)

    def abort(self):
        for tmp, _ in self.staged:
            _remove(tmp)

    def commit(self):
        finals = {d for _, d in self.staged}
        for p in self.gone:
            if p not in finals:
                _remove(p)
        for tmp, dst in self.staged:
            if os.path.isdir(dst) and not os.path.islink(dst):
                _remove(dst)
            try:
                os.replace(tmp, dst)
            except OSError as e:
                raise ReportError(f"cannot rename '{tmp}' to '{dst}': {e.strerror}") from None


def _tsv_row(path, suite):
    for line in read_text(path).splitlines()[1:]:
        if line.split("\t", 1)[0] == suite:
            return line
    return None


def _replace_row(k_tsv, r_tsv, suite):
    """KDIR's suites.tsv with SUITE's row from RERUN's (added if new)."""
    row = _tsv_row(r_tsv, suite)
    if row is None:
        raise ReportError(f"'{r_tsv}': no row for suite '{suite}'")
    lines = read_text(k_tsv).splitlines()
    out, done = lines[:1], False
    for line in lines[1:]:
        if line.split("\t", 1)[0] == suite:
            out.append(row)
            done = True
        else:
            out.append(line)
    if not done:
        out.append(row)
    return "\n".join(out) + "\n"


def _stage_units(swap, k, r):
    for sub in ("", os.path.join("r1", "all")):
        new = sorted(glob.glob(os.path.join(r, "results", sub, "unit-*")))
        if not any(p.endswith(".tap") for p in new):
            continue
        kd = os.path.join(k, "results", sub)
        for old in glob.glob(os.path.join(kd, "unit-*")) + ([os.path.join(kd, "unit.txt")] if not sub else []):
            swap.drop(old)
        for p in new + ([os.path.join(r, "results", "unit.txt")] if not sub else []):
            if os.path.exists(p):
                swap.put(p, os.path.join(kd, os.path.basename(p)))


def _stage_suite(swap, k, r, s):
    """Stage SUITE's replacement; False: RERUN has no results for it."""
    gdir = os.path.join(r, "results", "r1", s)
    hdir = os.path.join(r, "results", "r1", "all")
    if os.path.isdir(gdir):
        swap.put(gdir, os.path.join(k, "results", "r1", s))
        return True
    if os.path.isfile(os.path.join(hdir, s + ".tap")):
        kd = os.path.join(k, "results", "r1", "all")
        for ext in ("tap", "xml", "harness"):
            swap.drop(os.path.join(kd, f"{s}.{ext}"))
            if os.path.exists(os.path.join(hdir, f"{s}.{ext}")):
                swap.put(os.path.join(hdir, f"{s}.{ext}"), os.path.join(kd, f"{s}.{ext}"))
        swap.text(_replace_row(os.path.join(kd, "suites.tsv"), os.path.join(hdir, "suites.tsv"), s),
                  os.path.join(kd, "suites.tsv"))
        return True
    return False


def _keep(k, r, suites):
    """RERUN's own record, in KDIR/reruns/N/; its findings and time added."""
    n = 1
    while os.path.exists(os.path.join(k, "reruns", str(n))):
        n += 1
    keep = os.path.join(k, "reruns", str(n))
    try:
        os.makedirs(keep)
        for f in ("console.log", "kernel-findings.txt", "verdict", "verdict.why", "wall_s", "run.log"):
            if os.path.isfile(os.path.join(r, f)):
                _copy(os.path.join(r, f), os.path.join(keep, f))
        with open(os.path.join(keep, "suites"), "w") as f:
            f.write(" ".join(suites) + "\n")
        found = read_optional(os.path.join(r, "kernel-findings.txt"), "")
        if found:
            with open(os.path.join(k, "kernel-findings.txt"), "a") as f:
                f.write(found + "\n")
        wall = sum(int(read_optional(os.path.join(d, "wall_s"), "0") or 0) for d in (k, r))
        with open(os.path.join(k, "wall_s"), "w") as f:
            f.write(f"{wall}\n")
        if not os.path.exists(os.path.join(k, "verdict.base")):
            _copy(os.path.join(k, "verdict"), os.path.join(k, "verdict.base"))
    except OSError as e:
        raise ReportError(f"'{keep}': {e.strerror}") from None
    except ValueError:
        raise ReportError(f"'{k}/wall_s' or '{r}/wall_s': not a number of seconds") from None


def overlay(k, r, suites, issues):
    """(verdict, why) after putting RERUN's SUITES over KDIR; written.
    Nothing of KDIR changes before every replacement is staged whole."""
    for d in (k, r):
        if not os.path.isfile(os.path.join(d, "verdict")):
            raise ReportError(f"'{d}': no verdict (not a kernel's results)")
    what = " ".join(suites)
    base = read_optional(os.path.join(k, "verdict.base")) or K.stored(k)[0]
    swap = None
    if base == K.INFRA:
        v = (K.INFRA, f"{read_optional(os.path.join(k, 'verdict.why'), '')} (a rerun of {what} does not complete it)")
    elif K.stored(r)[0] == K.INFRA:
        v = (K.INFRA, f"rerun of {what}: {K.stored(r)[1]}")
    else:
        swap, missing = _stage(k, r, suites)
        v = (K.INFRA, f"rerun of {what}: no results for suite '{missing}'") if missing else None
    _keep(k, r, suites)
    if v is None:
        swap.commit()
        v = K.evaluate(K.load(k, issues))
        if v[0] == K.PASS:
            v = (v[0], f"{v[1]} ({what} rerun)")
    K.write(k, *v)
    return v


def _stage(k, r, suites):
    """(Swap with every replacement staged, None), or (None, SUITE) when
    RERUN has no results for SUITE; a failed copy raises, nothing kept."""
    swap = Swap()
    try:
        _stage_units(swap, k, r)
        for s in suites:
            if not _stage_suite(swap, k, r, s):
                swap.abort()
                return None, s
    except ReportError:
        swap.abort()
        raise
    return swap, None
