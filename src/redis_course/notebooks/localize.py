"""From one source to one notebook per language: ``notebooks/NN-topic.py`` → ``notebooks/<lang>/NN-topic.ipynb``.

The source is jupytext ``py:percent``: code cells once, markdown cells tagged ``lang="en"``,
``"ru"`` or ``"zh"`` (a markdown cell without ``lang`` is shown in every language).  Headings get
ids shared by the three languages: the slug of the English heading at the same place, so the
language switch on a notebook page keeps the reader at the same section.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import nbformat

from .. import paths

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$", re.MULTILINE)


def sources() -> list[Path]:
    return sorted(paths.NOTEBOOKS.glob("[0-9][0-9]-*.py"))


def lesson_of(src: Path) -> str:
    return src.stem


def ipynb_path(lesson: str, lang: str) -> Path:
    return paths.NOTEBOOKS / lang / f"{lesson}.ipynb"


def load(src: Path) -> nbformat.NotebookNode:
    import jupytext  # only regenerating needs it; the site is rendered from the stored notebooks

    nb = jupytext.read(src)
    nb.metadata["course_source"] = src.name
    return nb


def localize(nb: nbformat.NotebookNode, lang: str) -> nbformat.NotebookNode:
    """The notebook a reader of ``lang`` opens: its markdown cells, every code cell, no outputs.

    The English heading ids go into ``metadata.course.heading_ids`` (in order), for the page renderer.
    """
    out = nbformat.v4.new_notebook()
    out.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
        "course": {
            "lang": lang,
            "generated_from": f"notebooks/{nb.metadata.get('course_source', '')}",
            "heading_ids": heading_ids(nb),
        },
    }
    for cell in nb.cells:
        cell_lang = cell.metadata.get("lang")
        if cell.cell_type == "markdown" and cell_lang not in (None, lang):
            continue
        meta = {k: v for k, v in cell.metadata.items() if k not in ("lang", "translated")}
        if cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(cell.source, metadata=meta)
        else:
            new = nbformat.v4.new_code_cell(cell.source, metadata=meta)
        out.cells.append(new)
    for i, cell in enumerate(out.cells):  # stable ids: an unchanged source gives byte-identical files
        cell.id = f"c{i:03d}"
    return out


def student_notebook(src: Path, lang: str) -> nbformat.NotebookNode:
    return localize(load(src), lang)


def slug(text: str) -> str:
    """The id Python-Markdown's toc would give an English heading (``INCR and its family`` → ``incr-and-its-family``)."""
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def headings(markdown: str) -> list[tuple[str, str]]:
    """(hashes, text) of every ATX heading outside fenced code."""
    found, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = _HEADING.match(line)
        if m and not fenced:
            found.append((m.group(1), m.group(2)))
    return found


def heading_ids(nb: nbformat.NotebookNode) -> list[str]:
    """One unique id per heading of the English (or language-neutral) markdown cells, in order."""
    ids: list[str] = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.metadata.get("lang") in (None, "en"):
            for _, text in headings(cell.source):
                base = slug(text) or "section"
                new, n = base, 1
                while new in ids:
                    new, n = f"{base}_{n}", n + 1
                ids.append(new)
    return ids
