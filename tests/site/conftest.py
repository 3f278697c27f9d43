"""Fixtures for the site tests: the three sites are built once per test session, into a temporary
folder (``site/`` and the reader's own build stay untouched), and served on a free port.
``COURSE_TEST_SITE=site`` tests a site already built with ``python3 run.py build`` instead (the
build takes minutes; rebuild after every change to what the tests read)."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from redis_course import notebooks, paths
from redis_course.site import build as site

LANGS = paths.LANGS
REQUIRE_BROWSER = os.environ.get("COURSE_REQUIRE_REAL_REDIS") == "1"  # CI: a missing browser fails
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = paths.ROOT / "test-artifacts"


class BuiltSite:
    """The built sites: ``root/<lang>/...``; ``build_error`` is set when ``mkdocs build --strict`` failed."""

    def __init__(self, root: Path):
        self.root = root
        self.build_error: str | None = None
        self.seconds = 0.0

    def require(self) -> Path:
        if not (self.root / "index.html").is_file():
            pytest.fail(f"the site did not build:\n{self.build_error}")
        return self.root

    def html_files(self) -> list[Path]:
        return sorted(self.require().rglob("*.html"))


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> BuiltSite:
    reuse = os.environ.get("COURSE_TEST_SITE")  # a site built by `course build` (strict) from this tree
    if reuse:
        return BuiltSite(Path(reuse).resolve())
    out = BuiltSite(tmp_path_factory.mktemp("course-site") / "site")
    start = time.monotonic()
    try:
        notebooks.render_pages(log=lambda *_: None)  # from the stored notebooks: nothing is executed
        site.build(strict=True, site_dir=out.root, log=lambda *_: None)
    except site.SiteBuildError as exc:
        # test_build reports the strict failure; the other tests check a lenient build of the same pages
        out.build_error = str(exc)
        try:
            site.build(strict=False, site_dir=out.root, log=lambda *_: None)
        except site.SiteBuildError:
            pass
    out.seconds = time.monotonic() - start
    return out


@pytest.fixture(scope="session")
def site_url(built_site):
    """Base URL (no trailing slash) of the built sites, served from a background thread."""
    server = site.make_server(port=0, directory=built_site.require())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _missing_browser(reason: str):
    if REQUIRE_BROWSER:
        pytest.fail(f"{reason}; the browser tests are required here (COURSE_REQUIRE_REAL_REDIS=1)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing_browser("the Python package playwright is not installed (pip install -e '.[dev]')")
    if not (CHROMIUM.exists() or shutil.which(str(CHROMIUM))):
        _missing_browser(f"{CHROMIUM} is not installed (apt-get install chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
