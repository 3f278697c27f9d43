"""Parity of a notebook's language cells: each passage of prose exists in every language.

A notebook source (``notebooks/NN-topic.py``) writes each passage of prose as consecutive markdown
cells tagged ``lang="en"``, ``lang="ru"`` and ``lang="zh"``; code cells and untagged markdown cells
separate passages.  Within a passage every language must have the same number of cells: a Russian
reader must not meet a gap where the English text goes on.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path

from .. import paths
from ..paths import LANGS


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
            problems.append(
                f"line {line}: the passage starting {head!r} has no {' and no '.join(missing)} version ({dict(counts)})"
            )
    return problems


def check_all(root: Path | None = None) -> dict[str, list[str]]:
    folder = Path(root) / "notebooks" if root else paths.NOTEBOOKS
    report = {}
    for src in sorted(folder.glob("[0-9][0-9]-*.py")):
        found = check_source(src)
        if found:
            report[f"notebooks/{src.name}"] = found
    return report


# ---------------------------------------------------------------- translations older than their English

_MARK = re.compile(r'^# %% \[markdown\] lang="(\w+)"(?: translated="(\w*)")?(.*)$')


def _passages_with_markers(src: Path) -> list[dict]:
    """Each passage: the hash of its English text, and for every other language the line index of its
    first cell's marker and the hash recorded there (``translated="..."``), straight from the text."""
    lines = src.read_text(encoding="utf-8").splitlines()
    found, current, en_text, collecting = [], None, [], False
    for i, line in enumerate(lines + ["# %% end"]):
        m = _MARK.match(line)
        if line.startswith("# %%") and not m:
            if current:
                current["en"] = source_digest("\n".join(en_text))
                found.append(current)
            current, en_text = None, []
            continue
        if m:
            current = current or {"line": i + 1, "langs": {}}
            lang = m.group(1)
            if lang != "en" and lang not in current["langs"]:
                current["langs"][lang] = (i, m.group(2))
            collecting = lang == "en"
            continue
        if current and collecting:
            en_text.append(line)
    return found


def source_digest(text: str) -> str:
    """12 hex digits of SHA-256 of English prose, blank lines at the ends ignored."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:12]


def outdated_cells(src: Path) -> list[str]:
    """Translated passages whose English changed since they were stamped (or never stamped)."""
    out = []
    for p in _passages_with_markers(src):
        for lang, (_i, got) in sorted(p["langs"].items()):
            if got != p["en"]:
                why = "never stamped" if not got else f"English changed (translated from {got}, now {p['en']})"
                out.append(f"line {p['line']}: {lang} passage: {why}")
    return out


def stamp_cells(src: Path) -> int:
    """Record in every translated passage's first marker the hash of its current English; returns how
    many markers changed."""
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = 0
    for p in _passages_with_markers(src):
        for lang, (i, got) in p["langs"].items():
            if got != p["en"]:
                m = _MARK.match(lines[i].rstrip("\n"))
                lines[i] = f'# %% [markdown] lang="{lang}" translated="{p["en"]}"{m.group(3)}\n'
                changed += 1
    src.write_text("".join(lines), encoding="utf-8")
    return changed


def outdated_all() -> dict[str, list[str]]:
    return {
        f"notebooks/{src.name}": rows
        for src in sorted(paths.NOTEBOOKS.glob("[0-9][0-9]-*.py"))
        if (rows := outdated_cells(src))
    }
