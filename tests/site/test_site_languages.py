"""The site in the reader's language beyond the pages: the glossary and Chinese search words, the
palette kept across languages, meta descriptions, 404 pages, charts with alt text and a dark variant."""

from __future__ import annotations

import json
import re

import pytest

from redis_course.i18n import glossary
from redis_course import paths
from redis_course.site import build as site
from test_browser import search, switch_language

LANGS = paths.LANGS


def test_the_glossary_has_the_same_terms_in_every_language():
    english = [term for term, _second in glossary.rows("en")]
    assert len(english) >= 20
    for lang in ("ru", "zh"):
        assert [second for _term, second in glossary.rows(lang)] == english, lang
    assert {"令牌桶", "滑动窗口", "计数器"} <= set(glossary.chinese_terms())


def test_the_jieba_dictionary_keeps_glossary_terms_whole(tmp_path):
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    plain = jieba.Tokenizer()
    assert "令牌桶" not in list(plain.cut("令牌桶限流器"))  # what the dictionary is for
    tokenizer = jieba.Tokenizer()
    tokenizer.load_userdict(str(glossary.write_jieba_dictionary(tmp_path / "dict.txt")))
    assert list(tokenizer.cut("令牌桶和滑动窗口计数器")) == ["令牌桶", "和", "滑动窗口计数器"]


def test_built_chinese_index_has_the_terms_as_words(built_site):
    index = json.loads((built_site.require() / "zh" / "search" / "search_index.json").read_text("utf-8"))
    text = "".join(doc["title"] + doc["text"] for doc in index["docs"])
    for term in ("令牌桶", "滑动窗口", "计数器"):
        assert f"\u200b{term}\u200b" in text or f"{term}\u200b" in text, term


@pytest.mark.parametrize("lang", LANGS)
def test_meta_description_and_404_in_each_language(built_site, lang):
    root = built_site.require() / lang
    html = (root / "index.html").read_text("utf-8")
    description = re.search(r'<meta name="description" content="([^"]*)"', html).group(1)
    assert description == site.SITE_DESCRIPTION[lang]
    page404 = (root / "404.html").read_text("utf-8")
    title = {"en": "Page not found", "ru": "Страница не найдена", "zh": "页面未找到"}[lang]
    assert f"<h1>404 · {title}</h1>" in page404 and "404 - Not found" not in page404


ENGLISH_PHRASE = re.compile(r"[A-Za-z]{3,} [A-Za-z]{2,}")
NATIVE = {"ru": re.compile(r"[\u0400-\u04ff]"), "zh": re.compile(r"[\u4e00-\u9fff]")}


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_interface_words_are_in_the_pages_language(built_site, lang):
    """What a reader hovers or hears (title, aria-label, placeholder, alt) on every page of a language:
    no phrase in English only, such as the colour toggle's "Dark mode" or the headings' "Permanent link"."""
    english = {}
    for page in sorted((built_site.require() / lang).rglob("*.html")):
        html = page.read_text("utf-8")
        for value in re.findall(r'(?:title|aria-label|placeholder|alt)="([^"]*)"', html):
            if ENGLISH_PHRASE.search(value) and not NATIVE[lang].search(value):
                english.setdefault(value, page.relative_to(built_site.root).as_posix())
    assert not english, f"English interface text on {lang} pages: {english}"
    start = (built_site.root / lang / "00-start" / "index.html").read_text("utf-8")
    assert start.count(f'title="{site._(site.PERMALINK_TITLE, lang=lang)}"') >= 3


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_notebook_charts_have_alt_text_and_a_dark_variant(built_site, lang):
    page = (built_site.require() / lang / "02-atomicity" / "notebook" / "index.html").read_text("utf-8")
    images = re.findall(r'<img alt="([^"]*)" src="([^"]+)"', page)
    light = [(alt, src) for alt, src in images if src.endswith("#only-light")]
    dark = [(alt, src) for alt, src in images if src.endswith("#only-dark")]
    assert len(light) == len(dark) >= 2, images
    word = {"ru": "график", "zh": "折线图"}[lang]
    assert all(word in alt.lower() for alt, _src in light + dark), light


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_notebook_charts_open_at_full_size_on_a_phone(browser, site_url, built_site, scheme):
    """At 360 px a chart's labels are a few pixels tall: each chart is a link to its own image, one per
    colour scheme shown, and the link opens the image file."""
    context = browser.new_context(viewport={"width": 360, "height": 740}, color_scheme=scheme, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(f"{site_url}/zh/04-rate-limiting/notebook/")
        charts = page.locator("article img[src*='#only-']")
        links = page.locator("article a.chart-zoom")
        assert charts.count() >= 2 and links.count() == charts.count()
        shown = [i for i in range(links.count()) if links.nth(i).is_visible()]
        assert len(shown) == charts.count() // 2, f"{len(shown)} of {links.count()} chart links shown"
        for i in shown:
            link = links.nth(i)
            img = link.locator("img")
            assert img.is_visible() and link.get_attribute("href") == img.get_attribute("src").split("#")[0]
            assert img.get_attribute("src").endswith("#only-" + scheme)
        href = links.nth(shown[0]).evaluate("a => a.href")
        response = page.request.get(href)
        assert response.ok and response.headers["content-type"].startswith("image/"), href
    finally:
        context.close()


@pytest.mark.browser
def test_chinese_search_finds_glossary_terms_as_words_and_lessons_first(browser, site_url):
    page = browser.new_page()
    try:
        page.goto(f"{site_url}/zh/")
        search(page, "令牌桶")
        html = page.locator(".md-search-result__list").inner_html()
        assert "<mark>令牌桶</mark>" in html
        assert "<mark>令牌</mark>桶" not in html.replace("\u200b", "")
        search(page, "计数器")
        order = page.locator(".md-search-result__item > a.md-search-result__link").evaluate_all(
            "els => els.map(e => e.pathname)"
        )
        lessons = [p for p in order if re.fullmatch(r"/zh/\d\d-[^/]+/", p)]
        labs = [p for p in order if p.endswith("/lab/")]
        assert lessons and order[0] == lessons[0], order
        assert not labs or order.index(labs[0]) > order.index("/zh/03-counters/"), order
    finally:
        page.close()


@pytest.mark.browser
def test_dark_mode_is_kept_when_switching_language(browser, site_url):
    context = browser.new_context(color_scheme="light")
    page = context.new_page()
    try:
        page.goto(f"{site_url}/en/01-incr/")
        assert page.locator("body").get_attribute("data-md-color-scheme") == "default"
        page.locator("form[data-md-component=palette] label:visible").first.click()
        assert page.locator("body").get_attribute("data-md-color-scheme") == "slate"
        switch_language(page, "zh")
        assert page.locator("body").get_attribute("data-md-color-scheme") == "slate"
        switch_language(page, "ru")
        assert page.locator("body").get_attribute("data-md-color-scheme") == "slate"
    finally:
        context.close()


def _heading_at_top(page) -> str:
    """The id of the last article heading in or above the window's top quarter (below the header)."""
    return page.evaluate("""() => {
        const top = document.querySelector(".md-header").getBoundingClientRect().bottom + innerHeight / 4;
        let id = "";
        for (const h of document.querySelectorAll(".md-content article :is(h2, h3)[id]"))
            if (h.getBoundingClientRect().top <= top) id = h.id;
        return id;
    }""")


def _pick_language_in_place(page, lang: str) -> None:
    """Click the menu's link as a reader does, without Playwright's scrolling it into view first
    (which moves the page under a fixed header, and so the section)."""
    with page.expect_navigation(wait_until="load"):
        page.locator(f"a.md-select__link[hreflang={lang}]").first.evaluate("a => a.click()")


@pytest.mark.browser
@pytest.mark.parametrize("section, via", [("ttl-trap", "en"), ("history", "ru"), ("streaks", "zh")])
def test_language_switch_keeps_the_section_scrolled_to(browser, site_url, section, via):
    """A reader scrolls (no #hash in the address) into a section, switches language, and is there."""
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    others = [lang for lang in LANGS if lang != via]
    try:
        page.goto(f"{site_url}/{via}/03-counters/")
        page.evaluate(
            """id => { const h = document.getElementById(id);
                                 window.scrollTo(0, h.getBoundingClientRect().top + window.scrollY + 200); }""",
            section,
        )
        assert "#" not in page.url and _heading_at_top(page) == section
        for lang in others:
            _pick_language_in_place(page, lang)
            assert page.url.endswith(f"/{lang}/03-counters/#{section}"), page.url
            assert _heading_at_top(page) == section, (lang, page.url)
        page.evaluate("window.scrollTo(0, 0)")
        _pick_language_in_place(page, via)
        assert page.url.endswith(f"/{via}/03-counters/"), page.url
    finally:
        page.close()


@pytest.mark.browser
def test_russian_search_shows_and_highlights_yo(browser, site_url, built_site):
    titles = json.loads((built_site.require() / "ru" / "search" / "titles_yo.json").read_text("utf-8"))
    assert any("ё" in t for t in titles.values())
    page = browser.new_page()
    try:
        page.goto(f"{site_url}/ru/")
        search(page, "счетчик")
        page.wait_for_function(
            "() => [...document.querySelectorAll('.md-search-result__link h1, "
            ".md-search-result__link h2')].some(h => /ё/.test(h.textContent))",
            timeout=10_000,
        )
        link = page.locator(".md-search-result__item a.md-search-result__link", has_text="ё").first
        link.click()
        page.wait_for_load_state("load")
        page.wait_for_function(
            "() => [...document.querySelectorAll('mark[data-md-highlight]')].some(m => /ё/i.test(m.textContent))",
            timeout=10_000,
        )
    finally:
        page.close()
