"""The string catalogs: English is the source; Russian and Chinese come from locale/<lang>/course.po."""
from redis_course import l10n


def test_english_is_the_message_itself_filled_with_fields():
    assert l10n._("Cannot reach {where}.", lang="en", where="x") == "Cannot reach x."


def test_plural_forms_follow_each_language():
    forms = [l10n.ngettext("{n} test failed", "{n} tests failed", n, lang="ru") for n in (1, 2, 5, 11, 21, 22)]
    assert forms == ["1 тест не пройден", "2 теста не пройдены", "5 тестов не пройдено",
                     "11 тестов не пройдено", "21 тест не пройден", "22 теста не пройдены"]
    assert l10n.ngettext("{n} test failed", "{n} tests failed", 3, lang="zh") == "3 个测试未通过"
    assert l10n.ngettext("{n} test failed", "{n} tests failed", 1, lang="en") == "1 test failed"
    assert l10n.ngettext("{n} test failed", "{n} tests failed", 2, lang="en") == "2 tests failed"


def test_a_missing_translation_falls_back_to_english():
    assert l10n._("a message nobody translated", lang="zh") == "a message nobody translated"


def test_the_language_comes_from_course_lang(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "ru")
    assert l10n.current_lang() == "ru"
    assert l10n.ngettext("{n} test failed", "{n} tests failed", 1) == "1 тест не пройден"
    monkeypatch.setenv("COURSE_LANG", "xx")
    assert l10n.current_lang() in l10n.LANGS
