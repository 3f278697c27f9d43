"""pofilter's catalog checks (translate-toolkit) run over the course's .po files: clean on the real
catalogs, and a translation that breaks what the checks that stay on guard is reported."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from redis_course.i18n import catalogs
from redis_course.l10n import LOCALE_DIR

pytest.importorskip("translate.filters.checks")


@pytest.fixture()
def locale(tmp_path: Path) -> Path:
    out = tmp_path / "locale"
    shutil.copytree(LOCALE_DIR, out)
    return out


def _plant(locale: Path, lang: str, msgid: str, msgstr: str) -> None:
    po = catalogs.po_path(lang, locale)
    po.write_text(po.read_text(encoding="utf-8") + f'\nmsgid "{msgid}"\nmsgstr "{msgstr}"\n', encoding="utf-8")


def test_the_course_catalogs_pass_pofilter():
    assert catalogs.pofilter_problems() == {}


def test_the_switched_off_checks_exist_and_say_why():
    from translate.filters import checks

    known = set(checks.StandardChecker().defaultfilters)
    for name, why in [
        *catalogs.POFILTER_OFF.items(),
        *(i for d in catalogs.POFILTER_OFF_LANG.values() for i in d.items()),
    ]:
        assert name in known, f"{name} is not a pofilter check"
        assert len(why) > 20, f"say why {name} does not fit"


@pytest.mark.parametrize(
    "lang, msgid, msgstr, check",
    [
        ("ru", "The key expired.", "Ключ истёк", "endpunc"),
        ("ru", "Saved {n} rows", "Сохранено строк: {count}", "pythonbraceformat"),
        ("ru", "see https://redis.io/docs/", "см. https://redis.io/doc/", "urls"),
        ("zh", " Done", "完成", "startwhitespace"),
        ("zh", "a\\tb", "a b", "tabs"),
        ("zh", "use <b>INCR</b>", "使用 <i>INCR</i>", "xmltags"),
    ],
)
def test_a_broken_translation_is_reported(locale, lang, msgid, msgstr, check):
    assert catalogs.pofilter_problems(locale) == {}
    _plant(locale, lang, msgid, msgstr)
    found = catalogs.pofilter_problems(locale)
    assert list(found) == [f"locale/{lang}/LC_MESSAGES/course.po"]
    assert [p.split(":")[0] for p in found[f"locale/{lang}/LC_MESSAGES/course.po"]] == [f"pofilter {check}"]


def test_a_switched_off_check_stays_quiet(locale):
    # numbers and doublespacing are off: a decimal comma and one space after a full stop are right
    _plant(locale, "ru", "It took 0.8 s.  Then it stopped.", "Заняло 0,8 с. Потом остановилось.")
    _plant(locale, "zh", "Loading…", "正在加载……")  # endpunc: Chinese writes …… for …
    assert catalogs.pofilter_problems(locale) == {}
