"""Orchestration of a grading run: the reference runs, every (student, lab) run, workers, progress.

Each (student, lab) is graded by :func:`..engine.runner.run_lab` in its own grader process with its own
private Redis and sandboxed student process; ``workers`` of them run at once (default: one per CPU
core), each grader process forked from the one zygote the grading starts (:mod:`..engine.zygote`).  Before the students, each lab's
reference solution is graded once on the same backend: it must score full marks, and it gives the
list of tests and points for labs a student did not hand in.  The grader's log of a run that does not
end ``ok`` is kept under ``RESULTS/logs/`` (owner-only, written after the run, when no student
process is left; the sandbox hides RESULTS from student code).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...l10n import _
from .intake import Submission
from ..authoring.model import Lab
from ..engine.runner import LabResult, TestResult, run_lab
from ..engine.zygote import zygote
from ..sandbox.limits import Limits


class _Lines:
    """What tqdm writes, for a file or a pipe: each redraw (``\\r`` + the bar) as a line of its own."""

    def __init__(self, out) -> None:
        self.out, self.last = out, ""

    def write(self, text: str) -> None:
        line = text.strip("\r\n ")
        if line and line != self.last:  # closing the bar draws it once more
            self.out.write(line + "\n")
            self.last = line

    def flush(self) -> None:
        self.out.flush()


class Progress:
    """The progress bar on stderr (tqdm): redrawn on a terminal; otherwise (a file, a pipe) a line after
    the first run, then every twentieth of the runs and at least every 30 seconds."""

    FORMAT = "{desc} [{bar:30}] {n}/{total} {elapsed_s:5.1f}s{postfix}"

    def __init__(self, total: int, enabled: bool = True, every_s: float = 30.0) -> None:
        self.total, self.done, self.enabled = total, 0, enabled
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.every_s, self.last = every_s, time.monotonic()
        self.tty = sys.stderr.isatty()
        self.bar = None
        if enabled:
            from tqdm import tqdm

            # delay: no 0/N line before the first run; off a terminal, update() says when to draw
            self.bar = tqdm(
                total=total,
                desc=_("grading"),
                bar_format=self.FORMAT,
                ascii=".#",
                leave=True,
                file=sys.stderr if self.tty else _Lines(sys.stderr),
                dynamic_ncols=self.tty,
                delay=1e-9,
                mininterval=0.1 if self.tty else float("inf"),
            )

    def update(self, status: str) -> None:
        with self.lock:
            self.done += 1
            self.counts[status] = self.counts.get(status, 0) + 1
            if self.bar is None:
                return
            extra = " ".join(f"{k}:{v}" for k, v in sorted(self.counts.items()) if k != "ok")
            if extra:
                self.bar.set_postfix_str(extra, refresh=False)
            self.bar.update(1)
            now = time.monotonic()
            if not self.tty and (
                self.done in (1, self.total)
                or self.done % max(1, self.total // 20) == 0
                or now - self.last >= self.every_s
            ):
                self.bar.refresh()
                self.last = now

    def end_line(self) -> None:
        """Close the bar (an interrupted run's too): the terminal's cursor goes to the next line."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class Journal:
    """``RESULTS/logs/runs.jsonl``: one line per finished run, appended and flushed as the run ends, so an
    interrupted grading loses only the runs that were still going.  A line holds who (a student's
    file stem, empty for the reference), the lab, the SHA-256 of the graded file, the key of the
    grading settings and the result.  A later run with the same settings takes a (who, lab, file)
    found here instead of grading it again; ``restart`` empties the journal first."""

    NAME = "runs.jsonl"

    def __init__(self, path: Path, key: str) -> None:
        self.path, self.key = path, key
        self.lock = threading.Lock()

    def load(self) -> tuple[dict[tuple[str, str, str], LabResult], int]:
        """The results kept under this key, and how many lines were written under another one."""
        found: dict[tuple[str, str, str], LabResult] = {}
        other = 0
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (FileNotFoundError, UnicodeDecodeError):
            return found, 0
        for line in lines:
            try:
                d = json.loads(line)
                if d.get("key") != self.key:
                    other += 1
                    continue
                res = LabResult.from_dict(d["result"])
                res.output = d["result"].get("output", "")
                found[(d["who"], d["lab"], d["sha256"])] = res
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a crash: that run is graded again
        return found, other

    def restart(self) -> None:
        self.path.unlink(missing_ok=True)

    def add(self, who: str, lab: str, sha: str, res: LabResult) -> None:
        result = {**res.to_dict(), "output": res.output}
        # ASCII only: a student's text (names, output) is escaped, so no bidi override or control
        # character reaches the terminal of whoever reads the log with cat or tail
        line = (
            json.dumps({"key": self.key, "who": who, "lab": lab, "sha256": sha, "result": result}, ensure_ascii=True)
            + "\n"
        )
        with self.lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as f:
                f.write(line)
                f.flush()
                os.fsync(f.fileno())


def file_sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def settings_key(plan: "Plan") -> str:
    """What a kept result depends on besides the graded file: each lab's own files (tests, lab.yml,
    hints, solution), the backend, the limits, the isolation and the feedback's language."""
    h = hashlib.sha256()
    for lab in sorted(plan.labs, key=lambda x: x.id):
        h.update(lab.id.encode() + b"\0")
        for f in sorted(
            p for p in Path(lab.path).rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.name != "lab.py"
        ):
            h.update(str(f.relative_to(lab.path)).encode() + b"\0" + f.read_bytes() + b"\0")
    limits = plan.limits.to_dict() if plan.limits else None
    h.update(json.dumps([plan.backend, plan.lang, plan.isolate, limits], sort_keys=True).encode())
    return h.hexdigest()[:16]


def _running_graders() -> list[int]:
    """This process's running graders (each the leader of its own session: see :func:`..engine.runner.run_lab`)."""
    from ..engine.runner import running_graders

    return running_graders()


def _signal_groups(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


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
    feedback: str | None = None  # the feedback's language (None: lang; auto: each student's edition's)

    def __post_init__(self) -> None:
        self.workers = self.workers or os.cpu_count() or 2


@dataclass
class Outcome:
    reference: dict[str, LabResult] = field(default_factory=dict)  # lab id -> the reference's result
    problems: list[str] = field(default_factory=list)  # labs whose reference is not perfect
    results: dict[tuple[int, str], LabResult] = field(default_factory=dict)  # (submission index, lab id)
    logs: int = 0
    runs: int = 0  # runs this grading had to do (kept ones not counted)
    done: int = 0  # of those, the ones that ended
    resumed: int = 0  # results taken from the journal of an earlier run
    interrupted: bool = False  # Ctrl+C: the runs still to do were not started, the running ones stopped
    complete: set[int] = field(default_factory=set)  # submissions whose every run ended


def _reference_problem(lab: Lab, res: LabResult) -> str | None:
    if res.status == "ok" and res.points == res.max_points and res.tests:
        return None
    return _(
        "{lab}: the reference solution scores {points}/{max_points} ({status}) on this backend; "
        "check the lab before trusting its grades.",
        lab=lab.id,
        points=format(res.points, "g"),
        max_points=format(res.max_points, "g"),
        status=res.status,
    )


#: After the first Ctrl+C the running graders get SIGTERM (they stop their student processes and
#: their Redis); those still there after this many seconds get SIGKILL.
STOP_GRACE_S = 3.0


class Grader:
    """Runs labs on a thread pool, each run forked from one zygote (:mod:`..engine.zygote`) started
    before the pool, from the calling thread.

    The first Ctrl+C (SIGINT) starts no further run and stops the running ones within seconds; their
    results are dropped (they are graded again by the next run), every result that ended before is
    kept.  A second Ctrl+C kills the running graders at once."""

    def __init__(self, plan: Plan, journal: Journal | None = None, resume: bool = True) -> None:
        self.plan = plan
        self.journal = journal
        self.resume = resume  # take the journal's student results (False: grade them again, still journal them)
        self.stop_at: float | None = None  # monotonic time of the first Ctrl+C
        self.kills = 0

    def run_one(self, lab: Lab, file: Path, log: Path | None) -> tuple[LabResult, float]:
        if self.stop_at is not None:
            raise _Cancelled()
        limits = self.plan.limits or Limits(call_timeout_s=lab.timeout_s, lab_budget_s=lab.budget_s)
        if log is not None:
            log.unlink(missing_ok=True)  # an earlier run's log of this (student, lab): this run decides
        res = run_lab(
            lab,
            file,
            visibility=("public", "hidden"),
            backend=self.plan.backend,
            limits=limits,
            hide=self.plan.hide,
            keep_log=log,
            isolate=self.plan.isolate,
        )
        return res, time.monotonic()

    def _log_path(self, sub: Submission | None, lab: Lab) -> Path | None:
        if self.plan.logs is None:
            return None
        where = self.plan.logs / "students" / sub.student.file if sub else self.plan.logs / "reference"
        return where / f"{lab.id}.log"

    def _on_sigint(self, *_signal: object) -> None:
        if self.stop_at is None:
            self.stop_at = time.monotonic()
            sys.stderr.write(
                "\n"
                + _("Stopping: no new run starts; the running ones are stopped now (Ctrl+C again stops them at once).")
                + "\n"
            )
            sys.stderr.flush()
        else:
            self.kills = max(self.kills, 2)

    def run(self, subs: list[Submission], on_complete: Callable[[int, Outcome], None] | None = None) -> Outcome:
        """The reference runs first in the queue, the students right behind them: no core waits.
        ``on_complete(i, outcome)`` is called (in this thread) when submission ``i`` has every result
        and the references are in: its files can be written."""
        out = Outcome()
        if self.plan.logs is not None:
            self.plan.logs.mkdir(mode=0o700, parents=True, exist_ok=True)
        kept, _other = self.journal.load() if self.journal else ({}, 0)
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            with zygote(), ThreadPoolExecutor(self.plan.workers) as pool:
                tasks: dict[Future, tuple[int | None, Lab, str, str]] = {}
                for lab in self.plan.labs:
                    if lab.solution_file.exists():
                        sha = file_sha(lab.solution_file)
                        res = kept.get(("", lab.id, sha))
                        if res is not None:
                            self._reference(lab, res, out)
                        else:
                            tasks[pool.submit(self.run_one, lab, lab.solution_file, self._log_path(None, lab))] = (
                                None,
                                lab,
                                "",
                                sha,
                            )
                waiting: dict[int, int] = {}
                for i, sub in enumerate(subs):
                    waiting[i] = 0
                    for lab in self.plan.labs:
                        if lab.id not in sub.files:
                            continue
                        sha = file_sha(sub.files[lab.id])
                        res = kept.get((sub.student.file, lab.id, sha)) if self.resume else None
                        if res is not None:
                            out.results[(i, lab.id)] = res
                            out.resumed += 1
                        else:
                            tasks[pool.submit(self.run_one, lab, sub.files[lab.id], self._log_path(sub, lab))] = (
                                i,
                                lab,
                                sub.student.file,
                                sha,
                            )
                            waiting[i] += 1
                out.runs = sum(1 for i, *_rest in tasks.values() if i is not None)
                self._gather(tasks, waiting, out, on_complete)
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        if self.plan.logs is not None:
            out.logs = sum(1 for p in self.plan.logs.rglob("*.log"))
        return out

    def _reference(self, lab: Lab, res: LabResult, out: Outcome) -> None:
        out.reference[lab.id] = res
        problem = _reference_problem(lab, res)
        if problem:
            out.problems.append(problem)

    def _gather(
        self,
        tasks: dict[Future, tuple[int | None, Lab, str, str]],
        waiting: dict[int, int],
        out: Outcome,
        on_complete: Callable[[int, Outcome], None] | None,
    ) -> None:
        bar = Progress(out.runs, self.plan.progress and out.runs > 0)
        refs_left = sum(1 for i, *_rest in tasks.values() if i is None)
        ready: list[int] = [i for i, n in waiting.items() if n == 0]  # every result kept from before
        pending = set(tasks)
        if not pending and ready:
            pending = set()
            for i in ready:
                out.complete.add(i)
                if on_complete is not None:
                    on_complete(i, out)
            ready = []
        while pending:
            finished, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for fut in finished:
                i, lab, who, sha = tasks[fut]
                if fut.cancelled():
                    continue
                try:
                    res, ended = fut.result()
                except _Cancelled:
                    continue
                except Exception as exc:  # noqa: BLE001 - one broken run must not stop the batch
                    res, ended = (
                        LabResult(lab.id, "grader-error", message=f"{type(exc).__name__}: {exc}"),
                        time.monotonic(),
                    )
                if self.stop_at is not None and ended >= self.stop_at:
                    continue  # stopped by Ctrl+C: not a result; the next run grades it again
                if self.journal is not None and res.status != "grader-error":
                    self.journal.add(who, lab.id, sha, res)
                if i is None:
                    self._reference(lab, res, out)
                    refs_left -= 1
                    continue
                out.results[(i, lab.id)] = res
                out.done += 1
                bar.update(res.status)
                waiting[i] -= 1
                if waiting[i] == 0:
                    ready.append(i)
            if refs_left == 0 and ready:  # a lab not handed in needs its reference's list of tests
                for i in ready:
                    out.complete.add(i)
                    if on_complete is not None:
                        on_complete(i, out)
                ready = []
            if self.stop_at is not None:
                self._stop(pending)
        bar.end_line()
        out.interrupted = self.stop_at is not None

    def _stop(self, pending: set[Future]) -> None:
        """After Ctrl+C: cancel what has not started, SIGTERM the running graders, later SIGKILL."""
        for fut in pending:
            fut.cancel()
        if self.kills == 0:
            _signal_groups(_running_graders(), signal.SIGTERM)
            self.kills = 1
        elif self.kills == 2 or time.monotonic() - (self.stop_at or 0) > STOP_GRACE_S:
            _signal_groups(_running_graders(), signal.SIGKILL)
            self.kills = 3


class _Cancelled(Exception):
    """A run that was to start after Ctrl+C."""


def missing(lab: Lab, reference: LabResult | None, problems: list[str], lang: str) -> LabResult:
    """The result of a lab a student did not hand in: every test of the reference run, at 0."""
    message = "\n".join([_("No lab.py was handed in for this lab.", lang=lang), *problems])
    tests = [
        TestResult(
            name=x.name,
            visibility=x.visibility,
            points=0.0,
            max_points=x.max_points,
            outcome="failed",
            hint=None,
            message=message,
        )
        for x in (reference.tests if reference else [])
    ]
    return LabResult(lab.id, "missing", tests, backend=reference.backend if reference else "", message=message)


def results_of(plan: Plan, i: int, sub: Submission, outcome: Outcome) -> list[tuple[Lab, LabResult]]:
    """Submission ``i``'s result in each lab of the plan (a ``missing`` one when it was not handed in)."""
    row = []
    for lab in plan.labs:
        res = outcome.results.get((i, lab.id))
        if res is None:
            res = missing(lab, outcome.reference.get(lab.id), sub.problems, plan.lang)
        row.append((lab, res))
    return row


def per_student(plan: Plan, subs: list[Submission], outcome: Outcome) -> list[list[tuple[Lab, LabResult]]]:
    """For each submission, each lab's result (a ``missing`` one when it was not handed in)."""
    return [results_of(plan, i, sub, outcome) for i, sub in enumerate(subs)]
