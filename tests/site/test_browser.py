"""The course site in a real browser (Chromium through Playwright): the language menu, search in
each language, executed notebook pages, copy buttons and content tabs, the root page's redirect;
and not one request leaves 127.0.0.1.  Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
import re
from urllib.parse import unquote, urlsplit

import pytest


pytestmark = pytest.mark.browser

H1 = {"en": "How to use this course", "ru": "Как проходить курс", "zh": "如何学习本课程"}


class Requests:
    """Every request the browser makes (pages, scripts, the search worker's fetches)."""

    def __init__(self, context):
        self.urls: list[str] = []
        context.on("request", lambda req: self.urls.append(req.url))

    def off_machine(self) -> list[str]:
        return [
            u
            for u in self.urls
            if not u.startswith(("data:", "blob:", "about:")) and urlsplit(u).hostname != "127.0.0.1"
        ]


def switch_language(page, lang: str) -> None:
    """Open the header's language menu (it opens on hover) and pick ``lang``."""
    if page.locator("input.md-search__input").is_visible():
        page.keyboard.press("Escape")  # close the search dialog, which covers the header
    select = page.locator(".md-header__option .md-select").filter(has=page.locator("a[hreflang]"))
    select.locator("button").hover()
    link = select.locator(f"a.md-select__link[hreflang={lang}]")
    link.wait_for(state="visible")
    link.click()
    page.wait_for_url(re.compile(rf"/{lang}/"))


def search(page, words: str) -> list[str]:
    """Type ``words`` into the search box; the result links as URL paths (anchors and ?h= dropped)."""
    placeholder = json.loads(page.locator("#__config").text_content())["translations"]["search.result.placeholder"]
    box = page.locator("input.md-search__input")
    if not box.is_visible():
        page.locator("label.md-header__button[for=__search]").click()
    meta = page.locator(".md-search-result__meta")
    box.fill("")
    box.press("End")  # Material searches on keyup: fill() alone presses no key
    page.wait_for_function(
        "([el, text]) => el.textContent.trim() === text", arg=[meta.element_handle(), placeholder], timeout=10_000
    )
    box.fill(words)
    box.press("End")
    page.wait_for_function(
        "([el, text]) => el.textContent.trim() !== text", arg=[meta.element_handle(), placeholder], timeout=10_000
    )
    hrefs = page.locator(".md-search-result__item a.md-search-result__link").evaluate_all("els => els.map(e => e.href)")
    return sorted({unquote(urlsplit(h).path) for h in hrefs})


def _ru_pages_with_longer_forms_only(root, stem: str) -> set[str]:
    """Pages of the ru site whose text has words starting with ``stem`` but not ``stem`` itself."""
    index = json.loads((root / "ru" / "search" / "search_index.json").read_text(encoding="utf-8"))
    words: dict[str, set[str]] = {}
    for doc in index["docs"]:
        page = "/ru/" + doc["location"].split("#")[0]
        words.setdefault(page, set()).update(re.findall(r"[а-яё]+", (doc["title"] + " " + doc["text"]).lower()))
    return {page for page, ws in words.items() if stem not in ws and any(w.startswith(stem) for w in ws)}


def test_reader_journey(browser, site_url, built_site, artifacts):
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    requests = Requests(context)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        # the language menu keeps the reader on the same page
        page.goto(f"{site_url}/en/00-start/")
        assert page.locator("h1").first.inner_text().rstrip("¶").strip() == H1["en"]
        page.screenshot(path=str(artifacts / "en-00-start.png"))
        switch_language(page, "ru")
        assert urlsplit(page.url).path == "/ru/00-start/"
        assert page.locator("h1").first.inner_text().rstrip("¶").strip() == H1["ru"]
        page.screenshot(path=str(artifacts / "ru-00-start.png"))
        switch_language(page, "zh")
        assert urlsplit(page.url).path == "/zh/00-start/"
        assert page.locator("h1").first.inner_text().rstrip("¶").strip() == H1["zh"]
        page.screenshot(path=str(artifacts / "zh-00-start.png"))

        # Chinese search: words that appear only inside longer sentences (segmented by jieba at build),
        # and on this page only, so the page must be among the results however many lessons there are
        for word in ("虚拟环境", "语言菜单"):
            found = search(page, word)
            assert "/zh/00-start/" in found, f"zh search for {word} found {found}"
            assert all(p.startswith("/zh/") for p in found), found
        page.screenshot(path=str(artifacts / "zh-search.png"))

        # Russian search: a word finds pages that have only its longer inflected forms
        switch_language(page, "ru")
        # (the ru index is written with е for ё, and the query is folded the same way: both spellings)
        expected = _ru_pages_with_longer_forms_only(built_site.root, "счетчик")
        assert expected, "no ru page uses 'счётчик' only in inflected forms (the home page title has 'Счётчики')"
        for query in ("счётчик", "счетчик"):
            found = search(page, query)
            assert expected & set(found), f"searching {query} found {found}, expected one of {sorted(expected)}"
            assert all(p.startswith("/ru/") for p in found), found
        page.screenshot(path=str(artifacts / "ru-search.png"))
        # an English word on the Russian site: Russian pages only
        found = search(page, "fakeredis")
        assert found and all(p.startswith("/ru/") for p in found), found

        # an executed notebook page shows its outputs
        page.goto(f"{site_url}/en/00-start/notebook/")
        outputs = page.locator(".highlight:has(.filename:text-is('Output')) code")
        assert outputs.count() >= 3, "no 'Output' blocks on the notebook page"
        texts = [t.strip() for t in outputs.all_inner_texts()]
        assert any(t.splitlines()[0].startswith("backend: fakeredis") for t in texts if t), texts
        assert any(t.splitlines()[0] == "views" for t in texts if t), texts
        page.screenshot(path=str(artifacts / "en-notebook.png"), full_page=True)

        # copy buttons on code blocks, and the redis-cli / Python tabs switch
        page.goto(f"{site_url}/en/00-start/#first-command")
        blocks = page.locator(".md-content pre")
        assert blocks.count() >= 3
        for i in range(blocks.count()):
            block = blocks.nth(i)
            if block.is_visible():
                assert block.locator("button.md-clipboard, button.md-code__button").count() >= 1, (
                    f"code block {i} has no copy button"
                )
        tabs = page.locator(".tabbed-set").first
        cli = tabs.locator(".tabbed-block").nth(0)
        python = tabs.locator(".tabbed-block").nth(1)
        assert cli.is_visible() and not python.is_visible()
        assert "redis> INCR visits" in cli.inner_text()
        tabs.locator(".tabbed-labels label", has_text="Python").click()
        python.wait_for(state="visible")
        assert not cli.is_visible() and "r.incr(" in python.inner_text()
        page.screenshot(path=str(artifacts / "en-tabs.png"))
    finally:
        context.close()
    assert not errors, f"JavaScript errors: {errors}"
    assert len(requests.urls) > 20, requests.urls
    assert not requests.off_machine(), f"requests to other hosts: {requests.off_machine()}"


@pytest.mark.parametrize("locale, lang", [("ru-RU", "ru"), ("zh-CN", "zh"), ("fr-FR", "en")])
def test_root_page_sends_readers_to_their_language(browser, site_url, artifacts, locale, lang):
    context = browser.new_context(locale=locale)
    requests = Requests(context)
    try:
        page = context.new_page()
        page.goto(f"{site_url}/")
        page.wait_for_url(f"{site_url}/{lang}/")
        assert page.locator("html").get_attribute("lang").startswith(lang)
        if lang == "ru":
            page.screenshot(path=str(artifacts / "ru-home.png"))
    finally:
        context.close()
    assert not requests.off_machine(), requests.off_machine()
