"""What a reader downloads: no source maps in the built site, a CJK web font cut to each language's
and each page's characters, images sized and lazy, no search index before the reader searches, and
``course serve`` sending text gzip-compressed."""

from __future__ import annotations

import gzip
import re
import threading
import urllib.request

import pytest

from redis_course.site import build as site
from redis_course.paths import LANGS
from redis_course.site.webfont import CJK, PAGE_FONT, WEB_FONT, cjk_characters, page_characters, unicode_range


def test_no_source_maps_ship(built_site):
    root = built_site.require()
    assert not list(root.rglob("*.map"))
    pointing = [
        p for p in list(root.rglob("*.js")) + list(root.rglob("*.css")) if b"sourceMappingURL=" in p.read_bytes()[-300:]
    ]
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


def test_each_page_has_its_own_cut_of_the_cjk_font(built_site):
    """A page declares a cut of the CJK font that holds exactly its characters (unicode-range) after
    course.css, so its text comes from it; Chinese pages preload it, the others (the menu's 简体中文,
    a few KB) do not."""
    from fontTools.ttLib import TTFont

    root = built_site.require()
    for lang, path in (
        ("zh", "04-rate-limiting/index.html"),
        ("zh", "index.html"),
        ("en", "04-rate-limiting/index.html"),
    ):
        html = (root / lang / path).read_text(encoding="utf-8")
        face = re.search(
            r'<style>@font-face\{font-family:"Course CJK";src:url\("([^"]+)"\)[^}]*unicode-range:([^}]+)\}', html
        )
        assert face and html.index("course.css") < face.start(), (lang, path)
        font = (root / lang / path).parent / face.group(1)
        assert PAGE_FONT.search(font.name) and font.is_file(), font
        chars = page_characters(html)  # its text, and the strings its scripts show (JSON-escaped)
        assert set(CJK.findall(html)) <= chars and face.group(2) == unicode_range(chars), (lang, path)
        cmap = {chr(c) for c in TTFont(str(font)).getBestCmap()}
        assert chars <= cmap and len({c for c in cmap if CJK.match(c)}) <= len(chars) + 2, (lang, path)
        preload = f'<link rel="preload" href="{face.group(1)}" as="font" type="font/woff" crossorigin>'
        assert (preload in html) == (lang == "zh"), (lang, path)
        assert f"assets/fonts/{WEB_FONT}" not in html  # the whole font: only for what the page lacks
    assert font.stat().st_size < 20_000  # en's cut


def test_unicode_range_joins_consecutive_characters():
    assert unicode_range(set("中文简体")) == "U+4E2D,U+4F53,U+6587,U+7B80"
    assert unicode_range({"\u4e00", "\u4e01", "\u4e02", "\u4e05"}) == "U+4E00-4E02,U+4E05"


@pytest.mark.browser
def test_chinese_pages_fetch_their_cjk_font_with_the_page(browser, site_url):
    """This machine has no CJK font (CI's neither): a zh page must have the course's font when it first
    paints, so its cut is preloaded by the page, not found late through the stylesheet, and the
    language's whole font is not fetched; en pages fetch only their small cut, not early."""
    page = browser.new_page()
    try:
        for path in ("/zh/", "/zh/04-rate-limiting/"):
            page.goto(site_url + path)
            page.evaluate("() => document.fonts.ready")
            entries = page.evaluate("""() => performance.getEntriesByType("resource")
                .filter(e => e.name.includes("/assets/fonts/")).map(e => [e.name.split("/").pop(), e.initiatorType])""")
            assert entries and PAGE_FONT.search(entries[0][0]) and entries[0][1] == "link", (path, entries)
            assert not any(name == WEB_FONT for name, _how in entries), (path, entries)
            # the page's face is loaded (fonts.check would also want the whole font's face, which covers 计 too)
            assert page.evaluate("""() => [...document.fonts].some(f => f.family.replace(/"/g, "") === "Course CJK"
                && f.status === "loaded" && f.unicodeRange.includes("U+8BA1"))""")  # 计
        page.goto(site_url + "/en/04-rate-limiting/")
        assert "link" not in page.evaluate("""() => performance.getEntriesByType("resource")
            .filter(e => e.name.includes("/assets/fonts/")).map(e => e.initiatorType)""")
    finally:
        page.close()


def test_charts_are_sized_and_lazy(built_site):
    """A notebook's charts keep their place while they load (width and height: no layout shift) and are
    fetched when the reader scrolls to them; the hidden chart of the other colour scheme is not."""
    html = (built_site.require() / "en" / "04-rate-limiting" / "notebook" / "index.html").read_text(encoding="utf-8")
    imgs = re.findall(r"<img\b[^>]*>", html)
    assert len(imgs) == 2, imgs
    for img in imgs:
        assert re.search(r'width="\d+" height="\d+"', img) and 'loading="lazy"' in img, img


def test_sized_lazy_images_reads_the_png_header(tmp_path):
    from redis_course.site.hooks import sized_lazy_images

    png = tmp_path / "a.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (640).to_bytes(4, "big") + (480).to_bytes(4, "big"))
    out = sized_lazy_images(
        '<p><img alt="a" src="a.png#only-light" /><img src="b.svg"></p>', lambda src: png if src == "a.png" else None
    )
    assert out == (
        '<p><img alt="a" src="a.png#only-light" width="640" height="480" loading="lazy" decoding="async" />'
        '<img src="b.svg" loading="lazy" decoding="async" /></p>'
    )


@pytest.mark.browser
def test_search_index_waits_for_the_reader(browser, site_url):
    """The search index (1.2 MB for Chinese) is not fetched with a page, only once the reader goes to
    search; search then works as before."""
    page = browser.new_page()
    try:
        page.goto(site_url + "/zh/04-rate-limiting/")
        page.wait_for_load_state("load")
        page.wait_for_timeout(500)
        fetched = "() => performance.getEntriesByType('resource').some(e => e.name.endsWith('/search_index.json'))"
        assert not page.evaluate(fetched)
        box = page.locator("input.md-search__input")
        if not box.is_visible():
            page.locator("label.md-header__button[for=__search]").click()
        box.fill("限流")
        box.press("End")
        page.locator(".md-search-result__item").first.wait_for(state="visible", timeout=15_000)
        assert page.evaluate(fetched)
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
    req = urllib.request.Request(
        url, method=method, headers={**({"Accept-Encoding": encoding} if encoding else {}), **(headers or {})}
    )
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
    for path, encoding in (
        ("/en/", "gzip"),
        ("/en/search/search_index.json", "gzip"),
        ("/en/assets/fonts/course-cjk.woff", ""),
        ("/en/search/search_index.json", ""),
    ):
        status, headers, body = _get(base + path, encoding=encoding)
        assert status == 200 and headers["Cache-Control"] == "no-cache" and headers["ETag"], (path, dict(headers))
        again = _get(base + path, encoding=encoding, headers={"If-None-Match": headers["ETag"]})
        assert again[0] == 304 and again[2] == b"", path
    file = root / "en" / "search" / "search_index.json"
    _status, headers, _body = _get(base + "/en/search/search_index.json")
    file.write_text('{"docs": [1]}', encoding="utf-8")  # rebuilt: the old copy is no longer good
    status, _headers, body = _get(base + "/en/search/search_index.json", headers={"If-None-Match": headers["ETag"]})
    assert status == 200 and gzip.decompress(body) == b'{"docs": [1]}'
