"""Where things are in the course repository.  A lesson is found by its number alone."""

from __future__ import annotations

import os
from pathlib import Path

LANGS = ("en", "ru", "zh")
LANG_NAMES = {"en": "English", "ru": "Русский", "zh": "简体中文"}


def _find_root() -> Path:
    env = os.environ.get("COURSE_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parents[2]
    if (here / "mkdocs.yml").exists():
        return here
    for d in [Path.cwd(), *Path.cwd().parents]:
        if (d / "mkdocs.yml").exists() and (d / "src" / "redis_course").exists():
            return d
    return here


ROOT = _find_root()
DOCS = ROOT / "docs"
NOTEBOOKS = ROOT / "notebooks"
LABS = ROOT / "labs"
BUILD = ROOT / "build"
SITE = ROOT / "site"
# the charts' font, also cut into each language's web font (charts.py draws with it, site/webfont.py serves it)
CJK_FONT = Path(__file__).resolve().parent / "fonts" / "NotoSansCJKsc-course.otf"


def edition() -> dict:
    """``edition.json`` at the root, written by ``course release``: ``{"edition": "student", ...}`` in a
    student edition, ``{}`` in the instructor's repository (or when it cannot be read)."""
    import json

    try:
        data = json.loads((ROOT / "edition.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def is_student_edition() -> bool:
    return edition().get("edition") == "student"


def lesson_ids() -> list[str]:
    """Lesson folder names (``00-start``, ``01-incr``, ...) in number order, from docs/en."""
    return sorted(
        p.name for p in (DOCS / "en").iterdir() if p.is_dir() and p.name[:2].isdigit() and (p / "index.md").exists()
    )
