#!/usr/bin/env python3
"""Repeated grading of every lab's reference solution: does any test depend on timing luck?

    .venv/bin/python bench/reference_runs.py [--runs 10] [--lab 02 --lab 07] [--backend fakeredis]
                                             [--workers 2] [--wrong [--only NAME ...]]

Grades ``labs/NN-*/solution.py`` ``--runs`` times per backend (a private redis-server and the
fakeredis server), public and hidden tests, exactly as ``course grade`` does (``run_lab``), and
prints one row per (lab, backend): runs, runs with full marks, the fewest points seen, the load
average (1 min) at the start and at the end of its runs, and the tests that lost points with how
often.  A reference solution must score full marks on every run whatever the machine's load: a
test that does not is a test to fix.

``--wrong`` grades every known-wrong file (``wrong/*.py`` composed onto solution.py) instead, each
``--runs`` times and stopping at its first failing test, and prints the files that scored full
marks on some run: a mistake the tests catch only now and then.

Asserts nothing; the exit status is 0 whatever the scores.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from redis_course.labs.authoring.model import discover  # noqa: E402
from redis_course.labs.engine.runner import run_lab  # noqa: E402
from redis_course.labs.authoring.wrong import Wrong  # noqa: E402
from redis_course.core.servers import redis_server_binary  # noqa: E402

BACKENDS = ("redis-server", "fakeredis")


def load() -> float:
    return os.getloadavg()[0]


def grade(lab, path, backend, first_failure=False):
    res = run_lab(lab, path, visibility=("public", "hidden"), backend=backend, first_failure=first_failure)
    lost = [
        f"{t.name}: {t.message.splitlines()[0][:140] if t.message else t.outcome}"
        for t in res.tests
        if t.counted and t.points < t.max_points
    ]
    return res.points, res.max_points, res.status, lost


def reference(labs, backends, runs, workers) -> None:
    print(
        f"{'lab':<18} {'backend':<13} {'runs':>4} {'full':>4} {'min points':>12} {'load':>13} {'s/run':>6}"
        "  lost points (times)",
        flush=True,
    )
    for lab in labs:
        for backend in backends:
            if lab.needs_real_redis and backend == "fakeredis":
                continue
            started, load0 = time.monotonic(), load()
            with ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(lambda _i: grade(lab, lab.solution_file, backend), range(runs)))
            full = sum(1 for p, m, s, _l in results if s == "ok" and p == m > 0)
            low = min(results, key=lambda r: r[0])
            lost = collections.Counter(x.split(": ", 1)[0] for *_x, names in results for x in names)
            statuses = collections.Counter(s for _p, _m, s, _l in results if s != "ok")
            what = ", ".join(f"{n} ({c})" for n, c in lost.most_common()) + "".join(
                f" [{s} x{c}]" for s, c in statuses.items()
            )
            secs = (time.monotonic() - started) / runs * workers
            print(
                f"{lab.id:<18} {backend:<13} {runs:>4} {full:>4} {low[0]:>5g}/{low[1]:<6g} "
                f"{load0:>6.2f}-{load():<6.2f} {secs:>6.1f}  {what or '-'}",
                flush=True,
            )
            for message in sorted({x for *_x, names in results for x in names}):
                print(f"    {message}", flush=True)


def wrong(labs, backends, runs, workers, only=()) -> None:
    composed = Path(tempfile.mkdtemp(prefix="wrong-runs-"))
    jobs = [
        (lab, w, b)
        for lab in labs
        for w in lab.wrong_files
        for b in backends
        if not (lab.needs_real_redis and b == "fakeredis") and (not only or w.stem in only or w.name in only)
    ]
    print(f"{len(jobs)} (wrong file, backend) pairs, {runs} runs each, load {load():.2f}", flush=True)

    def one(job):
        lab, w, backend = job
        path = Wrong(lab, w).write(composed)
        scores = [grade(lab, path, backend, first_failure=True) for _ in range(runs)]
        return job, scores

    missed = 0
    with ThreadPoolExecutor(workers) as pool:
        for (lab, w, backend), scores in pool.map(one, jobs):
            full = [s for s in scores if s[0] >= s[1]]
            caught_by = collections.Counter(s[3][0] if s[3] else s[2] for s in scores if s[0] < s[1])
            if full:
                missed += 1
                print(
                    f"MISSED {len(full)}/{runs}  {lab.id}/wrong/{w.name} on {backend}; caught by {dict(caught_by)}",
                    flush=True,
                )
            else:
                print(f"caught {runs}/{runs}  {lab.id}/wrong/{w.name} on {backend}: {dict(caught_by)}", flush=True)
    print(f"{missed} of {len(jobs)} pairs scored full marks on some run; load {load():.2f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--lab", action="append", default=[], help="a lab id or its number (repeatable)")
    ap.add_argument("--backend", action="append", choices=BACKENDS, default=[])
    ap.add_argument("--workers", type=int, default=1, help="runs graded at once (each is its own processes)")
    ap.add_argument("--wrong", action="store_true", help="grade the known-wrong files instead")
    ap.add_argument("--only", action="append", default=[], help="with --wrong: this wrong file only (repeatable)")
    args = ap.parse_args()
    labs = [
        lab
        for lab in discover()
        if lab.solution_file.exists() and (not args.lab or any(lab.id == x or lab.id.startswith(x) for x in args.lab))
    ]
    backends = [b for b in (args.backend or BACKENDS) if b != "redis-server" or redis_server_binary()]
    if args.wrong:
        wrong(labs, backends, args.runs, max(1, args.workers), set(args.only))
    else:
        reference(labs, backends, args.runs, max(1, args.workers))


if __name__ == "__main__":
    main()
