"""``mkdocs build --strict`` is clean for every language, and strict mode really catches mistakes."""

from __future__ import annotations

import pytest

from redis_course import paths
from redis_course.site import build as site

from redis_course.paths import LANGS


def test_strict_build_is_clean_for_every_language(built_site):
    assert not built_site.build_error, f"mkdocs build --strict failed:\n{built_site.build_error}"
    root = built_site.require()
    for lang in LANGS:
        assert (root / lang / "index.html").is_file(), f"site/{lang}/index.html was not built"
        assert (root / lang / "00-start" / "index.html").is_file()
        assert (root / lang / "00-start" / "notebook" / "index.html").is_file(), (
            f"the executed notebook page of 00-start is missing in {lang}"
        )
        assert (root / lang / "search" / "search_index.json").is_file()
    assert (root / "index.html").is_file()


def test_strict_build_fails_on_a_broken_link(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    (docs / "en").mkdir(parents=True)
    (docs / "en" / "index.md").write_text(
        "# Home { #home }\n\nSee [the lesson](01-missing/index.md).\n", encoding="utf-8"
    )
    monkeypatch.setattr(paths, "DOCS", docs)
    with pytest.raises(site.SiteBuildError, match="01-missing"):
        site.build(langs=("en",), site_dir=tmp_path / "site", log=lambda *_: None)
    assert not (paths.ROOT / "site" / "en" / "01-missing").exists()


_ONLY_SITE_PACKAGES = r'''
import importlib.abc, importlib.machinery, re, sys
from pathlib import Path

def names(lock):
    return {re.split(r"[=\[ ]", line)[0].lower().replace("-", "_") for line in Path(lock).read_text().splitlines()
            if line and not line.startswith((" ", "#"))}

absent = names("requirements/all.txt") - names("requirements/site.txt")

class Absent(importlib.abc.MetaPathFinder):
    """What a reader's `python3 run.py serve` venv does not have (requirements/site.txt only)."""
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0].lower() in absent:  # as if not installed: a spec whose loading fails
            return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        raise ModuleNotFoundError(f"No module named {spec.name!r} (not in requirements/site.txt)")

    def exec_module(self, module):
        pass

sys.meta_path.insert(0, Absent())
from redis_course import notebooks
from redis_course.site import build as site
notebooks.render_pages(langs=("zh",), log=lambda *_: None)
site.build(langs=("zh",), strict=False, site_dir=Path(sys.argv[1]), log=lambda *_: None)
print("built")
'''


def test_serve_builds_with_only_the_site_requirements(tmp_path):
    """`python3 run.py serve` installs requirements/site.txt only: rendering and building import nothing else."""
    import subprocess
    import sys

    res = subprocess.run(
        [sys.executable, "-c", _ONLY_SITE_PACKAGES, str(tmp_path / "site")],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0 and "built" in res.stdout, res.stderr[-3000:]
