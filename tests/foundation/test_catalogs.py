"""The string catalogs' tooling: extract, update (fuzzy, sorted, stable), check and status."""

from __future__ import annotations

import ast
import re
import textwrap

import pytest

from redis_course.i18n import catalogs, parity as i18n, nbcells
from redis_course import l10n, paths

HEADER = """# test catalog
msgid ""
msgstr ""
"Language: {lang}\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Plural-Forms: {plural}\\n"

"""
PLURALS = {
    "ru": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "zh": "nplurals=1; plural=0;",
}

CODE = """
from redis_course.l10n import _, ngettext, pgettext, npgettext, N_

LATER = N_("Lost updates")


def report(n, who):
    print("not a message")
    print(_("Cannot reach {where}.", where=who))
    print(ngettext("{n} key", "{n} keys", n))
    print(pgettext("lab03", "Done"))
    print(npgettext("lab03", "{n} try", "{n} tries", n))
"""


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A tiny course: one module, one notebook, one lab test, catalogs for ru and zh."""
    root = tmp_path / "course"
    (root / "src" / "redis_course").mkdir(parents=True)
    (root / "src" / "redis_course" / "tool.py").write_text(CODE, encoding="utf-8")
    (root / "notebooks").mkdir()
    (root / "notebooks" / "01-demo.py").write_text(
        'from redis_course.l10n import _\ntitle = _("Views per day")\n', encoding="utf-8"
    )
    (root / "labs" / "01-demo" / "tests").mkdir(parents=True)
    (root / "labs" / "01-demo" / "tests" / "test_a.py").write_text(
        'from redis_course.l10n import pgettext\nT = pgettext("lab01", "first view is one")\n', encoding="utf-8"
    )
    locale = root / "locale"
    for lang in ("ru", "zh"):
        po = catalogs.po_path(lang, locale)
        po.parent.mkdir(parents=True)
        po.write_text(HEADER.format(lang=lang, plural=PLURALS[lang]), encoding="utf-8")
    monkeypatch.setattr(paths, "ROOT", root)
    monkeypatch.setattr(paths, "BUILD", root / "build")
    monkeypatch.setattr(paths, "NOTEBOOKS", root / "notebooks")
    monkeypatch.setattr(catalogs, "LOCALE_DIR", locale)
    return root


RU = {
    "Cannot reach {where}.": "Нет связи с {where}.",
    "Lost updates": "Потерянные обновления",
    "Views per day": "Просмотры по дням",
    ("lab03", "Done"): "Готово",
    ("lab01", "first view is one"): "первый просмотр — единица",
    "{n} key": ("{n} ключ", "{n} ключа", "{n} ключей"),
    ("lab03", "{n} try"): ("{n} попытка", "{n} попытки", "{n} попыток"),
}
ZH = {
    "Cannot reach {where}.": "无法连接 {where}。",
    "Lost updates": "丢失的更新",
    "Views per day": "每天的浏览量",
    ("lab03", "Done"): "完成",
    ("lab01", "first view is one"): "第一次浏览为 1",
    "{n} key": ("{n} 个键",),
    ("lab03", "{n} try"): ("{n} 次尝试",),
}


def _translate(lang: str, table: dict, skip: tuple = ()) -> None:
    cat = catalogs.read(lang, catalogs.LOCALE_DIR)
    for key, text in table.items():
        ctx, mid = key if isinstance(key, tuple) else (None, key)
        if mid in skip:
            continue
        cat.get(mid, context=ctx).string = text
    catalogs._write(cat, catalogs.po_path(lang, catalogs.LOCALE_DIR))


def _extract_and_update():
    template = catalogs.extract()
    return template, {lang: catalogs.update(lang, template, catalogs.LOCALE_DIR) for lang in ("ru", "zh")}


def test_extract_finds_every_kind_of_marker_in_src_notebooks_and_labs(course):
    template = catalogs.extract()
    found = {
        (m.context, m.id if isinstance(m.id, str) else tuple(m.id)): sorted({f for f, _line in m.locations})
        for m in template
        if m.id
    }
    assert found == {
        (None, "Lost updates"): ["src/redis_course/tool.py"],
        (None, "Cannot reach {where}."): ["src/redis_course/tool.py"],
        (None, ("{n} key", "{n} keys")): ["src/redis_course/tool.py"],
        ("lab03", "Done"): ["src/redis_course/tool.py"],
        ("lab03", ("{n} try", "{n} tries")): ["src/redis_course/tool.py"],
        (None, "Views per day"): ["notebooks/01-demo.py"],
        ("lab01", "first view is one"): ["labs/01-demo/tests/test_a.py"],
    }


def test_update_keeps_translations_marks_changed_english_fuzzy_and_writes_stable_sorted_files(course):
    _extract_and_update()
    _translate("ru", RU)
    _translate("zh", ZH)
    assert catalogs.problems() == {}

    tool = course / "src" / "redis_course" / "tool.py"
    tool.write_text(
        tool.read_text(encoding="utf-8").replace("Cannot reach {where}.", "Cannot reach {where} now."), encoding="utf-8"
    )
    _, updated = _extract_and_update()
    assert updated["ru"].fuzzy == ["Cannot reach {where} now."]
    ru = catalogs.read("ru", catalogs.LOCALE_DIR)
    changed = ru.get("Cannot reach {where} now.")
    assert changed.fuzzy and changed.string == "Нет связи с {where}."  # kept, waiting for a translator
    assert ru.get("Lost updates").string == "Потерянные обновления" and not ru.get("Lost updates").fuzzy
    l10n.reload()
    path = catalogs.po_path("ru", catalogs.LOCALE_DIR)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# test catalog\n")  # the file's own header is kept
    before = path.read_bytes()
    _extract_and_update()
    assert path.read_bytes() == before  # a second run changes nothing
    order = [ln for ln in text.splitlines() if ln.startswith("msgid ")][1:]
    msgids = [ast.literal_eval(ln[6:]) for ln in order]
    assert msgids == sorted(msgids)
    assert ":" not in "".join(ln for ln in text.splitlines() if ln.startswith("#:")).replace("#:", "")


def test_check_fails_on_a_string_missing_or_fuzzy_in_one_language(course):
    _extract_and_update()
    _translate("ru", RU)
    _translate("zh", ZH, skip=("Views per day",))
    report = catalogs.problems()
    assert list(report) == ["locale/zh/LC_MESSAGES/course.po"]
    assert report["locale/zh/LC_MESSAGES/course.po"] == ["untranslated: 'Views per day'"]

    _translate("zh", ZH)
    notebook = course / "notebooks" / "01-demo.py"
    notebook.write_text(notebook.read_text() + 'axis = _("Day")\n', encoding="utf-8")
    report = catalogs.problems()
    assert set(report) == {"locale/ru/LC_MESSAGES/course.po", "locale/zh/LC_MESSAGES/course.po"}
    assert report["locale/ru/LC_MESSAGES/course.po"][0].startswith("missing: 'Day' (used in notebooks/01-demo.py")

    _extract_and_update()
    _translate("ru", {"Day": "День"})
    _translate("zh", {"Day": "日期"})
    tool = course / "src" / "redis_course" / "tool.py"
    tool.write_text(tool.read_text(encoding="utf-8").replace('"Lost updates"', '"Lost updates!"'), encoding="utf-8")
    _extract_and_update()
    report = catalogs.problems()
    assert all(rows[0].startswith("fuzzy") and "Lost updates!" in rows[0] for rows in report.values()), report


def test_check_catches_wrong_fields_and_ascii_punctuation_in_chinese(course):
    _extract_and_update()
    _translate("ru", {**RU, "Cannot reach {where}.": "Нет связи с {host}."})
    _translate("zh", {**ZH, "Lost updates": "提示: 丢失的更新"})
    report = catalogs.problems()
    assert any(
        "fields differ" in p and "'Cannot reach {where}.'" in p for p in report["locale/ru/LC_MESSAGES/course.po"]
    )
    assert any("ASCII punctuation" in p for p in report["locale/zh/LC_MESSAGES/course.po"])


def test_check_catches_an_entry_written_twice(course):
    _extract_and_update()
    _translate("ru", RU)
    _translate("zh", ZH)
    po = catalogs.po_path("zh", catalogs.LOCALE_DIR)
    po.write_text(po.read_text(encoding="utf-8") + '\nmsgid "Lost updates"\nmsgstr "丢了"\n', encoding="utf-8")
    assert any("written 2 times" in p for p in catalogs.problems()["locale/zh/LC_MESSAGES/course.po"])


def test_status_lists_fuzzy_untranslated_and_unused_entries(course, capsys, monkeypatch):
    _extract_and_update()
    _translate("ru", RU, skip=("Done",))
    _translate("zh", ZH)
    tool = course / "src" / "redis_course" / "tool.py"
    tool.write_text(tool.read_text(encoding="utf-8").replace('LATER = N_("Lost updates")', ""), encoding="utf-8")
    rows = catalogs.outdated()
    assert "untranslated: 'Done'" in rows["locale/ru/LC_MESSAGES/course.po"]
    assert "no longer used in the code: 'Lost updates'" in rows["locale/zh/LC_MESSAGES/course.po"]
    for lang in paths.LANGS:
        (course / "docs" / lang).mkdir(parents=True)
    monkeypatch.setattr(paths, "DOCS", course / "docs")
    assert i18n.main_status() == 0
    out = capsys.readouterr().out
    assert "locale/ru/LC_MESSAGES/course.po: 2 entries to look at\n  - untranslated: 'Done'" in out
    assert "locale/zh/LC_MESSAGES/course.po: 1 entry to look at" in out


NOTEBOOK = textwrap.dedent("""\
    # %% [markdown] lang="en"
    # # Title
    #
    # Text.

    # %% [markdown] lang="ru"
    # # Заголовок

    # %% [markdown] lang="zh"
    # # 标题

    # %%
    print(1)

    # %% [markdown] lang="en"
    # The number above is one.

    # %% [markdown] lang="ru"
    # Число выше — единица.

    # %% [markdown] lang="zh"
    # 上面的数字是 1。
    """)


def test_notebook_language_cells_in_parity_and_a_missing_one_is_reported(course):
    src = course / "notebooks" / "02-cells.py"
    src.write_text(NOTEBOOK, encoding="utf-8")
    assert nbcells.check_source(src) == []
    src.write_text(NOTEBOOK.replace('# %% [markdown] lang="zh"\n# 上面的数字是 1。\n', ""), encoding="utf-8")
    problems = nbcells.check_source(src)
    assert len(problems) == 1 and "line 15" in problems[0] and "'The number above is one.'" in problems[0]
    assert "no zh version" in problems[0]


def test_course_i18n_check_fails_on_a_missing_translation_and_names_it(course, capsys, monkeypatch):
    _extract_and_update()
    _translate("ru", RU)
    _translate("zh", ZH, skip=("Lost updates",))
    for lang in paths.LANGS:
        (course / "docs" / lang).mkdir(parents=True)
    monkeypatch.setattr(paths, "DOCS", course / "docs")
    assert i18n.main_check() == 1
    out = capsys.readouterr().out
    assert "locale/zh/LC_MESSAGES/course.po\n  - untranslated: 'Lost updates'" in out
    _translate("zh", ZH)
    assert i18n.main_check() == 0


def test_the_repository_catalogs_are_complete_in_every_language():
    report = catalogs.problems()
    assert report == {}, "\n".join(f"{po}:\n  " + "\n  ".join(rows) for po, rows in report.items())


def test_the_repository_notebooks_have_every_passage_in_every_language():
    assert nbcells.check_all() == {}


def _scopes(tree):
    """(scope node, names stored directly in it, names called directly in it), comprehensions apart."""
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        stores, calls, todo = [], set(), list(ast.iter_child_nodes(scope))
        while todo:
            node = todo.pop()
            if isinstance(
                node,
                (
                    ast.FunctionDef,
                    ast.AsyncFunctionDef,
                    ast.Lambda,
                    ast.ClassDef,
                    ast.ListComp,
                    ast.SetComp,
                    ast.DictComp,
                    ast.GeneratorExp,
                ),
            ):
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                stores.append(node)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                calls.add(node.func.id)
            todo.extend(ast.iter_child_nodes(node))
        yield scope, stores, calls


def test_no_scope_that_translates_rebinds_the_underscore():
    """``for _ in ...`` in a function that also calls ``_()`` turns the message into a call of an int."""
    offenders = []
    for path in catalogs.source_files():
        text = path.read_text(encoding="utf-8")
        if not catalogs._CALL.search(text):
            continue
        tree = ast.parse(text)
        module_calls = "_" in {
            n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        for scope, stores, calls in _scopes(tree):
            uses = "_" in calls or (isinstance(scope, ast.Module) and module_calls)
            offenders += [f"{path.relative_to(paths.ROOT)}:{n.lineno}" for n in stores if n.id == "_" and uses]
    assert offenders == []


def test_the_underscore_check_can_fail(tmp_path):
    bad = "from redis_course.l10n import _\n\ndef f():\n    for _ in range(3):\n        pass\n    return _('x')\n"
    found = [
        n.lineno for scope, stores, calls in _scopes(ast.parse(bad)) for n in stores if n.id == "_" and "_" in calls
    ]
    assert found == [4]


MARKERS = {"_", "gettext", "ngettext", "pgettext", "npgettext", "N_"}


def _nested_markers(tree) -> list[int]:
    """Lines of a marked string inside the arguments of another marker call: Babel skips those."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MARKERS:
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                for inner in ast.walk(arg):
                    if (
                        isinstance(inner, ast.Call)
                        and isinstance(inner.func, ast.Name)
                        and inner.func.id in MARKERS
                        and inner.args
                        and isinstance(inner.args[0], ast.Constant)
                    ):
                        found.append(inner.lineno)
    return found


def test_no_marked_string_hides_inside_another_marker_call():
    offenders = []
    for path in catalogs.source_files():
        text = path.read_text(encoding="utf-8")
        if catalogs._CALL.search(text):
            offenders += [f"{path.relative_to(paths.ROOT)}:{n}" for n in _nested_markers(ast.parse(text))]
    assert offenders == [], "compute the inner message first: Babel does not extract it from there"


def test_the_nesting_check_can_fail(course):
    code = 'from redis_course.l10n import _\nx = _("a {b}", b=", ".join(_("c {d}", d=n) for n in range(2)))\n'
    assert _nested_markers(ast.parse(code)) == [2]
    (course / "notebooks" / "02-nested.py").write_text(code, encoding="utf-8")
    assert "c {d}" not in {m.id for m in catalogs.extract()}  # what the check protects against


_PROSE = re.compile(r"(?<![\w.:/-])[a-z]{2,}(?:'[a-z]+)? [a-z]{2,}(?![\w(])")
_SHOWN = {"print", "set_xlabel", "set_ylabel", "set_title", "suptitle", "annotate", "text"}


def _english_shown(tree) -> list[tuple[int, str]]:
    """String literals with English prose that a notebook prints or draws without the catalog."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        own_error = name.endswith(("Crash", "Error")) and not ast.unparse(func).startswith(
            "redis."
        )  # redis-py's texts stay
        args = list(node.args) if name in _SHOWN or own_error else []
        args += [k.value for k in node.keywords if k.arg in ("label", "alt")]
        for arg in args:
            parts = [arg] if isinstance(arg, ast.Constant) else arg.values if isinstance(arg, ast.JoinedStr) else []
            text = "".join(p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str))
            if _PROSE.search(text):
                found.append((node.lineno, text))
    return found


def test_notebooks_print_and_draw_prose_only_through_the_catalog():
    offenders = [
        f"notebooks/{src.name}:{line}: {text[:60]!r}"
        for src in sorted(paths.NOTEBOOKS.glob("[0-9][0-9]-*.py"))
        for line, text in _english_shown(ast.parse(src.read_text(encoding="utf-8")))
    ]
    assert offenders == [], "wrap these in _() and translate them (python3 run.py i18n extract):\n" + "\n".join(
        offenders
    )


def test_the_prose_check_can_fail():
    code = 'print("order sold out", x)\nax.set_xlabel(f"lost updates of {n}")\nprint("GET + SET:", _("a b"))\n'
    assert [line for line, _text in _english_shown(ast.parse(code))] == [1, 2]


def test_no_message_is_an_f_string():
    """``_(f"... {x}")`` cannot be translated: the catalog would need one entry per value of x."""
    offenders = []
    for path in catalogs.source_files():
        text = path.read_text(encoding="utf-8")
        if not catalogs._CALL.search(text):
            continue
        for node in ast.walk(ast.parse(text)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in MARKERS
                and node.args
                and isinstance(node.args[0], ast.JoinedStr)
            ):
                offenders.append(f"{path.relative_to(paths.ROOT)}:{node.lineno}")
    assert offenders == [], 'write _("... {name}", name=value) instead'


def test_extract_drops_untranslated_leftovers_and_prunes_the_rest_on_request(tmp_path):
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    from redis_course.i18n import catalogs

    po = catalogs.po_path("ru", tmp_path)
    po.parent.mkdir(parents=True)
    old = Catalog(locale="ru", domain=catalogs.DOMAIN)
    old.add("kept", "оставлено")
    old.add("gone, translated", "удалено")
    old.add("gone, never translated", "")
    with open(po, "wb") as f:
        write_po(f, old)
    template = Catalog(domain=catalogs.DOMAIN)
    template.add("kept")

    up = catalogs.update("ru", template, tmp_path)
    ids = {m.id for m in catalogs.read("ru", tmp_path) if m.id}
    assert sorted(up.obsolete) == ["gone, never translated", "gone, translated"]
    assert ids == {"kept", "gone, translated"}
    catalogs.update("ru", template, tmp_path, prune=True)
    assert {m.id for m in catalogs.read("ru", tmp_path) if m.id} == {"kept"}


def test_no_message_is_marked_inside_an_f_string():
    """Babel on Python 3.11 does not look inside f-strings: a ``_()`` or ``tr()`` there is never
    extracted, so `i18n extract` would call its translation unused and the reader would see English."""
    import re

    from redis_course.i18n import catalogs
    from redis_course import paths

    inside = re.compile(r"""\bf(["'])[^"'\n]*\{\s*(?:_|tr)\(""")
    found = [
        f"{p.relative_to(paths.ROOT)}:{n}"
        for p in catalogs.source_files()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if inside.search(line)
    ]
    assert not found, "a message marked inside an f-string: " + ", ".join(found)
