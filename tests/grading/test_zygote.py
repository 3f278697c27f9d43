"""The grader zygote and the end of a grading: every grader is a clean fork that sees only the
environment the runner built, and nothing a grading started outlives it, however it is killed.

The cascade tests start ``course grade`` on a few submissions in a process of its own, kill it
(SIGTERM, then SIGKILL) while its graders run, and look through /proc: within seconds no process of
that grading is left (found by a marker in the environment of the grading, the zygote and the
graders, and by ancestry and cgroup for the boxes below them, whose environment is empty); the next
grading sweeps the folders and cgroups the dead could not remove.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from gradeproc import grade_command, marked

from redis_course.labs.authoring.model import find_lab
from redis_course.labs.engine import zygote as zy
from redis_course.labs.sandbox import _run_base, launch, make_run_dir
from redis_course.core.servers import redis_server_binary

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")

LAB = find_lab("00")


def test_a_grader_is_a_fresh_fork_with_only_the_runners_environment(tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import json, os, sys\n"
        "def test_env():\n"
        "    json.dump({'env': dict(os.environ), 'umask': os.umask(0o077), 'cwd': os.getcwd(),\n"
        "               'sid': os.getsid(0) == os.getpid(), 'ppid': os.getppid(),\n"
        "               'bytecode': sys.dont_write_bytecode, 'pid': os.getpid(),\n"
        "               'marker': os.environ.get('ZYGOTE_TEST_LEAK')},\n"
        "              open(os.environ['PROBE_OUT'], 'w'))\n"
    )
    log = tmp_path / "log"
    log.write_bytes(b"first line\n")
    os.environ["ZYGOTE_TEST_LEAK"] = "the zygote's"  # in the zygote's environment, not in the grader's
    try:
        with zy.zygote() as z:
            assert z.error is None and z.usable
            env = {"PROBE_OUT": str(tmp_path / "out.json"), "PATH": os.environ.get("PATH", "")}
            codes = [
                z.run(
                    ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--rootdir", str(tmp_path), str(probe)],
                    env,
                    str(tmp_path),
                    str(log),
                    timeout=60,
                )
                for _ in range(2)
            ]
            seen = json.loads((tmp_path / "out.json").read_text())
            zygote_pid = z.pid
    finally:
        del os.environ["ZYGOTE_TEST_LEAK"]
    assert codes == [0, 0], log.read_text()
    own = {k: v for k, v in seen["env"].items() if not k.startswith("PYTEST_")}  # pytest's own
    assert own == env and seen["marker"] is None
    assert seen["umask"] == 0o077 and seen["cwd"] == str(tmp_path) and seen["sid"] and seen["bytecode"]
    assert seen["ppid"] == zygote_pid != os.getpid()
    assert log.read_text().startswith("first line\n") and "passed" in log.read_text()
    assert not Path(f"/proc/{zygote_pid}").exists()


def test_the_zygote_ends_with_its_caller_and_is_waited_for():
    with zy.zygote() as z:
        pid = z.pid
        with zy.zygote() as inner:  # nested callers share one
            assert inner is z
    assert zy.active() is None
    assert not Path(f"/proc/{pid}").exists()
    kids = [int(x) for t in Path("/proc/self/task").iterdir() for x in (t / "children").read_text().split()]
    assert not [k for k in kids if b"from multiprocessing." in _cmdline(k) and _state(k) != "Z"]  # nor its tracker


def test_without_a_zygote_a_grader_is_a_process_of_its_own_and_its_log_says_why(tmp_path):
    import threading

    from redis_course.labs.engine.runner import run_lab

    run_dir, out = make_run_dir(), {}
    try:
        thread = threading.Thread(
            target=lambda: out.update(
                r=run_lab(LAB, LAB.solution_file, run_dir=run_dir, keep_dir=True, backend="fakeredis")
            )
        )
        thread.start()  # not the main thread: no zygote can be started for it
        thread.join(300)
        first = (run_dir / "pytest.log").read_text().splitlines()[0]
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    assert out["r"].status == "ok" and out["r"].points == out["r"].max_points
    assert first.endswith("; grader: a python process of its own (no zygote: not called from the main thread)")


def test_the_wall_timeout_still_stops_a_forked_grader_with_sigterm(tmp_path, monkeypatch):
    """The runner's own wall time: SIGTERM to the grader's session, whose handler stops its boxes
    (their folders removed: a SIGKILL would have left them), then the run is a timeout."""
    from redis_course.labs.engine import runner

    monkeypatch.setattr(runner, "wall_timeout", lambda *a: 4.0)
    source = tmp_path / "lab.py"
    source.write_text(LAB.solution_file.read_text() + SLOW)
    run_dir = make_run_dir()
    try:
        with zy.zygote() as z:
            assert z.usable
            started = time.monotonic()
            result = runner.run_lab(
                LAB, source, visibility=("public", "hidden"), run_dir=run_dir, keep_dir=True, backend="fakeredis"
            )
            took = time.monotonic() - started
        boxes = list(run_dir.glob("box-*"))
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    assert result.status == "timeout" and took < 4 + 3 + 5
    assert not boxes, "the grader did not stop its boxes on SIGTERM"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def _table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, start time) of every process."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        out[int(stat.parent.name)] = (int(fields[1]), fields[19])
    return out


def _alive(procs: dict[int, str]) -> list[int]:
    """Those of ``procs`` (pid -> start time) still there (the same process, not a reused pid; zombies count as gone)."""
    now = _table()
    return [p for p, start in procs.items() if p in now and now[p][1] == start and _state(p) not in ("Z", "X", "")]


def _in_cgroups_of(pids: set[int]) -> list[int]:
    """Processes in a box cgroup of one of ``pids`` (graders)."""
    names = tuple(f"course-grade/box-{p}-" for p in pids)
    found = []
    for cg in Path("/proc").glob("[0-9]*/cgroup"):
        try:
            if any(n in cg.read_text() for n in names):
                found.append(int(cg.parent.name))
        except OSError:
            continue
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _grading(subs: Path, out: Path, backend: str, isolate: bool, marker: str) -> subprocess.Popen:
    env = dict(os.environ, COURSE_LANG="en", COURSE_TEST_MARK=marker)
    cmd = grade_command(subs, out, "--backend", backend, *([] if isolate else ["--no-isolation"]))
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


#: Appended to the solution: each call sleeps first, so a grader runs far longer than the seconds a
#: test allows the cascade (a grader that merely finished its run proves nothing).
SLOW = """
import functools as _functools, time as _time
for _name, _fn in list(globals().items()):
    if callable(_fn) and not _name.startswith("_") and getattr(_fn, "__module__", None) == __name__:
        globals()[_name] = (lambda fn: _functools.wraps(fn)(lambda *a, **k: (_time.sleep(30), fn(*a, **k))[1]))(_fn)
"""


def _submissions(folder: Path, n: int, slow: bool = True) -> Path:
    for i in range(n):
        d = folder / f"s{i}" / LAB.path.name
        d.mkdir(parents=True)
        (d / "lab.py").write_text(LAB.solution_file.read_text() + (SLOW if slow else ""))
    return folder


ISOLATION = [
    pytest.param(
        True,
        id="bwrap",
        marks=pytest.mark.skipif(launch.mode() != "bwrap", reason="bubblewrap cannot make namespaces here"),
    ),
    pytest.param(False, id="no-isolation"),
]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["redis-server", "fakeredis"])
@pytest.mark.parametrize("isolate", ISOLATION)
def test_nothing_outlives_a_killed_grading_and_the_next_sweeps_its_leftovers(tmp_path, backend, isolate):
    if backend == "redis-server" and not redis_server_binary():
        pytest.skip("redis-server is not installed")
    subs = _submissions(tmp_path / "subs", 6)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        marker = uuid.uuid4().hex
        runner = _grading(subs, tmp_path / f"out-{sig.name}", backend, isolate, marker)
        seen: dict[int, str] = {}  # every process of the grading: pid -> start time
        graders: set[int] = set()
        try:
            deadline = time.monotonic() + 180
            settle = None  # once students run: go on scanning a little, so the processes born late count too
            while time.monotonic() < (settle or deadline):
                assert runner.poll() is None, runner.communicate()[1][-3000:]
                table = _table()
                for pid in marked(marker):
                    if pid in table:
                        seen.setdefault(pid, table[pid][1])
                grew = True
                while grew:  # the boxes below them: their environment is empty, their ancestry is not
                    grew = False
                    for pid, (ppid, start) in table.items():
                        if ppid in seen and pid not in seen:
                            seen[pid] = start
                            grew = True
                zygotes = {p for p in seen if b"multiprocessing.forkserver" in _cmdline(p)}
                graders |= {p for p, (ppid, _) in table.items() if ppid in zygotes and p in seen}
                # a student's process: forked by its box's fork server (the same command line)
                students = [
                    p
                    for p, (ppid, _) in table.items()
                    if p in seen and b"sandbox.inbox" in _cmdline(p) and b"sandbox.inbox" in _cmdline(ppid)
                ]
                if settle is None and len(students) >= 2 and len(graders) >= 2:
                    settle = time.monotonic() + 1.5
                time.sleep(0.05)
            assert settle is not None, "the grading never ran two students' processes at once"
            base = Path(_run_base())
            running = list(base.glob(f"course-grad*-{runner.pid}-*"))  # what a kill can leave behind
            os.kill(runner.pid, sig)  # the runner alone, as pkill or the OOM killer would
            runner.wait(10)
            deadline = time.monotonic() + 5
            while (left := _alive(seen) + _in_cgroups_of(graders)) and time.monotonic() < deadline:
                time.sleep(0.1)
            names = {p: _cmdline(p)[:120] for p in left}
            assert not left, f"still running after {sig.name}: {names}"
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.wait()
        assert running, "the grading had no run folder while it ran"
        # left for the next grading to sweep (one graded meanwhile by another test may already have)
        folders = [p for p in base.glob(f"course-grad*-{runner.pid}-*")]
        follow = subprocess.run(
            [
                sys.executable,
                "-m",
                "redis_course.cli",
                "grade",
                str(_submissions(tmp_path / f"one-{sig.name}", 1, slow=False)),
                "--out",
                str(tmp_path / f"again-{sig.name}"),
                "--lab",
                "00",
                "--backend",
                backend,
                *([] if isolate else ["--no-isolation"]),
            ],
            capture_output=True,
            text=True,
            env=dict(os.environ, COURSE_LANG="en"),
            timeout=300,
        )
        assert follow.returncode == 0, follow.stderr[-3000:]
        assert not [p for p in [*running, *folders] if p.exists()], "the next grading did not sweep the folders"
        assert not [d for g in graders for d in _cgroup_dirs(g)], "the next grading did not sweep the cgroups"


def _cgroup_dirs(grader: int) -> list[Path]:
    root = Path("/sys/fs/cgroup")
    return (
        [
            d
            for d in [*root.glob(f"*/course-grade/box-{grader}-*"), *root.glob(f"course-grade/box-{grader}-*")]
            if d.is_dir()
        ]
        if root.is_dir()
        else []
    )


def test_sweep_removes_only_folders_whose_owner_is_gone():
    mine = make_run_dir("course-sweeptest-")
    dead = subprocess.Popen(["true"])
    dead.wait()
    other = Path(_run_base()) / f"course-sweeptest-{dead.pid}-x"
    other.mkdir()
    foreign = Path(_run_base()) / f"not-course-{dead.pid}-x"
    foreign.mkdir()
    try:
        from redis_course.labs.sandbox import sweep

        sweep()  # (a grading elsewhere on the machine may sweep it first: either way it goes)
        assert not other.exists()
        assert mine.exists() and foreign.exists()
    finally:
        shutil.rmtree(mine, ignore_errors=True)
        shutil.rmtree(other, ignore_errors=True)
        foreign.rmdir()


def test_every_module_the_zygote_preloads_exists():
    """The fork server skips a preload it cannot import without a word: a module that moved would
    leave every grader importing it again after the fork."""
    import importlib.util

    from redis_course.labs.engine.zygote import PRELOAD

    missing = [name for name in PRELOAD if importlib.util.find_spec(name) is None]
    assert not missing, f"PRELOAD names modules that do not exist: {missing}"
