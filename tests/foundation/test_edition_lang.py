"""A Russian or Chinese student edition speaks its language in every command, unless told otherwise;
and Chinese lines of labels and values put no ASCII space after full-width punctuation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redis_course import cli, l10n, paths


@pytest.fixture()
def edition(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    monkeypatch.setattr(paths, "NOTEBOOKS", tmp_path / "notebooks")
    monkeypatch.delenv("COURSE_LANG", raising=False)
    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.setattr(l10n.locale, "getlocale", lambda *a: ("en_US", "UTF-8"))

    def release(lang: str) -> Path:
        path = tmp_path / "edition.json"
        path.write_text(json.dumps({"edition": "student", "lang": lang}), encoding="utf-8")
        l10n._edition_cache.clear()
        return path

    return release


def test_the_instructors_repository_follows_the_locale(edition):
    assert l10n.current_lang() == "en"


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_a_student_edition_speaks_its_language(edition, lang):
    edition(lang)
    assert l10n.current_lang() == lang
    assert l10n._("course doctor: what works on this machine") != "course doctor: what works on this machine"


def test_course_lang_still_wins(edition, monkeypatch):
    edition("ru")
    monkeypatch.setenv("COURSE_LANG", "zh")
    assert l10n.current_lang() == "zh"


def test_jupyter_opens_the_editions_notebooks(edition, monkeypatch):
    edition("zh")
    (paths.NOTEBOOKS / "zh").mkdir(parents=True)
    seen = {}
    monkeypatch.setattr(cli, "_call", lambda cmd, **kw: seen.update(cmd=cmd, env=kw.get("env")) or 0)
    overrides = paths.ROOT / "lab" / "settings" / "overrides.d"
    monkeypatch.setattr(cli, "_jupyter_overrides_dir", lambda: overrides)

    def locale() -> str:  # what JupyterLab's own interface will speak
        return json.loads((overrides / "redis-course-language.json").read_text(encoding="utf-8"))[
            "@jupyterlab/translation-extension:plugin"
        ]["locale"]

    assert cli.main(["jupyter", "--no-browser"]) == 0
    assert f"--notebook-dir={paths.NOTEBOOKS / 'zh'}" in seen["cmd"] and seen["env"]["COURSE_LANG"] == "zh"
    assert locale() == "zh_CN"
    assert cli.main(["jupyter", "--lang", "en", "--no-browser"]) == 0
    assert f"--notebook-dir={paths.NOTEBOOKS / 'en'}" in seen["cmd"] and locale() == "en"


def test_jupyterlab_has_the_language_packs():
    from jupyterlab_server.translation_utils import get_language_packs

    assert {"ru_RU", "zh_CN"} <= set(get_language_packs()[0]) and set(cli.JUPYTER_LOCALES) == {"en", "ru", "zh"}


@pytest.mark.parametrize("lang", ["en", "ru", "zh"])
def test_jupyterlab_settings_name_settings_that_exist(lang):
    """Each setting the course gives JupyterLab is one its schemas declare, with an allowed value:
    a renamed plugin or setting would otherwise be ignored without a word."""
    import json
    import sys
    from pathlib import Path

    share = Path(sys.prefix) / "share" / "jupyter"
    roots = [share / "lab" / "schemas", *sorted((share / "labextensions").glob("*/schemas"))]
    for plugin, values in cli.jupyter_settings(lang).items():
        package, name = plugin.split(":")
        schema = next(
            (
                json.loads((r / package / f"{name}.json").read_text(encoding="utf-8"))
                for r in roots
                if (r / package / f"{name}.json").exists()
            ),
            None,
        )
        assert schema is not None, plugin
        for key, value in values.items():
            prop = schema["properties"][key]
            allowed = [c["const"] for c in prop.get("oneOf", [])]
            assert not allowed or value in allowed, (plugin, key, value)
            assert isinstance(value, {"string": str, "boolean": bool}[prop["type"]]), (plugin, key)


def test_chinese_labels_take_no_ascii_space():
    assert l10n.join("余额：", -5000) == "余额：-5000"
    assert l10n.join("库存：", -2, "|", "顾客：", False) == "库存：-2 | 顾客：False"
    assert l10n.join("balance:", 5, "|", "ok") == "balance: 5 | ok"
    assert l10n.join("a", "b", sep=", ") == "a, b"
