"""Building and testing mutants in a scratch tree.

OUT/src is a copy of what the build and the tests read (providers,
harness, suites, fixtures, ci, Makefile; copied with their times, so an
existing OUT/build stays valid for unchanged files) and OUT/build its
build, made once.  Every file of OUT/build except fixtures/ is then kept
in OUT/pristine with its time.  A mutant is written over its source file,
its object is made first (a compile error: stillborn; a new type warning
on the mutated line, i.e. a swap of arguments of different types:
stillborn too; an object equal to the original's once debug info and BTF
are dropped: same-code, nothing to test), then `make all` (the object, the
links and the unit tests; nothing else depends on providers/).  Afterwards
the source gets its text and time back and every build file that changed
is copied back from OUT/pristine, so the next mutant starts from the
original build without rebuilding it; fixtures/ must not have changed.

A file OUT/build/.mutant marks a mutant in place: a run that died then
leaves it, and the next run rebuilds from scratch.
"""

import fcntl
import os
import re
import shutil
import signal
import subprocess
import time



def copied(root):
    """The checkout as structure.bats' copy_tree takes it: every entry but
    build output and .git, with .ci.  A list of named parts missed one
    each time a check read another file (docs/, then .ci/ for
    checklists-suite's copy), and each stopped a fresh seed at the
    baseline."""
    return [n for n in sorted(os.listdir(root))
            if not n.startswith("build") and (not n.startswith(".") or n == ".ci")]

TYPE_WARNINGS = re.compile(r"warning: .*\[-W(incompatible-pointer-types|int-conversion|"
                           r"discarded-qualifiers|int-to-pointer-cast|pointer-to-int-cast|"
                           r"incompatible-pointer-types-discards-qualifiers|"
                           r"incompatible-function-pointer-types)\]")


class BuildError(Exception):
    pass


def _env(**extra):
    """Our environment without make's own variables: a sub-make of `make
    mutate` must not inherit its jobserver or command-line variables."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "O")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _files(top, skip=()):
    """{relative path: (mtime_ns, size)} of every file under TOP."""
    out = {}
    for d, dirs, files in os.walk(top):
        rel = os.path.relpath(d, top)
        dirs[:] = [x for x in dirs if os.path.normpath(os.path.join(rel, x)) not in skip]
        for f in files:
            st = os.stat(os.path.join(d, f))
            out[os.path.normpath(os.path.join(rel, f))] = (st.st_mtime_ns, st.st_size)
    return out


class Tree:
    """NAME: the build directory under OUT ("build"; "build-san" for the
    sanitizer build of the same OUT/src, made with MAKE_VARS)."""

    def __init__(self, root, out, log, name="build", make_vars=()):
        self.root, self.out, self.log = root, out, log
        self.src = os.path.join(out, "src")
        self.build = os.path.join(out, name)
        self.keep = os.path.join(out, "pristine" if name == "build" else name + "-pristine")
        self.vars = list(make_vars)
        self.marker = os.path.join(self.build, ".mutant")
        self.snap, self.fixtures, self.stripped = {}, {}, {}

    # ---- the scratch tree ------------------------------------------------
    def prepare(self, copy=True):
        """COPY: OUT/src from the checkout first (the primary tree; a
        second tree builds the same copy)."""
        if os.path.exists(self.marker):
            self.log("mutate: a mutant was left in place by an earlier run: rebuilding from scratch")
            shutil.rmtree(self.build)
        if copy:
            self._copy()
        t = time.time()
        st, out = self.make("all")
        if st:
            raise BuildError(f"the unmutated copy does not build ({' '.join(self.vars) or 'plain'}):\n"
                             f"{out[-3000:]}")
        self.log(f"mutate: built {self.build} ({time.time() - t:.0f}s)")
        self.snap = _files(self.build, skip=("fixtures",))
        self.fixtures = _files(os.path.join(self.build, "fixtures"))
        shutil.rmtree(self.keep, ignore_errors=True)
        for rel in self.snap:
            os.makedirs(os.path.dirname(os.path.join(self.keep, rel)), exist_ok=True)
            shutil.copy2(os.path.join(self.build, rel), os.path.join(self.keep, rel))

    def _copy(self):
        shutil.rmtree(self.src, ignore_errors=True)
        os.makedirs(self.src)
        for name in copied(self.root):
            a, b = os.path.join(self.root, name), os.path.join(self.src, name)
            if os.path.isdir(a):
                shutil.copytree(a, b, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(a, b)

    def make(self, target):
        """make TARGET in the scratch tree: (status, output).  Its own
        session: stopped half way, every compiler it started is gone
        before the build is restored (a straggler would write a mutant's
        object after the restore)."""
        p = subprocess.Popen(["make", "-C", self.src, f"O={self.build}", "NO_INSTALL=1"] + self.vars + [target],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=_env(), start_new_session=True)
        try:
            out = p.communicate()[0]
        except BaseException:
            _end_session(p)
            raise
        return p.returncode, out

    def object_of(self, file):
        """The build file FILE (providers/...) compiles into."""
        if file.endswith(".bpf.c"):
            return os.path.join(self.build, "bpf", os.path.basename(file)[:-2] + ".o")
        return os.path.join(self.build, file[:-2] + ".o")

    # ---- one mutant ------------------------------------------------------
    def apply(self, c, text):
        """Write mutant C over its file (TEXT: the file's original text)."""
        with open(self.marker, "w") as f:
            f.write(c.id + "\n")
        with open(os.path.join(self.src, c.file), "w") as f:
            f.write(text[:c.off] + c.repl + text[c.off + len(c.orig):])

    def build_mutant(self, c):
        """('built' | 'stillborn' | 'same-code', detail)."""
        obj = self.object_of(c.file)
        st, out = self.make(obj)
        if st:
            return "stillborn", _first_error(out)
        w = [l for l in out.splitlines()
             if TYPE_WARNINGS.search(l) and f"{os.path.basename(c.file)}:{c.line}:" in l]
        if w:
            return "stillborn", "ill-typed: " + w[0].split("warning: ", 1)[1]
        if self._same_code(c.file, obj):
            return "same-code", "object identical without debug info"
        st, out = self.make("all")
        if st:
            return "stillborn", _first_error(out)
        return "built", ""

    def _strip(self, obj, dest):
        if obj.endswith(".bpf.o"):
            cmd = ["llvm-objcopy"] + [f"--remove-section={s}" for s in
                                      (".BTF", ".BTF.ext", ".rel.BTF", ".rel.BTF.ext")]
        else:
            cmd = ["objcopy", "--strip-debug"]
        subprocess.run(cmd + [obj, dest], check=True)
        with open(dest, "rb") as f:
            return f.read()

    def _same_code(self, file, obj):
        """Is OBJ (the mutant's) the original's, once line info is gone?
        BTF goes too for BPF: its line records quote the source text."""
        tmp = os.path.join(self.out, "strip.o")
        rel = os.path.relpath(obj, self.build)
        if rel not in self.stripped:
            self.stripped[rel] = self._strip(os.path.join(self.keep, rel), tmp)
        return self._strip(obj, tmp) == self.stripped[rel]

    def build_again(self, c):
        """The mutant already written to OUT/src (by the primary tree),
        built here too: '' or the first error."""
        with open(self.marker, "w") as f:
            f.write(c.id + "\n")
        st, out = self.make("all")
        return _first_error(out) if st else ""

    def restore(self, c, text, mtime):
        """The original file and build back (see the top of this file)."""
        path = os.path.join(self.src, c.file)
        with open(path, "w") as f:
            f.write(text)
        os.utime(path, ns=(mtime, mtime))
        self.restore_build(c)

    def restore_build(self, c):
        if not os.path.exists(self.marker):
            return          # this tree never built the mutant
        now = _files(self.build, skip=("fixtures",))
        for rel, st in now.items():
            if rel == ".mutant":
                continue
            if rel not in self.snap:
                os.unlink(os.path.join(self.build, rel))
            elif st != self.snap[rel]:
                shutil.copy2(os.path.join(self.keep, rel), os.path.join(self.build, rel))
        for rel in self.snap.keys() - now.keys():
            shutil.copy2(os.path.join(self.keep, rel), os.path.join(self.build, rel))
        if _files(os.path.join(self.build, "fixtures")) != self.fixtures:
            raise BuildError(f"mutant {c.id} rebuilt fixtures/: the Makefile's fixtures now "
                             "depend on providers/, restoring no longer resets the build")
        os.unlink(self.marker)


def _first_error(out):
    for l in out.splitlines():
        if "error" in l.lower():
            return l.strip()[:200]
    return (out.strip().splitlines() or ["make failed"])[-1][:200]


# ---- the machine-wide lock ------------------------------------------------
class SuiteLock:
    """harness/run/run-suites' lock (/run/lock/probecheck-suites), held around
    a mutant's whole test phase: test_session and the suites attach
    uprobes, and a run of someone else's suites must not see ours.  Our
    run-suites calls are told the lock is held (PROBECHECK_SUITES_LOCKED)."""

    def __init__(self, log):
        self.path = os.environ.get("PROBECHECK_SUITES_LOCK", "/run/lock/probecheck-suites")
        self.log, self.fd = log, None

    def __enter__(self):
        if not os.path.isdir(os.path.dirname(self.path)):
            return self
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.log(f"mutate: another run of the suites holds {self.path}: waiting for it to end")
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def env(self):
        return {"PROBECHECK_SUITES_LOCKED": self.path} if self.fd is not None else {}


# ---- running tests --------------------------------------------------------
def run_bounded(cmd, cwd, env, limit, logpath):
    """Run CMD (its own session) for at most LIMIT seconds; output to
    LOGPATH.  Returns (status, timed_out).  At the limit the session gets
    SIGTERM, then SIGKILL 10 s later."""
    with open(logpath, "w") as log:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            st = p.wait(timeout=max(1, limit))
        except subprocess.TimeoutExpired:
            _end_session(p)
            return None, True
        except BaseException:       # we are being stopped: so is the check
            _end_session(p)
            raise
        # What the check left running (a unit binary past run-unit's
        # end) would hold the build's files: restoring them failed with
        # "Text file busy" in draw s7-20261128-i.
        _kill_session(p.pid)
        return st, False


def _end_session(p):
    """Stop P's session (its process group): SIGTERM, SIGKILL 10 s later
    at the latest, then wait until none of it is left."""
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    for _ in range(200):        # its zombie leader is a member until reaped
        p.poll()
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    p.wait()
    _kill_session(p.pid)


def _session_members(sid):
    """Pids of live (not zombie) processes of session SID."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue        # gone meanwhile
        if rest[0] != "Z" and int(rest[3]) == sid:
            out.append(int(d))
    return out


def _kill_session(sid):
    """SIGKILL every process of session SID until none is left (10 s at
    most).  killpg is not enough: timeout(1), which run-unit and the
    suites run each binary under, puts itself and its child in a process
    group of their own, inside the session."""
    for _ in range(200):
        pids = _session_members(sid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    raise BuildError(f"processes {_session_members(sid)} of a check (session {sid}) survive SIGKILL")
