"""What grading writes: ``grades.csv``, Markdown feedback per student, a Gradescope ``results.json``
per student and JUnit XML per student.

Every string that comes from a student (names, exception messages, printed output, returned values
quoted in assertion messages) is treated as data: CSV cells cannot start a formula, Markdown puts it
in code blocks, XML drops characters XML cannot hold, JSON is written by ``json``.  Names are kept
exactly (see :mod:`.names`); a student's files are named by ``Student.file``, which cannot leave its
folder.  grades.csv is UTF-8 with a byte-order mark, so that Excel shows Cyrillic and Chinese names
(Python reads it with ``encoding="utf-8-sig"``, pandas and LibreOffice as it is).
"""
from __future__ import annotations

import csv
import json
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from .model import Lab
from .names import Student
from .runner import LabResult, TestResult
from .texts import t

CSV_FIELDS = ["student", "lab", "points", "max_points", "status", "folder"]
CSV_ENCODING = "utf-8-sig"  # with a BOM: Excel reads UTF-8 only then
GRADESCOPE_VISIBILITY = {"public": "visible", "hidden": "after_published"}
_XML_BAD = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


@dataclass
class GradeRow:
    """One line of grades.csv: a student's result in one lab."""
    student: str
    lab: str
    points: float
    max_points: float
    status: str
    folder: str = ""


def _cell(value: object) -> str:
    """A cell a spreadsheet shows as text: a leading ``'`` when it could start a formula (or is a ``'``)."""
    s = str(value)
    return "'" + s if s[:1] in _FORMULA_START else s


def _uncell(s: str) -> str:
    return s[1:] if s[:1] == "'" else s


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 4)


def write_csv(path: Path, rows: list[GradeRow]) -> None:
    with open(path, "w", newline="", encoding=CSV_ENCODING) as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for r in rows:
            w.writerow([_cell(r.student), r.lab, _num(r.points), _num(r.max_points), r.status, _cell(r.folder)])


def read_csv(path: Path) -> list[GradeRow]:
    """The rows of a grades.csv written by :func:`write_csv` (also one without the ``folder`` column)."""
    with open(path, newline="", encoding=CSV_ENCODING) as f:
        return [GradeRow(_uncell(d["student"]), d["lab"], float(d["points"]), float(d["max_points"]), d["status"],
                         _uncell(d.get("folder") or "")) for d in csv.DictReader(f)]


def test_output(test: TestResult, lab: Lab, lang: str) -> str:
    """What the student reads about one test: what happened and the hint (empty when it passed)."""
    if test.passed or test.outcome == "skipped":
        return "" if test.passed else test.message
    parts = [test.message.strip()] if test.message.strip() else []
    hint = lab.hint(test.hint, lang)
    if hint:
        parts.append(f"{t('hint', lang)}: {hint}")
    return "\n".join(parts)


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def feedback_markdown(student: str, results: list[tuple[Lab, LabResult]], lang: str) -> str:
    total = sum(r.points for _, r in results)
    max_total = sum(r.max_points for _, r in results)
    out = [f"# {t('feedback_title', lang, student=student)}", "", t("score_line", lang, points=total,
                                                                       max_points=max_total), ""]
    for lab, res in results:
        out += [f"## {lab.id}: {lab.title(lang)}", "",
                t("score_line", lang, points=res.points, max_points=res.max_points)
                + ("" if res.status == "ok" else f" — {t(res.status, lang)}"), ""]
        if res.status in ("missing", "import-error", "grader-error") and res.message:
            out += [_fence(res.message.strip()[:2000]), ""]
        out += [f"| {t('test', lang)} | {t('points', lang)} | {t('result', lang)} |", "|---|---|---|"]
        for test in res.tests:
            title = lab.test_title(test.name, lang).replace("|", "/") + (
                f" ({t('hidden_test', lang)})" if test.visibility == "hidden" else "")
            outcome = test.event if (test.event and not test.passed) else test.outcome
            mark = "✓" if test.passed else ("–" if test.outcome == "skipped" else "✗")
            out.append(f"| {title} | {test.points:g} / {test.max_points:g} | {mark} {t(outcome, lang)} |")
        out.append("")
        for test in res.tests:
            text = test_output(test, lab, lang)
            if text and not test.passed:
                out += [f"### ✗ {lab.test_title(test.name, lang)}", "", _fence(text), ""]
        if res.output.strip():
            out += [f"### {t('your_output', lang)}", "", _fence(res.output.strip()[-1500:]), ""]
    return "\n".join(out).rstrip() + "\n"


def gradescope_results(results: list[tuple[Lab, LabResult]], lang: str) -> dict:
    tests = []
    for lab, res in results:
        for test in res.tests:
            if test.outcome == "skipped":
                continue
            tests.append({
                "name": f"{lab.id}: {lab.test_title(test.name, lang)}", "score": _num(test.points),
                "max_score": _num(test.max_points),
                "status": "passed" if test.passed else "failed",
                "output": test_output(test, lab, lang),
                "visibility": GRADESCOPE_VISIBILITY.get(test.visibility, "after_published"),
            })
        if res.status == "missing":
            tests.append({"name": f"{lab.id}: lab.py", "score": 0, "max_score": 0, "status": "failed",
                          "output": t("missing", lang), "visibility": "visible"})
    return {"score": _num(sum(r.points for _, r in results)),
            "max_score": _num(sum(r.max_points for _, r in results)), "tests": tests}


def junit_xml(student: str, results: list[tuple[Lab, LabResult]], lang: str) -> bytes:
    clean = lambda s: _XML_BAD.sub("\ufffd", str(s))  # noqa: E731
    suites = ET.Element("testsuites", name=clean(student))
    for lab, res in results:
        counted = [x for x in res.tests]
        failures = sum(1 for x in counted if x.outcome == "failed")
        errors = sum(1 for x in counted if x.outcome in ("error", "not-run"))
        skipped = sum(1 for x in counted if x.outcome == "skipped")
        suite = ET.SubElement(suites, "testsuite", name=clean(f"{student}.{lab.id}"), tests=str(len(counted)),
                              failures=str(failures), errors=str(errors), skipped=str(skipped),
                              time=f"{res.seconds:.3f}")
        ET.SubElement(ET.SubElement(suite, "properties"), "property", name="points",
                      value=f"{res.points:g}/{res.max_points:g}")
        if res.status != "ok":
            ET.SubElement(suite.find("properties"), "property", name="status", value=res.status)
        for x in counted:
            case = ET.SubElement(suite, "testcase", classname=clean(f"{lab.id}.{x.visibility}"), name=clean(x.name),
                                 time=f"{x.duration:.3f}")
            text = clean(test_output(x, lab, lang))
            if x.outcome == "failed":
                ET.SubElement(case, "failure", message=clean((x.message or "failed").splitlines()[0][:300])).text = text
            elif x.outcome in ("error", "not-run"):
                ET.SubElement(case, "error", message=clean((x.message or x.outcome).splitlines()[0][:300])).text = text
            elif x.outcome == "skipped":
                ET.SubElement(case, "skipped", message=clean(x.message[:300]))
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True)


def student_files(out: Path, student: Student) -> list[Path]:
    """Where a student's feedback, Gradescope results, JUnit XML and logs of failed runs are."""
    return [out / "feedback" / f"{student.file}.md", out / "gradescope" / student.file,
            out / "junit" / f"{student.file}.xml", out / "logs" / "students" / student.file]


def remove_student(out: Path, student: Student, *, logs: bool = True) -> None:
    for p in student_files(out, student)[:None if logs else 3]:
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)


def write_student(out: Path, student: Student, results: list[tuple[Lab, LabResult]], lang: str) -> None:
    feedback, gs, junit, _logs = student_files(out, student)
    feedback.parent.mkdir(parents=True, exist_ok=True)
    feedback.write_text(feedback_markdown(student.name, results, lang), encoding="utf-8")
    gs.mkdir(parents=True, exist_ok=True)
    (gs / "results.json").write_text(json.dumps(gradescope_results(results, lang), ensure_ascii=False, indent=1),
                                     encoding="utf-8")
    junit.parent.mkdir(parents=True, exist_ok=True)
    junit.write_bytes(junit_xml(student.name, results, lang))
