#!/usr/bin/env python3
"""Grading benchmark: isolated grading (``course grade``) against a plain in-process pytest run.

    .venv/bin/python bench/grading_bench.py [--n 100] [--lab 00] [--workers N] [--backend auto]

Generates N submissions of one lab (40 % the reference solution, 30 % partly correct: the lab's
wrong/ implementations, 30 % wrong: the starter), then

* **isolated**: ``grade()`` — per (student, lab) a grader process, a private Redis and the student's
  code in sandboxed child processes, public + hidden tests;
* **plain**: the same tests, one ``pytest`` process per submission with the student's module
  imported into it (a ``lab`` fixture that calls the functions directly) and one shared private
  Redis — what grading costs without any isolation;

with the same number of parallel workers, and prints submissions per minute, the ratio of the two
times (target ≤ 1.5), the peak memory of each run's process tree, and whether both agree on every score.
"""

from __future__ import annotations

import argparse
import csv
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from redis_course.labs.grading.grade import grade  # noqa: E402
from redis_course.labs.authoring.model import find_lab  # noqa: E402
from redis_course.labs.sandbox.server import RunRedis  # noqa: E402
from redis_course.labs.sandbox import make_run_dir  # noqa: E402
from redis_course.labs.authoring.wrong import composed_path  # noqa: E402

PLAIN_PLUGIN = '''
"""In-process lab fixtures for the baseline: no isolation at all."""
import importlib.util, json, os, threading
import pytest
from redis_course.core.backend import connect
from redis_course.labs.sandbox.errors import StudentError

_mod = None
def _module():
    global _mod
    if _mod is None:
        spec = importlib.util.spec_from_file_location("lab", os.environ["PLAIN_LAB_FILE"])
        _mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_mod)
    return _mod

def _client():
    return connect(os.environ["PLAIN_REDIS_URL"], prefix=os.environ["PLAIN_PREFIX"], owned=True)

class Lab:
    def __init__(self):
        self.r = _client()
    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        def call(*args, **kwargs):
            fn = getattr(_module(), name, None)
            if fn is None:
                raise StudentError("AttributeError", name, name)
            try:
                return json.loads(json.dumps(fn(self.r, *args, **kwargs)))
            except Exception as exc:
                raise StudentError(type(exc).__name__, str(exc), name) from None
        return call
    def parallel(self, n):
        return [Lab() for _ in range(n)]
    def run_concurrently(self, calls, processes=16):
        labs = self.parallel(max(1, min(processes, len(calls))))
        out = [None] * len(calls)
        def work(k):
            for i in range(k, len(calls), len(labs)):
                c = calls[i]
                try:
                    out[i] = getattr(labs[k], c[0])(*(c[1] if len(c) > 1 else ()), **(c[2] if len(c) > 2 else {}))
                except StudentError as exc:
                    out[i] = exc
        ts = [threading.Thread(target=work, args=(k,)) for k in range(len(labs))]
        [t.start() for t in ts]; [t.join() for t in ts]
        return out

def pytest_configure(config):
    config.addinivalue_line("markers", "points(n): points")
    config.addinivalue_line("markers", "hint(id): hint")
    config.addinivalue_line("markers", "real_redis: real server")

@pytest.fixture
def lab():
    return Lab()

@pytest.fixture
def redis():
    c = _client()
    c.cleanup()
    yield c
    c.cleanup()

_points = {}
def pytest_runtest_makereport(item, call):
    m = item.get_closest_marker("points")
    if call.when == "call":
        _points[item.nodeid] = (m.args[0] if m else 0) if call.excinfo is None else 0

def pytest_unconfigure(config):
    with open(os.environ["PLAIN_RESULT"], "w") as f:
        f.write(str(sum(_points.values())))
'''


class TreeMemory:
    """Samples the summed memory (PSS) of this process and all its descendants."""

    def __init__(self, interval: float = 0.2) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree(self) -> list[int]:
        pids, todo = [], [os.getpid()]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as f:
                        todo.extend(int(x) for x in f.read().split())
            except OSError:
                pass
        return pids

    def _rss(self, pid: int) -> int:
        """Proportional set size: pages shared by forked processes are counted once in the sum."""
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        return 0

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, sum(self._rss(p) for p in self._tree()))

    def __enter__(self) -> "TreeMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def children_cpu() -> float:
    """CPU seconds used by finished descendants (auto-reaped ones included on Linux)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def make_submissions(lab, n: int, folder: Path) -> dict[str, str]:
    wrong = [composed_path(lab, w.name) for w in lab.wrong_files] or [lab.starter_file]
    kinds = {}
    for i in range(n):
        frac = i / n
        if frac < 0.4:
            src, kind = lab.solution_file, "correct"
        elif frac < 0.7:
            src, kind = wrong[i % len(wrong)], "partly correct"
        else:
            src, kind = lab.starter_file, "wrong"
        student = f"s{i:03d}"
        d = folder / student / lab.id
        d.mkdir(parents=True)
        shutil.copy(src, d / "lab.py")
        kinds[student] = kind
    return kinds


def run_plain(lab, subs: Path, students: list[str], workers: int, backend: str, tmp: Path) -> dict[str, float]:
    plugin_dir = tmp / "plain"
    plugin_dir.mkdir(parents=True)
    (plugin_dir / "plain_lab_plugin.py").write_text(PLAIN_PLUGIN)
    (plugin_dir / "pytest.ini").write_text("[pytest]\naddopts =\n")
    run_dir = make_run_dir()
    server = RunRedis(run_dir / "redis", backend).start()
    files = [str(f) for v in ("public", "hidden") for f in lab.test_files(v)]
    scores: dict[str, float] = {}

    def one(student: str) -> None:
        result = plugin_dir / f"plain-{student}.txt"
        env = dict(
            os.environ,
            PYTHONPATH=f"{plugin_dir}:{ROOT / 'src'}",
            PLAIN_REDIS_URL=server.url,
            PLAIN_PREFIX=f"course:plain:{secrets.token_hex(4)}:",
            PLAIN_RESULT=str(result),
            PLAIN_LAB_FILE=str(subs / student / lab.id / "lab.py"),
            PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "plain_lab_plugin",
                "-p",
                "no:cacheprovider",
                "-c",
                str(plugin_dir / "pytest.ini"),
                "--rootdir",
                str(lab.path),
                "--import-mode=importlib",
                *files,
            ],
            env=env,
            cwd=plugin_dir,
            capture_output=True,
            timeout=600,
        )
        scores[student] = float(result.read_text()) if result.exists() else -1

    try:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(one, students))
    finally:
        server.close()
        shutil.rmtree(run_dir, ignore_errors=True)
    return scores


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--lab", default="00")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--backend", default="auto", choices=["auto", "redis-server", "fakeredis"])
    ap.add_argument("--repeat", type=int, default=2, help="alternating runs of each kind; the best counts")
    args = ap.parse_args(argv)
    lab = find_lab(args.lab)
    tmp = Path(tempfile.mkdtemp(prefix="grading-bench-"))
    walls: dict[str, list[float]] = {"iso": [], "plain": []}
    cpus: dict[str, list[float]] = {"iso": [], "plain": []}
    peaks = {"iso": 0, "plain": 0}
    try:
        subs = tmp / "submissions"
        kinds = make_submissions(lab, args.n, subs)
        for rep in range(args.repeat):  # alternate, so both see the same machine load
            cpu0, t0 = children_cpu(), time.monotonic()
            with TreeMemory() as mem:
                # a RESULTS folder of its own per run: grade resumes from one that holds results
                summary = grade(
                    subs,
                    tmp / f"results{rep}",
                    labs=[lab.id],
                    backend=args.backend,
                    workers=args.workers,
                    progress=sys.stderr.isatty(),
                )
            walls["iso"].append(time.monotonic() - t0)
            cpus["iso"].append(children_cpu() - cpu0)
            peaks["iso"] = max(peaks["iso"], mem.peak)
            with open(tmp / f"results{rep}" / "grades.csv", newline="", encoding="utf-8-sig") as f:
                iso = {row["student"]: float(row["points"]) for row in csv.DictReader(f)}
            cpu0, t0 = children_cpu(), time.monotonic()
            with TreeMemory() as mem:
                plain = run_plain(lab, subs, sorted(kinds), args.workers, summary.backend, tmp / f"plain{rep}")
            walls["plain"].append(time.monotonic() - t0)
            cpus["plain"].append(children_cpu() - cpu0)
            peaks["plain"] = max(peaks["plain"], mem.peak)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t_iso, t_plain = min(walls["iso"]), min(walls["plain"])
    c_iso, c_plain = min(cpus["iso"]), min(cpus["plain"])
    mismatches = [s for s in kinds if iso.get(s) != plain.get(s)]
    mix = {k: sum(1 for v in kinds.values() if v == k) for k in ("correct", "partly correct", "wrong")}
    print(
        f"Grading benchmark: {args.n} submissions of {lab.id} "
        f"({', '.join(f'{v} {k}' for k, v in mix.items())}), {args.workers} workers, backend {summary.backend}"
    )
    print(
        f"{'run (best of ' + str(args.repeat) + ')':<34} {'seconds':>8} {'subm./min':>10} {'CPU s':>8} "
        f"{'peak PSS (tree)':>16}"
    )
    print(
        f"{'isolated: course grade':<34} {t_iso:8.1f} {args.n / t_iso * 60:10.1f} {c_iso:8.1f} "
        f"{peaks['iso'] / 2**20:13.0f} MB"
    )
    print(
        f"{'plain: pytest, module in-process':<34} {t_plain:8.1f} {args.n / t_plain * 60:10.1f} {c_plain:8.1f} "
        f"{peaks['plain'] / 2**20:13.0f} MB"
    )
    ratio = t_iso / t_plain
    print(f"ratio isolated / plain: {ratio:.2f} wall time (target <= 1.5), {c_iso / c_plain:.2f} CPU time")
    print(
        f"all wall times: isolated {', '.join(f'{x:.1f}' for x in walls['iso'])}; "
        f"plain {', '.join(f'{x:.1f}' for x in walls['plain'])}"
    )
    print("isolated run includes one reference-solution run per lab")
    for kind in mix:
        pts = sorted({iso[s] for s, k in kinds.items() if k == kind})
        print(f"  scores of {kind} submissions: {', '.join(f'{p:g}' for p in pts)}")
    print(f"scores agree with the plain run: {'yes' if not mismatches else f'NO ({len(mismatches)} differ)'}")
    return 0 if not mismatches else 1


if __name__ == "__main__":
    raise SystemExit(main())
