"""Orchestration of a grading run: the reference runs, every (student, lab) run, workers, progress.

Each (student, lab) is graded by :func:`.runner.run_lab` in its own grader process with its own
private Redis and sandboxed student process; ``workers`` of them run at once (default: one per CPU
core), each worker thread with one fork server that its runs reuse.  Before the students, each lab's
reference solution is graded once on the same backend: it must score full marks, and it gives the
list of tests and points for labs a student did not hand in.  The grader's log of a run that does not
end ``ok`` is kept under ``RESULTS/logs/`` (owner-only, written after the run, when no student
process is left; the sandbox hides RESULTS from student code).
"""
from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from ..l10n import _
from .intake import Submission
from .model import Lab
from .runner import LabResult, TestResult, run_lab
from .sandbox.limits import Limits


class Progress:
    """A one-line progress bar on stderr: redrawn on a terminal, every tenth of the runs otherwise."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total, self.done, self.enabled = total, 0, enabled
        self.counts: dict[str, int] = {}
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.tty = sys.stderr.isatty()

    def line(self) -> str:
        width, label = 30, _("grading")
        filled = int(width * self.done / max(1, self.total))
        extra = " ".join(f"{k}:{v}" for k, v in sorted(self.counts.items()) if k != "ok")
        return (f"{label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"{time.monotonic() - self.started:5.1f}s {extra}").rstrip()

    def update(self, status: str) -> None:
        with self.lock:
            self.done += 1
            self.counts[status] = self.counts.get(status, 0) + 1
            if not self.enabled:
                return
            if self.tty:
                sys.stderr.write("\r" + self.line() + ("\n" if self.done == self.total else ""))
            elif self.done == self.total or self.done % max(1, self.total // 10) == 0:
                sys.stderr.write(self.line() + "\n")
            sys.stderr.flush()


@dataclass
class Plan:
    """How to grade: which labs, on which backend, with how many workers, limits and hidden paths."""
    labs: list[Lab]
    backend: str = "auto"
    workers: int = 0
    limits: Limits | None = None
    hide: tuple[str, ...] = ()
    logs: Path | None = None  # RESULTS/logs: where the logs of failed runs go
    progress: bool = True
    lang: str = "en"
    isolate: bool = True  # False: --no-isolation

    def __post_init__(self) -> None:
        self.workers = self.workers or os.cpu_count() or 2


@dataclass
class Outcome:
    reference: dict[str, LabResult] = field(default_factory=dict)  # lab id -> the reference's result
    problems: list[str] = field(default_factory=list)              # labs whose reference is not perfect
    results: dict[tuple[int, str], LabResult] = field(default_factory=dict)  # (submission index, lab id)
    logs: int = 0


def _reference_problem(lab: Lab, res: LabResult) -> str | None:
    if res.status == "ok" and res.points == res.max_points and res.tests:
        return None
    return _("{lab}: the reference solution scores {points}/{max_points} ({status}) on this backend; "
             "check the lab before trusting its grades.", lab=lab.id, points=format(res.points, "g"),
             max_points=format(res.max_points, "g"), status=res.status)


class Grader:
    """Runs labs on a thread pool; every run is a grader process with a box of its own."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    def run_one(self, lab: Lab, file: Path, log: Path | None) -> LabResult:
        limits = self.plan.limits or Limits(call_timeout_s=lab.timeout_s)
        return run_lab(lab, file, visibility=("public", "hidden"), backend=self.plan.backend, limits=limits,
                       hide=self.plan.hide, keep_log=log, isolate=self.plan.isolate)

    def _log_path(self, sub: Submission | None, lab: Lab) -> Path | None:
        if self.plan.logs is None:
            return None
        where = self.plan.logs / "students" / sub.student.file if sub else self.plan.logs / "reference"
        return where / f"{lab.id}.log"

    def run(self, subs: list[Submission]) -> Outcome:
        """The reference runs first in the queue, the students right behind them: no core waits."""
        out = Outcome()
        if self.plan.logs is not None:
            self.plan.logs.mkdir(mode=0o700, parents=True, exist_ok=True)
        with ThreadPoolExecutor(self.plan.workers) as pool:
            refs = {pool.submit(self.run_one, lab, lab.solution_file, self._log_path(None, lab)): lab
                    for lab in self.plan.labs if lab.solution_file.exists()}
            jobs = {pool.submit(self.run_one, lab, sub.files[lab.id], self._log_path(sub, lab)): (i, lab)
                    for i, sub in enumerate(subs) for lab in self.plan.labs if lab.id in sub.files}
            self._gather(refs, jobs, out)
        if self.plan.logs is not None:
            out.logs = sum(1 for p in self.plan.logs.rglob("*.log"))
        return out

    def _gather(self, refs: dict[Future, Lab], jobs: dict[Future, tuple[int, Lab]], out: Outcome) -> None:
        for fut in as_completed(refs):
            lab = refs[fut]
            out.reference[lab.id] = res = fut.result()
            problem = _reference_problem(lab, res)
            if problem:
                out.problems.append(problem)
        bar = Progress(len(jobs), self.plan.progress)
        for fut in as_completed(jobs):
            i, lab = jobs[fut]
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001 - one broken run must not stop the batch
                res = LabResult(lab.id, "grader-error", message=f"{type(exc).__name__}: {exc}")
            out.results[(i, lab.id)] = res
            bar.update(res.status)


def missing(lab: Lab, reference: LabResult | None, problems: list[str], lang: str) -> LabResult:
    """The result of a lab a student did not hand in: every test of the reference run, at 0."""
    message = "\n".join([_("No lab.py was handed in for this lab.", lang=lang), *problems])
    tests = [TestResult(name=x.name, visibility=x.visibility, points=0.0, max_points=x.max_points,
                        outcome="failed", hint=None, message=message) for x in (reference.tests if reference else [])]
    return LabResult(lab.id, "missing", tests, backend=reference.backend if reference else "", message=message)


def per_student(plan: Plan, subs: list[Submission], outcome: Outcome) -> list[list[tuple[Lab, LabResult]]]:
    """For each submission, each lab's result (a ``missing`` one when it was not handed in)."""
    table = []
    for i, sub in enumerate(subs):
        row = []
        for lab in plan.labs:
            res = outcome.results.get((i, lab.id))
            if res is None:
                res = missing(lab, outcome.reference.get(lab.id), sub.problems, plan.lang)
            row.append((lab, res))
        table.append(row)
    return table
