"""A site to publish: built from the stored notebooks (nothing executed) for a given address, with
canonical links, a sitemap and hreflang alternates of the same page; `course serve` answers a missing
page with the 404 page of its language."""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request

import pytest

from redis_course import cli, paths
from redis_course.site import build as site
from redis_course.notebooks import execute

URL = "https://courses.example.org/redis/"


@pytest.fixture(scope="module")
def published(tmp_path_factory, request):
    """``course build --site-url URL`` into a temporary folder, with every way to execute a notebook broken."""
    out = tmp_path_factory.mktemp("published") / "site"
    mp = pytest.MonkeyPatch()
    request.addfinalizer(mp.undo)

    def no_execution(*args, **kwargs):
        raise AssertionError("the build executed a notebook")

    mp.setattr(execute, "execute", no_execution)
    mp.setattr(execute, "store", no_execution)
    real_build = site.build
    mp.setattr(site, "build", lambda **kw: real_build(**{**kw, "site_dir": out}))
    assert cli.main(["build", "--site-url", URL]) == 0
    return out


def _head(page) -> str:
    return page.read_text(encoding="utf-8").split("</head>", 1)[0]


def test_build_with_a_site_url_sets_canonical_and_hreflang_of_the_same_page(published):
    head = _head(published / "ru" / "04-rate-limiting" / "index.html")
    assert f'<link rel="canonical" href="{URL}ru/04-rate-limiting/">' in head
    alternates = dict(re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)">', head))
    assert alternates == {
        "en": f"{URL}en/04-rate-limiting/",
        "ru": f"{URL}ru/04-rate-limiting/",
        "zh": f"{URL}zh/04-rate-limiting/",
        "x-default": f"{URL}en/04-rate-limiting/",
    }
    assert 'hreflang="ru">' not in head.replace(
        f'href="{URL}ru/04-rate-limiting/">', ""
    )  # no home-page alternates left


def test_notebook_pages_come_from_the_stored_outputs(published):
    page = (published / "zh" / "01-incr" / "notebook" / "index.html").read_text(encoding="utf-8")
    assert "fakeredis" in page and (published / "zh" / "01-incr" / "01-incr.ipynb").exists()
    assert f'<link rel="canonical" href="{URL}zh/01-incr/notebook/">' in _head(
        published / "zh" / "01-incr" / "notebook" / "index.html"
    )


def test_sitemaps_use_the_published_address(published):
    index = (published / "sitemap.xml").read_text(encoding="utf-8")
    assert [f"{URL}{lang}/sitemap.xml" for lang in paths.LANGS] == re.findall(r"<loc>([^<]+)</loc>", index)
    ru = (published / "ru" / "sitemap.xml").read_text(encoding="utf-8")
    assert f"<loc>{URL}ru/04-rate-limiting/</loc>" in ru and "127.0.0.1" not in ru


def test_a_bad_site_url_is_one_sentence():
    with pytest.raises(site.SiteBuildError, match=r"^The site URL 'courses\.example\.org' is not an http\(s\) address"):
        site.base_url("courses.example.org")


def test_site_url_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("COURSE_SITE_URL", "https://a.example/b")
    assert site.base_url() == "https://a.example/b/"
    assert cli.build_parser().parse_args(["build"]).site_url == "https://a.example/b"


def test_serve_answers_a_missing_page_with_its_languages_404(published):
    server = site.make_server(port=0, directory=published)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        for lang in paths.LANGS:
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/{lang}/no-such-page/", timeout=10)
            body = err.value.read().decode("utf-8")
            assert err.value.code == 404 and f'<html lang="{lang}"' in body
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/nowhere", timeout=10)
        assert err.value.code == 404 and '<html lang="en"' in err.value.read().decode("utf-8")
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(
    paths.is_student_edition(), reason="the student edition has no pages workflow (.github/ stays behind)"
)
def test_the_pages_workflow_builds_from_stored_outputs_and_deploys():
    import yaml

    flow = yaml.safe_load((paths.ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))
    steps = flow["jobs"]["build"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    assert runs == [runs[0]] and runs[0].startswith("python3 run.py build --site-url ")  # no notebook is executed
    assert any(
        s.get("uses", "").startswith("actions/upload-pages-artifact") and s["with"]["path"] == "site" for s in steps
    )
    assert flow["jobs"]["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages")
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
