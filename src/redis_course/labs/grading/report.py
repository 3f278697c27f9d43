"""What grading writes: ``grades.csv``, Markdown feedback per student, a Gradescope ``results.json``
per student and JUnit XML per student.

Every string that comes from a student (names, exception messages, printed output, returned values
quoted in assertion messages) is data, wherever it lands:

* **grades.csv**: no piece of a cell can start a formula, whichever list separator the spreadsheet
  splits on (``,`` ``;`` ``|`` or a tab; a Russian or German Excel splits on ``;``): a ``'`` goes before
  every ``= + - @`` (or ``'``) that begins the cell or follows a separator, spaces or quotes
  (:func:`csv_cell`; :func:`csv_uncell` takes them out again).  Numbers are written as numbers.
* **Markdown**: a name is escaped character by character (:func:`md_inline`), every other student
  text sits in a fence longer than any run of backticks inside it (:func:`md_fence`), so no student
  Markdown or HTML is ever read as such.
* **the terminal** (and every file, since feedback is also read with ``cat``): no control character,
  escape sequence (CSI, OSC such as OSC 52 that writes the clipboard, DCS...), C1 control or bidi
  override or isolate survives (:func:`..check.texts.plain_text`, which ``course check`` uses too);
  :func:`fit_columns` cuts to a display width.
* **JUnit XML and results.json**: characters XML cannot hold are dropped and every string is bounded;
  results.json has only the top-level fields of Gradescope's specification (:data:`GRADESCOPE_FIELDS`).
* **a grader error** shows the student one fixed sentence in their language and a short id; the
  grader's own message (a traceback, a command line, the machine's paths) goes to the grading log
  under that id (:func:`grader_error_id`).

Names are kept exactly (see :mod:`.names`); a student's files are named by ``Student.file``, which
cannot leave its folder.  grades.csv is UTF-8 with a byte-order mark, so that Excel shows Cyrillic
and Chinese names (Python reads it with ``encoding="utf-8-sig"``, pandas and LibreOffice as it is).
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import wcwidth

from ...l10n import _
from ..authoring.model import Lab
from .names import Student
from ..engine.runner import LabResult, TestResult
from ..check.texts import plain_text, t

CSV_FIELDS = ["student", "lab", "points", "max_points", "status", "folder", "lang"]
CSV_ENCODING = "utf-8-sig"  # with a BOM: Excel reads UTF-8 only then
CSV_SEPARATORS = ",;|\t"  # what a spreadsheet may split a line on (its locale's list separator)
GRADESCOPE_VISIBILITY = {"public": "visible", "hidden": "after_published"}
#: The top-level fields of results.json in Gradescope's specification (gradescope-autograders.readthedocs.io).
GRADESCOPE_FIELDS = frozenset(
    {
        "score",
        "execution_time",
        "output",
        "output_format",
        "test_output_format",
        "test_name_format",
        "visibility",
        "stdout_visibility",
        "extra_data",
        "tests",
        "leaderboard",
    }
)
MAX_NAME = 300  # characters of a name or title in an XML attribute or a JSON string
MAX_MESSAGE = 4000  # characters of one test's message
MAX_OUTPUT = 1500  # characters of the end of what a student's code printed

# A piece of a cell starts at the cell's start or after a separator or line break, then any spaces
# and quotes (which spreadsheets may strip); there a formula would begin with = + - @.
_PIECE_START = r"(^|[,;|\t\r\n])([\s\"]*)"
_CELL_RISK = re.compile(_PIECE_START + r"(?=[=+\-@'])")
_CELL_MARK = re.compile(_PIECE_START + r"'")
_MD_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # ASCII punctuation: CommonMark lets each be escaped
_ID_KEY = secrets.token_bytes(16)  # grader-error ids: the same within a run, and say nothing of the message


@dataclass
class GradeRow:
    """One line of grades.csv: a student's result in one lab."""

    student: str
    lab: str
    points: float
    max_points: float
    status: str
    folder: str = ""
    lang: str = ""  # the language of the student's feedback


# ------------------------------------------------------------------------------------ the terminal
def fit_columns(text: str, columns: int) -> str:
    """``text`` on one line of a terminal: plain, cut to ``columns`` display columns (a Chinese
    character takes two, a combining accent none: wcwidth's tables), with ``…`` where cut."""
    s = plain_text(text, one_line=True)
    if wcwidth.width(s) <= columns:
        return s
    return wcwidth.clip(s, 0, max(0, columns - 1)) + "…"


# ------------------------------------------------------------------------------------ grades.csv
def csv_cell(value: object) -> str:
    """A cell that no spreadsheet reads as a formula, whatever its list separator (see the module)."""
    return _CELL_RISK.sub(lambda m: m.group(1) + m.group(2) + "'", str(value))


def csv_uncell(s: str) -> str:
    """The text :func:`csv_cell` was given."""
    return _CELL_MARK.sub(lambda m: m.group(1) + m.group(2), s)


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 4)


def write_csv(path: Path, rows: list[GradeRow]) -> None:
    with open(path, "w", newline="", encoding=CSV_ENCODING) as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for r in rows:
            w.writerow(
                [
                    csv_cell(r.student),
                    csv_cell(r.lab),
                    _num(r.points),
                    _num(r.max_points),
                    csv_cell(r.status),
                    csv_cell(r.folder),
                    csv_cell(r.lang),
                ]
            )


def read_csv(path: Path) -> list[GradeRow]:
    """The rows of a grades.csv written by :func:`write_csv` (also one without ``folder`` or ``lang``)."""
    with open(path, newline="", encoding=CSV_ENCODING) as f:
        return [
            GradeRow(
                csv_uncell(d["student"]),
                csv_uncell(d["lab"]),
                float(d["points"]),
                float(d["max_points"]),
                csv_uncell(d["status"]),
                csv_uncell(d.get("folder") or ""),
                csv_uncell(d.get("lang") or ""),
            )
            for d in csv.DictReader(f)
        ]


# ------------------------------------------------------------------------------------ grader errors
def grader_error_id(lab_id: str, res: LabResult) -> str:
    """The short id a grader error is known by in this run: in the student's feedback, and beside the
    grader's message in the grading log (a keyed hash: it tells nothing of the message)."""
    data = f"{lab_id}\0{res.message}".encode("utf-8", "surrogatepass")
    return hmac.new(_ID_KEY, data, hashlib.sha256).hexdigest()[:10]


def grader_error_note(lab_id: str, res: LabResult, lang: str) -> str:
    """What a student reads about a grader error: a fixed sentence and the id, nothing of the grader."""
    return _(
        "The grader failed on this lab, so it has no grade yet. This is not a message about your "
        "code; give your instructor this id: {id}.",
        id=grader_error_id(lab_id, res),
        lang=lang,
    )


def grader_error_log(lab_id: str, res: LabResult) -> str:
    """The grading log's entry for a grader error: its id, then the grader's own message."""
    return f"grader-error {grader_error_id(lab_id, res)} ({lab_id}):\n{res.message}\n"


def _log_grader_errors(folder: Path, results: list[tuple[Lab, LabResult]]) -> None:
    errors = [(lab, res) for lab, res in results if res.status == "grader-error"]
    if not errors:
        return
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for lab, res in errors:
        fd = os.open(folder / f"{lab.id}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as f:
            f.write("\n" + grader_error_log(lab.id, res))


# ------------------------------------------------------------------------------------ feedback
def test_output(test: TestResult, lab: Lab, lang: str) -> str:
    """What the student reads about one test: what happened and the hint (empty when it passed)."""
    if test.passed or test.outcome == "skipped":
        return "" if test.passed else plain_text(test.message, limit=MAX_MESSAGE)
    message = plain_text(test.message, limit=MAX_MESSAGE).strip()
    parts = [message] if message else []
    hint = lab.hint(test.hint, lang)
    if hint:
        parts.append(f"{t('hint', lang)}：{hint}" if lang == "zh" else f"{t('hint', lang)}: {hint}")
    return "\n".join(parts)


def md_inline(text: str) -> str:
    """``text`` as literal Markdown text on one line: every ASCII punctuation character escaped, so
    no emphasis, link, heading, table cell, entity or HTML can start in it."""
    return _MD_PUNCT.sub(r"\\\1", plain_text(text, one_line=True)).strip() or "\\_"


def md_fence(text: str) -> str:
    """``text`` (plain) in a fenced code block that nothing inside can close: the fence is longer
    than the longest run of backticks in it."""
    text = plain_text(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def feedback_markdown(student: str, results: list[tuple[Lab, LabResult]], lang: str) -> str:
    total = sum(r.points for _lab, r in results)
    max_total = sum(r.max_points for _lab, r in results)
    out = [
        f"# {t('feedback_title', lang, student=md_inline(student))}",
        "",
        t("score_line", lang, points=total, max_points=max_total),
        "",
    ]
    for lab, res in results:
        out += [
            f"## {lab.id}: {lab.title(lang)}",
            "",
            t("score_line", lang, points=res.points, max_points=res.max_points)
            + ("" if res.status == "ok" else f" — {t(res.status, lang)}"),
            "",
        ]
        if res.status == "grader-error":
            out += [grader_error_note(lab.id, res, lang), ""]
        elif res.status in ("missing", "import-error") and res.message:
            out += [md_fence(plain_text(res.message, limit=2000).strip()), ""]
        out += [f"| {t('test', lang)} | {t('points', lang)} | {t('result', lang)} |", "|---|---|---|"]
        for test in res.tests:
            title = lab.test_title(test.name, lang).replace("|", "/") + (
                f" ({t('hidden_test', lang)})" if test.visibility == "hidden" else ""
            )
            outcome = test.event if (test.event and not test.passed) else test.outcome
            mark = "✓" if test.passed else ("–" if test.outcome == "skipped" else "✗")
            out.append(f"| {title} | {test.points:g} / {test.max_points:g} | {mark} {t(outcome, lang)} |")
        out.append("")
        for test in res.tests:
            text = test_output(test, lab, lang)
            if text and not test.passed:
                out += [f"### ✗ {lab.test_title(test.name, lang)}", "", md_fence(text), ""]
        if res.output.strip():
            out += [
                f"### {t('your_output', lang)}",
                "",
                md_fence(plain_text(res.output.strip(), limit=MAX_OUTPUT, tail=True)),
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------------------------ Gradescope
def gradescope_results(results: list[tuple[Lab, LabResult]], lang: str) -> dict:
    """results.json: only fields of Gradescope's specification, every string plain and bounded."""
    tests = []
    for lab, res in results:
        for test in res.tests:
            if test.outcome == "skipped":
                continue
            tests.append(
                {
                    "name": plain_text(f"{lab.id}: {lab.test_title(test.name, lang)}", one_line=True, limit=MAX_NAME),
                    "score": _num(test.points),
                    "max_score": _num(test.max_points),
                    "status": "passed" if test.passed else "failed",
                    "output": test_output(test, lab, lang),
                    "visibility": GRADESCOPE_VISIBILITY.get(test.visibility, "after_published"),
                }
            )
        note = {"missing": lambda: t("missing", lang), "grader-error": lambda: grader_error_note(lab.id, res, lang)}
        if res.status in note:
            tests.append(
                {
                    "name": f"{lab.id}: lab.py",
                    "score": 0,
                    "max_score": 0,
                    "status": "failed",
                    "output": note[res.status](),
                    "visibility": "visible",
                }
            )
    return {"score": _num(sum(r.points for _lab, r in results)), "tests": tests}


# ------------------------------------------------------------------------------------ JUnit
def junit_xml(student: str, results: list[tuple[Lab, LabResult]], lang: str) -> bytes:
    """JUnit XML that any XML parser reads: ElementTree escapes, :func:`plain_text` drops what XML
    cannot hold at all, and every attribute is bounded."""

    def attr(s: object) -> str:
        return plain_text(s, one_line=True, limit=MAX_NAME)

    suites = ET.Element("testsuites", name=attr(student))
    for lab, res in results:
        counted = list(res.tests)
        failures = sum(1 for x in counted if x.outcome == "failed")
        errors = sum(1 for x in counted if x.outcome in ("error", "not-run"))
        skipped = sum(1 for x in counted if x.outcome == "skipped")
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=attr(f"{student}.{lab.id}"),
            tests=str(len(counted)),
            failures=str(failures),
            errors=str(errors),
            skipped=str(skipped),
            time=f"{res.seconds:.3f}",
        )
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="points", value=f"{res.points:g}/{res.max_points:g}")
        if res.status != "ok":
            ET.SubElement(props, "property", name="status", value=res.status)
        if res.status == "grader-error":
            ET.SubElement(props, "property", name="grader-error", value=grader_error_id(lab.id, res))
        for x in counted:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=attr(f"{lab.id}.{x.visibility}"),
                name=attr(x.name),
                time=f"{x.duration:.3f}",
            )
            text = test_output(x, lab, lang)
            first = (plain_text(x.message or "").strip().splitlines() or [""])[0]
            if x.outcome == "failed":
                ET.SubElement(case, "failure", message=attr(first or "failed")).text = text
            elif x.outcome in ("error", "not-run"):
                ET.SubElement(case, "error", message=attr(first or x.outcome)).text = text
            elif x.outcome == "skipped":
                ET.SubElement(case, "skipped", message=attr(first))
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True)


# ------------------------------------------------------------------------------------ files
def student_files(out: Path, student: Student) -> list[Path]:
    """Where a student's feedback, Gradescope results, JUnit XML and logs of failed runs are."""
    return [
        out / "feedback" / f"{student.file}.md",
        out / "gradescope" / student.file,
        out / "junit" / f"{student.file}.xml",
        out / "logs" / "students" / student.file,
    ]


def remove_student(out: Path, student: Student, *, logs: bool = True) -> None:
    for p in student_files(out, student)[: None if logs else 3]:
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)


def write_student(out: Path, student: Student, results: list[tuple[Lab, LabResult]], lang: str) -> None:
    feedback, gs, junit, logs = student_files(out, student)
    _log_grader_errors(logs, results)
    feedback.parent.mkdir(parents=True, exist_ok=True)
    feedback.write_text(feedback_markdown(student.name, results, lang), encoding="utf-8")
    gs.mkdir(parents=True, exist_ok=True)
    (gs / "results.json").write_text(
        json.dumps(gradescope_results(results, lang), ensure_ascii=False, indent=1), encoding="utf-8"
    )
    junit.parent.mkdir(parents=True, exist_ok=True)
    junit.write_bytes(junit_xml(student.name, results, lang))
