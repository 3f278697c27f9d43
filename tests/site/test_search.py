"""Search as a Chinese and a Russian reader use it, on queries the other tests do not use: a Chinese
query is searched whole (Material 9.8.2's segmenter dropped its last character) and highlighted as
whole words; Russian excerpts show ё where the pages write it."""

from __future__ import annotations

import json
import re

import pytest

from test_browser import search

pytestmark = pytest.mark.browser

# query → the lesson (URL prefix under /zh/) its first result must be in
ZH = {
    "过期": "0",  # any lesson: 过 alone ranked the cluster notebook first
    "原子性": "02-atomicity/",
    "事务": "02-atomicity/",
    "限流": "04-rate-limiting/",
    "固定窗口": "04-rate-limiting/",
    "持久化": "05-durable/",
    "幂等": "06-cluster/",
    "竞态条件": "01-incr/",
    "集群": "06-cluster/",
    "分布式锁": "02-atomicity/",  # 分布式 and 锁: searched as 分布 alone, it led to lesson 06
}
RU = ["ещё", "идёт", "истёк", "мёртв", "надёжн", "даёт", "отклонён", "остаётся", "нулём", "её"]


def _results(page) -> tuple[list[str], list[str]]:
    """The result links (paths under the language, no ?h=) and the highlighted words, in order."""
    links = page.locator(".md-search-result__item a.md-search-result__link").evaluate_all(
        "els => els.map(e => decodeURIComponent(e.pathname.replace(/^\\/\\w+\\//, '')) + e.hash)"
    )
    marks = [m.replace("\u200b", "") for m in page.locator(".md-search-result__list mark").all_text_contents()]
    return links, marks


def test_chinese_queries_are_searched_and_highlighted_whole(browser, site_url):
    page = browser.new_page()
    try:
        page.goto(f"{site_url}/zh/")
        for query, lesson in ZH.items():
            search(page, query)
            links, marks = _results(page)
            assert links and links[0].startswith(lesson), (query, links[:5])
            assert marks, (query, links[:5])
            if query == "分布式锁":  # two index words; the section on locks is among the first results
                assert "02-atomicity/#process-locks" in links[:5], links[:5]
                assert set(marks) <= {"分布", "分布式", "锁"} | {m for m in marks if m.startswith("分布式")}, marks
            else:
                assert all(query in m for m in marks), (query, sorted(set(marks)))
    finally:
        page.close()


def test_the_page_a_chinese_result_opens_highlights_the_whole_query(browser, site_url):
    page = browser.new_page()
    try:
        page.goto(f"{site_url}/zh/")
        search(page, "过期")
        link = page.locator(".md-search-result__item a.md-search-result__link[href*='03-counters/']").first
        assert "h=%E8%BF%87%E6%9C%9F" in link.get_attribute("href")  # ?h=过期
        link.evaluate("a => a.click()")
        page.wait_for_url(re.compile(r"/zh/03-counters/"))
        page.wait_for_selector("mark[data-md-highlight]", timeout=10_000)
        marks = page.locator("article mark[data-md-highlight]").all_text_contents()
        assert marks and all("过期" in m for m in marks), marks
    finally:
        page.close()


def test_russian_excerpts_show_yo(browser, site_url, built_site):
    words = json.loads((built_site.require() / "ru" / "search" / "words_yo.json").read_text("utf-8"))
    assert words["еще"] == "ещё" and "все" not in words  # все and всё both occur: not restored
    page = browser.new_page()
    try:
        page.goto(f"{site_url}/ru/")
        for query in RU:
            search(page, query)
            page.wait_for_timeout(300)  # words_yo.json is fetched on the first search
            excerpts = page.locator(".md-search-result__article").evaluate_all(
                "els => els.map(a => Array.from(a.childNodes).filter(n => !/^H[12]$/.test(n.nodeName))"
                ".map(n => n.textContent).join(' '))"
            )
            text = " ".join(excerpts).lower()
            assert text.strip(), f"no result for {query}"
            assert query in text, f"{query}: the excerpts do not show it with ё: {text[:300]}"
            folded = sorted({w for w in re.findall(r"[а-яё]+", text) if w in words})
            assert not folded, f"{query}: excerpts write {folded} without ё"
    finally:
        page.close()
