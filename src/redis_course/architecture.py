"""The architecture page, ``ARCHITECTURE.md``: every module of the course's code with its docstring's summary.

The page is written from the modules themselves (``course architecture``), grouped by package, so it
cannot drift from the code: ``course architecture --check`` (and the test suite) fails when a module
is missing from it, when a module has no docstring, or when the page is not what the code says now.
A module is a ``.py`` file, or a ``.mjs`` file whose leading ``//`` comment plays the docstring.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from . import paths
from .core.backend import CourseError
from .l10n import _

PAGE_NAME = "ARCHITECTURE.md"
PACKAGE = "redis_course"
SUFFIXES = (".py", ".mjs")
SKIP_DIRS = {"__pycache__", "locale", "templates"}
#: Sphinx roles in docstrings (``:mod:`.edition```) read as plain code on the page.
ROLE = re.compile(r":(?:mod|func|class|meth|data|attr|exc|obj):`~?([^`]+)`")
MODULE_LINE = re.compile(r"^- `([^`]+)`", re.M)

HEADER = f"""# Architecture

One entry per module of `src/{PACKAGE}/`, grouped by package, with the summary of its docstring.
This page is generated: after adding, removing or redescribing a module run
`.venv/bin/course architecture` (or `python3 run.py architecture`) and commit the result; the test
suite fails when the page and the code disagree.
"""


class ArchitectureError(CourseError):
    """The architecture page cannot be made or is out of date: one sentence."""


@dataclass(frozen=True)
class Module:
    path: str  # relative to src/redis_course, with "/" (``labs/sandbox/box.py``)
    summary: str  # the docstring's first paragraph on one line; "" when there is none

    @property
    def package(self) -> str:
        parts = self.path.split("/")[:-1]
        return ".".join([PACKAGE, *parts])


def summary_of(text: str, suffix: str) -> str:
    """The first paragraph of a module's docstring (or leading ``//`` comment), on one line."""
    if suffix == ".py":
        try:
            doc = ast.get_docstring(ast.parse(text), clean=True) or ""
        except SyntaxError:
            doc = ""
    else:
        lines = []
        for line in text.splitlines():
            if not line.startswith("//"):
                break
            lines.append(line[2:].strip())
        doc = "\n".join(lines)
    para = " ".join(ln.strip() for ln in doc.strip().split("\n\n")[0].splitlines()).strip()
    para = para[:-1] if para.endswith("::") else para  # reST's "followed by a code block"
    return ROLE.sub(r"``\1``", para)


def modules(src: Path | None = None) -> list[Module]:
    """Every module under ``src`` (default: this package), in path order."""
    src = src or Path(__file__).resolve().parent
    found = []
    for f in sorted(src.rglob("*")):
        rel = f.relative_to(src)
        if f.suffix not in SUFFIXES or not f.is_file() or set(rel.parts[:-1]) & SKIP_DIRS:
            continue
        found.append(Module(rel.as_posix(), summary_of(f.read_text(encoding="utf-8"), f.suffix)))
    return found


def render(mods: list[Module]) -> str:
    """The page: a section per package, a line per module (the package's own in ``__init__.py``)."""
    out = [HEADER]
    by_package: dict[str, list[Module]] = {}
    for m in mods:
        by_package.setdefault(m.package, []).append(m)
    for package in sorted(by_package):
        out.append(f"## `{package}`\n")
        if not any(m.path.endswith("__init__.py") for m in by_package[package]):
            out.append("A folder of files, not a package.\n")
        for m in by_package[package]:
            out.append(f"- `{m.path}`: {m.summary or '(no docstring)'}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def problems(page: Path | None = None, src: Path | None = None) -> list[str]:
    """What is wrong with the page: modules missing from it, modules without a docstring, staleness."""
    page = page or paths.ROOT / PAGE_NAME
    mods = modules(src)
    if not page.exists():
        return [_("{page} does not exist; run `course architecture` to write it.", page=page.name)]
    text = page.read_text(encoding="utf-8")
    listed = set(MODULE_LINE.findall(text))
    out = [_("{module} is missing from {page}.", module=m.path, page=page.name) for m in mods if m.path not in listed]
    out += [
        _("{module} has no docstring; its first line says what the module is for.", module=m.path)
        for m in mods
        if not m.summary
    ]
    if not out and text != render(mods):
        out.append(_("{page} is out of date; run `course architecture` and commit it.", page=page.name))
    return out


def write(page: Path | None = None, src: Path | None = None) -> Path:
    page = page or paths.ROOT / PAGE_NAME
    try:
        page.write_text(render(modules(src)), encoding="utf-8")
    except OSError as exc:
        raise ArchitectureError(_("{page} cannot be written: {reason}", page=page, reason=exc.strerror)) from None
    return page


def main(check: bool = False) -> int:
    """``course architecture``: write the page; with ``check``, only say what is wrong (exit 1)."""
    if check:
        found = problems()
        for line in found:
            print(line)
        return 1 if found else 0
    print(_("wrote {page}", page=write().name))
    return 0
