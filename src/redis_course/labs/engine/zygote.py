"""The grader zygote: one process with pytest, the plugin, redis and hypothesis imported, of which
every grader process is a fresh fork.

    with zygote():                      # grade(), check, a caller of run_variants: from the main thread
        run_lab(...)                    # each grader run forks a clean copy (:func:`.runner._run_pytest`)

It is the standard library's ``multiprocessing`` fork server, preloaded with :data:`PRELOAD`.  Chosen
rather than fork code of the course's own: the runner is threaded (``grade`` runs labs on a thread
pool) and a fork of a threaded process copies locks other threads held; the fork server is a process
of its own, started by exec from the runner's main thread, single-threaded, that forks on request
from any thread over a socket, waits for its children itself and sends back their exit codes, and
ends when its runner does (the end of its "alive" pipe closes) -- all of which the standard library
already does and tests.

Each grader is forked by the zygote and before anything else (:func:`_grader`) takes PDEATHSIG
SIGKILL towards it, drops the zygote's descriptors, makes a session of its own, umask 077, its run
folder as cwd, exactly the environment the runner built (nothing of the zygote's), and its output
into the run's log, then runs ``pytest.main``.  No student code runs in the zygote or in a grader:
it runs in the box (:mod:`..sandbox.box`).

Nothing outlives its runner, without any signal handler of Python: the runner ends (SIGTERM, SIGKILL
or a normal exit) → the zygote's PDEATHSIG (SIGKILL, from the runner's main thread, which lives as
long as the runner) and its alive pipe end it → every grader's PDEATHSIG kills it → each box dies
with its grader (its launcher's PDEATHSIG, bubblewrap's ``--die-with-parent``; the box's processes,
its redis-server or fakeredis server are inside).  What the dead cannot clean (run folders, cgroup
folders) :func:`..sandbox.sweep` removes at the next zygote's start.

Where the fork server cannot start (no main thread, no fork server on this system), the grader is a
plain ``python -m pytest`` process, as before, and the log's first line says why.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
from contextlib import contextmanager
from multiprocessing import context, forkserver, popen_forkserver, resource_tracker, util
from multiprocessing.context import reduction, set_spawning_popen
from typing import Iterator

#: What the zygote imports once: everything a grader needs before its first test.
PRELOAD = [
    "redis_course.labs.engine.zygote",
    "pytest",
    "_pytest.python",
    "_pytest.fixtures",
    "_pytest.main",
    "_pytest.assertion.rewrite",
    "_pytest.junitxml",
    "_pytest.terminal",
    "_pytest.logging",
    "_pytest.capture",
    "_pytest.skipping",
    "redis",
    "hypothesis",
    "redis_course.labs.engine.pytest_plugin",
    "redis_course.labs.engine.testing",
    "redis_course.labs.authoring.model",
    "redis_course.core.backend",
    "redis_course.labs.sandbox.faultproxy",
    "redis_course.labs.sandbox.inbox",
    "redis_course.labs.sandbox.fakeserver",
    "redis_course.labs.engine.modeltest",
    "hypothesis.stateful",
    "pdb",
    "email.parser",
]

START_TIMEOUT_S = 60.0  # the zygote's imports on a loaded machine
PR_SET_PDEATHSIG = 1


def _prctl_pdeathsig(sig: int) -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


def _in_zygote() -> bool:
    """This process is the fork server (its command line is the one the standard library gives it)."""
    return any(a.startswith("from multiprocessing.forkserver import main") for a in getattr(sys, "orig_argv", ()))


if _in_zygote() and os.environ.get("COURSE_ZYGOTE_PARENT"):
    # the first module the zygote imports: it dies with the runner's main thread that started it
    _prctl_pdeathsig(signal.SIGKILL)
    if str(os.getppid()) != os.environ["COURSE_ZYGOTE_PARENT"]:
        os._exit(137)
    sys.dont_write_bytecode = True


class ZygoteError(RuntimeError):
    """The fork server could not be started or answer."""


def _grader(args: list[str], env: dict[str, str], cwd: str, log: str, zygote_pid: int) -> None:
    """A grader process, forked by the zygote: its settings, then ``pytest.main(args)``; exits with its code."""
    _prctl_pdeathsig(signal.SIGKILL)
    if os.getppid() != zygote_pid:  # the zygote (and so the runner) ended before the line above
        os._exit(137)
    # the zygote's alive pipe and the resource tracker's: held by the runner alone, so that the
    # zygote sees its runner end whatever graders still run
    for fd in (forkserver._forkserver._forkserver_alive_fd, resource_tracker._resource_tracker._fd):
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
    forkserver._forkserver._forkserver_alive_fd = None
    resource_tracker._resource_tracker._fd = None
    os.setsid()
    os.umask(0o077)  # results.json and the rest: the grader's only
    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.dont_write_bytecode = True
    sys.argv = ["pytest", *args]
    import pytest

    code = pytest.main(args)
    sys.exit(int(code))


def _probe(expect: list[str]) -> None:
    """The zygote's first fork: it imported what it should and had no other thread when it forked."""
    tasks = os.listdir(f"/proc/{os.getppid()}/task") if os.path.isdir("/proc") else ["1"]
    missing = [m for m in expect if m not in sys.modules]
    os._exit(0 if len(tasks) == 1 and not missing else 3 if missing else 4)


class Zygote:
    """The fork server of one caller: :meth:`start` (main thread), :meth:`run` (any thread), :meth:`stop`."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.error: str | None = None
        self._ctx = None
        self._tracker = False  # the resource tracker ensure_running() starts was started for us

    def start(self) -> "Zygote":
        from ..sandbox import sweep

        sweep()  # what the runs of a dead runner left
        if threading.current_thread() is not threading.main_thread():
            self.error = "not started from the main thread"
            return self
        try:
            import multiprocessing

            if forkserver._forkserver._forkserver_pid is not None:
                raise ZygoteError("a fork server of this process is already running")
            self._ctx = multiprocessing.get_context("forkserver")
            self._ctx.set_forkserver_preload(PRELOAD)
            self._tracker = resource_tracker._resource_tracker._fd is None
            os.environ["COURSE_ZYGOTE_PARENT"] = str(os.getpid())  # read by the zygote's first import
            try:
                forkserver.ensure_running()
            finally:
                os.environ.pop("COURSE_ZYGOTE_PARENT", None)
            self.pid = forkserver._forkserver._forkserver_pid
            probe = self._process(_probe, (["pytest", "redis_course.labs.engine.pytest_plugin"],))
            probe.start()
            probe.join(START_TIMEOUT_S)
            code = probe.exitcode
            if code is None:
                probe.kill()
                probe.join(5)
            probe.close()
            if code != 0:
                raise ZygoteError(
                    {None: "it did not fork in time", 3: "its imports failed", 4: "it had a thread when it forked"}.get(
                        code, f"its first fork ended {code}"
                    )
                )
        except Exception as exc:  # noqa: BLE001 - the grader then runs as a plain process, said in its log
            self.error = f"the zygote could not start: {exc}"
            self.stop()
        return self

    @property
    def usable(self) -> bool:
        if self.pid is None or self.error:
            return False
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except (OSError, IndexError):
            return False

    def _process(self, target, args: tuple) -> "_GraderProcess":
        return _GraderProcess(target=target, args=args, name="course-grader", daemon=True)

    def run(self, args: list[str], env: dict[str, str], cwd: str, log: str, timeout: float, started=None) -> int | None:
        """One grader: its exit code (negative: the signal), or None when it ran out of ``timeout``
        and was killed with its whole session (SIGTERM, SIGKILL three seconds later).  ``started(pid)``
        is called once it runs."""
        proc = self._process(_grader, (list(args), dict(env), str(cwd), str(log), self.pid))
        proc.start()
        if started is not None:
            started(proc.pid)
        try:
            proc.join(timeout)
            if proc.exitcode is None:
                _kill_session(proc.pid, signal.SIGTERM)
                proc.join(3)
                if proc.exitcode is None:
                    _kill_session(proc.pid, signal.SIGKILL)
                    proc.join(5)
                return None
            return proc.exitcode
        finally:
            if proc.exitcode is not None:
                proc.close()

    def stop(self) -> None:
        """The zygote ends (its alive pipe closed) and is waited for: its CPU counts as its runner's
        children's.  So does the resource tracker the standard library started with it."""
        if self.pid is not None:
            try:
                forkserver._forkserver._stop()
            except (OSError, ChildProcessError):
                forkserver._forkserver._forkserver_pid = None
            self.pid = None
        if self._tracker:
            self._tracker = False
            try:
                resource_tracker._resource_tracker._stop()
            except (OSError, ChildProcessError):
                pass


class _GraderPopen(popen_forkserver.Popen):
    def _launch(self, process_obj):
        # popen_forkserver's own, with only what the child needs: not the runner's __main__, argv or
        # cwd (spawn.get_preparation_data would have the child import the runner's main module)
        prep = {"name": process_obj.name, "sys_path": list(sys.path)}
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        _parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _GraderProcess(context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj):
        return _GraderPopen(process_obj)


def _kill_session(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:  # not yet its own session
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


_active: Zygote | None = None
_depth = 0
_lock = threading.Lock()


def active() -> Zygote | None:
    """The zygote of the running caller, if any."""
    return _active


@contextmanager
def zygote() -> Iterator[Zygote]:
    """A zygote for the runs inside (the one already running, when nested)."""
    global _active, _depth
    with _lock:
        if _active is None:
            _active = Zygote().start()
        _depth += 1
        z = _active
    try:
        yield z
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _active = None
                z.stop()
