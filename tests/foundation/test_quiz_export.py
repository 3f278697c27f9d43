"""``course quiz export``: GIFT that a GIFT parser not written by the course reads back question by
question (pygiftparser), and Moodle XML with the structure Moodle's importer reads."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

import pytest

from redis_course import cli, paths, quiz
from redis_course.quiz import export

pygift = pytest.importorskip("pygiftparser.parser", reason="pygiftparser is a [dev] dependency")

LESSONS = quiz.lesson_names()


def _unescape(text: str) -> str:
    """GIFT's escapes undone, then the HTML character references the export uses for braces."""
    text = re.sub(r"\\([~=#{}:\\])", r"\1", text).replace("\\n", "\n")
    return text.replace("&#123;", "{").replace("&#125;", "}")


def _parse_gift(text: str):
    return pygift.parseFile(io.StringIO(text))


@pytest.mark.parametrize("lang", paths.LANGS)
@pytest.mark.parametrize("lesson", LESSONS)
def test_gift_parses_with_pygiftparser(lesson, lang):
    src = quiz.load(lesson)
    parsed = _parse_gift(export.gift(lesson, lang))
    assert [q.title for q in parsed] == [q["id"] for q in src["questions"]]
    for q, got in zip(src["questions"], parsed):
        assert got.valid, q["id"]
        assert got.cat == export.category(src["lesson"]) == "$course$/redis_course/" + src["lesson"].replace("-", "_")
        assert got.markup == "html"
        assert _unescape(got.generalFeedback).startswith("<p>"), q["id"]
        answers = got.answers.answers
        assert len(answers) == len(q["options"]), q["id"]
        right = {export._option_html(q, oid, lang) for oid in quiz.right_ids(q)}
        marked = {_unescape(a.answer) for a in answers if a.fraction > 0}
        assert marked == right, q["id"]
        if q["kind"] == "race":
            assert type(got.answers).__name__ == "MultipleChoicesSet"
            assert sum(a.fraction for a in answers if a.fraction > 0) == pytest.approx(100, abs=0.01)
        else:
            assert type(got.answers).__name__ == "SelectSet"
        for a in answers:  # every option says why, in the export's language
            assert a.feedback, (q["id"], a.answer)
    if lang != "en":
        assert export.gift(lesson, lang) != export.gift(lesson, "en")


def test_gift_keeps_a_multi_line_reply_and_special_characters():
    parsed = _parse_gift(export.gift("02", "en"))
    no_rollback = next(q for q in parsed if q.title == "exec-no-rollback")
    right = next(a for a in no_rollback.answers.answers if a.fraction == 100)
    assert _unescape(right.answer) == "<code>1) (error) ERR value is not an integer or out of range\n2) OK</code>"
    race = next(q for q in parsed if q.title == "lost-update-get-set")
    assert "SET views {x+1}" in _unescape(race.text)


def test_a_broken_gift_is_caught_by_the_parser():
    # the check can fail: with braces merely backslash-escaped (\\{user\\:17\\}), the parser ends the
    # answer list at the first \\} and loses the other options and the general feedback
    text = export.gift("06", "en").replace("&\\#123;", "\\{").replace("&\\#125;", "\\}")
    same_slot = next(q for q in _parse_gift(text) if q.title == "same-slot")
    assert len(same_slot.answers.answers) < 3 or not same_slot.generalFeedback


@pytest.mark.parametrize("lesson", LESSONS)
def test_moodle_xml_structure(lesson):
    src = quiz.load(lesson)
    root = ET.fromstring(export.moodle_xml(lesson, "ru"))
    assert root.tag == "quiz"
    category, *questions = root.findall("question")
    assert category.get("type") == "category"
    assert [q.findtext("name/text") for q in questions] == [q["id"] for q in src["questions"]]
    for q, el in zip(src["questions"], questions):
        assert el.get("type") == "multichoice"
        assert el.findtext("single") == ("false" if q["kind"] == "race" else "true")
        assert el.find("questiontext").get("format") == "html"
        ET.fromstring(f"<div>{el.findtext('questiontext/text')}</div>")  # the HTML inside is well formed
        answers = el.findall("answer")
        assert len(answers) == len(q["options"])
        fractions = [float(a.get("fraction")) for a in answers]
        assert sum(f for f in fractions if f > 0) == pytest.approx(100, abs=0.01)
        assert all(a.findtext("feedback/text") for a in answers)


def test_cli_writes_a_file_and_refuses_an_unknown_lesson(tmp_path, capsys):
    out = tmp_path / "q.gift"
    assert cli.main(["quiz", "export", "03", "--format", "gift", "--lang", "zh", "-o", str(out)]) == 0
    assert [q.title for q in _parse_gift(out.read_text(encoding="utf-8"))] == [
        q["id"] for q in quiz.load("03")["questions"]
    ]
    assert cli.main(["quiz", "export", "42"]) == 2
    err = capsys.readouterr().err
    assert "No question source for lesson '42'" in err and "Traceback" not in err
