"""Run one lab's tests against one student file, in a fresh grader process, and return the results.

    result = run_lab(lab, Path("labs/00-demo/lab.py"), visibility=("public",))
    result.points, result.max_points, result.status, result.tests

The grader process is ``pytest -p redis_course.labs.engine.pytest_plugin`` on the lab's test
files from the trusted repository, with an ini file of its own (no addopts, no conftest from
anywhere above the lab), no cache and no plugin autoloading: a fresh fork of the caller's zygote
(:mod:`.zygote`), or a ``python -m pytest`` process where none could start.  It starts the private
Redis and the student's sandboxed process; it is killed with its session if the whole run exceeds
its wall time (SIGTERM: it stops its boxes; SIGKILL three seconds later), and dies when its parent
does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ... import paths
from ..authoring.model import Lab
from ..sandbox import ENV_ISOLATION, make_run_dir
from ..sandbox import cgroups
from ..sandbox import launch as iso
from ..sandbox.limits import WATCH_PERIOD_S, Limits


@dataclass
class TestResult:
    __test__ = False  # not a pytest test class

    name: str
    visibility: str
    points: float
    max_points: float
    outcome: str  # passed | failed | error | skipped | not-run
    hint: str | None = None
    message: str = ""
    event: str | None = None  # timeout | crash | import-error
    duration: float = 0.0

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def counted(self) -> bool:
        return self.outcome != "skipped"

    @property
    def title(self) -> str:
        name = self.name.split("[")[0]
        name = name[5:] if name.startswith("test_") else name
        name = name[:-7] if name.endswith("_hidden") else name
        return name.replace("_", " ")


@dataclass
class LabResult:
    lab: str
    status: str
    tests: list[TestResult] = field(default_factory=list)
    backend: str = ""
    message: str = ""
    output: str = ""
    seconds: float = 0.0

    @property
    def points(self) -> float:
        return sum(t.points for t in self.tests if t.counted)

    @property
    def max_points(self) -> float:
        return sum(t.max_points for t in self.tests if t.counted)

    def to_dict(self) -> dict:
        return {
            "lab": self.lab,
            "status": self.status,
            "backend": self.backend,
            "message": self.message,
            "points": self.points,
            "max_points": self.max_points,
            "seconds": round(self.seconds, 3),
            "tests": [t.__dict__ for t in self.tests],
        }

    @classmethod
    def from_dict(cls, d: dict) -> "LabResult":
        tests = [TestResult(**t) for t in d.get("tests", [])]
        return cls(
            lab=d["lab"],
            status=d["status"],
            tests=tests,
            backend=d.get("backend", ""),
            message=d.get("message", ""),
            seconds=d.get("seconds", 0.0),
        )


INI = "[pytest]\naddopts =\nconsider_namespace_packages = false\n"


def _status(tests: list[TestResult], import_error: str | None) -> str:
    if import_error:
        return "import-error"
    events = {t.event for t in tests}
    if "timeout" in events:
        return "timeout"
    if "crash" in events:
        return "crash"
    return "ok"


def wall_timeout(lab: Lab, limits: Limits, n_tests: int) -> float:
    """The whole run's limit: student code is held to ``lab_budget_s`` by the sandbox; this adds the
    grader's own work (server, collection, a restart or two) and covers a grader that hangs."""
    return 60 + limits.start_timeout_s + limits.lab_budget_s + n_tests * 2


def run_lab(
    lab: Lab,
    source_file: Path | None,
    *,
    visibility: tuple[str, ...] = ("public",),
    backend: str = "auto",
    url: str | None = None,
    limits: Limits | None = None,
    hide: tuple[str, ...] = (),
    run_dir: Path | None = None,
    keep_dir: bool = False,
    keep_log: Path | None = None,
    isolate: bool = True,
    first_failure: bool = False,
) -> LabResult:
    """Grade ``source_file`` (the student's lab.py) with the lab's tests of the given visibilities.

    ``backend``: ``auto`` / ``redis-server`` / ``fakeredis`` (a private server for this run), or
    ``url`` (then ``url`` is used under a fresh key prefix: a student's own REDIS_URL).
    ``keep_log``: where to copy the grader's log (its end, owner-only) when the run does not end ``ok``;
    the copy is made after the run, when no student process is left.  ``isolate=False``: student code
    runs without namespaces (:func:`..sandbox.launch.mode`); the log's first line says how it ran.
    ``first_failure``: stop at the first failing test (pytest ``-x``), for callers that only ask
    whether a file loses points (mutation testing), never for a grade; the known-wrong files
    use :func:`run_variants`.
    """
    started = time.monotonic()
    if source_file is None or not Path(source_file).is_file():
        return LabResult(lab.id, "missing", message="no lab.py for this lab")
    source_file = Path(source_file).resolve()
    limits = limits or Limits(call_timeout_s=lab.timeout_s, lab_budget_s=lab.budget_s)
    files = [str(f) for v in visibility for f in lab.test_files(v)]
    if not files:
        return LabResult(lab.id, "ok", message="this lab has no tests of that kind")
    hide = (str(paths.ROOT), *hide)  # hidden tests, solutions and .git stay out of the child's sight
    own_dir = run_dir is None
    run_dir = make_run_dir() if run_dir is None else run_dir
    results = run_dir / "results.json"
    cfg = {
        "lab_dir": str(lab.path),
        "source_file": str(source_file),
        "run_dir": str(run_dir),
        "results": str(results),
        "limits": limits.to_dict(),
        "backend": "url" if url else backend,
        "url": url or "",
        "hide": [str(h) for h in hide],
    }
    _private_write(run_dir / "run.json", json.dumps(cfg))  # hidden-test names: the grader's eyes only
    _private_write(run_dir / "pytest.ini", INI)
    mode = iso.mode(isolate)
    log = run_dir / "pytest.log"
    returncode = _run_pytest(
        _pytest_command(lab, run_dir, files, first_failure),
        run_dir,
        log,
        mode,
        first_line=describe(mode, limits),
        timeout=wall_timeout(lab, limits, len(files) * TESTS_PER_FILE_ESTIMATE),
    )
    result = _read_results(lab, results, log, timed_out=returncode is None)
    if returncode not in (None, 0, 1) and result.status == "ok":
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:] if log.exists() else ""
        result.status, result.message = "grader-error", f"pytest exit code {returncode}\n{tail}"
    result.seconds = time.monotonic() - started
    if keep_log is not None and result.status != "ok":
        _keep_log(log, keep_log)
    if own_dir and not keep_dir:
        shutil.rmtree(run_dir, ignore_errors=True)
    return result


def run_variants(
    lab: Lab,
    files: list[tuple[Path, tuple[str, ...]]],
    *,
    backend: str = "auto",
    visibility: tuple[str, ...] = ("public", "hidden"),
    limits: Limits | None = None,
    isolate: bool = True,
) -> list[LabResult]:
    """Whether each of ``files`` (the course's own known-wrong files or mutants, never a student's:
    they share one grader process) loses points: one grader process and one private server for all,
    each file in the one box emptied before it as between two tests (its processes killed, its
    folders emptied, its source replaced), the server reset before each test, and each file's
    run stopping at its first failing test, its ``(path, first_tests)`` names first.  One result per
    file, in order, as :func:`run_lab` with ``first_failure`` gives it."""
    started = time.monotonic()
    limits = limits or Limits(call_timeout_s=lab.timeout_s)
    tests = [str(f) for v in visibility for f in lab.test_files(v)]
    if not files or not tests:
        return [LabResult(lab.id, "ok", message="this lab has no tests of that kind") for _ in files]
    run_dir = make_run_dir()
    try:
        variants = [
            {
                "source_file": str(Path(p).resolve()),
                "results": str(run_dir / f"results-{i}.json"),
                "first_tests": list(first),
            }
            for i, (p, first) in enumerate(files)
        ]
        cfg = {
            "lab_dir": str(lab.path),
            "source_file": variants[0]["source_file"],
            "run_dir": str(run_dir),
            "results": variants[0]["results"],
            "limits": limits.to_dict(),
            "backend": backend,
            "url": "",
            "hide": [str(paths.ROOT)],
            "variants": variants,
        }
        _private_write(run_dir / "run.json", json.dumps(cfg))
        _private_write(run_dir / "pytest.ini", INI)
        mode = iso.mode(isolate)
        log = run_dir / "pytest.log"
        wall = wall_timeout(lab, limits, len(tests) * TESTS_PER_FILE_ESTIMATE) * len(files)
        returncode = _run_pytest(
            _pytest_command(lab, run_dir, tests, first_failure=False),
            run_dir,
            log,
            mode,
            first_line=describe(mode, limits),
            timeout=wall,
        )
        out = []
        for v in variants:
            result = _read_results(lab, Path(v["results"]), log, timed_out=returncode is None)
            if returncode not in (None, 0, 1) and result.status == "ok":
                result.status, result.message = "grader-error", f"pytest exit code {returncode}"
            result.seconds = (time.monotonic() - started) / len(files)
            out.append(result)
        return out
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


# wall_timeout() allows two seconds of grader work per test; a lab's test file holds about this many
TESTS_PER_FILE_ESTIMATE = 10


def _pytest_command(lab: Lab, run_dir: Path, files: list[str], first_failure: bool) -> list[str]:
    """The grader's pytest arguments: the course's plugin, the run's own ini, no cache, no plugin from elsewhere."""
    return [
        "-p",
        "redis_course.labs.engine.pytest_plugin",
        "-p",
        "no:cacheprovider",
        "-c",
        str(run_dir / "pytest.ini"),
        "--rootdir",
        str(lab.path),
        "--confcutdir",
        str(lab.path),
        "--import-mode=importlib",
        "-q",
        "--no-header",
        "-p",
        "no:randomly",
        *(["-x"] if first_failure else []),
        *files,
    ]


_running: set[int] = set()  # the graders running now (each the leader of its own session)
_running_lock = threading.Lock()


def running_graders() -> list[int]:
    """The grader processes this process runs now (each the leader of its own session)."""
    with _running_lock:
        return sorted(_running)


def _run_pytest(args: list[str], run_dir: Path, log: Path, mode: str, *, first_line: str, timeout: float) -> int | None:
    """Run one grader: ``pytest args`` forked from the caller's zygote (:mod:`.zygote`; one of its own
    when it has none and runs in the main thread), else a plain ``python -m pytest`` process; its
    output into ``log`` (owner-only) after ``first_line``.  Its exit code, or None when it ran out of
    ``timeout`` and was killed with its whole session."""
    from . import zygote as zy

    z = zy.active()
    if z is None and threading.current_thread() is threading.main_thread():
        with zy.zygote():
            return _run_pytest(args, run_dir, log, mode, first_line=first_line, timeout=timeout)
    forked = z is not None and z.usable
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COURSE_LAB_"))}
    env.update(
        COURSE_LAB_RUN=str(run_dir / "run.json"),
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        PYTHONDONTWRITEBYTECODE="1",
        **{ENV_ISOLATION: mode},
        COURSE_LAB_PARENT=str(z.pid if forked else os.getpid()),
    )  # the grader dies with it
    if not forked:
        why = (z.error or "the zygote ended") if z is not None else "no zygote: not called from the main thread"
        first_line += f"; grader: a python process of its own ({why})"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(f"{first_line}\n".encode())
        out.flush()
        if forked:
            pid: list[int] = []

            def started(p: int) -> None:
                pid.append(p)
                with _running_lock:
                    _running.add(p)

            try:
                return z.run(args, env, str(run_dir), str(log), timeout, started=started)
            finally:
                with _running_lock:
                    _running.difference_update(pid)
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=run_dir,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            umask=0o077,
        )  # results.json and the rest: the grader's only
        with _running_lock:
            _running.add(proc.pid)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _killpg(proc)
            return None
        finally:
            with _running_lock:
                _running.discard(proc.pid)


def describe(mode: str, limits: Limits) -> str:
    """The grading log's first line: how student code was isolated and limited."""
    cg = cgroups.cgroup_version()
    how = (
        f"cgroup {cg} for the box (memory {limits.memory_mb} MiB and its Redis's, {limits.nproc} processes, one CPU) "
        "and rlimits"
        if cg
        else f"no writable cgroup: rlimits (address space {limits.memory_mb} MiB per process, "
        f"{limits.nproc} processes) and the grader's memory watchdog (the box's processes "
        f"together {limits.memory_mb} MiB resident and in kernel buffers, checked at least every "
        f"{WATCH_PERIOD_S:g} s and more often near the limit)"
    )
    scratch = f", writable space tmpfs {limits.tmp_mb} MiB" if mode != "none" else ""
    return (
        f"isolation: {iso.describe_mode(mode)}; limits: {how}, CPU {limits.cpu_s:g} s{scratch}; "
        f"time: {limits.call_timeout_s:g} s per call, {limits.lab_budget_s:g} s for the lab"
    )


def _private_write(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def _keep_log(log: Path, dest: Path, limit: int = 1 << 20) -> None:
    dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = log.read_bytes()[-limit:] if log.exists() else b""
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _killpg(proc: subprocess.Popen) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(3)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(5)


def _read_results(lab: Lab, results: Path, log: Path, timed_out: bool) -> LabResult:
    try:
        data = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:] if log.exists() else ""
        return LabResult(
            lab.id, "timeout" if timed_out else "grader-error", message=f"the grader produced no results\n{tail}"
        )
    tests = [
        TestResult(
            name=t["name"],
            visibility=t["visibility"],
            points=float(t["points"]),
            max_points=float(t["max_points"]),
            outcome=t["outcome"],
            hint=t.get("hint"),
            message=t.get("message", ""),
            event=t.get("event"),
            duration=t.get("duration", 0.0),
        )
        for t in data.get("tests", [])
    ]
    if timed_out:
        for t in tests:
            if t.outcome == "not-run":
                t.outcome, t.event, t.message = "failed", "timeout", "the lab's time limit ran out"
    status = "timeout" if timed_out else _status(tests, data.get("import_error"))
    return LabResult(
        lab.id,
        status,
        tests,
        backend=data.get("backend", ""),
        message=data.get("import_error") or "",
        output=data.get("output", ""),
    )
