"""mkdocs hooks of the course site (listed in the generated ``build/mkdocs.<lang>.yml``).

A lesson page ranks above its lab and notebook in search: a lab repeats the lesson's words in short
sections (its tables of functions and tests), which lunr would otherwise rank first.

A page's images (the notebooks' charts) get their width and height, so the page keeps its layout while
they arrive (no layout shift), and ``loading="lazy"``: a chart below the first screen is fetched when
the reader scrolls to it, and the colour scheme's other chart (``#only-dark`` in light mode, hidden)
not at all.
"""

from __future__ import annotations

import posixpath
import re
import struct
from pathlib import Path

LESSON = re.compile(r"^\d\d-[^/]+/index\.md$")
LESSON_BOOST = 2
_IMG = re.compile(r"<img\b([^>]*?)\s*/?>")
_SRC = re.compile(r'\bsrc="([^"#?]+)[^"]*"')


def on_page_markdown(markdown, page, config, files):  # noqa: ARG001 - mkdocs' hook signature
    if LESSON.match(page.file.src_uri):
        page.meta.setdefault("search", {}).setdefault("boost", LESSON_BOOST)
    return markdown


def png_size(path: Path) -> tuple[int, int] | None:
    """A PNG's width and height from its header, None for anything else."""
    with open(path, "rb") as fh:
        head = fh.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def sized_lazy_images(html: str, image_path) -> str:
    """``html`` with each ``<img>`` given ``loading="lazy"``, ``decoding="async"`` and, where
    ``image_path(src)`` finds the PNG, its ``width`` and ``height``."""

    def fix(m: re.Match) -> str:
        attrs = m.group(1)
        src = _SRC.search(attrs)
        if src and "width=" not in attrs and (path := image_path(src.group(1))) and (size := png_size(path)):
            attrs += f' width="{size[0]}" height="{size[1]}"'
        if "loading=" not in attrs:
            attrs += ' loading="lazy" decoding="async"'
        return f"<img{attrs} />"

    return _IMG.sub(fix, html)


def on_page_content(html, page, config, files):  # noqa: ARG001 - mkdocs' hook signature
    if "<img" not in html:
        return html
    by_url = {f.url: f for f in files if not f.is_documentation_page()}
    here = posixpath.dirname(page.url.rstrip("/") + "/x") if page.url else ""

    def image_path(src: str) -> Path | None:
        if "://" in src or src.startswith(("/", "data:")):
            return None
        file = by_url.get(posixpath.normpath(posixpath.join(here, src)))
        return Path(file.abs_src_path) if file and file.abs_src_path else None

    return sized_lazy_images(html, image_path)
