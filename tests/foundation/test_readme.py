"""The repository's own documents: a short README that sends each reader on, and links that resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from redis_course import paths

DOCS = ("README.md", "CONTRIBUTING.md", "INSTRUCTORS.md", "ARCHITECTURE.md", "labs/README.md")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
README_MAX = 4096
#: The student edition has a README of its own (tests/grading/test_student_edition.py) and none of the others.
IN_STUDENT_EDITION = pytest.mark.skipif(paths.is_student_edition(), reason="the student edition has its own README")


def anchors(text: str) -> set[str]:
    """The ids GitHub gives a document's headings: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for heading in re.findall(r"(?m)^#{1,6} (.+?)\s*$", re.sub(r"(?ms)^```.*?^```", "", text)):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", "")).replace(" ", "-")
        out.add(slug)
    return out


def links(path: Path) -> list[str]:
    text = re.sub(r"(?ms)^```.*?^```", "", path.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z]+:", t)]


@IN_STUDENT_EDITION
def test_readme_is_short_and_sends_each_reader_on():
    readme = paths.ROOT / "README.md"
    assert len(readme.read_bytes()) <= README_MAX, f"README.md is {len(readme.read_bytes())} bytes"
    text = readme.read_text(encoding="utf-8")
    assert "python3 run.py serve" in text and "python3 run.py test" in text
    for target in ("INSTRUCTORS.md", "CONTRIBUTING.md", "ARCHITECTURE.md"):
        assert f"]({target})" in text, target


@IN_STUDENT_EDITION
def test_contributing_says_how_to_test_and_commit():
    text = (paths.ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for needed in (
        "python3 run.py test --fast",
        ".ci/run",
        "## Add a lesson",
        "## Add a lab",
        "## Add a translation",
        "## Commit style",
        "72 characters",
    ):
        assert needed in text, needed


@IN_STUDENT_EDITION
@pytest.mark.parametrize("name", DOCS)
def test_every_relative_link_resolves(name):
    path = paths.ROOT / name
    broken = []
    for target in links(path):
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            broken.append(target)
    assert not broken, f"{name}: {broken}"


def test_anchor_and_link_rules_catch_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n\n## The Redis console on the pages\n\n[a](#the-redis-console-on-the-pages) "
        "[b](#nowhere) [c](missing.md) [d](https://example.org/x)\n",
        encoding="utf-8",
    )
    assert links(page) == ["#the-redis-console-on-the-pages", "#nowhere", "missing.md"]
    assert "the-redis-console-on-the-pages" in anchors(page.read_text(encoding="utf-8"))
    assert "nowhere" not in anchors(page.read_text(encoding="utf-8"))
