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

Without ``labs`` the labs graded are those at least one submission holds a ``lab.py`` for (said on
stderr), so labs nobody handed in do not count in anyone's maximum.

Interrupting and resuming: each run's result goes into ``RESULTS/logs/runs.jsonl`` as the run ends, and a
student's files are written as soon as all their runs have ended.  The first Ctrl+C starts no new
run, stops the running ones, writes grades.csv for the students graded so far and says how to go on.
Grading into the same RESULTS again resumes: a (student, lab) whose file and grading settings are
unchanged keeps its result (``restart=True``, ``--restart``: grade everything again).  Earlier
feedback is replaced only by newer feedback, never deleted first; at the end of a complete run the
files of students no longer in SUBMISSIONS are removed.
"""

from __future__ import annotations

import json
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ... import paths
from ...l10n import _
import sys

from .intake import GradingError, Submission, collect, entries, find_student
from ..authoring.model import Lab, LabError, discover, find_lab
from .names import Student
from .orchestrate import Grader, Journal, Outcome, Plan, per_student, results_of, settings_key
from .report import GradeRow, read_csv, remove_student, student_files, write_csv, write_student
from ..engine.runner import LabResult
from ..sandbox.limits import Limits
from ..sandbox import make_run_dir
from .summary import Summary


class GradingInterrupted(GradingError):
    """Ctrl+C: what was graded is written; the message says how to go on."""


def isolation_mode(isolate: bool = True) -> str:
    """How student code would be isolated here: the one place that asks :mod:`..sandbox.launch`."""
    from ..sandbox.launch import mode

    return mode(isolate)


def describe_isolation(mode: str, lang: str | None = None) -> str:
    """One phrase for ``mode``, in the reader's language (doctor, the grading summary, Gradescope's output)."""
    words = {
        "bwrap": _(
            "bubblewrap: one box per student run (own mounts, processes, network and user namespace)", lang=lang
        ),
        "container": _("the container is the box: no namespaces can be made here, resource limits only", lang=lang),
        "none": _("none: student code runs as this user, with resource limits only", lang=lang),
    }
    return words.get(mode, mode)


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


def _present(plan: Plan, subs: list[Submission]) -> list[Lab]:
    """The plan's labs that at least one submission handed in."""
    handed = {lab_id for sub in subs for lab_id in sub.files}
    return [lab for lab in plan.labs if lab.id in handed]


def _choose_backend(plan: Plan) -> None:
    """Before any student: a redis-server older than a lab needs gives way to fakeredis (``auto``), or
    stops the grading with one sentence (``redis-server`` asked for, or a lab that needs a real one)."""
    from ..check.selfcheck import backend_for

    chosen = [backend_for(lab, plan.backend, None) for lab in plan.labs]  # the instructor's language
    refusals = [note for backend, note in chosen if note and backend != "fakeredis"]
    if refusals:
        raise GradingError(refusals[0])
    notes = [note for _backend, note in chosen if note]
    if notes:
        plan.backend = "fakeredis"  # one backend for the whole class: every lab on the same kind of server
        sys.stderr.write(" ".join(notes) + " " + _("Every lab of this grading runs on fakeredis.") + "\n")


def _run(
    submissions: Path,
    out: Path,
    plan: Plan,
    root: Path | None,
    only: Student | None,
    *,
    auto_labs: bool = False,
    restart: bool = False,
    resume: bool = True,
) -> tuple[list[Submission], Outcome]:
    with _staging() as stage:
        plan.hide = tuple(
            str(p) for p in (paths.ROOT, submissions, out, stage, *([Path(root).resolve()] if root else []))
        )
        subs = collect(submissions, stage, plan.labs, lang=plan.lang, only=only)
        if auto_labs:
            present = _present(plan, subs)
            if not present:
                raise GradingError(
                    _("No submission in {path} holds a lab.py of any lab: nothing to grade.", path=submissions)
                )
            plan.labs = present
            sys.stderr.write(
                _(
                    "Grading the labs handed in: {labs} (--lab chooses others).",
                    labs=", ".join(lab.id for lab in present),
                )
                + "\n"
            )
        _choose_backend(plan)
        journal = Journal(out / "logs" / Journal.NAME, settings_key(plan))  # logs/: owner-only
        if restart:
            journal.restart()
        elif resume:
            kept, other = journal.load()
            if other and not kept:
                sys.stderr.write(
                    _(
                        "{file} was written with other grading settings (labs, limits, backend or "
                        "language): grading everything again.",
                        file=journal.path,
                    )
                    + "\n"
                )
                journal.restart()
            elif kept:
                sys.stderr.write(
                    _(
                        "Resuming: the results kept in {file} are used, the rest is graded "
                        "(--restart grades everything again).",
                        file=journal.path,
                    )
                    + "\n"
                )

        def written(i: int, outcome: Outcome) -> None:
            write_student(
                out, subs[i].student, results_of(plan, i, subs[i], outcome), feedback_lang(subs[i], plan, plan.feedback)
            )

        return subs, Grader(plan, journal, resume=resume).run(subs, on_complete=written)


def _rows(student: Student, results: list[tuple[Lab, LabResult]], lang: str) -> list[GradeRow]:
    return [
        GradeRow(student.name, lab.id, res.points, res.max_points, res.status, student.folder, lang)
        for lab, res in results
    ]


def feedback_lang(sub: Submission, plan: Plan, wanted: str | None) -> str:
    """The language of ``sub``'s feedback: ``wanted``; with ``auto`` the language of the edition its
    lab.py files came from (:func:`.names.edition_lang`), the run's language when they do not tell."""
    return (sub.lang or plan.lang) if wanted == "auto" else (wanted or plan.lang)


def _rows_of(plan: Plan, subs: list[Submission], outcome: Outcome) -> list[GradeRow]:
    return [
        row
        for sub, results in zip(subs, per_student(plan, subs, outcome))
        for row in _rows(sub.student, results, feedback_lang(sub, plan, plan.feedback))
    ]


def _finish(
    out: Path, rows: list[GradeRow], plan: Plan, outcome: Outcome, started: float, regraded: list[str] | None = None
) -> Summary:
    write_csv(out / "grades.csv", rows)
    used = next((r.backend for r in outcome.reference.values() if r.backend), plan.backend)
    used = next((r.backend for r in outcome.results.values() if r.backend), used)
    summary = Summary.from_rows(
        rows,
        seconds=time.monotonic() - started,
        workers=plan.workers,
        backend=used,
        out=out,
        reference_problems=outcome.problems,
        lang=plan.lang,
        logs=outcome.logs,
        regraded=regraded or [],
        feedback_lang=plan.feedback or plan.lang,
    )
    mode = isolation_mode(plan.isolate)
    data = {
        **summary.to_dict(),
        "isolation": mode,
        "labs": [lab.id for lab in plan.labs],
        "resumed": outcome.resumed,
        "interrupted": outcome.interrupted,
    }
    (out / "summary.json").write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    summary.isolation = describe_isolation(mode)  # type: ignore[attr-defined]  # the CLI prints it
    return summary


def _interrupted(
    out: Path, plan: Plan, subs: list[Submission], outcome: Outcome, started: float, again: str
) -> GradingInterrupted:
    """grades.csv and summary.json of the students graded so far; the sentence that says how to go on."""
    done = [i for i in range(len(subs)) if i in outcome.complete]
    rows = [
        row
        for i in done
        for row in _rows(
            subs[i].student, results_of(plan, i, subs[i], outcome), feedback_lang(subs[i], plan, plan.feedback)
        )
    ]
    _finish(out, rows, plan, outcome, started)
    return GradingInterrupted(
        _(
            "Interrupted: {done} of {runs} runs ended and are kept in {out} (grades.csv holds the {students} "
            "students graded completely). To go on, run the same command again: `{again}`; add --restart "
            "to grade everything again.",
            done=outcome.done,
            runs=outcome.runs,
            out=out,
            students=len(done),
            again=again,
        )
    )


def _remove_others(out: Path, subs: list[Submission]) -> None:
    """The files of students no longer in SUBMISSIONS (a whole-class run replaces the class)."""
    keep = {p for sub in subs for p in student_files(out, sub.student)}
    for sub_dir in (out / "feedback", out / "gradescope", out / "junit", out / "logs" / "students"):
        if not sub_dir.is_dir():
            continue
        for p in sub_dir.iterdir():
            if p not in keep:
                shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()


def require_isolation(isolate: bool) -> None:
    """Grading refuses to run students' code unisolated unless told so (``--no-isolation``)."""
    from ..sandbox.launch import mode

    if isolate and mode() == "none":
        raise GradingError(
            _(
                "Student code cannot be isolated here (install bubblewrap so that `bwrap` can make "
                "namespaces on this machine), so grading stops; pass --no-isolation to grade "
                "without isolation on purpose."
            )
        )


def grade(
    submissions: Path,
    out: Path,
    *,
    labs: list[str] | None = None,
    lang: str | None = None,
    backend: str = "auto",
    workers: int | None = None,
    limits: Limits | None = None,
    progress: bool = True,
    root: Path | None = None,
    student: str | None = None,
    isolate: bool = True,
    restart: bool = False,
    feedback_lang: str | None = None,
) -> Summary:
    """Grade SUBMISSIONS into ``out`` (or, with ``student``, regrade that one student there).
    ``isolate=False`` (``--no-isolation``) runs student code without namespaces where they are missing.
    Resumes an interrupted grading into the same ``out`` unless ``restart``.
    ``feedback_lang``: the feedback's language (default ``lang``); ``auto``: each student's edition's."""
    started = time.monotonic()
    require_isolation(isolate)
    submissions, out = Path(submissions).resolve(), Path(out).resolve()
    if student is not None:
        if labs:
            raise GradingError(_("--student regrades the labs listed in grades.csv; leave out --lab."))
        return regrade(
            submissions,
            out,
            student,
            lang=lang,
            backend=backend,
            workers=workers,
            limits=limits,
            progress=progress,
            root=root,
            isolate=isolate,
            feedback_lang=feedback_lang,
        )
    plan = Plan(
        _labs(labs, root),
        backend,
        workers or 0,
        limits,
        progress=progress,
        lang=lang or "en",
        logs=out / "logs",
        isolate=isolate,
        feedback=feedback_lang,
    )
    entries(submissions)  # an empty or missing folder is an error before RESULTS is touched
    out.mkdir(parents=True, exist_ok=True)
    subs, outcome = _run(submissions, out, plan, root, None, auto_labs=not labs, restart=restart)
    if outcome.interrupted:
        raise _interrupted(out, plan, subs, outcome, started, again=_command_line())
    _remove_others(out, subs)
    return _finish(out, _rows_of(plan, subs, outcome), plan, outcome, started)


def _command_line() -> str:
    """How this grading was started, to be typed again (without --restart)."""
    import shlex

    argv = [a for a in sys.argv[1:] if a != "--restart"]
    if argv[:1] == ["grade"]:
        return "python3 run.py " + shlex.join(argv)
    return "python3 run.py grade ..."


def _previous(out: Path) -> tuple[list[GradeRow], dict]:
    grades_csv = out / "grades.csv"
    if not grades_csv.is_file():
        raise GradingError(
            _("{out} holds no grades.csv: grade the whole class into it first, then regrade one student.", out=out)
        )
    try:
        rows = read_csv(grades_csv)
        summary = (
            json.loads((out / "summary.json").read_text(encoding="utf-8")) if (out / "summary.json").exists() else {}
        )
    except (KeyError, ValueError) as exc:
        raise GradingError(
            _("{file} cannot be read ({error}); grade the whole class again.", file=grades_csv, error=exc)
        ) from None
    return rows, summary


def _merge(old: list[GradeRow], name: str, new: list[GradeRow]) -> list[GradeRow]:
    """``old`` with ``name``'s rows replaced by ``new`` where the first of them was (appended if none)."""
    at = next((i for i, r in enumerate(old) if r.student == name), None)
    kept = [r for r in old if r.student != name]
    if at is None:
        return kept + new
    at = sum(1 for r in old[:at] if r.student != name)
    return kept[:at] + new + kept[at:]


def regrade(
    submissions: Path,
    out: Path,
    wanted: str,
    *,
    lang: str | None = None,
    backend: str = "auto",
    workers: int | None = None,
    limits: Limits | None = None,
    progress: bool = True,
    root: Path | None = None,
    isolate: bool = True,
    feedback_lang: str | None = None,
) -> Summary:
    """Grade one student again into an existing RESULTS folder; nobody else's files change."""
    started = time.monotonic()
    require_isolation(isolate)
    old_rows, previous = _previous(out)
    student = find_student(submissions, wanted)
    lab_ids = list(dict.fromkeys(r.lab for r in old_rows))
    plan = Plan(
        _labs(lab_ids, root),
        backend,
        workers or 0,
        limits,
        progress=progress,
        lang=lang or previous.get("lang") or "en",
        logs=out / "logs",
        isolate=isolate,
        feedback=feedback_lang or previous.get("feedback_lang"),
    )
    shutil.rmtree(out / "logs" / "students" / student.file, ignore_errors=True)  # this run writes them anew
    subs, outcome = _run(submissions, out, plan, root, student, resume=False)
    if outcome.interrupted and not outcome.complete:
        raise GradingInterrupted(
            _("Interrupted: {name} was not regraded; their earlier results are unchanged.", name=student.name)
        )
    if not subs:
        remove_student(out, student, logs=False)
    rows = _merge(old_rows, student.name, _rows_of(plan, subs, outcome))
    return _finish(out, rows, plan, outcome, started, regraded=[student.name])
