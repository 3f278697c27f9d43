"""What a grading run tells the instructor at the end: counts, statuses, the score distribution.

A :class:`Summary` is computed from the rows of grades.csv alone, so that regrading one student
recomputes it for the whole class.  ``render()`` speaks the instructor's language (``COURSE_LANG`` or
the locale) with the plural forms of that language; a student's name in it is plain text on one line,
at most :data:`NAME_COLUMNS` columns wide (:func:`.report.fit_columns`), so no name can steer the
instructor's terminal.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ...l10n import _, ngettext
from .report import GradeRow, fit_columns

NAME_COLUMNS = 40  # display columns of a student's name in the summary

#: How each status of a lab run is counted, in the instructor's words (plural forms of their language).
STATUS_COUNTS = {
    "ok": lambda n: ngettext("{n} lab run ended normally", "{n} lab runs ended normally", n),
    "import-error": lambda n: ngettext("{n} lab run could not be imported", "{n} lab runs could not be imported", n),
    "timeout": lambda n: ngettext("{n} lab run hit the time limit", "{n} lab runs hit the time limit", n),
    "crash": lambda n: ngettext("{n} lab run crashed", "{n} lab runs crashed", n),
    "missing": lambda n: ngettext("{n} lab had no lab.py", "{n} labs had no lab.py", n),
    "grader-error": lambda n: ngettext("{n} lab run failed in the grader", "{n} lab runs failed in the grader", n),
}


@dataclass
class Summary:
    students: int
    lab_runs: int
    seconds: float
    workers: int
    backend: str
    out: Path
    statuses: dict[str, int]
    students_timed_out: int
    students_crashed: int
    percents: list[float]
    reference_problems: list[str]
    lang: str = "en"
    students_unimportable: int = 0
    logs: int = 0
    regraded: list[dict] = field(default_factory=list)  # {student, points, max_points} of each regraded student
    feedback_lang: str = ""  # the feedback's language, or "auto": each student's edition's
    feedback_langs: dict[str, int] = field(default_factory=dict)  # language -> students whose feedback is in it

    @classmethod
    def from_rows(cls, rows: list[GradeRow], **run: object) -> "Summary":
        """Counts of the rows of grades.csv; ``run`` gives the rest (seconds, workers, backend, out...)."""
        by_student: dict[str, list[GradeRow]] = {}
        statuses: dict[str, int] = {}
        for r in rows:
            by_student.setdefault(r.student, []).append(r)
            statuses[r.status] = statuses.get(r.status, 0) + 1
        feedback_langs: dict[str, int] = {}
        for labs in by_student.values():
            if labs[0].lang:
                feedback_langs[labs[0].lang] = feedback_langs.get(labs[0].lang, 0) + 1
        percents = []
        for labs in by_student.values():
            total = sum(r.max_points for r in labs)
            percents.append(100 * sum(r.points for r in labs) / total if total else 0.0)
        regraded = [
            {
                "student": name,
                "points": sum(r.points for r in by_student.get(name, [])),
                "max_points": sum(r.max_points for r in by_student.get(name, [])),
            }
            for name in run.pop("regraded", None) or []
        ]  # type: ignore[union-attr]
        return cls(
            students=len(by_student),
            regraded=regraded,
            feedback_langs=dict(sorted(feedback_langs.items())),
            lab_runs=sum(1 for r in rows if r.status != "missing"),
            statuses=statuses,
            percents=percents,
            students_timed_out=sum(any(r.status == "timeout" for r in v) for v in by_student.values()),
            students_crashed=sum(any(r.status == "crash" for r in v) for v in by_student.values()),
            students_unimportable=sum(any(r.status == "import-error" for r in v) for v in by_student.values()),
            **run,
        )  # type: ignore[arg-type]

    @property
    def ok(self) -> bool:
        return not self.reference_problems and not self.statuses.get("grader-error")

    def distribution(self) -> list[tuple[str, int]]:
        buckets = [0] * 10
        for p in self.percents:
            buckets[min(9, int(p // 10))] += 1
        return [(f"{i * 10:3d}-{i * 10 + 9 if i < 9 else 100:3d}%", n) for i, n in enumerate(buckets)]

    def to_dict(self) -> dict:
        return {
            "students": self.students,
            "lab_runs": self.lab_runs,
            "seconds": round(self.seconds, 2),
            "workers": self.workers,
            "backend": self.backend,
            "lang": self.lang,
            "feedback_lang": self.feedback_lang or self.lang,
            "feedback_langs": self.feedback_langs,
            "statuses": self.statuses,
            "students_timed_out": self.students_timed_out,
            "students_crashed": self.students_crashed,
            "students_unimportable": self.students_unimportable,
            "distribution": dict(self.distribution()),
            "mean_percent": round(statistics.mean(self.percents), 1) if self.percents else None,
            "median_percent": round(statistics.median(self.percents), 1) if self.percents else None,
            "reference_problems": self.reference_problems,
            "failed_run_logs": self.logs,
            "regraded": self.regraded,
        }

    def _headline(self) -> str:
        if self.regraded:  # the class as grades.csv has it now; this run's time is one student's
            students = ngettext("{n} student", "{n} students", self.students)
            runs = ngettext("{n} lab run", "{n} lab runs", self.lab_runs)
            return _("grades.csv now holds {students} ({runs}).", students=students, runs=runs)
        rate = self.students / self.seconds * 60 if self.seconds else 0.0
        graded = ngettext("Graded {n} student", "Graded {n} students", self.students)
        runs = ngettext("{n} lab run", "{n} lab runs", self.lab_runs)  # apart: Babel does not extract
        workers = ngettext("{n} worker", "{n} workers", self.workers)  # a marker inside another's call
        return _(
            "{graded} ({runs}) in {seconds} s with {workers} on {backend}: {rate} per minute.",
            graded=graded,
            runs=runs,
            seconds=format(self.seconds, ".1f"),
            workers=workers,
            backend=self.backend,
            rate=format(rate, ".1f"),
        )

    def _statuses(self) -> str:
        """Students whose code timed out, crashed or could not be imported, then lab runs by status:
        each a count with the plural form of the instructor's language; zero counts are left out."""
        parts = [
            ngettext("{n} student timed out", "{n} students timed out", self.students_timed_out),
            ngettext("{n} student crashed", "{n} students crashed", self.students_crashed),
            ngettext(
                "{n} student's code could not be imported",
                "{n} students' code could not be imported",
                self.students_unimportable,
            ),
        ]
        parts = [
            p for p, n in zip(parts, (self.students_timed_out, self.students_crashed, self.students_unimportable)) if n
        ]
        runs = []
        for status, n in sorted(self.statuses.items()):
            if status in STATUS_COUNTS:
                runs.append(STATUS_COUNTS[status](n))
            else:
                runs.append(f"{status} {n}")
        return "   ".join(parts + [_("Lab runs: {list}", list=", ".join(runs))])

    def render(self) -> str:
        d = self.to_dict()
        lines = [
            _(
                "Regraded {student}: {points} of {max_points} points.",
                student=fit_columns(r["student"], NAME_COLUMNS),
                points=format(r["points"], "g"),
                max_points=format(r["max_points"], "g"),
            )
            for r in self.regraded
        ]
        lines += [self._headline(), self._statuses(), _("Score distribution (percent of the maximum):")]
        top = max((n for _label, n in self.distribution()), default=0) or 1
        for label, n in self.distribution():
            lines.append(f"  {label}  {'█' * round(20 * n / top):<20} {n}")
        if self.percents:
            lines.append("  " + _("mean {mean}%, median {median}%", mean=d["mean_percent"], median=d["median_percent"]))
        if self.feedback_lang == "auto" and self.feedback_langs:
            lines.append(
                _(
                    "Feedback in each student's language: {counts}.",
                    counts=", ".join(f"{lang} {n}" for lang, n in self.feedback_langs.items()),
                )
            )
        lines += [_("Warning: {problem}", problem=p) for p in self.reference_problems]
        lines.append(_("Written to {out}: grades.csv, feedback/, gradescope/, junit/, summary.json.", out=self.out))
        if self.logs:
            lines.append(
                ngettext(
                    "The grader's log of {n} failed run is in logs/.",
                    "The grader's logs of {n} failed runs are in logs/.",
                    self.logs,
                )
            )
        return "\n".join(lines)
