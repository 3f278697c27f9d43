"""ARCHITECTURE.md lists every module of src/redis_course with its docstring's summary, and is current."""

from __future__ import annotations

import shutil
from pathlib import Path

from redis_course import architecture, cli, paths

SRC = Path(architecture.__file__).resolve().parent
PAGE = paths.ROOT / architecture.PAGE_NAME


def module_files(src: Path) -> list[str]:
    """The modules, found here independently of ``architecture.modules``."""
    return sorted(
        p.relative_to(src).as_posix() for p in [*src.rglob("*.py"), *src.rglob("*.mjs")] if "__pycache__" not in p.parts
    )


def test_every_module_is_on_the_page():
    text = PAGE.read_text(encoding="utf-8")
    missing = [m for m in module_files(SRC) if f"- `{m}`: " not in text]
    assert not missing, f"missing from {PAGE.name} (run `course architecture`): {missing}"


def test_the_page_is_what_the_code_says_now():
    assert architecture.problems() == [], "run `.venv/bin/course architecture` and commit ARCHITECTURE.md"
    assert PAGE.read_text(encoding="utf-8") == architecture.render(architecture.modules())


def test_each_line_is_the_modules_docstring_summary():
    text = PAGE.read_text(encoding="utf-8")
    assert "- `labs/sandbox/box.py`: One box per student run:" in text
    assert "## `redis_course.labs.sandbox`" in text and "## `redis_course.webconsole`" in text
    assert "- `webconsole/worker.mjs`: The Web Worker behind every console of a page:" in text
    assert ":mod:" not in text and ":func:" not in text and "(no docstring)" not in text


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "redis_course"
    shutil.copytree(SRC, src, ignore=shutil.ignore_patterns("__pycache__", "fonts", "locale", "*.otf"))
    page = tmp_path / architecture.PAGE_NAME
    architecture.write(page, src)
    assert architecture.problems(page, src) == []
    return src, page


def test_a_new_module_is_reported_missing_until_the_page_is_written(tmp_path):
    src, page = _copy(tmp_path)
    (src / "labs" / "sandbox" / "zz_new.py").write_text('"""A module the page does not know yet."""\n')
    found = architecture.problems(page, src)
    assert found and "labs/sandbox/zz_new.py" in found[0] and "missing" in found[0], found
    architecture.write(page, src)
    assert architecture.problems(page, src) == []
    assert "- `labs/sandbox/zz_new.py`: A module the page does not know yet." in page.read_text(encoding="utf-8")


def test_a_changed_docstring_or_a_missing_one_is_reported(tmp_path):
    src, page = _copy(tmp_path)
    target = src / "tables.py"
    target.write_text(target.read_text(encoding="utf-8").replace('"""Plain-text tables', '"""Tables', 1))
    assert ["out of date" in line for line in architecture.problems(page, src)] == [True]
    (src / "zz_bare.py").write_text("X = 1\n")
    architecture.write(page, src)
    assert any("zz_bare.py has no docstring" in line for line in architecture.problems(page, src))


def test_check_command_exits_1_and_says_why(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(paths, "ROOT", tmp_path)  # no page there
    assert cli.main(["architecture", "--check"]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "ARCHITECTURE.md does not exist" in out[0]
    assert cli.main(["architecture"]) == 0 and cli.main(["architecture", "--check"]) == 0
    assert (tmp_path / "ARCHITECTURE.md").read_text(encoding="utf-8") == PAGE.read_text(encoding="utf-8")
