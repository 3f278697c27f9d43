"""Student text is data wherever grading writes it: grades.csv under any list separator, feedback
Markdown, the terminal, JUnit XML and Gradescope's results.json.

Properties over arbitrary Unicode (Hypothesis, with the fragments attacks use mixed in), then one
class graded end to end whose folder names are a formula and an OSC 52 clipboard write with HTML.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import wcwidth
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from redis_course.labs.grading import report
from redis_course.labs.grading.autograder import results_json
from redis_course.labs.grading.grade import grade
from redis_course.labs.authoring.model import discover, find_lab
from redis_course.labs.grading.names import as_text, assign, edition_lang, escape_entry
from redis_course.labs.check.texts import plain_text
from redis_course.labs.grading.report import GRADESCOPE_FIELDS, GradeRow, csv_cell, csv_uncell
from redis_course.labs.engine.runner import LabResult, TestResult
from redis_course.labs.authoring.starter import make_starter, translate_docstrings
from redis_course.labs.grading.summary import Summary

LAB = find_lab("00")
FORMULA = tuple("=+-@")
OSC52 = "\x1b]52;c;ZXZpbA==\x07"
HTML = "<img src=x onerror=alert(1)>"
ATTACKS = [
    OSC52,
    "\x1b]52;c;ZXZpbA==\x1b\\",
    "\x1b[2J\x1b[31m",
    "\x9b31m",
    "\x9d52;c;eA==\x9c",
    "\x1bP1$r\x1b\\",
    "\u202e",
    "\u2066",
    "\u200f",
    "\r",
    "\x00",
    "\x7f",
    "\x85",
    "\ud800",
    "\ufffe",
    "\U0010ffff",
    "\t",
    "```",
    "````",
    "~~~",
    HTML,
    "<script>",
    "&lt;",
    "**Score: 8 of 8**",
    "[x](javascript:alert(1))",
    "# h",
    "| a |",
    "\n\n",
    "=1+1",
    ";@SUM(2+2)",
    "|=cmd|'\\C calc'!A0",
    "\t=",
    "\r\n-",
    '"=',
    " +",
    "'",
    ",",
    ";",
    "|",
    "\\",
    "]]>",
    "\u0301",
    "王",
    "й",
    "\u2028",
]
# Any code point, lone surrogates included, with the attacks' fragments mixed in.
ANY_CHAR = st.characters(exclude_categories=())
TEXT = st.lists(st.one_of(st.sampled_from(ATTACKS), st.text(ANY_CHAR, max_size=8)), max_size=12).map("".join)
FOLDER = st.binary(min_size=1, max_size=60).filter(lambda b: b"/" not in b and b"\0" not in b).map(
    os.fsdecode
) | TEXT.filter(lambda s: s and "/" not in s and "\0" not in s and not any("\ud800" <= c <= "\udfff" for c in s))
# (a folder's name is what the file system gives: its only lone surrogates are the escapes of bytes
# that are not UTF-8, which the binary branch makes)
PROPERTY = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, database=None
)  # the same examples on every run: a red CI says something about the code

# What steers a terminal or the direction of text: no file grading writes may hold one.
STEERING = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udfff]"
)


def pieces(raw: str, sep: str) -> list[str]:
    """Every cell a spreadsheet could make of ``raw`` splitting on ``sep`` and line breaks, ignoring
    quotes (the strictest reading), with the spaces and quotes it might strip taken off."""
    return [p.lstrip().lstrip('"').lstrip() for line in re.split(r"\r\n|\r|\n", raw) for p in line.split(sep)]


def formula_cells(raw: str) -> list[tuple[str, str]]:
    bad = []
    for sep in report.CSV_SEPARATORS:
        for p in pieces(raw, sep):
            q = p
            while q[:1] in ('"', " ") and q:  # quotes and spaces in any order
                q = q[1:]
            if q.startswith(FORMULA):
                bad.append((sep, p))
    return bad


def steering(text: str) -> list[str]:
    return STEERING.findall(text)


def unescape_entry(shown: str) -> str:
    """The entry name :func:`escape_entry` shows (the test's own reading of its escapes)."""
    out, i, raw = [], 0, bytearray()

    def flush():
        if raw:
            out.append(os.fsdecode(bytes(raw)))
            raw.clear()

    while i < len(shown):
        if shown[i] == "\\":
            kind = shown[i + 1]
            if kind == "\\":
                flush(), out.append("\\")
                i += 2
            elif kind == "x":
                raw += bytes([int(shown[i + 2 : i + 4], 16)])
                i += 4
            else:
                n = 4 if kind == "u" else 8
                flush(), out.append(chr(int(shown[i + 2 : i + 2 + n], 16)))
                i += 2 + n
        else:
            flush()
            out.append(shown[i])
            i += 1
    flush()
    return os.fsdecode(os.fsencode("".join(out)))


# ------------------------------------------------------------------------------------ grades.csv
@PROPERTY
@given(
    st.lists(
        st.tuples(
            FOLDER,
            TEXT.map(lambda s: s.encode("utf-8", "replace").decode("utf-8")),
            st.floats(0, 1000, allow_nan=False),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_no_cell_starts_a_formula_after_any_separator_and_every_row_reads_back(tmp_path_factory, entries):
    students = assign([(folder, "dir") for folder, _text, _p in entries])
    rows = [
        GradeRow(s.name, "00-demo", points, 8, text, s.folder, "ru")  # any text in a cell, not only names
        for s, (_f, text, points) in zip(students, entries)
    ]
    path = tmp_path_factory.mktemp("csv") / "grades.csv"
    report.write_csv(path, rows)
    raw = path.read_bytes().decode("utf-8-sig")
    assert formula_cells(raw) == []
    assert report.read_csv(path) == [
        GradeRow(r.student, r.lab, float(report._num(r.points)), r.max_points, r.status, r.folder, r.lang) for r in rows
    ]
    for line in list(csv.reader(io.StringIO(raw)))[1:]:  # the numbers are numbers, not text
        float(line[2]), float(line[3])
        assert re.fullmatch(r"\d+(\.\d+)?", line[2]) and line[3] == "8"


@PROPERTY
@given(TEXT)
def test_a_cell_reads_back_exactly(text):
    assert csv_uncell(csv_cell(text)) == text


def test_the_attacks_of_the_gradebook_are_neutralised():
    for name in ["=1+1;@SUM(2+2)", "=cmd|'\\C calc'!A0", "a;=1", "a,+1", "a|-1", "a\t@x", 'a;"=1', "a; =1"]:
        assert formula_cells(csv_cell(name)) == [], name
    assert csv_cell("=1+1;@SUM(2+2)") == "'=1+1;'@SUM(2+2)"


# ------------------------------------------------------------------------------------ names
@PROPERTY
@given(FOLDER)
def test_the_folder_column_is_the_entrys_bytes_and_never_steers_a_terminal(folder):
    shown = escape_entry(folder)
    assert unescape_entry(shown) == folder and not steering(shown)
    assert not steering(as_text(folder))


def test_nfc_and_nfd_twins_show_different_folders():
    nfc, nfd = unicodedata.normalize("NFC", "Йорик"), unicodedata.normalize("NFD", "Йорик")
    twins = assign([(nfc, "dir"), (nfd, "dir")])
    assert [s.folder for s in twins] == ["Йорик", "И\\u0306орик"]
    assert [s.name for s in twins] == ["Йорик", "Йорик (2)"]
    assert escape_entry(os.fsdecode(b"bad-\xff")) == "bad-\\xff" and escape_entry("a\\u0306") == "a\\\\u0306"


# ------------------------------------------------------------------------------------ Markdown
def result_with(message: str, output: str, status: str = "ok") -> LabResult:
    tests = [
        TestResult("test_first_view_is_one", "public", 2, 2, "passed", "first-view"),
        TestResult("test_reset_returns_count_and_clears", "public", 0, 1, "failed", "reset", message),
        TestResult("test_posts_are_counted_separately_hidden", "hidden", 0, 2, "error", None, message, "crash"),
    ]
    return LabResult("00-demo", status, tests, backend="fakeredis", message=message, output=output)


def fenced_texts(md: str) -> tuple[list[str], list]:
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    return [t.content for t in tokens if t.type == "fence"], tokens


def expected_fences(res: LabResult, lang: str) -> list[str]:
    """What the feedback should fence: each failed test's message and hint, then the output's end."""
    fenced = [text for test in res.tests if (text := report.test_output(test, LAB, lang)) and not test.passed]
    if res.output.strip():
        fenced.append(plain_text(res.output.strip(), limit=report.MAX_OUTPUT, tail=True))
    return fenced


def check_markdown(md: str, name: str, fenced: list[str]) -> None:
    """Only the course's own Markdown: the name is plain text in the title, every student text is the
    whole content of one fence, nothing is HTML, nothing steers a terminal."""
    assert not steering(md)
    contents, tokens = fenced_texts(md)
    assert [c.rstrip("\n") for c in contents] == [plain_text(f).rstrip("\n") for f in fenced]
    assert not [t for t in tokens if t.type.startswith("html")]
    inline = [t for t in tokens if t.type == "inline"]
    assert not [c for t in inline for c in t.children if c.type.startswith("html") or c.type in ("link_open", "image")]
    title = inline[0].children
    assert [c.type for c in title] == ["text"] and plain_text(name, one_line=True).strip() in title[0].content


@PROPERTY
@given(FOLDER, TEXT, TEXT, st.sampled_from(["en", "ru", "zh"]))
def test_feedback_escapes_the_name_and_fences_every_student_text(folder, message, output, lang):
    student = assign([(folder, "dir")])[0]
    res = result_with(message, output)
    md = report.feedback_markdown(student.name, [(LAB, res)], lang)
    check_markdown(md, student.name, expected_fences(res, lang))
    assert LAB.hint("reset", lang) in md


def test_a_name_with_markdown_and_html_is_only_text():
    md = report.feedback_markdown(OSC52 + HTML + "**Score: 8 of 8**", [(LAB, result_with("", ""))], "en")
    assert "<img" not in MarkdownIt("commonmark").render(md).replace("&lt;img", "")
    check_markdown(md, OSC52 + HTML + "**Score: 8 of 8**", expected_fences(result_with("", ""), "en"))


# ------------------------------------------------------------------------------------ grader errors
GRADER_MESSAGE = (
    "pytest exit code 3\nINTERNALERROR> Traceback (most recent call last):\n"
    'INTERNALERROR>   File "/root/course/src/redis_course/labs/engine/runner.py", line 9\n'
    "/usr/bin/python3 -m pytest -p redis_course.labs.engine.pytest_plugin /srv/hidden/test_x.py\n"
    "GITHUB_TOKEN=ghp_secret"
)


@pytest.mark.parametrize("lang", ["en", "ru", "zh"])
def test_a_grader_error_shows_a_fixed_sentence_and_an_id_found_in_the_log(tmp_path, lang):
    student = assign([("alice", "dir")])[0]
    res = LabResult("00-demo", "grader-error", message=GRADER_MESSAGE)
    report.write_student(tmp_path, student, [(LAB, res)], lang)
    eid = report.grader_error_id(LAB.id, res)
    shown = {
        "feedback": (tmp_path / "feedback" / "alice.md").read_text(encoding="utf-8"),
        "gradescope": (tmp_path / "gradescope" / "alice" / "results.json").read_text(encoding="utf-8"),
        "junit": (tmp_path / "junit" / "alice.xml").read_text(encoding="utf-8"),
    }
    for where, text in shown.items():
        assert eid in text, where
        for secret in ("Traceback", "INTERNALERROR", "/root", "/usr/bin", "pytest", "runner.py", "ghp_secret", "/srv"):
            assert secret not in text, (where, secret)
    note = report.grader_error_note(LAB.id, res, lang)
    assert note in shown["feedback"] and (lang == "en") == note.startswith("The grader failed")
    log = (tmp_path / "logs" / "students" / "alice" / "00-demo.log").read_text(encoding="utf-8")
    assert f"grader-error {eid}" in log and "ghp_secret" in log
    assert oct((tmp_path / "logs" / "students" / "alice" / "00-demo.log").stat().st_mode & 0o777) == "0o600"


# ------------------------------------------------------------------------------------ terminal
@PROPERTY
@given(TEXT, st.integers(1, 60))
def test_terminal_text_holds_no_control_and_fits_its_columns(text, columns):
    assert not steering(plain_text(text)) and "\x1b" not in plain_text(text)
    line = report.fit_columns(text, columns)
    assert not steering(line) and "\n" not in line and wcwidth.width(line) <= columns


@pytest.mark.parametrize(
    "sequence",
    [
        OSC52,
        "\x1b]52;c;ZXZpbA==\x1b\\",
        "\x1b[2J\x1b[31m",
        "\x1b[?1049h",
        "\x1b]8;;http://e/\x1b\\",
        "\x1bP1$r\x1b\\",
        "\x9b31m",
        "\x9d52;c;eA==\x9c",
        "\x9d52;c;eA==\x07",
        "\x90q\x1b\\",
        "\u202e",
        "\u2066",
        "\u2069",
        "\x07\x08\r",
    ],
)
def test_escape_sequences_go_whole_not_only_their_escape(sequence):
    assert plain_text(f"a{sequence}b") == "a\nb" if "\r" in sequence else plain_text(f"a{sequence}b") == "ab"


@PROPERTY
@given(st.lists(FOLDER, min_size=1, max_size=3))
def test_the_summary_prints_no_control_from_any_name(folders):
    students = assign([(f, "dir") for f in folders])
    rows = [GradeRow(s.name, "00-demo", 1, 8, "ok", s.folder, "en") for s in students]
    summary = Summary.from_rows(
        rows,
        seconds=1.0,
        workers=1,
        backend="fakeredis",
        out=Path("results"),
        reference_problems=[],
        regraded=[s.name for s in students],
        feedback_lang="auto",
    )
    text = summary.render()
    assert not steering(text.replace("\n", "")) and "Feedback in each student's language: en" in text


# ------------------------------------------------------------------------------------ JUnit, Gradescope
@PROPERTY
@given(FOLDER, TEXT, TEXT, st.sampled_from(["ok", "timeout", "grader-error", "import-error"]))
def test_junit_parses_and_results_json_keeps_to_gradescopes_fields(folder, message, output, status):
    student = assign([(folder, "dir")])[0]
    res = result_with(message, output, status)
    root = ET.fromstring(report.junit_xml(student.name, [(LAB, res)], "en"))  # expat: a real XML parser
    assert root.get("name") == plain_text(student.name, one_line=True, limit=report.MAX_NAME)
    for el in root.iter():
        assert all(len(v) <= report.MAX_NAME for v in el.attrib.values())
        assert not steering((el.text or "").replace("\n", ""))
    for data in (report.gradescope_results([(LAB, res)], "ru"), results_json(LAB, res, "zh", 1.5)):
        raw = json.dumps(data, ensure_ascii=False).encode("utf-8")  # no lone surrogate: it would not encode
        back = json.loads(raw)
        assert set(back) <= GRADESCOPE_FIELDS and "max_score" not in back
        for test in back["tests"]:
            assert set(test) <= {
                "score",
                "max_score",
                "status",
                "name",
                "name_format",
                "number",
                "output",
                "output_format",
                "tags",
                "visibility",
                "extra_data",
            }
            assert len(test["name"]) <= report.MAX_NAME and len(test["output"]) <= report.MAX_MESSAGE + 1000
            assert not steering(test["output"].replace("\n", "") + test["name"])


# ------------------------------------------------------------------------------------ edition language
@pytest.mark.parametrize("lang", ["en", "ru", "zh"])
def test_the_edition_language_is_read_from_the_lab_files(lang):
    labs = discover()
    starters = {lab.id: lab.starter_file for lab in labs}
    for lab in labs:
        released = translate_docstrings(make_starter(lab.solution_file.read_text(encoding="utf-8")), lang)
        assert edition_lang({lab.id: released.encode()}, starters) == lang, lab.id
    assert edition_lang({LAB.id: b"def count_view(r, post_id):\n    return 1\n"}, starters) is None


# ------------------------------------------------------------------------------------ end to end
FORMULA_FOLDER = "=1+1;@SUM(2+2)"
OSC_FOLDER = OSC52 + HTML
NASTY = OSC52 + "\x9b2J ``` " + HTML + " ;=1+1 |@SUM(1) \u202eevil\u2066"


@pytest.fixture(scope="module")
def nasty_class(tmp_path_factory):
    base = tmp_path_factory.mktemp("nasty")
    subs, out = base / "submissions", base / "results"
    solution = LAB.solution_file.read_text(encoding="utf-8")
    for folder, lang in ((FORMULA_FOLDER, "ru"), (OSC_FOLDER, "zh")):
        (subs / folder / "00-demo").mkdir(parents=True)
        source = translate_docstrings(solution, lang) + (
            f"\nprint({NASTY!r})\n\n\ndef reset(r, post_id):\n    raise ValueError({NASTY!r})\n"
        )
        (subs / folder / "00-demo" / "lab.py").write_text(source, encoding="utf-8")
    summary = grade(subs, out, labs=["00-demo"], progress=False, workers=2, feedback_lang="auto")
    return out, summary


def test_the_nasty_class_is_graded_and_every_output_file_is_safe(nasty_class):
    out, summary = nasty_class
    raw = (out / "grades.csv").read_bytes().decode("utf-8-sig")
    assert formula_cells(raw) == [] and not steering(raw.replace("\r\n", ""))
    rows = report.read_csv(out / "grades.csv")
    assert {r.student for r in rows} == {FORMULA_FOLDER, as_text(OSC_FOLDER)}
    assert {r.folder for r in rows} == {FORMULA_FOLDER, "\\u001b]52;c;ZXZpbA==\\u0007" + HTML}
    assert {r.student: r.lang for r in rows} == {FORMULA_FOLDER: "ru", as_text(OSC_FOLDER): "zh"}
    assert all(0 < r.points < r.max_points and r.status == "ok" for r in rows), rows
    files = [p for p in out.rglob("*") if p.is_file() and "logs" not in p.relative_to(out).parts]
    assert len(files) == 1 + 1 + 3 * 2, files  # grades.csv, summary.json, 3 per student
    for p in files:
        text = p.read_text(encoding="utf-8")
        assert not steering(text.replace("\r\n", "").replace("\n", "")), p
        assert "\x1b" not in text and "\ufeff" not in text[1:], p
    for p in (out / "feedback").iterdir():
        md = p.read_text(encoding="utf-8")
        name = next(r.student for r in rows if report.md_inline(r.student) in md.splitlines()[0])
        contents, tokens = fenced_texts(md)
        assert not [t for t in tokens if t.type.startswith("html")]
        assert sum(plain_text(NASTY) in c for c in contents) >= 2, contents  # the message and the output
        assert ("Результаты проверки" if name == FORMULA_FOLDER else "的反馈") in md
        assert HTML not in MarkdownIt("commonmark").enable("table").render(md)
    for p in (out / "junit").iterdir():
        suites = ET.parse(p).getroot()
        assert suites.get("name") in {r.student for r in rows}
        assert suites.findall(".//failure") or suites.findall(".//error")
    for p in (out / "gradescope").rglob("results.json"):
        data = json.loads(p.read_text(encoding="utf-8"))
        assert set(data) <= GRADESCOPE_FIELDS and data["score"] > 0
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["feedback_langs"] == {"ru": 1, "zh": 1}
    assert not steering(summary.render().replace("\n", ""))
    runs = (out / "logs" / "runs.jsonl").read_bytes()  # the instructor's log, read with cat or tail
    assert runs.isascii(), runs[:300]
    # one line a run: the two students and the reference solution's run (who: "")
    assert sorted(bool(json.loads(line)["who"]) for line in runs.splitlines()) == [False, True, True]


def test_a_regrade_keeps_the_feedback_language_and_the_neutralised_cells(nasty_class, tmp_path):
    out, _summary = nasty_class
    copy = tmp_path / "results"
    shutil.copytree(out, copy)
    subs = out.parent / "submissions"
    summary = grade(subs, copy, progress=False, workers=1, student=FORMULA_FOLDER)
    rows = report.read_csv(copy / "grades.csv")
    assert [r.lang for r in rows if r.student == FORMULA_FOLDER] == ["ru"] and summary.regraded
    assert formula_cells((copy / "grades.csv").read_bytes().decode("utf-8-sig")) == []
    assert "Результаты проверки" in (copy / "feedback" / f"{assign([(FORMULA_FOLDER, 'dir')])[0].file}.md").read_text(
        encoding="utf-8"
    )
