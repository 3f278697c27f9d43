"""The term base (docs/terms.yml): the course is clean, and a disallowed variant planted in a page, a
notebook passage, a catalog entry or a starter is reported with its file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from redis_course import paths
from redis_course.i18n import terms


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A copy of what the term check reads: the pages, the term base, notebook sources, catalogs, labs."""
    root = tmp_path / "course"
    shutil.copytree(
        paths.ROOT / "docs", root / "docs", ignore=shutil.ignore_patterns("notebook.md", "*.svg", "*.png", "assets")
    )
    (root / "notebooks").mkdir()
    for src in paths.ROOT.glob("notebooks/[0-9][0-9]-*.py"):
        shutil.copy(src, root / "notebooks" / src.name)
    shutil.copytree(paths.ROOT / "src/redis_course/l10n/locale", root / "src/redis_course/l10n/locale")
    (root / "src/redis_course/labs/check").mkdir(parents=True)
    shutil.copy(paths.ROOT / "src/redis_course/labs/check/texts.py", root / "src/redis_course/labs/check/texts.py")
    for lab in paths.ROOT.glob("labs/[0-9][0-9]-*"):
        (root / "labs" / lab.name).mkdir(parents=True)
        for name in ("hints.yml", "lab.yml", "starter.py"):
            if (lab / name).exists():
                shutil.copy(lab / name, root / "labs" / lab.name / name)
    (root / "quizzes").mkdir()
    for quiz in paths.ROOT.glob("quizzes/[0-9][0-9]-*.yml"):
        shutil.copy(quiz, root / "quizzes" / quiz.name)
    return root


def _insert_after(path: Path, anchor: str, line: str) -> int:
    """Insert ``line`` after the first line containing ``anchor``; its 1-based line number."""
    lines = path.read_text(encoding="utf-8").split("\n")
    i = next(n for n, text in enumerate(lines) if anchor in text)
    lines.insert(i + 1, line)
    path.write_text("\n".join(lines), encoding="utf-8")
    return i + 2


def test_the_course_uses_one_term_per_concept():
    assert terms.problems() == {}


def test_the_term_base_is_well_formed():
    concepts = terms.load()
    assert len({c.en for c in concepts}) == len(concepts), "one entry per concept"
    for c in concepts:
        assert set(c.terms) == {"ru", "zh"}, c.en
        assert c.variants, f"{c.en}: an entry without variants enforces nothing"
        assert c.why.strip(), f"{c.en}: say why the preferred term was chosen"
        for v in c.variants:  # the preferred word itself must never be a disallowed variant
            assert not v.regex.search(c.terms[v.lang]), (c.en, v.written)


def test_a_clean_copy_passes(tree: Path):
    assert terms.problems(tree) == {}


def test_a_page_with_a_variant_fails(tree: Path):
    page = tree / "docs/ru/04-rate-limiting/index.md"
    n = _insert_after(page, "# ", "Такие лимитерами не бывают.")
    assert terms.problems(tree) == {
        "docs/ru/04-rate-limiting/index.md": [
            f"line {n}: «лимитерами» — ru says «ограничитель частоты» for rate limiter (docs/terms.yml)"
        ]
    }


def test_code_is_not_prose(tree: Path):
    page = tree / "docs/zh/04-rate-limiting/index.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(
        text + "\n\n调用 `lua_time_ms` 与 `wait 5ms`。\n\n```python\nsleep_ms(5ms)\n```\n\n[链接](../notebook/)\n",
        encoding="utf-8",
    )
    assert terms.problems(tree) == {}
    page.write_text(text + "\n\n```python\nx = 1  # 冻结 5 秒\n```\n", encoding="utf-8")
    assert list(terms.problems(tree)) == ["docs/zh/04-rate-limiting/index.md"]


def test_a_notebook_passage_with_a_variant_fails(tree: Path):
    src = tree / "notebooks/07-production.py"
    n = _insert_after(src, '# %% [markdown] lang="zh"', "# 服务器被冻结了。")
    found = terms.problems(tree)
    assert found == {
        "notebooks/07-production.py": [
            f"line {n}: «冻结» — zh says «暂停» for pause (a server stopped with SIGSTOP) (docs/terms.yml)"
        ]
    }


def test_a_variant_in_english_passages_of_a_notebook_is_not_looked_for(tree: Path):
    src = tree / "notebooks/07-production.py"
    _insert_after(src, '# %% [markdown] lang="en"', "# Open the notebook at 5 ms.")
    assert terms.problems(tree) == {}


def test_a_catalog_translation_with_a_variant_fails(tree: Path):
    po = tree / "src/redis_course/l10n/locale/ru/LC_MESSAGES/course.po"
    text = po.read_text(encoding="utf-8")
    po.write_text(text + '\nmsgid "planted"\nmsgstr ""\n"Открытые тесты и держатель слота"\n', encoding="utf-8")
    n = text.count("\n") + 4
    assert terms.problems(tree) == {
        "locale/ru/LC_MESSAGES/course.po": [f"line {n}: «держатель» — ru says «владелец» for holder (docs/terms.yml)"]
    }


def test_a_variant_in_a_msgid_is_not_looked_for(tree: Path):
    po = tree / "src/redis_course/l10n/locale/zh/LC_MESSAGES/course.po"
    po.write_text(
        po.read_text(encoding="utf-8") + '\nmsgid "the notebook waits 5 ms"\nmsgstr "笔记本等待 5 毫秒"\n',
        encoding="utf-8",
    )
    assert terms.problems(tree) == {}


@pytest.mark.skipif(paths.is_student_edition(), reason="a student edition ships lab.py, not the starters")
def test_a_starter_with_a_variant_fails(tree: Path):
    starter = tree / "labs/04-rate-limiting/starter.py"
    n = _insert_after(starter, "import ", "# корзина токенов")
    assert terms.problems(tree) == {
        "labs/04-rate-limiting/starter.py": [
            f"line {n}: «корзина токенов» — ru says «ведро токенов» for token bucket (docs/terms.yml)"
        ]
    }


def test_a_lab_hint_with_a_variant_fails(tree: Path):
    hints = tree / "labs/07-production/hints.yml"
    n = _insert_after(hints, "  zh:", '  ru: "Основной, а не первичный узел держит таймаут."')
    found = terms.problems(tree)["labs/07-production/hints.yml"]
    assert [f.split(" — ")[0] for f in found] == [f"line {n}: «первичный узел»", f"line {n}: «таймаут»"]


def test_a_question_with_a_variant_fails(tree: Path):
    quiz = tree / "quizzes/07-production.yml"
    n = _insert_after(quiz, "      zh:", "      zh: 哪个槽位都一样。")
    found = terms.problems(tree)["quizzes/07-production.yml"]
    assert [f.split(" — ")[0] for f in found] == [f"line {n}: «槽位»"]


def test_the_glossary_names_the_preferred_term(tree: Path):
    page = tree / "docs/ru/glossary.md"
    page.write_text(
        page.read_text(encoding="utf-8").replace("| **выгрузка** | flush |", "| **выгрузки** | flush |"),
        encoding="utf-8",
    )
    found = terms.problems(tree)["docs/ru/glossary.md"]
    assert len(found) == 1 and "«выгрузки», the term base «выгрузка»" in found[0]


def test_a_bad_pattern_is_one_sentence(tree: Path):
    base = tree / "docs/terms.yml"
    base.write_text(
        base.read_text(encoding="utf-8") + "\n- en: broken\n  ru: x\n  zh: y\n  avoid:\n"
        '    ru: ["re:(unclosed"]\n  why: z\n',
        encoding="utf-8",
    )
    found = terms.problems(tree)
    assert (
        list(found) == ["docs/terms.yml"]
        and "'re:(unclosed' of 'broken' is not a valid pattern" in found["docs/terms.yml"][0]
    )


def test_words_kept_in_code_are_searched(tree: Path):
    texts = tree / "src/redis_course/labs/check/texts.py"
    planted = '    "planted": {"en": "paused", "ru": "сервер заморожен", "zh": "服务器已冻结"},'
    n = _insert_after(texts, "TEXTS: dict", planted)
    found = terms.problems(tree)["src/redis_course/labs/check/texts.py"]
    assert [f.split(" — ")[0] for f in found] == [f"line {n}: «заморожен»", f"line {n}: «冻结»"]
