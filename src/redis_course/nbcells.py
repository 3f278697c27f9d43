"""Parity of a notebook's language cells: each passage of prose exists in every language.

A notebook source (``notebooks/NN-topic.py``) writes each passage of prose as consecutive markdown
cells tagged ``lang="en"``, ``lang="ru"`` and ``lang="zh"``; code cells and untagged markdown cells
separate passages.  Within a passage every language must have the same number of cells: a Russian
reader must not meet a gap where the English text goes on.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from . import paths
from .paths import LANGS


def passages(src: Path) -> list[list[tuple[int, str, str]]]:
    """The runs of consecutive language-tagged markdown cells: ``[(line, lang, first words), ...]``."""
    import jupytext

    nb = jupytext.read(src)
    lines = _cell_lines(src)
    runs: list[list[tuple[int, str, str]]] = []
    current: list[tuple[int, str, str]] = []
    for i, cell in enumerate(nb.cells):
        lang = cell.metadata.get("lang") if cell.cell_type == "markdown" else None
        if lang is None:
            if current:
                runs.append(current)
            current = []
            continue
        head = next((ln.strip("# ").strip() for ln in cell.source.splitlines() if ln.strip()), "")
        current.append((lines[i] if i < len(lines) else 0, lang, head[:60]))
    if current:
        runs.append(current)
    return runs


def _cell_lines(src: Path) -> list[int]:
    """Line numbers of the ``# %%`` cell markers (the first cell may start without one)."""
    text = src.read_text(encoding="utf-8").splitlines()
    marks = [n for n, line in enumerate(text, 1) if line.startswith("# %%")]
    return marks if marks else [1]


def check_source(src: Path) -> list[str]:
    problems = []
    for run in passages(src):
        counts = Counter(lang for _, lang, _ in run)
        unknown = set(counts) - set(LANGS)
        if unknown:
            problems.append(f"line {run[0][0]}: unknown lang {sorted(unknown)} (use {', '.join(LANGS)})")
        want = max(counts.values())
        missing = [lang for lang in LANGS if counts.get(lang, 0) < want]
        if missing:
            line, lang, head = run[0]
            problems.append(f"line {line}: the passage starting {head!r} has no "
                            f"{' and no '.join(missing)} version ({dict(counts)})")
    return problems


def check_all(root: Path | None = None) -> dict[str, list[str]]:
    folder = Path(root) / "notebooks" if root else paths.NOTEBOOKS
    report = {}
    for src in sorted(folder.glob("[0-9][0-9]-*.py")):
        found = check_source(src)
        if found:
            report[f"notebooks/{src.name}"] = found
    return report
