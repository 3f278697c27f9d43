"""Unit tests of the lab machinery: starters, discovery, collection of submissions, reports, the
sandbox's protocol, the check table."""

from __future__ import annotations

import csv
import re
import shutil
import xml.etree.ElementTree as ET


import junitparser
import pytest

from redis_course.labs.grading import report
from redis_course.labs.check.selfcheck import render
from redis_course.labs.sandbox.errors import StudentCrash, StudentError, StudentImportError, StudentTimeout
from redis_course.labs.authoring.model import LabError, discover, find_lab, load_lab
from redis_course.labs.engine.runner import LabResult, TestResult
from redis_course.labs.sandbox import make_run_dir
from redis_course.labs.sandbox.box import Box
from redis_course.labs.sandbox.limits import Limits
from redis_course.labs.sandbox.process import StudentProcess
from redis_course.labs.authoring.starter import MarkerError, make_starter, solution_lines
from redis_course.labs.engine.testing import student_raises
from redis_course.labs.authoring.wrong import compose, redundant, wrongs

SOLUTION = '''"""Doc."""


def f(r, x):
    """Say what to do."""
    # BEGIN SOLUTION
    return r.incr(x)
    # END SOLUTION


class C:
    def g(self):
        if True:
            # BEGIN SOLUTION
            return 2
            # END SOLUTION
'''


def test_starter_replaces_each_region_at_its_indentation():
    out = make_starter(SOLUTION)
    assert '    raise NotImplementedError("f: your code here")\n' in out
    assert '            raise NotImplementedError("g: your code here")\n' in out
    assert "r.incr" not in out and "return 2" not in out and '"""Say what to do."""' in out
    compile(out, "starter.py", "exec")
    assert solution_lines(SOLUTION) == ["return r.incr(x)", "return 2"]


@pytest.mark.parametrize(
    "bad",
    [
        "# BEGIN SOLUTION\nx\n",
        "x\n# END SOLUTION\n",
        "# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n",
        "x = 1  # BEGIN SOLUTION\n",
    ],
)
def test_unbalanced_markers_are_refused(bad):
    with pytest.raises(MarkerError):
        make_starter(bad)


def test_labs_are_found_by_number_or_name():
    assert find_lab("0").id == find_lab("00").id == find_lab("00-demo").id == "00-demo"
    assert [lab.id for lab in discover()] == sorted(lab.id for lab in discover())
    with pytest.raises(LabError):
        find_lab("99")
    lab = find_lab("00")
    assert lab.functions == ["count_view", "reset"]
    for lang in ("en", "ru", "zh"):
        assert lab.hint("first-view", lang) and lab.title(lang)
    assert lab.hint("no-such-hint", "ru") == ""


def _result() -> tuple:
    lab = find_lab("00")
    tests = [
        TestResult("test_first_view_is_one", "public", 2, 2, "passed", "first-view"),
        TestResult(
            "test_reset_returns_count_and_clears", "public", 0, 1, "failed", "reset", "assert 3 == 0 ```` \x00\x1b bad"
        ),
        TestResult(
            "test_posts_are_counted_separately_hidden",
            "hidden",
            0,
            2,
            "failed",
            "separate-keys",
            "count_view() did not finish within 3 s",
            "timeout",
        ),
    ]
    return lab, LabResult("00-demo", "timeout", tests, backend="fakeredis")


def test_reports_are_valid_and_localized(tmp_path):
    lab, res = _result()
    report.write_csv(
        tmp_path / "grades.csv",
        [report.GradeRow("=evil", res.lab, res.points, res.max_points, res.status, "=evil", "ru")],
    )
    rows = list(csv.DictReader(open(tmp_path / "grades.csv", encoding="utf-8-sig")))
    assert rows == [
        {
            "student": "'=evil",
            "lab": "00-demo",
            "points": "2",
            "max_points": "5",
            "status": "timeout",
            "folder": "'=evil",
            "lang": "ru",
        }
    ]
    gs = report.gradescope_results([(lab, res)], "zh")
    assert gs["score"] == 2 and sum(t["max_score"] for t in gs["tests"]) == 5
    assert [t["visibility"] for t in gs["tests"]] == ["visible", "visible", "after_published"]
    assert "提示：" in gs["tests"][1]["output"] and gs["tests"][0]["output"] == ""
    assert "提示: " not in gs["tests"][1]["output"]  # a full-width colon after a Chinese word
    xml = report.junit_xml("s", [(lab, res)], "en")
    root = ET.fromstring(xml)
    assert len(root.findall(".//failure")) == 2
    suites = junitparser.JUnitXml.fromstring(xml)  # read back by a JUnit library, not the writer
    (suite,) = list(suites)
    assert (suite.name, suite.tests, suite.failures) == ("s.00-demo", 3, 2)
    assert {p.name: p.value for p in suite.properties()} == {"points": "2/5", "status": "timeout"}
    assert [type(r).__name__ for case in suite for r in case.result] == ["Failure", "Failure"]
    md = report.feedback_markdown("s", [(lab, res)], "ru")
    assert md.startswith("# Результаты проверки: s") and "`````text" in md and "скрытый тест" in md


def test_check_shows_one_line_per_test_with_hint_in_the_students_language():
    lab, res = _result()
    for lang, word in {"en": "Hint", "ru": "Подсказка", "zh": "提示"}.items():
        text = render([(lab, res)], lang)
        assert word in text and lab.hint("reset", lang) in text, text
        assert lab.title(lang) in text
    text = render([(lab, res)], "en")
    lines = text.splitlines()
    assert "2/5" in lines[0]
    failing = [ln for ln in lines if ln.lstrip().startswith("✗")]
    assert len(failing) == 2 and all("Hint: " in ln for ln in failing), text
    assert not any(" = <" in ln or "where " in ln for ln in lines)
    zh = [ln for ln in render([(lab, res)], "zh").splitlines() if "提示：" in ln]
    assert zh and all(re.search(r"(。|  )提示：", ln) for ln in zh), zh  # the failure's phrase ends before the hint


def _not_written(n: int) -> LabResult:
    tests = [
        TestResult(
            f"test_t{i}",
            "public",
            0,
            1,
            "failed",
            None,
            "count_view() is not written yet (it raises NotImplementedError).",
            "not-implemented",
        )
        for i in range(n)
    ]
    return LabResult("00-demo", "ok", tests)


def test_check_of_every_lab_says_not_started_in_one_line():
    lab = find_lab("00")
    text = render([(lab, _not_written(3)), (lab, _not_written(2))], "en")
    assert text.count("not started") == 2 and len(text.splitlines()) <= 8, text
    one = render([(lab, _not_written(3))], "en")  # one lab: said once, then every test with its hint
    assert one.count("Nothing is written yet") == 1 and one.count("✗") == 3 and "not written yet" not in one, one


def test_an_import_error_is_said_once_and_no_test_is_listed(tmp_path):
    lab = find_lab("00")
    bad = tmp_path / "lab.py"
    bad.write_text("def count_view(r, post_id)\n    return 1\n", encoding="utf-8")
    tests = [
        TestResult(
            f"test_t{i}", "public", 0, 1, "error", None, "lab.py could not be imported: SyntaxError", "import-error"
        )
        for i in range(3)
    ]
    res = LabResult(
        "00-demo", "import-error", tests, message="loading the module failed: SyntaxError: line 1: expected ':'"
    )
    text = render([(lab, res)], "en", sources={"00-demo": bad})
    assert text.count("SyntaxError") == 1 and "could not be imported" in text, text
    assert "1 | def count_view(r, post_id)" in text and "tests fail" not in text, text
    assert "No test ran (3 tests wait)" in text
    zh = render([(lab, res)], "zh", sources={"00-demo": bad})
    assert "SyntaxError" in zh and "could not be imported" not in zh, zh


def test_parametrized_cases_share_one_line():
    lab = find_lab("00")
    tests = [
        TestResult("test_reset_returns_count_and_clears[a]", "public", 1, 1, "passed"),
        TestResult("test_reset_returns_count_and_clears[b]", "public", 0, 1, "failed", None, "expected 3, got 0"),
        TestResult("test_reset_returns_count_and_clears[c]", "public", 0, 1, "failed", None, "expected 3, got 1"),
    ]
    text = render([(lab, LabResult("00-demo", "ok", tests))], "en")
    assert len([ln for ln in text.splitlines() if "✗" in ln]) == 1
    assert "1/3" in text and "case b; 2 cases of 3 fail" in text, text


def test_summary_says_could_not_be_imported_with_plural_forms(monkeypatch):
    from pathlib import Path

    from redis_course.labs.grading.report import GradeRow
    from redis_course.labs.grading.summary import Summary

    rows = [
        GradeRow("a", "00-demo", 0, 8, "import-error"),
        GradeRow("b", "00-demo", 0, 8, "import-error"),
        GradeRow("c", "00-demo", 8, 8, "ok"),
    ]
    s = Summary.from_rows(rows, seconds=1.0, workers=1, backend="x", out=Path("/r"), reference_problems=[])
    monkeypatch.setenv("COURSE_LANG", "en")
    text = s.render()
    assert "2 students' code could not be imported" in text and "crashed" not in text, text
    assert "2 lab runs could not be imported" in text and "1 lab run ended normally" in text, text
    monkeypatch.setenv("COURSE_LANG", "ru")
    assert "crash" not in s.render() and "import-error" not in s.render()


def test_student_raises_checks_the_type():
    with student_raises("ValueError"):
        raise StudentError("ValueError", "bad")
    with pytest.raises(AssertionError):
        with student_raises("ValueError"):
            raise StudentError("KeyError", "bad")
    with pytest.raises(StudentTimeout):  # a hang is never the expected error
        with student_raises("ValueError"):
            raise StudentTimeout("f", 1)
    assert not issubclass(StudentTimeout, StudentError) and not issubclass(StudentCrash, StudentError)


@pytest.fixture
def server():
    """A function that starts a box (fakeredis) for a source; every box is stopped after the test."""
    run, boxes = make_run_dir(), []

    def start(source: str, mode: str | None = None) -> Box:
        boxes.append(
            Box(source.encode(), run, "course:unit:", Limits(call_timeout_s=2), backend="fakeredis", mode=mode).start()
        )
        return boxes[-1]

    yield start
    for b in boxes:
        b.stop()
    shutil.rmtree(run, ignore_errors=True)


def _box(server, source: str, isolate: bool | None = None) -> StudentProcess:
    return StudentProcess(server(source, None if isolate is None else "none"))


@pytest.mark.parametrize("isolate", [None, False], ids=["default", "limits-only"])
def test_sandbox_calls_errors_timeouts_and_crashes(server, isolate):
    src = (
        "import os, time\n"
        "def inc(r, k): return r.incr(r.key(k))\n"
        "def boom(r): raise ValueError('no')\n"
        "def hang(r): time.sleep(60)\n"
        "def die(r): os._exit(3)\n"
        "def obj(r): return object()\n"
        "def big(r): return 'x' * 3_000_000\n"
    )
    box = _box(server, src, isolate)
    try:
        key = f"n-{isolate}"
        assert box.call("inc", [key]) == 1 and box.call("inc", [key]) == 2
        with pytest.raises(StudentError) as err:
            box.call("boom")
        assert err.value.type == "ValueError" and err.value.message == "no"
        with pytest.raises(StudentError) as err:
            box.call("obj")
        assert err.value.type == "TypeError"
        with pytest.raises(StudentError) as err:
            box.call("missing")
        assert err.value.type == "AttributeError"
        with pytest.raises(StudentTimeout):
            box.call("hang")
        assert box.call("inc", [key]) == 3  # a fresh process after the timeout
        with pytest.raises(StudentCrash, match="code 3"):
            box.call("die")
        with pytest.raises(StudentCrash, match="larger than"):
            box.call("big")
    finally:
        box.kill()


@pytest.mark.parametrize(
    "source,needle",
    [("def f(r)\n", "SyntaxError"), ("import sys\nsys.exit(0)\n", "SystemExit"), ("import os\nos._exit(0)\n", "ended")],
)
def test_sandbox_reports_modules_that_do_not_load(server, source, needle):
    box = _box(server, source)
    with pytest.raises(StudentImportError, match=needle):
        box.call("f")
    with pytest.raises(StudentImportError):  # and keeps saying so without retrying
        box.call("f")
    box.kill()


# ---------------------------------------------------------------- lab.yml and wrong/ as differences
LAB_YML = 'title: {en: "Demo", ru: "Демо", zh: "演示"}\nfunctions: [count_view]\n'


@pytest.mark.parametrize(
    "extra,needle",
    [
        ("timout_s: 10\n", "unknown key 'timout_s' (did you mean 'timeout_s'?)"),
        ("timeout_s: ten\n", "'timeout_s' must be a number of seconds greater than 0, not 'ten'"),
        ("needs_real_redis: 1\n", "'needs_real_redis' must be true or false"),
        ("redis: sharded\n", "'redis' must be single or cluster"),
    ],
)
def test_lab_yml_mistakes_name_the_file_and_the_key(tmp_path, extra, needle):
    lab = tmp_path / "09-typo"
    lab.mkdir()
    (lab / "lab.yml").write_text(LAB_YML + extra, encoding="utf-8")
    with pytest.raises(LabError) as err:
        load_lab(lab)
    msg = str(err.value)
    assert msg.startswith("09-typo/lab.yml: ") and needle in msg and "\n" not in msg, msg


def test_lab_yml_missing_field_and_defaults(tmp_path):
    lab = tmp_path / "09-typo"
    lab.mkdir()
    (lab / "lab.yml").write_text('title: "Demo"\n', encoding="utf-8")
    with pytest.raises(LabError, match=r"09-typo/lab.yml: the key 'functions' is missing"):
        load_lab(lab)
    (lab / "lab.yml").write_text(LAB_YML, encoding="utf-8")
    got = load_lab(lab)
    assert (got.timeout_s, got.needs_real_redis, got.redis_mode) == (10, False, "single")


BASE = '''"""Lab."""
import json

LIMIT = 5


def a(r):
    """Doc of a."""
    # BEGIN SOLUTION
    return r.incr("a")
    # END SOLUTION


def b(r):
    return LIMIT
'''


def test_wrong_file_is_composed_onto_the_solution():
    override = '''"""Wrong: a reads then writes."""
import os

HELPER = 1


def a(r):
    return int(r.get("a") or 0) + HELPER
'''
    out = compose(BASE, override, name="wrong/x.py")
    ns: dict = {}
    exec(compile(out, "composed", "exec"), ns)
    assert ns["b"](None) == 5 and ns["HELPER"] == 1 and "os" in ns and "json" in ns
    assert out.startswith("# Composed from solution.py and wrong/x.py: Wrong: a reads then writes.\n")
    assert "r.incr" not in out and "END SOLUTION" not in out and out.index("HELPER = 1") < out.index("def a(")


def test_a_wrong_file_may_edit_one_line_inside_a_definition():
    override = '''"""Wrong: a counts twice."""

EDITS = [('return r.incr("a")', 'return r.incrby("a", 2)')]


def b(r):
    return LIMIT + 1
'''
    out = compose(BASE, override, name="wrong/x.py")
    assert 'r.incrby("a", 2)' in out and 'r.incr("a")' not in out and "EDITS" not in out
    ns: dict = {}
    exec(compile(out, "composed", "exec"), ns)
    assert ns["b"](None) == 6 and ns["a"].__doc__ == "Doc of a."


@pytest.mark.parametrize(
    "override,needle",
    [
        ('"""Wrong."""\nEDITS = [("r.decr(", "r.incr(")]\n', "is in solution.py nowhere"),
        ('"""Wrong."""\nEDITS = [("(r)", "(q)")]\n', "is in solution.py 2 times"),
        ('"""Wrong."""\nEDITS = [("LIMIT", "LIMIT")]\n', "old and new different"),
        ('"""Wrong."""\nEDITS = "LIMIT"\n', "list of (old, new) pairs"),
        ("def a(r):\n    return 1\n", "start with a docstring"),
        ('"""Wrong."""\nprint("hi")\n', "only imports and top-level def"),
        ('"""Wrong."""\nimport os\n', "defines nothing"),
        ('"""Wrong."""\ndef a(r:\n', "wrong/x.py:2"),
    ],
)
def test_wrong_file_format_is_checked(override, needle):
    with pytest.raises(LabError, match=re.escape(needle)):
        compose(BASE, override, where="00-demo/wrong/x.py")


def test_every_wrong_file_composes_and_differs_from_the_solution():
    for lab in discover():
        for w in wrongs(lab):
            compile(w.source(), str(w.path), "exec")
            assert not redundant(lab, w.path), w.path


# ---------------------------------------------------------------- what a failure says, in one phrase
def test_failure_phrases_hide_pytest_internals():
    from redis_course.labs.engine.pytest_plugin import _describe

    own = AssertionError("some views were lost\nassert not [StudentError('x')]\n +  where [..] = <lab>")
    assert _describe(own) == ("some views were lost", None)
    try:
        try:
            raise StudentError("NotImplementedError", "your code here", "safe_incr")
        except StudentError as e:
            raise AssertionError(f"safe_incr crashed with {e.type}") from None
    except AssertionError as exc:
        assert _describe(exc) == ("safe_incr() is not written yet (it raises NotImplementedError).", "not-implemented")
    text, event = _describe(StudentError("ValueError", "no", "reset", "Traceback:\n  line 3, in reset\nValueError: no"))
    assert text.splitlines()[0] == "reset() raised ValueError: no (ValueError)" or "raised ValueError: no" in text
    assert event is None
    bare, _ = _describe(AssertionError("assert not [StudentError('ValueError: no')]"))
    assert "assert not" not in bare and "StudentError" not in bare, bare


def test_lab_titles_and_starter_docstrings_are_extracted_and_translated():
    from redis_course.i18n.catalogs import lab_messages
    from redis_course.labs.authoring.starter import translate_docstrings

    found = {(ctx, msg) for _f, _l, msg, ctx, _c in lab_messages()}
    assert ("test title", "The first view of a post counts 1") in found
    assert ("test title", "Each post of the grader canary has a counter of its own") in found
    assert any(ctx == "starter" and msg.startswith("Lab 00 (demo)") for ctx, msg in found)
    lab = find_lab("00")
    assert lab.test_title("test_first_view_is_one", "ru") == "Первый просмотр поста даёт 1"
    assert lab.test_title("test_first_view_is_one[x]", "zh") == "文章的第一次浏览计为 1 [x]"
    starter = lab.starter_file.read_text(encoding="utf-8")
    zh = translate_docstrings(starter, "zh")
    compile(zh, "lab.py", "exec")
    assert "统计页面浏览量" in zh and "Count one view" not in zh
    assert [
        ln.replace("：在这里写你的代码", ": your code here") for ln in zh.splitlines() if "raise" in ln or "def " in ln
    ] == [ln for ln in starter.splitlines() if "raise" in ln or "def " in ln]  # the code is untouched
    assert 'raise NotImplementedError("count_view：在这里写你的代码")' in zh
    assert translate_docstrings(starter, "en") == starter
    ru = translate_docstrings(find_lab("07").starter_file.read_text(encoding="utf-8"), "ru")
    compile(ru, "lab.py", "exec")
    assert "#: Самое долгое ожидание" in ru and "# id(r) -> (r, его клиент с бюджетом)" in ru  # comments too
    assert "your code here" not in ru and "budget client" not in ru


def test_a_long_failure_is_cut_between_words_and_an_unknown_lab_is_one_sentence():
    from types import SimpleNamespace

    from redis_course.labs.check.selfcheck import _phrase

    words = "Не удалось подключиться к Redis по адресу redis://127.0.0.1:1/0 " * 5
    cut = _phrase(SimpleNamespace(message=words, event=None, outcome="failed"), "ru")
    assert len(cut) <= 200 and cut.endswith("…") and words.startswith(cut[:-1])
    assert words[len(cut) - 1] == " ", cut  # the word before … is whole
    with pytest.raises(LabError) as err:
        find_lab("09")
    assert str(err.value).startswith("There is no lab '09'; the labs are 00-demo, 01-incr")


def test_an_unreachable_redis_is_said_once_and_whole():
    lab = find_lab("00")
    error = (
        "CourseError: Cannot connect to Redis at 127.0.0.1:1: nothing listens there (connection refused). "
        "Start the server, or fix REDIS_URL, or unset REDIS_URL to use the built-in fakeredis."
    )
    tests = [
        TestResult("test_first_view_is_one", "public", 0, 2, "failed", "first-view", error),
        TestResult("test_reset_returns_count_and_clears", "public", 0, 1, "failed", "reset", error),
    ]
    text = render([(lab, LabResult("00-demo", "ok", tests, backend="redis"))], "en")
    assert text.count("Cannot connect to Redis") == 1, text
    assert "CourseError" not in text and "use the built-in fakeredis." in text  # no class name, not cut
    tests[1] = TestResult("test_reset_returns_count_and_clears", "public", 0, 1, "failed", "reset", "assert 3 == 0")
    text = render([(lab, LabResult("00-demo", "ok", tests, backend="redis"))], "en")
    assert text.count("Cannot connect to Redis") == 1 and "assert 3 == 0" in text  # a test of its own: as before
