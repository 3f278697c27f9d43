"""Translation parity and outdated-translation detection, on the real docs and on broken copies."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from redis_course.i18n import parity as i18n, typography
from redis_course import paths

COURSE = Path(sys.executable).with_name("course")

EN = """# Counting { #counting }

Intro with a [link](../00-start/index.md) and <https://redis.io/docs/>.

## Increment { #increment }

!!! tip "A tip"
    Text.

=== "redis-cli"

    ```text
    redis> INCR n
    (integer) 1
    ```

=== "Python"

    ```python
    r.incr(r.key("n"))
    ```

## Done { #done }

![diagram](img/diagram.svg)
"""

RU = """# Счётчики { #counting }

Вступление со [ссылкой](../00-start/index.md) и <https://redis.io/docs/>.

## Увеличение { #increment }

!!! tip "Совет"
    Текст.

=== "redis-cli"

    ```text
    redis> INCR n
    (integer) 1
    ```

=== "Python"

    ```python
    r.incr(r.key("n"))
    ```

## Готово { #done }

![схема](img/diagram.svg)
"""

ZH = (
    RU.replace("Счётчики", "计数器")
    .replace("Вступление со [ссылкой]", "简介和[链接]")
    .replace("Увеличение", "递增")
    .replace("Совет", "提示")
    .replace("Текст.", "正文。")
    .replace("Готово", "完成")
    .replace("схема", "示意图")
    .replace(" и <https", " 以及 <https")
)

PAGE = Path("zz-parity") / "index.md"


@pytest.fixture
def docs(tmp_path, monkeypatch):
    """A copy of docs/ plus one page with every structure the checker knows, in parity in all languages."""
    root = tmp_path / "course"
    shutil.copytree(paths.DOCS, root / "docs", ignore=shutil.ignore_patterns("notebook.md", "*.ipynb"))
    for lang, text in (("en", EN), ("ru", RU), ("zh", ZH)):
        (root / "docs" / lang / PAGE).parent.mkdir(parents=True)
        (root / "docs" / lang / PAGE).write_text(text, encoding="utf-8")
    # only the synthetic page matters below: drop the copied pages' own problems, if any
    monkeypatch.setattr(paths, "ROOT", root)
    monkeypatch.setattr(paths, "DOCS", root / "docs")
    for page, _ in i18n.check_all().items():
        lang, rel = page.split("/", 2)[1:]
        for lang_ in paths.LANGS:
            (root / "docs" / lang_ / rel).unlink(missing_ok=True)
    return root / "docs"


def _edit(docs: Path, lang: str, old: str, new: str) -> None:
    page = docs / lang / PAGE
    text = page.read_text(encoding="utf-8")
    assert old in text, old
    page.write_text(text.replace(old, new, 1), encoding="utf-8")


def _problems(lang: str = "ru") -> list[str]:
    return i18n.check_all().get(f"docs/{lang}/{PAGE}", [])


def test_repository_docs_are_in_parity():
    report = i18n.check_all()
    assert report == {}, "\n".join(f"{p}: {'; '.join(v)}" for p, v in report.items())


def test_synthetic_page_is_in_parity(docs):
    assert i18n.check_all() == {}
    sk = i18n.skeleton(EN)
    assert sk.headings == ["# #counting", "## #increment", "## #done"]
    assert len(sk.code) == 2 and sk.links == ["../00-start/index.md", "img/diagram.svg", "https://redis.io/docs/"]
    assert sk.blocks == ["!!! tip", "===", "==="]


def test_missing_page(docs):
    (docs / "zh" / PAGE).unlink()
    assert _problems("zh")[0].startswith(f"missing: docs/zh/{PAGE}")
    assert _problems("ru") == []


def test_page_without_english_original(docs):
    extra = docs / "ru" / "zz-only-ru.md"
    extra.write_text("# Только по-русски { #only }\n", encoding="utf-8")
    assert i18n.check_all()["docs/ru/zz-only-ru.md"] == ["no English original docs/en/zz-only-ru.md"]


def test_differing_heading_id(docs):
    _edit(docs, "ru", "{ #increment }", "{ #uvelichenie }")
    assert any(p.startswith("heading ids differ") for p in _problems())


def test_heading_without_id(docs):
    _edit(docs, "zh", "## 完成 { #done }", "## 完成")
    problems = _problems("zh")
    assert any("heading without an explicit id" in p and "完成" in p for p in problems)


def test_heading_without_id_in_english(docs):
    _edit(docs, "en", "## Done { #done }", "## Done")
    assert any("heading without an explicit id in docs/en/" in p for p in _problems())


def test_changed_code_block(docs):
    _edit(docs, "ru", 'r.incr(r.key("n"))', 'r.incrby(r.key("n"), 1)  # счётчик')
    assert any(p.startswith("code blocks differ") for p in _problems())


OUTPUT_EN = (
    "\n```text\nwrong node:        MovedError 7466 127.0.0.1:53038\n127.0.0.1:25413 took over after 2.8 s\n```\n"
)
OUTPUT = {
    "ru": "\n```text\nне тот узел:       MovedError 7466 127.0.0.1:53038\n"
    "127.0.0.1:25413 взял на себя роль основного через 2.8 с\n```\n",
    "zh": "\n```text\n错误的节点：MovedError 7466 127.0.0.1:53038\n127.0.0.1:25413 在 2.8 秒后接管\n```\n",
}


def _with_output(docs: Path, blocks: dict[str, str]) -> None:
    for lang, block in blocks.items():
        page = docs / lang / PAGE
        page.write_text(page.read_text(encoding="utf-8") + block, encoding="utf-8")


def test_a_program_output_may_be_shown_as_it_prints_in_the_readers_language(docs):
    _with_output(docs, {"en": OUTPUT_EN, **OUTPUT})
    assert _problems("ru") == [] and _problems("zh") == []


def test_a_program_output_may_stay_english(docs):
    _with_output(docs, {"en": OUTPUT_EN, "ru": OUTPUT_EN, "zh": OUTPUT_EN})
    assert _problems("ru") == [] and _problems("zh") == []


@pytest.mark.parametrize(
    "old, new", [("7466", "7467"), ("2.8", "3.1"), ("MovedError", "AskError"), ("не тот узел:", "не тот сервер:")]
)
def test_a_localized_output_that_changed_a_value_or_a_word_is_a_difference(docs, old, new):
    _with_output(docs, {"en": OUTPUT_EN, "ru": OUTPUT["ru"].replace(old, new), "zh": OUTPUT["zh"]})
    assert any(p.startswith("code blocks differ") for p in _problems("ru"))
    assert _problems("zh") == []


def test_a_redis_cli_session_is_not_output_and_stays_identical(docs):
    _edit(docs, "ru", "    (integer) 1\n", "    (целое) 1\n")
    assert any(p.startswith("code blocks differ") for p in _problems())
    assert not i18n.is_output("text", "127.0.0.1:7000> GET k\n(nil)\n")
    assert i18n.is_output("text", "wrong node: MovedError\n") and not i18n.is_output("python", "print(1)\n")


def test_a_code_block_with_a_translated_message_is_still_a_difference(docs):
    _edit(docs, "ru", '    r.incr(r.key("n"))\n', '    r.incr(r.key("n"))  # не тот узел:\n    print("не тот узел:")\n')
    assert any(p.startswith("code blocks differ") for p in _problems())


def test_changed_link_target(docs):
    _edit(docs, "zh", "(img/diagram.svg)", "(img/diagram-zh.svg)")
    assert any(p.startswith("links and images differ") for p in _problems("zh"))


def test_changed_autolink(docs):
    _edit(docs, "ru", "<https://redis.io/docs/>", "<https://redis.io/ru/>")
    assert any(p.startswith("links and images differ") for p in _problems())


def test_missing_admonition(docs):
    _edit(docs, "ru", '!!! tip "Совет"\n    Текст.\n', "Совет: текст.\n")
    assert any(p.startswith("admonitions and tabs differ") for p in _problems())


def test_missing_tab(docs):
    _edit(docs, "zh", '=== "Python"\n', "")
    assert any(p.startswith("admonitions and tabs differ") for p in _problems("zh"))


def test_pending_translation_needs_the_note(docs):
    pending = "---\ntranslation: pending\n---\n\n" + EN
    (docs / "ru" / PAGE).write_text(pending, encoding="utf-8")
    assert any("translation: pending" in p and "course-untranslated" in p for p in _problems())
    note = '!!! info "Ещё не переведено"\n    Эта страница пока только на английском.\n{ .course-untranslated }\n\n'
    (docs / "ru" / PAGE).write_text(pending.replace("# Counting", note + "# Counting"), encoding="utf-8")
    assert _problems() == []


def test_outdated_after_the_english_page_changes(docs):
    assert f"docs/ru/{PAGE}" in i18n.outdated()  # never stamped
    i18n.stamp(docs / "ru" / PAGE)
    i18n.stamp(docs / "zh" / PAGE)
    assert f"docs/ru/{PAGE}" not in i18n.outdated() and f"docs/zh/{PAGE}" not in i18n.outdated()
    assert i18n.front_matter((docs / "ru" / PAGE).read_text(encoding="utf-8"))["source"]
    assert _problems() == []  # the front matter does not disturb parity
    _edit(docs, "en", "Intro with", "An introduction with")
    stale = i18n.outdated()
    assert stale[f"docs/ru/{PAGE}"].startswith("English page changed")
    assert stale[f"docs/zh/{PAGE}"].startswith("English page changed")
    i18n.stamp(docs / "ru" / PAGE)  # restamping twice keeps one source line
    i18n.stamp(docs / "ru" / PAGE)
    assert (docs / "ru" / PAGE).read_text(encoding="utf-8").count("source:") == 1
    assert f"docs/ru/{PAGE}" not in i18n.outdated()


def _course_i18n(docs: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, COURSE_ROOT=str(docs.parent))
    return subprocess.run([str(COURSE), "i18n", *args], env=env, capture_output=True, text=True, timeout=120)


def test_course_i18n_check_exit_codes(docs):
    ok = _course_i18n(docs, "check")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "0 with problems" in ok.stdout
    _edit(docs, "ru", "{ #increment }", "{ #other }")
    bad = _course_i18n(docs, "check")
    assert bad.returncode == 1 and f"docs/ru/{PAGE}" in bad.stdout and "heading ids differ" in bad.stdout


def test_course_i18n_stamp_and_status(docs):
    assert _course_i18n(docs, "stamp").returncode == 2  # no pages named
    stamped = _course_i18n(docs, "stamp", str(docs / "ru" / PAGE))
    assert stamped.returncode == 0 and "stamped" in stamped.stdout
    _edit(docs, "en", "Intro with", "An introduction with")
    status = _course_i18n(docs, "status")
    assert status.returncode == 0 and f"docs/ru/{PAGE}: English page changed" in status.stdout
    check = _course_i18n(docs, "check")
    assert check.returncode == 0 and "older than their English original" in check.stdout


def test_line_breaks_inside_chinese_paragraphs_are_reported(docs):
    assert typography.soft_breaks("第一段没有换行。\n\n- 列表项\n  接着写。\n\n```\n代码\n可以换行\n```\n") == [4]
    assert typography.soft_breaks("| 表格 |\n| 第二行 |\n\n# 标题\n正文。\n") == []
    _edit(docs, "zh", "简介和[链接]", "简介\n和[链接]")
    assert any("line breaks inside Chinese paragraphs" in p and "lines 4" in p for p in _problems("zh"))
    assert not any("line breaks" in p for p in _problems("ru"))


def test_comments_in_code_blocks_may_be_translated_and_nothing_else(docs):
    from redis_course.i18n import comments

    assert (
        comments.strip("python", 'r.incr(k)   # 1\nx = "#not"  # note\n# only a comment\n') == 'r.incr(k)\nx = "#not"\n'
    )
    assert comments.strip("lua", "local n = 1 -- one\nreturn '--'\n") == "local n = 1\nreturn '--'\n"
    assert comments.strip("go", 'x := 1 // int\ns := "//"') == 'x := 1\ns := "//"'
    assert comments.strip("text", "redis> GET k   # not a comment\n") == "redis> GET k   # not a comment\n"
    assert comments.comments("bash", "python3 run.py test    # run the tests\n") == ["# run the tests"]
    _edit(docs, "ru", 'r.incr(r.key("n"))\n', 'r.incr(r.key("n"))   # увеличить n\n')
    assert _problems("ru") == []
    _edit(docs, "ru", 'r.incr(r.key("n"))   # увеличить n', 'r.incr(r.key("m"))   # увеличить n')
    assert any(p.startswith("code blocks differ") for p in _problems("ru"))


def test_numbers_are_grouped_the_way_each_language_writes_them(docs):
    text = "| N | время |\n|---|---|\n| 10 000 | 1\u00a0500 мс |\n\n```\nredis> SET n 10 000\n```\n`10 000`\n"
    assert typography.badly_grouped(text, "ru") == [(3, "10 000")]
    assert typography.badly_grouped("共 10,000 个键，耗时 1 500 毫秒。\n", "zh") == [(1, "1 500")]
    assert typography.badly_grouped("10 000 keys\n", "en") == []
    _edit(docs, "ru", "Текст.", "Текст про 10 000 ключей.")
    assert any("no-break space" in p and "'10 000'" in p for p in _problems("ru"))


def test_a_changed_english_passage_of_a_notebook_marks_its_translations_outdated(tmp_path):
    from redis_course.i18n import nbcells

    src = tmp_path / "09-demo.py"
    src.write_text(
        '# %% [markdown] lang="en"\n# Counting views\n\n# %% [markdown] lang="ru"\n# Считаем просмотры\n\n'
        '# %% [markdown] lang="zh"\n# 统计浏览量\n\n# %%\nprint(1)\n\n'
        '# %% [markdown] lang="en"\n# Second\n\n# %% [markdown] lang="ru"\n# Второй\n\n'
        '# %% [markdown] lang="zh"\n# 第二\n',
        encoding="utf-8",
    )
    assert len(nbcells.outdated_cells(src)) == 4 and all("never stamped" in r for r in nbcells.outdated_cells(src))
    assert nbcells.stamp_cells(src) == 4 and nbcells.outdated_cells(src) == []
    src.write_text(
        src.read_text(encoding="utf-8").replace("# Counting views", "# Counting page views"), encoding="utf-8"
    )
    rows = nbcells.outdated_cells(src)
    assert [r.split(":")[0] for r in rows] == ["line 1", "line 1"] and "English changed" in rows[0]
    assert {"ru passage", "zh passage"} == {r.split(": ")[1] for r in rows}
    assert nbcells.stamp_cells(src) == 2 and nbcells.outdated_cells(src) == []


def test_every_notebook_passage_is_stamped_against_its_english():
    from redis_course.i18n import nbcells

    rows = {src: r for src, r in nbcells.outdated_all().items()}
    assert all("never stamped" not in row for r in rows.values() for row in r), (
        "stamp new translated passages: python3 run.py i18n stamp notebooks/NN-topic.py"
    )


def test_output_messages_are_whole_words_and_a_longer_match_may_give_way():
    """``keys {keys}`` must not swallow the next column's title, nor ``limiter`` the end of a package name."""
    en = "strategy                         B/client keys trips\npyrate-limiter: GCRA 4.5.1\n"
    ru = "стратегия                        Б/клиент ключи обмены\npyrate-limiter: GCRA 4.5.1\n"
    assert i18n.output_matches(en, ru, "ru")
    assert not i18n.output_matches(en, ru.replace("pyrate-limiter: GCRA", "pyrate-ограничитель: GCRA"), "ru")
    assert not i18n.output_matches(en, ru.replace("ключи обмены", "ключей обмены"), "ru")


@pytest.mark.parametrize(
    "page, said",
    [
        (
            "docs/en/01-incr/index.md",
            "is an original, not a translation: stamp its translations (docs/ru/01-incr/index.md",
        ),
        ("docs/ru/no-such-page.md", "does not exist"),
        ("README.md", "is not a translated page: name a page under docs/ru/ or docs/zh/"),
    ],
)
def test_stamping_what_is_not_a_translation_says_why_in_one_sentence(page, said, capsys):
    before = (paths.ROOT / page).read_bytes() if (paths.ROOT / page).exists() else None
    assert i18n.main_stamp([str(paths.ROOT / page)]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert ((paths.ROOT / page).read_bytes() if (paths.ROOT / page).exists() else None) == before
