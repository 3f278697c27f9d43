"""The string catalogs: English is the source; Russian and Chinese come from locale/<lang>/course.po."""

from redis_course import l10n


def test_english_is_the_message_itself_filled_with_fields():
    assert l10n._("Cannot reach {where}.", lang="en", where="x") == "Cannot reach x."


def test_plural_forms_follow_each_language():
    forms = [l10n.ngettext("{n} student", "{n} students", n, lang="ru") for n in (1, 2, 5, 11, 21, 22)]
    assert forms == ["1 студент", "2 студента", "5 студентов", "11 студентов", "21 студент", "22 студента"]
    assert l10n.ngettext("{n} student", "{n} students", 3, lang="zh") == "3 名学生"
    assert l10n.ngettext("{n} student", "{n} students", 1, lang="en") == "1 student"
    assert l10n.ngettext("{n} student", "{n} students", 2, lang="en") == "2 students"


def test_a_missing_translation_falls_back_to_english():
    assert l10n._("a message nobody translated", lang="zh") == "a message nobody translated"


def test_the_language_comes_from_course_lang(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "ru")
    assert l10n.current_lang() == "ru"
    assert l10n.ngettext("{n} student", "{n} students", 1) == "1 студент"
    monkeypatch.setenv("COURSE_LANG", "xx")
    assert l10n.current_lang() in l10n.LANGS
