"""Pages that include the lessons' code (``--8<-- "src/...:section"``): every include resolves, with the site's settings.

A page shows a script from its lesson's module instead of a copy of it (pymdownx.snippets).  The site
build is strict and fails on a missing file or section; these tests say the same in a second, without a
build, and from a folder that is not the repository's root, as mkdocs may run anywhere.  And no page
writes out again a script that a lesson module holds: it includes the section that holds the script's
assignment (``# --8<-- [start:NAME]`` before it, ``# --8<-- [end:NAME]`` after it) in a Python block.
"""

from __future__ import annotations

import re

import markdown
import pytest

from redis_course import paths
from redis_course.site import build as site

INCLUDE = re.compile(r'^[ \t]*-+8<-+[ \t]+"([^"]+)"[ \t]*$', re.M)
PAGES = sorted(
    p
    for lang in paths.LANGS
    for p in (paths.DOCS / lang).rglob("*.md")
    if p.name != "notebook.md" and INCLUDE.search(p.read_text("utf-8"))
)


def _snippets_config(lang: str) -> dict:
    """The snippets extension's settings exactly as ``build/mkdocs.<lang>.yml`` gives them."""
    for ext in site._markdown_extensions(lang):
        if isinstance(ext, dict) and "pymdownx.snippets" in ext:
            return ext["pymdownx.snippets"]
    raise AssertionError("mkdocs.yml has no pymdownx.snippets")


def _included(page, lang: str) -> str:
    """The page's Markdown once pymdownx.snippets has replaced every include with what it names."""
    md = markdown.Markdown(
        extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": _snippets_config(lang)}
    )
    return "\n".join(md.preprocessors["snippet"].run(page.read_text("utf-8").split("\n")))


def test_some_pages_include_the_lessons_code():
    assert {p.relative_to(paths.DOCS / p.relative_to(paths.DOCS).parts[0]).as_posix() for p in PAGES} >= {
        "02-atomicity/index.md",
        "05-durable/index.md",
    }


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(paths.DOCS).as_posix())
def test_every_include_resolves_from_any_folder(page, tmp_path, monkeypatch):
    lang = page.relative_to(paths.DOCS).parts[0]
    monkeypatch.chdir(tmp_path)  # base_path must not depend on where mkdocs runs
    text = page.read_text("utf-8")
    shown = _included(page, lang)  # check_paths: a missing file or section raises
    for ref in INCLUDE.findall(text):
        path, _, section = ref.rpartition(":")
        assert path.startswith("src/redis_course/lessons/"), f"{page}: {ref}: pages include the lessons' modules only"
        source = (paths.ROOT / path).read_text("utf-8")
        body = source.split(f"# --8<-- [start:{section}]\n", 1)[1].split(f"# --8<-- [end:{section}]\n", 1)[0]
        assert body.strip(), f"{ref}: an empty section"
        for line in body.strip("\n").splitlines():
            if line.strip():
                assert line.strip() in shown, f"{page}: {ref}: {line!r} is not on the page"
    assert "8<-" not in shown


#: The scripts the lessons' pages show: (page, module, constant).
SHOWN = [
    ("01-incr", "money", "WITHDRAW_ONCE"),
    ("02-atomicity", "money", "WITHDRAW"),
    ("02-atomicity", "atomicity", "MOVE"),
    ("02-atomicity", "atomicity", "TRANSFER"),
    ("04-rate-limiting", "ratelimit_lua", "CLOCK_LUA"),
    ("05-durable", "dualwrite", "APPLY_ONCE"),
    ("07-production", "functions", "REGISTER_LUA"),
]


@pytest.mark.parametrize("lesson, module, name", SHOWN, ids=lambda v: v)
def test_the_script_on_the_page_is_the_one_the_lesson_runs(lesson, module, name):
    import importlib

    text = getattr(importlib.import_module(f"redis_course.lessons.{module}"), name)
    assignment = f'{name} = """{text}"""'
    for lang in paths.LANGS:
        shown = _included(paths.DOCS / lang / lesson / "index.md", lang)
        indented = "\n".join("    " + line if line else line for line in assignment.split("\n"))
        assert assignment in shown or indented in shown, (lang, f"{module}.{name}")  # a tab indents it


def _code(lines) -> list[str]:
    """Lines of Lua as a copy would keep them: no comment lines, no trailing comments, no indentation."""
    out = []
    for line in lines:
        line = re.sub(r"\s+--\s.*$", "", line).strip()
        if line and not line.startswith("--"):
            out.append(line)
    return out


def _scripts() -> dict[str, list[str]]:
    """The code lines of every module-level string constant of the lessons with at least two: ``{"money.WITHDRAW": lines}``.

    Two, not three: atomicity.MOVE is two lines of code; no one-line constant (a name, a key) is a script.
    """
    import ast

    out = {}
    for module in sorted((paths.ROOT / "src" / "redis_course" / "lessons").glob("*.py")):
        for node in ast.parse(module.read_text("utf-8")).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                lines = _code(node.value.value.splitlines())
                for target in node.targets:
                    if isinstance(target, ast.Name) and len(lines) >= 2:
                        out[f"{module.stem}.{target.id}"] = lines
    return out


def test_no_page_copies_a_script_of_the_lessons():
    scripts, found = _scripts(), set()
    assert {
        "money.WITHDRAW",
        "money.WITHDRAW_ONCE",
        "atomicity.MOVE",
        "atomicity.TRANSFER",
        "dualwrite.APPLY_ONCE",
        "ratelimit_lua.CLOCK_LUA",
    } <= scripts.keys()
    for page in sorted((paths.DOCS / "en").rglob("*.md")):
        if page.name == "notebook.md":  # rendered from the stored notebook, which shows the module's own text
            continue
        lines = _code(page.read_text("utf-8").splitlines())
        for name, script in scripts.items():
            if any(lines[i : i + len(script)] == script for i in range(len(lines) - len(script) + 1)):
                found.add((page.relative_to(paths.DOCS / "en").as_posix(), name))
    assert not found, f'include these from their module (--8<-- "...py:section"): {sorted(found)}'


#: Part of a script is copied when this many of its code lines follow one another in a page's code
#: block.  One finds ``end`` everywhere; two find ``end`` then ``return 0`` of ledger.RELEASE_PENDING
#: in lesson 03's BUY script, which is not a copy; three find only real copies.
RUN = 3


def _literal_parts(value) -> list[str]:
    """The literal text of a constant, piece by piece: a plain string, the strings of a ``+`` chain,
    the fixed parts of an f-string (its ``{{`` already read as ``{``)."""
    import ast

    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return _literal_parts(value.left) + _literal_parts(value.right)
    if isinstance(value, ast.JoinedStr):
        return [v.value for v in value.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [value.value]
    return []


def _script_parts() -> dict[str, list[list[str]]]:
    """The code lines of each literal part of the lessons' module-level string constants, plain or
    built with ``+`` or an f-string: ``{"semaphore.ACQUIRE_LUA": [lines of a part, ...]}``, parts of
    fewer than :data:`RUN` code lines left out."""
    import ast

    out = {}
    for module in sorted((paths.ROOT / "src" / "redis_course" / "lessons").glob("*.py")):
        for node in ast.parse(module.read_text("utf-8")).body:
            if not isinstance(node, ast.Assign):
                continue
            parts = [lines for part in _literal_parts(node.value) if len(lines := _code(part.splitlines())) >= RUN]
            for target in node.targets:
                if isinstance(target, ast.Name) and parts:
                    out[f"{module.stem}.{target.id}"] = parts
    return out


def _code_blocks(text: str) -> list[list[str]]:
    """The lines of every fenced code block of a page (```` ``` ```` or ``~~~``, indented or not)."""
    blocks, block, fence = [], None, None
    for line in text.splitlines():
        stripped = line.strip()
        if block is None:
            m = re.match(r"(`{3,}|~{3,})", stripped)
            if m:
                block, fence = [], m.group(1)
        elif stripped.startswith(fence) and not stripped.strip(fence[0]):
            blocks.append(block)
            block = None
        else:
            block.append(line)
    return blocks


def _copies_a_run(part: list[str], block: list[str]) -> bool:
    """Whether :data:`RUN` consecutive code lines of ``part`` appear, consecutive, in ``block``."""
    runs = {tuple(part[i : i + RUN]) for i in range(len(part) - RUN + 1)}
    return any(tuple(block[i : i + RUN]) in runs for i in range(len(block) - RUN + 1))


def test_no_page_copies_part_of_a_script_of_the_lessons():
    """An excerpt or a sketch of a script goes stale as silently as a whole copy, and a script built as
    ``CLOCK_LUA + "..."`` or as an f-string is not a plain constant: each literal part counts,
    in every language's pages."""
    scripts, found = _script_parts(), set()
    assert {
        "semaphore.ACQUIRE_LUA",
        "ratelimit_lua.GCRA_LUA",
        "functions.REGISTER_LUA",
        "money.WITHDRAW",
        "ledger.RELEASE_PENDING",
    } <= scripts.keys()
    for lang in paths.LANGS:
        for page in sorted((paths.DOCS / lang).rglob("*.md")):
            if page.name == "notebook.md":
                continue
            for block in _code_blocks(page.read_text("utf-8")):
                lines = _code(block)
                for name, parts in scripts.items():
                    if any(_copies_a_run(part, lines) for part in parts):
                        found.add((page.relative_to(paths.DOCS).as_posix(), name))
    assert not found, f'include these from their module (--8<-- "...py:section"): {sorted(found)}'
