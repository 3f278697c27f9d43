"""What grading writes: ``grades.csv``, Markdown feedback per student, a Gradescope ``results.json``
per student and JUnit XML per student.

Every string that comes from a student (names, exception messages, printed output, returned values
quoted in assertion messages) is treated as data: CSV cells cannot start a formula, Markdown puts it
in code blocks, XML drops characters XML cannot hold, JSON is written by ``json``.
"""
from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from .model import Lab
from .runner import LabResult, TestResult
from .texts import t

CSV_FIELDS = ["student", "lab", "points", "max_points", "status"]
GRADESCOPE_VISIBILITY = {"public": "visible", "hidden": "after_published"}
_XML_BAD = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _cell(value: object) -> str:
    s = str(value)
    return "'" + s if s[:1] in ("=", "+", "-", "@", "\t", "\r") else s


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 4)


def write_csv(path: Path, rows: list[tuple[str, LabResult]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for student, res in rows:
            w.writerow([_cell(student), res.lab, _num(res.points), _num(res.max_points), res.status])


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
            title = test.title.replace("|", "/") + (f" ({t('hidden_test', lang)})" if test.visibility == "hidden" else "")
            outcome = test.event if (test.event and not test.passed) else test.outcome
            mark = "✓" if test.passed else ("–" if test.outcome == "skipped" else "✗")
            out.append(f"| {title} | {test.points:g} / {test.max_points:g} | {mark} {t(outcome, lang)} |")
        out.append("")
        for test in res.tests:
            text = test_output(test, lab, lang)
            if text and not test.passed:
                out += [f"### ✗ {test.title}", "", _fence(text), ""]
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
                "name": f"{lab.id}: {test.title}", "score": _num(test.points), "max_score": _num(test.max_points),
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


def write_student(out: Path, student: str, results: list[tuple[Lab, LabResult]], lang: str) -> None:
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    (out / "feedback" / f"{student}.md").write_text(feedback_markdown(student, results, lang), encoding="utf-8")
    gs = out / "gradescope" / student
    gs.mkdir(parents=True, exist_ok=True)
    (gs / "results.json").write_text(json.dumps(gradescope_results(results, lang), ensure_ascii=False, indent=1),
                                     encoding="utf-8")
    (out / "junit").mkdir(parents=True, exist_ok=True)
    (out / "junit" / f"{student}.xml").write_bytes(junit_xml(student, results, lang))
