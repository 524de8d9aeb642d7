"""The checks a built mutant runs, cheapest first, until one fails: the
unit tests (harness/run-unit), then each suite ci/mutate-suites maps its
file to, one run-suites call per suite, and `valgrind` where the map names
it (harness/run-valgrind: leaks and memory errors, which no suite sees).
What failed is decided by the reporting module (pcreport.mutation.judge).
The whole phase runs under the suites' lock (mut_run.SuiteLock), and ends
with the sweep (pcmutate/sweep) of what the tests left on the machine.
"""

import glob
import os
import subprocess
import time

from mut_run import _env, run_bounded
from pcreport import mutation

UNIT_LIMIT = 120        # a unit binary that runs longer is hung


class Checks:
    def __init__(self, tree, issues, lock):
        self.tree, self.issues, self.lock = tree, issues, lock
        self.h = os.path.join(tree.src, "harness")
        self.sweep = os.path.join(self.h, "pcmutate", "sweep")

    def units(self):
        return sorted(p for p in glob.glob(os.path.join(self.tree.build, "unit", "test_*"))
                      if os.access(p, os.X_OK) and "." not in os.path.basename(p))

    def unit(self, res, limit, tag=None):
        os.makedirs(res, exist_ok=True)
        env = _env(PROBECHECK_UNIT_TIMEOUT=int(max(5, min(UNIT_LIMIT, limit))),
                   **({"PC_TAG": tag} if tag else {}))
        st, over = run_bounded([os.path.join(self.h, "run-unit"), res] + self.units(),
                               self.tree.src, env, limit + 15, os.path.join(res, "run-unit.log"))
        if over:
            return "timeout", "unit tests: the mutant's budget ran out"
        v, by = mutation.judge(res, self.issues, units=True)
        if v is None and st != 0:
            return "killed", f"unit tests: run-unit exit status {st} ({_last(res, 'run-unit.log')})"
        return v, by

    def suites(self, names, res, limit):
        """One run-suites call for NAMES; (verdict, by)."""
        os.makedirs(res, exist_ok=True)
        env = _env(PROBECHECK_BUILD=self.tree.build, PROBECHECK_SUITE_TIMEOUT=int(max(15, limit)),
                   BATS_TEST_TIMEOUT=int(max(15, min(300, limit))), **self.lock.env())
        cmd = [os.path.join(self.h, "run-suites"), res] + [
            os.path.join(self.tree.src, "suites", n + ".bats") for n in names]
        # run-suites' own timeout ends a suite, then it cleans up: give it time.
        st, over = run_bounded(cmd, self.tree.src, env, limit + 90, os.path.join(res, "run-suites.log"))
        if over:
            return "timeout", f"suite {names[0]}: the mutant's budget ran out"
        v, by = mutation.judge(res, self.issues, units=False)
        if v is None and st != 0:
            return "killed", f"suite {names[0]}: run-suites exit status {st} ({_last(res, 'run-suites.log')})"
        return v, by

    def valgrind(self, res, limit):
        os.makedirs(res, exist_ok=True)
        env = _env(PROBECHECK_BUILD=self.tree.build, VALGRIND_TIMEOUT=int(max(15, limit)))
        log = os.path.join(res, "run-valgrind.log")
        st, over = run_bounded([os.path.join(self.h, "run-valgrind"), os.path.join(res, "vg")],
                               self.tree.src, env, limit + 15, log)
        if over:
            return "timeout", "valgrind: the mutant's budget ran out"
        if st == 0:
            return None, ""
        bad = [l for l in open(log).read().splitlines()
               if l.startswith("valgrind: ") and ("see " in l or "expected" in l or "status=" in l
                                                   and "errors=0 definitely_lost=0" not in l)]
        return "killed", "valgrind: " + (bad[0][len("valgrind: "):] if bad else f"exit status {st}")

    def run(self, names, res, budget):
        """The unit tests, then each of NAMES ('valgrind' or a suite) until
        one fails or BUDGET seconds are spent: (verdict, by).  Then the
        sweep: anything of ours left on the machine is removed, and kills
        a mutant that passed everything else (the baseline left nothing)."""
        t0 = time.time()
        left = lambda: budget - (time.time() - t0)
        os.makedirs(res, exist_ok=True)
        tag = f"mutate-{os.getpid()}-{os.path.basename(res)}"
        subprocess.run([self.sweep, "snap", res], check=True)
        try:
            v, by, ran = self._checks(names, res, left, tag)
        finally:        # also when we are stopped half way
            sw = subprocess.run([self.sweep, "check", res, tag], stdout=subprocess.PIPE, text=True)
        if sw.returncode == 1 and v is None:
            return "killed", "leftovers after the tests: " + "; ".join(sw.stdout.splitlines())
        if v is None:
            return "survived", "ran: " + " ".join(ran)
        return v, by

    def _checks(self, names, res, left, tag):
        v, by = self.unit(os.path.join(res, "unit"), left(), tag)
        ran = ["unit"]
        for n in names:
            if v is not None:
                break
            if left() <= 0:
                return "timeout", f"the budget ran out before {n}", ran
            if n == "valgrind":
                v, by = self.valgrind(os.path.join(res, n), left())
            else:
                v, by = self.suites([n], os.path.join(res, n), left())
            ran.append(n)
        return v, by, ran


def _last(res, name):
    try:
        lines = [l for l in open(os.path.join(res, name)).read().splitlines() if l.strip()]
    except OSError:
        return "no log"
    return lines[-1][:160] if lines else "no output"
