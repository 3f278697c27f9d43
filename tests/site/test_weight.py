"""What a reader downloads: no source maps in the built site, a CJK web font cut to each language's
characters, and ``course serve`` sending text gzip-compressed."""
from __future__ import annotations

import gzip
import re
import threading
import urllib.request

import pytest

from redis_course import site
from redis_course.paths import LANGS
from redis_course.webfont import CJK, WEB_FONT, cjk_characters


def test_no_source_maps_ship(built_site):
    root = built_site.require()
    assert not list(root.rglob("*.map"))
    pointing = [p for p in list(root.rglob("*.js")) + list(root.rglob("*.css"))
                if b"sourceMappingURL=" in p.read_bytes()[-300:]]
    assert not pointing, pointing


def test_cjk_font_holds_each_languages_characters_only(built_site):
    from fontTools.ttLib import TTFont

    root = built_site.require()
    sizes = {}
    for lang in LANGS:
        font = root / lang / "assets" / "fonts" / WEB_FONT
        used = cjk_characters(root / lang)
        cmap = {chr(c) for c in TTFont(str(font)).getBestCmap()}
        assert used <= cmap, f"{lang}: glyphs missing for {sorted(used - cmap)[:20]}"
        assert len({c for c in cmap if CJK.match(c)}) <= len(used) + 1
        sizes[lang] = font.stat().st_size
    assert "简" in cjk_characters(root / "en")  # the language menu's 简体中文
    assert sizes["en"] < 100_000 and sizes["zh"] < 600_000, sizes
    css = (root / "en" / "assets" / "stylesheets" / "course.css").read_text(encoding="utf-8")
    assert re.search(rf'url\("\.\./fonts/{re.escape(WEB_FONT)}"\)', css)


@pytest.mark.browser
def test_chinese_pages_fetch_the_cjk_font_with_the_page(browser, site_url):
    """This machine has no CJK font (CI's neither): a zh page must have the course's font when it first
    paints, so the font is preloaded by the page, not found late through the stylesheet; en pages
    (four characters, in a closed menu; a 32 KB cut) are not made to fetch theirs early."""
    page = browser.new_page()
    try:
        for path in ("/zh/", "/zh/04-rate-limiting/"):
            page.goto(site_url + path)
            entries = page.evaluate("""() => performance.getEntriesByType("resource")
                .filter(e => e.name.endsWith("/assets/fonts/course-cjk.woff")).map(e => e.initiatorType)""")
            assert entries == ["link"], f"{path}: the CJK font was fetched by {entries}, not by the page's preload"
            assert page.evaluate("() => document.fonts.check('16px \"Course CJK\"', '限流')")
        page.goto(site_url + "/en/04-rate-limiting/")
        assert "link" not in page.evaluate("""() => performance.getEntriesByType("resource")
            .filter(e => e.name.endsWith("/course-cjk.woff")).map(e => e.initiatorType)""")
    finally:
        page.close()


@pytest.fixture
def served(tmp_path):
    (tmp_path / "en" / "search").mkdir(parents=True)
    (tmp_path / "en" / "index.html").write_text("<!doctype html><p>" + "counter " * 500, encoding="utf-8")
    (tmp_path / "en" / "search" / "search_index.json").write_text('{"docs": []}' + " " * 5000, encoding="utf-8")
    (tmp_path / "en" / "404.html").write_text("<p>not here</p>", encoding="utf-8")
    (tmp_path / "en" / "logo.png").write_bytes(b"\x89PNG" + bytes(3000))
    (tmp_path / "en" / "assets" / "javascripts").mkdir(parents=True)
    (tmp_path / "en" / "assets" / "javascripts" / "bundle.a5f9d56c.min.js").write_text("var x;" * 500)
    (tmp_path / "en" / "assets" / "fonts").mkdir(parents=True)
    (tmp_path / "en" / "assets" / "fonts" / "course-cjk.woff").write_bytes(b"wOFF" + bytes(3000))
    server = site.make_server(port=0, directory=tmp_path)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path
    server.shutdown()
    server.server_close()


def _get(url, encoding="gzip", method="GET", headers=None):
    req = urllib.request.Request(url, method=method,
                                 headers={**({"Accept-Encoding": encoding} if encoding else {}), **(headers or {})})
    try:
        resp = urllib.request.urlopen(req, timeout=10)
    except urllib.error.HTTPError as exc:
        resp = exc
    return resp.status, resp.headers, resp.read()


def test_serve_compresses_text_for_browsers_that_accept_gzip(served):
    base, root = served
    for path, file in (("/en/", "en/index.html"), ("/en/search/search_index.json", "en/search/search_index.json")):
        status, headers, body = _get(base + path)
        assert status == 200 and headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in headers["Vary"]
        assert gzip.decompress(body) == (root / file).read_bytes()
        assert int(headers["Content-Length"]) == len(body) < (root / file).stat().st_size / 3
    status, headers, body = _get(base + "/en/", encoding="")  # no Accept-Encoding: the file as it is
    assert headers["Content-Encoding"] is None and body == (root / "en/index.html").read_bytes()
    status, headers, body = _get(base + "/en/logo.png")  # already compressed formats are sent as they are
    assert headers["Content-Encoding"] is None and len(body) == 3004
    status, headers, body = _get(base + "/en/", method="HEAD")
    assert status == 200 and headers["Content-Encoding"] == "gzip" and body == b""
    status, headers, body = _get(base + "/en/missing/")  # the language's 404 page still answers
    assert status == 404 and b"not here" in body
    (root / "en" / "index.html").write_text("<p>changed</p>", encoding="utf-8")  # a rebuild is served at once
    assert gzip.decompress(_get(base + "/en/")[2]) == b"<p>changed</p>"


def test_serve_lets_browsers_keep_hashed_assets_and_revalidate_the_rest(served):
    """A hashed bundle is kept for a year; pages, the search index and the font (fixed names, new
    content after a build) are kept but revalidated: a second page downloads none of them again."""
    base, root = served
    status, headers, _body = _get(base + "/en/assets/javascripts/bundle.a5f9d56c.min.js")
    assert status == 200 and headers["Cache-Control"] == "public, max-age=31536000, immutable"
    for path, encoding in (("/en/", "gzip"), ("/en/search/search_index.json", "gzip"),
                           ("/en/assets/fonts/course-cjk.woff", ""), ("/en/search/search_index.json", "")):
        status, headers, body = _get(base + path, encoding=encoding)
        assert status == 200 and headers["Cache-Control"] == "no-cache" and headers["ETag"], (path, dict(headers))
        again = _get(base + path, encoding=encoding, headers={"If-None-Match": headers["ETag"]})
        assert again[0] == 304 and again[2] == b"", path
    file = root / "en" / "search" / "search_index.json"
    _status, headers, _body = _get(base + "/en/search/search_index.json")
    file.write_text('{"docs": [1]}', encoding="utf-8")  # rebuilt: the old copy is no longer good
    status, _headers, body = _get(base + "/en/search/search_index.json", headers={"If-None-Match": headers["ETag"]})
    assert status == 200 and gzip.decompress(body) == b'{"docs": [1]}'
