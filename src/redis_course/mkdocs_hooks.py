"""mkdocs hooks of the course site (listed in the generated ``build/mkdocs.<lang>.yml``).

A lesson page ranks above its lab and notebook in search: a lab repeats the lesson's words in short
sections (its tables of functions and tests), which lunr would otherwise rank first.
"""
from __future__ import annotations

import re

LESSON = re.compile(r"^\d\d-[^/]+/index\.md$")
LESSON_BOOST = 2


def on_page_markdown(markdown, page, config, files):  # noqa: ARG001 - mkdocs' hook signature
    if LESSON.match(page.file.src_uri):
        page.meta.setdefault("search", {}).setdefault("boost", LESSON_BOOST)
    return markdown
