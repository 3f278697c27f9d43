"""``mkdocs build --strict`` is clean for every language, and strict mode really catches mistakes."""
from __future__ import annotations

import pytest

from redis_course import paths, site

from redis_course.paths import LANGS


def test_strict_build_is_clean_for_every_language(built_site):
    assert not built_site.build_error, f"mkdocs build --strict failed:\n{built_site.build_error}"
    root = built_site.require()
    for lang in LANGS:
        assert (root / lang / "index.html").is_file(), f"site/{lang}/index.html was not built"
        assert (root / lang / "00-start" / "index.html").is_file()
        assert (root / lang / "00-start" / "notebook" / "index.html").is_file(), \
            f"the executed notebook page of 00-start is missing in {lang}"
        assert (root / lang / "search" / "search_index.json").is_file()
    assert (root / "index.html").is_file()


def test_strict_build_fails_on_a_broken_link(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    (docs / "en").mkdir(parents=True)
    (docs / "en" / "index.md").write_text("# Home { #home }\n\nSee [the lesson](01-missing/index.md).\n",
                                          encoding="utf-8")
    monkeypatch.setattr(paths, "DOCS", docs)
    with pytest.raises(site.SiteBuildError, match="01-missing"):
        site.build(langs=("en",), site_dir=tmp_path / "site", log=lambda *_: None)
    assert not (paths.ROOT / "site" / "en" / "01-missing").exists()
