"""run.py's set-up lines speak the student edition's language (COURSE_LANG first), with the same
fields as the English they translate."""

from __future__ import annotations

import importlib.util
import json
import re
import string

from redis_course import paths


def _run_py():
    spec = importlib.util.spec_from_file_location("course_run_py_lang", paths.ROOT / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_the_set_up_lines_follow_the_edition(tmp_path, monkeypatch):
    run = _run_py()
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.delenv("COURSE_LANG", raising=False)
    monkeypatch.setattr("locale.getlocale", lambda *a: ("en_US", "UTF-8"))
    assert run._t("set up in {s} s", s=3) == "set up in 3 s"
    (tmp_path / "edition.json").write_text(json.dumps({"edition": "student", "lang": "ru"}), encoding="utf-8")
    assert run._t("set up in {s} s", s=3) == "всё установлено за 3 с"
    monkeypatch.setenv("COURSE_LANG", "zh")
    assert run._t("set up in {s} s", s=3) == "安装完成，用时 3 秒"


def test_every_translation_keeps_the_fields_and_every_message_is_used():
    run = _run_py()
    source = (paths.ROOT / "run.py").read_text(encoding="utf-8")
    used = source.split("TEXTS = {", 1)[0] + source.split("def _say(", 1)[1]
    for lang, texts in run.TEXTS.items():
        assert set(texts) == set(run.TEXTS["ru"]), lang
        for english, translated in texts.items():
            assert _fields(english) == _fields(translated), (lang, english)
            assert not re.search(r"[A-Za-z]{4,} [a-z]{3,} [a-z]{3,}", re.sub(r"`[^`]*`|\{[^}]*\}", "", translated)), (
                lang,
                translated,
            )  # no English sentence left in it
    for english in run.TEXTS["ru"]:
        first = english.split("{")[0][:30]
        assert first in used, f"{english!r} is translated but never said"


def test_an_installers_english_is_shown_to_a_ru_reader_only_when_it_fails(tmp_path, monkeypatch, capsys):
    import sys

    run = _run_py()
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.delenv("COURSE_VERBOSE", raising=False)
    ok = [sys.executable, "-c", "print('Resolved 3 packages')"]
    bad = [sys.executable, "-c", "print('No matching distribution'); raise SystemExit(1)"]
    monkeypatch.setenv("COURSE_LANG", "ru")
    assert run._run(ok, "пакеты") is True
    out = capsys.readouterr().out
    assert "Resolved" not in out and "пакеты: готово" in out
    assert run._run(bad, "пакеты") is False
    out = capsys.readouterr().out
    assert "    No matching distribution" in out and "пакеты: ошибка" in out
    monkeypatch.setenv("COURSE_VERBOSE", "1")
    assert run._run(ok, "пакеты") is True and "Resolved 3 packages" in capsys.readouterr().out
    monkeypatch.delenv("COURSE_VERBOSE")
    monkeypatch.setenv("COURSE_LANG", "en")
    assert run._run(ok, "packages") is True and "    Resolved 3 packages" in capsys.readouterr().out
