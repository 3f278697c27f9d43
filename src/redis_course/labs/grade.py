"""``course grade SUBMISSIONS --out RESULTS``: grade every student's labs with public and hidden tests.

    grade(Path("submissions"), Path("results"))                    # the whole class
    grade(Path("submissions"), Path("results"), student="Иванов")  # one student again, into RESULTS

Three jobs, three modules: :mod:`.intake` finds the students and reads their ``lab.py`` files,
:mod:`.orchestrate` runs the reference solutions and every (student, lab) in parallel,
:mod:`.summary` counts.  This module ties them together and writes RESULTS: ``grades.csv``,
``feedback/``, ``gradescope/``, ``junit/``, ``logs/`` (failed runs) and ``summary.json``.

Regrading one student (``student=``) needs the RESULTS of a whole-class run: it grades that student
on the labs of its grades.csv, replaces their rows there and their files, recomputes summary.json
and leaves every other student's files as they are.
"""
from __future__ import annotations

import json
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .. import paths
from ..l10n import _
from .intake import GradingError, Submission, collect, entries, find_student
from .model import Lab, LabError, discover, find_lab
from .names import Student
from .orchestrate import Grader, Outcome, Plan, per_student
from .report import GradeRow, read_csv, remove_student, write_csv, write_student
from .runner import LabResult
from .sandbox.limits import Limits
from .sandbox import make_run_dir
from .summary import Summary

OUTPUTS = ("feedback", "gradescope", "junit", "logs")


def _labs(wanted: list[str] | None, root: Path | None) -> list[Lab]:
    try:
        labs = [find_lab(x, root) for x in wanted] if wanted else discover(root)
    except LabError as exc:
        raise GradingError(str(exc)) from None
    if not labs:
        raise GradingError(_("There is no lab to grade."))
    return labs


@contextmanager
def _staging() -> Iterator[Path]:
    """A private folder for the staged copies of the students' files, removed afterwards."""
    work = make_run_dir("course-grading-")
    stage = work / "stage"
    stage.mkdir(mode=0o700)
    try:
        yield stage
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(submissions: Path, out: Path, plan: Plan, root: Path | None,
         only: Student | None) -> tuple[list[Submission], Outcome]:
    with _staging() as stage:
        plan.hide = tuple(str(p) for p in (paths.ROOT, submissions, out, stage, *([Path(root).resolve()] if root else [])))
        subs = collect(submissions, stage, plan.labs, lang=plan.lang, only=only)
        return subs, Grader(plan).run(subs)


def _rows(student: Student, results: list[tuple[Lab, LabResult]], lang: str) -> list[GradeRow]:
    return [GradeRow(student.name, lab.id, res.points, res.max_points, res.status, student.folder, lang)
            for lab, res in results]


def feedback_lang(sub: Submission, plan: Plan, wanted: str | None) -> str:
    """The language of ``sub``'s feedback: ``wanted``; with ``auto`` the language of the edition its
    lab.py files came from (:func:`.names.edition_lang`), the run's language when they do not tell."""
    return (sub.lang or plan.lang) if wanted == "auto" else (wanted or plan.lang)


def _write(out: Path, plan: Plan, subs: list[Submission], outcome: Outcome, wanted: str | None) -> list[GradeRow]:
    rows = []
    for sub, results in zip(subs, per_student(plan, subs, outcome)):
        lang = feedback_lang(sub, plan, wanted)
        write_student(out, sub.student, results, lang)
        rows += _rows(sub.student, results, lang)
    return rows


def _finish(out: Path, rows: list[GradeRow], plan: Plan, outcome: Outcome, started: float,
            regraded: list[str] | None = None, feedback: str | None = None) -> Summary:
    write_csv(out / "grades.csv", rows)
    used = next((r.backend for r in outcome.reference.values() if r.backend), plan.backend)
    used = next((r.backend for r in outcome.results.values() if r.backend), used)
    summary = Summary.from_rows(rows, seconds=time.monotonic() - started, workers=plan.workers, backend=used,
                                out=out, reference_problems=outcome.problems, lang=plan.lang,
                                logs=outcome.logs, regraded=regraded or [], feedback_lang=feedback or plan.lang)
    (out / "summary.json").write_text(json.dumps(summary.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")
    return summary


def require_isolation(isolate: bool) -> None:
    """Grading refuses to run students' code unisolated unless told so (``--no-isolation``)."""
    from .sandbox.launch import mode

    if isolate and mode() == "none":
        raise GradingError(_("Student code cannot be isolated here (install bubblewrap so that `bwrap` can make "
                             "namespaces on this machine), so grading stops; pass --no-isolation to grade "
                             "without isolation on purpose."))


def grade(submissions: Path, out: Path, *, labs: list[str] | None = None, lang: str | None = None,
          backend: str = "auto", workers: int | None = None, limits: Limits | None = None,
          progress: bool = True, root: Path | None = None, student: str | None = None,
          isolate: bool = True, feedback_lang: str | None = None) -> Summary:
    """Grade SUBMISSIONS into ``out`` (or, with ``student``, regrade that one student there).
    ``isolate=False`` (``--no-isolation``) runs student code without namespaces where they are missing.
    ``feedback_lang``: the feedback's language (default ``lang``); ``auto``: each student's edition's."""
    started = time.monotonic()
    require_isolation(isolate)
    submissions, out = Path(submissions).resolve(), Path(out).resolve()
    if student is not None:
        if labs:
            raise GradingError(_("--student regrades the labs listed in grades.csv; leave out --lab."))
        return regrade(submissions, out, student, lang=lang, backend=backend, workers=workers, limits=limits,
                       progress=progress, root=root, isolate=isolate, feedback_lang=feedback_lang)
    plan = Plan(_labs(labs, root), backend, workers or 0, limits, progress=progress, lang=lang or "en",
                logs=out / "logs", isolate=isolate)
    entries(submissions)  # an empty or missing folder is an error before RESULTS is touched
    out.mkdir(parents=True, exist_ok=True)
    for sub in OUTPUTS:
        shutil.rmtree(out / sub, ignore_errors=True)
    subs, outcome = _run(submissions, out, plan, root, None)
    return _finish(out, _write(out, plan, subs, outcome, feedback_lang), plan, outcome, started,
                   feedback=feedback_lang)


def _previous(out: Path) -> tuple[list[GradeRow], dict]:
    grades_csv = out / "grades.csv"
    if not grades_csv.is_file():
        raise GradingError(_("{out} holds no grades.csv: grade the whole class into it first, "
                             "then regrade one student.", out=out))
    try:
        rows = read_csv(grades_csv)
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8")) if (out / "summary.json").exists() else {}
    except (KeyError, ValueError) as exc:
        raise GradingError(_("{file} cannot be read ({error}); grade the whole class again.",
                             file=grades_csv, error=exc)) from None
    return rows, summary


def _merge(old: list[GradeRow], name: str, new: list[GradeRow]) -> list[GradeRow]:
    """``old`` with ``name``'s rows replaced by ``new`` where the first of them was (appended if none)."""
    at = next((i for i, r in enumerate(old) if r.student == name), None)
    kept = [r for r in old if r.student != name]
    if at is None:
        return kept + new
    at = sum(1 for r in old[:at] if r.student != name)
    return kept[:at] + new + kept[at:]


def regrade(submissions: Path, out: Path, wanted: str, *, lang: str | None = None, backend: str = "auto",
            workers: int | None = None, limits: Limits | None = None, progress: bool = True,
            root: Path | None = None, isolate: bool = True, feedback_lang: str | None = None) -> Summary:
    """Grade one student again into an existing RESULTS folder; nobody else's files change."""
    started = time.monotonic()
    require_isolation(isolate)
    old_rows, previous = _previous(out)
    student = find_student(submissions, wanted)
    lab_ids = list(dict.fromkeys(r.lab for r in old_rows))
    plan = Plan(_labs(lab_ids, root), backend, workers or 0, limits, progress=progress,
                lang=lang or previous.get("lang") or "en", logs=out / "logs", isolate=isolate)
    shutil.rmtree(out / "logs" / "students" / student.file, ignore_errors=True)  # this run writes them anew
    subs, outcome = _run(submissions, out, plan, root, student)
    remove_student(out, student, logs=False)
    feedback = feedback_lang or previous.get("feedback_lang") or plan.lang
    rows = _merge(old_rows, student.name, _write(out, plan, subs, outcome, feedback))
    return _finish(out, rows, plan, outcome, started, regraded=[student.name], feedback=feedback)
