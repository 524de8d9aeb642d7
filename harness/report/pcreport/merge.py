"""merge OUTDIR PART... — one matrix directory from several, each the
output of harness/kernels/matrix on some of the kernels (the GitHub workflow runs
one job per kernel; ci/github/matrix.yml merges them with this).

OUTDIR gets every PART's kernel directories, one kernels.tsv (the header
once, then the rows in ci/kernels order, others in the PARTs' order),
commit and suites (the PARTs' value, or every distinct value joined by
"; " when they differ: a matrix over mixed commits says so), and wall_s:
the longest PART's, as the parts ran side by side.  Every PART is checked
before anything is written, and everything is built in a scratch
directory inside OUTDIR and moved into place last: an error leaves OUTDIR
as it was.
"""

import os
import shutil
import tempfile

from . import matrix
from .errors import ReportError, read_optional, read_text


def kernel_order(list_path):
    """{name: rank} from a ci/kernels file (empty when it cannot be read)."""
    try:
        text = read_text(list_path)
    except ReportError:
        return {}
    rank = {}
    for line in text.splitlines():
        f = line.split()
        if f and not f[0].startswith("#"):
            rank.setdefault(f[0], len(rank) + 1)
    return rank


def check_parts(parts):
    """[(part, [rows])], or ReportError naming the first bad PART."""
    owner, out = {}, []
    for p in parts:
        if not os.path.isfile(os.path.join(p, "kernels.tsv")):
            raise ReportError(f"'{p}': not a matrix directory (no kernels.tsv)")
        try:
            rows = matrix.read_kernels(p)
        except ReportError:
            raise ReportError(f"'{p}/kernels.tsv': unexpected header (not written by harness/kernels/matrix?)") from None
        for r in rows:
            n = r["name"]
            if not os.path.isdir(os.path.join(p, n)):
                raise ReportError(f"'{p}': kernel '{n}' is listed but has no directory")
            if n in owner:
                raise ReportError(f"kernel '{n}' is in both '{owner[n]}' and '{p}'")
            owner[n] = p
        out.append((p, rows))
    return out


def _distinct(parts, name):
    vals = [read_optional(os.path.join(p, name), "unknown") or "unknown" for p in parts]
    return "; ".join(dict.fromkeys(vals))


def merge(out, parts, kernels_list):
    """Merge PARTS into OUT; returns the number of kernels."""
    checked = check_parts(parts)
    rank = kernel_order(kernels_list)
    rows, k = [], 0
    for p, prow in checked:
        for r in prow:
            k += 1
            rows.append((rank.get(r["name"], 1000 + k), k, p, r))
    rows.sort(key=lambda x: (x[0], x[1]))
    try:
        os.makedirs(out, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".merge.", dir=out)
    except OSError as e:
        raise ReportError(f"'{out}': cannot write: {e.strerror}") from None
    try:
        for _, _, p, r in rows:
            try:
                shutil.copytree(os.path.join(p, r["name"]), os.path.join(tmp, r["name"]), symlinks=True)
            except OSError as e:
                raise ReportError(f"'{p}/{r['name']}': cannot copy: {e.strerror or e}") from None
        wall = 0
        for p, _ in checked:
            w = read_optional(os.path.join(p, "wall_s"), "0") or "0"
            wall = max(wall, int(w)) if w.isdigit() else wall
        with open(os.path.join(tmp, "kernels.tsv"), "w") as f:
            f.write("\t".join(matrix.HEADER) + "\n")
            for _, _, _, r in rows:
                f.write("\t".join(r[h] for h in matrix.HEADER) + "\n")
        for name, text in (("commit", _distinct(parts, "commit")), ("suites", _distinct(parts, "suites")),
                           ("wall_s", str(wall))):
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text + "\n")
        # Into place last, so a failed copy leaves OUTDIR as it was.
        for name in sorted(os.listdir(tmp)):
            dst = os.path.join(out, name)
            if os.path.isdir(dst) and not os.path.islink(dst):
                shutil.rmtree(dst)
            elif os.path.lexists(dst):
                os.remove(dst)
            os.replace(os.path.join(tmp, name), dst)
    except OSError as e:
        raise ReportError(f"'{out}': {e.strerror or e}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return len(rows)
